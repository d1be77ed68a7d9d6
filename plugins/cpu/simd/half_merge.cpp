// half_merge.cpp — writing finished tiles of f32 sums to the f16/bf16 output with
// alpha, beta, bias and activation (see half_merge.h).
#include "half_merge.h"

#include <cmath>

#include "dtype_dispatch.h"
#include "intrinsics.h"
#include "isa.h"
#include "matmul_problem.h"
#include "vec_kernels.h"

namespace catalyst::cpu {
namespace {

float load_half(ctl_dtype d, uint16_t bits) {
  return d == CTL_DTYPE_F16 ? sdk::half_to_float(bits) : sdk::bf16_to_float(bits);
}

// v[j] for the first n lanes of 16 16-bit floats of dtype d.
CTL_CPU_AVX512 inline __m512 load_half_x16(ctl_dtype d, const uint16_t* p, __mmask16 mask) {
  return widen_half_x16(d == CTL_DTYPE_F16, _mm256_maskz_loadu_epi16(mask, p));
}

// The whole tile in vector form; needs a unit output column stride and a bias column
// stride of 0 or 1.
CTL_CPU_AVX512 void merge_tile_vector(const HalfOutput& o, const float* tile, int64_t ld, uint16_t* out,
                                      const uint16_t* bias, int64_t m, int64_t n) {
  const __mmask16 m0 = static_cast<__mmask16>(n >= 16 ? 0xffffu : (1u << n) - 1u);
  const __mmask16 m1 = static_cast<__mmask16>(n >= 32 ? 0xffffu : n > 16 ? (1u << (n - 16)) - 1u : 0u);
  const __m512 alpha = _mm512_set1_ps(o.alpha), beta = _mm512_set1_ps(o.beta);
  const bool with_beta = o.beta != 0.0f;
  const bool relu = o.activation == CTL_ACTIVATION_RELU, plain = o.activation == CTL_ACTIVATION_NONE;
  __m512 b0 = _mm512_setzero_ps(), b1 = _mm512_setzero_ps();
  for (int64_t i = 0; i < m; ++i) {
    const float* s = tile + i * ld;
    uint16_t* dst = out + i * o.ors;
    __m512 v0 = _mm512_mul_ps(alpha, _mm512_maskz_loadu_ps(m0, s));  // s may end at column n
    __m512 v1 = _mm512_mul_ps(alpha, _mm512_maskz_loadu_ps(m1, s + 16));
    if (with_beta) {
      v0 = _mm512_fmadd_ps(beta, load_half_x16(o.dtype, dst, m0), v0);
      v1 = _mm512_fmadd_ps(beta, load_half_x16(o.dtype, dst + 16, m1), v1);
    }
    if (bias) {
      if (i == 0 || o.brs != 0) {  // a bias of shape [N] is the same for every row
        const uint16_t* row = bias + i * o.brs;
        if (o.bcs == 0) {
          b0 = b1 = _mm512_set1_ps(load_half(o.dtype, row[0]));
        } else {
          b0 = load_half_x16(o.dtype, row, m0);
          b1 = load_half_x16(o.dtype, row + 16, m1);
        }
      }
      v0 = _mm512_add_ps(v0, b0);
      v1 = _mm512_add_ps(v1, b1);
    }
    if (!plain && !relu) {
      // gelu in f32, then the vector rounding. GELU-tanh follows every GPT MLP matmul: the
      // f32 vector kernel, as the f32 epilogue (gemm_kernels.cpp) runs it, instead of 32
      // libm tanh calls (9% of a bf16 GPT step's samples were libm's expm1f from here).
      alignas(64) float pre[32];
      _mm512_store_ps(pre, v0);
      _mm512_store_ps(pre + 16, v1);
      if (o.activation == CTL_ACTIVATION_GELU_TANH) {
        vec_kernels().unary(VecUnary::kGeluTanh, pre, pre, n);
      } else {
        for (int64_t j = 0; j < n; ++j) pre[j] = activate(pre[j], o.activation);
      }
      v0 = _mm512_load_ps(pre);
      v1 = _mm512_load_ps(pre + 16);
    }
    if (relu) {  // keep v > 0 and NaN; everything else, -0 included, becomes +0
      const __m512 zero = _mm512_setzero_ps();
      v0 = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v0, zero, _CMP_GT_OQ) | _mm512_cmp_ps_mask(v0, v0, _CMP_UNORD_Q), v0);
      v1 = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v1, zero, _CMP_GT_OQ) | _mm512_cmp_ps_mask(v1, v1, _CMP_UNORD_Q), v1);
    }
    // bf16 rounds in integer arithmetic (intrinsics.h), so the merge needs no AVX512-BF16.
    // It did (vcvtne2ps2bf16), and on AVX-512 CPUs without it (Xeons before Cooper Lake, or
    // a VM that hides it, as this project's Xeon VM does) every f16 and bf16 output element
    // went through merge_row_scalar: 37% of a 1-thread 1024^3 f16 product.
    _mm256_mask_storeu_epi16(dst, m0, round_half_x16(o.dtype == CTL_DTYPE_F16, v0));
    _mm256_mask_storeu_epi16(dst + 16, m1, round_half_x16(o.dtype == CTL_DTYPE_F16, v1));
  }
}

void merge_row_scalar(const HalfOutput& o, const float* s, uint16_t* out, const uint16_t* bias, int64_t n) {
  float pre[32];  // n <= 32
  for (int64_t j = 0; j < n; ++j) {
    float v = o.alpha * s[j];
    if (o.beta != 0.0f) v = std::fma(o.beta, load_half(o.dtype, out[j * o.ocs]), v);  // as the vector form
    if (bias) v += load_half(o.dtype, bias[j * o.bcs]);
    pre[j] = v;
  }
  if (o.activation == CTL_ACTIVATION_GELU_TANH) {  // as the vector form
    vec_kernels().unary(VecUnary::kGeluTanh, pre, pre, n);
  } else {
    for (int64_t j = 0; j < n; ++j) pre[j] = activate(pre[j], o.activation);
  }
  for (int64_t j = 0; j < n; ++j) {
    out[j * o.ocs] = o.dtype == CTL_DTYPE_F16 ? sdk::float_to_half(pre[j]) : sdk::float_to_bf16(pre[j]);
  }
}

}  // namespace

void merge_half_tile(const HalfOutput& o, const float* tile, int64_t ld, int64_t row, int64_t col, int64_t m,
                     int64_t n) {
  uint16_t* out = reinterpret_cast<uint16_t*>(o.out) + row * o.ors + col * o.ocs;
  const uint16_t* bias = o.bias ? reinterpret_cast<const uint16_t*>(o.bias) + row * o.brs + col * o.bcs : nullptr;
  if (o.ocs == 1 && (o.bcs == 0 || o.bcs == 1) && active_isa() == Isa::kAvx512) {
    merge_tile_vector(o, tile, ld, out, bias, m, n);
    return;
  }
  for (int64_t i = 0; i < m; ++i)
    merge_row_scalar(o, tile + i * ld, out + i * o.ors, bias ? bias + i * o.brs : nullptr, n);
}

}  // namespace catalyst::cpu
