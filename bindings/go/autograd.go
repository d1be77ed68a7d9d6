package catalyst

// #include <catalyst.h>
import "C"

import "runtime"

// Autograd is catalyst.h's reverse-mode record. One graph is built and backpropagated by
// one goroutine at a time: the core takes no locks while recording.

// SetRequiresGrad marks a leaf (a tensor no recorded op produced) as needing a gradient.
func (t *Tensor) SetRequiresGrad(requiresGrad bool) error {
	err := statusError(C.ctl_tensor_set_requires_grad(t.handle(), C.bool(requiresGrad)))
	runtime.KeepAlive(t)
	return err
}

// RequiresGrad is true for a marked leaf and for what recorded ops made from one.
func (t *Tensor) RequiresGrad() bool {
	r := bool(C.ctl_tensor_requires_grad(t.handle()))
	runtime.KeepAlive(t)
	return r
}

// Grad is the gradient accumulated on a leaf, or nil (and no error) when there is none yet.
func (t *Tensor) Grad() (*Tensor, error) {
	var out *C.ctl_tensor
	err := statusError(C.ctl_tensor_grad(t.handle(), &out))
	runtime.KeepAlive(t)
	if err != nil || out == nil {
		return nil, err
	}
	return newTensor(out), nil
}

// ZeroGrad drops a leaf's accumulated gradient.
func (t *Tensor) ZeroGrad() error {
	err := statusError(C.ctl_tensor_zero_grad(t.handle()))
	runtime.KeepAlive(t)
	return err
}

// Backward backpropagates from a one-element tensor (d(loss)/d(t) = 1), adding into the
// gradients of every leaf reached.
func (t *Tensor) Backward() error {
	err := statusError(C.ctl_tensor_backward(t.handle(), nil))
	runtime.KeepAlive(t)
	return err
}

// BackwardWith backpropagates gradOutput, shaped like t. A nil or closed gradOutput is
// refused: NULL would mean "1" to the ABI.
func (t *Tensor) BackwardWith(gradOutput *Tensor) error {
	if gradOutput.handle() == nil {
		return goError(InvalidArgument, "BackwardWith: gradOutput is nil or closed (use Backward for an implicit 1)")
	}
	err := statusError(C.ctl_tensor_backward(t.handle(), gradOutput.handle()))
	runtime.KeepAlive(t)
	runtime.KeepAlive(gradOutput)
	return err
}

// Detach is the same data outside the record: no gradient flows through it.
func (t *Tensor) Detach() (*Tensor, error) {
	var out *C.ctl_tensor
	s := C.ctl_tensor_detach(t.handle(), &out)
	runtime.KeepAlive(t)
	return wrap1(s, out)
}
