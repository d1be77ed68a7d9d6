package catalyst

// #include <catalyst.h>
import "C"

import "runtime"

// Views are metadata only: they share the tensor's storage and never call a plugin.

// wrap1 turns the result of a call with one `out_tensor` into a Tensor.
func wrap1(status *C.ctl_status, out *C.ctl_tensor) (*Tensor, error) {
	if err := statusError(status); err != nil {
		return nil, err
	}
	return newTensor(out), nil
}

// Reshape is a view with a new shape of the same number of elements; one entry may be -1.
// It fails when the strides cannot express the shape: use Contiguous first.
func (t *Tensor) Reshape(shape []int64) (*Tensor, error) {
	var out *C.ctl_tensor
	rank, dims := shapeArg(shape)
	s := C.ctl_tensor_reshape(t.handle(), rank, dims, &out)
	runtime.KeepAlive(t)
	return wrap1(s, out)
}

// Permute is a view whose axis i is axis perm[i] of t.
func (t *Tensor) Permute(perm []int64) (*Tensor, error) {
	var out *C.ctl_tensor
	rank, dims := shapeArg(perm)
	s := C.ctl_tensor_permute(t.handle(), rank, dims, &out)
	runtime.KeepAlive(t)
	return wrap1(s, out)
}

// Transpose is a view with two axes swapped.
func (t *Tensor) Transpose(axis0, axis1 int64) (*Tensor, error) {
	var out *C.ctl_tensor
	s := C.ctl_tensor_transpose(t.handle(), C.int64_t(axis0), C.int64_t(axis1), &out)
	runtime.KeepAlive(t)
	return wrap1(s, out)
}

// Slice is a view of elements start, start+step, ... < stop along axis (Python rules for
// negative start and stop; step >= 1).
func (t *Tensor) Slice(axis, start, stop, step int64) (*Tensor, error) {
	var out *C.ctl_tensor
	s := C.ctl_tensor_slice(t.handle(), C.int64_t(axis), C.int64_t(start), C.int64_t(stop), C.int64_t(step), &out)
	runtime.KeepAlive(t)
	return wrap1(s, out)
}

// Expand is a view broadcast to shape by NumPy rules.
func (t *Tensor) Expand(shape []int64) (*Tensor, error) {
	var out *C.ctl_tensor
	rank, dims := shapeArg(shape)
	s := C.ctl_tensor_expand(t.handle(), rank, dims, &out)
	runtime.KeepAlive(t)
	return wrap1(s, out)
}

// Contiguous is a new handle on t itself when it is contiguous, else a contiguous copy.
func (t *Tensor) Contiguous() (*Tensor, error) {
	var out *C.ctl_tensor
	s := C.ctl_tensor_contiguous(t.handle(), &out)
	runtime.KeepAlive(t)
	return wrap1(s, out)
}
