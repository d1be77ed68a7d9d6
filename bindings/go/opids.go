package catalyst

// #include <catalyst.h>
import "C"

// OpID is a ctl_op_id. What each op takes and makes is written beside its id in
// catalyst.h.
type OpID int32

// The ops of ctl_op_id.
const (
	OpNeg        OpID = C.CTL_OP_NEG
	OpAbs        OpID = C.CTL_OP_ABS
	OpExp        OpID = C.CTL_OP_EXP
	OpLog        OpID = C.CTL_OP_LOG
	OpSqrt       OpID = C.CTL_OP_SQRT
	OpRsqrt      OpID = C.CTL_OP_RSQRT
	OpTanh       OpID = C.CTL_OP_TANH
	OpSigmoid    OpID = C.CTL_OP_SIGMOID
	OpRelu       OpID = C.CTL_OP_RELU
	OpGelu       OpID = C.CTL_OP_GELU
	OpGeluTanh   OpID = C.CTL_OP_GELU_TANH
	OpSilu       OpID = C.CTL_OP_SILU
	OpSin        OpID = C.CTL_OP_SIN
	OpCos        OpID = C.CTL_OP_COS
	OpReciprocal OpID = C.CTL_OP_RECIPROCAL

	OpAdd     OpID = C.CTL_OP_ADD
	OpSub     OpID = C.CTL_OP_SUB
	OpMul     OpID = C.CTL_OP_MUL
	OpDiv     OpID = C.CTL_OP_DIV
	OpPow     OpID = C.CTL_OP_POW
	OpMaximum OpID = C.CTL_OP_MAXIMUM
	OpMinimum OpID = C.CTL_OP_MINIMUM
	OpEq      OpID = C.CTL_OP_EQ
	OpNe      OpID = C.CTL_OP_NE
	OpLt      OpID = C.CTL_OP_LT
	OpLe      OpID = C.CTL_OP_LE
	OpGt      OpID = C.CTL_OP_GT
	OpGe      OpID = C.CTL_OP_GE
	OpWhere   OpID = C.CTL_OP_WHERE

	OpSum       OpID = C.CTL_OP_SUM
	OpMean      OpID = C.CTL_OP_MEAN
	OpMax       OpID = C.CTL_OP_MAX
	OpMin       OpID = C.CTL_OP_MIN
	OpArgmax    OpID = C.CTL_OP_ARGMAX
	OpArgmin    OpID = C.CTL_OP_ARGMIN
	OpLogsumexp OpID = C.CTL_OP_LOGSUMEXP

	OpMatmul OpID = C.CTL_OP_MATMUL

	OpSoftmax    OpID = C.CTL_OP_SOFTMAX
	OpLogSoftmax OpID = C.CTL_OP_LOG_SOFTMAX
	OpLayerNorm  OpID = C.CTL_OP_LAYER_NORM
	OpRMSNorm    OpID = C.CTL_OP_RMS_NORM

	OpCopy          OpID = C.CTL_OP_COPY
	OpCast          OpID = C.CTL_OP_CAST
	OpConcat        OpID = C.CTL_OP_CONCAT
	OpGather        OpID = C.CTL_OP_GATHER
	OpScatterAdd    OpID = C.CTL_OP_SCATTER_ADD
	OpFill          OpID = C.CTL_OP_FILL
	OpArange        OpID = C.CTL_OP_ARANGE
	OpRandomUniform OpID = C.CTL_OP_RANDOM_UNIFORM
	OpRandomNormal  OpID = C.CTL_OP_RANDOM_NORMAL

	OpCrossEntropy         OpID = C.CTL_OP_CROSS_ENTROPY
	OpCrossEntropyBackward OpID = C.CTL_OP_CROSS_ENTROPY_BACKWARD
	OpAdamWStep            OpID = C.CTL_OP_ADAMW_STEP
	OpSGDStep              OpID = C.CTL_OP_SGD_STEP

	OpSoftmaxBackward    OpID = C.CTL_OP_SOFTMAX_BACKWARD
	OpLogSoftmaxBackward OpID = C.CTL_OP_LOG_SOFTMAX_BACKWARD
	OpLayerNormBackward  OpID = C.CTL_OP_LAYER_NORM_BACKWARD
	OpRMSNormBackward    OpID = C.CTL_OP_RMS_NORM_BACKWARD
	OpGeluBackward       OpID = C.CTL_OP_GELU_BACKWARD
	OpGeluTanhBackward   OpID = C.CTL_OP_GELU_TANH_BACKWARD

	OpConv2D               OpID = C.CTL_OP_CONV2D
	OpConv2DBackwardInput  OpID = C.CTL_OP_CONV2D_BACKWARD_INPUT
	OpConv2DBackwardWeight OpID = C.CTL_OP_CONV2D_BACKWARD_WEIGHT
	OpMaxPool2D            OpID = C.CTL_OP_MAX_POOL2D
	OpMaxPool2DBackward    OpID = C.CTL_OP_MAX_POOL2D_BACKWARD
	OpAvgPool2D            OpID = C.CTL_OP_AVG_POOL2D
	OpAvgPool2DBackward    OpID = C.CTL_OP_AVG_POOL2D_BACKWARD
	// Made by graph passes (ABI 1.5); attrs ctl_fused_elementwise_attrs, which this
	// binding does not wrap yet, so it is named here for String and error messages.
	OpFusedElementwise OpID = C.CTL_OP_FUSED_ELEMENTWISE
)

// String is the ABI's name of the op ("add", "matmul", ...), or "op(<n>)" for an id the
// loaded library does not know.
func (op OpID) String() string {
	name := C.ctl_op_name(C.ctl_op_id(op))
	if name == nil {
		return "op(" + itoa(int64(op)) + ")"
	}
	return C.GoString(name)
}

func itoa(n int64) string {
	if n < 0 {
		return "-" + itoa(-n)
	}
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
