package catalyst_test

import (
	"syscall"
	"testing"

	"catalyst"
	"catalyst/internal/cbench"
)

// The tiny op of the bindings' overhead comparison: add two 1-element f32 tensors on the
// CPU device and release the result. BenchmarkTinyAdd goes through the binding (one cgo
// call for the op, one for Close, a finalizer set and cleared); BenchmarkTinyAddC runs the
// same calls in one C loop (one cgo crossing per b.N), so their difference is the
// binding's cost. BenchmarkCgoCall is one bare crossing into libcatalyst.

// cpuClock reports, besides Go's wall-clock ns/op, the process's CPU time per op
// (user + system, all threads, so the collector's work for finalizers counts too): on a
// loaded machine it moves far less than wall-clock time does.
type cpuClock struct{ start int64 }

func processCPU() int64 {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return u.Utime.Nano() + u.Stime.Nano()
}

func startCPU(b *testing.B) cpuClock {
	b.ResetTimer()
	return cpuClock{processCPU()}
}

func (c cpuClock) stop(b *testing.B) {
	b.StopTimer()
	b.ReportMetric(float64(processCPU()-c.start)/float64(b.N), "cpu-ns/op")
}

func tinyInputs(b *testing.B) (*catalyst.Tensor, *catalyst.Tensor) {
	_, dev := testDevice(b)
	x := fromF32(b, dev, []int64{1}, 1)
	y := fromF32(b, dev, []int64{1}, 2)
	return x, y
}

func BenchmarkTinyAdd(b *testing.B) {
	x, y := tinyInputs(b)
	clock := startCPU(b)
	for i := 0; i < b.N; i++ {
		out, err := catalyst.Add(x, y)
		if err != nil {
			b.Fatal(err)
		}
		out.Close()
	}
	clock.stop(b)
}

func BenchmarkTinyAddC(b *testing.B) {
	x, y := tinyInputs(b)
	clock := startCPU(b)
	if err := cbench.TinyAdd(x.CPointer(), y.CPointer(), b.N); err != nil {
		b.Fatal(err)
	}
	clock.stop(b)
	_ = x.Numel() // keeps x and y, whose C pointers the loop used, alive until here
	_ = y.Numel()
}

func BenchmarkCgoCall(b *testing.B) {
	x, _ := tinyInputs(b)
	p := x.CPointer()
	clock := startCPU(b)
	for i := 0; i < b.N; i++ {
		cbench.Numel(p)
	}
	clock.stop(b)
	_ = x.Numel()
}
