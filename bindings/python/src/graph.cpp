// graph.cpp — catalyst.Graph: a step of ops captured once and launched many times
// (catalyst.h, "Graphs", since 1.5). The graph is a context manager: `with Graph() as g:`
// captures what the block runs on this thread, and leaving the block ends the capture
// however it is left, so an exception never leaves the thread capturing.
#include <pybind11/stl.h>

#include <string>
#include <utility>

#include "binding.h"

namespace catalyst_py {
namespace {

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph() { ctl_graph_release(handle_); }

  ctl_graph* get() const { return handle_; }

  void begin() {
    // One graph per object (an abandoned capture keeps none): a second capture would drop a
    // graph whose tensors the program holds.
    if (handle_ || capturing_) raise(CTL_STATUS_FAILED_PRECONDITION, "this Graph has already captured; make a new one");
    check(ctl_runtime_begin_capture(runtime()));
    capturing_ = true;
  }

  // Ends the capture; keeps the graph only when the block ended without an exception.
  void end(bool keep) {
    if (!capturing_) return;
    capturing_ = false;
    ctl_graph* graph = nullptr;
    ctl_status* status = ctl_runtime_end_capture(runtime(), &graph);
    if (!keep) {
      ctl_status_free(status);
      ctl_graph_release(graph);
      return;
    }
    check(status);
    handle_ = graph;
  }

 private:
  ctl_graph* handle_ = nullptr;
  bool capturing_ = false;
};

py::dict stats_of(const Graph& g) {
  ctl_graph_stats s{};
  s.struct_size = CTL_GRAPH_STATS_STRUCT_SIZE;
  check(ctl_graph_get_stats(g.get(), &s));
  py::dict d;
  d["captured_nodes"] = s.captured_nodes;
  d["nodes"] = s.nodes;
  d["launches_per_run"] = s.launches_per_run;
  d["unfused_nodes"] = s.unfused_nodes;
  d["device_bytes"] = s.device_bytes;
  d["captured_device_bytes"] = s.captured_device_bytes;
  d["runs"] = s.runs;
  return d;
}

py::list pass_report_of(const Graph& g) {
  size_t count = 0;
  check(ctl_graph_pass_report(g.get(), 0, nullptr, &count));
  std::vector<ctl_graph_pass_record> records(count);
  for (auto& r : records) r.struct_size = CTL_GRAPH_PASS_RECORD_STRUCT_SIZE;
  check(ctl_graph_pass_report(g.get(), records.size(), records.data(), &count));
  py::list out;
  for (size_t i = 0; i < count && i < records.size(); ++i) {
    const ctl_graph_pass_record& r = records[i];
    py::dict d;
    d["name"] = r.name ? r.name : "";
    d["nodes_before"] = r.nodes_before;
    d["nodes_after"] = r.nodes_after;
    d["device_bytes_before"] = r.device_bytes_before;
    d["device_bytes_after"] = r.device_bytes_after;
    d["changes"] = r.changes;
    out.append(d);
  }
  return out;
}

}  // namespace

void register_graph(py::module_& m) {
  py::class_<Graph>(m, "Graph",
                    "A captured graph of ops: `with catalyst.Graph() as g:` captures what the block runs on this "
                    "thread (nothing runs; outputs hold their values after g.launch()). Reading a tensor, moving "
                    "tensors between devices and collectives raise FailedPreconditionError inside the block.")
      .def(py::init<>())
      .def(
          "__enter__",
          [](Graph& g) -> Graph& {
            g.begin();
            return g;
          },
          py::return_value_policy::reference)
      .def("__exit__",
           [](Graph& g, py::handle exc_type, py::handle, py::handle) {
             g.end(exc_type.is_none());
             return false;  // an exception from the block goes on
           })
      .def(
          "optimize",
          [](Graph& g, py::object passes) {
            ctl_graph_options o{};
            o.struct_size = CTL_GRAPH_OPTIONS_STRUCT_SIZE;
            std::string text;
            if (!passes.is_none()) {
              text = passes.cast<std::string>();
              o.passes = text.c_str();
            }
            check(ctl_graph_optimize(g.get(), &o));
          },
          py::arg("passes") = py::none(),
          "Runs the named passes ('dce,cse,fuse_elementwise', 'none'; None: CATALYST_GRAPH_PASSES or every "
          "pass) once, before the first launch.")
      .def(
          "launch", [](Graph& g) { check(ctl_graph_launch(g.get())); },
          "Runs every node in order; results are read as usual (reading waits).")
      .def(
          "set_node_attrs",
          [](Graph& g, uint64_t node, py::handle op, py::kwargs kwargs) {
            AttrStorage storage;
            const void* attrs = build_attrs(op_from(op), kwargs, storage);
            check(ctl_graph_set_node_attrs(g.get(), node, attrs));
          },
          py::arg("node"), py::arg("op"),
          "Replaces the attributes of captured node `node` (from catalyst.capture_next_node()), given as for "
          "catalyst.op: set_node_attrs(node, 'adamw_step', lr=..., step=...). Only adamw_step, sgd_step and fill.")
      .def("stats", &stats_of, "Node counts, memory and completed launches, as a dict.")
      .def("pass_report", &pass_report_of, "What each pass of optimize() did, in order (a list of dicts).")
      .def(
          "write_dot",
          [](const Graph& g, const std::string& path, const std::string& stage) {
            ctl_graph_stage s;
            if (stage == "captured") {
              s = CTL_GRAPH_CAPTURED;
            } else if (stage == "current") {
              s = CTL_GRAPH_CURRENT;
            } else {
              raise(CTL_STATUS_INVALID_ARGUMENT, "stage must be 'captured' or 'current', not '" + stage + "'");
            }
            check(ctl_graph_write_dot(g.get(), s, path.c_str()));
          },
          py::arg("path"), py::arg("stage") = "current", "Writes the graph as Graphviz DOT to `path`.");

  m.def(
      "capture_next_node",
      [] {
        uint64_t node = 0;
        check(ctl_runtime_capture_next_node(runtime(), &node));
        return node;
      },
      "Inside a capture, the id the next captured op will get (for Graph.set_node_attrs).");
}

}  // namespace catalyst_py
