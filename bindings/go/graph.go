package catalyst

// #include <stdlib.h>
// #include <catalyst.h>
import "C"

import (
	"runtime"
	"unsafe"
)

// Graph is a ctl_graph (ABI 1.5): a step of ops captured once and launched many times.
// Like a Tensor it has an explicit, idempotent Close with a finalizer as a backstop.
type Graph struct {
	ptr *C.ctl_graph
}

// GraphStats are a graph's ctl_graph_stats.
type GraphStats struct {
	CapturedNodes, Nodes uint64 // as captured, and now
	LaunchesPerRun       uint64 // plugin calls one Launch makes
	UnfusedNodes         uint64 // fused nodes run as their separate ops
	DeviceBytes          uint64 // intermediate buffers, now and before memory planning
	CapturedDeviceBytes  uint64
	Runs                 uint64 // completed launches
}

// Capture runs body with the runtime capturing the ops it issues (nothing runs; outputs
// hold their values after Launch) and returns the graph. Capture is per OS thread in C, so
// the goroutine is locked to its thread until the capture ends; ops that body starts in
// other goroutines run eagerly. Reading a tensor, moving tensors between devices and
// collectives fail with FailedPrecondition inside body. However body ends (an error, a
// panic), the capture is ended before Capture returns or the panic goes on; on an error
// the graph is dropped and body's error returned.
func (r *Runtime) Capture(body func() error) (*Graph, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer runtime.KeepAlive(r)
	if err := statusError(C.ctl_runtime_begin_capture(r.handle())); err != nil {
		return nil, err
	}
	ended := false
	defer func() {
		if !ended { // body panicked: end the capture and drop its graph
			var g *C.ctl_graph
			C.ctl_status_free(C.ctl_runtime_end_capture(r.handle(), &g))
			C.ctl_graph_release(g)
		}
	}()
	bodyErr := body()
	ended = true
	var g *C.ctl_graph
	err := statusError(C.ctl_runtime_end_capture(r.handle(), &g))
	if bodyErr != nil {
		C.ctl_graph_release(g)
		return nil, bodyErr
	}
	if err != nil {
		return nil, err
	}
	graph := &Graph{ptr: g}
	runtime.SetFinalizer(graph, (*Graph).Close)
	return graph, nil
}

// CaptureNextNode is, inside Capture's body, the id the next captured op will get (for
// SetNodeAttrs). FailedPrecondition outside a capture.
func (r *Runtime) CaptureNextNode() (uint64, error) {
	var node C.uint64_t
	err := statusError(C.ctl_runtime_capture_next_node(r.handle(), &node))
	runtime.KeepAlive(r)
	return uint64(node), err
}

// Close releases the graph. Closing twice is harmless.
func (g *Graph) Close() error {
	if g == nil || g.ptr == nil {
		return nil
	}
	C.ctl_graph_release(g.ptr)
	g.ptr = nil
	runtime.SetFinalizer(g, nil)
	return nil
}

func (g *Graph) handle() *C.ctl_graph {
	if g == nil {
		return nil
	}
	return g.ptr
}

// Optimize runs the comma-separated passes ("dce,cse,fuse_elementwise", "none"; "" for the
// default: CATALYST_GRAPH_PASSES or every pass), once, before the first launch.
func (g *Graph) Optimize(passes string) error {
	var o C.ctl_graph_options
	o.struct_size = C.CTL_GRAPH_OPTIONS_STRUCT_SIZE
	if passes != "" {
		o.passes = C.CString(passes)
		defer C.free(unsafe.Pointer(o.passes))
	}
	err := statusError(C.ctl_graph_optimize(g.handle(), &o))
	runtime.KeepAlive(g)
	return err
}

// Launch runs every node in order and returns without waiting; reading results waits.
func (g *Graph) Launch() error {
	err := statusError(C.ctl_graph_launch(g.handle()))
	runtime.KeepAlive(g)
	return err
}

// SetNodeAttrs replaces captured node's attributes for later launches: *AdamWAttrs,
// *SGDAttrs or *FillAttrs. Checked as the op checks them; a bad value changes nothing.
func (g *Graph) SetNodeAttrs(node uint64, attrs Attrs) error {
	var p unsafe.Pointer
	if attrs != nil {
		p = attrs.cAttrs()
	}
	err := statusError(C.ctl_graph_set_node_attrs(g.handle(), C.uint64_t(node), p))
	runtime.KeepAlive(g)
	return err
}

// Stats are the graph's node counts, memory and completed launches.
func (g *Graph) Stats() (GraphStats, error) {
	var s C.ctl_graph_stats
	s.struct_size = C.CTL_GRAPH_STATS_STRUCT_SIZE
	err := statusError(C.ctl_graph_get_stats(g.handle(), &s))
	runtime.KeepAlive(g)
	return GraphStats{uint64(s.captured_nodes), uint64(s.nodes), uint64(s.launches_per_run),
		uint64(s.unfused_nodes), uint64(s.device_bytes), uint64(s.captured_device_bytes), uint64(s.runs)}, err
}
