// capture.cpp — see capture.h; the C entry points that begin and end a capture are in
// graph_api.cpp.
#include "graph/capture.h"

#include <cstring>
#include <new>

#include "graph/graph.h"
#include "op_schema.h"
#include "status.h"
#include "tensor.h"

namespace catalyst {

thread_local GraphCapture* t_capture = nullptr;

namespace {

NodeOperand operand_of(const ctl_tensor* tensor, const ctl_tensor_view* view) {
  NodeOperand operand;
  if (!tensor || !view) return operand;
  operand.storage = tensor->storage;
  operand.view = *view;
  return operand;
}

}  // namespace

ctl_status* capture_op(GraphCapture* capture, ctl_device* device, const ctl_op_call& call, const CallTensors& tensors) {
  if (device->api().op_supports) {
    if (ctl_status* status = device->api().op_supports(device->handle, &call)) {
      return annotate(status, std::string(op_name(call.op)) + " on " + device->label);
    }
  }
  if (tensors.input_count != call.input_count || tensors.output_count != call.output_count) {
    return make_status(CTL_STATUS_INTERNAL, "%s: capture got %zu/%zu tensors for a call of %u/%u views",
                       op_name(call.op), tensors.input_count, tensors.output_count, call.input_count,
                       call.output_count);
  }
  try {
    GraphNode node;
    node.id = capture->next_id;
    node.kind = NodeKind::kOp;
    node.device = device;
    node.op = call.op;
    if (call.attrs) {
      std::memcpy(&node.attrs, call.attrs, sizeof node.attrs);  // call.attrs points into a PreparedOp::Attrs
      node.has_attrs = true;
    }
    node.inputs.reserve(call.input_count);
    for (uint32_t i = 0; i < call.input_count; ++i)
      node.inputs.push_back(operand_of(tensors.inputs[i], call.inputs[i]));
    node.outputs.reserve(call.output_count);
    for (uint32_t i = 0; i < call.output_count; ++i) {
      node.outputs.push_back(operand_of(tensors.outputs[i], call.outputs[i]));
    }
    ctl_graph* graph = capture->graph;
    for (const auto* list : {&node.inputs, &node.outputs}) {
      for (const NodeOperand& operand : *list) {
        if (operand.storage) hold_storage(graph, operand.storage, false);
      }
    }
    graph->nodes.push_back(std::move(node));
  } catch (const std::bad_alloc&) {
    return make_status(CTL_STATUS_OUT_OF_MEMORY, "%s: out of memory recording the op into a graph", op_name(call.op));
  }
  ++capture->next_id;
  return nullptr;
}

namespace {

ctl_status* capture_bytes(GraphCapture* capture, NodeKind kind, Storage* storage, uint64_t offset, uint64_t bytes,
                          const void* data, size_t data_size) {
  try {
    GraphNode node;
    node.id = capture->next_id;
    node.kind = kind;
    node.device = storage->device;
    NodeOperand target;
    target.storage = storage;
    target.view.struct_size = CTL_TENSOR_VIEW_STRUCT_SIZE;
    target.view.byte_offset = offset;
    target.view.dtype = CTL_DTYPE_U8;
    target.view.rank = 1;
    target.view.shape[0] = static_cast<int64_t>(bytes);
    target.view.strides[0] = 1;
    node.outputs.push_back(target);
    node.byte_offset = offset;
    node.byte_count = bytes;
    const auto* begin = static_cast<const uint8_t*>(data);
    node.payload.assign(begin, begin + data_size);
    hold_storage(capture->graph, storage, false);
    capture->graph->nodes.push_back(std::move(node));
  } catch (const std::bad_alloc&) {
    return make_status(CTL_STATUS_OUT_OF_MEMORY, "out of memory recording %llu bytes into a graph",
                       static_cast<unsigned long long>(bytes));
  }
  ++capture->next_id;
  return nullptr;
}

}  // namespace

ctl_status* capture_fill(GraphCapture* capture, Storage* storage, uint64_t offset, uint64_t bytes, const void* pattern,
                         size_t pattern_size) {
  return capture_bytes(capture, NodeKind::kFill, storage, offset, bytes, pattern, pattern_size);
}

ctl_status* capture_write(GraphCapture* capture, Storage* storage, uint64_t offset, const void* data, uint64_t bytes) {
  return capture_bytes(capture, NodeKind::kWrite, storage, offset, bytes, data, bytes);
}

void capture_note_storage(GraphCapture* capture, Storage* storage) {
  try {
    hold_storage(capture->graph, storage, true);
    storage->drop_buffer_when_graph_alone.store(true, std::memory_order_release);
  } catch (const std::bad_alloc&) {
    // Not noted: the graph treats the storage as the program's own and never plans it,
    // which is always correct, only less thrifty.
  }
}

void drop_graph_buffer(Storage* storage) {
  storage->drop_buffer_when_graph_alone.store(false, std::memory_order_relaxed);
  storage->free_buffer();
}

ctl_status* materialize(Storage* storage) {
  if (storage->buffer || storage->size_bytes == 0) return nullptr;
  return storage->allocate_buffer();
}

ctl_status* refused_while_capturing(const char* what) {
  return make_status(CTL_STATUS_FAILED_PRECONDITION,
                     "%s is not possible while this thread captures a graph on the runtime (its result would "
                     "be unknown until the graph runs); do it before ctl_runtime_begin_capture or after "
                     "ctl_graph_launch",
                     what);
}

}  // namespace catalyst
