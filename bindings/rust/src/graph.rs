//! `Graph`: a step of ops captured once and launched many times (catalyst.h, "Graphs",
//! since 1.5). [`Graph::capture`] runs a closure with the runtime capturing; whatever way
//! the closure ends (a value, an error, a panic), the capture is ended before control
//! leaves, so the thread never stays in capture mode behind the program's back.

use std::ffi::CString;
use std::path::Path;
use std::ptr::{self, NonNull};

use crate::error::{check, string_from, Error, Result, StatusCode};
use crate::ops::OpAttrs;
use crate::runtime::Runtime;
use crate::sys;

/// A captured graph (`ctl_graph`). Clones are new references to the same graph; the last
/// one dropped releases it and the device memory its nodes use.
///
/// Neither `Send` nor `Sync`: catalyst.h makes no thread-safety promise for graphs, and a
/// graph holds the tensors of the thread that captured them.
pub struct Graph {
    raw: NonNull<sys::ctl_graph>,
}

/// A graph's node counts and memory (`ctl_graph_stats`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GraphStats {
    /// Nodes as captured, and now (after optimisation).
    pub captured_nodes: u64,
    pub nodes: u64,
    /// Plugin calls one launch makes.
    pub launches_per_run: u64,
    /// Fused nodes that run as their separate ops (the plugin lacks the fused op).
    pub unfused_nodes: u64,
    /// Device memory of the intermediate buffers, now and before memory planning.
    pub device_bytes: u64,
    pub captured_device_bytes: u64,
    /// Completed launches.
    pub runs: u64,
}

/// What one optimisation pass did (`ctl_graph_pass_record`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassRecord {
    pub name: String,
    pub nodes_before: u64,
    pub nodes_after: u64,
    pub device_bytes_before: u64,
    pub device_bytes_after: u64,
    /// Nodes removed, merged or rewritten.
    pub changes: u64,
}

/// Which nodes [`Graph::write_dot`] draws (`ctl_graph_stage`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphStage {
    /// The nodes as captured.
    Captured,
    /// The nodes as they run now.
    Current,
}

/// Ends the capture it was made for when dropped, unless [`CaptureScope::end`] did: this is
/// what ends a capture whose closure panicked.
struct CaptureScope<'a> {
    runtime: &'a Runtime,
    ended: bool,
}

impl CaptureScope<'_> {
    fn end(mut self) -> Result<Graph> {
        self.ended = true;
        let mut raw = ptr::null_mut();
        // SAFETY: a live runtime and an out-pointer; on success *raw is a new reference.
        check(unsafe { sys::ctl_runtime_end_capture(self.runtime.as_raw(), &mut raw) })?;
        NonNull::new(raw)
            .map(|raw| Graph { raw })
            .ok_or_else(|| Error::new(StatusCode::Internal, "ctl_runtime_end_capture succeeded without a graph"))
    }
}

impl Drop for CaptureScope<'_> {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        let mut raw = ptr::null_mut();
        // SAFETY: as in end(). The graph of an abandoned capture is released at once; a
        // failure here (no capture left to end) leaves nothing to undo.
        unsafe {
            let status = sys::ctl_runtime_end_capture(self.runtime.as_raw(), &mut raw);
            if !status.is_null() {
                sys::ctl_status_free(status);
            }
            sys::ctl_graph_release(raw);
        }
    }
}

impl Graph {
    /// Captures the ops `body` runs on `runtime`'s devices from this thread, and returns
    /// the graph with `body`'s value (typically the tensors the graph writes). Nothing runs
    /// while capturing: outputs are allocated but hold their values only after
    /// [`Graph::launch`]. Reading a tensor back, moving tensors between devices and
    /// collectives fail with `FailedPrecondition` inside `body`.
    ///
    /// When `body` returns an error, the capture is ended, its graph released, and that
    /// error returned; when it panics, the capture is ended before the panic goes on.
    pub fn capture<T, E, F>(runtime: &Runtime, body: F) -> std::result::Result<(Graph, T), E>
    where
        F: FnOnce() -> std::result::Result<T, E>,
        E: From<Error>,
    {
        // SAFETY: a live runtime.
        check(unsafe { sys::ctl_runtime_begin_capture(runtime.as_raw()) })?;
        let scope = CaptureScope { runtime, ended: false };
        let value = body()?; // an error drops `scope`, which ends the capture
        let graph = scope.end()?;
        Ok((graph, value))
    }

    /// Takes ownership of a reference to a graph.
    ///
    /// # Safety
    /// `raw` is a graph reference the caller owns; the returned value releases it.
    pub unsafe fn from_raw(raw: NonNull<sys::ctl_graph>) -> Graph {
        Graph { raw }
    }

    /// The handle, still owned by `self`.
    pub fn as_raw(&self) -> *mut sys::ctl_graph {
        self.raw.as_ptr()
    }

    /// Runs the named passes over the graph in place (`ctl_graph_optimize`): a
    /// comma-separated list such as `"dce,cse,fuse_elementwise"`, `"none"`, or `None` for
    /// the default (CATALYST_GRAPH_PASSES if set, else every pass). At most once, and only
    /// before the first launch (`FailedPrecondition` otherwise).
    pub fn optimize(&self, passes: Option<&str>) -> Result<()> {
        let passes = passes
            .map(|p| {
                CString::new(p).map_err(|_| {
                    Error::new(StatusCode::InvalidArgument, format!("pass list {:?} contains a NUL byte", p))
                })
            })
            .transpose()?;
        let mut options = sys::ctl_graph_options::zeroed();
        options.struct_size = sys::ctl_graph_options::abi_size();
        options.passes = passes.as_ref().map_or(ptr::null(), |p| p.as_ptr());
        // SAFETY: a live graph and options whose string outlives the call.
        check(unsafe { sys::ctl_graph_optimize(self.as_raw(), &options) })
    }

    /// Runs every node in order and returns without waiting, as eager ops do; read the
    /// results with [`crate::Tensor::to_vec`], which waits.
    pub fn launch(&self) -> Result<()> {
        // SAFETY: a live graph.
        check(unsafe { sys::ctl_graph_launch(self.as_raw()) })
    }

    /// Replaces the attributes of captured node `node` (from
    /// [`Runtime::capture_next_node`]) for later launches: `sys::ctl_adamw_attrs` for an
    /// AdamW step (a new learning rate, the next step count), `ctl_sgd_attrs`,
    /// `ctl_fill_attrs`. Checked as the op checks them; a bad value changes nothing.
    pub fn set_node_attrs(&self, node: u64, attrs: &dyn OpAttrs) -> Result<()> {
        // SAFETY: a live graph and an attribute struct whose struct_size says what to read.
        check(unsafe { sys::ctl_graph_set_node_attrs(self.as_raw(), node, attrs.as_ptr()) })
    }

    /// Node counts, memory and completed launches.
    pub fn stats(&self) -> Result<GraphStats> {
        let mut raw = sys::ctl_graph_stats::zeroed();
        raw.struct_size = sys::ctl_graph_stats::abi_size();
        // SAFETY: a live graph; the library fills at most struct_size bytes.
        check(unsafe { sys::ctl_graph_get_stats(self.as_raw(), &mut raw) })?;
        Ok(GraphStats {
            captured_nodes: raw.captured_nodes,
            nodes: raw.nodes,
            launches_per_run: raw.launches_per_run,
            unfused_nodes: raw.unfused_nodes,
            device_bytes: raw.device_bytes,
            captured_device_bytes: raw.captured_device_bytes,
            runs: raw.runs,
        })
    }

    /// What each pass of [`Graph::optimize`] did, in the order they ran (empty before).
    pub fn pass_report(&self) -> Result<Vec<PassRecord>> {
        let mut count = 0usize;
        // SAFETY: capacity 0 asks only for the count.
        check(unsafe { sys::ctl_graph_pass_report(self.as_raw(), 0, ptr::null_mut(), &mut count) })?;
        let mut records = vec![sys::ctl_graph_pass_record::zeroed(); count];
        for record in &mut records {
            record.struct_size = sys::ctl_graph_pass_record::abi_size();
        }
        // SAFETY: `records` holds `count` structs with struct_size set.
        check(unsafe { sys::ctl_graph_pass_report(self.as_raw(), records.len(), records.as_mut_ptr(), &mut count) })?;
        records.truncate(count);
        Ok(records
            .iter()
            .map(|r| PassRecord {
                // SAFETY: the name is static in the library.
                name: unsafe { string_from(r.name) },
                nodes_before: r.nodes_before,
                nodes_after: r.nodes_after,
                device_bytes_before: r.device_bytes_before,
                device_bytes_after: r.device_bytes_after,
                changes: r.changes,
            })
            .collect())
    }

    /// Writes the graph at `stage` as Graphviz DOT to `path`.
    pub fn write_dot(&self, stage: GraphStage, path: &Path) -> Result<()> {
        let text = path
            .to_str()
            .ok_or_else(|| Error::new(StatusCode::InvalidArgument, format!("path {:?} is not UTF-8", path)))?;
        let path = CString::new(text)
            .map_err(|_| Error::new(StatusCode::InvalidArgument, format!("path {:?} contains a NUL byte", text)))?;
        let stage = match stage {
            GraphStage::Captured => sys::CTL_GRAPH_CAPTURED,
            GraphStage::Current => sys::CTL_GRAPH_CURRENT,
        };
        // SAFETY: a live graph and a NUL-terminated path.
        check(unsafe { sys::ctl_graph_write_dot(self.as_raw(), stage, path.as_ptr()) })
    }
}

impl Clone for Graph {
    fn clone(&self) -> Graph {
        // SAFETY: the handle is live.
        unsafe { sys::ctl_graph_retain(self.as_raw()) };
        Graph { raw: self.raw }
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        // SAFETY: this value owns one reference.
        unsafe { sys::ctl_graph_release(self.as_raw()) };
    }
}

impl std::fmt::Debug for Graph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph").field("raw", &self.raw).field("stats", &self.stats().ok()).finish()
    }
}

impl Runtime {
    /// The id the next op captured on this thread will get, to find that node again in the
    /// graph (e.g. for [`Graph::set_node_attrs`]). `FailedPrecondition` outside a capture.
    pub fn capture_next_node(&self) -> Result<u64> {
        let mut node = 0u64;
        // SAFETY: a live runtime and an out-pointer.
        check(unsafe { sys::ctl_runtime_capture_next_node(self.as_raw(), &mut node) })?;
        Ok(node)
    }
}
