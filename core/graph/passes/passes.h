// passes.h — the graph passes ctl_graph_optimize runs, by name. Each lives in its own file
// and reports how many nodes it removed, merged or rewrote; docs/graphs.md describes them.
#pragma once

#include <cstdint>
#include <string_view>

#include "graph/graph.h"

namespace catalyst {

struct GraphPass {
  const char* name;
  ctl_status* (*run)(ctl_graph* graph, uint64_t* out_changes);
};

ctl_status* eliminate_dead_nodes(ctl_graph* graph, uint64_t* out_changes);             // dce.cpp
ctl_status* fold_constants(ctl_graph* graph, uint64_t* out_changes);                   // fold.cpp
ctl_status* eliminate_common_subexpressions(ctl_graph* graph, uint64_t* out_changes);  // cse.cpp
ctl_status* fuse_matmul_epilogues(ctl_graph* graph, uint64_t* out_changes);            // fuse_epilogue.cpp
ctl_status* fuse_elementwise_chains(ctl_graph* graph, uint64_t* out_changes);          // fuse_elementwise.cpp
ctl_status* plan_memory(ctl_graph* graph, uint64_t* out_changes);                      // plan_memory.cpp

// Every pass in the default order.
const GraphPass* graph_passes(size_t* out_count);
// The pass called `name`, or NULL.
const GraphPass* find_graph_pass(std::string_view name);

}  // namespace catalyst
