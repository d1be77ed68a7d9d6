// analysis.cpp — see analysis.h.
#include "graph/analysis.h"

#include "catalyst/sdk/view.hpp"

namespace catalyst {

const StorageUse& GraphUses::use(Storage* storage) const {
  static const StorageUse kNone;
  const auto it = of.find(storage);
  return it == of.end() ? kNone : it->second;
}

bool reads_outputs(const GraphNode& node) {
  return node.kind == NodeKind::kOp && (node.op == CTL_OP_ADAMW_STEP || node.op == CTL_OP_SGD_STEP);
}

namespace {

void add_once(std::vector<size_t>& list, size_t index) {
  if (list.empty() || list.back() != index) list.push_back(index);
}

}  // namespace

GraphUses analyze(const ctl_graph& graph) {
  GraphUses uses;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const GraphNode& node = graph.nodes[i];
    for (const NodeOperand& operand : node.inputs) {
      if (operand.storage) add_once(uses.of[operand.storage].readers, i);
    }
    for (const NodeOperand& operand : node.outputs) {
      if (!operand.storage) continue;
      StorageUse& use = uses.of[operand.storage];
      if (reads_outputs(node)) add_once(use.readers, i);
      add_once(use.writers, i);
    }
  }
  return uses;
}

bool is_internal(const ctl_graph& graph, Storage* storage) {
  const auto it = graph.storages.find(storage);
  if (it == graph.storages.end()) return false;
  return it->second.made_in_capture && !it->second.pinned && storage->references.load(std::memory_order_acquire) == 1;
}

bool same_view(const ctl_tensor_view& a, const ctl_tensor_view& b) {
  if (a.byte_offset != b.byte_offset || a.dtype != b.dtype || a.rank != b.rank) return false;
  for (uint32_t d = 0; d < a.rank; ++d) {
    if (a.shape[d] != b.shape[d] || a.strides[d] != b.strides[d]) return false;
  }
  return true;
}

bool covers_storage(const ctl_tensor_view& view, const Storage* storage) {
  if (view.byte_offset != 0) return false;
  int64_t expected = 1;
  for (uint32_t d = view.rank; d-- > 0;) {
    if (view.shape[d] != 1 && view.strides[d] != expected) return false;
    expected *= view.shape[d];
  }
  return static_cast<uint64_t>(expected) * sdk::dtype_size(view.dtype) == storage->size_bytes;
}

void erase_nodes(ctl_graph* graph, const std::vector<bool>& remove) {
  size_t kept = 0;
  for (size_t i = 0; i < graph->nodes.size(); ++i) {
    if (remove[i]) continue;
    if (kept != i) graph->nodes[kept] = std::move(graph->nodes[i]);
    ++kept;
  }
  graph->nodes.resize(kept);
}

}  // namespace catalyst
