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
  // An f16/bf16 output (only for kernels with GemmKernel::rounds_half, only with finish
  // false): where half_out is set, the tile is not written to c. Instead, after alpha
  // (and, unless overwrite, the sums already in c), the 16-bit bias at half_bias (row
  // stride half_brs, column stride half_bcs, 0 or 1; or null) is added, ReLU applied where
  // half_relu, and each value rounded once to the 16-bit dtype at half_out (row stride
  // half_ld, unit column stride): what merge_half_tile computes from c, without the trip
  // through memory. beta must be 0 (with overwrite).
  uint16_t* half_out = nullptr;
  int64_t half_ld = 0;
  const uint16_t* half_bias = nullptr;
  int64_t half_brs = 0, half_bcs = 0;
  bool half_f16 = false;
  bool half_relu = false;
};

// A kernel multiplies packed panels of P (the operands' type, or what they are converted
// to while packing) and accumulates in Acc, the type of C.
//
// Packed layout. Depth is packed in groups of kp steps (1; 2 for the bf16 dot product,
// which multiplies pairs of depth steps): group g of an A panel holds, for each row
// i < mr, the kp values of depths kp*g .. kp*g + kp-1 side by side, at
// a[(g * mr + i) * kp + r]; a B panel likewise holds column j's kp values at
// b[(g * nr + j) * kp + r]. A panel covers kc rounded up to a multiple of kp, and
// everything past the data (rows, columns, depth) is zero.
//
// run(kc, a, b, c, ldc, m, n, e): for i < m, j < n,
//   tile[i][j] = sum over k < kc of A(i, k) * B(k, j)
// from packed panels a and b, then e is applied and the result written to
// c[i * ldc + j]; m <= mr, n <= nr.
template <class P, class Acc = P>
struct GemmKernel {
  int mr;
  int nr;
  int kp;
  void (*run)(int64_t kc, const P* a, const P* b, Acc* c, int64_t ldc, int m, int n, const TileEpilogue<Acc>& e);
  // Optional fast paths (null where absent, so a kernel without them lists only the four
  // fields above):
  // run_rows: as run, but a is A itself (unit column stride), row i at a + i * lda, read
  // without packing.
  void (*run_rows)(int64_t kc, const P* a, int64_t lda, const P* b, Acc* c, int64_t ldc, int m, int n,
                   const TileEpilogue<Acc>& e) = nullptr;
  // pack_b: packs kc rows (row stride ldb, unit column stride) of n <= nr columns into
  // one zero-padded panel.
  void (*pack_b)(const P* b, int64_t ldb, int64_t kc, int n, P* dst) = nullptr;
  // pack_a: packs one zero-padded A panel of m <= mr rows from an A with unit row stride,
  // depth step k at a + k * lda.
  void (*pack_a)(const P* a, int64_t lda, int64_t kc, int m, P* dst) = nullptr;
  // pack_b_t: as pack_b for a B with unit row stride (a transposed operand, e.g. W^T in
  // an input gradient), column j at b + j * ldb.
  void (*pack_b_t)(const P* b, int64_t ldb, int64_t kc, int n, P* dst) = nullptr;
  // pack_a_rows: as pack_a for an A with unit column stride, row i at a + i * lda.
  void (*pack_a_rows)(const P* a, int64_t lda, int64_t kc, int m, P* dst) = nullptr;
  // run_packing_b, run_rows_packing_b: as run and run_rows, but b is B itself (row stride
  // ldb, unit column stride) and the kernel also writes the panel pack_b would make of it
  // to bdst, so the first tile of a panel packs it.
  void (*run_packing_b)(int64_t kc, const P* a, const P* b, int64_t ldb, P* bdst, Acc* c, int64_t ldc, int m, int n,
                        const TileEpilogue<Acc>& e) = nullptr;
  void (*run_rows_packing_b)(int64_t kc, const P* a, int64_t lda, const P* b, int64_t ldb, P* bdst, Acc* c, int64_t ldc,
                             int m, int n, const TileEpilogue<Acc>& e) = nullptr;
  // Whether every run form honours TileEpilogue::half_out (the AVX-512 kernels do).
  bool rounds_half = false;
};

// Packers from f16 or bf16 into the panels of an f32 kernel, for the f16 and bf16
// matmuls' conversion paths (null where absent; otherwise they convert one value at a
// time).
struct GemmHalfPackers {
  void (*pack_b)(const uint16_t* b, int64_t ldb, int64_t kc, int n, float* dst);       // as GemmKernel::pack_b
  void (*pack_a_rows)(const uint16_t* a, int64_t lda, int64_t kc, int m, float* dst);  // as pack_a_rows
  // The transposed operands of a training step's backward (dW = X^T dY, dX = dY W^T): an
  // f16 run spent 19% of its time converting them one value at a time.
  void (*pack_a)(const uint16_t* a, int64_t lda, int64_t kc, int m, float* dst);    // as GemmKernel::pack_a
  void (*pack_b_t)(const uint16_t* b, int64_t ldb, int64_t kc, int n, float* dst);  // as GemmKernel::pack_b_t
};

// The kernel of the active instruction set (isa.h).
const GemmKernel<float>& gemm_kernel_f32();
const GemmKernel<double>& gemm_kernel_f64();
// The f16 and the bf16 packers for gemm_kernel_f32()'s panels (AVX-512), or null.
const GemmHalfPackers* gemm_f16_packers();
const GemmHalfPackers* gemm_bf16_packers();

// The bf16 dot-product kernel (bf16 bits packed, f32 sums) where the CPU has AVX512-BF16
// and the active instruction set is AVX-512, else null. It reads bf16 subnormals as zero
// (vdpbf16ps), so callers check their inputs first.
const GemmKernel<uint16_t, float>* gemm_kernel_bf16();

// The AVX-512 kernels (gemm_avx512_f32.cpp, gemm_avx512_bf16.cpp); call only when
// active_isa() is kAvx512, and for bf16 when isa_info().avx512_bf16.
extern const GemmKernel<float> kGemmAvx512F32;
extern const GemmHalfPackers kGemmAvx512F16Packers;
extern const GemmHalfPackers kGemmAvx512Bf16Packers;
extern const GemmKernel<uint16_t, float> kGemmAvx512Bf16;

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
