// graph_api.cpp — the C entry points of graphs (abi/catalyst.h, "Graphs"): begin and end a
// capture, optimise with named passes, launch, update a node's attributes, and report.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "c_guard.h"
#include "enum_value.h"
#include "graph/capture.h"
#include "graph/graph.h"
#include "graph/passes/passes.h"
#include "op_schema.h"
#include "runtime.h"
#include "status.h"

namespace catalyst {
namespace {

std::vector<std::string> split_names(const std::string& text) {
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const size_t end = comma == std::string::npos ? text.size() : comma;
    std::string name = text.substr(start, end - start);
    while (!name.empty() && name.front() == ' ') name.erase(name.begin());
    while (!name.empty() && name.back() == ' ') name.pop_back();
    if (!name.empty()) names.push_back(name);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return names;
}

std::string known_passes() {
  size_t count = 0;
  const GraphPass* passes = graph_passes(&count);
  std::string list;
  for (size_t i = 0; i < count; ++i) list += (i ? ", " : "") + std::string(passes[i].name);
  return list;
}

// The passes `spec` names (see ctl_graph_options.passes); `source` names where it came from.
ctl_status* parse_passes(const std::string& spec, const char* source, std::vector<const GraphPass*>* out) {
  size_t count = 0;
  const GraphPass* all = graph_passes(&count);
  const std::vector<std::string> names = split_names(spec);
  bool explicit_list = false;
  for (const std::string& name : names) explicit_list |= name[0] != '-' && name != "none";
  if (!explicit_list && !(names.size() == 1 && names[0] == "none")) {
    for (size_t i = 0; i < count; ++i) out->push_back(&all[i]);
  }
  for (const std::string& name : names) {
    if (name == "none") continue;
    const bool remove = name[0] == '-';
    const GraphPass* pass = find_graph_pass(remove ? std::string_view(name).substr(1) : std::string_view(name));
    if (!pass) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT,
                         "%s names the graph pass '%s', which does not exist; the passes are %s", source, name.c_str(),
                         known_passes().c_str());
    }
    if (remove) {
      out->erase(std::remove(out->begin(), out->end(), pass), out->end());
    } else {
      out->push_back(pass);
    }
  }
  return nullptr;
}

// Buffers for the storages whose buffers were dropped during the capture and that no pass
// moved into an arena.
ctl_status* materialize_all(ctl_graph* graph) {
  if (graph->materialized) return nullptr;
  for (auto& [storage, info] : graph->storages) CTL_RETURN_IF_ERROR(materialize(storage));
  graph->materialized = true;
  return nullptr;
}

ctl_status* check_not_capturing(const ctl_graph* graph, const char* what) {
  if (t_capture && t_capture->runtime == graph->runtime) {
    return make_status(CTL_STATUS_FAILED_PRECONDITION,
                       "%s: this thread is capturing a graph on the graph's runtime; end the capture first", what);
  }
  return nullptr;
}

// A tensor over an operand's storage with the operand's view, for re-checking a call.
ctl_tensor* tensor_of(const NodeOperand& operand) {
  if (!operand.storage) return nullptr;
  Layout layout;
  layout.dtype = operand.view.dtype;
  layout.rank = operand.view.rank;
  for (uint32_t d = 0; d < layout.rank; ++d) {
    layout.shape[d] = operand.view.shape[d];
    layout.strides[d] = operand.view.strides[d];
  }
  layout.offset = static_cast<int64_t>(operand.view.byte_offset / ctl_dtype_size(layout.dtype));
  return make_view(operand.storage, layout);
}

ctl_status* set_node_attrs(ctl_graph* graph, uint64_t id, const void* attrs) {
  GraphNode* node = nullptr;
  for (GraphNode& candidate : graph->nodes) {
    if (candidate.id == id && candidate.merged.empty()) node = &candidate;
  }
  if (!node) {
    return make_status(CTL_STATUS_NOT_FOUND,
                       "the graph has no node %llu (ids count captured nodes; a pass may have "
                       "removed or fused it)",
                       static_cast<unsigned long long>(id));
  }
  if (node->kind != NodeKind::kOp ||
      !(node->op == CTL_OP_ADAMW_STEP || node->op == CTL_OP_SGD_STEP || node->op == CTL_OP_FILL)) {
    return make_status(
        CTL_STATUS_INVALID_ARGUMENT, "node %llu is %s; only adamw_step, sgd_step and fill nodes take new attributes",
        static_cast<unsigned long long>(id), node->kind == NodeKind::kOp ? op_name(node->op) : "a fill or host write");
  }
  // Check the new attributes exactly as the op checks them, on the node's own tensors.
  std::vector<ctl_tensor*> inputs, outputs;
  auto release = [&] {
    for (ctl_tensor* t : inputs) ctl_tensor_release(t);
    for (ctl_tensor* t : outputs) ctl_tensor_release(t);
  };
  for (const NodeOperand& in : node->inputs) inputs.push_back(tensor_of(in));
  for (const NodeOperand& out : node->outputs) outputs.push_back(tensor_of(out));
  PreparedOp prepared;
  ctl_status* status =
      prepare_op(node->op, inputs.size(), inputs.data(), attrs, outputs.size(), outputs.data(), false, &prepared);
  release();
  if (status) return annotate(status, "graph node " + std::to_string(id));
  node->attrs = prepared.attrs;
  node->has_attrs = prepared.has_attrs;
  return nullptr;
}

ctl_status* optimize(ctl_graph* graph, const ctl_graph_options* options) {
  CTL_RETURN_IF_ERROR(check_not_capturing(graph, "ctl_graph_optimize"));
  if (graph->optimized) {
    return make_status(CTL_STATUS_FAILED_PRECONDITION,
                       "the graph is already optimised; capture again to optimise anew");
  }
  if (graph->launched.load()) {
    return make_status(CTL_STATUS_FAILED_PRECONDITION,
                       "the graph has been launched; optimise it before its first ctl_graph_launch");
  }
  const char* spec = nullptr;
  const char* source = "ctl_graph_options.passes";
  if (options) {
    CTL_CHECK_ARG(options->struct_size >= CTL_GRAPH_OPTIONS_STRUCT_SIZE,
                  "options->struct_size is %zu; set it to CTL_GRAPH_OPTIONS_STRUCT_SIZE", options->struct_size);
    spec = options->passes;
  }
  if (!spec) {
    spec = std::getenv("CATALYST_GRAPH_PASSES");
    source = "CATALYST_GRAPH_PASSES";
  }
  std::vector<const GraphPass*> passes;
  CTL_RETURN_IF_ERROR(parse_passes(spec ? spec : "", source, &passes));
  graph->captured_dot = graph_dot(graph, "captured");
  graph->captured_bytes = graph_device_bytes(graph);
  graph->optimized = true;
  for (const GraphPass* pass : passes) {
    PassRecord record;
    record.name = pass->name;
    record.nodes_before = graph->nodes.size();
    record.bytes_before = graph_device_bytes(graph);
    CTL_RETURN_IF_ERROR(annotate(pass->run(graph, &record.changes), std::string("graph pass ") + pass->name));
    record.nodes_after = graph->nodes.size();
    record.bytes_after = graph_device_bytes(graph);
    graph->passes.push_back(record);
    graph->materialized = false;  // a pass may have added storages (an arena has its buffer)
    graph->runtime->logger.printf(
        CTL_LOG_DEBUG, "graph pass %s: %llu -> %llu nodes, %llu changes, %llu -> %llu bytes", pass->name,
        static_cast<unsigned long long>(record.nodes_before), static_cast<unsigned long long>(record.nodes_after),
        static_cast<unsigned long long>(record.changes), static_cast<unsigned long long>(record.bytes_before),
        static_cast<unsigned long long>(record.bytes_after));
  }
  return nullptr;
}

ctl_status* launch(ctl_graph* graph) {
  CTL_RETURN_IF_ERROR(check_not_capturing(graph, "ctl_graph_launch"));
  CTL_RETURN_IF_ERROR(materialize_all(graph));
  graph->launched.store(true);
  for (const GraphNode& node : graph->nodes) {
    if (ctl_status* status = run_node(node)) {
      return annotate(status, "graph launch, node " + std::to_string(node.id));
    }
  }
  graph->runs.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

}  // namespace
}  // namespace catalyst

using namespace catalyst;

extern "C" {

CTL_EXPORT ctl_status* ctl_runtime_begin_capture(ctl_runtime* runtime) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_runtime(runtime, "runtime"));
    if (t_capture) {
      return make_status(CTL_STATUS_FAILED_PRECONDITION,
                         "this thread is already capturing a graph%s; end that capture first",
                         t_capture->runtime == runtime ? " on this runtime" : " on another runtime");
    }
    auto capture = std::make_unique<GraphCapture>();
    auto* graph = new ctl_graph;
    graph->runtime = runtime;
    ctl_runtime_retain(runtime);
    capture->runtime = runtime;
    capture->graph = graph;
    t_capture = capture.release();
    return nullptr;
  });
}

CTL_EXPORT ctl_status* ctl_runtime_end_capture(ctl_runtime* runtime, ctl_graph** out_graph) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_runtime(runtime, "runtime"));
    CTL_CHECK_ARG(out_graph, "argument 'out_graph' is NULL");
    if (!t_capture || t_capture->runtime != runtime) {
      return make_status(CTL_STATUS_FAILED_PRECONDITION,
                         "this thread is not capturing on this runtime; call ctl_runtime_begin_capture first");
    }
    std::unique_ptr<GraphCapture> capture(t_capture);
    t_capture = nullptr;
    // From here on the program may hold the graph's tensors across launches: a buffer is
    // only dropped while nothing has run.
    for (auto& [storage, info] : capture->graph->storages) {
      storage->drop_buffer_when_graph_alone.store(false, std::memory_order_release);
    }
    capture->graph->captured_nodes = capture->graph->nodes.size();
    *out_graph = capture->graph;
    return nullptr;
  });
}

CTL_EXPORT ctl_status* ctl_runtime_capture_next_node(ctl_runtime* runtime, uint64_t* out_node) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_runtime(runtime, "runtime"));
    CTL_CHECK_ARG(out_node, "argument 'out_node' is NULL");
    if (!t_capture || t_capture->runtime != runtime) {
      return make_status(CTL_STATUS_FAILED_PRECONDITION, "this thread is not capturing on this runtime");
    }
    *out_node = t_capture->next_id;
    return nullptr;
  });
}

CTL_EXPORT void ctl_graph_retain(ctl_graph* graph) {
  if (graph && graph->magic == kGraphMagic) graph->references.fetch_add(1, std::memory_order_relaxed);
}

CTL_EXPORT void ctl_graph_release(ctl_graph* graph) {
  if (!graph || graph->magic != kGraphMagic) return;
  if (graph->references.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  ctl_runtime* runtime = graph->runtime;
  delete graph;
  ctl_runtime_release(runtime);
}

CTL_EXPORT ctl_status* ctl_graph_optimize(ctl_graph* graph, const ctl_graph_options* options) {
  CTL_RETURN_IF_ERROR(check_graph(graph, "graph"));
  return guard([&] { return optimize(graph, options); });
}

CTL_EXPORT ctl_status* ctl_graph_launch(ctl_graph* graph) {
  CTL_RETURN_IF_ERROR(check_graph(graph, "graph"));
  return guard([&] { return launch(graph); });
}

CTL_EXPORT ctl_status* ctl_graph_set_node_attrs(ctl_graph* graph, uint64_t node, const void* attrs) {
  CTL_RETURN_IF_ERROR(check_graph(graph, "graph"));
  return guard([&]() -> ctl_status* {
    CTL_CHECK_ARG(attrs, "argument 'attrs' is NULL");
    return set_node_attrs(graph, node, attrs);
  });
}

CTL_EXPORT ctl_status* ctl_graph_get_stats(const ctl_graph* graph, ctl_graph_stats* out_stats) {
  CTL_RETURN_IF_ERROR(check_graph(graph, "graph"));
  return guard([&]() -> ctl_status* {
    CTL_CHECK_ARG(out_stats, "argument 'out_stats' is NULL");
    CTL_CHECK_ARG(out_stats->struct_size >= offsetof(ctl_graph_stats, captured_nodes) + sizeof(uint64_t),
                  "out_stats->struct_size is %zu; set it to CTL_GRAPH_STATS_STRUCT_SIZE", out_stats->struct_size);
    ctl_graph_stats stats{};
    stats.struct_size = sizeof stats;
    stats.captured_nodes = graph->captured_nodes;
    stats.nodes = graph->nodes.size();
    stats.launches_per_run = graph->nodes.size();
    stats.unfused_nodes = graph->unfused_groups;
    stats.device_bytes = graph_device_bytes(graph);
    stats.captured_device_bytes = graph->optimized ? graph->captured_bytes : stats.device_bytes;
    stats.runs = graph->runs.load(std::memory_order_relaxed);
    copy_out(&stats, out_stats);
    return nullptr;
  });
}

CTL_EXPORT ctl_status* ctl_graph_pass_report(const ctl_graph* graph, size_t capacity,
                                             ctl_graph_pass_record* out_records, size_t* out_count) {
  CTL_RETURN_IF_ERROR(check_graph(graph, "graph"));
  return guard([&]() -> ctl_status* {
    CTL_CHECK_ARG(out_count, "argument 'out_count' is NULL");
    CTL_CHECK_ARG(out_records || capacity == 0, "argument 'out_records' is NULL but capacity is %zu", capacity);
    for (size_t i = 0; i < capacity && i < graph->passes.size(); ++i) {
      CTL_CHECK_ARG(out_records[i].struct_size >= offsetof(ctl_graph_pass_record, name) + sizeof(const char*),
                    "out_records[%zu].struct_size is %zu; set it to CTL_GRAPH_PASS_RECORD_STRUCT_SIZE", i,
                    out_records[i].struct_size);
    }
    for (size_t i = 0; i < capacity && i < graph->passes.size(); ++i) {
      const PassRecord& p = graph->passes[i];
      ctl_graph_pass_record record{};
      record.struct_size = sizeof record;
      record.name = p.name;
      record.nodes_before = p.nodes_before;
      record.nodes_after = p.nodes_after;
      record.device_bytes_before = p.bytes_before;
      record.device_bytes_after = p.bytes_after;
      record.changes = p.changes;
      copy_out(&record, &out_records[i]);
    }
    *out_count = graph->passes.size();
    return nullptr;
  });
}

CTL_EXPORT ctl_status* ctl_graph_write_dot(const ctl_graph* graph, ctl_graph_stage stage, const char* path) {
  CTL_RETURN_IF_ERROR(check_graph(graph, "graph"));
  return guard([&]() -> ctl_status* {
    const int raw = enum_value(stage);
    CTL_CHECK_ARG(raw == CTL_GRAPH_CAPTURED || raw == CTL_GRAPH_CURRENT,
                  "argument 'stage' is %d, not a ctl_graph_stage", raw);
    CTL_CHECK_ARG(path, "argument 'path' is NULL");
    const bool captured = raw == CTL_GRAPH_CAPTURED && !graph->captured_dot.empty();
    const std::string text =
        captured ? graph->captured_dot : graph_dot(graph, graph->optimized ? "optimised" : "captured");
    FILE* file = std::fopen(path, "w");
    if (!file) return make_status(CTL_STATUS_NOT_FOUND, "cannot open '%s' for writing: %s", path, std::strerror(errno));
    const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
    const bool closed = std::fclose(file) == 0;
    if (!written || !closed)
      return make_status(CTL_STATUS_INTERNAL, "writing '%s' failed: %s", path, std::strerror(errno));
    return nullptr;
  });
}

}  // extern "C"
