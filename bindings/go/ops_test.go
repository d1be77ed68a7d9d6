package catalyst_test

import (
	"math"
	"testing"

	"catalyst"
)

func TestElementwise(t *testing.T) {
	_, dev := testDevice(t)
	a := fromF32(t, dev, []int64{2, 2}, 1, 2, 3, 4)
	b := fromF32(t, dev, []int64{2}, 10, 20) // broadcast over rows
	cases := []struct {
		name string
		fn   func(a, b *catalyst.Tensor) (*catalyst.Tensor, error)
		want []float32
	}{
		{"add", catalyst.Add, []float32{11, 22, 13, 24}},
		{"sub", catalyst.Sub, []float32{-9, -18, -7, -16}},
		{"mul", catalyst.Mul, []float32{10, 40, 30, 80}},
		{"maximum", catalyst.Maximum, []float32{10, 20, 10, 20}},
	}
	for _, c := range cases {
		out := must(c.fn(a, b))
		if got := values[float32](t, out); !equalSlices(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		out.Close()
	}
	n := must(catalyst.Neg(a))
	defer n.Close()
	if got := values[float32](t, n); !equalSlices(got, []float32{-1, -2, -3, -4}) {
		t.Errorf("neg: %v", got)
	}
	e := must(catalyst.Exp(a))
	defer e.Close()
	want := []float32{float32(math.E), float32(math.Exp(2)), float32(math.Exp(3)), float32(math.Exp(4))}
	if got := values[float32](t, e); !near(got, want, 1e-4) {
		t.Errorf("exp: %v, want %v", got, want)
	}
	lt := must(catalyst.Lt(a, b))
	defer lt.Close()
	if lt.DType() != catalyst.Bool || !equalSlices(values[bool](t, lt), []bool{true, true, true, true}) {
		t.Errorf("lt: %v", values[bool](t, lt))
	}
	gt2 := fromF32(t, dev, nil, 2)
	cond := must(catalyst.Gt(a, gt2))
	defer cond.Close()
	w := must(catalyst.Where(cond, a, n))
	defer w.Close()
	if got := values[float32](t, w); !equalSlices(got, []float32{-1, -2, 3, 4}) {
		t.Errorf("where: %v", got)
	}
}

func TestMatmulReductionsSoftmaxCast(t *testing.T) {
	_, dev := testDevice(t)
	a := fromF32(t, dev, []int64{2, 3}, 1, 2, 3, 4, 5, 6)
	b := fromF32(t, dev, []int64{3, 2}, 1, 0, 0, 1, 1, 1)
	m := must(catalyst.Matmul(a, b))
	defer m.Close()
	if got := values[float32](t, m); !equalSlices(got, []float32{4, 5, 10, 11}) {
		t.Errorf("matmul: %v", got)
	}
	// The same product with a transposed, scaled, relu'd form through OpRun and attrs:
	// relu(-1 * a @ (b^T)^T).
	bt := must(b.Transpose(0, 1))
	defer bt.Close()
	mt := must(catalyst.OpRun1(catalyst.OpMatmul, []*catalyst.Tensor{a, bt},
		&catalyst.MatmulAttrs{TransposeB: true, Alpha: -1, AlphaSet: true, Activation: catalyst.ActivationRelu}))
	defer mt.Close()
	if got := values[float32](t, mt); !equalSlices(got, []float32{0, 0, 0, 0}) {
		t.Errorf("matmul with attrs: %v", got)
	}
	s := must(catalyst.Sum(a, []int64{-1}, false))
	defer s.Close()
	if got := values[float32](t, s); !equalSlices(got, []float32{6, 15}) {
		t.Errorf("sum: %v", got)
	}
	mean := must(catalyst.Mean(a, nil, true))
	defer mean.Close()
	if got := values[float32](t, mean); !equalSlices(mean.Shape(), []int64{1, 1}) || got[0] != 3.5 {
		t.Errorf("mean: %v shape %v", got, mean.Shape())
	}
	am := must(catalyst.Argmax(a, 0, false))
	defer am.Close()
	if got := values[int64](t, am); !equalSlices(got, []int64{1, 1, 1}) {
		t.Errorf("argmax: %v", got)
	}
	mx := must(catalyst.OpRun1(catalyst.OpMax, []*catalyst.Tensor{a}, &catalyst.ReduceAttrs{Axes: []int32{0}}))
	defer mx.Close()
	if got := values[float32](t, mx); !equalSlices(got, []float32{4, 5, 6}) {
		t.Errorf("max through OpRun: %v", got)
	}
	sm := must(catalyst.Softmax(a, 1))
	defer sm.Close()
	got := values[float32](t, sm)
	d := math.Exp(1) + math.Exp(2) + math.Exp(3)
	want := []float32{float32(math.Exp(1) / d), float32(math.Exp(2) / d), float32(math.Exp(3) / d)}
	if !near(got[:3], want, 1e-6) || !near(got[3:], want, 1e-6) {
		t.Errorf("softmax: %v, want %v twice", got, want)
	}
	c := must(catalyst.Cast(a, catalyst.I32))
	defer c.Close()
	if got := values[int32](t, c); !equalSlices(got, []int32{1, 2, 3, 4, 5, 6}) {
		t.Errorf("cast: %v", got)
	}
	c64 := must(catalyst.OpRun1(catalyst.OpCast, []*catalyst.Tensor{a}, &catalyst.CastAttrs{DType: catalyst.I64}))
	defer c64.Close()
	if got := values[int64](t, c64); !equalSlices(got, []int64{1, 2, 3, 4, 5, 6}) {
		t.Errorf("cast through OpRun: %v", got)
	}
}

func TestOpRunInto(t *testing.T) {
	_, dev := testDevice(t)
	out := must(catalyst.Empty(dev, catalyst.F32, []int64{4}))
	defer out.Close()
	if err := catalyst.OpRunInto(catalyst.OpArange, nil, &catalyst.ArangeAttrs{Start: 1, Step: 0.5}, []*catalyst.Tensor{out}); err != nil {
		t.Fatal(err)
	}
	if got := values[float32](t, out); !equalSlices(got, []float32{1, 1.5, 2, 2.5}) {
		t.Errorf("arange: %v", got)
	}
	if err := catalyst.OpRunInto(catalyst.OpFill, nil, &catalyst.FillAttrs{Value: -3}, []*catalyst.Tensor{out}); err != nil {
		t.Fatal(err)
	}
	if got := values[float32](t, out); !equalSlices(got, []float32{-3, -3, -3, -3}) {
		t.Errorf("fill: %v", got)
	}
	// Into a strided view: the even elements of an 8-element tensor.
	big := must(catalyst.Zeros(dev, catalyst.F32, []int64{8}))
	defer big.Close()
	even := must(big.Slice(0, 0, 8, 2))
	defer even.Close()
	x := fromF32(t, dev, []int64{4}, 1, 2, 3, 4)
	if err := catalyst.OpRunInto(catalyst.OpAdd, []*catalyst.Tensor{x, x}, nil, []*catalyst.Tensor{even}); err != nil {
		t.Fatal(err)
	}
	if got := values[float32](t, big); !equalSlices(got, []float32{2, 0, 4, 0, 6, 0, 8, 0}) {
		t.Errorf("add into a strided view: %v", got)
	}
	// A fused SGD step with momentum 0: param -= lr * grad.
	param := fromF32(t, dev, []int64{2}, 1, 1)
	grad := fromF32(t, dev, []int64{2}, 0.5, -0.5)
	if err := catalyst.OpRunInto(catalyst.OpSGDStep, []*catalyst.Tensor{grad}, &catalyst.SGDAttrs{LR: 2},
		[]*catalyst.Tensor{param, nil}); err != nil {
		t.Fatal(err)
	}
	if got := values[float32](t, param); !equalSlices(got, []float32{0, 2}) {
		t.Errorf("sgd: %v", got)
	}
	if catalyst.OpAdd.String() != "add" || catalyst.OpID(9999).String() != "op(9999)" {
		t.Errorf("op names: %q %q", catalyst.OpAdd.String(), catalyst.OpID(9999).String())
	}
	// ABI 1.5's op: the id the binding declares is the one the library names.
	if got := catalyst.OpFusedElementwise.String(); got != "fused_elementwise" {
		t.Errorf("op 288's name: %q", got)
	}
}
