package catalyst

// #include <catalyst.h>
// #include <catalyst_dlpack.h>
//
// // cgo cannot call a C function pointer; this calls the capsule's deleter for Go.
// static inline void catalyst_go_dlpack_delete(DLManagedTensorVersioned* managed) {
//   if (managed && managed->deleter) managed->deleter(managed);
// }
import "C"

import (
	"runtime"
	"unsafe"
)

// DLPack is an exported DLManagedTensorVersioned (DLPack 1.x) that Go owns until it is
// consumed (by Device.FromDLPack, or handed to other C code with Release) or closed.
// Its memory is the tensor's own, zero-copy; it keeps the tensor's storage alive.
type DLPack struct {
	ptr *C.struct_DLManagedTensorVersioned
}

// ToDLPack exports t without copying (ctl_tensor_to_dlpack_versioned); UNSUPPORTED when
// its device is not host-visible. Strides are kept.
func (t *Tensor) ToDLPack() (*DLPack, error) {
	var out *C.struct_DLManagedTensorVersioned
	err := statusError(C.ctl_tensor_to_dlpack_versioned(t.handle(), &out))
	runtime.KeepAlive(t)
	if err != nil {
		return nil, err
	}
	return newDLPack(unsafe.Pointer(out)), nil
}

func newDLPack(p unsafe.Pointer) *DLPack {
	d := &DLPack{ptr: (*C.struct_DLManagedTensorVersioned)(p)}
	runtime.SetFinalizer(d, (*DLPack).Close)
	return d
}

// Close calls the producer's deleter unless the capsule was consumed. Closing twice is
// harmless.
func (d *DLPack) Close() error {
	if d == nil || d.ptr == nil {
		return nil
	}
	C.catalyst_go_dlpack_delete(d.ptr)
	d.ptr = nil
	runtime.SetFinalizer(d, nil)
	return nil
}

// Release hands the DLManagedTensorVersioned* to other C code, which then owns it and
// calls its deleter exactly once. d is consumed; nil when it already was.
func (d *DLPack) Release() unsafe.Pointer {
	if d == nil || d.ptr == nil {
		return nil
	}
	p := unsafe.Pointer(d.ptr)
	d.ptr = nil
	runtime.SetFinalizer(d, nil)
	return p
}

// DLPackFromPointer wraps a DLManagedTensorVersioned* made by other C code; Go owns it
// from now on (Close calls its deleter, Device.FromDLPack consumes it).
func DLPackFromPointer(p unsafe.Pointer) *DLPack {
	if p == nil {
		return &DLPack{}
	}
	return newDLPack(p)
}

// FromDLPack imports a capsule zero-copy onto dev, which must be host-visible
// (ctl_tensor_from_dlpack_versioned). On success the tensor owns the capsule and d is
// consumed; on failure d is untouched and still Go's to close. The ABI refuses a nil or
// consumed capsule, devices it cannot read, unknown flags, wrapping or misaligned offsets
// and unsupported dtypes, naming the field.
func (dev *Device) FromDLPack(d *DLPack) (*Tensor, error) {
	var p *C.struct_DLManagedTensorVersioned
	if d != nil {
		p = (*C.struct_DLManagedTensorVersioned)(unsafe.Pointer(d.ptr))
	}
	var out *C.ctl_tensor
	err := statusError(C.ctl_tensor_from_dlpack_versioned(dev.handle(), p, &out))
	runtime.KeepAlive(dev)
	if err != nil {
		return nil, err
	}
	d.ptr = nil
	runtime.SetFinalizer(d, nil)
	return newTensor(out), nil
}

// DLPackInfo is what a capsule's DLTensor says.
type DLPackInfo struct {
	Version    [2]uint32 // major, minor
	DeviceType int32     // DLDeviceType: 1 is kDLCPU
	DeviceID   int32
	Code, Bits uint8 // DLDataType
	Lanes      uint16
	Shape      []int64
	Strides    []int64 // in elements; nil means contiguous
	ByteOffset uint64
	ReadOnly   bool
	Data       unsafe.Pointer // the first element is at Data + ByteOffset
}

// Info reads the capsule's DLTensor; an error for a closed or consumed capsule.
func (d *DLPack) Info() (DLPackInfo, error) {
	if d == nil || d.ptr == nil {
		return DLPackInfo{}, goError(InvalidArgument, "DLPack.Info: the capsule is closed or consumed")
	}
	m := d.ptr
	dl := &m.dl_tensor
	info := DLPackInfo{
		Version:    [2]uint32{uint32(m.version.major), uint32(m.version.minor)},
		DeviceType: int32(dl.device.device_type), DeviceID: int32(dl.device.device_id),
		Code: uint8(dl.dtype.code), Bits: uint8(dl.dtype.bits), Lanes: uint16(dl.dtype.lanes),
		ByteOffset: uint64(dl.byte_offset), ReadOnly: m.flags&C.DLPACK_FLAG_BITMASK_READ_ONLY != 0,
		Data: dl.data,
	}
	n := int(dl.ndim)
	// A foreign capsule may be malformed; reading it must not crash Go either.
	if n < 0 || (n > 0 && dl.shape == nil) {
		return DLPackInfo{}, goError(InvalidArgument, "DLPack.Info: the capsule has ndim %d with shape %p", n, dl.shape)
	}
	if n > 0 {
		info.Shape = append([]int64(nil), unsafe.Slice((*int64)(unsafe.Pointer(dl.shape)), n)...)
		if dl.strides != nil {
			info.Strides = append([]int64(nil), unsafe.Slice((*int64)(unsafe.Pointer(dl.strides)), n)...)
		}
	}
	runtime.KeepAlive(d)
	return info, nil
}

// DLPackSlice is the capsule's elements as a Go slice over the producer's memory, without
// a copy: valid only until d is closed or consumed, and shared with the tensor (writes
// are seen by it). The capsule must be on the host (kDLCPU), contiguous, and of T's dtype.
func DLPackSlice[T Element](d *DLPack) ([]T, error) {
	info, err := d.Info()
	if err != nil {
		return nil, err
	}
	code, bits := dlpackCode[T]()
	if info.Code != code || info.Bits != bits || info.Lanes != 1 {
		return nil, goError(InvalidArgument, "DLPackSlice: the capsule's dtype (code %d, %d bits, %d lanes) is not %v",
			info.Code, info.Bits, info.Lanes, DTypeOf[T]())
	}
	if info.DeviceType != 1 /* kDLCPU */ {
		return nil, goError(InvalidArgument, "DLPackSlice: the capsule is on DLPack device type %d, not the host (1)", info.DeviceType)
	}
	n, expected := int64(1), int64(1)
	contiguous := true
	for i := len(info.Shape) - 1; i >= 0; i-- {
		if info.Strides != nil && info.Shape[i] != 1 && info.Strides[i] != expected {
			contiguous = false
		}
		expected *= info.Shape[i]
		n *= info.Shape[i]
	}
	if !contiguous {
		return nil, goError(InvalidArgument, "DLPackSlice: the capsule's strides %v are not contiguous for shape %v", info.Strides, info.Shape)
	}
	if n == 0 {
		return []T{}, nil
	}
	if info.Data == nil {
		return nil, goError(InvalidArgument, "DLPackSlice: the capsule's data is NULL with %d elements", n)
	}
	return unsafe.Slice((*T)(unsafe.Add(info.Data, info.ByteOffset)), n), nil
}

// dlpackCode is the DLDataType code and bits of T (kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBool 6).
func dlpackCode[T Element]() (code, bits uint8) {
	switch DTypeOf[T]() {
	case F32:
		return 2, 32
	case F64:
		return 2, 64
	case I8:
		return 0, 8
	case U8:
		return 1, 8
	case I32:
		return 0, 32
	case I64:
		return 0, 64
	default:
		return 6, 8
	}
}
