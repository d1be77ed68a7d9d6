// analysis.h — who reads and writes each storage in a graph, and which storages a pass may
// change: the facts every pass (passes/) starts from.
#pragma once

#include <unordered_map>
#include <vector>

#include "graph/graph.h"

namespace catalyst {

struct StorageUse {
  std::vector<size_t> readers;  // node indexes in order, each once
  std::vector<size_t> writers;
};

struct GraphUses {
  std::unordered_map<Storage*, StorageUse> of;

  const StorageUse& use(Storage* storage) const;
};

// Whether the node reads its outputs too (the optimizer steps update them in place).
bool reads_outputs(const GraphNode& node);

GraphUses analyze(const ctl_graph& graph);

// A storage the graph alone holds, made during the capture and not pinned: no program can
// see it, so passes may drop, merge or share it.
bool is_internal(const ctl_graph& graph, Storage* storage);

// Whether `a` and `b` describe the same elements (the buffer pointer aside).
bool same_view(const ctl_tensor_view& a, const ctl_tensor_view& b);

// Whether `view` covers the whole of `storage` in row-major order from its start.
bool covers_storage(const ctl_tensor_view& view, const Storage* storage);

// Removes the nodes whose flag is set, keeping the order of the rest.
void erase_nodes(ctl_graph* graph, const std::vector<bool>& remove);

}  // namespace catalyst
