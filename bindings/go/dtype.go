package catalyst

// #include <catalyst.h>
import "C"

// DType is an element type (ctl_dtype).
type DType int32

// The dtypes of ctl_dtype.
const (
	F32  DType = C.CTL_DTYPE_F32
	F64  DType = C.CTL_DTYPE_F64
	F16  DType = C.CTL_DTYPE_F16
	BF16 DType = C.CTL_DTYPE_BF16
	I8   DType = C.CTL_DTYPE_I8
	U8   DType = C.CTL_DTYPE_U8
	I32  DType = C.CTL_DTYPE_I32
	I64  DType = C.CTL_DTYPE_I64
	Bool DType = C.CTL_DTYPE_BOOL // one byte, 0 or 1, as Go's bool
	// InvalidDType is what a closed tensor reports (CTL_DTYPE_COUNT_).
	InvalidDType DType = C.CTL_DTYPE_COUNT_
)

// Size is the size of one element in bytes; 0 for an unknown dtype.
func (d DType) Size() int { return int(C.ctl_dtype_size(C.ctl_dtype(d))) }

// String is the ABI's name: "f32", "bf16", ..., "unknown".
func (d DType) String() string { return C.GoString(C.ctl_dtype_name(C.ctl_dtype(d))) }

// Element is a Go type whose memory layout is one of the dtypes. f16 and bf16 have no Go
// type: move them with FromBytes and ToBytes.
type Element interface {
	float32 | float64 | int8 | uint8 | int32 | int64 | bool
}

// DTypeOf is the dtype of the Go element type T.
func DTypeOf[T Element]() DType {
	var zero T
	switch any(zero).(type) {
	case float32:
		return F32
	case float64:
		return F64
	case int8:
		return I8
	case uint8:
		return U8
	case int32:
		return I32
	case int64:
		return I64
	default: // bool: the constraint admits nothing else
		return Bool
	}
}
