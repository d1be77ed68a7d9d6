// simd_state.h — guarding the plugin's baseline (SSE-encoded) code against a dirty AVX
// upper state left behind by other code in the process.
#pragma once

namespace catalyst::cpu {

// Executes vzeroupper where the CPU has AVX; a no-op elsewhere. While the upper halves of
// the vector registers are dirty, every legacy-SSE instruction carries a false dependency
// (measured: the baseline GEMM kernel ran 7x slower), so kernels call this on entry.
void clear_upper_state();

}  // namespace catalyst::cpu
