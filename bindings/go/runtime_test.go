package catalyst_test

import (
	"testing"

	"catalyst"
)

func TestRuntimeDevicesAndPlugins(t *testing.T) {
	rt, _ := testDevice(t)
	if major, minor := catalyst.ABIVersion(); major != 1 || minor < 5 {
		t.Errorf("ABI %d.%d, want 1.5 or later", major, minor)
	}
	plugins := must(rt.Plugins())
	if len(plugins) != 1 || !plugins[0].Accepted || plugins[0].Name != "cpu" || plugins[0].Source != "options" ||
		plugins[0].DeviceCount != 1 {
		t.Errorf("plugins: %+v", plugins)
	}
	devices := must(rt.Devices())
	if len(devices) != rt.DeviceCount() || len(devices) != 1 {
		t.Fatalf("%d devices, DeviceCount %d", len(devices), rt.DeviceCount())
	}
	defer devices[0].Close()
	def := must(rt.DefaultDevice())
	defer def.Close()
	for _, d := range []*catalyst.Device{devices[0], def} {
		info := must(d.Info())
		if info.Name == "" || info.PluginName != "cpu" || info.Kind != catalyst.KindCPU || info.Index != 0 {
			t.Errorf("device info: %+v", info)
		}
		if err := d.Synchronize(); err != nil {
			t.Error(err)
		}
	}
}

// Ops with optional inputs and outputs: a nil input is NULL to the ABI (absent), and an
// output the op makes only on request comes back when asked for.
func TestOptionalInputsAndOutputs(t *testing.T) {
	_, dev := testDevice(t)
	x := fromF32(t, dev, []int64{2, 2}, 1, 3, 2, 6)
	out := must(catalyst.OpRun(catalyst.OpLayerNorm, []*catalyst.Tensor{x, nil, nil}, &catalyst.NormAttrs{}, 3))
	for _, o := range out {
		defer o.Close()
	}
	if len(out) != 3 || out[1] == nil || out[2] == nil {
		t.Fatalf("layer_norm outputs: %v", out)
	}
	if got := values[float32](t, out[1]); !equalSlices(got, []float32{2, 4}) {
		t.Errorf("layer_norm mean: %v", got)
	}
	if got := values[float32](t, out[0]); !near(got, []float32{-1, 1, -1, 1}, 1e-4) {
		t.Errorf("layer_norm: %v", got)
	}
}

// Attribute structs with arrays: conv2d with padding and max_pool2d with a kernel.
func TestConvAndPoolAttrs(t *testing.T) {
	_, dev := testDevice(t)
	ones := make([]float32, 9)
	for i := range ones {
		ones[i] = 1
	}
	x := fromF32(t, dev, []int64{1, 1, 3, 3}, ones...)
	w := fromF32(t, dev, []int64{1, 1, 3, 3}, ones...)
	y := must(catalyst.OpRun1(catalyst.OpConv2D, []*catalyst.Tensor{x, w, nil},
		&catalyst.Conv2DAttrs{Padding: [2]int64{1, 1}}))
	defer y.Close()
	if got := values[float32](t, y); !equalSlices(y.Shape(), []int64{1, 1, 3, 3}) ||
		!equalSlices(got, []float32{4, 6, 4, 6, 9, 6, 4, 6, 4}) {
		t.Errorf("conv2d: %v shape %v", got, y.Shape())
	}
	p := must(catalyst.OpRun1(catalyst.OpMaxPool2D, []*catalyst.Tensor{y},
		&catalyst.Pool2DAttrs{Kernel: [2]int64{2, 2}, Stride: [2]int64{1, 1}}))
	defer p.Close()
	if got := values[float32](t, p); !equalSlices(got, []float32{9, 9, 9, 9}) {
		t.Errorf("max_pool2d: %v", got)
	}
}
