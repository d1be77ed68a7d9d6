// graph_capture_test.cpp — catalyst.h's "Graphs": capture records instead of running,
// launches compute what eager calls compute (on fresh input data too), capture refuses what
// it cannot record with the eager statuses, node attributes can be updated, the DOT dump,
// and bad arguments.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "graph_test_support.hpp"

using namespace ctltest;

namespace {

std::vector<float> ramp(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * (float(i) - float(n) / 2) / float(n);
  return v;
}

TEST(GraphCapture, RecordsInsteadOfRunningAndLaunchesLikeEager) {
  OneDevice d = one_device(CTL_TEST_CPU_PLUGIN);
  ASSERT_NE(d.device, nullptr);
  Tensor x = from_vector(d.device, CTL_DTYPE_F32, {4, 8}, ramp(32, 3.0f));
  Tensor y, z;
  Graph graph = capture(d.runtime.get(), [&] {
    y = unary(CTL_OP_EXP, x.get());
    z = binary(CTL_OP_MUL, y.get(), x.get());
  });
  EXPECT_EQ(stats_of(graph.get()).captured_nodes, 2u);
  // Nothing ran: reading now is allowed again, and launching fills z.
  CTL_ASSERT_OK(ctl_graph_launch(graph.get()));
  Tensor ey = unary(CTL_OP_EXP, x.get());
  Tensor ez = binary(CTL_OP_MUL, ey.get(), x.get());
  EXPECT_TRUE(same_bits(to_vector<float>(z.get()), to_vector<float>(ez.get())));
  // Fresh data in the captured input, launch again.
  write_into(x.get(), ramp(32, -2.0f));
  CTL_ASSERT_OK(ctl_graph_launch(graph.get()));
  Tensor ey2 = unary(CTL_OP_EXP, x.get());
  Tensor ez2 = binary(CTL_OP_MUL, ey2.get(), x.get());
  EXPECT_TRUE(same_bits(to_vector<float>(z.get()), to_vector<float>(ez2.get())));
  EXPECT_EQ(stats_of(graph.get()).runs, 2u);
}

TEST(GraphCapture, CapturedOpsDoNotRun) {
  OneDevice d = one_device(CTL_TEST_CPU_PLUGIN);
  ASSERT_NE(d.device, nullptr);
  Tensor x = from_vector(d.device, CTL_DTYPE_F32, {3}, std::vector<float>{1, 2, 3});
  Tensor target = from_vector(d.device, CTL_DTYPE_F32, {3}, std::vector<float>{7, 7, 7});
  Graph graph = capture(d.runtime.get(), [&] {
    ctl_tensor* in = x.get();
    ctl_tensor* out = target.get();
    CTL_EXPECT_OK(ctl_op_run_into(CTL_OP_NEG, 1, &in, nullptr, 1, &out));
  });
  EXPECT_EQ(to_vector<float>(target.get()), (std::vector<float>{7, 7, 7}));
  CTL_ASSERT_OK(ctl_graph_launch(graph.get()));
  EXPECT_EQ(to_vector<float>(target.get()), (std::vector<float>{-1, -2, -3}));
}

TEST(GraphCapture, BadCallsGetEagerStatusesAndRecordNothing) {
  OneDevice d = one_device(CTL_TEST_CPU_PLUGIN);
  ASSERT_NE(d.device, nullptr);
  Tensor a = from_vector(d.device, CTL_DTYPE_F32, {2, 3}, std::vector<float>(6, 1.0f));
  Tensor b = from_vector(d.device, CTL_DTYPE_F32, {4}, std::vector<float>(4, 1.0f));
  ctl_tensor* out = nullptr;
  Status eager(ctl_op_binary(CTL_OP_ADD, a.get(), b.get(), &out));
  ASSERT_NE(eager, nullptr);
  Status captured;
  std::vector<float> host(6);
  Status read;
  Graph graph = capture(d.runtime.get(), [&] {
    captured.reset(ctl_op_binary(CTL_OP_ADD, a.get(), b.get(), &out));
    read.reset(ctl_tensor_to_host(a.get(), host.data(), host.size() * sizeof(float)));
  });
  ASSERT_NE(captured, nullptr);
  EXPECT_EQ(ctl_status_get_code(captured.get()), ctl_status_get_code(eager.get()));
  EXPECT_STREQ(ctl_status_get_message(captured.get()), ctl_status_get_message(eager.get()));
  ASSERT_NE(read, nullptr);
  EXPECT_EQ(ctl_status_get_code(read.get()), CTL_STATUS_FAILED_PRECONDITION) << describe(read.get());
  EXPECT_NE(std::string(ctl_status_get_message(read.get())).find("captures a graph"), std::string::npos);
  EXPECT_EQ(stats_of(graph.get()).captured_nodes, 0u);
}

TEST(GraphCapture, CaptureStateErrors) {
  OneDevice d = one_device(CTL_TEST_CPU_PLUGIN);
  ASSERT_NE(d.device, nullptr);
  ctl_graph* graph = nullptr;
  Status not_begun(ctl_runtime_end_capture(d.runtime.get(), &graph));
  EXPECT_EQ(ctl_status_get_code(not_begun.get()), CTL_STATUS_FAILED_PRECONDITION);
  uint64_t next = 0;
  Status no_next(ctl_runtime_capture_next_node(d.runtime.get(), &next));
  EXPECT_EQ(ctl_status_get_code(no_next.get()), CTL_STATUS_FAILED_PRECONDITION);
  CTL_ASSERT_OK(ctl_runtime_begin_capture(d.runtime.get()));
  Status twice(ctl_runtime_begin_capture(d.runtime.get()));
  EXPECT_EQ(ctl_status_get_code(twice.get()), CTL_STATUS_FAILED_PRECONDITION);
  CTL_ASSERT_OK(ctl_runtime_end_capture(d.runtime.get(), &graph));
  Graph owned(graph);
  Status null_graph(ctl_graph_launch(nullptr));
  EXPECT_EQ(ctl_status_get_code(null_graph.get()), CTL_STATUS_INVALID_ARGUMENT);
  Status null_out(ctl_runtime_end_capture(d.runtime.get(), nullptr));
  EXPECT_EQ(ctl_status_get_code(null_out.get()), CTL_STATUS_INVALID_ARGUMENT);
  Status bad_pass = optimize(graph, "dce,no_such_pass");
  ASSERT_NE(bad_pass, nullptr);
  EXPECT_NE(std::string(ctl_status_get_message(bad_pass.get())).find("no_such_pass"), std::string::npos);
  CTL_ASSERT_OK(ctl_graph_launch(graph));  // an empty graph launches
  Status late = optimize(graph, nullptr);
  EXPECT_EQ(ctl_status_get_code(late.get()), CTL_STATUS_FAILED_PRECONDITION);
  ctl_graph_release(nullptr);  // a no-op
}

TEST(GraphCapture, OptimizerAttributesUpdateBetweenLaunches) {
  OneDevice d = one_device(CTL_TEST_CPU_PLUGIN);
  ASSERT_NE(d.device, nullptr);
  auto make = [&](std::vector<float> v) { return from_vector(d.device, CTL_DTYPE_F32, {4}, v); };
  Tensor p = make({1, 2, 3, 4}), m = make({0, 0, 0, 0}), v = make({0, 0, 0, 0}), g = make({0.5f, -1, 2, -0.25f});
  Tensor p2 = make({1, 2, 3, 4}), m2 = make({0, 0, 0, 0}), v2 = make({0, 0, 0, 0});
  ctl_adamw_attrs a{};
  a.struct_size = CTL_ADAMW_ATTRS_STRUCT_SIZE;
  a.lr = 0.1;
  a.beta1 = 0.9;
  a.beta2 = 0.99;
  a.eps = 1e-8;
  a.weight_decay = 0.01;
  a.step = 1;
  uint64_t node = 0;
  Graph graph = capture(d.runtime.get(), [&] {
    CTL_EXPECT_OK(ctl_runtime_capture_next_node(d.runtime.get(), &node));
    ctl_tensor* in = g.get();
    ctl_tensor* outs[3] = {p.get(), m.get(), v.get()};
    CTL_EXPECT_OK(ctl_op_run_into(CTL_OP_ADAMW_STEP, 1, &in, &a, 3, outs));
  });
  ctl_tensor* in2 = g.get();
  ctl_tensor* outs2[3] = {p2.get(), m2.get(), v2.get()};
  for (uint64_t step = 1; step <= 3; ++step) {
    a.step = step;
    a.lr = 0.1 / double(step);
    CTL_ASSERT_OK(ctl_graph_set_node_attrs(graph.get(), node, &a));
    CTL_ASSERT_OK(ctl_graph_launch(graph.get()));
    CTL_ASSERT_OK(ctl_op_run_into(CTL_OP_ADAMW_STEP, 1, &in2, &a, 3, outs2));
  }
  EXPECT_TRUE(same_bits(to_vector<float>(p.get()), to_vector<float>(p2.get())));
  // A bad value is refused as the op refuses it, and changes nothing.
  ctl_adamw_attrs bad = a;
  bad.step = 0;
  Status refused(ctl_graph_set_node_attrs(graph.get(), node, &bad));
  ASSERT_NE(refused, nullptr);
  EXPECT_NE(std::string(ctl_status_get_message(refused.get())).find("step is 0"), std::string::npos)
      << describe(refused.get());
  Status missing(ctl_graph_set_node_attrs(graph.get(), node + 100, &a));
  EXPECT_EQ(ctl_status_get_code(missing.get()), CTL_STATUS_NOT_FOUND);
  CTL_ASSERT_OK(ctl_graph_launch(graph.get()));
  CTL_ASSERT_OK(ctl_op_run_into(CTL_OP_ADAMW_STEP, 1, &in2, &a, 3, outs2));
  EXPECT_TRUE(same_bits(to_vector<float>(p.get()), to_vector<float>(p2.get())));
}

TEST(GraphCapture, HostWritesAndZeroFillsReplay) {
  OneDevice d = one_device(CTL_TEST_CPU_PLUGIN);
  ASSERT_NE(d.device, nullptr);
  Tensor x = from_vector(d.device, CTL_DTYPE_F32, {3}, std::vector<float>{1, 2, 3});
  Tensor y;
  Graph graph = capture(d.runtime.get(), [&] {
    Tensor c = from_vector(d.device, CTL_DTYPE_F32, {3}, std::vector<float>{10, 20, 30});
    ctl_tensor* zeros = nullptr;
    const int64_t shape[1] = {3};
    CTL_EXPECT_OK(ctl_tensor_create_zeros(d.device, CTL_DTYPE_F32, 1, shape, &zeros));
    Tensor z(zeros);
    Tensor s = binary(CTL_OP_ADD, c.get(), z.get());
    y = binary(CTL_OP_ADD, s.get(), x.get());
  });
  EXPECT_EQ(stats_of(graph.get()).captured_nodes, 4u);  // write, fill, add, add
  CTL_ASSERT_OK(ctl_graph_launch(graph.get()));
  EXPECT_EQ(to_vector<float>(y.get()), (std::vector<float>{11, 22, 33}));
}

TEST(GraphCapture, CaptureFreesWhatTheProgramReleasesAsEagerDoes) {
  OneDevice d = one_device(CTL_TEST_CPU_PLUGIN);
  ASSERT_NE(d.device, nullptr);
  const size_t n = 1 << 18;  // 1 MiB of f32
  Tensor x = from_vector(d.device, CTL_DTYPE_F32, {int64_t(n)}, ramp(n, 1.0f));
  auto in_use = [&] {
    ctl_device_usage u{};
    u.struct_size = CTL_DEVICE_USAGE_STRUCT_SIZE;
    Status s(ctl_device_get_usage(d.device, &u));
    return u.memory_in_use;
  };
  const uint64_t before = in_use();
  Tensor y;
  Graph graph = capture(d.runtime.get(), [&] {
    Tensor t = unary(CTL_OP_NEG, x.get());
    for (int i = 0; i < 20; ++i) t = unary(i % 2 ? CTL_OP_TANH : CTL_OP_SIN, t.get());
    y = unary(CTL_OP_EXP, t.get());
  });
  // 22 intermediates were made; the program holds only y, so at most y and one more are
  // in memory, as in eager execution.
  EXPECT_LE(in_use() - before, 2 * n * sizeof(float));
  CTL_ASSERT_OK(ctl_graph_launch(graph.get()));  // the dropped buffers come back for the run
  std::vector<float> expect = ramp(n, 1.0f);
  for (float& v : expect) {
    v = -v;
    for (int i = 0; i < 20; ++i) v = i % 2 ? std::tanh(v) : std::sin(v);
    v = std::exp(v);
  }
  const std::vector<float> got = to_vector<float>(y.get());
  for (size_t i = 0; i < n; i += 4099) EXPECT_NEAR(got[i], expect[i], 1e-5f * expect[i]) << i;
}

TEST(GraphCapture, DotDumpNamesTheOps) {
  OneDevice d = one_device(CTL_TEST_CPU_PLUGIN);
  ASSERT_NE(d.device, nullptr);
  Tensor x = from_vector(d.device, CTL_DTYPE_F32, {8}, ramp(8, 1.0f));
  Tensor y;
  Graph graph = capture(d.runtime.get(), [&] {
    Tensor t = unary(CTL_OP_TANH, x.get());
    y = unary(CTL_OP_EXP, t.get());
  });
  const std::string path = ::testing::TempDir() + "graph_capture_test.dot";
  CTL_ASSERT_OK(ctl_graph_write_dot(graph.get(), CTL_GRAPH_CAPTURED, path.c_str()));
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  EXPECT_NE(text.str().find("digraph"), std::string::npos);
  EXPECT_NE(text.str().find("tanh"), std::string::npos);
  EXPECT_NE(text.str().find("n0 -> n1"), std::string::npos) << text.str();
  Status bad_stage(ctl_graph_write_dot(graph.get(), static_cast<ctl_graph_stage>(7), path.c_str()));
  EXPECT_EQ(ctl_status_get_code(bad_stage.get()), CTL_STATUS_INVALID_ARGUMENT);
  Status bad_path(ctl_graph_write_dot(graph.get(), CTL_GRAPH_CURRENT, "/no/such/dir/g.dot"));
  EXPECT_NE(bad_path, nullptr);
  std::remove(path.c_str());
}

}  // namespace
