// placement_test.cpp — catalyst.h's "Placement" section: moves between devices (exact for
// every dtype, through host memory between plugins), cross-device inputs and fallback only
// when the policy allows them, each counted in the placement report, gradients through
// ctl_tensor_transfer, device usage, and bad arguments.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "test_support.hpp"

using namespace ctltest;

namespace {

struct Devices {
  Runtime runtime;
  std::vector<ctl_device*> list;
};

// A runtime of the given plugin files (plus the reference device) and its devices in order.
Devices make_runtime(std::vector<const char*> paths, bool reference = true) {
  const ctl_runtime_options o = options(&paths, nullptr, reference);
  ctl_runtime* r = nullptr;
  Status s(ctl_runtime_create(&o, &r));
  EXPECT_EQ(s, nullptr) << describe(s.get());
  Devices d{Runtime(r), {}};
  for (size_t i = 0; i < ctl_runtime_device_count(r); ++i) {
    ctl_device* device = nullptr;
    Status st(ctl_runtime_device(r, i, &device));
    d.list.push_back(device);
  }
  return d;
}

std::string label(ctl_device* device) {
  ctl_device_info info{};
  info.struct_size = CTL_DEVICE_INFO_STRUCT_SIZE;
  Status s(ctl_device_get_info(device, &info));
  return std::string(info.plugin_name) + " (" + info.name + ")";
}

std::vector<ctl_placement_record> report(ctl_runtime* runtime, bool reset = false) {
  size_t count = 0;
  Status s(ctl_runtime_placement_report(runtime, nullptr, 0, &count, false));
  EXPECT_EQ(s, nullptr) << describe(s.get());
  std::vector<ctl_placement_record> records(count);
  for (auto& r : records) r.struct_size = CTL_PLACEMENT_RECORD_STRUCT_SIZE;
  Status s2(ctl_runtime_placement_report(runtime, records.data(), records.size(), &count, reset));
  EXPECT_EQ(s2, nullptr) << describe(s2.get());
  return records;
}

void set_policy(ctl_runtime* runtime, bool cross, bool fallback, std::vector<ctl_device*> devices = {}) {
  ctl_placement_policy p{};
  p.struct_size = CTL_PLACEMENT_POLICY_STRUCT_SIZE;
  p.devices = devices.empty() ? nullptr : devices.data();
  p.device_count = devices.size();
  p.allow_cross_device_inputs = cross;
  p.allow_fallback = fallback;
  Status s(ctl_runtime_set_placement_policy(runtime, &p));
  ASSERT_EQ(s, nullptr) << describe(s.get());
}

Tensor move(ctl_tensor* t, ctl_device* to) {
  ctl_tensor* out = nullptr;
  Status s(ctl_tensor_to_device(t, to, &out));
  EXPECT_EQ(s, nullptr) << describe(s.get());
  return Tensor(out);
}

std::vector<unsigned char> bytes_of(const ctl_tensor* t) {
  std::vector<unsigned char> out(static_cast<size_t>(ctl_tensor_numel(t)) * ctl_dtype_size(ctl_tensor_dtype(t)));
  Status s(ctl_tensor_to_host(t, out.data(), out.size()));
  EXPECT_EQ(s, nullptr) << describe(s.get());
  return out;
}

// Every dtype both devices hold goes there and back bit for bit, strided sources included.
void expect_round_trips(ctl_device* a, ctl_device* b) {
  ctl_device_info ia{}, ib{};
  ia.struct_size = ib.struct_size = CTL_DEVICE_INFO_STRUCT_SIZE;
  Status s1(ctl_device_get_info(a, &ia)), s2(ctl_device_get_info(b, &ib));
  std::mt19937 rng(7);
  int tested = 0;
  for (int d = 0; d < 32; ++d) {
    const auto dtype = static_cast<ctl_dtype>(d);
    if (!(ia.dtype_mask & ib.dtype_mask & CTL_DTYPE_BIT(dtype)) || ctl_dtype_size(dtype) == 0) continue;
    const std::vector<int64_t> shape = {37, 5};
    std::vector<unsigned char> data(37 * 5 * ctl_dtype_size(dtype));
    for (auto& byte : data) byte = static_cast<unsigned char>(rng());
    if (dtype == CTL_DTYPE_BOOL) {
      for (auto& byte : data) byte &= 1;
    }
    ctl_tensor* raw = nullptr;
    Status s(ctl_tensor_from_host(a, dtype, 2, shape.data(), data.data(), data.size(), &raw));
    ASSERT_EQ(s, nullptr) << describe(s.get());
    Tensor source(raw);
    Tensor there = move(source.get(), b);
    Tensor back = move(there.get(), a);
    EXPECT_EQ(bytes_of(back.get()), data) << ctl_dtype_name(dtype) << " " << label(a) << " -> " << label(b);
    // A transposed (non-contiguous) source arrives dense, in its logical order.
    ctl_tensor* transposed = nullptr;
    Status st(ctl_tensor_transpose(source.get(), 0, 1, &transposed));
    Tensor t(transposed);
    Tensor dense_here = move(t.get(), a);  // a copy on the same device
    Tensor moved = move(t.get(), b);
    EXPECT_EQ(bytes_of(moved.get()), bytes_of(dense_here.get())) << ctl_dtype_name(dtype);
    ++tested;
  }
  EXPECT_GE(tested, 4) << "the required dtypes at least";
}

TEST(Placement, TensorsRoundTripExactlyBetweenPlugins) {
  Devices d = make_runtime({CTL_TEST_CPU_PLUGIN});
  ASSERT_EQ(d.list.size(), 2u);  // cpu:0 and the reference device
  expect_round_trips(d.list[0], d.list[1]);
  // Both moves counted: bytes out of cpu, into reference, under CTL_OP_COPY.
  bool found = false;
  for (const auto& r : report(d.runtime.get())) {
    if (r.kind == CTL_PLACEMENT_MOVE && r.from == d.list[0] && r.to == d.list[1]) {
      found = true;
      EXPECT_EQ(r.op, CTL_OP_COPY);
      EXPECT_GT(r.count, 0u);
      EXPECT_GT(r.bytes, 0u);
    }
  }
  EXPECT_TRUE(found);
  ctl_device_usage u{};
  u.struct_size = CTL_DEVICE_USAGE_STRUCT_SIZE;
  Status s(ctl_device_get_usage(d.list[1], &u));
  ASSERT_EQ(s, nullptr);
  EXPECT_GT(u.bytes_in, 0u);
  EXPECT_GT(u.bytes_out, 0u);
}

// Two devices of one plugin: the CPU split in two (CATALYST_CPU_DEVICES), so moves take the
// plugin's buffer_copy_peer behind an event instead of host memory.
TEST(Placement, TensorsRoundTripExactlyBetweenSplitCpuDevicesByPeerCopy) {
  setenv("CATALYST_CPU_DEVICES", "2", 1);
  Devices d = make_runtime({CTL_TEST_CPU_PLUGIN}, false);
  unsetenv("CATALYST_CPU_DEVICES");
  ASSERT_EQ(d.list.size(), 2u);
  expect_round_trips(d.list[0], d.list[1]);
  // Ordering: an op queued on cpu:0 and a move right behind it see the op's result.
  Tensor x = from_vector<float>(d.list[0], CTL_DTYPE_F32, {1 << 14}, std::vector<float>(1 << 14, 2.0f));
  ctl_tensor* y = nullptr;
  Status s(ctl_op_binary(CTL_OP_MUL, x.get(), x.get(), &y));
  Tensor Y(y);
  Tensor moved = move(Y.get(), d.list[1]);
  const std::vector<float> got = to_vector<float>(moved.get());
  EXPECT_EQ(got, std::vector<float>(1 << 14, 4.0f));
}

#ifdef CTL_TEST_VULKAN_PLUGIN
TEST(Placement, TensorsRoundTripExactlyThroughVulkan) {
  Devices d = make_runtime({CTL_TEST_CPU_PLUGIN, CTL_TEST_VULKAN_PLUGIN}, false);
  ctl_device* cpu = find_device(d.runtime.get(), "cpu");
  ctl_device* vulkan = find_device(d.runtime.get(), "vulkan");
  if (!vulkan) GTEST_SKIP() << "no Vulkan device on this machine";
  expect_round_trips(cpu, vulkan);
}
#endif

#ifdef CTL_TEST_OPENCL_PLUGIN
TEST(Placement, TensorsRoundTripExactlyThroughOpenCL) {
  Devices d = make_runtime({CTL_TEST_CPU_PLUGIN, CTL_TEST_OPENCL_PLUGIN}, false);
  ctl_device* cpu = find_device(d.runtime.get(), "cpu");
  ctl_device* opencl = find_device(d.runtime.get(), "opencl");
  if (!opencl) GTEST_SKIP() << "no OpenCL device on this machine";
  expect_round_trips(cpu, opencl);
}
#endif

TEST(Placement, CrossDeviceInputsAreAnErrorNamingBothDevicesUnlessAllowed) {
  Devices d = make_runtime({CTL_TEST_CPU_PLUGIN});
  ctl_device* cpu = d.list[0];
  ctl_device* ref = d.list[1];
  Tensor a = from_vector<float>(cpu, CTL_DTYPE_F32, {3}, {1, 2, 3});
  Tensor b = from_vector<float>(ref, CTL_DTYPE_F32, {3}, {10, 20, 30});
  ctl_tensor* sum = nullptr;
  Status refused(ctl_op_binary(CTL_OP_ADD, a.get(), b.get(), &sum));
  ASSERT_NE(refused, nullptr);
  const std::string message = ctl_status_get_message(refused.get());
  EXPECT_NE(message.find("cpu:0"), std::string::npos) << message;
  EXPECT_NE(message.find("reference"), std::string::npos) << message;
  EXPECT_NE(message.find("placement policy"), std::string::npos) << message;
  EXPECT_TRUE(report(d.runtime.get()).empty()) << "a refused call moves nothing";

  set_policy(d.runtime.get(), /*cross=*/true, /*fallback=*/false);
  Status ok(ctl_op_binary(CTL_OP_ADD, a.get(), b.get(), &sum));
  ASSERT_EQ(ok, nullptr) << describe(ok.get());
  Tensor result(sum);
  EXPECT_EQ(ctl_tensor_device(result.get()), cpu) << "explicit mode: the first input's device";
  EXPECT_EQ(to_vector<float>(result.get()), (std::vector<float>{11, 22, 33}));
  const auto records = report(d.runtime.get());
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].kind, CTL_PLACEMENT_MOVE);
  EXPECT_EQ(records[0].op, CTL_OP_ADD);
  EXPECT_EQ(records[0].from, ref);
  EXPECT_EQ(records[0].to, cpu);
  EXPECT_EQ(records[0].count, 1u);
  EXPECT_EQ(records[0].bytes, 12u);

  // ctl_op_run_into: inputs go to the output's device.
  Tensor out = from_vector<float>(ref, CTL_DTYPE_F32, {3}, {0, 0, 0});
  ctl_tensor* inputs[2] = {a.get(), b.get()};
  ctl_tensor* outputs[1] = {out.get()};
  Status into(ctl_op_run_into(CTL_OP_MUL, 2, inputs, nullptr, 1, outputs));
  ASSERT_EQ(into, nullptr) << describe(into.get());
  EXPECT_EQ(to_vector<float>(out.get()), (std::vector<float>{10, 40, 90}));
}

// A two-layer MLP step, as examples/mlp does, on `device`; returns the losses.
std::vector<float> train_mlp(ctl_device* device, int steps) {
  std::vector<float> x(16 * 4), w1(4 * 8), w2(8 * 3);
  std::vector<int32_t> y(16);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float((7 * i) % 13) / 6.5f - 1.0f;
  for (size_t i = 0; i < w1.size(); ++i) w1[i] = float((37 * i) % 101) / 101.0f * 0.8f - 0.4f;
  for (size_t i = 0; i < w2.size(); ++i) w2[i] = float((53 * i) % 97) / 97.0f * 0.8f - 0.4f;
  for (size_t i = 0; i < y.size(); ++i) y[i] = int32_t(i % 3);
  Tensor X = from_vector<float>(device, CTL_DTYPE_F32, {16, 4}, x);
  Tensor Y = from_vector<int32_t>(device, CTL_DTYPE_I32, {16}, y);
  Tensor W1 = from_vector<float>(device, CTL_DTYPE_F32, {4, 8}, w1);
  Tensor W2 = from_vector<float>(device, CTL_DTYPE_F32, {8, 3}, w2);
  std::vector<Tensor> params;
  params.push_back(std::move(W1));
  params.push_back(std::move(W2));
  std::vector<Tensor> m, v;
  for (auto& p : params) {
    Status s(ctl_tensor_set_requires_grad(p.get(), true));
    m.push_back(from_vector<float>(device, CTL_DTYPE_F32, {ctl_tensor_numel(p.get())},
                                   std::vector<float>(ctl_tensor_numel(p.get()))));
    v.push_back(from_vector<float>(device, CTL_DTYPE_F32, {ctl_tensor_numel(p.get())},
                                   std::vector<float>(ctl_tensor_numel(p.get()))));
  }
  std::vector<float> losses;
  for (int step = 1; step <= steps; ++step) {
    ctl_tensor *h = nullptr, *a = nullptr, *logits = nullptr, *loss = nullptr;
    Status s1(ctl_op_matmul(X.get(), params[0].get(), &h));
    if (s1) {
      ADD_FAILURE() << describe(s1.get());
      return losses;
    }
    Tensor H(h);
    Status s2(ctl_op_unary(CTL_OP_RELU, H.get(), &a));
    if (s2) {
      ADD_FAILURE() << describe(s2.get());
      return losses;
    }
    Tensor A(a);
    Status s3(ctl_op_matmul(A.get(), params[1].get(), &logits));
    Tensor L(logits);
    ctl_cross_entropy_attrs ce{};
    ce.struct_size = CTL_CROSS_ENTROPY_ATTRS_STRUCT_SIZE;
    ctl_tensor* ce_inputs[2] = {L.get(), Y.get()};
    Status s4(ctl_op_run(CTL_OP_CROSS_ENTROPY, 2, ce_inputs, &ce, 1, &loss));
    Tensor Loss(loss);
    Status s5(ctl_tensor_backward(Loss.get(), nullptr));
    EXPECT_EQ(s5, nullptr) << describe(s5.get());
    losses.push_back(to_vector<float>(Loss.get())[0]);
    for (size_t i = 0; i < params.size(); ++i) {
      ctl_tensor* grad = nullptr;
      Status g(ctl_tensor_grad(params[i].get(), &grad));
      Tensor G(grad);
      ctl_tensor* flat_grad = nullptr;
      const int64_t n = ctl_tensor_numel(params[i].get());
      Status r(ctl_tensor_reshape(G.get(), 1, &n, &flat_grad));
      Tensor FG(flat_grad);
      ctl_tensor* flat_param = nullptr;
      Status r2(ctl_tensor_reshape(params[i].get(), 1, &n, &flat_param));
      Tensor FP(flat_param);
      ctl_adamw_attrs adam{CTL_ADAMW_ATTRS_STRUCT_SIZE, 0.01, 0.9, 0.999, 1e-8, 0.0, uint64_t(step)};
      ctl_tensor* in[1] = {FG.get()};
      ctl_tensor* out[3] = {FP.get(), m[i].get(), v[i].get()};
      Status st(ctl_op_run_into(CTL_OP_ADAMW_STEP, 1, in, &adam, 3, out));
      EXPECT_EQ(st, nullptr) << describe(st.get());
      Status z(ctl_tensor_zero_grad(params[i].get()));
    }
  }
  return losses;
}

class Fallback : public ::testing::Test {
 protected:
  // Automatic mode ranks devices by the host topology: a synthetic one keeps the test from
  // depending on this machine (and hwloc's PCI discovery, which leaks a little under
  // LeakSanitizer, out of it).
  void SetUp() override {
    setenv("CATALYST_TEST_LACKING_OP", std::to_string(CTL_OP_RELU).c_str(), 1);
    setenv("HWLOC_SYNTHETIC", "pack:1 numa:1 core:2 pu:1", 1);
  }
  void TearDown() override {
    unsetenv("CATALYST_TEST_LACKING_OP");
    unsetenv("CATALYST_TEST_LACKING_NO_HOST_POINTERS");
    unsetenv("HWLOC_SYNTHETIC");
  }
};

TEST_F(Fallback, ForbiddenFailsOnTheFirstUnsupportedOpNamingOpDeviceAndHowToAllow) {
  Devices d = make_runtime({CTL_TEST_LACKING_PLUGIN, CTL_TEST_CPU_PLUGIN}, false);
  ctl_device* lacking = find_device(d.runtime.get(), "lacking");
  ASSERT_NE(lacking, nullptr);
  Tensor x = from_vector<float>(lacking, CTL_DTYPE_F32, {2}, {-1, 2});
  ctl_tensor* y = nullptr;
  Status s(ctl_op_unary(CTL_OP_RELU, x.get(), &y));
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(ctl_status_get_code(s.get()), CTL_STATUS_UNSUPPORTED);
  const std::string message = ctl_status_get_message(s.get());
  EXPECT_NE(message.find("relu"), std::string::npos) << message;
  EXPECT_NE(message.find("lacking:0"), std::string::npos) << message;
  EXPECT_NE(message.find("allow fallback"), std::string::npos) << message;
  EXPECT_TRUE(report(d.runtime.get()).empty());
}

TEST_F(Fallback, AllowedTrainsTheMlpAsTheCpuDoesAndCountsEveryFallback) {
  Devices d = make_runtime({CTL_TEST_LACKING_PLUGIN, CTL_TEST_CPU_PLUGIN}, false);
  ctl_device* lacking = find_device(d.runtime.get(), "lacking");
  ctl_device* cpu = find_device(d.runtime.get(), "cpu");
  ASSERT_NE(lacking, nullptr);
  ASSERT_NE(cpu, nullptr);
  constexpr int kSteps = 6;
  const std::vector<float> expected = train_mlp(cpu, kSteps);
  ASSERT_EQ(expected.size(), size_t(kSteps));
  EXPECT_LT(expected.back(), expected.front()) << "the MLP learns";
  report(d.runtime.get(), /*reset=*/true);

  set_policy(d.runtime.get(), false, /*fallback=*/true);
  const std::vector<float> losses = train_mlp(lacking, kSteps);
  // The same kernels run the same ops in the same order: bit for bit the CPU's losses.
  EXPECT_EQ(losses, expected);
  uint64_t fallbacks = 0;
  for (const auto& r : report(d.runtime.get())) {
    if (r.kind != CTL_PLACEMENT_FALLBACK) continue;
    EXPECT_EQ(r.op, CTL_OP_RELU) << "only relu is missing";
    EXPECT_EQ(r.from, lacking);
    EXPECT_EQ(r.to, cpu);
    fallbacks += r.count;
  }
  // One forward relu per step; relu's backward rule is not a relu call (autograd_rules.cpp).
  EXPECT_EQ(fallbacks, uint64_t(kSteps));
}

// Each record carries the time its events took (1.6): a fallback's whole call, which holds
// the moves made for it, so it is at least as long as they are; a 1.5 caller's smaller
// struct gets the other fields and nothing past its end.
TEST_F(Fallback, RecordsGiveTheTimeEachFallbackAndMoveTook) {
  setenv("CATALYST_TEST_LACKING_NO_HOST_POINTERS", "1", 1);  // moves, not shared host memory
  Devices d = make_runtime({CTL_TEST_LACKING_PLUGIN, CTL_TEST_CPU_PLUGIN}, false);
  ctl_device* lacking = find_device(d.runtime.get(), "lacking");
  ASSERT_NE(lacking, nullptr);
  set_policy(d.runtime.get(), false, /*fallback=*/true);
  std::vector<float> values(1 << 16);
  for (size_t i = 0; i < values.size(); ++i) values[i] = float(i % 7) - 3.0f;
  Tensor x = from_vector<float>(lacking, CTL_DTYPE_F32, {int64_t(values.size())}, values);
  for (int i = 0; i < 3; ++i) {
    ctl_tensor* y = nullptr;
    Status s(ctl_op_unary(CTL_OP_RELU, x.get(), &y));
    ASSERT_EQ(s, nullptr) << describe(s.get());
    Tensor Y(y);
  }
  uint64_t fallback_ns = 0, move_ns = 0;
  for (const auto& r : report(d.runtime.get())) {
    if (r.op != CTL_OP_RELU) continue;
    EXPECT_GT(r.nanoseconds, 0u) << (r.kind == CTL_PLACEMENT_FALLBACK ? "fallback" : "move");
    (r.kind == CTL_PLACEMENT_FALLBACK ? fallback_ns : move_ns) += r.nanoseconds;
  }
  EXPECT_GT(move_ns, 0u);
  EXPECT_GE(fallback_ns, move_ns) << "a fallback's time holds its moves";

  constexpr size_t kOlderSize = offsetof(ctl_placement_record, nanoseconds);
  std::vector<ctl_placement_record> older(8);
  for (auto& r : older) {
    r.struct_size = kOlderSize;
    r.nanoseconds = 0xC0FFEE;
  }
  size_t count = 0;
  Status s(ctl_runtime_placement_report(d.runtime.get(), older.data(), older.size(), &count, false));
  ASSERT_EQ(s, nullptr) << describe(s.get());
  ASSERT_GT(count, 0u);
  for (size_t i = 0; i < std::min(count, older.size()); ++i) {
    EXPECT_EQ(older[i].struct_size, kOlderSize);
    EXPECT_GT(older[i].count, 0u);
    EXPECT_EQ(older[i].nanoseconds, 0xC0FFEEu) << "written past a 1.5 caller's struct";
  }
}

// A chain of relu, exp, relu, exp whose ops all fall back, then a sum the lacking device runs,
// and its gradient: the values and gradients, and the bytes moved for the forward ops
// (to the CPU, and back).
struct ChainRun {
  std::vector<float> values, grad, cpu_values, cpu_grad;
  uint64_t to_cpu = 0, back = 0, fallbacks = 0;
};
ChainRun run_chain() {
  setenv("CATALYST_TEST_LACKING_OP", (std::to_string(CTL_OP_RELU) + "," + std::to_string(CTL_OP_EXP)).c_str(), 1);
  Devices d = make_runtime({CTL_TEST_LACKING_PLUGIN, CTL_TEST_CPU_PLUGIN}, false);
  ctl_device* lacking = find_device(d.runtime.get(), "lacking");
  ctl_device* cpu = find_device(d.runtime.get(), "cpu");
  if (!lacking || !cpu) return {};
  const std::vector<float> values = {-1.5f, -0.25f, 0.0f, 0.5f, 1.0f, 2.0f};
  // exp(relu(exp(relu(x)))) and its gradient, on the CPU and through the lacking device.
  auto run = [&](ctl_device* device, std::vector<float>* grad) {
    Tensor x = from_vector<float>(device, CTL_DTYPE_F32, {int64_t(values.size())}, values);
    Status r(ctl_tensor_set_requires_grad(x.get(), true));
    std::vector<Tensor> chain;
    ctl_tensor* current = x.get();
    for (ctl_op_id op : {CTL_OP_RELU, CTL_OP_EXP, CTL_OP_RELU, CTL_OP_EXP}) {
      ctl_tensor* y = nullptr;
      Status s(ctl_op_unary(op, current, &y));
      EXPECT_EQ(s, nullptr) << describe(s.get());
      chain.emplace_back(y);
      current = y;
    }
    EXPECT_EQ(ctl_tensor_device(current), device) << "results are on the device asked";
    ctl_tensor* total = nullptr;
    Status s(ctl_op_reduce(CTL_OP_SUM, current, 0, nullptr, false, &total));  // the lacking device runs sum
    EXPECT_EQ(s, nullptr) << describe(s.get());
    Tensor T(total);
    Status b(ctl_tensor_backward(T.get(), nullptr));
    EXPECT_EQ(b, nullptr) << describe(b.get());
    ctl_tensor* g = nullptr;
    Status gs(ctl_tensor_grad(x.get(), &g));
    Tensor G(g);
    *grad = to_vector<float>(G.get());
    return to_vector<float>(current);
  };
  ChainRun out;
  out.cpu_values = run(cpu, &out.cpu_grad);
  report(d.runtime.get(), /*reset=*/true);
  set_policy(d.runtime.get(), false, /*fallback=*/true);
  out.values = run(lacking, &out.grad);
  for (const auto& r : report(d.runtime.get())) {
    if (r.kind == CTL_PLACEMENT_FALLBACK) {
      out.fallbacks += r.count;
    } else if (r.op == CTL_OP_RELU || r.op == CTL_OP_EXP) {
      (r.to == cpu ? out.to_cpu : out.back) += r.bytes;
    }
  }
  return out;
}

// Between devices whose memory the host cannot address (a GPU's), a chain of fallbacks moves
// only its ends (placement/lazy_move.h): the first input there, and a result back only when
// the lacking device needs it (here the sum). Gradients come back the same way.
TEST_F(Fallback, AChainOfFallbacksMovesOnlyItsEnds) {
  setenv("CATALYST_TEST_LACKING_NO_HOST_POINTERS", "1", 1);
  const ChainRun r = run_chain();
  ASSERT_FALSE(r.values.empty());
  EXPECT_EQ(r.values, r.cpu_values);
  EXPECT_EQ(r.grad, r.cpu_grad);
  // Four forward ops fall back (relu's backward is not a relu call; exp's multiplies by the
  // saved result, on the CPU).
  EXPECT_GE(r.fallbacks, 4u);
  const uint64_t bytes = r.values.size() * sizeof(float);
  EXPECT_EQ(r.to_cpu, bytes) << "x moves to the CPU once, not before each op";
  EXPECT_EQ(r.back, bytes) << "only the last result comes back, for sum on the lacking device";
}

// Between two devices that address host memory (the lacking device is the CPU plugin
// underneath), a fallback shares the bytes (placement/host_share.h): nothing moves, and the
// values and gradients are the CPU's.
TEST_F(Fallback, FallbacksBetweenHostMemoryDevicesShareTheBytes) {
  const ChainRun r = run_chain();
  ASSERT_FALSE(r.values.empty());
  EXPECT_EQ(r.values, r.cpu_values);
  EXPECT_EQ(r.grad, r.cpu_grad);
  EXPECT_GE(r.fallbacks, 4u);
  EXPECT_EQ(r.to_cpu, 0u);
  EXPECT_EQ(r.back, 0u);
}

// Explicit mode tries the policy's devices in its order; automatic mode ranks them by the
// topology (device_ranking.h), which never picks the built-in reference device.
TEST_F(Fallback, ExplicitFollowsThePolicyOrderAndAutomaticTheTopologyRanking) {
  Devices d = make_runtime({CTL_TEST_LACKING_PLUGIN, CTL_TEST_CPU_PLUGIN}, /*reference=*/true);
  ctl_device* lacking = find_device(d.runtime.get(), "lacking");
  ctl_device* cpu = find_device(d.runtime.get(), "cpu");
  ctl_device* ref = find_device(d.runtime.get(), "reference");
  ASSERT_TRUE(lacking && cpu && ref);
  auto ran_on = [&](ctl_placement_mode mode) -> ctl_device* {
    std::vector<ctl_device*> order = {lacking, ref, cpu};
    ctl_placement_policy p{};
    p.struct_size = CTL_PLACEMENT_POLICY_STRUCT_SIZE;
    p.devices = order.data();
    p.device_count = order.size();
    p.mode = mode;
    p.allow_fallback = true;
    Status s(ctl_runtime_set_placement_policy(d.runtime.get(), &p));
    EXPECT_EQ(s, nullptr) << describe(s.get());
    report(d.runtime.get(), /*reset=*/true);
    Tensor x = from_vector<float>(lacking, CTL_DTYPE_F32, {3}, {-1, 0, 2});
    ctl_tensor* y = nullptr;
    Status run(ctl_op_unary(CTL_OP_RELU, x.get(), &y));
    EXPECT_EQ(run, nullptr) << describe(run.get());
    Tensor Y(y);
    EXPECT_EQ(ctl_tensor_device(Y.get()), lacking) << "results come back to the device asked";
    EXPECT_EQ(to_vector<float>(Y.get()), (std::vector<float>{0, 0, 2}));
    for (const auto& r : report(d.runtime.get())) {
      if (r.kind == CTL_PLACEMENT_FALLBACK) return r.to;
    }
    return nullptr;
  };
  EXPECT_EQ(ran_on(CTL_PLACEMENT_EXPLICIT), ref);
  EXPECT_EQ(ran_on(CTL_PLACEMENT_AUTOMATIC), cpu);
}

TEST(Placement, TransferCarriesGradientsBackToTheSourceDevice) {
  Devices d = make_runtime({CTL_TEST_CPU_PLUGIN});
  ctl_device* cpu = d.list[0];
  ctl_device* ref = d.list[1];
  Tensor w = from_vector<float>(cpu, CTL_DTYPE_F32, {3}, {1, -2, 3});
  Status s(ctl_tensor_set_requires_grad(w.get(), true));
  ctl_tensor* moved = nullptr;
  Status t(ctl_tensor_transfer(w.get(), ref, &moved));
  ASSERT_EQ(t, nullptr) << describe(t.get());
  Tensor M(moved);
  EXPECT_EQ(ctl_tensor_device(M.get()), ref);
  ctl_tensor *sq = nullptr, *sum = nullptr;
  Status s1(ctl_op_binary(CTL_OP_MUL, M.get(), M.get(), &sq));
  Tensor SQ(sq);
  Status s2(ctl_op_reduce(CTL_OP_SUM, SQ.get(), 0, nullptr, false, &sum));
  Tensor SUM(sum);
  Status b(ctl_tensor_backward(SUM.get(), nullptr));
  ASSERT_EQ(b, nullptr) << describe(b.get());
  ctl_tensor* grad = nullptr;
  Status g(ctl_tensor_grad(w.get(), &grad));
  ASSERT_EQ(g, nullptr) << describe(g.get());
  Tensor G(grad);
  EXPECT_EQ(ctl_tensor_device(G.get()), cpu) << "the gradient of a cpu leaf lives on cpu";
  EXPECT_EQ(to_vector<float>(G.get()), (std::vector<float>{2, -4, 6}));
  // ctl_tensor_to_device is not recorded: no gradient reaches w through it.
  Status z(ctl_tensor_zero_grad(w.get()));
  Tensor plain = move(w.get(), ref);
  EXPECT_FALSE(ctl_tensor_requires_grad(plain.get()));
}

TEST(Placement, DeviceUsageCountsMemoryAndOps) {
  Devices d = make_runtime({CTL_TEST_CPU_PLUGIN}, false);
  ctl_device* cpu = d.list[0];
  auto usage = [&] {
    ctl_device_usage u{};
    u.struct_size = CTL_DEVICE_USAGE_STRUCT_SIZE;
    Status s(ctl_device_get_usage(cpu, &u));
    EXPECT_EQ(s, nullptr);
    return u;
  };
  const ctl_device_usage before = usage();
  {
    Tensor big = from_vector<float>(cpu, CTL_DTYPE_F32, {1 << 16}, std::vector<float>(1 << 16, 1.0f));
    ctl_tensor* e = nullptr;
    Status s(ctl_op_unary(CTL_OP_EXP, big.get(), &e));
    Tensor E(e);
    const ctl_device_usage during = usage();
    EXPECT_EQ(during.memory_in_use - before.memory_in_use, 2u * 4u * (1u << 16));
    EXPECT_GE(during.memory_peak, during.memory_in_use);
    EXPECT_GT(during.ops, before.ops);
    EXPECT_GT(during.busy_ns, before.busy_ns);
  }
  EXPECT_EQ(usage().memory_in_use, before.memory_in_use) << "freed tensors leave no memory counted";
}

TEST(Placement, BadArgumentsGetStatusesAndChangeNothing) {
  Devices d = make_runtime({CTL_TEST_CPU_PLUGIN});
  Devices other = make_runtime({CTL_TEST_CPU_PLUGIN});
  ctl_placement_policy p{};
  p.struct_size = CTL_PLACEMENT_POLICY_STRUCT_SIZE;
  EXPECT_EQ(ctl_status_get_code(Status(ctl_runtime_set_placement_policy(nullptr, &p)).get()),
            CTL_STATUS_INVALID_ARGUMENT);
  ctl_device* foreign[1] = {other.list[0]};
  p.devices = foreign;
  p.device_count = 1;
  p.allow_fallback = true;
  Status s(ctl_runtime_set_placement_policy(d.runtime.get(), &p));
  ASSERT_NE(s, nullptr);
  EXPECT_NE(std::string(ctl_status_get_message(s.get())).find("another runtime"), std::string::npos);
  ctl_device* twice[2] = {d.list[0], d.list[0]};
  p.devices = twice;
  p.device_count = 2;
  EXPECT_NE(Status(ctl_runtime_set_placement_policy(d.runtime.get(), &p)), nullptr);
  p.devices = nullptr;
  EXPECT_NE(Status(ctl_runtime_set_placement_policy(d.runtime.get(), &p)), nullptr);
  p.device_count = 0;
  p.mode = static_cast<ctl_placement_mode>(7);
  EXPECT_NE(Status(ctl_runtime_set_placement_policy(d.runtime.get(), &p)), nullptr);
  p.mode = CTL_PLACEMENT_EXPLICIT;
  p.struct_size = 8;
  EXPECT_NE(Status(ctl_runtime_set_placement_policy(d.runtime.get(), &p)), nullptr);
  // None of the refused policies took effect: cross-device inputs are still refused.
  Tensor a = from_vector<float>(d.list[0], CTL_DTYPE_F32, {1}, {1});
  Tensor b = from_vector<float>(d.list[1], CTL_DTYPE_F32, {1}, {1});
  ctl_tensor* out = nullptr;
  EXPECT_NE(Status(ctl_op_binary(CTL_OP_ADD, a.get(), b.get(), &out)), nullptr);

  // A released tensor beside a live one on another device: its own error, no move, no crash,
  // even with every placement permission given.
  set_policy(d.runtime.get(), /*cross=*/true, /*fallback=*/true);
  ctl_tensor* doomed = nullptr;
  Status made(ctl_tensor_to_device(a.get(), d.list[1], &doomed));
  ctl_tensor_release(doomed);  // released: a dead handle from here on
  ctl_tensor* with_dead[3] = {a.get(), b.get(), doomed};
  Status dead(ctl_op_run(CTL_OP_WHERE, 3, with_dead, nullptr, 1, &out));
  ASSERT_NE(dead, nullptr);
  EXPECT_EQ(ctl_status_get_code(dead.get()), CTL_STATUS_INVALID_ARGUMENT);
  ctl_tensor* sum_dead[2] = {doomed, b.get()};
  ctl_tensor* into[1] = {a.get()};
  EXPECT_NE(Status(ctl_op_run_into(CTL_OP_ADD, 2, sum_dead, nullptr, 1, into)), nullptr);
  EXPECT_NE(Status(ctl_tensor_transfer(nullptr, d.list[1], &out)), nullptr);
  EXPECT_NE(Status(ctl_tensor_transfer(a.get(), nullptr, &out)), nullptr);
  EXPECT_NE(Status(ctl_tensor_transfer(a.get(), d.list[1], nullptr)), nullptr);
  EXPECT_NE(Status(ctl_tensor_transfer(a.get(), other.list[0], &out)), nullptr);
  // ctl_tensor_to_device to another runtime's device worked before 1.4 and still does
  // (through host memory); only the recorded transfer, new in 1.4, stays in one runtime.
  Status across(ctl_tensor_to_device(a.get(), other.list[0], &out));
  ASSERT_EQ(across, nullptr) << describe(across.get());
  Tensor there(out);
  EXPECT_EQ(to_vector<float>(there.get()), (std::vector<float>{1}));
  size_t count = 0;
  EXPECT_NE(Status(ctl_runtime_placement_report(nullptr, nullptr, 0, &count, false)), nullptr);
  EXPECT_NE(Status(ctl_runtime_placement_report(d.runtime.get(), nullptr, 0, nullptr, false)), nullptr);
  EXPECT_NE(Status(ctl_runtime_placement_report(d.runtime.get(), nullptr, 3, &count, false)), nullptr);
  ctl_placement_record unsized{};
  EXPECT_NE(Status(ctl_runtime_placement_report(d.runtime.get(), &unsized, 1, &count, false)), nullptr);
  ctl_device_usage u{};
  EXPECT_NE(Status(ctl_device_get_usage(d.list[0], &u)), nullptr) << "struct_size 0";
  EXPECT_NE(Status(ctl_device_get_usage(nullptr, &u)), nullptr);
  u.struct_size = CTL_DEVICE_USAGE_STRUCT_SIZE;
  EXPECT_NE(Status(ctl_device_get_usage(d.list[0], nullptr)), nullptr);
}

}  // namespace
