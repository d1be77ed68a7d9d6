// dce.cpp — dead-code elimination: a node whose every output is an internal storage
// (analysis.h) that no node reads is removed, repeatedly, since removing a node can leave
// its inputs' producers unread in turn. Autograd computes gradients for every input of a
// recorded op, including ones nothing needs (the token ids' embedding lookup has no use for
// a gradient of the ids); this pass drops such work. Exact: what remains computes the same.
#include "graph/analysis.h"
#include "graph/passes/passes.h"

namespace catalyst {

ctl_status* eliminate_dead_nodes(ctl_graph* graph, uint64_t* out_changes) {
  uint64_t removed = 0;
  for (bool changed = true; changed;) {
    changed = false;
    const GraphUses uses = analyze(*graph);
    std::vector<bool> remove(graph->nodes.size(), false);
    for (size_t i = 0; i < graph->nodes.size(); ++i) {
      const GraphNode& node = graph->nodes[i];
      bool dead = !node.outputs.empty();
      for (const NodeOperand& out : node.outputs) {
        if (!out.storage) continue;
        const StorageUse& use = uses.use(out.storage);
        const bool read_by_another = use.readers.size() > (reads_outputs(node) ? 1u : 0u);
        if (!is_internal(*graph, out.storage) || read_by_another) {
          dead = false;
          break;
        }
      }
      if (dead) {
        remove[i] = true;
        changed = true;
        ++removed;
      }
    }
    if (changed) erase_nodes(graph, remove);
  }
  drop_unused_storages(graph);
  *out_changes = removed;
  return nullptr;
}

}  // namespace catalyst
