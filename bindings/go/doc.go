// Package catalyst is the Go binding of Catalyst's C ABI (abi/catalyst.h), through cgo.
//
// It wraps only what catalyst.h offers, in Go's idiom:
//
//   - Every handle (Runtime, Device, Tensor, DLPack) has an explicit, idempotent Close.
//     A finalizer releases a handle that was never closed, but only as a backstop: native
//     memory is invisible to Go's collector, so close what you create.
//   - A closed handle is a NULL handle to the C ABI: using it is an error, never a crash.
//   - Every failure is a *Error carrying the ABI's status code and message; use errors.As
//     and (*Error).Code.
//   - What catalyst.h calls thread-safe may be shared between goroutines (Go moves them
//     between OS threads, which is why the ABI has no thread-local error). Closing a
//     handle while another goroutine uses it is a data race, as for any Go value.
//
// The library is found with pkg-config (package "catalyst"): set PKG_CONFIG_PATH to the
// directory of catalyst.pc (<prefix>/lib/pkgconfig when installed, or the build tree's
// bindings/go/pkgconfig). See README.md.
//
//	rt, err := catalyst.NewRuntime(nil)
//	dev, err := rt.DefaultDevice()
//	x, err := catalyst.FromSlice(dev, []int64{2, 2}, []float32{1, 2, 3, 4})
//	y, err := catalyst.Exp(x)
//	values, err := catalyst.ToSlice[float32](y)
package catalyst

// #cgo pkg-config: catalyst
import "C"
