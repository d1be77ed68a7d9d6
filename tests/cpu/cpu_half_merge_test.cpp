// cpu_half_merge_test.cpp — the CPU plugin's merge of f32 tile sums into an f16 or bf16
// matmul output (plugins/cpu/simd/half_merge.cpp), against the SDK's scalar rounding of the
// same f32 value, bit for bit; and the AVX-512 GEMM kernels' own rounding of a tile into
// the output (TileEpilogue::half_out), against the kernel's f32 tile merged. The values are the ones roundings get
// wrong: ties to even either way, the last value below a tie, NaNs with payloads, infinities, signed zeros, f32
// subnormals, values that round up to infinity, and random bit patterns. CTest runs it on the AVX-512 path (vector
// merge, on a CPU that has it) and on AVX2 (scalar merge), so both must give the SDK's bits.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "catalyst/sdk/half.hpp"
#include "gemm_kernels.h"
#include "half_convert.h"
#include "half_merge.h"
#include "isa.h"
#include "vec_kernels.h"

using catalyst::cpu::HalfOutput;
using catalyst::cpu::merge_half_tile;
namespace sdk = catalyst::sdk;

namespace {

constexpr int64_t kRows = 8, kCols = 32;

uint16_t round_to(ctl_dtype d, float v) {
  return d == CTL_DTYPE_F16 ? sdk::float_to_half(v) : sdk::float_to_bf16(v);
}
float widen(ctl_dtype d, uint16_t bits) {
  return d == CTL_DTYPE_F16 ? sdk::half_to_float(bits) : sdk::bf16_to_float(bits);
}

// kRows x kCols floats, the hard cases first (per dtype: its ties sit at other bits).
std::vector<float> hard_values(ctl_dtype d) {
  const uint32_t tie = d == CTL_DTYPE_F16 ? 0x1000u : 0x8000u;  // half an ulp, in f32 bits
  std::vector<uint32_t> bits = {
      0x3f800000u + tie,     0x3f800000u + 3 * tie, 0x3f800000u + tie - 1,  // ties, below a tie
      0x3f800000u + tie + 1, 0xbf800000u + tie,     0xc0400000u + 3 * tie,  //
      0x7fc00000u,           0xffc00001u,           0x7fa00000u,            // NaNs: quiet, payload, signalling,
      0x7fc18000u,           0xffffffffu,           0x7f800001u,            // payloads a rounding carry would change
      0x7f800000u,           0xff800000u,           0x00000000u,            // infinities, zeros
      0x80000000u,           0x00000001u,           0x807fffffu,            // f32 subnormals
      0x7f7fffffu,           0x477ff000u,           0x477fefffu,            // round to infinity, or just not
      0x38800000u,           0x33000000u,           0x33000001u,            // f16 subnormal edges
  };
  std::mt19937 rng(7);
  while (bits.size() < static_cast<size_t>(kRows * kCols)) bits.push_back(rng());
  std::vector<float> v;
  for (uint32_t b : bits) v.push_back(std::bit_cast<float>(b));
  return v;
}

std::string hex(uint32_t v) {
  char text[16];
  snprintf(text, sizeof text, "0x%08x", v);
  return text;
}

class CpuHalfMerge : public ::testing::TestWithParam<ctl_dtype> {};

// alpha 1, nothing added: each output is the one rounding of the tile's value.
TEST_P(CpuHalfMerge, RoundsEveryValueAsTheSdkDoes) {
  const ctl_dtype d = GetParam();
  SCOPED_TRACE(catalyst::cpu::isa_name(catalyst::cpu::active_isa()));
  const std::vector<float> tile = hard_values(d);
  for (const int64_t n : {kCols, int64_t{19}}) {  // whole and partial tiles
    std::vector<uint16_t> out(kRows * kCols, 0xabcd);
    HalfOutput o{d, reinterpret_cast<char*>(out.data()), kCols, 1, nullptr, 0, 0, 1.0f, 0.0f, CTL_ACTIVATION_NONE};
    merge_half_tile(o, tile.data(), kCols, 0, 0, kRows, n);
    for (int64_t i = 0; i < kRows; ++i) {
      for (int64_t j = 0; j < kCols; ++j) {
        const float v = tile[i * kCols + j];
        const uint16_t want = j < n ? round_to(d, v) : 0xabcd;  // columns past n untouched
        ASSERT_EQ(out[i * kCols + j], want)
            << "row " << i << " column " << j << " of " << n << ", value " << hex(std::bit_cast<uint32_t>(v));
      }
    }
  }
}

// alpha, beta times the old output, a bias row and ReLU, all in f32 before the rounding.
TEST_P(CpuHalfMerge, AppliesTheEpilogueInF32ThenRoundsOnce) {
  const ctl_dtype d = GetParam();
  SCOPED_TRACE(catalyst::cpu::isa_name(catalyst::cpu::active_isa()));
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> tile(kRows * kCols);
  for (float& v : tile) v = dist(rng);
  std::vector<uint16_t> old(kRows * kCols), bias(kCols);
  for (uint16_t& b : old) b = round_to(d, dist(rng));
  for (uint16_t& b : bias) b = round_to(d, dist(rng));
  for (const ctl_activation act : {CTL_ACTIVATION_NONE, CTL_ACTIVATION_RELU}) {
    std::vector<uint16_t> out = old;
    HalfOutput o{d,
                 reinterpret_cast<char*>(out.data()),
                 kCols,
                 1,
                 reinterpret_cast<const char*>(bias.data()),
                 0,
                 1,
                 0.75f,
                 -1.5f,
                 act};
    merge_half_tile(o, tile.data(), kCols, 0, 0, kRows, kCols);
    for (int64_t i = 0; i < kRows; ++i) {
      for (int64_t j = 0; j < kCols; ++j) {
        float v = 0.75f * tile[i * kCols + j];
        v = std::fma(-1.5f, widen(d, old[i * kCols + j]), v);
        v += widen(d, bias[j]);
        if (act == CTL_ACTIVATION_RELU) v = v > 0 ? v : 0.0f;
        ASSERT_EQ(out[i * kCols + j], round_to(d, v)) << "activation " << act << ", row " << i << " column " << j;
      }
    }
  }
}

// GELU-tanh: the f32 value through the plugin's f32 vector kernel (as the f32 epilogue
// runs it), then one rounding. Many tiles, so that a merge computing the activation any
// other way (libm's tanh, say) would round differently somewhere.
TEST_P(CpuHalfMerge, GeluTanhIsTheF32VectorKernelRoundedOnce) {
  const ctl_dtype d = GetParam();
  SCOPED_TRACE(catalyst::cpu::isa_name(catalyst::cpu::active_isa()));
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-6.0f, 6.0f);
  std::vector<float> tile(kRows * kCols), want(kCols);
  std::vector<uint16_t> out(kRows * kCols);
  for (int t = 0; t < 2048; ++t) {
    for (float& v : tile) v = dist(rng);
    HalfOutput o{d, reinterpret_cast<char*>(out.data()), kCols, 1, nullptr, 0, 0, 1.0f, 0.0f, CTL_ACTIVATION_GELU_TANH};
    merge_half_tile(o, tile.data(), kCols, 0, 0, kRows, kCols);
    for (int64_t i = 0; i < kRows; ++i) {
      catalyst::cpu::vec_kernels().unary(catalyst::cpu::VecUnary::kGeluTanh, want.data(), &tile[i * kCols], kCols);
      for (int64_t j = 0; j < kCols; ++j) {
        ASSERT_EQ(out[i * kCols + j], round_to(d, want[j]))
            << "tile " << t << ", row " << i << " column " << j << ": " << tile[i * kCols + j];
      }
    }
  }
}

// half_convert.h, which the f16/bf16 elementwise ops run their f32 vector kernels
// through: the hard values (ties, NaNs with payloads, infinities, subnormals) rounded as
// the SDK rounds them, and every 16-bit pattern widened as the SDK widens it, over lengths
// that end inside a vector, with nothing written past n (a signalling NaN stays signalling:
// a cast gives these bits).
TEST_P(CpuHalfMerge, SpanConversionsAreTheSdks) {
  const ctl_dtype d = GetParam();
  SCOPED_TRACE(catalyst::cpu::isa_name(catalyst::cpu::active_isa()));
  const std::vector<float> values = hard_values(d);
  for (const int64_t n : {int64_t{kRows * kCols}, int64_t{253}, int64_t{7}}) {
    std::vector<uint16_t> out(values.size(), 0xabcd);
    catalyst::cpu::f32_span_to_half(d, values.data(), out.data(), n);
    for (int64_t i = 0; i < static_cast<int64_t>(values.size()); ++i) {
      const uint16_t want = i < n ? round_to(d, values[i]) : 0xabcd;
      ASSERT_EQ(out[i], want) << "element " << i << " of " << n << ", value "
                              << hex(std::bit_cast<uint32_t>(values[i]));
    }
  }
  std::vector<uint16_t> all(65536);
  for (uint32_t b = 0; b < 65536; ++b) all[b] = static_cast<uint16_t>(b);
  for (const int64_t n : {int64_t{65536}, int64_t{65533}}) {
    std::vector<float> wide(65536, -1.0f);
    catalyst::cpu::half_span_to_f32(d, all.data(), wide.data(), n);
    for (int64_t i = 0; i < 65536; ++i) {
      const float want = i < n ? widen(d, all[i]) : -1.0f;
      ASSERT_EQ(std::bit_cast<uint32_t>(wide[i]), std::bit_cast<uint32_t>(want))
          << "bits " << hex(all[i]) << " of " << n;
    }
  }
}

// The AVX-512 kernels round a finished tile into the f16/bf16 output from their registers
// (half_out) where the merge would only add a bias and apply ReLU: the same bits as the
// kernel's f32 tile written out and merged, for partial tiles, alpha, the sums of earlier
// depth blocks (overwrite false), each bias layout, ReLU, and NaN, infinite, tied and
// subnormal values among the inputs. Rows and columns past the tile stay untouched.
TEST_P(CpuHalfMerge, KernelRoundingIsTheMergeOfItsTile) {
  using catalyst::cpu::GemmKernel;
  using catalyst::cpu::TileEpilogue;
  const ctl_dtype d = GetParam();
  if (catalyst::cpu::active_isa() != catalyst::cpu::Isa::kAvx512) GTEST_SKIP() << "needs the AVX-512 kernels";
  constexpr int64_t kDepth = 37, kLd = 40;  // an odd depth; output rows wider than a tile
  std::mt19937 rng(23);
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  const std::vector<float> hard = hard_values(d);
  // Values of dtype d, so that the bf16 kernel's inputs are the f32 kernel's too; a few
  // hard ones (NaN, inf, ties) among them.
  auto value = [&](size_t i) {
    const float v = i % 29 == 3 ? hard[i % 24] : dist(rng);
    return widen(d, round_to(d, v));
  };
  struct Kernel {
    const char* name;
    const GemmKernel<float>* f32;
    const GemmKernel<uint16_t, float>* bf16;
  };
  std::vector<Kernel> kernels = {{"f32", &catalyst::cpu::kGemmAvx512F32, nullptr}};
  if (d == CTL_DTYPE_BF16 && catalyst::cpu::isa_info().avx512_bf16) {
    kernels.push_back({"bf16 dot product", nullptr, &catalyst::cpu::kGemmAvx512Bf16});
  }
  for (const Kernel& kernel : kernels) {
    const int mr = kernel.f32 ? kernel.f32->mr : kernel.bf16->mr, nr = kernel.f32 ? kernel.f32->nr : kernel.bf16->nr;
    const int kp = kernel.f32 ? 1 : 2;
    const int64_t groups = (kDepth + kp - 1) / kp;
    // Packed panels (gemm_kernels.h): group g, row i or column j, kp values side by side.
    std::vector<float> a(static_cast<size_t>(groups * mr * kp), 0.0f), b(static_cast<size_t>(groups * nr * kp), 0.0f);
    for (int64_t k = 0; k < kDepth; ++k) {
      for (int i = 0; i < mr; ++i) a[((k / kp) * mr + i) * kp + k % kp] = value(a.size() + k * mr + i);
      for (int j = 0; j < nr; ++j) b[((k / kp) * nr + j) * kp + k % kp] = value(k * nr + j);
    }
    std::vector<uint16_t> a16(a.size()), b16(b.size());
    for (size_t i = 0; i < a.size(); ++i) a16[i] = sdk::float_to_bf16(a[i]);
    for (size_t i = 0; i < b.size(); ++i) b16[i] = sdk::float_to_bf16(b[i]);
    std::vector<float> earlier(static_cast<size_t>(mr * kLd));
    for (float& v : earlier) v = dist(rng) * 16.0f;
    std::vector<uint16_t> bias(static_cast<size_t>(mr * kLd));
    for (size_t i = 0; i < bias.size(); ++i) bias[i] = round_to(d, i % 31 == 5 ? hard[i % 24] : dist(rng));
    auto run = [&](std::vector<float>& c, int m, int n, const TileEpilogue<float>& e) {
      if (kernel.f32) {
        kernel.f32->run(kDepth, a.data(), b.data(), c.data(), kLd, m, n, e);
      } else {
        kernel.bf16->run(kDepth, a16.data(), b16.data(), c.data(), kLd, m, n, e);
      }
    };
    int cases = 0;
    for (const int m : {mr, 7, 1}) {
      for (const int n : {nr, 19, 5}) {
        for (const bool overwrite : {true, false}) {
          for (const float alpha : {1.0f, 0.75f}) {
            for (const int layout : {0, 1, 2, 3}) {  // no bias; [N]; [M, 1]; [M, N]
              for (const bool relu : {false, true}) {
                const int64_t brs = layout == 2 ? 1 : layout == 3 ? kLd : 0, bcs = layout == 1 || layout == 3 ? 1 : 0;
                const uint16_t* bias_at = layout ? bias.data() : nullptr;
                SCOPED_TRACE(std::string(kernel.name) + " m " + std::to_string(m) + " n " + std::to_string(n) +
                             (overwrite ? "" : " accumulating") + " alpha " + std::to_string(alpha) + " bias layout " +
                             std::to_string(layout) + (relu ? " relu" : ""));
                TileEpilogue<float> e{};
                e.alpha = alpha;
                e.overwrite = overwrite;
                // The kernel's f32 tile, merged.
                std::vector<float> c = earlier;
                run(c, m, n, e);
                std::vector<uint16_t> merged(static_cast<size_t>(mr * kLd), 0xabcd);
                const HalfOutput o{d,
                                   reinterpret_cast<char*>(merged.data()),
                                   kLd,
                                   1,
                                   reinterpret_cast<const char*>(bias_at),
                                   brs,
                                   bcs,
                                   1.0f,
                                   0.0f,
                                   relu ? CTL_ACTIVATION_RELU : CTL_ACTIVATION_NONE};
                merge_half_tile(o, c.data(), kLd, 0, 0, m, n);
                // The kernel rounding its registers.
                std::vector<float> c2 = earlier;
                std::vector<uint16_t> rounded(static_cast<size_t>(mr * kLd), 0xabcd);
                e.half_out = rounded.data();
                e.half_ld = kLd;
                e.half_bias = bias_at;
                e.half_brs = brs;
                e.half_bcs = bcs;
                e.half_f16 = d == CTL_DTYPE_F16;
                e.half_relu = relu;
                run(c2, m, n, e);
                for (size_t i = 0; i < merged.size(); ++i) {
                  ASSERT_EQ(rounded[i], merged[i]) << "row " << i / kLd << " column " << i % kLd << ": "
                                                   << hex(rounded[i]) << " against the merge's " << hex(merged[i]);
                }
                ASSERT_EQ(c2, earlier) << "the kernel wrote its f32 tile as well";
                ++cases;
              }
            }
          }
        }
      }
    }
    EXPECT_EQ(cases, 3 * 3 * 2 * 2 * 4 * 2);
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CpuHalfMerge, ::testing::Values(CTL_DTYPE_F16, CTL_DTYPE_BF16),
                         [](const auto& info) { return std::string(info.param == CTL_DTYPE_F16 ? "f16" : "bf16"); });

}  // namespace
