// gemm_kernels.h — the register-blocked inner kernels of the packed GEMM, one per
// instruction set, chosen once at run time, and what they do with a finished tile.
#pragma once

#include <cstdint>

#include "catalyst_plugin.h"

namespace catalyst::cpu {

// What a kernel does with its accumulated tile `acc` before it leaves the registers:
//   overwrite: C = alpha * acc + beta * C (C is not read when beta is 0), else C += alpha * acc
//   finish:    then C = activation(C + bias)
// Depth blocks after the first accumulate, so beta applies once; only the last finishes.
template <class T>
struct TileEpilogue {
  T alpha;
  T beta;
  bool overwrite;
  bool finish;
  const T* bias;  // at the tile's origin, or null
  int64_t bias_rs, bias_cs;
  ctl_activation activation;
};

// run(kc, a, b, c, ldc, m, n, e): for i < m, j < n,
//   tile[i][j] = sum over k < kc of a[k * mr + i] * b[k * nr + j]
// then e is applied and the result written to c[i * ldc + j]. a and b are packed panels,
// zero-padded to the full mr x nr tile; m <= mr, n <= nr.
template <class T>
struct GemmKernel {
  int mr;
  int nr;
  void (*run)(int64_t kc, const T* a, const T* b, T* c, int64_t ldc, int m, int n, const TileEpilogue<T>& e);
  // Optional fast paths (null where absent):
  // run_rows: as run, but a is A itself (unit column stride), row i at a + i * lda, read
  // without packing.
  void (*run_rows)(int64_t kc, const T* a, int64_t lda, const T* b, T* c, int64_t ldc, int m, int n,
                   const TileEpilogue<T>& e);
  // pack_b: packs kc rows (row stride ldb, unit column stride) of n <= nr columns into
  // one zero-padded panel.
  void (*pack_b)(const T* b, int64_t ldb, int64_t kc, int n, T* dst);
  // pack_a: packs one zero-padded A panel of m <= mr rows from an A with unit row stride,
  // depth step k at a + k * lda.
  void (*pack_a)(const T* a, int64_t lda, int64_t kc, int m, T* dst);
  // pack_b_t: as pack_b for a B with unit row stride (a transposed operand, e.g. W^T in
  // an input gradient), column j at b + j * ldb.
  void (*pack_b_t)(const T* b, int64_t ldb, int64_t kc, int n, T* dst);
  // pack_a_rows: as pack_a for an A with unit column stride, row i at a + i * lda.
  void (*pack_a_rows)(const T* a, int64_t lda, int64_t kc, int m, T* dst);
};

// The kernel of the active instruction set (isa.h).
const GemmKernel<float>& gemm_kernel_f32();
const GemmKernel<double>& gemm_kernel_f64();

// The AVX-512 f32 kernel (gemm_avx512_f32.cpp); call only when active_isa() is kAvx512.
extern const GemmKernel<float> kGemmAvx512F32;

// Applies e to a tile already summed into `tile` (row stride nr), element by element:
// the generic kernels' epilogue.
template <class T>
void apply_tile_epilogue(const T* tile, int nr, T* c, int64_t ldc, int m, int n, const TileEpilogue<T>& e);

// The `finish` half of e (bias, then activation) on a tile of C already merged, in place:
// used by the AVX-512 kernel for the bias layouts and activations it does not vectorise,
// while the tile is still in L1.
template <class T>
void finish_tile(T* c, int64_t ldc, int m, int n, const TileEpilogue<T>& e);

}  // namespace catalyst::cpu
