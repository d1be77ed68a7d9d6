// gemm_avx512_f32.cpp — the f32 GEMM micro-kernel for AVX-512, the path this plugin is
// tuned on: a 12 x 32 tile held in 24 zmm accumulators. Each depth step loads two
// vectors of the packed B panel and multiplies them by 12 elements of A (a packed panel,
// or A's rows read in place), each broadcast from memory by a load that needs no shuffle
// port, so 24 FMAs take 2 + 12 loads: the two FMA ports stay busy.
//
// The tile goes to C from the registers: alpha, beta, a row or column bias and ReLU are
// applied there, with masked loads and stores for a partial tile, so no scratch tile and
// no second pass over C. GELU and odd bias strides are applied right after, while the
// tile is still in L1. One instantiation per row count 1..12 keeps partial row tiles as
// fast per row as full ones.
#include <immintrin.h>

#include <algorithm>

#include "gemm_kernels.h"

namespace catalyst::cpu {
namespace {

constexpr int kMr = 12;
constexpr int kNr = 32;
constexpr int kPrefetch = 8;  // depth steps of B fetched ahead

#define CTL_CPU_AVX512 __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")))

// x with every lane that is not > 0 (and not NaN) replaced by +0, the reference ReLU:
// max_ps would return -0 for -0 and drop NaNs.
CTL_CPU_AVX512 inline __m512 relu(__m512 x) {
  return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_NLE_UQ), x);
}

// kRows: a is A itself, row i at a + i * lda (unit column stride), read without packing;
// otherwise a is a packed panel (lda unused).
template <int M, bool kRows>
CTL_CPU_AVX512 void tile(int64_t kc, const float* __restrict a, int64_t lda, const float* __restrict b,
                         float* __restrict c, int64_t ldc, int n, const TileEpilogue<float>& e) {
  __m512 acc0[M], acc1[M];
#pragma GCC unroll 12
  for (int i = 0; i < M; ++i) acc0[i] = acc1[i] = _mm512_setzero_ps();
  // C is needed only after the loop (read, or at least written): start fetching it now.
  for (int i = 0; i < M; ++i) {
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + 16), _MM_HINT_T0);
  }
#pragma GCC unroll 2
  for (int64_t k = 0; k < kc; ++k) {
    // The B panel streams from L2 (the A panel stays in L1): fetch it a few steps ahead.
    _mm_prefetch(reinterpret_cast<const char*>(b + kPrefetch * kNr), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(b + kPrefetch * kNr + 16), _MM_HINT_T0);
    const __m512 b0 = _mm512_loadu_ps(b);
    const __m512 b1 = _mm512_loadu_ps(b + 16);
#pragma GCC unroll 12
    for (int i = 0; i < M; ++i) {
      const __m512 ai = _mm512_set1_ps(kRows ? a[i * lda] : a[i]);
      acc0[i] = _mm512_fmadd_ps(ai, b0, acc0[i]);
      acc1[i] = _mm512_fmadd_ps(ai, b1, acc1[i]);
    }
    a += kRows ? 1 : kMr;
    b += kNr;
  }

  const __mmask16 k0 = n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1);
  const __mmask16 k1 = n >= 32 ? __mmask16(0xFFFF) : n > 16 ? __mmask16((1u << (n - 16)) - 1) : __mmask16(0);
  const __m512 alpha = _mm512_set1_ps(e.alpha), beta = _mm512_set1_ps(e.beta);
  const bool scale = e.alpha != 1.0f;
  const bool read_c = !e.overwrite || e.beta != 0.0f;
  // A bias along the row (column stride 1) or down the column (stride 0) is added here.
  const bool vector_bias = e.finish && e.bias && (e.bias_cs == 1 || e.bias_cs == 0);
  const bool vector_relu = e.finish && e.activation == CTL_ACTIVATION_RELU;
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

using TileFn = void (*)(int64_t, const float*, int64_t, const float*, float*, int64_t, int, const TileEpilogue<float>&);
template <bool kRows>
constexpr TileFn kTiles[kMr] = {tile<1, kRows>, tile<2, kRows>,  tile<3, kRows>,  tile<4, kRows>,
                                tile<5, kRows>, tile<6, kRows>,  tile<7, kRows>,  tile<8, kRows>,
                                tile<9, kRows>, tile<10, kRows>, tile<11, kRows>, tile<12, kRows>};

void run(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int m, int n,
         const TileEpilogue<float>& e) {
  kTiles<false>[m - 1](kc, a, 0, b, c, ldc, n, e);
}

void run_rows(int64_t kc, const float* a, int64_t lda, const float* b, float* c, int64_t ldc, int m, int n,
              const TileEpilogue<float>& e) {
  kTiles<true>[m - 1](kc, a, lda, b, c, ldc, n, e);
}

// One packed B panel: kc rows of n <= 32 columns, zero-padded to 32, from a B with unit
// column stride; compiled for AVX-512 so each row is two wide copies.
CTL_CPU_AVX512 void pack_b(const float* b, int64_t ldb, int64_t kc, int n, float* dst) {
  const __mmask16 k0 = n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1);
  const __mmask16 k1 = n >= 32 ? __mmask16(0xFFFF) : n > 16 ? __mmask16((1u << (n - 16)) - 1) : __mmask16(0);
  for (int64_t k = 0; k < kc; ++k) {
    _mm512_storeu_ps(dst, _mm512_maskz_loadu_ps(k0, b));
    _mm512_storeu_ps(dst + 16, _mm512_maskz_loadu_ps(k1, b + 16));
    b += ldb;
    dst += kNr;
  }
}

// One packed A panel from an A with unit row stride (a transposed operand, e.g. X^T in
// a weight gradient): each depth step is m <= 12 contiguous floats, one masked copy.
CTL_CPU_AVX512 void pack_a(const float* a, int64_t lda, int64_t kc, int m, float* dst) {
  const __mmask16 rows = __mmask16((1u << m) - 1), panel = __mmask16((1u << kMr) - 1);
  for (int64_t k = 0; k < kc; ++k) {
    _mm512_mask_storeu_ps(dst, panel, _mm512_maskz_loadu_ps(rows, a));
    a += lda;
    dst += kMr;
  }
}

// GCC 12's unpack and shuffle intrinsics start from _mm512_undefined_ps(), which
// -Wuninitialized mistakes for a read of an uninitialised value once they are inlined.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

// Transposes the 16 x 16 block in r in place (r[i][j] becomes r[j][i]): pairs of rows
// interleave, then quads, then the 128-bit lanes move into place in two steps.
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

// Loads `lines` <= 16 strided lines of up to 16 floats (the first `depth` of each; the
// rest and missing lines read as 0), transposes them and stores the first `depth`
// results at dst + step * d, each with the store mask `keep`.
CTL_CPU_AVX512 inline void transpose_block(const float* src, int64_t stride, int lines, int depth, float* dst,
                                           int64_t step, __mmask16 keep) {
  const __mmask16 load = depth >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << depth) - 1);
  __m512 r[16];
  for (int i = 0; i < 16; ++i) r[i] = i < lines ? _mm512_maskz_loadu_ps(load, src + i * stride) : _mm512_setzero_ps();
  transpose16(r);
  for (int d = 0; d < depth; ++d) _mm512_mask_storeu_ps(dst + d * step, keep, r[d]);
}

#pragma GCC diagnostic pop

// pack_b for a transposed B: column j of the panel is contiguous in depth at b + j * ldb,
// so 16 x 16 blocks are transposed in registers instead of gathered one float at a time.
CTL_CPU_AVX512 void pack_b_t(const float* b, int64_t ldb, int64_t kc, int n, float* dst) {
  for (int64_t k = 0; k < kc; k += 16) {
    const int depth = static_cast<int>(std::min<int64_t>(16, kc - k));
    for (int half = 0; half < 2; ++half) {
      const int lines = std::max(0, std::min(16, n - 16 * half));
      transpose_block(b + 16 * half * ldb + k, ldb, lines, depth, dst + k * kNr + 16 * half, kNr, 0xFFFF);
    }
  }
}

// pack_a for a row-major A (rows lda apart, unit column stride) in N > kRowsAMaxN
// products: 16 rows are transposed at a time, of which the panel keeps 12.
CTL_CPU_AVX512 void pack_a_rows(const float* a, int64_t lda, int64_t kc, int m, float* dst) {
  const __mmask16 panel = __mmask16((1u << kMr) - 1);
  for (int64_t k = 0; k < kc; k += 16) {
    const int depth = static_cast<int>(std::min<int64_t>(16, kc - k));
    transpose_block(a + k, lda, m, depth, dst + k * kMr, kMr, panel);
  }
}

}  // namespace

const GemmKernel<float> kGemmAvx512F32{kMr, kNr, run, run_rows, pack_b, pack_a, pack_b_t, pack_a_rows};

}  // namespace catalyst::cpu
