// graph_test_support.hpp — helpers the graph tests share: a runtime over one plugin, RAII
// for graphs, capture of a lambda, and the passes' report.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace ctltest {

struct GraphDeleter {
  void operator()(ctl_graph* g) const { ctl_graph_release(g); }
};
using Graph = std::unique_ptr<ctl_graph, GraphDeleter>;

struct OneDevice {
  Runtime runtime;
  ctl_device* device = nullptr;
};

// A runtime of the plugin file `path` and its first device (device is NULL when the plugin
// reports none, e.g. no OpenCL driver).
inline OneDevice one_device(const char* path) {
  std::vector<const char*> paths{path};
  const ctl_runtime_options o = options(&paths);
  ctl_runtime* r = nullptr;
  Status s(ctl_runtime_create(&o, &r));
  EXPECT_EQ(s, nullptr) << describe(s.get());
  OneDevice d{Runtime(r), nullptr};
  if (r && ctl_runtime_device_count(r) > 0) {
    Status s2(ctl_runtime_device(r, 0, &d.device));
  }
  return d;
}

// Captures what `body` issues on `runtime` into a graph.
inline Graph capture(ctl_runtime* runtime, const std::function<void()>& body) {
  Status begin(ctl_runtime_begin_capture(runtime));
  EXPECT_EQ(begin, nullptr) << describe(begin.get());
  body();
  ctl_graph* graph = nullptr;
  Status end(ctl_runtime_end_capture(runtime, &graph));
  EXPECT_EQ(end, nullptr) << describe(end.get());
  return Graph(graph);
}

inline ctl_graph_stats stats_of(const ctl_graph* graph) {
  ctl_graph_stats stats{};
  stats.struct_size = CTL_GRAPH_STATS_STRUCT_SIZE;
  Status s(ctl_graph_get_stats(graph, &stats));
  EXPECT_EQ(s, nullptr) << describe(s.get());
  return stats;
}

inline Status optimize(ctl_graph* graph, const char* passes) {
  ctl_graph_options o{};
  o.struct_size = CTL_GRAPH_OPTIONS_STRUCT_SIZE;
  o.passes = passes;
  return Status(ctl_graph_optimize(graph, &o));
}

inline Tensor unary(ctl_op_id op, ctl_tensor* x) {
  ctl_tensor* y = nullptr;
  Status s(ctl_op_unary(op, x, &y));
  EXPECT_EQ(s, nullptr) << describe(s.get());
  return Tensor(y);
}

inline Tensor binary(ctl_op_id op, ctl_tensor* a, ctl_tensor* b) {
  ctl_tensor* y = nullptr;
  Status s(ctl_op_binary(op, a, b, &y));
  EXPECT_EQ(s, nullptr) << describe(s.get());
  return Tensor(y);
}

// Copies `data` into the existing tensor `target` (a program's way to feed a graph).
inline void write_into(ctl_tensor* target, const std::vector<float>& data) {
  const ctl_tensor_info info = info_of(target);
  Tensor staged =
      from_vector(info.device, CTL_DTYPE_F32, std::vector<int64_t>(info.shape, info.shape + info.rank), data);
  ctl_tensor* in = staged.get();
  Status s(ctl_op_run_into(CTL_OP_COPY, 1, &in, nullptr, 1, &target));
  EXPECT_EQ(s, nullptr) << describe(s.get());
}

inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace ctltest
