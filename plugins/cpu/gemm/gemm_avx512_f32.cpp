// gemm_avx512_f32.cpp — the f32 GEMM micro-kernel for AVX-512, the path this plugin is
// tuned on: a 12 x 32 tile held in 24 zmm accumulators. Each depth step loads two
// vectors of the packed B panel (or of B itself, in the tile that packs the panel) and
// multiplies them by 12 elements of A (a packed panel, or A's rows read in place), each
// broadcast from memory by a load that needs no shuffle port, so 24 FMAs take 2 + 12
// loads: the two FMA ports stay busy.
//
// The tile goes to C from the registers, epilogue included (gemm_avx512.h). One
// instantiation per row count 1..12 keeps partial row tiles as fast per row as full ones.
#include "gemm_avx512.h"

#include <algorithm>
#include <type_traits>

namespace catalyst::cpu {
namespace {

constexpr int kMr = 12;
constexpr int kNr = 32;
constexpr int kPrefetch = 8;  // depth steps of B fetched ahead

using avx512::high_mask;
using avx512::low_mask;
using avx512::transpose16;

// kRows: a is A itself, row i at a + i * lda (unit column stride), read without packing;
// otherwise a is a packed panel (lda unused).
// kPackB: b is B itself (rows ldb apart, unit column stride), not a packed panel: each
// depth step's two vectors are loaded from it (masked to n columns) and also stored to
// bdst, so the tile packs the panel while it multiplies and the later tiles of the panel
// read the copy. The stores cost little beside the step's 24 FMAs; a separate pass
// (pack_b) reads and writes the panel once more.
template <int M, bool kRows, bool kPackB>
CTL_CPU_AVX512 void tile(int64_t kc, const float* __restrict a, int64_t lda, const float* __restrict b,
                         [[maybe_unused]] int64_t ldb, [[maybe_unused]] float* __restrict bdst, float* __restrict c,
                         int64_t ldc, int n, const TileEpilogue<float>& e) {
  __m512 acc0[M], acc1[M];
#pragma GCC unroll 12
  for (int i = 0; i < M; ++i) acc0[i] = acc1[i] = _mm512_setzero_ps();
  avx512::prefetch_tile<M>(c, ldc);
  [[maybe_unused]] const __mmask16 k0 = low_mask(n), k1 = high_mask(n);
#pragma GCC unroll 2
  for (int64_t k = 0; k < kc; ++k) {
    __m512 b0, b1;
    if constexpr (kPackB) {
      // A row of B spans two or three lines: fetch them some steps ahead.
      const char* ahead = reinterpret_cast<const char*>(b + kPrefetch * ldb);
      _mm_prefetch(ahead, _MM_HINT_T0);
      _mm_prefetch(ahead + 64, _MM_HINT_T0);
      _mm_prefetch(ahead + 124, _MM_HINT_T0);
      b0 = _mm512_maskz_loadu_ps(k0, b);
      b1 = _mm512_maskz_loadu_ps(k1, b + 16);
      _mm512_storeu_ps(bdst, b0);
      _mm512_storeu_ps(bdst + 16, b1);
      b += ldb;
      bdst += kNr;
    } else {
      // The B panel streams from L2 (the A panel stays in L1): fetch it a few steps ahead.
      _mm_prefetch(reinterpret_cast<const char*>(b + kPrefetch * kNr), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(b + kPrefetch * kNr + 16), _MM_HINT_T0);
      b0 = _mm512_loadu_ps(b);
      b1 = _mm512_loadu_ps(b + 16);
      b += kNr;
    }
#pragma GCC unroll 12
    for (int i = 0; i < M; ++i) {
      const __m512 ai = _mm512_set1_ps(kRows ? a[i * lda] : a[i]);
      acc0[i] = _mm512_fmadd_ps(ai, b0, acc0[i]);
      acc1[i] = _mm512_fmadd_ps(ai, b1, acc1[i]);
    }
    a += kRows ? 1 : kMr;
  }

  avx512::store_tile<M>(acc0, acc1, c, ldc, n, e);
}

using TileFn = void (*)(int64_t, const float*, int64_t, const float*, int64_t, float*, float*, int64_t, int,
                        const TileEpilogue<float>&);
template <bool kRows, bool kPackB>
constexpr TileFn kTiles[kMr] = {tile<1, kRows, kPackB>,  tile<2, kRows, kPackB>,  tile<3, kRows, kPackB>,
                                tile<4, kRows, kPackB>,  tile<5, kRows, kPackB>,  tile<6, kRows, kPackB>,
                                tile<7, kRows, kPackB>,  tile<8, kRows, kPackB>,  tile<9, kRows, kPackB>,
                                tile<10, kRows, kPackB>, tile<11, kRows, kPackB>, tile<12, kRows, kPackB>};

void run(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int m, int n,
         const TileEpilogue<float>& e) {
  kTiles<false, false>[m - 1](kc, a, 0, b, 0, nullptr, c, ldc, n, e);
}

void run_rows(int64_t kc, const float* a, int64_t lda, const float* b, float* c, int64_t ldc, int m, int n,
              const TileEpilogue<float>& e) {
  kTiles<true, false>[m - 1](kc, a, lda, b, 0, nullptr, c, ldc, n, e);
}

void run_packing_b(int64_t kc, const float* a, const float* b, int64_t ldb, float* bdst, float* c, int64_t ldc, int m,
                   int n, const TileEpilogue<float>& e) {
  kTiles<false, true>[m - 1](kc, a, 0, b, ldb, bdst, c, ldc, n, e);
}

void run_rows_packing_b(int64_t kc, const float* a, int64_t lda, const float* b, int64_t ldb, float* bdst, float* c,
                        int64_t ldc, int m, int n, const TileEpilogue<float>& e) {
  kTiles<true, true>[m - 1](kc, a, lda, b, ldb, bdst, c, ldc, n, e);
}

// What a packer reads: f32, or f16 or bf16 that it converts to f32 (the f16 and bf16
// matmuls' conversion paths pack for this kernel too).
enum class Source { kF32, kF16, kBf16 };
template <Source kS>
using SourceType = std::conditional_t<kS == Source::kF32, float, uint16_t>;

// Up to 16 values at p (the lanes of `load`, the rest 0) as floats.
template <Source kS>
CTL_CPU_AVX512 inline __m512 load16(const SourceType<kS>* p, __mmask16 load) {
  if constexpr (kS == Source::kF32) {
    return _mm512_maskz_loadu_ps(load, p);
  } else if constexpr (kS == Source::kF16) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(load, p));
  } else {
    return widen_bf16_x16(_mm256_maskz_loadu_epi16(load, p));
  }
}

// Loads `lines` <= 16 strided lines of up to 16 values (the first `depth` of each; the
// rest and missing lines read as 0), transposes them and stores the first `depth`
// results at dst + step * d, each with the store mask `keep`.
template <Source kS>
CTL_CPU_AVX512 inline void transpose_block(const SourceType<kS>* src, int64_t stride, int lines, int depth, float* dst,
                                           int64_t step, __mmask16 keep) {
  const __mmask16 load = low_mask(depth);
  __m512 r[16];
  for (int i = 0; i < 16; ++i) r[i] = i < lines ? load16<kS>(src + i * stride, load) : _mm512_setzero_ps();
  transpose16(r);
  for (int d = 0; d < depth; ++d) _mm512_mask_storeu_ps(dst + d * step, keep, r[d]);
}

// One packed A panel from an A with unit row stride (a transposed operand, e.g. X^T in
// a weight gradient): each depth step is m <= 12 contiguous values, one masked copy (and
// conversion, for f16 and bf16).
template <Source kS>
CTL_CPU_AVX512 void pack_a(const SourceType<kS>* a, int64_t lda, int64_t kc, int m, float* dst) {
  const __mmask16 rows = __mmask16((1u << m) - 1), panel = __mmask16((1u << kMr) - 1);
  for (int64_t k = 0; k < kc; ++k) {
    _mm512_mask_storeu_ps(dst, panel, load16<kS>(a, rows));
    a += lda;
    dst += kMr;
  }
}

// pack_b for a transposed B: column j of the panel is contiguous in depth at b + j * ldb,
// so 16 x 16 blocks are transposed in registers instead of gathered one value at a time.
template <Source kS>
CTL_CPU_AVX512 void pack_b_t(const SourceType<kS>* b, int64_t ldb, int64_t kc, int n, float* dst) {
  for (int64_t k = 0; k < kc; k += 16) {
    const int depth = static_cast<int>(std::min<int64_t>(16, kc - k));
    for (int half = 0; half < 2; ++half) {
      const int lines = std::max(0, std::min(16, n - 16 * half));
      transpose_block<kS>(b + 16 * half * ldb + k, ldb, lines, depth, dst + k * kNr + 16 * half, kNr, 0xFFFF);
    }
  }
}

// pack_a for a row-major A (rows lda apart, unit column stride) in N > kRowsAMaxN
// products: 16 rows are transposed at a time, of which the panel keeps 12. The f16 and
// bf16 forms are the conversion paths' packers for any N.
template <Source kS>
CTL_CPU_AVX512 void pack_a_rows(const SourceType<kS>* a, int64_t lda, int64_t kc, int m, float* dst) {
  const __mmask16 panel = __mmask16((1u << kMr) - 1);
  for (int64_t k = 0; k < kc; k += 16) {
    const int depth = static_cast<int>(std::min<int64_t>(16, kc - k));
    transpose_block<kS>(a + k, lda, m, depth, dst + k * kMr, kMr, panel);
  }
}

// One packed B panel: kc rows of n <= 32 columns, zero-padded to 32, from a B with unit
// column stride; compiled for AVX-512 so each row is two wide copies. The f16 and bf16
// forms (two converting loads per row) are the conversion paths' packers.
template <Source kS>
CTL_CPU_AVX512 void pack_b(const SourceType<kS>* b, int64_t ldb, int64_t kc, int n, float* dst) {
  const __mmask16 k0 = low_mask(n), k1 = high_mask(n);
  for (int64_t k = 0; k < kc; ++k) {
    _mm512_storeu_ps(dst, load16<kS>(b, k0));
    _mm512_storeu_ps(dst + 16, load16<kS>(b + 16, k1));
    b += ldb;
    dst += kNr;
  }
}

}  // namespace

const GemmKernel<float> kGemmAvx512F32{kMr,
                                       kNr,
                                       1,
                                       run,
                                       run_rows,
                                       pack_b<Source::kF32>,
                                       pack_a<Source::kF32>,
                                       pack_b_t<Source::kF32>,
                                       pack_a_rows<Source::kF32>,
                                       run_packing_b,
                                       run_rows_packing_b,
                                       true};
const GemmHalfPackers kGemmAvx512F16Packers{pack_b<Source::kF16>, pack_a_rows<Source::kF16>, pack_a<Source::kF16>,
                                            pack_b_t<Source::kF16>};
const GemmHalfPackers kGemmAvx512Bf16Packers{pack_b<Source::kBf16>, pack_a_rows<Source::kBf16>, pack_a<Source::kBf16>,
                                             pack_b_t<Source::kBf16>};

}  // namespace catalyst::cpu
