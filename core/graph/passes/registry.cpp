// registry.cpp — the passes by name, in the order ctl_graph_optimize runs them by default:
// first what removes work (dead nodes, constants, repeats), then what merges it (fusion),
// last memory planning, which needs the final list of nodes.
#include "graph/passes/passes.h"

namespace catalyst {
namespace {

constexpr GraphPass kPasses[] = {
    {"dce", eliminate_dead_nodes},
    {"fold", fold_constants},
    {"cse", eliminate_common_subexpressions},
    {"fuse_epilogue", fuse_matmul_epilogues},
    {"fuse_elementwise", fuse_elementwise_chains},
    {"plan_memory", plan_memory},
};

}  // namespace

const GraphPass* graph_passes(size_t* out_count) {
  *out_count = sizeof kPasses / sizeof kPasses[0];
  return kPasses;
}

const GraphPass* find_graph_pass(std::string_view name) {
  for (const GraphPass& pass : kPasses) {
    if (name == pass.name) return &pass;
  }
  return nullptr;
}

}  // namespace catalyst
