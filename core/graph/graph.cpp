// graph.cpp — the graph object: the storages it holds and how one node runs.
#include "graph/graph.h"

#include <chrono>
#include <mutex>
#include <unordered_set>

#include "dispatch.h"
#include "placement/lazy_move.h"
#include "runtime.h"
#include "status.h"

namespace catalyst {

ctl_status* check_graph(const ctl_graph* graph, const char* argument) {
  if (!graph) return make_status(CTL_STATUS_INVALID_ARGUMENT, "argument '%s' is NULL", argument);
  if (graph->magic != kGraphMagic) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "argument '%s' is not a live ctl_graph (released or foreign)",
                       argument);
  }
  return nullptr;
}

void hold_storage(ctl_graph* graph, Storage* storage, bool made_in_capture) {
  auto [it, inserted] = graph->storages.try_emplace(storage);
  if (inserted) {
    storage->retain();
    it->second.made_in_capture = made_in_capture;
  }
}

uint64_t graph_device_bytes(const ctl_graph* graph) {
  uint64_t bytes = 0;
  for (const auto& [storage, info] : graph->storages) {
    if (info.made_in_capture && storage->references.load(std::memory_order_relaxed) == 1) bytes += storage->size_bytes;
  }
  return bytes;
}

void drop_unused_storages(ctl_graph* graph) {
  std::unordered_set<Storage*> used;
  for (const GraphNode& node : graph->nodes) {
    for (const auto* list : {&node.inputs, &node.outputs}) {
      for (const NodeOperand& operand : *list) {
        if (operand.storage) used.insert(operand.storage);
      }
    }
  }
  for (auto it = graph->storages.begin(); it != graph->storages.end();) {
    if (used.count(it->first)) {
      ++it;
      continue;
    }
    it->first->release();
    it = graph->storages.erase(it);
  }
}

namespace {

ctl_tensor_view bound(const NodeOperand& operand) {
  ctl_tensor_view view = operand.view;
  view.buffer = operand.storage->buffer;
  return view;
}

// A node's plugin call with its views bound to the storages' current buffers.
struct BoundCall {
  SmallVector<ctl_tensor_view, kInlineInputs> input_views;
  SmallVector<const ctl_tensor_view*, kInlineInputs> input_pointers;
  SmallVector<ctl_tensor_view, kInlineOutputs> output_views;
  SmallVector<const ctl_tensor_view*, kInlineOutputs> output_pointers;
  ctl_op_call call{};

  explicit BoundCall(const GraphNode& node) {
    input_views.assign(node.inputs.size(), ctl_tensor_view{});
    input_pointers.assign(node.inputs.size(), nullptr);
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      if (!node.inputs[i].storage) continue;
      input_views[i] = bound(node.inputs[i]);
      input_pointers[i] = &input_views[i];
    }
    output_views.assign(node.outputs.size(), ctl_tensor_view{});
    output_pointers.assign(node.outputs.size(), nullptr);
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (!node.outputs[i].storage) continue;
      output_views[i] = bound(node.outputs[i]);
      output_pointers[i] = &output_views[i];
    }
    call.struct_size = sizeof call;
    call.op = node.op;
    call.input_count = static_cast<uint32_t>(input_pointers.size());
    call.inputs = input_pointers.data();
    call.output_count = static_cast<uint32_t>(output_pointers.size());
    call.outputs = output_pointers.data();
    call.attrs = node.has_attrs ? static_cast<const void*>(&node.attrs) : nullptr;
  }
  BoundCall(const BoundCall&) = delete;
  BoundCall& operator=(const BoundCall&) = delete;
};

ctl_status* run_op_node(const GraphNode& node) {
  // A storage the program handed the graph may hold a fallback's result still on another
  // device (placement/lazy_move.h): its bytes come in before the node reads or writes it.
  for (const auto* operands : {&node.inputs, &node.outputs}) {
    for (const NodeOperand& operand : *operands) {
      if (operand.storage && operand.storage->pending.load(std::memory_order_acquire)) [[unlikely]] {
        CTL_RETURN_IF_ERROR(fetch_pending(operand.storage));
      }
    }
  }
  const BoundCall bound_call(node);
  return execute_call(node.device, bound_call.call, CallTensors{});
}

ctl_status* run_bytes_node(const GraphNode& node) {
  ctl_device* device = node.device;
  ctl_plugin_buffer* buffer = node.outputs[0].storage->buffer;
  if (node.byte_count == 0) return nullptr;
  std::lock_guard lock(device->stream_mutex);
  const auto begin = std::chrono::steady_clock::now();
  ctl_status* status = nullptr;
  if (node.kind == NodeKind::kWrite) {
    // The bytes live as long as the graph, which waits for its devices before it dies.
    status = device->api().buffer_write(device->stream, buffer, node.byte_offset, node.payload.data(), node.byte_count);
  } else if (device->api().buffer_fill) {
    status = device->api().buffer_fill(device->stream, buffer, node.byte_offset, node.byte_count, node.payload.data(),
                                       node.payload.size());
  } else {
    std::vector<uint8_t> bytes(node.byte_count);
    for (uint64_t i = 0; i < node.byte_count; ++i) bytes[i] = node.payload[i % node.payload.size()];
    status = device->api().buffer_write(device->stream, buffer, node.byte_offset, bytes.data(), node.byte_count);
    if (!status) status = device->api().stream_synchronize(device->stream);  // `bytes` dies on return
  }
  count_busy(device, begin);
  return status ? annotate(status, "graph node " + std::to_string(node.id) + " on " + device->label) : nullptr;
}

}  // namespace

bool node_supported(const GraphNode& node) {
  ctl_device* device = node.device;
  if (node.kind != NodeKind::kOp) return true;
  if (!device->api().op_supports) return false;  // unknown: keep what is known to run
  for (const auto* list : {&node.inputs, &node.outputs}) {
    for (const NodeOperand& operand : *list) {
      if (!operand.storage) continue;
      ctl_status* status = materialize(operand.storage);  // plugins check views against buffers
      if (status) {
        ctl_status_free(status);
        return false;
      }
    }
  }
  const BoundCall bound_call(node);
  ctl_status* status = device->api().op_supports(device->handle, &bound_call.call);
  ctl_status_free(status);
  return status == nullptr;
}

ctl_status* run_node(const GraphNode& node) {
  return node.kind == NodeKind::kOp ? run_op_node(node) : run_bytes_node(node);
}

}  // namespace catalyst

ctl_graph::~ctl_graph() {
  // Writes may still read the graph's bytes, and plugins free buffers at once: wait first.
  std::unordered_set<ctl_device*> devices;
  for (const catalyst::GraphNode& node : nodes) devices.insert(node.device);
  for (ctl_device* device : devices) ctl_status_free(catalyst::synchronize(device));
  for (auto& [storage, info] : storages) storage->release();
  magic = 0;
}
