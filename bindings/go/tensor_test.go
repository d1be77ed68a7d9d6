package catalyst_test

import (
	"testing"

	"catalyst"
)

func roundTrip[T catalyst.Element](t *testing.T, dev *catalyst.Device, data []T) {
	t.Helper()
	x := must(catalyst.FromSlice(dev, []int64{int64(len(data))}, data))
	defer x.Close()
	if x.DType() != catalyst.DTypeOf[T]() {
		t.Errorf("dtype %v, want %v", x.DType(), catalyst.DTypeOf[T]())
	}
	if got := values[T](t, x); !equalSlices(got, data) {
		t.Errorf("%v round trip: got %v, want %v", x.DType(), got, data)
	}
}

func TestSlicesRoundTripEveryElementType(t *testing.T) {
	_, dev := testDevice(t)
	roundTrip(t, dev, []float32{1.5, -2, 3e-9})
	roundTrip(t, dev, []float64{1.5, -2, 3e-300})
	roundTrip(t, dev, []int8{-128, 0, 127})
	roundTrip(t, dev, []uint8{0, 1, 255})
	roundTrip(t, dev, []int32{-1 << 31, 0, 1<<31 - 1})
	roundTrip(t, dev, []int64{-1 << 63, 0, 1<<63 - 1})
	roundTrip(t, dev, []bool{true, false, true})
}

func TestCreationAndFacts(t *testing.T) {
	_, dev := testDevice(t)
	z := must(catalyst.Zeros(dev, catalyst.I32, []int64{2, 3}))
	defer z.Close()
	if got := values[int32](t, z); !equalSlices(got, []int32{0, 0, 0, 0, 0, 0}) {
		t.Errorf("zeros: %v", got)
	}
	f := must(catalyst.Full(dev, catalyst.F64, []int64{2}, 2.5))
	defer f.Close()
	if got := values[float64](t, f); !equalSlices(got, []float64{2.5, 2.5}) {
		t.Errorf("full: %v", got)
	}
	e := must(catalyst.Empty(dev, catalyst.F32, []int64{4, 0, 2}))
	defer e.Close()
	if e.Numel() != 0 || !equalSlices(e.Shape(), []int64{4, 0, 2}) || e.Rank() != 3 {
		t.Errorf("empty: numel %d shape %v", e.Numel(), e.Shape())
	}
	s := must(catalyst.Full(dev, catalyst.F32, nil, 7))
	defer s.Close()
	if s.Rank() != 0 || s.Numel() != 1 || values[float32](t, s)[0] != 7 {
		t.Errorf("scalar: rank %d numel %d", s.Rank(), s.Numel())
	}
	// f16 travels as raw bytes: 1.0 is 0x3c00.
	h := must(catalyst.FromBytes(dev, catalyst.F16, []int64{2}, []byte{0x00, 0x3c, 0x00, 0xc0}))
	defer h.Close()
	w := must(catalyst.Cast(h, catalyst.F32))
	defer w.Close()
	if got := values[float32](t, w); !equalSlices(got, []float32{1, -2}) {
		t.Errorf("f16 bytes: %v", got)
	}
	if b := must(h.ToBytes()); !equalSlices(b, []byte{0x00, 0x3c, 0x00, 0xc0}) {
		t.Errorf("ToBytes: %v", b)
	}
	d := must(z.Device())
	defer d.Close()
	info := must(d.Info())
	if info.PluginName != "cpu" || !info.HostVisible || !info.Supports(catalyst.F32) {
		t.Errorf("device info: %+v", info)
	}
	if major, _ := catalyst.ABIVersion(); major != 1 {
		t.Errorf("ABI major %d", major)
	}
}

func TestViewsShareStorage(t *testing.T) {
	_, dev := testDevice(t)
	x := fromF32(t, dev, []int64{2, 3}, 1, 2, 3, 4, 5, 6)
	tr := must(x.Transpose(0, 1))
	defer tr.Close()
	info := must(tr.Info())
	if !equalSlices(info.Shape, []int64{3, 2}) || !equalSlices(info.Strides, []int64{1, 3}) || info.Contiguous {
		t.Errorf("transpose info: %+v", info)
	}
	if got := values[float32](t, tr); !equalSlices(got, []float32{1, 4, 2, 5, 3, 6}) {
		t.Errorf("transpose: %v", got)
	}
	sl := must(x.Slice(1, 0, 3, 2))
	defer sl.Close()
	if got := values[float32](t, sl); !equalSlices(got, []float32{1, 3, 4, 6}) {
		t.Errorf("slice: %v", got)
	}
	r := must(x.Reshape([]int64{3, -1}))
	defer r.Close()
	if !equalSlices(r.Shape(), []int64{3, 2}) {
		t.Errorf("reshape: %v", r.Shape())
	}
	p := must(x.Permute([]int64{1, 0}))
	defer p.Close()
	c := must(p.Contiguous())
	defer c.Close()
	if ci := must(c.Info()); !ci.Contiguous || !equalSlices(values[float32](t, c), []float32{1, 4, 2, 5, 3, 6}) {
		t.Errorf("contiguous: %+v", ci)
	}
	row := fromF32(t, dev, []int64{3}, 1, 2, 3)
	ex := must(row.Expand([]int64{2, 3}))
	defer ex.Close()
	if got := values[float32](t, ex); !equalSlices(got, []float32{1, 2, 3, 1, 2, 3}) {
		t.Errorf("expand: %v", got)
	}
	// A view outlives the handle it was made from.
	x.Close()
	if got := values[float32](t, tr); !equalSlices(got, []float32{1, 4, 2, 5, 3, 6}) {
		t.Errorf("view after its source closed: %v", got)
	}
}
