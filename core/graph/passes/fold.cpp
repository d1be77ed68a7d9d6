// fold.cpp — constant folding: work whose result is the same at every launch runs once,
// now, and leaves the graph. A node is constant when all it reads is constant and all it
// writes is internal (analysis.h); a storage is constant when it is internal and every node
// that writes it is constant. Zero fills, host writes of masks and position ids, arange,
// and whatever is computed from them only, qualify; anything that reads a program's tensor
// (parameters, inputs) does not, since the program may change it between launches.
//
// The folded nodes run on their devices exactly as a launch would run them, so the values
// are bit for bit the ones the unoptimised graph computes; their storages are then pinned:
// later passes may neither drop nor share them.
#include <unordered_set>

#include "graph/analysis.h"
#include "graph/capture.h"
#include "graph/passes/passes.h"
#include "runtime.h"
#include "status.h"

namespace catalyst {

ctl_status* fold_constants(ctl_graph* graph, uint64_t* out_changes) {
  const GraphUses uses = analyze(*graph);
  const size_t n = graph->nodes.size();
  std::vector<bool> constant(n, false);
  // Constant as node `reader` sees it: every writer constant and earlier than the reader
  // (a write after the read would carry a value from one launch into the next).
  auto storage_constant = [&](Storage* storage, size_t reader) {
    if (!is_internal(*graph, storage)) return false;
    const StorageUse& use = uses.use(storage);
    if (use.writers.empty()) return false;  // read before anything wrote it
    for (size_t w : use.writers) {
      if (!constant[w] || w >= reader) return false;
    }
    return true;
  };
  // Grow the constant set until it stops growing: a node joins when its outputs are
  // internal and every storage it reads is written by constant nodes only. A storage that
  // is also written by a node outside the set keeps its readers out.
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t i = 0; i < n; ++i) {
      if (constant[i]) continue;
      const GraphNode& node = graph->nodes[i];
      if (reads_outputs(node) || node.outputs.empty()) continue;
      bool ok = true;
      for (const NodeOperand& out : node.outputs) {
        if (out.storage && !is_internal(*graph, out.storage)) ok = false;
      }
      for (const NodeOperand& in : node.inputs) {
        if (!ok) break;
        if (in.storage) ok = storage_constant(in.storage, i);
      }
      if (ok) {
        constant[i] = true;
        grew = true;
      }
    }
  }
  // A constant node whose output is also written by a non-constant node must stay (the
  // storage is not constant), and so must the constant nodes that read it: shrink until
  // stable.
  for (bool shrank = true; shrank;) {
    shrank = false;
    for (size_t i = 0; i < n; ++i) {
      if (!constant[i]) continue;
      const GraphNode& node = graph->nodes[i];
      bool ok = true;
      for (const NodeOperand& out : node.outputs) ok = ok && (!out.storage || storage_constant(out.storage, n));
      for (const NodeOperand& in : node.inputs) ok = ok && (!in.storage || storage_constant(in.storage, i));
      if (!ok) {
        constant[i] = false;
        shrank = true;
      }
    }
  }
  uint64_t folded = 0;
  std::unordered_set<ctl_device*> devices;
  for (size_t i = 0; i < n; ++i) {
    if (!constant[i]) continue;
    const GraphNode& node = graph->nodes[i];
    for (const auto* list : {&node.inputs, &node.outputs}) {
      for (const NodeOperand& operand : *list) {
        if (operand.storage) CTL_RETURN_IF_ERROR(materialize(operand.storage));
      }
    }
    CTL_RETURN_IF_ERROR(annotate(run_node(node), "folding a constant"));
    devices.insert(node.device);
    for (const NodeOperand& out : node.outputs) {
      if (out.storage) graph->storages[out.storage].pinned = true;
    }
    ++folded;
  }
  for (ctl_device* device : devices) CTL_RETURN_IF_ERROR(synchronize(device));
  erase_nodes(graph, constant);
  *out_changes = folded;
  return nullptr;
}

}  // namespace catalyst
