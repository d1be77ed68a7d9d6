// gemm_amx_pack.cpp — packing of f16/bf16 operands into the AMX tile layout, with the
// exact hi/lo split of f16 (see gemm_amx.h). Vector packers cover unit-stride rows (A),
// unit-stride columns (B) and column-major bf16 B; other strides go element by element.
#include "gemm_amx.h"

#include "intrinsics.h"

#include <cstring>

#include "dtype_dispatch.h"

namespace catalyst::cpu {
namespace {

// The split of one f16 value into bf16 hi and lo with hi + lo == x exactly: hi is x
// rounded to bf16, to nearest even (x is finite, and f16's range lies far inside bf16's,
// so this never overflows); lo = x - hi is exact in f32 and has at most 3 significant
// bits, so its low 16 bits are zero and a bf16 holds it exactly. |lo| <= 2^-8 |x|, the
// bound the three-product scheme relies on (gemm_amx.h).
inline void split_f16(uint16_t h, uint16_t* hi, uint16_t* lo) {
  const float x = sdk::half_to_float(h);
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  const uint32_t hi_bits = (bits + 0x7fffu + ((bits >> 16) & 1u)) & 0xffff0000u;
  float hi_value;
  std::memcpy(&hi_value, &hi_bits, sizeof hi_value);
  const float rest = x - hi_value;  // exact
  uint32_t lo_bits;
  std::memcpy(&lo_bits, &rest, sizeof lo_bits);
  *hi = static_cast<uint16_t>(hi_bits >> 16);
  *lo = static_cast<uint16_t>(lo_bits >> 16);
}

// One plane of an f16 value: its hi (kF16Hi) or lo (kF16Lo) part.
inline uint16_t f16_plane(uint16_t h, bool lo) {
  uint16_t hi_part, lo_part;
  split_f16(h, &hi_part, &lo_part);
  return lo ? lo_part : hi_part;
}

// The packed value of one source element for the one-per-depth kinds.
inline uint16_t plane_value(HalfKind kind, uint16_t v) {
  return kind == HalfKind::kBf16 ? v : f16_plane(v, kind == HalfKind::kF16Lo);
}

// Packed value `kp` of a depth row for one source element pointer getter; used by the
// general-stride packers. `at(k)` returns the 16-bit source element at depth k.
template <class At>
inline uint16_t packed_a_value(HalfKind kind, int64_t kp, const At& at) {
  if (kind != HalfKind::kF16Split) return plane_value(kind, at(kp));
  uint16_t hi, lo;
  split_f16(at(kp >> 2), &hi, &lo);
  return (kp & 1) ? lo : hi;  // A: hi, lo, hi, lo
}
template <class At>
inline uint16_t packed_b_value(HalfKind kind, int64_t kp, const At& at) {
  if (kind != HalfKind::kF16Split) return plane_value(kind, at(kp));
  uint16_t hi, lo;
  split_f16(at(kp >> 2), &hi, &lo);
  return (kp & 2) ? lo : hi;  // B: hi, hi, lo, lo
}

// 16 f16 values -> their hi and lo bf16 parts (as split_f16) in the low and high 16 bits
// of each lane.
CTL_CPU_AVX512_HALF inline __m512i split_f16_x16(__m256i h) {
  const __m512 x = _mm512_cvtph_ps(h);  // finite: no NaN to keep apart
  const __m512i hi = _mm512_and_si512(bf16_rounding_x16(x), _mm512_set1_epi32(static_cast<int>(0xffff0000u)));
  const __m512 rest = _mm512_sub_ps(x, _mm512_castsi512_ps(hi));
  return _mm512_or_si512(_mm512_srli_epi32(hi, 16), _mm512_castps_si512(rest));
}

// 16 f16 values -> their hi or lo plane values, one per 32-bit lane, in the low 16 bits.
CTL_CPU_AVX512_HALF inline __m512i f16_plane_x16(__m256i h, bool lo) {
  const __m512i pairs = split_f16_x16(h);
  return lo ? _mm512_srli_epi32(pairs, 16) : _mm512_and_si512(pairs, _mm512_set1_epi32(0xffff));
}

// 32 f16 values -> 32 plane values, in place of the lanes they came from.
CTL_CPU_AVX512_HALF inline __m512i f16_plane_x32(__m512i h, bool lo) {
  const __m256i low = _mm512_cvtepi32_epi16(f16_plane_x16(_mm512_castsi512_si256(h), lo));
  const __m256i high = _mm512_cvtepi32_epi16(f16_plane_x16(_mm512_extracti64x4_epi64(h, 1), lo));
  return _mm512_inserti64x4(_mm512_castsi256_si512(low), high, 1);
}

CTL_CPU_AVX512_HALF void pack_a_rows_unit(HalfKind kind, uint16_t* dst, const uint16_t* src, int64_t rs, int64_t rows,
                                          int64_t depth, int64_t chunks) {
  if (kind != HalfKind::kF16Split) {
    const bool plane = kind != HalfKind::kBf16, lo = kind == HalfKind::kF16Lo;
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t k0 = c * kAmxChunk;
      const int64_t n = depth - k0 >= kAmxChunk ? kAmxChunk : (depth > k0 ? depth - k0 : 0);
      const __mmask32 mask = n >= 32 ? ~__mmask32{0} : static_cast<__mmask32>((1u << n) - 1u);
      for (int64_t r = 0; r < 16; ++r) {
        __m512i v = _mm512_setzero_si512();
        if (r < rows) v = _mm512_maskz_loadu_epi16(mask, src + r * rs + k0);
        if (plane) v = f16_plane_x32(v, lo);  // zero stays zero in both planes
        _mm512_storeu_si512(dst + c * kAmxPanelChunk + r * kAmxChunk, v);
      }
    }
    return;
  }
  // f16: 16 source values make two chunks (8 depths x 4 packed values each).
  const __m512i first = _mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0);
  const __m512i second = _mm512_set_epi32(15, 15, 14, 14, 13, 13, 12, 12, 11, 11, 10, 10, 9, 9, 8, 8);
  for (int64_t c = 0; c < chunks; c += 2) {
    const int64_t k0 = c * kAmxChunk / 4;  // source depth of this chunk pair
    const int64_t n = depth - k0 >= 16 ? 16 : (depth > k0 ? depth - k0 : 0);
    const __mmask16 mask = static_cast<__mmask16>((1u << n) - 1u);
    for (int64_t r = 0; r < 16; ++r) {
      __m512i pairs = _mm512_setzero_si512();
      if (r < rows) pairs = split_f16_x16(_mm256_maskz_loadu_epi16(mask, src + r * rs + k0));
      _mm512_storeu_si512(dst + c * kAmxPanelChunk + r * kAmxChunk, _mm512_permutexvar_epi32(first, pairs));
      if (c + 1 < chunks) {
        _mm512_storeu_si512(dst + (c + 1) * kAmxPanelChunk + r * kAmxChunk, _mm512_permutexvar_epi32(second, pairs));
      }
    }
  }
}

// One depth row of up to 16 columns (the lanes of `mask`) of a one-per-depth kind, as
// 32-bit lanes holding the packed value in their low 16 bits.
CTL_CPU_AVX512_HALF inline __m512i depth_row_lanes(HalfKind kind, const uint16_t* row, __mmask16 mask) {
  const __m256i h = _mm256_maskz_loadu_epi16(mask, row);
  return kind == HalfKind::kBf16 ? _mm512_cvtepu16_epi32(h) : f16_plane_x16(h, kind == HalfKind::kF16Lo);
}

CTL_CPU_AVX512_HALF void pack_b_cols_unit(HalfKind kind, uint16_t* dst, const uint16_t* src, int64_t rs, int64_t cols,
                                          int64_t depth, int64_t chunks) {
  const __mmask16 mask = static_cast<__mmask16>(cols >= 16 ? 0xffffu : (1u << cols) - 1u);
  const int64_t pair_rows = chunks * 16;
  for (int64_t pr = 0; pr < pair_rows; ++pr) {
    __m512i v = _mm512_setzero_si512();
    if (kind != HalfKind::kF16Split) {
      const int64_t k = 2 * pr;
      if (k < depth) {
        const __m512i r0 = depth_row_lanes(kind, src + k * rs, mask);
        __m512i r1 = _mm512_setzero_si512();
        if (k + 1 < depth) r1 = depth_row_lanes(kind, src + (k + 1) * rs, mask);
        v = _mm512_or_si512(r0, _mm512_slli_epi32(r1, 16));
      }
    } else {
      const int64_t k = pr >> 1;  // pair row 2k: (hi, hi); 2k + 1: (lo, lo)
      if (k < depth) {
        const __m512i pairs = split_f16_x16(_mm256_maskz_loadu_epi16(mask, src + k * rs));
        const __m512i half =
            (pr & 1) ? _mm512_srli_epi32(pairs, 16) : _mm512_and_si512(pairs, _mm512_set1_epi32(0xffff));
        v = _mm512_or_si512(half, _mm512_slli_epi32(half, 16));
      }
    }
    _mm512_storeu_si512(dst + pr * 32, v);
  }
}

// bf16 B, or one plane of f16 B, stored column by column (rs == 1): each pair is one
// 32-bit word of a column.
CTL_CPU_AVX512_HALF void pack_b_bf16_cols_contiguous(HalfKind kind, uint16_t* dst, const uint16_t* src, int64_t cs,
                                                     int64_t cols, int64_t depth, int64_t chunks) {
  const bool plane = kind != HalfKind::kBf16, lo = kind == HalfKind::kF16Lo;
  const __mmask16 mask = static_cast<__mmask16>(cols >= 16 ? 0xffffu : (1u << cols) - 1u);
  const __m512i offsets = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                             _mm512_set1_epi32(static_cast<int>(cs * 2)));  // bytes
  const int64_t pair_rows = chunks * 16;
  const int64_t full_pairs = depth / 2;
  for (int64_t pr = 0; pr < pair_rows; ++pr) {
    __m512i v = _mm512_setzero_si512();
    if (pr < full_pairs) {
      v = _mm512_mask_i32gather_epi32(v, mask, offsets, src + 2 * pr, 1);
      if (plane) {  // both halves of each word: depth 2 pr low, 2 pr + 1 high
        const __m512i even = f16_plane_x16(_mm512_cvtepi32_epi16(v), lo);
        const __m512i odd = f16_plane_x16(_mm512_cvtepi32_epi16(_mm512_srli_epi32(v, 16)), lo);
        v = _mm512_or_si512(even, _mm512_slli_epi32(odd, 16));
      }
    } else if (pr == full_pairs && (depth & 1)) {
      for (int64_t j = 0; j < cols && j < 16; ++j) dst[pr * 32 + 2 * j] = plane_value(kind, src[j * cs + 2 * pr]);
      for (int64_t j = 0; j < 16; ++j) {
        if (j >= cols) dst[pr * 32 + 2 * j] = 0;
        dst[pr * 32 + 2 * j + 1] = 0;
      }
      continue;
    }
    _mm512_storeu_si512(dst + pr * 32, v);
  }
}

// The two B pair rows of one f16 depth row (16 columns): (hi, hi), then (lo, lo).
CTL_CPU_AVX512_HALF inline void store_f16_b_rows(uint16_t* dst, __m256i h) {
  const __m512i pairs = split_f16_x16(h);
  const __m512i hi = _mm512_and_si512(pairs, _mm512_set1_epi32(0xffff)), lo = _mm512_srli_epi32(pairs, 16);
  _mm512_storeu_si512(dst, _mm512_or_si512(hi, _mm512_slli_epi32(hi, 16)));
  _mm512_storeu_si512(dst + 32, _mm512_or_si512(lo, _mm512_slli_epi32(lo, 16)));
}

// f16 B stored column by column (rs == 1), as x @ W^T reads W: one gather of 32-bit words
// fetches depths k and k + 1 of 16 columns.
CTL_CPU_AVX512_HALF void pack_b_f16_cols_contiguous(uint16_t* dst, const uint16_t* src, int64_t cs, int64_t cols,
                                                    int64_t depth, int64_t chunks) {
  const __mmask16 mask = static_cast<__mmask16>(cols >= 16 ? 0xffffu : (1u << cols) - 1u);
  const __m512i offsets = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                             _mm512_set1_epi32(static_cast<int>(cs * 2)));  // bytes
  const int64_t depths = chunks * 8;  // each depth fills two pair rows
  int64_t k = 0;
  for (; k + 1 < depth; k += 2) {
    const __m512i words = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), mask, offsets, src + k, 1);
    store_f16_b_rows(dst + 2 * k * 32, _mm512_cvtepi32_epi16(words));
    store_f16_b_rows(dst + 2 * (k + 1) * 32, _mm512_cvtepi32_epi16(_mm512_srli_epi32(words, 16)));
  }
  if (k < depth) {  // an odd last depth: a 32-bit gather would read past the column
    alignas(32) uint16_t row[16] = {};
    for (int64_t j = 0; j < cols && j < 16; ++j) row[j] = src[j * cs + k];
    store_f16_b_rows(dst + 2 * k * 32, _mm256_load_si256(reinterpret_cast<const __m256i*>(row)));
    ++k;
  }
  for (; k < depths; ++k) {
    _mm512_storeu_si512(dst + 2 * k * 32, _mm512_setzero_si512());
    _mm512_storeu_si512(dst + (2 * k + 1) * 32, _mm512_setzero_si512());
  }
}

}  // namespace

void amx_pack_a(HalfKind kind, uint16_t* dst, const uint16_t* src, int64_t rs, int64_t cs, int64_t rows, int64_t depth,
                int64_t chunks) {
  if (cs == 1 || rows <= 0 || depth <= 0) {
    pack_a_rows_unit(kind, dst, src, rs, rows, rows > 0 ? depth : 0, chunks);
    return;
  }
  const int64_t packed = depth * packed_per_depth(kind);
  for (int64_t c = 0; c < chunks; ++c) {
    for (int64_t r = 0; r < 16; ++r) {
      uint16_t* d = dst + c * kAmxPanelChunk + r * kAmxChunk;
      const uint16_t* row = src + r * rs;
      auto at = [&](int64_t k) { return row[k * cs]; };
      for (int64_t j = 0; j < kAmxChunk; ++j) {
        const int64_t kp = c * kAmxChunk + j;
        d[j] = r < rows && kp < packed ? packed_a_value(kind, kp, at) : uint16_t{0};
      }
    }
  }
}

void amx_pack_b(HalfKind kind, uint16_t* dst, const uint16_t* src, int64_t rs, int64_t cs, int64_t cols, int64_t depth,
                int64_t chunks) {
  if (cols <= 0 || depth <= 0) {
    std::memset(dst, 0, static_cast<size_t>(chunks * kAmxPanelChunk) * sizeof(uint16_t));
    return;
  }
  if (cs == 1) {
    pack_b_cols_unit(kind, dst, src, rs, cols, depth, chunks);
    return;
  }
  if (rs == 1 && cs * 32 < (int64_t{1} << 31)) {  // gather offsets fit in 32 bits
    if (kind != HalfKind::kF16Split) {
      pack_b_bf16_cols_contiguous(kind, dst, src, cs, cols, depth, chunks);
    } else {
      pack_b_f16_cols_contiguous(dst, src, cs, cols, depth, chunks);
    }
    return;
  }
  const int64_t packed = depth * packed_per_depth(kind);
  for (int64_t pr = 0; pr < chunks * 16; ++pr) {
    for (int64_t j = 0; j < 16; ++j) {
      auto at = [&](int64_t k) { return src[k * rs + j * cs]; };
      for (int64_t h = 0; h < 2; ++h) {
        const int64_t kp = 2 * pr + h;
        dst[pr * 32 + 2 * j + h] = j < cols && kp < packed ? packed_b_value(kind, kp, at) : uint16_t{0};
      }
    }
  }
}

}  // namespace catalyst::cpu
