// dot.cpp — a graph as Graphviz DOT (ctl_graph_write_dot, `catalyst train-gpt --dump-graph`):
// a box per node with its op, output shape and dtype, and device; an ellipse per tensor the
// program owns (parameters, inputs, gradients) that a node reads before any node writes
// it; an edge from the last writer of each buffer a node reads. Fused nodes list the
// captured nodes they replace.
#include <sstream>
#include <unordered_map>

#include "graph/graph.h"
#include "op_schema.h"
#include "runtime.h"

namespace catalyst {
namespace {

std::string node_label(const GraphNode& node) {
  std::ostringstream label;
  label << "#" << node.id << " ";
  if (node.kind == NodeKind::kFill) {
    label << "fill " << node.byte_count << " B";
  } else if (node.kind == NodeKind::kWrite) {
    label << "host write " << node.byte_count << " B";
  } else {
    label << op_name(node.op);
    if (!node.merged.empty())
      label << " (" << node.merged.size() + (node.op == CTL_OP_FUSED_ELEMENTWISE ? 0 : 1) << " ops)";
    for (const NodeOperand& out : node.outputs) {
      if (!out.storage) continue;
      label << "\\n" << ctl_dtype_name(out.view.dtype) << shape_text(out.view.shape, out.view.rank);
      break;
    }
  }
  label << "\\n" << node.device->label;
  return label.str();
}

}  // namespace

std::string graph_dot(const ctl_graph* graph, const char* title) {
  std::ostringstream dot;
  dot << "digraph catalyst_graph {\n";
  dot << "  label=\"" << title << ": " << graph->nodes.size() << " nodes\";\n  labelloc=t;\n";
  dot << "  node [shape=box, fontname=\"monospace\", fontsize=10];\n";
  std::unordered_map<const Storage*, size_t> last_writer;
  std::unordered_map<const Storage*, size_t> external;  // program tensors read before written
  for (size_t i = 0; i < graph->nodes.size(); ++i) {
    const GraphNode& node = graph->nodes[i];
    const bool fused = node.kind == NodeKind::kOp && !node.merged.empty();
    dot << "  n" << i << " [label=\"" << node_label(node) << "\""
        << (fused ? ", style=filled, fillcolor=lightblue" : "") << "];\n";
    for (const NodeOperand& in : node.inputs) {
      if (!in.storage) continue;
      const auto w = last_writer.find(in.storage);
      if (w != last_writer.end()) {
        dot << "  n" << w->second << " -> n" << i << ";\n";
        continue;
      }
      auto [e, added] = external.try_emplace(in.storage, external.size());
      if (added) {
        dot << "  t" << e->second << " [shape=ellipse, label=\"" << ctl_dtype_name(in.view.dtype)
            << shape_text(in.view.shape, in.view.rank) << "\"];\n";
      }
      dot << "  t" << e->second << " -> n" << i << ";\n";
    }
    for (const NodeOperand& out : node.outputs) {
      if (out.storage) last_writer[out.storage] = i;
    }
  }
  dot << "}\n";
  return dot.str();
}

}  // namespace catalyst
