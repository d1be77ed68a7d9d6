package catalyst

// #include <catalyst.h>
import "C"

import "unsafe"

// Attrs is an op's attribute struct. Each Go type below fills the C struct of the same
// name (struct_size set), so OpRun passes exactly what a C caller would.
type Attrs interface {
	// cAttrs returns a pointer to a freshly filled C struct in Go memory (which holds no
	// Go pointers, so cgo may pass it for the duration of a call).
	cAttrs() unsafe.Pointer
}

// ReduceAttrs are ctl_reduce_attrs: no axes reduce every axis; negative axes count from
// the end. More than CTL_MAX_RANK axes are passed on as a count the ABI refuses.
type ReduceAttrs struct {
	Axes     []int32
	KeepDims bool
}

func (a *ReduceAttrs) cAttrs() unsafe.Pointer {
	if a == nil {
		return nil
	}
	c := &C.ctl_reduce_attrs{struct_size: C.CTL_REDUCE_ATTRS_STRUCT_SIZE, keepdims: C.bool(a.KeepDims)}
	c.axis_count = C.uint32_t(len(a.Axes))
	for i, axis := range a.Axes {
		if i < len(c.axes) {
			c.axes[i] = C.int32_t(axis)
		}
	}
	return unsafe.Pointer(c)
}

// Activation is a ctl_activation fused into matmul.
type Activation int32

// The activations of ctl_activation.
const (
	ActivationNone     Activation = C.CTL_ACTIVATION_NONE
	ActivationRelu     Activation = C.CTL_ACTIVATION_RELU
	ActivationGelu     Activation = C.CTL_ACTIVATION_GELU
	ActivationGeluTanh Activation = C.CTL_ACTIVATION_GELU_TANH
)

// MatmulAttrs are ctl_matmul_attrs: out = activation(alpha op(a) op(b) + beta out + bias).
// Alpha is used only when AlphaSet (else 1); Beta only in OpRunInto.
type MatmulAttrs struct {
	TransposeA, TransposeB bool
	Alpha, Beta            float64
	AlphaSet               bool
	Activation             Activation
}

func (a *MatmulAttrs) cAttrs() unsafe.Pointer {
	if a == nil {
		return nil
	}
	return unsafe.Pointer(&C.ctl_matmul_attrs{struct_size: C.CTL_MATMUL_ATTRS_STRUCT_SIZE,
		transpose_a: C.bool(a.TransposeA), transpose_b: C.bool(a.TransposeB), alpha: C.double(a.Alpha),
		beta: C.double(a.Beta), activation: C.ctl_activation(a.Activation), alpha_set: C.bool(a.AlphaSet)})
}

// AxisAttrs are ctl_axis_attrs (softmax, log_softmax, concat, gather, scatter_add).
type AxisAttrs struct{ Axis int32 }

func (a *AxisAttrs) cAttrs() unsafe.Pointer {
	if a == nil {
		return nil
	}
	return unsafe.Pointer(&C.ctl_axis_attrs{struct_size: C.CTL_AXIS_ATTRS_STRUCT_SIZE, axis: C.int32_t(a.Axis)})
}

// NormAttrs are ctl_norm_attrs; Epsilon 0 means 1e-5.
type NormAttrs struct{ Epsilon float64 }

func (a *NormAttrs) cAttrs() unsafe.Pointer {
	if a == nil {
		return nil
	}
	return unsafe.Pointer(&C.ctl_norm_attrs{struct_size: C.CTL_NORM_ATTRS_STRUCT_SIZE, epsilon: C.double(a.Epsilon)})
}

// CastAttrs are ctl_cast_attrs.
type CastAttrs struct{ DType DType }

func (a *CastAttrs) cAttrs() unsafe.Pointer {
	if a == nil {
		return nil
	}
	return unsafe.Pointer(&C.ctl_cast_attrs{struct_size: C.CTL_CAST_ATTRS_STRUCT_SIZE, dtype: C.ctl_dtype(a.DType)})
}

// FillAttrs are ctl_fill_attrs.
type FillAttrs struct{ Value float64 }

func (a *FillAttrs) cAttrs() unsafe.Pointer {
	if a == nil {
		return nil
	}
	return unsafe.Pointer(&C.ctl_fill_attrs{struct_size: C.CTL_FILL_ATTRS_STRUCT_SIZE, value: C.double(a.Value)})
}

// ArangeAttrs are ctl_arange_attrs: element i is Start + i*Step.
type ArangeAttrs struct{ Start, Step float64 }

func (a *ArangeAttrs) cAttrs() unsafe.Pointer {
	if a == nil {
		return nil
	}
	return unsafe.Pointer(&C.ctl_arange_attrs{struct_size: C.CTL_ARANGE_ATTRS_STRUCT_SIZE,
		start: C.double(a.Start), step: C.double(a.Step)})
}

// RandomAttrs are ctl_random_attrs: uniform in [A, B), or normal with mean A and standard
// deviation B, from a counter-based generator (one seed, the same numbers everywhere).
type RandomAttrs struct {
	Seed, Offset uint64
	A, B         float64
}

func (a *RandomAttrs) cAttrs() unsafe.Pointer {
	if a == nil {
		return nil
	}
	return unsafe.Pointer(&C.ctl_random_attrs{struct_size: C.CTL_RANDOM_ATTRS_STRUCT_SIZE,
		seed: C.uint64_t(a.Seed), offset: C.uint64_t(a.Offset), a: C.double(a.A), b: C.double(a.B)})
}

// Reduction is a ctl_reduction for losses.
type Reduction int32

// The reductions of ctl_reduction.
const (
	ReductionMean Reduction = C.CTL_REDUCTION_MEAN
	ReductionSum  Reduction = C.CTL_REDUCTION_SUM
	ReductionNone Reduction = C.CTL_REDUCTION_NONE
)

// CrossEntropyAttrs are ctl_cross_entropy_attrs; IgnoreIndex counts only when IgnoreIndexSet.
type CrossEntropyAttrs struct {
	Reduction      Reduction
	IgnoreIndex    int64
	IgnoreIndexSet bool
}

func (a *CrossEntropyAttrs) cAttrs() unsafe.Pointer {
	if a == nil {
		return nil
	}
	return unsafe.Pointer(&C.ctl_cross_entropy_attrs{struct_size: C.CTL_CROSS_ENTROPY_ATTRS_STRUCT_SIZE,
		reduction: C.ctl_reduction(a.Reduction), ignore_index: C.int64_t(a.IgnoreIndex),
		ignore_index_set: C.bool(a.IgnoreIndexSet)})
}

// AdamWAttrs are ctl_adamw_attrs; Step counts from 1.
type AdamWAttrs struct {
	LR, Beta1, Beta2, Eps, WeightDecay float64
	Step                               uint64
}

func (a *AdamWAttrs) cAttrs() unsafe.Pointer {
	if a == nil {
		return nil
	}
	return unsafe.Pointer(&C.ctl_adamw_attrs{struct_size: C.CTL_ADAMW_ATTRS_STRUCT_SIZE, lr: C.double(a.LR),
		beta1: C.double(a.Beta1), beta2: C.double(a.Beta2), eps: C.double(a.Eps),
		weight_decay: C.double(a.WeightDecay), step: C.uint64_t(a.Step)})
}

// SGDAttrs are ctl_sgd_attrs.
type SGDAttrs struct {
	LR, Momentum, Dampening, WeightDecay float64
	Nesterov                             bool
}

func (a *SGDAttrs) cAttrs() unsafe.Pointer {
	if a == nil {
		return nil
	}
	return unsafe.Pointer(&C.ctl_sgd_attrs{struct_size: C.CTL_SGD_ATTRS_STRUCT_SIZE, lr: C.double(a.LR),
		momentum: C.double(a.Momentum), dampening: C.double(a.Dampening),
		weight_decay: C.double(a.WeightDecay), nesterov: C.bool(a.Nesterov)})
}

// Conv2DAttrs are ctl_conv2d_attrs over (height, width); zeros mean stride 1, dilation 1,
// one group.
type Conv2DAttrs struct {
	Stride, Padding, Dilation [2]int64
	Groups                    int64
}

func (a *Conv2DAttrs) cAttrs() unsafe.Pointer {
	if a == nil {
		return nil
	}
	c := &C.ctl_conv2d_attrs{struct_size: C.CTL_CONV2D_ATTRS_STRUCT_SIZE, groups: C.int64_t(a.Groups)}
	for i := 0; i < 2; i++ {
		c.stride[i], c.padding[i], c.dilation[i] = C.int64_t(a.Stride[i]), C.int64_t(a.Padding[i]), C.int64_t(a.Dilation[i])
	}
	return unsafe.Pointer(c)
}

// Pool2DAttrs are ctl_pool2d_attrs over (height, width); a zero stride means the kernel.
type Pool2DAttrs struct {
	Kernel, Stride, Padding [2]int64
	ExcludePadding          bool
}

func (a *Pool2DAttrs) cAttrs() unsafe.Pointer {
	if a == nil {
		return nil
	}
	c := &C.ctl_pool2d_attrs{struct_size: C.CTL_POOL2D_ATTRS_STRUCT_SIZE, exclude_padding: C.bool(a.ExcludePadding)}
	for i := 0; i < 2; i++ {
		c.kernel[i], c.stride[i], c.padding[i] = C.int64_t(a.Kernel[i]), C.int64_t(a.Stride[i]), C.int64_t(a.Padding[i])
	}
	return unsafe.Pointer(c)
}
