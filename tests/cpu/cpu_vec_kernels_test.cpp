// cpu_vec_kernels_test.cpp — the CPU plugin's hand-vectorised f32 kernels
// (plugins/cpu/simd/vec_kernels.h), every instruction set this machine runs, in one process,
// against plain double-precision formulas. The conformance suite checks the ops through the
// plugin on one path per run; this test aims at what vector code gets wrong and random
// inputs rarely reach: every tail length around the vector widths, unaligned pointers and
// streamed stores, NaN in the middle of a row, +-inf, -0, the f32 range's ends.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "vec_kernels.h"

using catalyst::cpu::Isa;
using catalyst::cpu::VecBinary;
using catalyst::cpu::VecKernels;
using catalyst::cpu::VecUnary;

namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr double kU = 1.0 / (1 << 24);  // f32 unit roundoff

std::vector<const VecKernels*> tables() {
  std::vector<const VecKernels*> out;
  for (Isa isa : {Isa::kBaseline, Isa::kAvx2, Isa::kAvx512}) {
    if (const VecKernels* k = catalyst::cpu::vec_kernels_for(isa)) out.push_back(k);
  }
  return out;
}

std::vector<float> random_values(size_t n, uint32_t seed, float lo = -3, float hi = 3) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Same value, or both NaN; a zero must carry the same sign.
bool same(float got, float expected) {
  if (std::isnan(expected)) return std::isnan(got);
  return got == expected && std::signbit(got) == std::signbit(expected);
}

// Within `tol` of a double reference; NaN where it is NaN, an infinity exactly.
::testing::AssertionResult near(float got, double expected, double tol) {
  if (std::isnan(expected)) {
    if (std::isnan(got)) return ::testing::AssertionSuccess();
  } else if (std::isinf(expected)) {
    if (got == expected) return ::testing::AssertionSuccess();
  } else if (!std::isnan(got) && std::fabs(static_cast<double>(got) - expected) <= tol) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "got " << got << ", expected " << expected << " within " << tol;
}

double binary_ref(VecBinary op, float a, float b) {
  switch (op) {
    case VecBinary::kAdd:
      return a + b;
    case VecBinary::kSub:
      return a - b;
    case VecBinary::kMul:
      return a * b;
    case VecBinary::kDiv:
      return a / b;
  }
  return 0;
}

// Every length up to 3 vectors of 16 lanes and a few more, at every f32 misalignment of the
// output within 64 bytes, each operand contiguous or broadcast, streamed or not: each
// element is the one IEEE rounding of the scalar operation, signed zeros and NaN included.
TEST(CpuVecKernels, BinaryMatchesScalarAtEveryTailAndAlignment) {
  std::vector<float> a = random_values(256, 1), b = random_values(256, 2);
  a[5] = -0.0f, b[5] = 0.0f, a[9] = kNan, b[17] = kInf, a[33] = -kInf, b[40] = -0.0f, b[41] = 0.0f;
  alignas(64) float out[256 + 64];
  for (const VecKernels* k : tables()) {
    SCOPED_TRACE(k->name);
    for (VecBinary op : {VecBinary::kAdd, VecBinary::kSub, VecBinary::kMul, VecBinary::kDiv}) {
      for (int64_t n : {1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 47, 48, 63, 64, 65, 100, 191}) {
        for (int64_t shift = 0; shift < 16; shift += 3) {
          for (int mode = 0; mode < 3; ++mode) {
            for (bool stream : {false, true}) {
              const int64_t sa = mode == 1 ? 0 : 1, sb = mode == 2 ? 0 : 1;
              float* o = out + shift;
              o[n] = 12345.0f;  // a guard just past the end
              k->binary(op, o, a.data() + 1, sa, b.data() + 2, sb, n, stream);
              for (int64_t i = 0; i < n; ++i) {
                const float expected = static_cast<float>(binary_ref(op, a[1 + i * sa], b[2 + i * sb]));
                ASSERT_TRUE(same(o[i], expected)) << "op " << static_cast<int>(op) << " n " << n << " shift " << shift
                                                  << " mode " << mode << " stream " << stream << " i " << i;
              }
              ASSERT_EQ(o[n], 12345.0f) << "wrote past the end, n " << n;
            }
          }
        }
      }
    }
  }
}

double unary_ref(VecUnary op, double x) {
  switch (op) {
    case VecUnary::kExp:
      return std::exp(x);
    case VecUnary::kTanh:
      return std::tanh(x);
    case VecUnary::kSigmoid:
      return 1 / (1 + std::exp(-x));
    case VecUnary::kSilu:
      return x * (1 / (1 + std::exp(-x)));
    case VecUnary::kGeluTanh:
      return 0.5 * x * (1 + std::tanh(0.79788456080286535588 * (x + 0.044715 * x * x * x)));
  }
  return 0;
}

// Within the conformance suite's transcendental bound (8u|e| + 32u) over the whole f32 range
// that matters, and exactly right at the specials.
TEST(CpuVecKernels, UnaryFunctionsStayWithinTheTranscendentalBound) {
  std::vector<float> x = random_values(4000, 3, -20, 20);
  const std::vector<float> specials = {0.0f,    -0.0f,  kNan,   kInf,   -kInf,  1e-30f, -1e-30f, 1e-40f,
                                       88.7f,   88.73f, 89.0f,  -87.3f, -100.f, -103.f, -104.f,  -200.f,
                                       -9.99f,  -10.0f, 10.0f,  1e20f,  -1e20f, 3e38f,  -3e38f,  0.5f,
                                       -0.125f, 1e-4f,  -1e-4f, 44.0f,  -44.0f, 5.0f,   -5.0f,   0.6931472f};
  x.insert(x.begin() + 7, specials.begin(), specials.end());
  std::vector<float> out(x.size() + 1);
  for (const VecKernels* k : tables()) {
    SCOPED_TRACE(k->name);
    for (VecUnary op : {VecUnary::kExp, VecUnary::kTanh, VecUnary::kSigmoid, VecUnary::kSilu, VecUnary::kGeluTanh}) {
      k->unary(op, out.data(), x.data(), static_cast<int64_t>(x.size()));
      for (size_t i = 0; i < x.size(); ++i) {
        // The reference's result as an f32 output holds it (past FLT_MAX: inf).
        const double e = static_cast<float>(unary_ref(op, x[i]));
        ASSERT_TRUE(near(out[i], e, 8 * kU * std::fabs(e) + 32 * kU)) << "op " << static_cast<int>(op) << " x " << x[i];
      }
    }
    // Signs of zero the reference keeps.
    const float zeros[2] = {-0.0f, 0.0f};
    float got[2];
    k->unary(VecUnary::kTanh, got, zeros, 2);
    EXPECT_TRUE(std::signbit(got[0]) && !std::signbit(got[1]));
    k->unary(VecUnary::kGeluTanh, got, zeros, 2);
    EXPECT_TRUE(std::signbit(got[0]) && !std::signbit(got[1]));
  }
}

// The exact value of each function, in long double (64-bit significand: 40 bits past f32),
// in forms without cancellation, so that an f32 result can be judged to a fraction of an ulp.
long double unary_exact(VecUnary op, long double x) {
  // 1 / (1 + e^-x) as e^x / (1 + e^x) below 0: no overflow for large negative x.
  auto sigmoid = [](long double v) {
    if (v < 0) {
      const long double e = std::exp(v);
      return e / (1 + e);
    }
    return 1 / (1 + std::exp(-v));
  };
  switch (op) {
    case VecUnary::kExp:
      return std::exp(x);
    case VecUnary::kTanh:
      return std::tanh(x);
    case VecUnary::kSigmoid:
      return sigmoid(x);
    case VecUnary::kSilu:
      return x * sigmoid(x);
    case VecUnary::kGeluTanh: {
      // 0.5 x (1 + tanh z) = x sigmoid(2z).
      const long double z = 0.797884560802865355879892119868763737L * (x + 0.044715L * x * x * x);
      return x * sigmoid(2 * z);
    }
  }
  return 0;
}

// One ulp of f32 at |v|: 2^(e - 23) for a normal v in [2^e, 2^(e+1)), 2^-149 below FLT_MIN.
long double f32_ulp(long double v) {
  int e = 0;
  std::frexp(std::fabs(v), &e);  // |v| in [2^(e-1), 2^e)
  return std::ldexp(1.0L, std::max(e - 1, -126) - 23);
}

// Every f32 binade from the subnormals to FLT_MAX, both signs, 24 values each (its first,
// its last and 22 between), and the edges where exp, sigmoid and silu leave the f32 range.
std::vector<float> binade_sweep() {
  std::vector<float> x;
  std::mt19937 rng(20);
  for (uint32_t exponent = 0; exponent < 255; ++exponent) {
    for (uint32_t k = 0; k < 24; ++k) {
      const uint32_t mantissa = k == 0 ? 0 : k == 1 ? 0x7fffff : (rng() & 0x7fffff);
      for (uint32_t sign : {0u, 1u}) {
        const uint32_t bits = sign << 31 | exponent << 23 | mantissa;
        float v;
        std::memcpy(&v, &bits, 4);
        x.push_back(v);
      }
    }
  }
  for (int i = -512; i <= 512; ++i) x.push_back(static_cast<float>(i) / 256);  // tanh's two forms meet in here
  for (float edge : {88.7228f, 88.72284f, -87.3365f, -88.7228f, -89.0f, -90.0f,  -91.0f,  -92.0f,  -103.9721f,
                     -104.0f,  -9.0f,     -9.5f,     -9.9f,     -10.0f, -10.03f, -10.05f, -10.08f, -10.1f,
                     -10.2f,   1e-8f,     1e-7f,     1e-6f,     0.173f, 0.5f,    0.55f,   0.6f}) {
    for (float v = edge, i = 0; i < 16; ++i, v = std::nextafter(v, 0.0f)) x.push_back(v);
  }
  return x;
}

// Worst errors in ulps of f32, against the exact value, on every instruction set: exp 3 ulp
// and tanh 5 ulp (OpenCL's full-profile limits); sigmoid, silu 8 (exp's 3 plus an add, a
// divide and a multiply); gelu_tanh 8 plus the effect of rounding its inner argument
// k (x + c x^3) (six roundings, times the function's condition number |x f'(x) / f(x)|).
// A result below FLT_MIN may also be off by up to FLT_MIN (flushed), as the suite allows.
TEST(CpuVecKernels, UnaryFunctionsAreWithinTheirUlpBoundsAcrossTheRange) {
  const std::vector<float> x = binade_sweep();
  std::vector<float> out(x.size());
  struct Bound {
    VecUnary op;
    const char* name;
    double ulps;
    double argument_roundings;
  };
  const Bound bounds[] = {{VecUnary::kExp, "exp", 3, 0},
                          {VecUnary::kTanh, "tanh", 5, 0},
                          {VecUnary::kSigmoid, "sigmoid", 8, 0},
                          {VecUnary::kSilu, "silu", 8, 0},
                          {VecUnary::kGeluTanh, "gelu_tanh", 8, 6}};
  for (const VecKernels* k : tables()) {
    SCOPED_TRACE(k->name);
    for (const Bound& b : bounds) {
      k->unary(b.op, out.data(), x.data(), static_cast<int64_t>(x.size()));
      double worst = 0;
      size_t worst_at = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        const long double v = x[i], exact = unary_exact(b.op, v);
        const float got = out[i];
        if (std::isnan(exact) || std::isnan(got)) {
          ASSERT_EQ(std::isnan(exact), std::isnan(got)) << b.name << "(" << x[i] << ") = " << got;
          continue;
        }
        if (std::isinf(exact)) {
          ASSERT_EQ(static_cast<long double>(got), exact) << b.name << "(" << x[i] << ")";
          continue;
        }
        if (exact == 0) {
          ASSERT_TRUE(got == 0 && std::signbit(got) == std::signbit(exact)) << b.name << "(" << x[i] << ") = " << got;
          continue;
        }
        // An infinity counts as the next power of two past FLT_MAX, and so does an exact
        // value beyond it: returning inf or FLT_MAX for it is 0 or 1 ulp off.
        const long double top = std::ldexp(1.0L, 128);
        const long double g = std::isinf(got) ? std::copysign(top, got) : got;
        const long double e = std::fabs(exact) > top ? std::copysign(top, exact) : exact;
        const long double diff = std::fabs(g - e);
        if (std::fabs(e) < std::numeric_limits<float>::min() && diff <= std::numeric_limits<float>::min()) continue;
        // The condition number, from a central difference in long double.
        double cond = 0;
        if (b.argument_roundings > 0 && v != 0) {
          const long double h = std::fabs(v) * 1e-9L;
          cond =
              static_cast<double>(std::fabs(v * (unary_exact(b.op, v + h) - unary_exact(b.op, v - h)) / (2 * h) / e));
        }
        const double ulps = static_cast<double>(diff / f32_ulp(e));
        const double allowed =
            b.ulps + b.argument_roundings * cond * 0.5 * static_cast<double>(std::fabs(e) / f32_ulp(e) * kU);
        if (ulps - allowed > worst) worst = ulps - allowed, worst_at = i;
      }
      const long double e = unary_exact(b.op, x[worst_at]);
      k->unary(b.op, out.data(), x.data() + worst_at, 1);
      EXPECT_EQ(worst, 0) << b.name << ": " << worst << " ulp past its bound at x = " << x[worst_at] << ": expected "
                          << static_cast<double>(e) << ", got " << out[0];
    }
  }
}

// gelu_tanh'(x) = s + 2 k x (1 + 3c x^2) s (1 - s), s = sigmoid(2z), z = k (x + c x^3)
// (docs/ops.md), as its two terms, exactly (long double), with s (1 - s) = e / (1 + e)^2,
// e = exp(-2|z|).
struct GeluTerms {
  long double first, second;
};
GeluTerms gelu_tanh_derivative_terms(long double x) {
  constexpr long double k = 0.797884560802865355879892119868763737L, c = 0.044715L;
  const long double z = k * (x + c * x * x * x);
  const long double e = std::exp(-2 * std::fabs(z)), r = 1 / (1 + e);
  const long double s = z >= 0 ? r : e * r;
  if (e == 0) return {s, x - x};
  return {s, 2 * k * x * (1 + 3 * c * x * x) * (e * r * r)};
}

// dy * gelu_tanh'(x) over the whole f32 range, for three dy, on every instruction set,
// within the conformance sweep's bound (conformance/tolerance.h): 1 ulp of the result for
// the sum and the product with dy, 12 ulps of f32 at the size of each term (near the zero
// at x = -0.75 the terms cancel in any form), and 6 roundings of z times the condition
// number. The form that saturated at |z| = 19.1 returned 0 from x = -10 on, where the
// exact value is -2.8e-36, a normal f32.
TEST(CpuVecKernels, GeluTanhBackwardIsWithinItsUlpBoundAcrossTheRange) {
  const std::vector<float> x = binade_sweep();
  std::vector<float> dx(x.size()), dy(x.size());
  for (const VecKernels* k : tables()) {
    SCOPED_TRACE(k->name);
    for (float g : {1.0f, -2.5f, 0.1f}) {
      std::fill(dy.begin(), dy.end(), g);
      k->gelu_tanh_backward(dx.data(), dy.data(), x.data(), static_cast<int64_t>(x.size()));
      double worst = 0;
      size_t worst_at = 0;
      auto exact_at = [&](long double v) {
        const GeluTerms t = gelu_tanh_derivative_terms(v);
        return static_cast<long double>(g) * (t.first + t.second);
      };
      for (size_t i = 0; i < x.size(); ++i) {
        const long double v = x[i], e = exact_at(v);
        const float got = dx[i];
        if (std::isnan(e) || std::isnan(got)) {
          ASSERT_EQ(std::isnan(e), std::isnan(got)) << "x = " << x[i] << ", dy = " << g << ": " << got;
          continue;
        }
        const long double diff = std::fabs(got - e);
        // Below FLT_MIN a result may be flushed; an exact 0 here is long double's underflow
        // of a tiny value of either sign.
        if (std::fabs(e) < std::numeric_limits<float>::min() && diff <= std::numeric_limits<float>::min()) continue;
        const GeluTerms t = gelu_tanh_derivative_terms(v);
        const long double terms = std::fabs(g) * (std::fabs(t.first) + std::fabs(t.second));
        double cond = 0;
        if (v != 0) {
          const long double h = std::fabs(v) * 1e-9L;
          cond = static_cast<double>(std::fabs(v * (exact_at(v + h) - exact_at(v - h)) / (2 * h) / e));
        }
        const long double ulp = f32_ulp(e);
        const double ulps = static_cast<double>(diff / ulp);
        const double allowed = 1 + static_cast<double>((12 * 2 * kU * terms + 6 * cond * kU * std::fabs(e)) / ulp);
        if (ulps - allowed > worst) worst = ulps - allowed, worst_at = i;
      }
      EXPECT_EQ(worst, 0) << "dy = " << g << ": " << worst << " ulp past the bound at x = " << x[worst_at]
                          << ": expected " << static_cast<double>(exact_at(x[worst_at])) << ", got " << dx[worst_at];
    }
  }
}

// The specials: x = +-inf gives NaN (x * 0 in the second term, docs/ops.md); a huge x,
// whose x^3 overflows f32, gives 1 or 0 and no NaN; dy = inf times the tiny derivative at
// x = -10 is -inf, not NaN (the saturating form's 0 made it inf * 0).
TEST(CpuVecKernels, GeluTanhBackwardKeepsItsSpecials) {
  const std::vector<float> x = {-10.0f, 10.0f, kInf, -kInf, 1e20f, -1e20f, 0.0f, kNan, -10.0f, 10.0f, 0.5f};
  const std::vector<float> dy = {1.0f, 1.0f, 1.0f, 1.0f, 2.0f, 2.0f, 1.0f, 1.0f, kInf, kInf, 1.0f};
  std::vector<float> dx(x.size());
  for (const VecKernels* k : tables()) {
    SCOPED_TRACE(k->name);
    k->gelu_tanh_backward(dx.data(), dy.data(), x.data(), static_cast<int64_t>(x.size()));
    const double at_minus_10 =
        static_cast<double>(gelu_tanh_derivative_terms(-10).first + gelu_tanh_derivative_terms(-10).second);
    EXPECT_TRUE(near(dx[0], at_minus_10, 1e-3 * std::fabs(at_minus_10)));
    EXPECT_LT(dx[0], -1e-36f);
    EXPECT_EQ(dx[1], 1.0f);
    EXPECT_TRUE(std::isnan(dx[2]));
    EXPECT_TRUE(std::isnan(dx[3]));
    EXPECT_EQ(dx[4], 2.0f);
    EXPECT_EQ(dx[5], 0.0f);
    EXPECT_EQ(dx[6], 0.5f);
    EXPECT_TRUE(std::isnan(dx[7]));
    EXPECT_EQ(dx[8], -kInf);
    EXPECT_EQ(dx[9], kInf);
    const double t = std::tanh(0.79788456080286535588 * (0.5 + 0.044715 * 0.125));
    const double g = 0.5 * (1 + t) + 0.25 * (1 - t * t) * 0.79788456080286535588 * (1 + 3 * 0.044715 * 0.25);
    EXPECT_TRUE(near(dx[10], g, 16 * kU));
  }
}

// Softmax and log_softmax rows of every tail length against double formulas, within the
// conformance row bound 4 (n + 8) u (1 + |e|); a NaN anywhere, an all -inf row or a +inf
// makes the whole row NaN as in the reference.
TEST(CpuVecKernels, SoftmaxRowsMatchDoubleAndPropagateSpecials) {
  for (const VecKernels* k : tables()) {
    SCOPED_TRACE(k->name);
    for (int64_t n = 1; n <= 70; ++n) {
      for (bool log : {false, true}) {
        for (bool stream : {false, true}) {
          std::vector<float> x = random_values(static_cast<size_t>(n), static_cast<uint32_t>(n), -30, 30);
          std::vector<float> y(static_cast<size_t>(n) + 1), e(static_cast<size_t>(n));
          y[n] = 777.0f;
          k->softmax_row(y.data(), x.data(), n, log, e.data(), stream);
          double m = -INFINITY, sum = 0;
          for (float v : x) m = std::max<double>(m, v);
          for (float v : x) sum += std::exp(v - m);
          for (int64_t i = 0; i < n; ++i) {
            const double expected = log ? x[i] - m - std::log(sum) : std::exp(x[i] - m) / sum;
            ASSERT_TRUE(near(y[i], expected, 4 * (n + 8) * kU * (1 + std::fabs(expected))))
                << "n " << n << " log " << log << " i " << i;
          }
          ASSERT_EQ(y[n], 777.0f);
          // One NaN in the middle (or at the tail).
          x[static_cast<size_t>(n) / 2] = kNan;
          k->softmax_row(y.data(), x.data(), n, log, e.data(), stream);
          for (int64_t i = 0; i < n; ++i) ASSERT_TRUE(std::isnan(y[i])) << "NaN row, n " << n << " i " << i;
          // All -inf, and one +inf.
          std::fill(x.begin(), x.end(), -kInf);
          k->softmax_row(y.data(), x.data(), n, log, e.data(), stream);
          for (int64_t i = 0; i < n; ++i) ASSERT_TRUE(std::isnan(y[i])) << "-inf row, n " << n;
          x = random_values(static_cast<size_t>(n), 7);
          x[static_cast<size_t>(n) - 1] = kInf;
          k->softmax_row(y.data(), x.data(), n, log, e.data(), stream);
          for (int64_t i = 0; i < n; ++i) ASSERT_TRUE(std::isnan(y[i])) << "+inf row, n " << n;
        }
      }
    }
  }
}

// The pipelined multi-row softmax gives softmax_row's results bit for bit, streamed or
// not, aligned or not, a NaN row included.
TEST(CpuVecKernels, SoftmaxRowsEqualsRowByRow) {
  for (const VecKernels* k : tables()) {
    SCOPED_TRACE(k->name);
    for (int64_t n : {32, 64, 96, 100, 4096}) {
      for (int64_t shift : {0, 1}) {
        const int64_t rows = 5, ys = n + 16 + shift;
        std::vector<float> x = random_values(static_cast<size_t>(rows * n), static_cast<uint32_t>(n), -20, 20);
        x[static_cast<size_t>(2 * n + 3)] = kNan;
        alignas(64) static float y[5 * (4096 + 17) + 64];
        std::vector<float> expected(static_cast<size_t>(n)), e(2 * static_cast<size_t>(n));
        for (bool stream : {false, true}) {
          k->softmax_rows(y, ys, x.data(), n, rows, n, e.data(), stream);
          for (int64_t r = 0; r < rows; ++r) {
            k->softmax_row(expected.data(), x.data() + r * n, n, false, e.data(), false);
            for (int64_t i = 0; i < n; ++i) {
              ASSERT_TRUE(same(y[r * ys + i], expected[static_cast<size_t>(i)]))
                  << "n " << n << " shift " << shift << " stream " << stream << " row " << r << " i " << i;
            }
          }
        }
      }
    }
  }
}

// layer_norm with a mean 10^4 times the spread, and rms_norm of values whose squares
// overflow f32: both within the row bound, statistics as the reference rounds them.
TEST(CpuVecKernels, NormRowsKeepPrecisionAndRange) {
  for (const VecKernels* k : tables()) {
    SCOPED_TRACE(k->name);
    for (int64_t n = 1; n <= 70; ++n) {
      for (bool layer : {true, false}) {
        std::vector<float> x = random_values(static_cast<size_t>(n), static_cast<uint32_t>(100 + n));
        for (float& v : x) v = layer ? 10000.0f + v : v * 1e30f;
        const std::vector<float> w = random_values(static_cast<size_t>(n), 5),
                                 b = random_values(static_cast<size_t>(n), 6);
        std::vector<float> y(static_cast<size_t>(n));
        float mean = 0, rstd = 0;
        ASSERT_TRUE(k->norm_row(y.data(), x.data(), w.data(), b.data(), n, 1e-5, layer, &mean, &rstd, n % 2 == 0));
        double m = 0, sq = 0;
        if (layer) {
          for (float v : x) m += v;
          m /= static_cast<double>(n);
        }
        for (float v : x) sq += (v - m) * (v - m);
        const double r = 1 / std::sqrt(sq / static_cast<double>(n) + 1e-5);
        EXPECT_EQ(mean, static_cast<float>(m));
        EXPECT_TRUE(near(rstd, r, 4 * (n + 8) * kU * r));
        for (int64_t i = 0; i < n; ++i) {
          const double expected = (x[i] - m) * r * w[i] + b[i];
          ASSERT_TRUE(near(y[i], expected, 4 * (n + 8) * kU * (1 + std::fabs(expected))))
              << "n " << n << " layer " << layer << " i " << i;
        }
        // A NaN anywhere makes the row NaN.
        x[static_cast<size_t>(n) / 2] = kNan;
        ASSERT_TRUE(k->norm_row(y.data(), x.data(), nullptr, nullptr, n, 1e-5, layer, &mean, &rstd, false));
        for (int64_t i = 0; i < n; ++i) ASSERT_TRUE(std::isnan(y[i]));
      }
    }
    // rstd past the f32 range is refused (the caller then computes the row in double).
    const std::vector<float> tiny(20, 1e-39f);
    std::vector<float> y(20);
    float mean = 0, rstd = 0;
    EXPECT_FALSE(k->norm_row(y.data(), tiny.data(), nullptr, nullptr, 20, 0.0, false, &mean, &rstd, false));
  }
}

// Row reductions: max and min with NaN anywhere and -0 < +0, sums in double, at every tail.
TEST(CpuVecKernels, RowReductionsCoverTails) {
  for (const VecKernels* k : tables()) {
    SCOPED_TRACE(k->name);
    for (int64_t n = 1; n <= 70; ++n) {
      std::vector<float> x = random_values(static_cast<size_t>(n), static_cast<uint32_t>(200 + n));
      x[static_cast<size_t>(n) - 1] = 5.0f;  // the max sits in the tail
      EXPECT_EQ(k->row_max(x.data(), n), 5.0f);
      double sum = 0;
      for (float v : x) sum += v;
      EXPECT_NEAR(k->row_sum(x.data(), n), sum, 1e-12);
      std::vector<double> acc(static_cast<size_t>(n), 1.0);
      k->accumulate(acc.data(), x.data(), n);
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(acc[i], 1.0 + static_cast<double>(x[i]));
      x[0] = kNan;
      EXPECT_TRUE(std::isnan(k->row_max(x.data(), n)));
      EXPECT_TRUE(std::isnan(k->row_min(x.data(), n)));
      // Zeros only: max is +0 and min -0 wherever the one odd zero sits.
      for (int64_t at = 0; at < n; ++at) {
        std::vector<float> z(static_cast<size_t>(n), -0.0f);
        z[static_cast<size_t>(at)] = 0.0f;
        ASSERT_FALSE(std::signbit(k->row_max(z.data(), n))) << "n " << n << " at " << at;
        std::fill(z.begin(), z.end(), 0.0f);
        z[static_cast<size_t>(at)] = -0.0f;
        ASSERT_TRUE(std::signbit(k->row_min(z.data(), n))) << "n " << n << " at " << at;
      }
    }
  }
}

// softmax_backward and the norm's dx against double formulas (bounds as the suite's).
TEST(CpuVecKernels, BackwardRowsMatchDouble) {
  for (const VecKernels* k : tables()) {
    SCOPED_TRACE(k->name);
    for (int64_t n = 1; n <= 70; n += 3) {
      const size_t sn = static_cast<size_t>(n);
      std::vector<float> y = random_values(sn, 300 + n, 0, 1), dy = random_values(sn, 400 + n), dx(sn);
      k->softmax_backward_row(dx.data(), y.data(), dy.data(), n, false, n % 2 == 0);
      double s = 0, sabs = 0;
      for (size_t i = 0; i < sn; ++i) s += static_cast<double>(dy[i]) * y[i], sabs += std::fabs(dy[i] * y[i]);
      for (size_t i = 0; i < sn; ++i) {
        const double expected = y[i] * (dy[i] - s);
        ASSERT_TRUE(near(dx[i], expected, (n + 6) * kU * std::fabs(y[i]) * (std::fabs(dy[i]) + sabs) + 1e-37));
      }
      const std::vector<float> x = random_values(sn, 500 + n), w = random_values(sn, 600 + n);
      const float mean = 0.25f, rstd = 1.5f;
      k->norm_backward_row(dx.data(), dy.data(), x.data(), w.data(), n, mean, rstd, true, n % 2 == 1);
      double sg = 0, sgx = 0, scale = 0;
      for (size_t i = 0; i < sn; ++i) {
        const double g = static_cast<double>(dy[i]) * w[i], xh = (x[i] - static_cast<double>(mean)) * rstd;
        sg += g, sgx += g * xh, scale += std::fabs(g) * (1 + std::fabs(xh));
      }
      for (size_t i = 0; i < sn; ++i) {
        const double g = static_cast<double>(dy[i]) * w[i], xh = (x[i] - static_cast<double>(mean)) * rstd;
        const double expected = rstd * (g - sg / n - xh * sgx / n);
        ASSERT_TRUE(
            near(dx[i], expected, (n + 14) * kU * rstd * (std::fabs(g) + std::fabs(xh) * scale / n + scale / n)));
      }
    }
  }
}

// AdamW in double per element: within one f32 rounding of the double formula.
TEST(CpuVecKernels, AdamwMatchesDouble) {
  const int64_t n = 37;
  const std::vector<float> g = random_values(n, 8), p0 = random_values(n, 9), m0 = random_values(n, 10);
  std::vector<float> v0 = random_values(n, 11, 0, 2);
  for (const VecKernels* k : tables()) {
    SCOPED_TRACE(k->name);
    std::vector<float> p = p0, m = m0, v = v0;
    const double lr = 1e-2, decay = lr * 0.1, b1 = 0.9, b2 = 0.999, eps = 1e-8, c1 = 1 - b1 * b1, c2 = 1 - b2 * b2;
    k->adamw(p.data(), m.data(), v.data(), g.data(), n, lr, decay, b1, b2, eps, 1 / c1, 1 / c2);
    for (int64_t i = 0; i < n; ++i) {
      const double mi = b1 * m0[i] + (1 - b1) * g[i], vi = b2 * v0[i] + (1 - b2) * static_cast<double>(g[i]) * g[i];
      const double pi = (p0[i] - decay * p0[i]) - lr * (mi / c1) / (std::sqrt(vi / c2) + eps);
      ASSERT_TRUE(near(m[i], mi, 2 * kU * std::fabs(mi)));
      ASSERT_TRUE(near(v[i], vi, 2 * kU * std::fabs(vi)));
      ASSERT_TRUE(near(p[i], pi, 2 * kU * std::fabs(pi)));
    }
  }
}

}  // namespace
