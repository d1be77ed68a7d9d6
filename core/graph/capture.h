// capture.h — recording a thread's ops on one runtime into a graph instead of running them
// (ctl_runtime_begin_capture .. ctl_runtime_end_capture).
//
// The core's few places that reach a plugin ask active_capture() first: the op path
// (dispatch.cpp's execute_call) records the call, zero fills and host writes (tensor.cpp)
// record their bytes, and calls whose result the host would need now (reads, moves between
// devices, collectives) are refused. Validation runs before any of them, so a bad call
// gets the eager status and records nothing.
#pragma once

#include <cstdint>

#include "catalyst_plugin.h"
#include "runtime.h"

struct ctl_graph;

namespace catalyst {

struct Storage;

// The capture in progress on this thread, if any.
struct GraphCapture {
  ctl_runtime* runtime = nullptr;
  ctl_graph* graph = nullptr;  // being filled
  uint64_t next_id = 0;
};

extern thread_local GraphCapture* t_capture;

// The capture that must record work for `device`, or NULL to run it.
inline GraphCapture* active_capture(const ctl_device* device) {
  GraphCapture* capture = t_capture;
  return capture && device && capture->runtime == device->runtime ? capture : nullptr;
}

// The tensors behind a plugin call's views, in the call's order (NULL where absent).
struct CallTensors {
  const ctl_tensor* const* inputs = nullptr;
  size_t input_count = 0;
  const ctl_tensor* const* outputs = nullptr;
  size_t output_count = 0;
};

// Records an op call. Asks the plugin's op_supports first, so what the device would refuse
// at run time is refused now, with the eager status.
ctl_status* capture_op(GraphCapture* capture, ctl_device* device, const ctl_op_call& call, const CallTensors& tensors);
// Records a fill of bytes [offset, offset + bytes) of `storage` with `pattern`.
ctl_status* capture_fill(GraphCapture* capture, Storage* storage, uint64_t offset, uint64_t bytes, const void* pattern,
                         size_t pattern_size);
// Records a host-to-device write; the bytes are copied into the graph.
ctl_status* capture_write(GraphCapture* capture, Storage* storage, uint64_t offset, const void* data, uint64_t bytes);
// Notes a storage allocated during the capture (its buffer is the graph's to plan).
void capture_note_storage(GraphCapture* capture, Storage* storage);
// Frees the buffer of a storage made in a capture once the graph alone holds it
// (Storage::release): nothing has run on it yet, and no view of it is left to read it.
void drop_graph_buffer(Storage* storage);
// Gives a storage whose buffer was dropped a new one (before a node that uses it runs).
ctl_status* materialize(Storage* storage);

// FAILED_PRECONDITION naming `what` (e.g. "reading cpu:0's tensor data") for work the host
// cannot do while capturing.
ctl_status* refused_while_capturing(const char* what);

}  // namespace catalyst
