package catalyst

// #include <catalyst.h>
import "C"

import (
	"runtime"
	"unsafe"
)

// Tensor is a ctl_tensor: a view (dtype, shape, strides, offset) of reference-counted
// storage on one device. Ops on tensors that do not require gradients may run from many
// goroutines at once; tensors that require gradients take turns (see catalyst.h's
// autograd section). Close it when done.
type Tensor struct {
	ptr *C.ctl_tensor
}

// newTensor takes ownership of a new reference.
func newTensor(p *C.ctl_tensor) *Tensor {
	t := &Tensor{ptr: p}
	runtime.SetFinalizer(t, (*Tensor).Close)
	return t
}

// Close releases the tensor. Views and gradients taken from it stay valid. Closing twice
// is harmless; any other use after Close is an error.
func (t *Tensor) Close() error {
	if t == nil || t.ptr == nil {
		return nil
	}
	C.ctl_tensor_release(t.ptr)
	t.ptr = nil
	runtime.SetFinalizer(t, nil)
	return nil
}

// handle is the C pointer; NULL for a nil or closed tensor, which the ABI refuses with a
// message naming the argument.
func (t *Tensor) handle() *C.ctl_tensor {
	if t == nil {
		return nil
	}
	return t.ptr
}

// CPointer is the ctl_tensor* for passing to other C code, borrowed: valid until Close,
// and the caller keeps t reachable (runtime.KeepAlive) while C uses it. nil when closed.
func (t *Tensor) CPointer() unsafe.Pointer { return unsafe.Pointer(t.handle()) }

// shapeArg is a shape as the ABI takes it: a rank and a pointer (nil for rank 0).
// []int64 and int64_t share their layout, and Go memory without Go pointers may be
// passed to C for the duration of a call.
func shapeArg(shape []int64) (C.size_t, *C.int64_t) {
	if len(shape) == 0 {
		return 0, nil
	}
	return C.size_t(len(shape)), (*C.int64_t)(unsafe.Pointer(&shape[0]))
}

// Empty is a tensor with uninitialised contents.
func Empty(dev *Device, dtype DType, shape []int64) (*Tensor, error) {
	var out *C.ctl_tensor
	rank, dims := shapeArg(shape)
	err := statusError(C.ctl_tensor_create(dev.handle(), C.ctl_dtype(dtype), rank, dims, &out))
	runtime.KeepAlive(dev)
	if err != nil {
		return nil, err
	}
	return newTensor(out), nil
}

// Zeros is a tensor of zeros.
func Zeros(dev *Device, dtype DType, shape []int64) (*Tensor, error) {
	var out *C.ctl_tensor
	rank, dims := shapeArg(shape)
	err := statusError(C.ctl_tensor_create_zeros(dev.handle(), C.ctl_dtype(dtype), rank, dims, &out))
	runtime.KeepAlive(dev)
	if err != nil {
		return nil, err
	}
	return newTensor(out), nil
}

// Full is a tensor whose every element is value converted to dtype.
func Full(dev *Device, dtype DType, shape []int64, value float64) (*Tensor, error) {
	var out *C.ctl_tensor
	rank, dims := shapeArg(shape)
	err := statusError(C.ctl_tensor_create_full(dev.handle(), C.ctl_dtype(dtype), rank, dims, C.double(value), &out))
	runtime.KeepAlive(dev)
	if err != nil {
		return nil, err
	}
	return newTensor(out), nil
}

// FromBytes copies contiguous row-major host data of any dtype (f16 and bf16 included);
// len(data) must be the tensor's size in bytes.
func FromBytes(dev *Device, dtype DType, shape []int64, data []byte) (*Tensor, error) {
	return fromHost(dev, dtype, shape, sliceData(data), len(data))
}

// FromSlice copies data into a new tensor of T's dtype; len(data) must be the product of
// shape (the ABI checks the byte count and names both sizes when they differ).
func FromSlice[T Element](dev *Device, shape []int64, data []T) (*Tensor, error) {
	var zero T
	return fromHost(dev, DTypeOf[T](), shape, sliceData(data), len(data)*int(unsafe.Sizeof(zero)))
}

func fromHost(dev *Device, dtype DType, shape []int64, data unsafe.Pointer, bytes int) (*Tensor, error) {
	var out *C.ctl_tensor
	rank, dims := shapeArg(shape)
	if bytes == 0 {
		data = nil // an empty slice may still point somewhere; the ABI wants NULL with 0 bytes
	}
	err := statusError(C.ctl_tensor_from_host(dev.handle(), C.ctl_dtype(dtype), rank, dims, data, C.size_t(bytes), &out))
	runtime.KeepAlive(dev)
	if err != nil {
		return nil, err
	}
	return newTensor(out), nil
}

// ToSlice copies the tensor's elements out, row-major, waiting for pending work. T must
// be the tensor's dtype: there is no implicit conversion (use Cast).
func ToSlice[T Element](t *Tensor) ([]T, error) {
	want := DTypeOf[T]()
	if got := t.DType(); got != want && t.handle() != nil {
		return nil, goError(InvalidArgument, "ToSlice: the tensor is %v, not %v (the Go element type asked for)", got, want)
	}
	out := make([]T, max0(t.Numel()))
	var zero T
	if err := t.toHost(sliceData(out), len(out)*int(unsafe.Sizeof(zero))); err != nil {
		return nil, err
	}
	return out, nil
}

// CopyTo copies the tensor's elements into dst, which must hold at least Numel elements
// of the tensor's dtype (the ABI names both sizes when it is short).
func CopyTo[T Element](t *Tensor, dst []T) error {
	want := DTypeOf[T]()
	if got := t.DType(); got != want && t.handle() != nil {
		return goError(InvalidArgument, "CopyTo: the tensor is %v, not %v (the Go element type asked for)", got, want)
	}
	var zero T
	return t.toHost(sliceData(dst), len(dst)*int(unsafe.Sizeof(zero)))
}

// ToBytes copies the tensor's elements out as raw bytes, row-major, in any dtype.
func (t *Tensor) ToBytes() ([]byte, error) {
	out := make([]byte, max0(t.Numel())*int64(t.DType().Size()))
	if err := t.toHost(sliceData(out), len(out)); err != nil {
		return nil, err
	}
	return out, nil
}

func (t *Tensor) toHost(dst unsafe.Pointer, bytes int) error {
	if bytes == 0 {
		dst = nil
	}
	err := statusError(C.ctl_tensor_to_host(t.handle(), dst, C.size_t(bytes)))
	runtime.KeepAlive(t)
	return err
}

func max0(n int64) int64 {
	if n < 0 {
		return 0
	}
	return n
}

// ToDevice is a contiguous copy on dev (any plugin).
func (t *Tensor) ToDevice(dev *Device) (*Tensor, error) {
	var out *C.ctl_tensor
	err := statusError(C.ctl_tensor_to_device(t.handle(), dev.handle(), &out))
	runtime.KeepAlive(t)
	runtime.KeepAlive(dev)
	if err != nil {
		return nil, err
	}
	return newTensor(out), nil
}

// TensorInfo is ctl_tensor_info.
type TensorInfo struct {
	DType      DType
	Shape      []int64
	Strides    []int64 // in elements
	Offset     int64   // in elements from the start of storage
	Numel      int64
	Contiguous bool
}

// Info describes the view.
func (t *Tensor) Info() (TensorInfo, error) {
	var info C.ctl_tensor_info
	info.struct_size = C.CTL_TENSOR_INFO_STRUCT_SIZE
	err := statusError(C.ctl_tensor_get_info(t.handle(), &info))
	runtime.KeepAlive(t)
	if err != nil {
		return TensorInfo{}, err
	}
	rank := int(info.rank)
	out := TensorInfo{DType: DType(info.dtype), Shape: make([]int64, rank), Strides: make([]int64, rank),
		Offset: int64(info.offset), Numel: int64(info.numel), Contiguous: bool(info.contiguous)}
	for i := 0; i < rank; i++ {
		out.Shape[i] = int64(info.shape[i])
		out.Strides[i] = int64(info.strides[i])
	}
	return out, nil
}

// DType is the element type; InvalidDType for a closed tensor.
func (t *Tensor) DType() DType {
	d := DType(C.ctl_tensor_dtype(t.handle()))
	runtime.KeepAlive(t)
	return d
}

// Rank is the number of axes; 0 for a closed tensor.
func (t *Tensor) Rank() int {
	r := int(C.ctl_tensor_rank(t.handle()))
	runtime.KeepAlive(t)
	return r
}

// Numel is the number of elements; 0 for a closed tensor.
func (t *Tensor) Numel() int64 {
	n := int64(C.ctl_tensor_numel(t.handle()))
	runtime.KeepAlive(t)
	return n
}

// Shape is the size of each axis; empty for a scalar and for a closed tensor.
func (t *Tensor) Shape() []int64 {
	h := t.handle()
	shape := make([]int64, int(C.ctl_tensor_rank(h)))
	for i := range shape {
		shape[i] = int64(C.ctl_tensor_dim(h, C.int64_t(i)))
	}
	runtime.KeepAlive(t)
	return shape
}

// Device is the tensor's device; it keeps the tensor's storage alive until closed.
func (t *Tensor) Device() (*Device, error) {
	h := t.handle()
	defer runtime.KeepAlive(t)
	if h == nil {
		// ctl_tensor_device has no status to return; ctl_tensor_get_info gives the ABI's
		// message for the NULL handle.
		_, err := t.Info()
		return nil, err
	}
	return newTensorDevice(C.ctl_tensor_device(h), h), nil
}

// sliceData is the address of s's first element, nil when s is empty (Go 1.19 has no
// unsafe.SliceData).
func sliceData[T any](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}
