// gemm_avx512_bf16.cpp — the bf16 GEMM micro-kernel for CPUs with AVX512-BF16 and no AMX
// tiles (AMD Zen 4 and 5, Intel Cooper Lake). vdpbf16ps multiplies 16 pairs of bf16 by
// 16 pairs and adds both products of each pair to one of 16 f32 sums: one instruction
// does the work of two f32 FMAs, at the FMA's rate. The tile is 12 x 32 as in the f32
// kernel, in 24 zmm accumulators; each step covers two depths, with two vectors of the
// packed B panel (32 columns x 2 depths) and 12 broadcasts of an A pair (4 bytes, loaded
// straight into the broadcast).
//
// A product of two bf16 is exact in f32, and vdpbf16ps adds each to the sum with one
// rounding to nearest even, so a sum differs from the f32 GEMM's only in its order. It
// reads subnormal inputs as zero and flushes subnormal sums to zero: gemm_kernels.h says
// so to callers, who send inputs with bf16 subnormals to the f32 conversion path.
//
// Panels pack two depths per group (GemmKernel::kp = 2): B's group g holds, per column,
// depths 2g and 2g+1 side by side (the pairs vdpbf16ps multiplies), and A's holds the
// same pair per row, one 32-bit word each.
#include "gemm_avx512.h"

#include <algorithm>
#include <cstring>

#define CTL_CPU_AVX512_BF16 __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx512bf16,avx2,fma")))

namespace catalyst::cpu {
namespace {

constexpr int kMr = 12;
constexpr int kNr = 32;
constexpr int kPrefetch = 8;  // depth pairs of B fetched ahead

using avx512::transpose16;

// Two bf16 at p as one 32-bit word, depth 2g in the low half (as packed).
inline uint32_t pair_at(const uint16_t* p) {
  uint32_t w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

CTL_CPU_AVX512_BF16 inline __m512 dot(__m512 acc, __m512i a, __m512i b) {
  return _mm512_dpbf16_ps(acc, reinterpret_cast<__m512bh>(a), reinterpret_cast<__m512bh>(b));
}

// kRows: a is A itself, row i at a + i * lda (unit column stride), read without packing;
// otherwise a is a packed panel (lda unused).
template <int M, bool kRows>
CTL_CPU_AVX512_BF16 void tile(int64_t kc, const uint16_t* __restrict a, int64_t lda, const uint16_t* __restrict b,
                              float* __restrict c, int64_t ldc, int n, const TileEpilogue<float>& e) {
  __m512 acc0[M], acc1[M];
#pragma GCC unroll 12
  for (int i = 0; i < M; ++i) acc0[i] = acc1[i] = _mm512_setzero_ps();
  avx512::prefetch_tile<M>(c, ldc);
  // A read in place has no zero after an odd depth: its last step reads one value. A
  // packed panel is zero-padded, so it runs every pair whole.
  const int64_t pairs = kRows ? kc / 2 : (kc + 1) / 2;
#pragma GCC unroll 2
  for (int64_t g = 0; g < pairs; ++g) {
    // The B panel streams from L2 (the A panel stays in L1): fetch it a few steps ahead.
    _mm_prefetch(reinterpret_cast<const char*>(b + kPrefetch * 2 * kNr), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(b + kPrefetch * 2 * kNr + 32), _MM_HINT_T0);
    const __m512i b0 = _mm512_loadu_si512(b);
    const __m512i b1 = _mm512_loadu_si512(b + 32);
#pragma GCC unroll 12
    for (int i = 0; i < M; ++i) {
      const __m512i ai = _mm512_set1_epi32(static_cast<int>(pair_at(kRows ? a + i * lda : a + 2 * i)));
      acc0[i] = dot(acc0[i], ai, b0);
      acc1[i] = dot(acc1[i], ai, b1);
    }
    a += kRows ? 2 : 2 * kMr;
    b += 2 * kNr;
  }
  if (kRows && kc % 2 != 0) {  // the last depth: B's second half is padding (zero), A's is 0
    const __m512i b0 = _mm512_loadu_si512(b);
    const __m512i b1 = _mm512_loadu_si512(b + 32);
    for (int i = 0; i < M; ++i) {
      const __m512i ai = _mm512_set1_epi32(a[i * lda]);
      acc0[i] = dot(acc0[i], ai, b0);
      acc1[i] = dot(acc1[i], ai, b1);
    }
  }
  avx512::store_tile<M>(acc0, acc1, c, ldc, n, e);
}

using TileFn = void (*)(int64_t, const uint16_t*, int64_t, const uint16_t*, float*, int64_t, int,
                        const TileEpilogue<float>&);
template <bool kRows>
constexpr TileFn kTiles[kMr] = {tile<1, kRows>, tile<2, kRows>,  tile<3, kRows>,  tile<4, kRows>,
                                tile<5, kRows>, tile<6, kRows>,  tile<7, kRows>,  tile<8, kRows>,
                                tile<9, kRows>, tile<10, kRows>, tile<11, kRows>, tile<12, kRows>};

void run(int64_t kc, const uint16_t* a, const uint16_t* b, float* c, int64_t ldc, int m, int n,
         const TileEpilogue<float>& e) {
  kTiles<false>[m - 1](kc, a, 0, b, c, ldc, n, e);
}

void run_rows(int64_t kc, const uint16_t* a, int64_t lda, const uint16_t* b, float* c, int64_t ldc, int m, int n,
              const TileEpilogue<float>& e) {
  kTiles<true>[m - 1](kc, a, lda, b, c, ldc, n, e);
}

// The first `count` (<= 32) 16-bit lanes.
CTL_CPU_AVX512 inline __mmask32 lanes16(int64_t count) {
  return count >= 32 ? ~__mmask32{0} : static_cast<__mmask32>((1u << count) - 1u);
}

// Interleaves the 16-bit lanes of two rows: pair j of the result is (r0[j], r1[j]).
// `low` gives pairs 0-15, else 16-31.
CTL_CPU_AVX512 inline __m512i interleave16(__m512i r0, __m512i r1, bool low) {
  alignas(64) static constexpr uint16_t kLow[32] = {0, 32, 1, 33, 2,  34, 3,  35, 4,  36, 5,  37, 6,  38, 7,  39,
                                                    8, 40, 9, 41, 10, 42, 11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
  alignas(64) static constexpr uint16_t kHigh[32] = {16, 48, 17, 49, 18, 50, 19, 51, 20, 52, 21, 53, 22, 54, 23, 55,
                                                     24, 56, 25, 57, 26, 58, 27, 59, 28, 60, 29, 61, 30, 62, 31, 63};
  return _mm512_permutex2var_epi16(r0, _mm512_load_si512(low ? kLow : kHigh), r1);
}

// One packed B panel from a B with unit column stride (row k at b + k * ldb): each pair
// of rows, n <= 32 columns of each, interleaved into two vectors.
CTL_CPU_AVX512 void pack_b(const uint16_t* b, int64_t ldb, int64_t kc, int n, uint16_t* dst) {
  const __mmask32 cols = lanes16(n);
  for (int64_t k = 0; k < kc; k += 2) {
    const __m512i r0 = _mm512_maskz_loadu_epi16(cols, b + k * ldb);
    const __m512i r1 = k + 1 < kc ? _mm512_maskz_loadu_epi16(cols, b + (k + 1) * ldb) : _mm512_setzero_si512();
    _mm512_storeu_si512(dst, interleave16(r0, r1, true));
    _mm512_storeu_si512(dst + 32, interleave16(r0, r1, false));
    dst += 2 * kNr;
  }
}

// One packed A panel from an A with unit row stride (a transposed operand, e.g. X^T in a
// weight gradient): depth step k holds m <= 12 contiguous values at a + k * lda.
CTL_CPU_AVX512 void pack_a(const uint16_t* a, int64_t lda, int64_t kc, int m, uint16_t* dst) {
  const __mmask32 rows = lanes16(m), panel = lanes16(2 * kMr);
  for (int64_t k = 0; k < kc; k += 2) {
    const __m512i r0 = _mm512_maskz_loadu_epi16(rows, a + k * lda);
    const __m512i r1 = k + 1 < kc ? _mm512_maskz_loadu_epi16(rows, a + (k + 1) * lda) : _mm512_setzero_si512();
    _mm512_mask_storeu_epi16(dst, panel, interleave16(r0, r1, true));
    dst += 2 * kMr;
  }
}

// Loads `lines` <= 16 lines, `stride` values apart, each holding up to 16 depth pairs
// (its first `depth` <= 32 values; the rest and missing lines read as 0), transposes
// them as 32-bit words and stores the first (depth + 1) / 2 results, one per pair, at
// dst + step * g with the 32-bit store mask `keep`.
CTL_CPU_AVX512 inline void transpose_pairs(const uint16_t* src, int64_t stride, int lines, int64_t depth, uint16_t* dst,
                                           int64_t step, __mmask16 keep) {
  const __mmask32 load = lanes16(depth);
  __m512 r[16];
  for (int i = 0; i < 16; ++i) {
    r[i] = i < lines ? _mm512_castsi512_ps(_mm512_maskz_loadu_epi16(load, src + i * stride)) : _mm512_setzero_ps();
  }
  transpose16(r);
  for (int64_t g = 0; g < (depth + 1) / 2; ++g) _mm512_mask_storeu_ps(dst + g * step, keep, r[g]);
}

// pack_b for a transposed B: column j holds its depths contiguously at b + j * ldb, so
// each column's pairs are 32-bit words, and blocks of 16 columns x 16 pairs are
// transposed in registers.
CTL_CPU_AVX512 void pack_b_t(const uint16_t* b, int64_t ldb, int64_t kc, int n, uint16_t* dst) {
  for (int64_t k = 0; k < kc; k += 32) {
    const int64_t depth = std::min<int64_t>(32, kc - k);
    for (int half = 0; half < 2; ++half) {
      const int lines = std::max(0, std::min(16, n - 16 * half));
      transpose_pairs(b + 16 * half * ldb + k, ldb, lines, depth, dst + k * kNr + 32 * half, 2 * kNr, 0xFFFF);
    }
  }
}

// pack_a for a row-major A (rows lda apart, unit column stride) in N > kRowsAMaxN
// products: 16 rows are transposed at a time, of which the panel keeps 12.
CTL_CPU_AVX512 void pack_a_rows(const uint16_t* a, int64_t lda, int64_t kc, int m, uint16_t* dst) {
  const __mmask16 panel = __mmask16((1u << kMr) - 1);
  for (int64_t k = 0; k < kc; k += 32) {
    transpose_pairs(a + k, lda, m, std::min<int64_t>(32, kc - k), dst + k * kMr, 2 * kMr, panel);
  }
}

}  // namespace

const GemmKernel<uint16_t, float> kGemmAvx512Bf16{.mr = kMr,
                                                  .nr = kNr,
                                                  .kp = 2,
                                                  .run = run,
                                                  .run_rows = run_rows,
                                                  .pack_b = pack_b,
                                                  .pack_a = pack_a,
                                                  .pack_b_t = pack_b_t,
                                                  .pack_a_rows = pack_a_rows,
                                                  .rounds_half = true};

}  // namespace catalyst::cpu
