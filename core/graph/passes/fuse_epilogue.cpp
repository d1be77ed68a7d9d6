// fuse_epilogue.cpp — matmul epilogue fusion: `matmul(a, b) + bias` and then relu become
// one matmul with the bias input and the activation attribute the op
// already has (abi/catalyst.h: out = activation(alpha * a @ b + bias)), so the product is
// written once instead of three times. The backward ops have no such attributes in the
// ABI, so only forward chains fuse.
//
// The bias must be the add's other operand with the same dtype, already broadcast to the
// product's shape (as the core normalises every elementwise input). Only f32 and f64
// products fuse: there the accumulator has the output's precision, so adding the bias in
// the epilogue rounds as the separate add did (exact on the CPU plugin). A bf16 or f16
// product is accumulated in f32 and rounded before a separate add, but not before an
// epilogue's: fusing it would change the bits, so it is left alone.
#include <cstring>

#include "graph/analysis.h"
#include "graph/passes/passes.h"

namespace catalyst {
namespace {

// The activations an epilogue takes. Only relu: max(0, x) is exact everywhere, while a
// plugin's epilogue gelu may use another approximation than its gelu op (the CPU plugin's
// does), and a graph must compute what the program would have computed eagerly.
ctl_activation activation_of(ctl_op_id op) {
  return op == CTL_OP_RELU ? CTL_ACTIVATION_RELU : CTL_ACTIVATION_NONE;
}

// The single node reading `storage` after node `after`, through the whole storage's view,
// when the storage is internal and written only by `after`; else SIZE_MAX.
size_t sole_reader(const ctl_graph& graph, const GraphUses& uses, Storage* storage, size_t after) {
  if (!is_internal(graph, storage)) return SIZE_MAX;
  const StorageUse& use = uses.use(storage);
  if (use.writers.size() != 1 || use.writers[0] != after || use.readers.size() != 1) return SIZE_MAX;
  const size_t reader = use.readers[0];
  return reader > after ? reader : SIZE_MAX;
}

bool written_between(const GraphUses& uses, Storage* storage, size_t from, size_t to) {
  for (size_t w : uses.use(storage).writers) {
    if (w > from && w < to) return true;
  }
  return false;
}

// Tries to take the node that reads matmul `m`'s result into it. Returns the fused node's
// index, or SIZE_MAX when nothing changed.
size_t fuse_one(ctl_graph* graph, size_t m) {
  const GraphNode& matmul = graph->nodes[m];
  if (matmul.kind != NodeKind::kOp || matmul.op != CTL_OP_MATMUL || !matmul.has_attrs) return SIZE_MAX;
  const ctl_matmul_attrs& attrs = matmul.attrs.matmul;
  if (attrs.beta != 0 || attrs.activation != CTL_ACTIVATION_NONE || matmul.outputs.size() != 1) return SIZE_MAX;
  const NodeOperand out = matmul.outputs[0];
  if (!out.storage || !covers_storage(out.view, out.storage)) return SIZE_MAX;
  if (out.view.dtype != CTL_DTYPE_F32 && out.view.dtype != CTL_DTYPE_F64) return SIZE_MAX;
  const GraphUses uses = analyze(*graph);
  const size_t r = sole_reader(*graph, uses, out.storage, m);
  if (r == SIZE_MAX) return SIZE_MAX;
  const GraphNode& next = graph->nodes[r];
  if (next.kind != NodeKind::kOp || next.outputs.size() != 1 || !next.outputs[0].storage) return SIZE_MAX;
  for (const NodeOperand& in : next.inputs) {
    if (in.storage == out.storage && !same_view(in.view, out.view)) return SIZE_MAX;  // a broadcast read
  }
  GraphNode fused = matmul;
  const bool has_bias = matmul.inputs.size() > 2 && matmul.inputs[2].storage;
  if (next.op == CTL_OP_ADD && !has_bias && next.inputs.size() == 2) {
    const NodeOperand& bias = next.inputs[next.inputs[0].storage == out.storage ? 1 : 0];
    if (bias.storage == out.storage || bias.view.dtype != out.view.dtype) return SIZE_MAX;
    fused.inputs.resize(3);
    fused.inputs[2] = bias;
  } else if (activation_of(next.op) != CTL_ACTIVATION_NONE && next.inputs.size() == 1) {
    fused.attrs.matmul.activation = activation_of(next.op);
  } else {
    return SIZE_MAX;
  }
  // The fused matmul runs where the consumer ran: what it reads must not change between.
  for (const NodeOperand& in : fused.inputs) {
    if (in.storage && written_between(uses, in.storage, m, r)) return SIZE_MAX;
  }
  fused.outputs = next.outputs;
  fused.merged.push_back(matmul.id);
  fused.id = next.id;
  if (!node_supported(fused)) return SIZE_MAX;
  graph->nodes[r] = std::move(fused);
  std::vector<bool> remove(graph->nodes.size(), false);
  remove[m] = true;
  erase_nodes(graph, remove);
  return r - 1;
}

}  // namespace

ctl_status* fuse_matmul_epilogues(ctl_graph* graph, uint64_t* out_changes) {
  uint64_t fused = 0;
  for (size_t m = 0; m < graph->nodes.size();) {
    size_t at = fuse_one(graph, m);
    if (at == SIZE_MAX) {
      ++m;
      continue;
    }
    // The fused matmul may take an activation next; position m now holds another node.
    for (++fused; (at = fuse_one(graph, at)) != SIZE_MAX;) ++fused;
  }
  drop_unused_storages(graph);
  *out_changes = fused;
  return nullptr;
}

}  // namespace catalyst
