// fuse_elementwise.cpp — elementwise fusion: a float elementwise op whose result feeds one
// other elementwise op and nothing else is merged into it, as one CTL_OP_FUSED_ELEMENTWISE
// node running a small program per element (abi/catalyst.h). Chains grow one producer at a
// time, so `a * b + c` followed by `gelu` becomes one node of three instructions, reading
// a, b and c once and writing one result instead of three.
//
// Bit-exact where the plugin computes each instruction as its separate op does (the op's
// contract: every intermediate is rounded to the dtype). A device whose plugin does not
// claim a fused call keeps its separate ops; each such refusal is counted in the graph's
// stats (unfused_nodes), never hidden.
#include <cstring>

#include "graph/analysis.h"
#include "graph/passes/passes.h"

namespace catalyst {
namespace {

static_assert(sizeof(PreparedOp::Attrs) >= sizeof(ctl_fused_elementwise_attrs),
              "op_schema.h's PreparedOp::Attrs must hold ctl_fused_elementwise_attrs");

bool float_dtype(ctl_dtype dtype) {
  return dtype == CTL_DTYPE_F32 || dtype == CTL_DTYPE_F64 || dtype == CTL_DTYPE_F16 || dtype == CTL_DTYPE_BF16;
}

// 1 or 2 for an op a fused program may hold, else 0.
uint32_t instruction_arity(ctl_op_id op) {
  const int id = static_cast<int>(op);
  if (id >= CTL_OP_NEG && id <= CTL_OP_RECIPROCAL) return 1;
  if (id >= CTL_OP_ADD && id <= CTL_OP_MINIMUM) return 2;
  if (op == CTL_OP_GELU_BACKWARD || op == CTL_OP_GELU_TANH_BACKWARD) return 2;
  return 0;
}

struct Program {
  std::vector<NodeOperand> inputs;
  std::vector<ctl_fused_instruction> code;
};

// The node as a program, or false when it is not a fusable elementwise node.
bool program_of(const GraphNode& node, Program* out) {
  if (node.kind != NodeKind::kOp || node.outputs.size() != 1 || !node.outputs[0].storage) return false;
  const ctl_dtype dtype = node.outputs[0].view.dtype;
  if (!float_dtype(dtype)) return false;
  for (const NodeOperand& in : node.inputs) {
    if (!in.storage || in.view.dtype != dtype) return false;
  }
  out->inputs = node.inputs;
  out->code.clear();
  if (node.op == CTL_OP_FUSED_ELEMENTWISE) {
    ctl_fused_elementwise_attrs attrs;
    std::memcpy(&attrs, &node.attrs, sizeof attrs);
    out->code.assign(attrs.program, attrs.program + attrs.instruction_count);
    return true;
  }
  const uint32_t arity = instruction_arity(node.op);
  if (arity == 0 || arity != node.inputs.size()) return false;
  out->code.push_back({node.op, 0, static_cast<uint16_t>(arity == 2 ? 1 : 0)});
  return true;
}

size_t index_of(std::vector<NodeOperand>& inputs, const NodeOperand& operand) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].storage == operand.storage && same_view(inputs[i].view, operand.view)) return i;
  }
  inputs.push_back(operand);
  return inputs.size() - 1;
}

// The consumer's program with the producer's computed in front of it, reading `merged`
// (the producer's result) through the producer's last register. False past the op's
// limits.
bool merge(const Program& producer, const Program& consumer, Storage* merged, Program* out) {
  out->inputs.clear();
  std::vector<size_t> producer_inputs, consumer_inputs;
  for (const NodeOperand& in : producer.inputs) producer_inputs.push_back(index_of(out->inputs, in));
  for (const NodeOperand& in : consumer.inputs) {
    consumer_inputs.push_back(in.storage == merged ? SIZE_MAX : index_of(out->inputs, in));
  }
  const size_t input_count = out->inputs.size();
  if (input_count > CTL_FUSED_MAX_INPUTS || producer.code.size() + consumer.code.size() > CTL_FUSED_MAX_INSTRUCTIONS) {
    return false;
  }
  auto remap = [&](uint16_t reg, const std::vector<size_t>& inputs, size_t code_base) -> uint16_t {
    if (reg < inputs.size()) return static_cast<uint16_t>(inputs[reg]);
    return static_cast<uint16_t>(input_count + code_base + (reg - inputs.size()));
  };
  const uint16_t producer_result = static_cast<uint16_t>(input_count + producer.code.size() - 1);
  out->code.clear();
  for (const ctl_fused_instruction& ins : producer.code) {
    out->code.push_back({ins.op, remap(ins.a, producer_inputs, 0), remap(ins.b, producer_inputs, 0)});
  }
  auto consumer_reg = [&](uint16_t reg) -> uint16_t {
    if (reg < consumer_inputs.size() && consumer_inputs[reg] == SIZE_MAX) return producer_result;
    return remap(reg, consumer_inputs, producer.code.size());
  };
  for (const ctl_fused_instruction& ins : consumer.code) {
    const bool binary = instruction_arity(ins.op) == 2;
    out->code.push_back({ins.op, consumer_reg(ins.a), binary ? consumer_reg(ins.b) : uint16_t{0}});
  }
  return true;
}

GraphNode fused_node(const GraphNode& consumer, const GraphNode& producer, Program program) {
  GraphNode node;
  node.id = consumer.id;
  node.kind = NodeKind::kOp;
  node.device = consumer.device;
  node.op = CTL_OP_FUSED_ELEMENTWISE;
  ctl_fused_elementwise_attrs attrs{};
  attrs.struct_size = CTL_FUSED_ELEMENTWISE_ATTRS_STRUCT_SIZE;
  attrs.instruction_count = static_cast<uint32_t>(program.code.size());
  std::copy(program.code.begin(), program.code.end(), attrs.program);
  std::memcpy(&node.attrs, &attrs, sizeof attrs);
  node.has_attrs = true;
  node.inputs = std::move(program.inputs);
  node.outputs = consumer.outputs;
  for (const GraphNode* part : {&producer, &consumer}) {
    node.merged.insert(node.merged.end(), part->merged.begin(), part->merged.end());
    if (part->op != CTL_OP_FUSED_ELEMENTWISE) node.merged.push_back(part->id);
  }
  return node;
}

// Whether any node strictly between `from` and `to` writes what `node` reads.
bool inputs_written_between(const GraphUses& uses, const GraphNode& node, size_t from, size_t to) {
  for (const NodeOperand& in : node.inputs) {
    for (size_t w : uses.use(in.storage).writers) {
      if (w > from && w < to) return true;
    }
  }
  return false;
}

// Tries to merge one producer into node `c`; true when it did (the graph changed).
bool fuse_one(ctl_graph* graph, const GraphUses& uses, size_t c) {
  Program consumer;
  if (!program_of(graph->nodes[c], &consumer)) return false;
  for (const NodeOperand& in : consumer.inputs) {
    Storage* s = in.storage;
    if (!is_internal(*graph, s)) continue;
    const StorageUse& use = uses.use(s);
    if (use.writers.size() != 1 || use.writers[0] >= c) continue;
    if (use.readers.size() != 1 || use.readers[0] != c) continue;
    const size_t p = use.writers[0];
    const GraphNode& producer_node = graph->nodes[p];
    Program producer;
    if (!program_of(producer_node, &producer) || producer_node.outputs[0].storage != s) continue;
    const NodeOperand& produced = producer_node.outputs[0];
    if (!covers_storage(produced.view, s) || produced.view.dtype != in.view.dtype) continue;
    bool plain_reads = true;  // every read of s is the producer's own view: no broadcast
    for (const NodeOperand& other : consumer.inputs) {
      if (other.storage == s && !same_view(other.view, produced.view)) plain_reads = false;
    }
    if (!plain_reads || inputs_written_between(uses, producer_node, p, c)) continue;
    Program merged;
    if (!merge(producer, consumer, s, &merged)) continue;
    GraphNode node = fused_node(graph->nodes[c], producer_node, std::move(merged));
    if (!node_supported(node)) {
      ++graph->unfused_groups;
      continue;
    }
    graph->nodes[c] = std::move(node);
    std::vector<bool> remove(graph->nodes.size(), false);
    remove[p] = true;
    erase_nodes(graph, remove);
    return true;
  }
  return false;
}

}  // namespace

ctl_status* fuse_elementwise_chains(ctl_graph* graph, uint64_t* out_changes) {
  uint64_t fused = 0;
  graph->unfused_groups = 0;
  for (size_t c = 0; c < graph->nodes.size(); ++c) {
    // Merge producers into node c until none is left; each merge removes one earlier node,
    // so c moves down by one.
    for (;;) {
      const GraphUses uses = analyze(*graph);
      if (!fuse_one(graph, uses, c)) break;
      --c;
      ++fused;
    }
  }
  drop_unused_storages(graph);
  *out_changes = fused;
  return nullptr;
}

}  // namespace catalyst
