package catalyst

// #include <stdlib.h>
// #include <catalyst.h>
import "C"

import "fmt"

// Code is a status code of the C ABI (ctl_status_code).
type Code int32

// The codes of ctl_status_code.
const (
	OK                 Code = C.CTL_STATUS_OK
	InvalidArgument    Code = C.CTL_STATUS_INVALID_ARGUMENT
	OutOfMemory        Code = C.CTL_STATUS_OUT_OF_MEMORY
	Unsupported        Code = C.CTL_STATUS_UNSUPPORTED
	NotFound           Code = C.CTL_STATUS_NOT_FOUND
	DeviceLost         Code = C.CTL_STATUS_DEVICE_LOST
	Internal           Code = C.CTL_STATUS_INTERNAL
	OutOfRange         Code = C.CTL_STATUS_OUT_OF_RANGE
	FailedPrecondition Code = C.CTL_STATUS_FAILED_PRECONDITION
)

// String is the ABI's fixed name of the code, e.g. "INVALID_ARGUMENT".
func (c Code) String() string {
	return C.GoString(C.ctl_status_code_name(C.ctl_status_code(c)))
}

// Error is a failed call: the status code and the message the C ABI gave, which names
// the offending argument and value. A few checks happen on the Go side because the C ABI
// cannot see them (a slice of the wrong element type, a closed tensor where NULL would
// mean "absent"); those errors say so in their message.
type Error struct {
	code    Code
	message string
}

// Code is the status code.
func (e *Error) Code() Code { return e.code }

// Message is the message alone, without the code's name.
func (e *Error) Message() string { return e.message }

func (e *Error) Error() string { return e.code.String() + ": " + e.message }

// statusError turns a status into an error and frees it. It returns an untyped nil on
// success, so that `err != nil` means failure.
func statusError(status *C.ctl_status) error {
	if status == nil {
		return nil
	}
	err := &Error{
		code:    Code(C.ctl_status_get_code(status)),
		message: C.GoString(C.ctl_status_get_message(status)),
	}
	C.ctl_status_free(status)
	return err
}

// goError is an error found on the Go side, before any C call.
func goError(code Code, format string, args ...any) error {
	return &Error{code: code, message: fmt.Sprintf(format, args...)}
}

// ABIVersion is the version of the C ABI the loaded libcatalyst implements.
func ABIVersion() (major, minor uint32) {
	var ma, mi C.uint32_t
	C.ctl_abi_version(&ma, &mi)
	return uint32(ma), uint32(mi)
}
