package catalyst_test

import (
	"errors"
	"fmt"
	"testing"

	"catalyst"
	"catalyst/internal/dlpacktest"
)

// TestBadInputs feeds one bad input of each kind and expects a *catalyst.Error with the
// code and (a piece of) the message the C ABI gives; nothing may crash. The few rows
// checked on the Go side (the ABI cannot see a Go element type) say so.
func TestBadInputs(t *testing.T) {
	rt, dev := testDevice(t)
	x := fromF32(t, dev, []int64{2, 3}, 1, 2, 3, 4, 5, 6)
	i32 := must(catalyst.FromSlice(dev, []int64{2, 3}, []int32{1, 2, 3, 4, 5, 6}))
	defer i32.Close()
	v4 := fromF32(t, dev, []int64{4}, 1, 2, 3, 4)
	closed := must(catalyst.FromSlice(dev, []int64{1}, []float32{1}))
	closed.Close()
	var nilTensor *catalyst.Tensor
	closedRuntime := must(catalyst.NewRuntime(&catalyst.Options{DisableDiscovery: true}))
	closedRuntime.Close()
	noDevices := must(catalyst.NewRuntime(&catalyst.Options{DisableDiscovery: true}))
	defer noDevices.Close()
	closedDevice := must(rt.FindDevice("cpu:0"))
	closedDevice.Close()

	// dlpackImport makes a capsule from spec and imports it; a failed import leaves the
	// capsule with the caller, who closes it.
	dlpackImport := func(spec dlpacktest.Spec) error {
		d := catalyst.DLPackFromPointer(dlpacktest.New(spec))
		defer d.Close()
		_, err := dev.FromDLPack(d)
		return err
	}
	err2 := func(_ any, err error) error { return err }

	rows := []struct {
		name string
		call func() error
		code catalyst.Code
		part string
	}{
		{"closed tensor as an op input", func() error { return err2(catalyst.Add(x, closed)) },
			catalyst.InvalidArgument, "argument 'inputs[1]' is NULL"},
		{"nil tensor", func() error { return err2(catalyst.Exp(nilTensor)) },
			catalyst.InvalidArgument, "is NULL"},
		{"closed tensor in OpRun (NULL would mean absent)", func() error {
			return err2(catalyst.OpRun(catalyst.OpAdd, []*catalyst.Tensor{x, closed}, nil, 1))
		}, catalyst.InvalidArgument, "inputs[1] is a closed Tensor"},
		{"use after Close: view", func() error { return err2(closed.Reshape([]int64{1})) },
			catalyst.InvalidArgument, "is NULL"},
		{"use after Close: read", func() error { return err2(catalyst.ToSlice[float32](closed)) },
			catalyst.InvalidArgument, "is NULL"},
		{"closed runtime", func() error { return err2(closedRuntime.DefaultDevice()) },
			catalyst.InvalidArgument, "argument 'runtime' is NULL"},
		{"closed device", func() error { return err2(catalyst.Zeros(closedDevice, catalyst.F32, []int64{1})) },
			catalyst.InvalidArgument, "argument 'device' is NULL"},
		{"nil device", func() error { return err2(catalyst.FromSlice(nil, []int64{1}, []float32{1})) },
			catalyst.InvalidArgument, "argument 'device' is NULL"},
		{"no device", func() error { return err2(noDevices.DefaultDevice()) },
			catalyst.NotFound, "the runtime has no devices"},
		{"unknown device name", func() error { return err2(rt.FindDevice("gpu:7")) },
			catalyst.NotFound, `("gpu:7") names no device`},
		{"device index out of range", func() error { return err2(rt.Device(5)) },
			catalyst.OutOfRange, "argument 'index' is 5"},
		{"mixed dtypes", func() error { return err2(catalyst.Add(x, i32)) },
			catalyst.InvalidArgument, "inputs[1] is i32 but inputs[0] is f32"},
		{"shapes that do not broadcast", func() error { return err2(catalyst.Add(x, v4)) },
			catalyst.InvalidArgument, "does not broadcast"},
		{"matmul inner dimensions", func() error { return err2(catalyst.Matmul(x, x)) },
			catalyst.InvalidArgument, "inner dimensions differ"},
		{"reduction axis out of range", func() error { return err2(catalyst.Sum(x, []int64{5}, false)) },
			catalyst.InvalidArgument, "axes entry is 5, out of range for an input of rank 2"},
		{"softmax axis out of range", func() error { return err2(catalyst.Softmax(x, -3)) },
			catalyst.InvalidArgument, "attrs->axis is -3"},
		{"transpose axis out of range", func() error { return err2(x.Transpose(0, 2)) },
			catalyst.InvalidArgument, "argument 'axis1' is 2"},
		{"slice length mismatch", func() error { return err2(catalyst.FromSlice(dev, []int64{2, 3}, []float32{1, 2})) },
			catalyst.InvalidArgument, "argument 'data_bytes' is 8 but a f32 tensor of that shape has 24 bytes"},
		{"destination slice too short", func() error { return catalyst.CopyTo(x, make([]float32, 3)) },
			catalyst.InvalidArgument, "argument 'dst_bytes' is 12 but the tensor has 24 bytes"},
		{"wrong Go element type (Go side)", func() error { return err2(catalyst.ToSlice[int32](x)) },
			catalyst.InvalidArgument, "the tensor is f32, not i32"},
		{"negative dimension", func() error { return err2(catalyst.Zeros(dev, catalyst.F32, []int64{-2, 3})) },
			catalyst.InvalidArgument, "shape[0] is -2"},
		{"rank over CTL_MAX_RANK", func() error { return err2(catalyst.Zeros(dev, catalyst.F32, make([]int64, 9))) },
			catalyst.InvalidArgument, "rank of 'shape' is 9"},
		{"unknown dtype", func() error { return err2(catalyst.Empty(dev, catalyst.DType(99), []int64{2})) },
			catalyst.InvalidArgument, "argument 'dtype' is 99"},
		{"reshape to another size", func() error { return err2(x.Reshape([]int64{4, 2})) },
			catalyst.InvalidArgument, "shape has 8 elements but the tensor has 6"},
		{"slice step 0", func() error { return err2(x.Slice(0, 0, 2, 0)) },
			catalyst.InvalidArgument, "argument 'step' is 0"},
		{"unknown op id", func() error { return err2(catalyst.OpRun(catalyst.OpID(9999), []*catalyst.Tensor{x}, nil, 1)) },
			catalyst.InvalidArgument, "argument 'op' is 9999"},
		{"wrong input count", func() error { return err2(catalyst.OpRun(catalyst.OpAdd, []*catalyst.Tensor{x}, nil, 1)) },
			catalyst.InvalidArgument, "add takes 2 inputs"},
		{"too many reduction axes", func() error {
			return err2(catalyst.OpRun(catalyst.OpSum, []*catalyst.Tensor{x}, &catalyst.ReduceAttrs{Axes: make([]int32, 9)}, 1))
		}, catalyst.InvalidArgument, "attrs->axis_count is 9"},
		{"output of the wrong shape", func() error {
			return catalyst.OpRunInto(catalyst.OpAdd, []*catalyst.Tensor{x, x}, nil, []*catalyst.Tensor{v4})
		}, catalyst.InvalidArgument, "outputs[0] has shape [4] but the op produces [2,3]"},
		{"adamw step 0", func() error {
			return catalyst.OpRunInto(catalyst.OpAdamWStep, []*catalyst.Tensor{v4}, &catalyst.AdamWAttrs{LR: 0.1},
				[]*catalyst.Tensor{v4, v4, v4})
		}, catalyst.InvalidArgument, "attrs->step is 0"},
		{"backward without a recorded graph", func() error { return x.Backward() },
			catalyst.InvalidArgument, "does not require gradients"},
		{"integer tensor requiring gradients", func() error { return i32.SetRequiresGrad(true) },
			catalyst.InvalidArgument, "only f32, f64, f16 and bf16 tensors can require gradients"},
		{"nil DLPack capsule", func() error { return err2(dev.FromDLPack(nil)) },
			catalyst.InvalidArgument, "argument 'managed' is NULL"},
		{"DLPack with unknown flags", func() error { return dlpackImport(dlpacktest.Spec{Shape: []int64{4}, Flags: 1 << 20}) },
			catalyst.Unsupported, "does not know the bits 0x100000"},
		{"DLPack with vector lanes", func() error {
			return dlpackImport(dlpacktest.Spec{Shape: []int64{4}, Code: 2, Bits: 32, Lanes: 4})
		}, catalyst.Unsupported, "4 lanes"},
		{"foreign DLPack device (CUDA)", func() error { return dlpackImport(dlpacktest.Spec{Shape: []int64{4}, DeviceType: 2}) },
			catalyst.Unsupported, "device type 2 is not host memory"},
		{"misaligned DLPack offset", func() error { return dlpackImport(dlpacktest.Spec{Shape: []int64{4}, ByteOffset: 2}) },
			catalyst.InvalidArgument, "not aligned to the 4 bytes of a f32"},
		{"DLPack of a newer major version", func() error { return dlpackImport(dlpacktest.Spec{Shape: []int64{4}, Major: 2}) },
			catalyst.Unsupported, "DLPack version 2.0"},
		{"DLPack with a NULL shape", func() error { return dlpackImport(dlpacktest.Spec{Shape: []int64{4}, NullShape: true}) },
			catalyst.InvalidArgument, "DLPack shape is NULL with ndim 1"},
	}
	if len(rows) < 15 {
		t.Fatalf("only %d kinds of bad input", len(rows))
	}
	for _, row := range rows {
		wantError(t, row.name, row.call(), row.code, row.part)
	}
	// Nothing above changed x.
	if got := values[float32](t, x); !equalSlices(got, []float32{1, 2, 3, 4, 5, 6}) {
		t.Errorf("a failed call changed its input: %v", got)
	}
}

// An error from the ABI survives wrapping: errors.As still finds the *catalyst.Error.
func TestErrorsAsThroughWrapping(t *testing.T) {
	_, dev := testDevice(t)
	_, err := catalyst.Softmax(fromF32(t, dev, []int64{2}, 1, 2), 4)
	wrapped := fmt.Errorf("layer 3: %w", err)
	var ce *catalyst.Error
	if !errors.As(wrapped, &ce) || ce.Code() != catalyst.InvalidArgument {
		t.Fatalf("errors.As on %v: %v", wrapped, ce)
	}
	if catalyst.InvalidArgument.String() != "INVALID_ARGUMENT" {
		t.Errorf("code name %q", catalyst.InvalidArgument.String())
	}
}

func TestDoubleCloseIsHarmless(t *testing.T) {
	rt, dev := testDevice(t)
	x := fromF32(t, dev, []int64{1}, 1)
	d := must(x.Device())
	p := must(x.ToDLPack())
	for i := 0; i < 3; i++ {
		for _, c := range []interface{ Close() error }{x, d, p} {
			if err := c.Close(); err != nil {
				t.Fatalf("Close %d of %T: %v", i, c, err)
			}
		}
	}
	// Two handles on one ctl_tensor (Contiguous retains a contiguous tensor): closing one
	// of them three times must drop one reference only, so the memory (a capsule that
	// counts its deleter's calls) lives until the other handle closes.
	before := dlpacktest.Deleted()
	src := must(dev.FromDLPack(catalyst.DLPackFromPointer(dlpacktest.New(dlpacktest.Spec{Shape: []int64{4}}))))
	same := must(src.Contiguous())
	src.Close()
	src.Close()
	src.Close()
	if got := dlpacktest.Deleted() - before; got != 0 {
		t.Fatalf("closing one handle three times freed memory another handle uses (deleter ran %d times)", got)
	}
	if got := values[float32](t, same); !equalSlices(got, []float32{0, 1, 2, 3}) {
		t.Errorf("the other handle reads %v", got)
	}
	same.Close()
	if got := dlpacktest.Deleted() - before; got != 1 {
		t.Errorf("after both handles closed the deleter ran %d times, want 1", got)
	}
	var nilTensor *catalyst.Tensor
	var nilRuntime *catalyst.Runtime
	var nilDevice *catalyst.Device
	var nilDLPack *catalyst.DLPack
	if nilTensor.Close() != nil || nilRuntime.Close() != nil || nilDevice.Close() != nil || nilDLPack.Close() != nil {
		t.Errorf("closing a nil handle failed")
	}
	// The runtime's own handle may close before the device taken from it.
	rt.Close()
	rt.Close()
	if _, err := dev.Info(); err != nil {
		t.Errorf("a device outlives its runtime's handle: %v", err)
	}
	if rt.DeviceCount() != 0 {
		t.Errorf("a closed runtime reports devices")
	}
	if x.DType() != catalyst.InvalidDType || x.Numel() != 0 || len(x.Shape()) != 0 || x.RequiresGrad() {
		t.Errorf("a closed tensor reports facts: %v %d %v", x.DType(), x.Numel(), x.Shape())
	}
}
