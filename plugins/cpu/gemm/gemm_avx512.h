// gemm_avx512.h — what the AVX-512 GEMM micro-kernels (f32 in gemm_avx512_f32.cpp, bf16
// dot products in gemm_avx512_bf16.cpp) share: writing a finished 32-column tile of f32
// sums to C with its epilogue, and the 16 x 16 register transpose their packers use.
// Everything here is inlined into functions compiled for AVX-512; include it only from
// files whose callers check active_isa() first.
#pragma once

#include "intrinsics.h"

#include <cstdint>

#include "gemm_kernels.h"

namespace catalyst::cpu::avx512 {

// Masks of the first n (<= 32) columns of a tile, per 16-lane half.
CTL_CPU_AVX512 inline __mmask16 low_mask(int n) {
  return n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1);
}
CTL_CPU_AVX512 inline __mmask16 high_mask(int n) {
  return n >= 32 ? __mmask16(0xFFFF) : n > 16 ? __mmask16((1u << (n - 16)) - 1) : __mmask16(0);
}

// x with every lane that is not > 0 (and not NaN) replaced by +0, the reference ReLU:
// max_ps would return -0 for -0 and drop NaNs.
CTL_CPU_AVX512 inline __m512 relu(__m512 x) {
  return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_NLE_UQ), x);
}

// Starts fetching the M rows of a 32-column tile of C, which the kernel needs only after
// its loop (read, or at least written).
template <int M>
CTL_CPU_AVX512 inline void prefetch_tile(const float* c, int64_t ldc) {
  for (int i = 0; i < M; ++i) {
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + 16), _MM_HINT_T0);
  }
}

// The M x n tile held in acc0 and acc1 rounded into an f16/bf16 output as
// TileEpilogue::half_out says, in merge_half_tile's order of operations (alpha; the sums in
// c; bias; ReLU; one rounding), so the bits are the same. A 1-thread bf16 256^3 product
// spent 6% of its time in the merge, which read back the tile the kernel had just stored.
template <int M>
[[gnu::always_inline]] CTL_CPU_AVX512 inline void store_tile_half(const __m512 (&acc0)[M], const __m512 (&acc1)[M],
                                                                  const float* __restrict c, int64_t ldc, int n,
                                                                  const TileEpilogue<float>& e) {
  const __mmask16 k0 = low_mask(n), k1 = high_mask(n);
  const __m512 alpha = _mm512_set1_ps(e.alpha);
  const bool scale = e.alpha != 1.0f;
  __m512 bias0 = _mm512_setzero_ps(), bias1 = _mm512_setzero_ps();
#pragma GCC unroll 12
  for (int i = 0; i < M; ++i) {
    __m512 x0 = scale ? _mm512_mul_ps(alpha, acc0[i]) : acc0[i];
    __m512 x1 = scale ? _mm512_mul_ps(alpha, acc1[i]) : acc1[i];
    if (!e.overwrite) {
      x0 = _mm512_add_ps(_mm512_maskz_loadu_ps(k0, c + i * ldc), x0);
      x1 = _mm512_add_ps(_mm512_maskz_loadu_ps(k1, c + i * ldc + 16), x1);
    }
    if (e.half_bias) {
      if (i == 0 || e.half_brs != 0) {  // a bias of shape [N] is the same for every row
        const uint16_t* row = e.half_bias + i * e.half_brs;
        if (e.half_bcs == 0) {
          bias0 = bias1 = widen_half_x16(e.half_f16, _mm256_set1_epi16(static_cast<short>(row[0])));
        } else {
          bias0 = widen_half_x16(e.half_f16, _mm256_maskz_loadu_epi16(k0, row));
          bias1 = widen_half_x16(e.half_f16, _mm256_maskz_loadu_epi16(k1, row + 16));
        }
      }
      x0 = _mm512_add_ps(x0, bias0);
      x1 = _mm512_add_ps(x1, bias1);
    }
    if (e.half_relu) {  // keep x > 0 and NaN; everything else, -0 included, becomes +0
      const __m512 zero = _mm512_setzero_ps();
      x0 = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x0, zero, _CMP_GT_OQ) | _mm512_cmp_ps_mask(x0, x0, _CMP_UNORD_Q), x0);
      x1 = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x1, zero, _CMP_GT_OQ) | _mm512_cmp_ps_mask(x1, x1, _CMP_UNORD_Q), x1);
    }
    uint16_t* row = e.half_out + i * e.half_ld;
    _mm256_mask_storeu_epi16(row, k0, round_half_x16(e.half_f16, x0));
    _mm256_mask_storeu_epi16(row + 16, k1, round_half_x16(e.half_f16, x1));
  }
}

// Writes the M x n tile held in acc0 (columns 0-15) and acc1 (16-31) to C, straight from
// the registers: alpha, beta, a row or column bias and ReLU are applied here, with masked
// loads and stores for a partial tile, so no scratch tile and no second pass over C. GELU
// and odd bias strides are applied right after, while the tile is still in L1.
// The row loop is unrolled so that acc0[i] and acc1[i] name registers. Rolled, it
// indexes the arrays at run time, and GCC keeps them on the stack: zeroed there before
// the kernel's loop and stored there after it, 72 stack accesses per tile. In-process
// A/B on Zen 5, 1 thread, N = 128-2048: 1.006-1.016x.
template <int M>
[[gnu::always_inline]] CTL_CPU_AVX512 inline void store_tile(const __m512 (&acc0)[M], const __m512 (&acc1)[M],
                                                             float* __restrict c, int64_t ldc, int n,
                                                             const TileEpilogue<float>& e) {
  if (e.half_out) return store_tile_half<M>(acc0, acc1, c, ldc, n, e);
  const __mmask16 k0 = low_mask(n), k1 = high_mask(n);
  const __m512 alpha = _mm512_set1_ps(e.alpha), beta = _mm512_set1_ps(e.beta);
  const bool scale = e.alpha != 1.0f;
  const bool read_c = !e.overwrite || e.beta != 0.0f;
  // A bias along the row (column stride 1) or down the column (stride 0) is added here.
  const bool vector_bias = e.finish && e.bias && (e.bias_cs == 1 || e.bias_cs == 0);
  const bool vector_relu = e.finish && e.activation == CTL_ACTIVATION_RELU;
#pragma GCC unroll 12
  for (int i = 0; i < M; ++i) {
    float* row = c + i * ldc;
    __m512 x0 = scale ? _mm512_mul_ps(alpha, acc0[i]) : acc0[i];
    __m512 x1 = scale ? _mm512_mul_ps(alpha, acc1[i]) : acc1[i];
    if (read_c) {
      const __m512 c0 = _mm512_maskz_loadu_ps(k0, row), c1 = _mm512_maskz_loadu_ps(k1, row + 16);
      if (e.overwrite) {
        x0 = _mm512_fmadd_ps(beta, c0, x0);
        x1 = _mm512_fmadd_ps(beta, c1, x1);
      } else {
        x0 = _mm512_add_ps(c0, x0);
        x1 = _mm512_add_ps(c1, x1);
      }
    }
    if (vector_bias) {
      const float* bias = e.bias + i * e.bias_rs;
      if (e.bias_cs == 1) {
        x0 = _mm512_add_ps(x0, _mm512_maskz_loadu_ps(k0, bias));
        x1 = _mm512_add_ps(x1, _mm512_maskz_loadu_ps(k1, bias + 16));
      } else {
        const __m512 v = _mm512_set1_ps(*bias);
        x0 = _mm512_add_ps(x0, v);
        x1 = _mm512_add_ps(x1, v);
      }
    }
    if (vector_relu && (vector_bias || !e.bias)) {
      x0 = relu(x0);
      x1 = relu(x1);
    }
    _mm512_mask_storeu_ps(row, k0, x0);
    _mm512_mask_storeu_ps(row + 16, k1, x1);
  }
  if (e.finish && !((vector_bias || !e.bias) && (vector_relu || e.activation == CTL_ACTIVATION_NONE))) {
    TileEpilogue<float> rest = e;
    if (vector_bias) rest.bias = nullptr;
    finish_tile(c, ldc, M, n, rest);
  }
}

// GCC 12's unpack and shuffle intrinsics start from _mm512_undefined_ps(), which
// -Wuninitialized mistakes for a read of an uninitialised value once they are inlined.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

// Transposes the 16 x 16 block of 32-bit lanes in r in place (r[i][j] becomes r[j][i]):
// pairs of rows interleave, then quads, then the 128-bit lanes move into place in two
// steps. The lanes are f32 values, or pairs of bf16 that move together.
CTL_CPU_AVX512 inline void transpose16(__m512 r[16]) {
  __m512 t[16], u[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // u[4i + c], 128-bit lane L: column 4L + c of rows 4i .. 4i + 3.
  for (int i = 0; i < 4; ++i) {
    u[4 * i + 0] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
    u[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
    u[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
    u[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
  }
  for (int c = 0; c < 4; ++c) {
    const __m512 v = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x88), w = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xDD);
    const __m512 v2 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x88);
    const __m512 w2 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xDD);
    r[c] = _mm512_shuffle_f32x4(v, v2, 0x88);
    r[c + 4] = _mm512_shuffle_f32x4(w, w2, 0x88);
    r[c + 8] = _mm512_shuffle_f32x4(v, v2, 0xDD);
    r[c + 12] = _mm512_shuffle_f32x4(w, w2, 0xDD);
  }
}

#pragma GCC diagnostic pop

}  // namespace catalyst::cpu::avx512
