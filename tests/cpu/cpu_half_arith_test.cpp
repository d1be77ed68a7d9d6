// cpu_half_arith_test.cpp — the CPU plugin's f16 and bf16 add, sub, mul and div give, bit
// for bit, what the scalar rule gives: both operands widened to f32, the f32 operation
// (IEEE, one rounding), then one rounding to the dtype, to nearest even. Contiguous runs and
// runs against a broadcast element take the f32 vector kernel on widened chunks
// (elementwise_binary.cpp), so every 16-bit pattern meets a scrambled partner there, at an
// odd length (vector tails), against a broadcast element and through strided views, which
// keep the scalar rule. NaN results must be NaN; their payloads are not compared (which
// operand's NaN an f32 operation returns is the instruction's choice). CTest runs it on
// each ISA path (CATALYST_CPU_ISA).
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "catalyst/sdk/half.hpp"
#include "test_support.hpp"

using namespace ctltest;
namespace sdk = catalyst::sdk;

namespace {

float widen(ctl_dtype d, uint16_t h) {
  return d == CTL_DTYPE_F16 ? sdk::half_to_float(h) : sdk::bf16_to_float(h);
}
uint16_t narrow(ctl_dtype d, float f) {
  return d == CTL_DTYPE_F16 ? sdk::float_to_half(f) : sdk::float_to_bf16(f);
}

float apply(ctl_op_id op, float a, float b) {
  switch (op) {
    case CTL_OP_ADD:
      return a + b;
    case CTL_OP_SUB:
      return a - b;
    case CTL_OP_MUL:
      return a * b;
    default:
      return a / b;
  }
}

struct CpuHalfArith : ::testing::Test {
  void SetUp() override {
    paths = {CTL_TEST_CPU_PLUGIN};
    const ctl_runtime_options opts = options(&paths);
    ctl_runtime* raw = nullptr;
    Status created(ctl_runtime_create(&opts, &raw));
    ASSERT_EQ(created, nullptr) << describe(created.get());
    runtime = Runtime(raw);
    device = find_device(runtime.get(), "cpu");
    ASSERT_NE(device, nullptr);
  }
  // out = op(a, b) on the device, as 16-bit patterns.
  std::vector<uint16_t> run(ctl_op_id op, ctl_tensor* a, ctl_tensor* b) {
    ctl_tensor* out = nullptr;
    Status s(ctl_op_binary(op, a, b, &out));
    EXPECT_EQ(s, nullptr) << describe(s.get());
    if (s) return {};
    Tensor owned(out);
    return to_vector<uint16_t>(owned.get());
  }
  std::vector<const char*> paths;
  Runtime runtime;
  ctl_device* device = nullptr;
};

// Every mismatch of `got` against the scalar rule over the pairs (a[i], b[i]), as text.
std::string mismatches(ctl_dtype d, ctl_op_id op, const std::vector<uint16_t>& a, const std::vector<uint16_t>& b,
                       const std::vector<uint16_t>& got) {
  std::string text;
  int shown = 0;
  if (got.size() != a.size()) return "size " + std::to_string(got.size()) + " != " + std::to_string(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const uint16_t want = narrow(d, apply(op, widen(d, a[i]), widen(d, b[i])));
    const bool both_nan = std::isnan(widen(d, want)) && std::isnan(widen(d, got[i]));
    if (want != got[i] && !both_nan && shown++ < 5) {
      char line[160];
      std::snprintf(line, sizeof line, "[%zu] 0x%04x op 0x%04x: got 0x%04x, want 0x%04x; ", i, a[i], b[i], got[i],
                    want);
      text += line;
    }
  }
  return text;
}

TEST_F(CpuHalfArith, HalfArithmeticIsTheScalarRuleBitForBit) {
  for (ctl_dtype d : {CTL_DTYPE_F16, CTL_DTYPE_BF16}) {
    // Every pattern against a scrambled one (an odd multiplier walks all 65536), plus 3
    // more elements for an odd length.
    const int64_t n = 65536 + 3;
    std::vector<uint16_t> a(n), b(n);
    for (int64_t i = 0; i < n; ++i) {
      a[i] = static_cast<uint16_t>(i);
      b[i] = static_cast<uint16_t>(i * 40503 + 12345);
    }
    Tensor ta = from_vector<uint16_t>(device, d, {n}, a);
    Tensor tb = from_vector<uint16_t>(device, d, {n}, b);
    // A broadcast element: b's element 7 expanded over n.
    ctl_tensor* one = nullptr;
    Status sliced(ctl_tensor_slice(tb.get(), 0, 7, 8, 1, &one));
    ASSERT_EQ(sliced, nullptr) << describe(sliced.get());
    Tensor single(one);
    ctl_tensor* expanded = nullptr;
    Status grown(ctl_tensor_expand(single.get(), 1, &n, &expanded));
    ASSERT_EQ(grown, nullptr) << describe(grown.get());
    Tensor broadcast(expanded);
    // Strided views: every other element of each.
    ctl_tensor *ea = nullptr, *eb = nullptr;
    Status s1(ctl_tensor_slice(ta.get(), 0, 0, n, 2, &ea));
    Status s2(ctl_tensor_slice(tb.get(), 0, 0, n, 2, &eb));
    ASSERT_EQ(s1, nullptr);
    ASSERT_EQ(s2, nullptr);
    Tensor even_a(ea), even_b(eb);
    std::vector<uint16_t> evens_a, evens_b;
    for (int64_t i = 0; i < n; i += 2) {
      evens_a.push_back(a[i]);
      evens_b.push_back(b[i]);
    }
    for (ctl_op_id op : {CTL_OP_ADD, CTL_OP_SUB, CTL_OP_MUL, CTL_OP_DIV}) {
      SCOPED_TRACE(std::string(d == CTL_DTYPE_F16 ? "f16" : "bf16") + " op " + std::to_string(op));
      EXPECT_EQ(mismatches(d, op, a, b, run(op, ta.get(), tb.get())), "") << "contiguous";
      EXPECT_EQ(mismatches(d, op, a, std::vector<uint16_t>(n, b[7]), run(op, ta.get(), broadcast.get())), "")
          << "a op broadcast b";
      EXPECT_EQ(mismatches(d, op, std::vector<uint16_t>(n, b[7]), a, run(op, broadcast.get(), ta.get())), "")
          << "broadcast b op a";
      EXPECT_EQ(mismatches(d, op, evens_a, evens_b, run(op, even_a.get(), even_b.get())), "") << "strided";
    }
  }
}

}  // namespace
