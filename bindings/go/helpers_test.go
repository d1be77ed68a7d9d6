package catalyst_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"catalyst"
)

// testDevice is the CPU plugin's first device on a runtime that loads only that plugin
// (CTest passes its path in CATALYST_TEST_CPU_PLUGIN, as for the other language tests).
func testDevice(t testing.TB) (*catalyst.Runtime, *catalyst.Device) {
	t.Helper()
	plugin := os.Getenv("CATALYST_TEST_CPU_PLUGIN")
	if plugin == "" {
		t.Fatal("CATALYST_TEST_CPU_PLUGIN is not set; run the tests through CTest or set it to libcatalyst-cpu.so")
	}
	rt, err := catalyst.NewRuntime(&catalyst.Options{PluginPaths: []string{plugin}, DisableDiscovery: true})
	if err != nil {
		t.Fatal(err)
	}
	dev, err := rt.FindDevice("cpu:0")
	if err != nil {
		rt.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		dev.Close()
		rt.Close()
	})
	return rt, dev
}

// must is for calls that the test expects to succeed. It panics (which fails the test
// run, with the stack) because Go 1.19 cannot pass f()'s two results next to a testing.T.
func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprintf("unexpected error: %v", err))
	}
	return v
}

func values[T catalyst.Element](t testing.TB, x *catalyst.Tensor) []T {
	t.Helper()
	return must(catalyst.ToSlice[T](x))
}

func fromF32(t testing.TB, dev *catalyst.Device, shape []int64, data ...float32) *catalyst.Tensor {
	t.Helper()
	x := must(catalyst.FromSlice(dev, shape, data))
	t.Cleanup(func() { x.Close() })
	return x
}

func equalSlices[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func near(a, b []float32, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		if d > tol || d < -tol {
			return false
		}
	}
	return true
}

// wantError checks that err is a *catalyst.Error with code and a message containing part.
func wantError(t testing.TB, what string, err error, code catalyst.Code, part string) {
	t.Helper()
	var ce *catalyst.Error
	if !errors.As(err, &ce) {
		t.Errorf("%s: got %v (%T), want a *catalyst.Error", what, err, err)
		return
	}
	if ce.Code() != code {
		t.Errorf("%s: code %v, want %v (%v)", what, ce.Code(), code, err)
	}
	if !strings.Contains(ce.Message(), part) {
		t.Errorf("%s: message %q does not contain %q", what, ce.Message(), part)
	}
	if !strings.HasPrefix(err.Error(), code.String()+": ") {
		t.Errorf("%s: Error() is %q, want it to start with the code's name", what, err.Error())
	}
}
