package catalyst_test

import (
	"testing"

	"catalyst"
)

func TestBackwardGradAccumulatesAndZeroes(t *testing.T) {
	_, dev := testDevice(t)
	x := fromF32(t, dev, []int64{3}, 1, -2, 3)
	if err := x.SetRequiresGrad(true); err != nil {
		t.Fatal(err)
	}
	if g := must(x.Grad()); g != nil {
		t.Fatalf("a fresh leaf has a gradient")
	}
	loss := func() *catalyst.Tensor { // sum(x * x): d/dx = 2x
		sq := must(catalyst.Mul(x, x))
		defer sq.Close()
		return must(catalyst.Sum(sq, nil, false))
	}
	l := loss()
	defer l.Close()
	if !l.RequiresGrad() {
		t.Errorf("the loss does not require gradients")
	}
	if err := l.Backward(); err != nil {
		t.Fatal(err)
	}
	g := must(x.Grad())
	if got := values[float32](t, g); !equalSlices(got, []float32{2, -4, 6}) {
		t.Errorf("grad: %v", got)
	}
	g.Close()
	if err := l.Backward(); err != nil { // the record lives on: gradients add up
		t.Fatal(err)
	}
	g = must(x.Grad())
	if got := values[float32](t, g); !equalSlices(got, []float32{4, -8, 12}) {
		t.Errorf("accumulated grad: %v", got)
	}
	g.Close()
	if err := x.ZeroGrad(); err != nil {
		t.Fatal(err)
	}
	if g := must(x.Grad()); g != nil {
		t.Errorf("ZeroGrad left a gradient")
	}
	// An explicit output gradient.
	sq := must(catalyst.Mul(x, x))
	defer sq.Close()
	if err := sq.BackwardWith(fromF32(t, dev, []int64{3}, 1, 0, 2)); err != nil {
		t.Fatal(err)
	}
	g = must(x.Grad())
	defer g.Close()
	if got := values[float32](t, g); !equalSlices(got, []float32{2, 0, 12}) {
		t.Errorf("grad with an output gradient: %v", got)
	}
}

func TestDetachAndGradEnabled(t *testing.T) {
	rt, dev := testDevice(t)
	x := fromF32(t, dev, []int64{2}, 1, 2)
	if err := x.SetRequiresGrad(true); err != nil {
		t.Fatal(err)
	}
	d := must(x.Detach())
	defer d.Close()
	if d.RequiresGrad() {
		t.Errorf("a detached tensor requires gradients")
	}
	err := rt.NoGrad(func() error {
		y, err := catalyst.Exp(x)
		if err != nil {
			return err
		}
		defer y.Close()
		if y.RequiresGrad() {
			t.Errorf("an op recorded while recording was off")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if previous := must(rt.SetGradEnabled(true)); !previous {
		t.Errorf("NoGrad did not restore recording")
	}
	y := must(catalyst.Exp(x))
	defer y.Close()
	if !y.RequiresGrad() {
		t.Errorf("an op was not recorded while recording was on")
	}
}
