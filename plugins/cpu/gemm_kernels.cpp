// gemm_kernels.cpp — micro-kernels for f32/f64 GEMM written with GCC vector types, so
// one template body becomes an AVX-512, AVX2+FMA or baseline (SSE) kernel depending on
// the target attribute of the function it is inlined into. The plugin is built for
// x86-64-v2; the wider kernels are picked only when __builtin_cpu_supports says so.
// This file is compiled with -ffp-contract=fast so that a * b + c becomes one FMA.
#include "gemm_kernels.h"

#include "isa.h"
#include "simd_state.h"

#include <cstring>

namespace catalyst::cpu {
namespace {

// MR rows by NV vectors of W lanes: MR * NV accumulators stay in registers for all kc.
template <int MR, int NV, int W, class T>
[[gnu::always_inline]] inline void micro_kernel(int64_t kc, const T* __restrict a, const T* __restrict b,
                                                T* __restrict c) {
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
  for (int i = 0; i < MR; ++i) {
    for (int v = 0; v < NV; ++v) std::memcpy(c + i * NV * W + v * W, &acc[i][v], sizeof(V));
  }
}

#define CTL_CPU_AVX512 __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")))
#define CTL_CPU_AVX2 __attribute__((target("avx2,fma")))

// AVX-512: 32 zmm registers; 12 x 2 accumulators + 2 of b + 1 broadcast.
CTL_CPU_AVX512 void f32_avx512(int64_t kc, const float* a, const float* b, float* c) {
  micro_kernel<12, 2, 16>(kc, a, b, c);
}
CTL_CPU_AVX512 void f64_avx512(int64_t kc, const double* a, const double* b, double* c) {
  micro_kernel<12, 2, 8>(kc, a, b, c);
}
// AVX2: 16 ymm registers; 6 x 2 accumulators + 2 + 1.
CTL_CPU_AVX2 void f32_avx2(int64_t kc, const float* a, const float* b, float* c) {
  micro_kernel<6, 2, 8>(kc, a, b, c);
}
CTL_CPU_AVX2 void f64_avx2(int64_t kc, const double* a, const double* b, double* c) {
  micro_kernel<6, 2, 4>(kc, a, b, c);
}
// Baseline SSE: 16 xmm registers; 4 x 2 accumulators.
void f32_generic(int64_t kc, const float* a, const float* b, float* c) {
  clear_upper_state();  // the baseline kernel is legacy SSE: see simd_state.h
  micro_kernel<4, 2, 4>(kc, a, b, c);
}
void f64_generic(int64_t kc, const double* a, const double* b, double* c) {
  clear_upper_state();  // the baseline kernel is legacy SSE: see simd_state.h
  micro_kernel<4, 2, 2>(kc, a, b, c);
}

}  // namespace

const GemmKernel<float>& gemm_kernel_f32() {
  static const GemmKernel<float> avx512{12, 32, f32_avx512, "avx512"};
  static const GemmKernel<float> avx2{6, 16, f32_avx2, "avx2"};
  static const GemmKernel<float> generic{4, 8, f32_generic, "generic"};
  switch (active_isa()) {
    case Isa::kAvx512:
      return avx512;
    case Isa::kAvx2:
      return avx2;
    default:
      return generic;
  }
}

const GemmKernel<double>& gemm_kernel_f64() {
  static const GemmKernel<double> avx512{12, 16, f64_avx512, "avx512"};
  static const GemmKernel<double> avx2{6, 8, f64_avx2, "avx2"};
  static const GemmKernel<double> generic{4, 4, f64_generic, "generic"};
  switch (active_isa()) {
    case Isa::kAvx512:
      return avx512;
    case Isa::kAvx2:
      return avx2;
    default:
      return generic;
  }
}

}  // namespace catalyst::cpu
