package catalyst_test

import (
	"errors"
	"testing"

	"catalyst"
)

func expTimes(x *catalyst.Tensor) (*catalyst.Tensor, error) {
	e, err := catalyst.Exp(x)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	return catalyst.Mul(e, x)
}

func wantCode(t *testing.T, err error, code catalyst.Code, what string) {
	t.Helper()
	var e *catalyst.Error
	if !errors.As(err, &e) || e.Code() != code {
		t.Errorf("%s: got %v, want %v", what, err, code)
	}
}

// A captured exp(x) * x, fused, equals the eager result at each launch; reads inside the
// capture fail; a body's error or panic ends the capture.
func TestGraphCapturesExpTimesX(t *testing.T) {
	rt, dev := testDevice(t)
	x := fromF32(t, dev, []int64{5}, 0.5, -1.25, 2.0, 0, -3.5)
	var y *catalyst.Tensor
	var readErr error
	g, err := rt.Capture(func() error {
		_, readErr = catalyst.ToSlice[float32](x)
		var err error
		y, err = expTimes(x)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	defer y.Close()
	wantCode(t, readErr, catalyst.FailedPrecondition, "read during capture")
	_, err = rt.CaptureNextNode()
	wantCode(t, err, catalyst.FailedPrecondition, "CaptureNextNode after the capture")
	if err := g.Optimize("fuse_elementwise"); err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 2; round++ {
		if round == 1 {
			must(0, catalyst.OpRunInto(catalyst.OpCopy, []*catalyst.Tensor{fromF32(t, dev, []int64{5}, 1, 2, -3, 0.25, 4)},
				nil, []*catalyst.Tensor{x}))
		}
		if err := g.Launch(); err != nil {
			t.Fatal(err)
		}
		eager := must(expTimes(x))
		if got, want := values[float32](t, y), values[float32](t, eager); !equalSlices(got, want) {
			t.Errorf("launch %d: graph %v, eager %v", round, got, want)
		}
		eager.Close()
	}
	stats := must(g.Stats())
	if stats.CapturedNodes != 2 || stats.Nodes != 1 || stats.Runs != 2 {
		t.Errorf("stats %+v", stats)
	}

	bodyErr := errors.New("the body's own error")
	if _, err := rt.Capture(func() error { _, err := expTimes(x); must(0, err); return bodyErr }); err != bodyErr {
		t.Errorf("Capture returned %v, want the body's error", err)
	}
	_, err = rt.CaptureNextNode()
	wantCode(t, err, catalyst.FailedPrecondition, "CaptureNextNode after a failed body")

	func() {
		defer func() {
			if recover() == nil {
				t.Error("the body's panic did not go on")
			}
		}()
		rt.Capture(func() error { panic("inside the capture") })
	}()
	_, err = rt.CaptureNextNode()
	wantCode(t, err, catalyst.FailedPrecondition, "CaptureNextNode after a panicking body")
}

// An AdamW node's attrs replaced between launches give what eager steps with those attrs give.
func TestGraphSetNodeAttrs(t *testing.T) {
	rt, dev := testDevice(t)
	state := func() []*catalyst.Tensor {
		return []*catalyst.Tensor{fromF32(t, dev, []int64{2}, 0.5, -2), fromF32(t, dev, []int64{2}, 1, 0.5),
			fromF32(t, dev, []int64{2}, 0, 0), fromF32(t, dev, []int64{2}, 0, 0)}
	}
	adamw := func(lr float64, step uint64) *catalyst.AdamWAttrs {
		return &catalyst.AdamWAttrs{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 0.01, Step: step}
	}
	gr, eg := state(), state()
	var node uint64
	g, err := rt.Capture(func() error {
		node = must(rt.CaptureNextNode())
		return catalyst.OpRunInto(catalyst.OpAdamWStep, gr[:1], adamw(0.1, 1), gr[1:])
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	must(0, g.Launch())
	must(0, catalyst.OpRunInto(catalyst.OpAdamWStep, eg[:1], adamw(0.1, 1), eg[1:]))
	wantCode(t, g.SetNodeAttrs(node, adamw(0.05, 0)), catalyst.InvalidArgument, "step 0")
	must(0, g.SetNodeAttrs(node, adamw(0.05, 2)))
	must(0, g.Launch())
	must(0, catalyst.OpRunInto(catalyst.OpAdamWStep, eg[:1], adamw(0.05, 2), eg[1:]))
	for i := 1; i < 4; i++ {
		if got, want := values[float32](t, gr[i]), values[float32](t, eg[i]); !equalSlices(got, want) {
			t.Errorf("state %d: graph %v, eager %v", i, got, want)
		}
	}
}
