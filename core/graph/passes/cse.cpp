// cse.cpp — common-subexpression elimination: a node that repeats an earlier one (same
// device, op, attributes and input views) is dropped and its readers read the earlier
// node's outputs instead. It fires where a program computes one thing twice, e.g. the same
// cast or transpose of a weight for two uses. Exact: the result is the same bits.
//
// Safe only when neither result can change between the two nodes and after: both nodes'
// outputs are internal storages written by that node alone, covered whole, and nothing
// between the two writes what the first one read.
#include <cstring>

#include "graph/analysis.h"
#include "graph/passes/passes.h"

namespace catalyst {
namespace {

bool same_operands(const std::vector<NodeOperand>& a, const std::vector<NodeOperand>& b, bool compare_storage) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].storage != !b[i].storage) return false;
    if (!a[i].storage) continue;
    if (compare_storage && a[i].storage != b[i].storage) return false;
    if (!same_view(a[i].view, b[i].view)) return false;
  }
  return true;
}

bool repeats(const GraphNode& earlier, const GraphNode& later) {
  if (earlier.kind != later.kind || earlier.device != later.device) return false;
  if (earlier.kind == NodeKind::kOp) {
    if (earlier.op != later.op || earlier.has_attrs != later.has_attrs) return false;
    if (earlier.has_attrs && std::memcmp(&earlier.attrs, &later.attrs, sizeof earlier.attrs) != 0) return false;
  } else if (earlier.payload != later.payload || earlier.byte_count != later.byte_count) {
    return false;
  }
  return same_operands(earlier.inputs, later.inputs, true) && same_operands(earlier.outputs, later.outputs, false);
}

// The node's outputs are internal, written by it alone, and covered whole.
bool sole_fresh_outputs(const ctl_graph& graph, const GraphUses& uses, const GraphNode& node, size_t index) {
  if (reads_outputs(node) || node.outputs.empty()) return false;
  for (const NodeOperand& out : node.outputs) {
    if (!out.storage) continue;
    if (!is_internal(graph, out.storage) || !covers_storage(out.view, out.storage)) return false;
    const StorageUse& use = uses.use(out.storage);
    if (use.writers.size() != 1 || use.writers[0] != index) return false;
  }
  return true;
}

bool written_between(const GraphUses& uses, const GraphNode& node, size_t from, size_t to) {
  for (const NodeOperand& in : node.inputs) {
    if (!in.storage) continue;
    for (size_t w : uses.use(in.storage).writers) {
      if (w > from && w < to) return true;
    }
  }
  return false;
}

}  // namespace

ctl_status* eliminate_common_subexpressions(ctl_graph* graph, uint64_t* out_changes) {
  uint64_t merged = 0;
  const GraphUses uses = analyze(*graph);
  std::vector<bool> remove(graph->nodes.size(), false);
  // Candidates by op, so the search stays near-linear on a long step.
  std::unordered_map<uint64_t, std::vector<size_t>> seen;
  for (size_t j = 0; j < graph->nodes.size(); ++j) {
    GraphNode& later = graph->nodes[j];
    if (!sole_fresh_outputs(*graph, uses, later, j)) continue;
    const uint64_t key = (static_cast<uint64_t>(later.kind) << 32) | static_cast<uint32_t>(later.op);
    std::vector<size_t>& candidates = seen[key];
    bool replaced = false;
    for (size_t i : candidates) {
      const GraphNode& earlier = graph->nodes[i];
      if (remove[i] || !repeats(earlier, later) || written_between(uses, earlier, i, j)) continue;
      // Readers of the later outputs read the earlier ones from here on.
      for (size_t k = 0; k < later.outputs.size(); ++k) {
        Storage* from = later.outputs[k].storage;
        Storage* to = earlier.outputs[k].storage;
        if (!from) continue;
        for (size_t r = j + 1; r < graph->nodes.size(); ++r) {
          for (NodeOperand& in : graph->nodes[r].inputs) {
            if (in.storage == from) in.storage = to;
          }
        }
      }
      remove[j] = true;
      replaced = true;
      ++merged;
      break;
    }
    if (!replaced) candidates.push_back(j);
  }
  erase_nodes(graph, remove);
  drop_unused_storages(graph);
  *out_changes = merged;
  return nullptr;
}

}  // namespace catalyst
