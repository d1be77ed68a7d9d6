// half_merge.h — writing finished tiles of f32 sums to an f16 or bf16 matmul output:
// alpha, beta, bias and activation applied in f32, then one rounding. Used by both
// reduced-precision GEMM drivers (AMX tiles in gemm_half.cpp, the packed GEMM of
// matmul.cpp) while the tile is still in L1.
#pragma once

#include <cstdint>

#include "catalyst_plugin.h"

namespace catalyst::cpu {

// Where merged tiles go, and what the epilogue adds (alpha, beta, bias, activation).
struct HalfOutput {
  ctl_dtype dtype;  // f16 or bf16: out and bias
  char* out;
  int64_t ors, ocs;  // in elements
  const char* bias;  // nullptr: none
  int64_t brs, bcs;
  float alpha, beta;
  ctl_activation activation;
};

// Writes rows [0, m) x columns [0, n) of a tile of sums (row i at tile + i * ld; n <= 32)
// to the output at (row, col): alpha * sum + beta * out + bias, activation, one rounding.
void merge_half_tile(const HalfOutput& o, const float* tile, int64_t ld, int64_t row, int64_t col, int64_t m,
                     int64_t n);

}  // namespace catalyst::cpu
