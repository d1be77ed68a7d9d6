// gemm_kernels.cpp — micro-kernels for f32/f64 GEMM written with GCC vector types, so
// one template body becomes an AVX-512, AVX2+FMA or baseline (SSE) kernel depending on
// the target attribute of the function it is inlined into. The plugin is built for
// x86-64-v2; the wider kernels are picked only when active_isa() allows them. The f32
// AVX-512 kernel, the one tuned for speed, is written with intrinsics in
// gemm_avx512_f32.cpp. This file is compiled with -ffp-contract=fast so that a * b + c
// becomes one FMA.
#include "gemm_kernels.h"

#include <cstring>
#include <type_traits>

#include "isa.h"
#include "matmul_problem.h"
#include "simd_state.h"
#include "vec_kernels.h"

namespace catalyst::cpu {

template <class T>
void finish_tile(T* c, int64_t ldc, int m, int n, const TileEpilogue<T>& e) {
  for (int i = 0; i < m; ++i) {
    T* row = c + i * ldc;
    if (e.bias) {
      const T* bias = e.bias + i * e.bias_rs;
      for (int j = 0; j < n; ++j) row[j] += bias[j * e.bias_cs];
    }
    if constexpr (std::is_same_v<T, float>) {
      // GELU-tanh follows every GPT MLP matmul: the vector kernel instead of n libm tanh calls.
      if (e.activation == CTL_ACTIVATION_GELU_TANH) {
        vec_kernels().unary(VecUnary::kGeluTanh, row, row, n);
        continue;
      }
    }
    if (e.activation != CTL_ACTIVATION_NONE) {
      for (int j = 0; j < n; ++j) row[j] = activate(row[j], e.activation);
    }
  }
}

template <class T>
void apply_tile_epilogue(const T* tile, int nr, T* c, int64_t ldc, int m, int n, const TileEpilogue<T>& e) {
  for (int i = 0; i < m; ++i) {
    T* row = c + i * ldc;
    const T* s = tile + i * nr;
    if (!e.overwrite) {
      for (int j = 0; j < n; ++j) row[j] += e.alpha * s[j];
    } else if (e.beta != T(0)) {
      for (int j = 0; j < n; ++j) row[j] = e.alpha * s[j] + e.beta * row[j];
    } else {
      for (int j = 0; j < n; ++j) row[j] = e.alpha * s[j];  // beta == 0: C is never read
    }
  }
  if (e.finish) finish_tile(c, ldc, m, n, e);
}

template void finish_tile<float>(float*, int64_t, int, int, const TileEpilogue<float>&);
template void finish_tile<double>(double*, int64_t, int, int, const TileEpilogue<double>&);
template void apply_tile_epilogue<float>(const float*, int, float*, int64_t, int, int, const TileEpilogue<float>&);
template void apply_tile_epilogue<double>(const double*, int, double*, int64_t, int, int, const TileEpilogue<double>&);

namespace {

// MR rows by NV vectors of W lanes: MR * NV accumulators stay in registers for all kc;
// the tile then goes through the scalar epilogue.
template <int MR, int NV, int W, class T>
[[gnu::always_inline]] inline void micro_kernel(int64_t kc, const T* __restrict a, const T* __restrict b,
                                                T* __restrict c, int64_t ldc, int m, int n, const TileEpilogue<T>& e) {
  typedef T V __attribute__((vector_size(W * sizeof(T))));
  V acc[MR][NV];
  for (int i = 0; i < MR; ++i) {
    for (int v = 0; v < NV; ++v) acc[i][v] = V{};
  }
  for (int64_t k = 0; k < kc; ++k) {
    V bv[NV];
    for (int v = 0; v < NV; ++v) std::memcpy(&bv[v], b + v * W, sizeof(V));
    for (int i = 0; i < MR; ++i) {
      const V av = a[i] - V{};  // broadcast (x - +0 is exactly x, so it folds away)
      for (int v = 0; v < NV; ++v) acc[i][v] += av * bv[v];
    }
    a += MR;
    b += NV * W;
  }
  alignas(64) T tile[MR * NV * W];
  for (int i = 0; i < MR; ++i) {
    for (int v = 0; v < NV; ++v) std::memcpy(tile + i * NV * W + v * W, &acc[i][v], sizeof(V));
  }
  apply_tile_epilogue(tile, NV * W, c, ldc, m, n, e);
}

#define CTL_CPU_AVX512 __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")))
#define CTL_CPU_AVX2 __attribute__((target("avx2,fma")))

using F32Epilogue = TileEpilogue<float>;
using F64Epilogue = TileEpilogue<double>;

// AVX-512 f64: 32 zmm registers; 12 x 2 accumulators + 2 of b + 1 broadcast.
CTL_CPU_AVX512 void f64_avx512(int64_t kc, const double* a, const double* b, double* c, int64_t ldc, int m, int n,
                               const F64Epilogue& e) {
  micro_kernel<12, 2, 8>(kc, a, b, c, ldc, m, n, e);
}
// AVX2: 16 ymm registers; 6 x 2 accumulators + 2 + 1.
CTL_CPU_AVX2 void f32_avx2(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int m, int n,
                           const F32Epilogue& e) {
  micro_kernel<6, 2, 8>(kc, a, b, c, ldc, m, n, e);
}
CTL_CPU_AVX2 void f64_avx2(int64_t kc, const double* a, const double* b, double* c, int64_t ldc, int m, int n,
                           const F64Epilogue& e) {
  micro_kernel<6, 2, 4>(kc, a, b, c, ldc, m, n, e);
}
// Baseline SSE: 16 xmm registers; 4 x 2 accumulators.
void f32_generic(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int m, int n,
                 const F32Epilogue& e) {
  clear_upper_state();  // the baseline kernel is legacy SSE: see simd_state.h
  micro_kernel<4, 2, 4>(kc, a, b, c, ldc, m, n, e);
}
void f64_generic(int64_t kc, const double* a, const double* b, double* c, int64_t ldc, int m, int n,
                 const F64Epilogue& e) {
  clear_upper_state();  // the baseline kernel is legacy SSE: see simd_state.h
  micro_kernel<4, 2, 2>(kc, a, b, c, ldc, m, n, e);
}

}  // namespace

const GemmKernel<float>& gemm_kernel_f32() {
  static const GemmKernel<float> avx2{6, 16, 1, f32_avx2};
  static const GemmKernel<float> generic{4, 8, 1, f32_generic};
  switch (active_isa()) {
    case Isa::kAvx512:
      return kGemmAvx512F32;
    case Isa::kAvx2:
      return avx2;
    default:
      return generic;
  }
}

const GemmKernel<double>& gemm_kernel_f64() {
  static const GemmKernel<double> avx512{12, 16, 1, f64_avx512};
  static const GemmKernel<double> avx2{6, 8, 1, f64_avx2};
  static const GemmKernel<double> generic{4, 4, 1, f64_generic};
  switch (active_isa()) {
    case Isa::kAvx512:
      return avx512;
    case Isa::kAvx2:
      return avx2;
    default:
      return generic;
  }
}

const GemmHalfPackers* gemm_f16_packers() {
  return active_isa() == Isa::kAvx512 ? &kGemmAvx512F16Packers : nullptr;
}

const GemmHalfPackers* gemm_bf16_packers() {
  return active_isa() == Isa::kAvx512 ? &kGemmAvx512Bf16Packers : nullptr;
}

const GemmKernel<uint16_t, float>* gemm_kernel_bf16() {
  return isa_info().avx512_bf16 ? &kGemmAvx512Bf16 : nullptr;
}

}  // namespace catalyst::cpu
