package catalyst

// #include <catalyst.h>
//
// // The one-output convenience calls, returning their result by value: no Go pointer
// // crosses into C, which spares the tiny ops a heap allocation and cgo's pointer check.
// typedef struct { ctl_status* status; ctl_tensor* tensor; } catalyst_go_result;
// static inline catalyst_go_result catalyst_go_unary(ctl_op_id op, ctl_tensor* x) {
//   catalyst_go_result r = {NULL, NULL};
//   r.status = ctl_op_unary(op, x, &r.tensor);
//   return r;
// }
// static inline catalyst_go_result catalyst_go_binary(ctl_op_id op, ctl_tensor* a, ctl_tensor* b) {
//   catalyst_go_result r = {NULL, NULL};
//   r.status = ctl_op_binary(op, a, b, &r.tensor);
//   return r;
// }
import "C"

import (
	"runtime"
	"unsafe"
)

// tensorArgs are the C handles of ts. A nil entry becomes NULL (an absent optional input,
// such as layer_norm's weight); a closed one is refused here, because NULL would silently
// mean "absent" to the ABI.
func tensorArgs(what string, ts []*Tensor) ([]*C.ctl_tensor, error) {
	out := make([]*C.ctl_tensor, len(ts))
	for i, t := range ts {
		if t != nil {
			if t.ptr == nil {
				return nil, goError(InvalidArgument, "%s[%d] is a closed Tensor", what, i)
			}
			out[i] = t.ptr
		}
	}
	return out, nil
}

func firstOrNil(ts []*C.ctl_tensor) **C.ctl_tensor {
	if len(ts) == 0 {
		return nil
	}
	return &ts[0]
}

func attrsArg(attrs Attrs) unsafe.Pointer {
	if attrs == nil {
		return nil
	}
	return attrs.cAttrs()
}

// OpRun runs op on the device of its inputs and returns nOutputs new tensors
// (ctl_op_run). attrs may be nil where the op's defaults suffice.
func OpRun(op OpID, inputs []*Tensor, attrs Attrs, nOutputs int) ([]*Tensor, error) {
	in, err := tensorArgs("inputs", inputs)
	if err != nil {
		return nil, err
	}
	if nOutputs < 0 {
		nOutputs = 0
	}
	out := make([]*C.ctl_tensor, nOutputs)
	s := C.ctl_op_run(C.ctl_op_id(op), C.size_t(len(in)), firstOrNil(in), attrsArg(attrs), C.size_t(nOutputs), firstOrNil(out))
	runtime.KeepAlive(inputs)
	if err := statusError(s); err != nil {
		return nil, err
	}
	result := make([]*Tensor, nOutputs)
	for i, p := range out {
		if p != nil { // optional outputs the op did not make stay nil
			result[i] = newTensor(p)
		}
	}
	return result, nil
}

// OpRun1 is OpRun for an op with one output.
func OpRun1(op OpID, inputs []*Tensor, attrs Attrs) (*Tensor, error) {
	out, err := OpRun(op, inputs, attrs, 1)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// OpRunInto runs op writing into existing outputs (ctl_op_run_into): any strides, exactly
// the op's shape and dtype, no overlap with inputs. Not recorded by autograd. A nil output
// is an absent optional output.
func OpRunInto(op OpID, inputs []*Tensor, attrs Attrs, outputs []*Tensor) error {
	in, err := tensorArgs("inputs", inputs)
	if err != nil {
		return err
	}
	out, err := tensorArgs("outputs", outputs)
	if err != nil {
		return err
	}
	s := C.ctl_op_run_into(C.ctl_op_id(op), C.size_t(len(in)), firstOrNil(in), attrsArg(attrs), C.size_t(len(out)), firstOrNil(out))
	runtime.KeepAlive(inputs)
	runtime.KeepAlive(outputs)
	return statusError(s)
}

// Unary runs an elementwise unary op (ctl_op_unary).
func Unary(op OpID, x *Tensor) (*Tensor, error) {
	r := C.catalyst_go_unary(C.ctl_op_id(op), x.handle())
	runtime.KeepAlive(x)
	return wrap1(r.status, r.tensor)
}

// Binary runs an elementwise binary op, broadcasting (ctl_op_binary). Both inputs share
// one dtype: there is no implicit promotion.
func Binary(op OpID, a, b *Tensor) (*Tensor, error) {
	r := C.catalyst_go_binary(C.ctl_op_id(op), a.handle(), b.handle())
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
	return wrap1(r.status, r.tensor)
}

func Neg(x *Tensor) (*Tensor, error)        { return Unary(OpNeg, x) }
func Abs(x *Tensor) (*Tensor, error)        { return Unary(OpAbs, x) }
func Exp(x *Tensor) (*Tensor, error)        { return Unary(OpExp, x) }
func Log(x *Tensor) (*Tensor, error)        { return Unary(OpLog, x) }
func Sqrt(x *Tensor) (*Tensor, error)       { return Unary(OpSqrt, x) }
func Rsqrt(x *Tensor) (*Tensor, error)      { return Unary(OpRsqrt, x) }
func Tanh(x *Tensor) (*Tensor, error)       { return Unary(OpTanh, x) }
func Sigmoid(x *Tensor) (*Tensor, error)    { return Unary(OpSigmoid, x) }
func Relu(x *Tensor) (*Tensor, error)       { return Unary(OpRelu, x) }
func Gelu(x *Tensor) (*Tensor, error)       { return Unary(OpGelu, x) }
func GeluTanh(x *Tensor) (*Tensor, error)   { return Unary(OpGeluTanh, x) }
func Silu(x *Tensor) (*Tensor, error)       { return Unary(OpSilu, x) }
func Sin(x *Tensor) (*Tensor, error)        { return Unary(OpSin, x) }
func Cos(x *Tensor) (*Tensor, error)        { return Unary(OpCos, x) }
func Reciprocal(x *Tensor) (*Tensor, error) { return Unary(OpReciprocal, x) }

func Add(a, b *Tensor) (*Tensor, error)     { return Binary(OpAdd, a, b) }
func Sub(a, b *Tensor) (*Tensor, error)     { return Binary(OpSub, a, b) }
func Mul(a, b *Tensor) (*Tensor, error)     { return Binary(OpMul, a, b) }
func Div(a, b *Tensor) (*Tensor, error)     { return Binary(OpDiv, a, b) }
func Pow(a, b *Tensor) (*Tensor, error)     { return Binary(OpPow, a, b) }
func Maximum(a, b *Tensor) (*Tensor, error) { return Binary(OpMaximum, a, b) }
func Minimum(a, b *Tensor) (*Tensor, error) { return Binary(OpMinimum, a, b) }
func Eq(a, b *Tensor) (*Tensor, error)      { return Binary(OpEq, a, b) }
func Ne(a, b *Tensor) (*Tensor, error)      { return Binary(OpNe, a, b) }
func Lt(a, b *Tensor) (*Tensor, error)      { return Binary(OpLt, a, b) }
func Le(a, b *Tensor) (*Tensor, error)      { return Binary(OpLe, a, b) }
func Gt(a, b *Tensor) (*Tensor, error)      { return Binary(OpGt, a, b) }
func Ge(a, b *Tensor) (*Tensor, error)      { return Binary(OpGe, a, b) }

// Where selects a where cond (bool) is true, else b, broadcasting all three.
func Where(cond, a, b *Tensor) (*Tensor, error) { return OpRun1(OpWhere, []*Tensor{cond, a, b}, nil) }

// Matmul is a @ b, batched (ctl_op_matmul). Use OpRun with MatmulAttrs for transposes,
// alpha, a fused bias and activation.
func Matmul(a, b *Tensor) (*Tensor, error) {
	var out *C.ctl_tensor
	s := C.ctl_op_matmul(a.handle(), b.handle(), &out)
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
	return wrap1(s, out)
}

// Softmax over axis (negative counts from the end).
func Softmax(x *Tensor, axis int64) (*Tensor, error) {
	var out *C.ctl_tensor
	s := C.ctl_op_softmax(x.handle(), C.int64_t(axis), &out)
	runtime.KeepAlive(x)
	return wrap1(s, out)
}

// Reduce runs a reduction (sum, mean, max, min, argmax, argmin, logsumexp) over axes; no
// axes reduce every axis (ctl_op_reduce).
func Reduce(op OpID, x *Tensor, axes []int64, keepDims bool) (*Tensor, error) {
	var out *C.ctl_tensor
	n, ax := shapeArg(axes)
	s := C.ctl_op_reduce(C.ctl_op_id(op), x.handle(), n, ax, C.bool(keepDims), &out)
	runtime.KeepAlive(x)
	return wrap1(s, out)
}

func Sum(x *Tensor, axes []int64, keepDims bool) (*Tensor, error) {
	return Reduce(OpSum, x, axes, keepDims)
}
func Mean(x *Tensor, axes []int64, keepDims bool) (*Tensor, error) {
	return Reduce(OpMean, x, axes, keepDims)
}
func Max(x *Tensor, axes []int64, keepDims bool) (*Tensor, error) {
	return Reduce(OpMax, x, axes, keepDims)
}
func Min(x *Tensor, axes []int64, keepDims bool) (*Tensor, error) {
	return Reduce(OpMin, x, axes, keepDims)
}

// Argmax is the index (i64) of the largest element along axis.
func Argmax(x *Tensor, axis int64, keepDims bool) (*Tensor, error) {
	return Reduce(OpArgmax, x, []int64{axis}, keepDims)
}

// Argmin is the index (i64) of the smallest element along axis.
func Argmin(x *Tensor, axis int64, keepDims bool) (*Tensor, error) {
	return Reduce(OpArgmin, x, []int64{axis}, keepDims)
}

// Cast converts x to dtype (ctl_op_cast).
func Cast(x *Tensor, dtype DType) (*Tensor, error) {
	var out *C.ctl_tensor
	s := C.ctl_op_cast(x.handle(), C.ctl_dtype(dtype), &out)
	runtime.KeepAlive(x)
	return wrap1(s, out)
}
