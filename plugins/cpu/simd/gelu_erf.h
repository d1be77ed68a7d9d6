// gelu_erf.h — gelu (the erf form) and its backward over contiguous f32 spans, computed in
// double as the scalar code computes them (elementwise_unary.cpp, elementwise_binary.cpp),
// with glibc's vector erfc and exp (libmvec) on the AVX-512 and AVX2 paths. On the baseline
// path, or where the build has no libmvec, the same formulas run one element at a time.
#pragma once

#include <cstdint>

namespace catalyst::cpu {

// out[i] = 0.5 x erfc(-x / sqrt(2)) for x = in[i], in double, rounded once to f32.
void gelu_erf_span(float* out, const float* in, int64_t n);
// dx[i] = dy[i] * (0.5 erfc(-x / sqrt(2)) + x exp(-x^2 / 2) / sqrt(2 pi)), x = x[i], in
// double, rounded once to f32.
void gelu_erf_backward_span(float* dx, const float* dy, const float* x, int64_t n);

}  // namespace catalyst::cpu
