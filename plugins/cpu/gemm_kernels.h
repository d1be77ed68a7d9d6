// gemm_kernels.h — the register-blocked inner kernels of the packed GEMM, one per
// instruction set, chosen once at run time.
#pragma once

#include <cstdint>

namespace catalyst::cpu {

// kernel(kc, a, b, c): c[i * nr + j] = sum over k < kc of a[k * mr + i] * b[k * nr + j],
// for the full mr x nr tile; a and b are packed panels, c is a scratch tile.
template <class T>
struct GemmKernel {
  int mr;
  int nr;
  void (*run)(int64_t kc, const T* a, const T* b, T* c);
  const char* isa;  // "avx512", "avx2" or "generic"
};

// The kernel of the active instruction set (isa.h).
const GemmKernel<float>& gemm_kernel_f32();
const GemmKernel<double>& gemm_kernel_f64();

}  // namespace catalyst::cpu
