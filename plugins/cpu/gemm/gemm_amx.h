// gemm_amx.h — the AMX pieces of the reduced-precision GEMM (gemm_half.cpp): operand
// packing into tile layout, the 32 x 32 tile kernel, and the merge of a finished tile
// into the output. Callable only when amx_bf16_usable() (amx.h) is true.
//
// Packed layout. Depth is counted in packed values; a chunk is 32 of them, one tile row.
//  - A: panels of 16 rows; a panel holds `chunks` blocks of 16 rows x 32 values (1 KiB).
//  - B: panels of 16 columns; a panel holds `chunks` blocks of 16 rows x 16 columns x 2,
//    row r holding packed depth 2r and 2r+1 of each column next to each other (the pairs
//    tdpbf16ps multiplies).
// A bf16 operand packs as it is (one packed value per depth). An f16 operand is split
// exactly into two bf16: hi (x rounded to bf16, to nearest even) and lo = x - hi (at most
// 3 significant bits, |lo| <= 2^-8 |x|). Each depth k becomes four packed values,
// A: (hi, lo, hi, lo), B: (hi, hi, lo, lo). The pairs then give a_hi b_hi + a_lo b_hi and
// a_hi b_lo + a_lo b_lo: the product a b exactly, summed in f32 like the f32 GEMM, so f16
// loses nothing to the bf16 hardware.
//
// Deep f16 products (gemm_half.cpp) instead pack the hi and lo parts as two bf16 planes
// (kF16Hi, kF16Lo) and sum three plane products, a_hi b_hi + a_lo b_hi + a_hi b_lo: a
// quarter less tile work, leaving out a_lo b_lo, at most 2^-16 |a b| per product.
#pragma once

#include <cstdint>

#include "catalyst_plugin.h"

namespace catalyst::cpu {

enum class HalfKind {
  kBf16,      // one packed value per depth
  kF16Split,  // four packed values per depth (hi/lo split, see above)
  kF16Hi,     // one packed value per depth: bf16 hi of the f16, rounded to nearest even
  kF16Lo,     // one packed value per depth: x - hi (3 significant bits, exact in bf16)
};
constexpr int64_t kAmxChunk = 32;        // packed values per tile row
constexpr int64_t kAmxPanelChunk = 512;  // 16-bit values in one chunk of a panel

// Packed values per depth of a kind.
inline int64_t packed_per_depth(HalfKind kind) {
  return kind == HalfKind::kF16Split ? 4 : 1;
}

// Packs rows [0, rows) x depth [0, depth) of a 16-bit matrix (element (i, k) at
// src[i * rs + k * cs]) into one A panel of 16 rows and `chunks` chunks; rows past `rows`
// (which may be <= 0) and packed depth past the data are zero.
void amx_pack_a(HalfKind kind, uint16_t* dst, const uint16_t* src, int64_t rs, int64_t cs, int64_t rows, int64_t depth,
                int64_t chunks);
// Packs depth [0, depth) x columns [0, cols) (element (k, j) at src[k * rs + j * cs]) into
// one B panel of 16 columns and `chunks` chunks, zero-padded the same way.
void amx_pack_b(HalfKind kind, uint16_t* dst, const uint16_t* src, int64_t rs, int64_t cs, int64_t cols, int64_t depth,
                int64_t chunks);

// Loads the tile configuration of the kernel into this thread; amx_end releases it.
void amx_begin();
void amx_end();

// c_out (32 x 32, row stride ld_out) = c_in + [a0; a1] @ [b0 b1] over `chunks` chunks:
// a0/a1 are A panels (rows 0-15, 16-31), b0/b1 B panels (columns 0-15, 16-31); a null
// c_in starts from zero. Partial sums between depth blocks thus pass through memory as
// tiles, with no vector work. Needs amx_begin().
void amx_kernel_32x32(int64_t chunks, const uint16_t* a0, const uint16_t* a1, const uint16_t* b0, const uint16_t* b1,
                      const float* c_in, int64_t ld_in, float* c_out, int64_t ld_out);

}  // namespace catalyst::cpu
