// gelu_erf.cpp — see gelu_erf.h. The erf-form gelu had no vector code in any dtype: each
// element took libm's erfc in double (and exp for the backward), 14 ns an element for f32
// gelu on Zen 4 and 19 for its backward. glibc (2.35 on) ships vector forms of both in
// libmvec, for 2 (SSE), 4 (AVX2) and 8 (AVX-512) doubles, as accurate as libm's (they
// differ from it by a few ulps of double), so the f32 results are the scalar code's but
// where the two libraries' last bits straddle an f32 rounding boundary (none among 16M
// arguments from -12 to 12). fused_elementwise.cpp counts gelu and gelu_backward among the
// ops whose vector form may differ from the scalar one.
#include "gelu_erf.h"

#include <cmath>

#include "intrinsics.h"
#include "isa.h"

#if defined(CTL_CPU_HAVE_LIBMVEC)
// libmvec's names follow the x86-64 vector function ABI (d: AVX2, 4 doubles; e: AVX-512,
// 8 doubles). The baseline path keeps the scalar loop.
extern "C" __attribute__((target("avx2"))) __m256d _ZGVdN4v_erfc(__m256d);
extern "C" __attribute__((target("avx2"))) __m256d _ZGVdN4v_exp(__m256d);
extern "C" __attribute__((target("avx512f"))) __m512d _ZGVeN8v_erfc(__m512d);
extern "C" __attribute__((target("avx512f"))) __m512d _ZGVeN8v_exp(__m512d);
#endif

namespace catalyst::cpu {
namespace {

constexpr double kInvSqrt2 = 0.70710678118654752440, kInvSqrt2Pi = 0.39894228040143267794;

double gelu(double x) {
  return 0.5 * x * std::erfc(x * -kInvSqrt2);
}
double gelu_grad(double x) {
  return 0.5 * std::erfc(-x * kInvSqrt2) + x * (std::exp(-0.5 * x * x) * kInvSqrt2Pi);
}

#if defined(CTL_CPU_HAVE_LIBMVEC)

// Eight values at a time: f32 widened to double, the formulas of gelu() and gelu_grad()
// with libmvec's erfc and exp, one rounding back to f32. Tails are padded with zeros.
CTL_CPU_AVX512 void forward_avx512(float* out, const float* in, int64_t n) {
  const __m512d half = _mm512_set1_pd(0.5), scale = _mm512_set1_pd(-kInvSqrt2);
  for (int64_t i = 0; i < n; i += 8) {
    const __mmask8 mask = static_cast<__mmask8>(n - i >= 8 ? 0xffu : (1u << (n - i)) - 1u);
    const __m512d x = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(mask, in + i));
    const __m512d y = _mm512_mul_pd(_mm512_mul_pd(half, x), _ZGVeN8v_erfc(_mm512_mul_pd(x, scale)));
    _mm256_mask_storeu_ps(out + i, mask, _mm512_cvtpd_ps(y));
  }
}

CTL_CPU_AVX512 void backward_avx512(float* dx, const float* dy, const float* xs, int64_t n) {
  const __m512d half = _mm512_set1_pd(0.5), minus_half = _mm512_set1_pd(-0.5);
  const __m512d scale = _mm512_set1_pd(kInvSqrt2), pdf = _mm512_set1_pd(kInvSqrt2Pi);
  for (int64_t i = 0; i < n; i += 8) {
    const __mmask8 mask = static_cast<__mmask8>(n - i >= 8 ? 0xffu : (1u << (n - i)) - 1u);
    const __m512d x = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(mask, xs + i));
    const __m512d d = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(mask, dy + i));
    // -x * kInvSqrt2 and -0.5 * x * x, rounded as gelu_grad's are (no FMA contraction).
    const __m512d neg = _mm512_sub_pd(_mm512_setzero_pd(), x);
    const __m512d cdf = _mm512_mul_pd(half, _ZGVeN8v_erfc(_mm512_mul_pd(neg, scale)));
    const __m512d e = _ZGVeN8v_exp(_mm512_mul_pd(_mm512_mul_pd(minus_half, x), x));
    const __m512d g = _mm512_add_pd(cdf, _mm512_mul_pd(x, _mm512_mul_pd(e, pdf)));
    _mm256_mask_storeu_ps(dx + i, mask, _mm512_cvtpd_ps(_mm512_mul_pd(d, g)));
  }
}

#define CTL_CPU_AVX2_FMA __attribute__((target("avx2,fma")))

// The same, four values at a time; a tail of fewer than four takes the scalar formula.
CTL_CPU_AVX2_FMA void forward_avx2(float* out, const float* in, int64_t n) {
  const __m256d half = _mm256_set1_pd(0.5), scale = _mm256_set1_pd(-kInvSqrt2);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m256d x = _mm256_cvtps_pd(_mm_loadu_ps(in + i));
    const __m256d y = _mm256_mul_pd(_mm256_mul_pd(half, x), _ZGVdN4v_erfc(_mm256_mul_pd(x, scale)));
    _mm_storeu_ps(out + i, _mm256_cvtpd_ps(y));
  }
  for (; i < n; ++i) out[i] = static_cast<float>(gelu(static_cast<double>(in[i])));
}

CTL_CPU_AVX2_FMA void backward_avx2(float* dx, const float* dy, const float* xs, int64_t n) {
  const __m256d half = _mm256_set1_pd(0.5), minus_half = _mm256_set1_pd(-0.5);
  const __m256d scale = _mm256_set1_pd(kInvSqrt2), pdf = _mm256_set1_pd(kInvSqrt2Pi);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m256d x = _mm256_cvtps_pd(_mm_loadu_ps(xs + i));
    const __m256d d = _mm256_cvtps_pd(_mm_loadu_ps(dy + i));
    const __m256d neg = _mm256_sub_pd(_mm256_setzero_pd(), x);
    const __m256d cdf = _mm256_mul_pd(half, _ZGVdN4v_erfc(_mm256_mul_pd(neg, scale)));
    const __m256d e = _ZGVdN4v_exp(_mm256_mul_pd(_mm256_mul_pd(minus_half, x), x));
    const __m256d g = _mm256_add_pd(cdf, _mm256_mul_pd(x, _mm256_mul_pd(e, pdf)));
    _mm_storeu_ps(dx + i, _mm256_cvtpd_ps(_mm256_mul_pd(d, g)));
  }
  for (; i < n; ++i) {
    dx[i] = static_cast<float>(static_cast<double>(dy[i]) * gelu_grad(static_cast<double>(xs[i])));
  }
}

#endif

}  // namespace

void gelu_erf_span(float* out, const float* in, int64_t n) {
#if defined(CTL_CPU_HAVE_LIBMVEC)
  if (active_isa() == Isa::kAvx512) return forward_avx512(out, in, n);
  if (active_isa() == Isa::kAvx2) return forward_avx2(out, in, n);
#endif
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(gelu(static_cast<double>(in[i])));
}

void gelu_erf_backward_span(float* dx, const float* dy, const float* x, int64_t n) {
#if defined(CTL_CPU_HAVE_LIBMVEC)
  if (active_isa() == Isa::kAvx512) return backward_avx512(dx, dy, x, n);
  if (active_isa() == Isa::kAvx2) return backward_avx2(dx, dy, x, n);
#endif
  for (int64_t i = 0; i < n; ++i) {
    dx[i] = static_cast<float>(static_cast<double>(dy[i]) * gelu_grad(static_cast<double>(x[i])));
  }
}

}  // namespace catalyst::cpu
