// cpu_cast_half_test.cpp — the CPU plugin's casts between f32 and f16/bf16 give, bit for
// bit, what the scalar conversion rules give (docs/ops.md's cast: one rounding to nearest
// even from the exact value, NaN stays NaN): every 16-bit pattern widened, and f32 edge
// values (NaN payloads, infinities, subnormals, ties, values that round to infinity) and
// the neighbours of every 16-bit value narrowed. Contiguous runs take the plugin's vector
// conversions (half_convert.*) where the ISA has them, so the cases also come at odd
// lengths and offsets (vector tails), inner-contiguous strided views and fully strided
// ones. CTest runs it on each ISA path (CATALYST_CPU_ISA).
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "catalyst/sdk/half.hpp"
#include "test_support.hpp"

using namespace ctltest;
namespace sdk = catalyst::sdk;

namespace {

// The scalar rules the plugin must match (cast_rules.h's convert, written out).
float widen(ctl_dtype d, uint16_t h) {
  return d == CTL_DTYPE_F16 ? sdk::half_to_float(h) : sdk::bf16_to_float(h);
}
uint16_t narrow(ctl_dtype d, float f) {
  return d == CTL_DTYPE_F16 ? sdk::double_to_half(static_cast<double>(f)) : sdk::double_to_bf16(static_cast<double>(f));
}

const char* name(ctl_dtype d) {
  return d == CTL_DTYPE_F16 ? "f16" : d == CTL_DTYPE_BF16 ? "bf16" : "f32";
}

// f32 values whose rounding to d is worth checking: fixed edge values, and for every
// 16-bit pattern its widened value, the exact midpoint to the next pattern (a tie) and the
// f32 neighbours of both.
std::vector<uint32_t> narrowing_inputs(ctl_dtype d) {
  std::vector<uint32_t> bits = {
      0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u,  // zeros, infinities
      0x7fc00000u, 0xffc00000u, 0x7fffffffu, 0xffffffffu,  // quiet NaNs
      0x7f800001u, 0xff800001u, 0x7fbfffffu, 0x7f80ffffu,  // signalling NaNs, payload low only
      0x7f808000u, 0x7fc0ffffu, 0x7f817fffu, 0xffbf8000u,  // payloads that would carry
      0x00000001u, 0x80000001u, 0x007fffffu, 0x807fffffu,  // f32 subnormals
      0x00400000u, 0x00008000u, 0x00018000u, 0x00010000u,  // bf16-subnormal ties
      0x7f7fffffu, 0xff7fffffu, 0x7f7f8000u, 0x7f7f7fffu,  // rounds to inf in bf16, or not
      0x477fe000u, 0x477fefffu, 0x477ff000u, 0xc77ff000u,  // f16 65504, below/at 65520
      0x33000000u, 0x33000001u, 0x33400000u, 0xb3000001u,  // f16: half the least subnormal
      0x38800000u, 0x387fe000u, 0x387ff000u, 0x387fffffu,  // f16: least normal, its edges
      0x3f808000u, 0x3f818000u, 0x3f800001u, 0x3f8000ffu,  // bf16 ties to even, not ties
      0x3f801000u, 0x3f803000u, 0x3f801001u, 0x3f800fffu,  // f16 ties to even, not ties
  };
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    const float f = widen(d, static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    const uint32_t b = std::bit_cast<uint32_t>(f);
    bits.push_back(b);
    bits.push_back(b + 1);
    bits.push_back(b - 1);
    const uint16_t next = static_cast<uint16_t>((h & 0x7fffu) == 0x7fffu ? h : h + 1);
    const float g = widen(d, next);
    if (std::isnan(g) || std::isinf(g) || std::isinf(f)) continue;
    // f32 holds the midpoint of two 16-bit neighbours exactly.
    const uint32_t mid = std::bit_cast<uint32_t>(static_cast<float>((static_cast<double>(f) + g) / 2));
    bits.push_back(mid);
    bits.push_back(mid + 1);
    bits.push_back(mid - 1);
  }
  // A sparse sweep over all f32 patterns (a prime step), NaNs included.
  for (uint64_t b = 7; b < (uint64_t{1} << 32); b += 40009) bits.push_back(static_cast<uint32_t>(b));
  return bits;
}

class CpuCastHalf : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<const char*> paths = {CTL_TEST_CPU_PLUGIN};
    const ctl_runtime_options opts = options(&paths);
    ctl_runtime* raw = nullptr;
    CTL_ASSERT_OK(ctl_runtime_create(&opts, &raw));
    runtime_.reset(raw);
    device_ = find_device(runtime_.get(), "cpu");
    ASSERT_NE(device_, nullptr);
  }

  Tensor upload(ctl_dtype d, const void* data, int64_t n) {
    ctl_tensor* t = nullptr;
    const size_t bytes = static_cast<size_t>(n) * (d == CTL_DTYPE_F32 ? 4 : 2);
    Status s(ctl_tensor_from_host(device_, d, 1, &n, data, bytes, &t));
    EXPECT_EQ(s, nullptr) << describe(s.get());
    return Tensor(t);
  }

  // Casts x (any view) to `to` and returns the result's raw bits, widened to 32.
  std::vector<uint32_t> cast_bits(ctl_tensor* x, ctl_dtype to) {
    ctl_tensor* y = nullptr;
    Status s(ctl_op_cast(x, to, &y));
    EXPECT_EQ(s, nullptr) << describe(s.get());
    Tensor owner(y);
    const int64_t n = ctl_tensor_numel(y);
    std::vector<uint32_t> out(static_cast<size_t>(n));
    if (to == CTL_DTYPE_F32) {
      s.reset(ctl_tensor_to_host(y, out.data(), out.size() * 4));
    } else {
      std::vector<uint16_t> h(static_cast<size_t>(n));
      s.reset(ctl_tensor_to_host(y, h.data(), h.size() * 2));
      for (size_t i = 0; i < h.size(); ++i) out[i] = h[i];
    }
    EXPECT_EQ(s, nullptr) << describe(s.get());
    return out;
  }

  // Casts `input` (raw bits of dtype from) to `to`, whole and as sliced and strided views,
  // and compares every element with expected(bits).
  template <class Input, class Expected>
  void check_all_layouts(ctl_dtype from, ctl_dtype to, const std::vector<Input>& input, Expected expected) {
    const int64_t n = static_cast<int64_t>(input.size());
    Tensor whole = upload(from, input.data(), n);
    ASSERT_NE(whole, nullptr);
    int failures = 0;
    auto compare = [&](const char* layout, const std::vector<uint32_t>& got, auto index_of) {
      for (size_t i = 0; i < got.size() && failures < 10; ++i) {
        const uint32_t source = input[static_cast<size_t>(index_of(static_cast<int64_t>(i)))];
        const uint32_t want = expected(source);
        if (got[i] != want) {
          ++failures;
          ADD_FAILURE() << name(from) << " -> " << name(to) << " (" << layout << ") of 0x" << std::hex << source
                        << " gave 0x" << got[i] << ", expected 0x" << want;
        }
      }
    };
    compare("contiguous", cast_bits(whole.get(), to), [](int64_t i) { return i; });
    // Odd starts and lengths: every tail length of a 16-lane vector, and past a parallel part.
    for (int64_t start : {int64_t{1}, int64_t{3}, int64_t{17}, int64_t{31}}) {
      for (int64_t len :
           {int64_t{1}, int64_t{5}, int64_t{15}, int64_t{16}, int64_t{17}, int64_t{33}, int64_t{255}, int64_t{70001}}) {
        if (start + len > n) continue;
        ctl_tensor* raw = nullptr;
        CTL_ASSERT_OK(ctl_tensor_slice(whole.get(), 0, start, start + len, 1, &raw));
        Tensor part(raw);
        const std::string layout = "slice " + std::to_string(start) + "+" + std::to_string(len);
        compare(layout.c_str(), cast_bits(part.get(), to), [start](int64_t i) { return start + i; });
      }
    }
    // Rows of 37 with the first 3 and last 2 columns sliced off: each row a run of 32 at an
    // odd offset (inner-contiguous, outer strided).
    const int64_t cols = 37, rows = n / cols;
    ctl_tensor* raw = nullptr;
    CTL_ASSERT_OK(ctl_tensor_slice(whole.get(), 0, 0, rows * cols, 1, &raw));
    Tensor head(raw);
    const int64_t shape[2] = {rows, cols};
    CTL_ASSERT_OK(ctl_tensor_reshape(head.get(), 2, shape, &raw));
    Tensor matrix(raw);
    CTL_ASSERT_OK(ctl_tensor_slice(matrix.get(), 1, 3, cols - 2, 1, &raw));
    Tensor inner(raw);
    compare("rows of 32 in rows of 37", cast_bits(inner.get(), to),
            [&](int64_t i) { return (i / (cols - 5)) * cols + 3 + i % (cols - 5); });
    // Every third element: no contiguous run at all.
    CTL_ASSERT_OK(ctl_tensor_slice(whole.get(), 0, 1, n, 3, &raw));
    Tensor strided(raw);
    compare("step 3", cast_bits(strided.get(), to), [](int64_t i) { return 1 + 3 * i; });
    // A contiguous input cast into a strided output (ctl_op_run_into): every other element
    // of a buffer twice as long, whose other elements stay as they were.
    const int64_t m = std::min<int64_t>(n, 4099);
    const int64_t twice = 2 * m;
    std::vector<uint32_t> fill(static_cast<size_t>(twice), 0x12345678u);
    std::vector<uint16_t> fill16(static_cast<size_t>(twice), 0x1234u);
    Tensor target = to == CTL_DTYPE_F32 ? upload(to, fill.data(), twice) : upload(to, fill16.data(), twice);
    CTL_ASSERT_OK(ctl_tensor_slice(target.get(), 0, 1, twice, 2, &raw));
    Tensor odd(raw);
    CTL_ASSERT_OK(ctl_tensor_slice(whole.get(), 0, 0, m, 1, &raw));
    Tensor source(raw);
    ctl_tensor* in[1] = {source.get()};
    ctl_tensor* out[1] = {odd.get()};
    CTL_ASSERT_OK(ctl_op_run_into(CTL_OP_CAST, 1, in, nullptr, 1, out));
    std::vector<uint32_t> got = cast_bits(target.get(), to);  // a cast to its own dtype copies
    std::vector<uint32_t> odd_elements, even_elements;
    for (int64_t i = 0; i < twice; ++i) (i % 2 ? odd_elements : even_elements).push_back(got[static_cast<size_t>(i)]);
    compare("into a step-2 output", odd_elements, [](int64_t i) { return i; });
    const uint32_t untouched = to == CTL_DTYPE_F32 ? 0x12345678u : 0x1234u;
    for (uint32_t v : even_elements) ASSERT_EQ(v, untouched) << "the cast wrote between its output's elements";
  }

  Runtime runtime_;
  ctl_device* device_ = nullptr;
};

TEST_F(CpuCastHalf, EverySixteenBitPatternWidensExactly) {
  for (ctl_dtype d : {CTL_DTYPE_BF16, CTL_DTYPE_F16}) {
    SCOPED_TRACE(name(d));
    std::vector<uint16_t> all(0x10000);
    for (uint32_t h = 0; h < 0x10000u; ++h) all[h] = static_cast<uint16_t>(h);
    check_all_layouts(d, CTL_DTYPE_F32, all,
                      [d](uint32_t h) { return std::bit_cast<uint32_t>(widen(d, static_cast<uint16_t>(h))); });
  }
}

TEST_F(CpuCastHalf, F32RoundsToNearestEvenAsTheScalarRule) {
  for (ctl_dtype d : {CTL_DTYPE_BF16, CTL_DTYPE_F16}) {
    SCOPED_TRACE(name(d));
    const std::vector<uint32_t> inputs = narrowing_inputs(d);
    check_all_layouts(CTL_DTYPE_F32, d, inputs,
                      [d](uint32_t b) -> uint32_t { return narrow(d, std::bit_cast<float>(b)); });
  }
}

// The cases above would prove little if the scalar rule's NaN handling were trivial: a
// bf16 made by truncation alone turns some NaNs into infinities, and f16 must keep the
// sign and top payload bits.
TEST(CpuCastHalfRule, NaNsStayNaNsWithTheirTopPayloadBits) {
  EXPECT_EQ(narrow(CTL_DTYPE_BF16, std::bit_cast<float>(0x7f80ffffu)), 0x7fc0u);
  EXPECT_EQ(narrow(CTL_DTYPE_BF16, std::bit_cast<float>(0xff817fffu)), 0xffc1u);
  EXPECT_EQ(narrow(CTL_DTYPE_F16, std::bit_cast<float>(0xff800001u)), 0xfe00u);
  EXPECT_EQ(narrow(CTL_DTYPE_F16, std::bit_cast<float>(0x7fa02000u)), 0x7f01u);
  EXPECT_EQ(narrow(CTL_DTYPE_BF16, std::bit_cast<float>(0x7f7fffffu)), 0x7f80u);  // rounds to inf
  EXPECT_EQ(narrow(CTL_DTYPE_F16, std::bit_cast<float>(0x477ff000u)), 0x7c00u);
}

}  // namespace
