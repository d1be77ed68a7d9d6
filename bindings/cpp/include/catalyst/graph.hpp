// graph.hpp — captured graphs (catalyst.h, "Graphs") in C++: capture what a function
// issues, optimise with named passes, launch, and update optimizer nodes between launches.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "catalyst/catalyst.hpp"

namespace catalyst {

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  Graph(Graph&& other) noexcept : graph_(std::exchange(other.graph_, nullptr)) {}
  Graph& operator=(Graph&& other) noexcept {
    std::swap(graph_, other.graph_);
    return *this;
  }
  ~Graph() { ctl_graph_release(graph_); }

  // Captures the ops `body` issues on `runtime` from this thread. If `body` throws, the
  // capture is ended (and dropped) before the exception goes on.
  template <typename Body>
  static Graph capture(const Runtime& runtime, Body&& body) {
    check(ctl_runtime_begin_capture(runtime.get()));
    try {
      body();
    } catch (...) {
      ctl_graph* dropped = nullptr;
      ctl_status_free(ctl_runtime_end_capture(runtime.get(), &dropped));
      ctl_graph_release(dropped);
      throw;
    }
    Graph graph;
    check(ctl_runtime_end_capture(runtime.get(), &graph.graph_));
    return graph;
  }
  // The id the next op captured on this thread will get (inside a capture only).
  static uint64_t next_node(const Runtime& runtime) {
    uint64_t id = 0;
    check(ctl_runtime_capture_next_node(runtime.get(), &id));
    return id;
  }

  explicit operator bool() const { return graph_ != nullptr; }
  ctl_graph* get() const { return graph_; }

  // `passes`: as ctl_graph_options.passes; nullptr for the default (CATALYST_GRAPH_PASSES
  // or every pass).
  void optimize(const char* passes = nullptr) {
    ctl_graph_options o{};
    o.struct_size = CTL_GRAPH_OPTIONS_STRUCT_SIZE;
    o.passes = passes;
    check(ctl_graph_optimize(graph_, &o));
  }
  void launch() { check(ctl_graph_launch(graph_)); }
  void set_node_attrs(uint64_t node, const void* attrs) { check(ctl_graph_set_node_attrs(graph_, node, attrs)); }

  ctl_graph_stats stats() const {
    ctl_graph_stats s{};
    s.struct_size = CTL_GRAPH_STATS_STRUCT_SIZE;
    check(ctl_graph_get_stats(graph_, &s));
    return s;
  }
  std::vector<ctl_graph_pass_record> passes() const {
    size_t count = 0;
    check(ctl_graph_pass_report(graph_, 0, nullptr, &count));
    std::vector<ctl_graph_pass_record> records(count);
    for (auto& r : records) r.struct_size = CTL_GRAPH_PASS_RECORD_STRUCT_SIZE;
    check(ctl_graph_pass_report(graph_, records.size(), records.data(), &count));
    return records;
  }
  void write_dot(ctl_graph_stage stage, const std::string& path) const {
    check(ctl_graph_write_dot(graph_, stage, path.c_str()));
  }

 private:
  ctl_graph* graph_ = nullptr;
};

}  // namespace catalyst
