package catalyst_test

import (
	"runtime"
	"testing"
	"time"

	"catalyst"
	"catalyst/internal/dlpacktest"
)

func TestDLPackRoundTripIsZeroCopy(t *testing.T) {
	_, dev := testDevice(t)
	x := fromF32(t, dev, []int64{2, 3}, 1, 2, 3, 4, 5, 6)
	p := must(x.ToDLPack())
	defer p.Close()
	info := must(p.Info())
	if info.Version != [2]uint32{1, 0} || info.DeviceType != 1 || !equalSlices(info.Shape, []int64{2, 3}) {
		t.Errorf("capsule: %+v", info)
	}
	view := must(catalyst.DLPackSlice[float32](p))
	if !equalSlices(view, []float32{1, 2, 3, 4, 5, 6}) {
		t.Errorf("capsule data: %v", view)
	}
	if _, err := catalyst.DLPackSlice[int32](p); err == nil {
		t.Errorf("DLPackSlice read f32 as i32")
	}
	view[0] = 42 // the capsule is the tensor's memory
	back := must(dev.FromDLPack(p))
	defer back.Close()
	if got := values[float32](t, back); !equalSlices(got, []float32{42, 2, 3, 4, 5, 6}) {
		t.Errorf("imported: %v", got)
	}
	if got := values[float32](t, x); got[0] != 42 {
		t.Errorf("the export copied: the source reads %v", got)
	}
	if _, err := p.Info(); err == nil {
		t.Errorf("a consumed capsule still reads")
	}
	if err := p.Close(); err != nil { // consumed: nothing left to delete
		t.Error(err)
	}
	// A transposed view keeps its strides through the round trip.
	tr := must(x.Transpose(0, 1))
	defer tr.Close()
	pt := must(tr.ToDLPack())
	if info := must(pt.Info()); !equalSlices(info.Strides, []int64{1, 3}) {
		t.Errorf("transposed capsule strides: %v", info.Strides)
	}
	if _, err := catalyst.DLPackSlice[float32](pt); err == nil {
		t.Errorf("DLPackSlice gave a flat slice of a non-contiguous capsule")
	}
	bt := must(dev.FromDLPack(pt))
	defer bt.Close()
	if got := values[float32](t, bt); !equalSlices(got, []float32{42, 4, 2, 5, 3, 6}) {
		t.Errorf("transposed round trip: %v", got)
	}
}

// A foreign capsule's deleter runs exactly once: when the last tensor on it is closed.
func TestDLPackImportCallsTheDeleterOnce(t *testing.T) {
	_, dev := testDevice(t)
	before := dlpacktest.Deleted()
	p := catalyst.DLPackFromPointer(dlpacktest.New(dlpacktest.Spec{Shape: []int64{2, 2}}))
	x := must(dev.FromDLPack(p))
	if got := values[float32](t, x); !equalSlices(got, []float32{0, 1, 2, 3}) {
		t.Errorf("imported: %v", got)
	}
	v := must(x.Slice(0, 1, 2, 1))
	x.Close()
	if dlpacktest.Deleted() != before {
		t.Fatalf("the deleter ran while a view still used the memory")
	}
	v.Close()
	p.Close()
	if got := dlpacktest.Deleted() - before; got != 1 {
		t.Fatalf("the deleter ran %d times, want 1", got)
	}
}

// The finalizer is a backstop: a tensor dropped without Close is released by the
// collector, and one that was closed is not released again.
func TestFinalizerReleasesAnUnclosedTensor(t *testing.T) {
	_, dev := testDevice(t)
	before := dlpacktest.Deleted()
	func() {
		p := catalyst.DLPackFromPointer(dlpacktest.New(dlpacktest.Spec{Shape: []int64{4}}))
		_ = must(dev.FromDLPack(p)) // dropped without Close
	}()
	deadline := time.Now().Add(10 * time.Second)
	for dlpacktest.Deleted() == before && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if got := dlpacktest.Deleted() - before; got != 1 {
		t.Fatalf("after collection the deleter ran %d times, want 1", got)
	}
	closedOnce := dlpacktest.Deleted()
	func() {
		p := catalyst.DLPackFromPointer(dlpacktest.New(dlpacktest.Spec{Shape: []int64{4}}))
		x := must(dev.FromDLPack(p))
		x.Close()
	}()
	for i := 0; i < 5; i++ {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if got := dlpacktest.Deleted() - closedOnce; got != 1 {
		t.Fatalf("Close then collection ran the deleter %d times, want 1", got)
	}
}

// Reading a malformed foreign capsule is an error, not a Go panic.
func TestDLPackInfoOfMalformedCapsules(t *testing.T) {
	nullShape := catalyst.DLPackFromPointer(dlpacktest.New(dlpacktest.Spec{Shape: []int64{4}, NullShape: true}))
	defer nullShape.Close()
	_, err := nullShape.Info()
	wantError(t, "Info of a capsule with a NULL shape", err, catalyst.InvalidArgument, "ndim 1 with shape")
	_, err = catalyst.DLPackSlice[float32](nullShape)
	wantError(t, "DLPackSlice of a capsule with a NULL shape", err, catalyst.InvalidArgument, "ndim 1 with shape")
	nullData := catalyst.DLPackFromPointer(dlpacktest.New(dlpacktest.Spec{Shape: []int64{4}, NullData: true}))
	defer nullData.Close()
	_, err = catalyst.DLPackSlice[float32](nullData)
	wantError(t, "DLPackSlice of a capsule with NULL data", err, catalyst.InvalidArgument, "data is NULL with 4 elements")
	var closed *catalyst.DLPack
	_, err = closed.Info()
	wantError(t, "Info of a nil capsule", err, catalyst.InvalidArgument, "closed or consumed")
}
