package catalyst_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"catalyst"
)

// Many goroutines share one runtime, device and input tensors (none requires gradients,
// which catalyst.h allows) and run ops at once; Go moves them between OS threads, and
// LockOSThread/yields make sure calls come from several. Each checks its own results,
// every error is an ordinary value (no thread-local error state to lose).
func TestOpsFromManyGoroutines(t *testing.T) {
	rt, dev := testDevice(t)
	a := fromF32(t, dev, []int64{2, 2}, 1, 2, 3, 4)
	b := fromF32(t, dev, []int64{2, 2}, 1, 0, 0, 1)
	const goroutines, iterations = 16, 200
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			if g%2 == 0 {
				runtime.LockOSThread() // half pinned to threads of their own
				defer runtime.UnlockOSThread()
			}
			scale := float32(g + 1)
			s, err := catalyst.Full(dev, catalyst.F32, nil, float64(scale))
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			for i := 0; i < iterations; i++ {
				got, err := step(a, b, s)
				if err != nil {
					errs <- err
					return
				}
				want := []float32{1 * scale, 2 * scale, 3 * scale, 4 * scale}
				if !equalSlices(got, want) {
					errs <- fmt.Errorf("goroutine %d iteration %d: %v, want %v", g, i, got, want)
					return
				}
				// A bad call in the middle: its error is this goroutine's, with its message.
				if _, err := catalyst.Softmax(a, 7); err == nil {
					errs <- fmt.Errorf("goroutine %d: a bad softmax succeeded", g)
					return
				}
				if i%50 == 0 {
					runtime.Gosched()
				}
			}
			// Device and runtime queries too.
			if _, err := dev.Info(); err != nil {
				errs <- err
			}
			if rt.DeviceCount() != 1 {
				errs <- fmt.Errorf("device count %d", rt.DeviceCount())
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// step is (a @ b) * s, read back.
func step(a, b, s *catalyst.Tensor) ([]float32, error) {
	m, err := catalyst.Matmul(a, b)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	p, err := catalyst.Mul(m, s)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	return catalyst.ToSlice[float32](p)
}
