// Package cbench times the tiny op in C, the way BenchmarkTinyAdd times it in Go, so that
// the difference is the binding's cost (cgo's own and the wrapper's).
package cbench

// #cgo pkg-config: catalyst
// #include <catalyst.h>
//
// // n times: add the two tensors, release the result. Returns the first failure.
// static ctl_status* cbench_tiny_add(ctl_tensor* a, ctl_tensor* b, long long n) {
//   for (long long i = 0; i < n; ++i) {
//     ctl_tensor* out = NULL;
//     ctl_status* s = ctl_op_binary(CTL_OP_ADD, a, b, &out);
//     if (s) return s;
//     ctl_tensor_release(out);
//   }
//   return NULL;
// }
// // One cheap call, for cgo's own cost per crossing.
// static int64_t cbench_numel(const ctl_tensor* t) { return ctl_tensor_numel(t); }
import "C"

import (
	"errors"
	"unsafe"
)

// TinyAdd runs n adds of a and b (ctl_tensor* as from catalyst's Tensor.CPointer) in one
// C loop.
func TinyAdd(a, b unsafe.Pointer, n int) error {
	s := C.cbench_tiny_add((*C.ctl_tensor)(a), (*C.ctl_tensor)(b), C.longlong(n))
	if s != nil {
		msg := C.GoString(C.ctl_status_get_message(s))
		C.ctl_status_free(s)
		return errors.New(msg)
	}
	return nil
}

// Numel is one cgo call into libcatalyst that does almost nothing.
func Numel(t unsafe.Pointer) int64 { return int64(C.cbench_numel((*C.ctl_tensor)(t))) }
