// graph_passes_test.cpp — each graph pass on small hand-built graphs: the node count it
// leaves (so a pass that stops firing fails here), the bytes it frees, and results equal
// to the graph run as captured, bit for bit on the CPU plugin. The fusions also run on
// OpenCL (PoCL) where present, and on Vulkan (lavapipe), whose plugin does not claim the
// fused op: there the graph keeps its separate ops and counts each refusal.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "graph_test_support.hpp"

using namespace ctltest;

namespace {

std::vector<float> ramp(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * (float(i) - float(n) / 2) / float(n);
  return v;
}

// Captures `build` (which returns the result tensor, all else released) twice: once to run
// as captured, once to optimise with `passes`. Returns the optimised graph's node count
// after checking both graphs give the same bits.
struct PassRun {
  uint64_t captured = 0, nodes = 0, unfused = 0, bytes_before = 0, bytes_after = 0;
};

PassRun run_pass(ctl_runtime* runtime, const char* passes, const std::function<Tensor()>& build, bool exact = true) {
  PassRun out;
  Tensor plain_result, optimised_result;
  Graph plain = capture(runtime, [&] { plain_result = build(); });
  Graph optimised = capture(runtime, [&] { optimised_result = build(); });
  Status s = optimize(optimised.get(), passes);
  EXPECT_EQ(s, nullptr) << describe(s.get());
  Status none = optimize(plain.get(), "none");
  EXPECT_EQ(none, nullptr) << describe(none.get());
  for (int launch = 0; launch < 2; ++launch) {  // twice: a plan must survive a second run
    CTL_EXPECT_OK(ctl_graph_launch(plain.get()));
    CTL_EXPECT_OK(ctl_graph_launch(optimised.get()));
  }
  const auto a = to_vector<float>(plain_result.get());
  const auto b = to_vector<float>(optimised_result.get());
  if (exact) {
    EXPECT_TRUE(same_bits(a, b)) << "pass " << passes << " changed the result";
  } else {
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5f * (1 + std::fabs(a[i]))) << i;
  }
  const ctl_graph_stats st = stats_of(optimised.get());
  out.captured = st.captured_nodes;
  out.nodes = st.nodes;
  out.unfused = st.unfused_nodes;
  out.bytes_before = st.captured_device_bytes;
  out.bytes_after = st.device_bytes;
  return out;
}

class GraphPasses : public ::testing::Test {
 protected:
  void SetUp() override {
    d_ = one_device(CTL_TEST_CPU_PLUGIN);
    ASSERT_NE(d_.device, nullptr);
    x_ = from_vector(d_.device, CTL_DTYPE_F32, {16, 32}, ramp(512, 3.0f));
  }
  OneDevice d_;
  Tensor x_;
};

TEST_F(GraphPasses, DeadCodeIsRemoved) {
  const PassRun r = run_pass(d_.runtime.get(), "dce", [&] {
    Tensor unused = unary(CTL_OP_TANH, x_.get());  // released: nobody reads it
    Tensor also_unused = unary(CTL_OP_SIN, unused.get());
    return unary(CTL_OP_EXP, x_.get());
  });
  EXPECT_EQ(r.captured, 3u);
  EXPECT_EQ(r.nodes, 1u);
  EXPECT_LT(r.bytes_after, r.bytes_before);
}

TEST_F(GraphPasses, ProgramTensorsAreNeverDead) {
  // The result the program holds is not dead, nor what writes the program's tensors.
  Tensor kept;
  const PassRun r = run_pass(d_.runtime.get(), "dce", [&] {
    kept = unary(CTL_OP_TANH, x_.get());
    return unary(CTL_OP_EXP, x_.get());
  });
  EXPECT_EQ(r.nodes, 2u);
}

TEST_F(GraphPasses, ConstantsFoldOnce) {
  const PassRun r = run_pass(d_.runtime.get(), "fold", [&] {
    std::vector<float> mask(512);
    for (size_t i = 0; i < mask.size(); ++i) mask[i] = (i % 3) ? 1.0f : -0.5f;
    Tensor c = from_vector(d_.device, CTL_DTYPE_F32, {16, 32}, mask);  // a host write
    Tensor e = unary(CTL_OP_EXP, c.get());                             // computed from it only
    return binary(CTL_OP_MUL, e.get(), x_.get());                      // reads the program's x
  });
  EXPECT_EQ(r.captured, 3u);
  EXPECT_EQ(r.nodes, 1u);
}

TEST_F(GraphPasses, RepeatsAreComputedOnce) {
  const PassRun r = run_pass(d_.runtime.get(), "cse", [&] {
    Tensor a = unary(CTL_OP_EXP, x_.get());
    Tensor b = unary(CTL_OP_EXP, x_.get());
    Tensor c = unary(CTL_OP_TANH, x_.get());  // not a repeat
    Tensor s = binary(CTL_OP_ADD, a.get(), b.get());
    return binary(CTL_OP_ADD, s.get(), c.get());
  });
  EXPECT_EQ(r.captured, 5u);
  EXPECT_EQ(r.nodes, 4u);
}

TEST_F(GraphPasses, RepeatAfterAWriteIsKept) {
  // x changes between the two exps: they are not the same value.
  Tensor y = from_vector(d_.device, CTL_DTYPE_F32, {16, 32}, ramp(512, -1.0f));
  const PassRun r = run_pass(d_.runtime.get(), "cse", [&] {
    Tensor work = unary(CTL_OP_NEG, x_.get());
    Tensor a = unary(CTL_OP_EXP, work.get());
    ctl_tensor* in = y.get();
    ctl_tensor* out = work.get();
    CTL_EXPECT_OK(ctl_op_run_into(CTL_OP_COPY, 1, &in, nullptr, 1, &out));
    Tensor b = unary(CTL_OP_EXP, work.get());
    return binary(CTL_OP_ADD, a.get(), b.get());
  });
  EXPECT_EQ(r.nodes, r.captured);
}

TEST_F(GraphPasses, ElementwiseChainsFuseOnTheCpuPlugin) {
  const PassRun r = run_pass(d_.runtime.get(), "fuse_elementwise", [&] {
    Tensor n = unary(CTL_OP_NEG, x_.get());
    Tensor m = binary(CTL_OP_MUL, n.get(), x_.get());
    Tensor e = unary(CTL_OP_EXP, m.get());
    return binary(CTL_OP_ADD, e.get(), x_.get());
  });
  EXPECT_EQ(r.captured, 4u);
  EXPECT_EQ(r.nodes, 1u);
  EXPECT_EQ(r.unfused, 0u);
  EXPECT_LT(r.bytes_after, r.bytes_before);
}

TEST_F(GraphPasses, ABranchFusesOnceBothReadersHaveJoined) {
  // n feeds two ops, so it cannot merge into either alone; once both have merged into the
  // add, the add is n's only reader and n joins, read through one register twice.
  const PassRun r = run_pass(d_.runtime.get(), "fuse_elementwise", [&] {
    Tensor n = unary(CTL_OP_NEG, x_.get());
    Tensor a = unary(CTL_OP_EXP, n.get());
    Tensor b = unary(CTL_OP_TANH, n.get());
    return binary(CTL_OP_ADD, a.get(), b.get());
  });
  EXPECT_EQ(r.nodes, 1u);
}

TEST_F(GraphPasses, AValueTheProgramHoldsIsNotFusedAway) {
  Tensor kept;
  const PassRun r = run_pass(d_.runtime.get(), "fuse_elementwise", [&] {
    kept = unary(CTL_OP_NEG, x_.get());
    Tensor a = unary(CTL_OP_EXP, kept.get());
    return binary(CTL_OP_ADD, a.get(), x_.get());
  });
  EXPECT_EQ(r.nodes, 2u);  // neg stays: the program reads its result
}

TEST_F(GraphPasses, MatmulTakesItsBiasAndActivation) {
  Tensor w = from_vector(d_.device, CTL_DTYPE_F32, {32, 24}, ramp(768, 0.5f));
  Tensor bias = from_vector(d_.device, CTL_DTYPE_F32, {24}, ramp(24, 2.0f));
  const PassRun r = run_pass(d_.runtime.get(), "fuse_epilogue", [&] {
    ctl_tensor* p = nullptr;
    CTL_EXPECT_OK(ctl_op_matmul(x_.get(), w.get(), &p));
    Tensor product(p);
    Tensor biased = binary(CTL_OP_ADD, product.get(), bias.get());
    return unary(CTL_OP_RELU, biased.get());
  });
  EXPECT_EQ(r.captured, 3u);
  EXPECT_EQ(r.nodes, 1u);
}

TEST_F(GraphPasses, EpilogueTakesReluButNotTheGelus) {
  // The CPU plugin's epilogue gelu differs from its gelu op in the last bits, so only relu
  // (exact everywhere) moves into the matmul; run_pass checks the bits either way.
  Tensor w = from_vector(d_.device, CTL_DTYPE_F32, {32, 24}, ramp(768, 0.5f));
  for (ctl_op_id op : {CTL_OP_RELU, CTL_OP_GELU, CTL_OP_GELU_TANH}) {
    const PassRun r = run_pass(d_.runtime.get(), "fuse_epilogue", [&] {
      ctl_tensor* p = nullptr;
      CTL_EXPECT_OK(ctl_op_matmul(x_.get(), w.get(), &p));
      Tensor product(p);
      return unary(op, product.get());
    });
    EXPECT_EQ(r.nodes, op == CTL_OP_RELU ? 1u : 2u) << ctl_op_name(op);
  }
}

TEST_F(GraphPasses, MemoryIsSharedByLifetime) {
  const PassRun r = run_pass(d_.runtime.get(), "plan_memory", [&] {
    Tensor t = unary(CTL_OP_NEG, x_.get());
    for (ctl_op_id op : {CTL_OP_EXP, CTL_OP_TANH, CTL_OP_SIN, CTL_OP_COS, CTL_OP_ABS}) t = unary(op, t.get());
    return unary(CTL_OP_SQRT, t.get());
  });
  EXPECT_EQ(r.nodes, r.captured);
  // Six intermediates of one size, each read only by the next op: two buffers serve all.
  EXPECT_EQ(r.bytes_before, 6u * 512 * sizeof(float));
  EXPECT_EQ(r.bytes_after, 2u * 512 * sizeof(float));
}

TEST_F(GraphPasses, DefaultPassesKeepTheResult) {
  Tensor w = from_vector(d_.device, CTL_DTYPE_F32, {32, 32}, ramp(1024, 0.25f));
  const PassRun r = run_pass(d_.runtime.get(), nullptr, [&] {
    Tensor dead = unary(CTL_OP_COS, x_.get());
    ctl_tensor* p = nullptr;
    CTL_EXPECT_OK(ctl_op_matmul(x_.get(), w.get(), &p));
    Tensor product(p);
    Tensor a = unary(CTL_OP_TANH, product.get());
    Tensor b = unary(CTL_OP_TANH, product.get());
    Tensor s = binary(CTL_OP_MUL, a.get(), b.get());
    return binary(CTL_OP_SUB, s.get(), x_.get());
  });
  EXPECT_LT(r.nodes, r.captured);
}

#if defined(CTL_TEST_OPENCL_PLUGIN) || defined(CTL_TEST_VULKAN_PLUGIN)
// The fusion on another plugin: OpenCL claims the fused op, Vulkan does not.
void fuse_on(const char* path, bool expect_fused) {
  OneDevice d = one_device(path);
  if (!d.device) GTEST_SKIP() << "no device from " << path;
  Tensor x = from_vector(d.device, CTL_DTYPE_F32, {16, 32}, ramp(512, 3.0f));
  const PassRun r = run_pass(d.runtime.get(), "fuse_elementwise", [&] {
    Tensor n = unary(CTL_OP_NEG, x.get());
    Tensor m = binary(CTL_OP_MUL, n.get(), x.get());
    return unary(CTL_OP_EXP, m.get());
  });
  if (expect_fused) {
    EXPECT_EQ(r.nodes, 1u);
    EXPECT_EQ(r.unfused, 0u);
  } else {
    EXPECT_EQ(r.nodes, 3u);
    EXPECT_GT(r.unfused, 0u) << "a refused fusion must be counted";
  }
}

#endif

#ifdef CTL_TEST_OPENCL_PLUGIN
TEST(GraphPassesOnOpenCl, ElementwiseChainsFuse) {
  fuse_on(CTL_TEST_OPENCL_PLUGIN, true);
}
#endif

#ifdef CTL_TEST_VULKAN_PLUGIN
TEST(GraphPassesOnVulkan, UnclaimedFusionKeepsTheSeparateOpsAndCountsIt) {
  fuse_on(CTL_TEST_VULKAN_PLUGIN, false);
}
#endif

}  // namespace
