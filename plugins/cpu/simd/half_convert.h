// half_convert.h — spans of f16/bf16 values to f32 and back, and running an f32 vector
// kernel over 16-bit operands through them: a chunk of each operand is widened to f32 on
// the stack, the f32 kernel runs on it, and its results are rounded once to the 16-bit
// dtype (to nearest even, bit for bit as sdk::float_to_half / float_to_bf16). The f16 and
// bf16 elementwise ops whose f32 form has a vector kernel take this instead of their
// scalar per-element code (a bf16 GPT spent a quarter of its time in gelu_tanh_backward).
#pragma once

#include <algorithm>
#include <cstdint>

#include "catalyst_plugin.h"

namespace catalyst::cpu {

// out[i] = in[i] as f32, for dtype d (f16 or bf16).
void half_span_to_f32(ctl_dtype d, const uint16_t* in, float* out, int64_t n);
// out[i] = in[i] rounded to dtype d (f16 or bf16), to nearest even.
void f32_span_to_half(ctl_dtype d, const float* in, uint16_t* out, int64_t n);

// Elements per chunk: three f32 chunks on the stack (3 KiB), in L1 between the steps.
inline constexpr int64_t kHalfChunk = 256;

// out = round(kernel(a)) over n elements of dtype d; kernel(float* out, const float* a, m).
template <class Kernel>
void unary_through_f32(ctl_dtype d, uint16_t* out, const uint16_t* a, int64_t n, Kernel kernel) {
  alignas(64) float fa[kHalfChunk], fo[kHalfChunk];
  for (int64_t i = 0; i < n; i += kHalfChunk) {
    const int64_t m = std::min(kHalfChunk, n - i);
    half_span_to_f32(d, a + i, fa, m);
    kernel(fo, fa, m);
    f32_span_to_half(d, fo, out + i, m);
  }
}

// out = round(kernel(a, b)) over n elements of dtype d, where a and b each step by 1 or
// are one broadcast element (stride 0, widened once per chunk); kernel(float* out, a, sa,
// b, sb, m) gets the widened chunks with the same strides.
template <class Kernel>
void binary_through_f32(ctl_dtype d, uint16_t* out, const uint16_t* a, int64_t sa, const uint16_t* b, int64_t sb,
                        int64_t n, Kernel kernel) {
  alignas(64) float fa[kHalfChunk], fb[kHalfChunk], fo[kHalfChunk];
  for (int64_t i = 0; i < n; i += kHalfChunk) {
    const int64_t m = std::min(kHalfChunk, n - i);
    half_span_to_f32(d, a + i * sa, fa, sa == 0 ? 1 : m);
    half_span_to_f32(d, b + i * sb, fb, sb == 0 ? 1 : m);
    kernel(fo, fa, sa, fb, sb, m);
    f32_span_to_half(d, fo, out + i, m);
  }
}

}  // namespace catalyst::cpu
