// half_convert.cpp — f16/bf16 spans to f32 and back (see half_convert.h): AVX-512 where
// active_isa() allows it, else the SDK's scalar conversions, which define the results.
#include "half_convert.h"

#include "catalyst/sdk/half.hpp"
#include "intrinsics.h"
#include "isa.h"

namespace catalyst::cpu {
namespace {

// f16 NaNs as sdk::half_to_float has them: sign and payload moved up, a signalling NaN
// left signalling (vcvtph2ps would set its quiet bit; a cast must not change the bits).
CTL_CPU_AVX512 inline __m512 half_to_f32_x16(__m256i bits) {
  const __m512 widened = _mm512_cvtph_ps(bits);
  const __mmask16 nan =
      _mm256_cmpgt_epu16_mask(_mm256_and_si256(bits, _mm256_set1_epi16(0x7fff)), _mm256_set1_epi16(0x7c00));
  if (nan == 0) return widened;
  const __m512i w = _mm512_cvtepu16_epi32(bits);
  const __m512i sign = _mm512_slli_epi32(_mm512_and_si512(w, _mm512_set1_epi32(0x8000)), 16);
  const __m512i rest = _mm512_slli_epi32(_mm512_and_si512(w, _mm512_set1_epi32(0x7fff)), 13);
  const __m512i nan_bits = _mm512_or_si512(_mm512_or_si512(sign, rest), _mm512_set1_epi32(0x7f800000));
  return _mm512_mask_mov_ps(widened, nan, _mm512_castsi512_ps(nan_bits));
}

CTL_CPU_AVX512 void to_f32_avx512(bool f16, const uint16_t* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 mask = static_cast<__mmask16>(n - i >= 16 ? 0xffffu : (1u << (n - i)) - 1u);
    const __m256i bits = _mm256_maskz_loadu_epi16(mask, in + i);
    _mm512_mask_storeu_ps(out + i, mask, f16 ? half_to_f32_x16(bits) : widen_bf16_x16(bits));
  }
}

CTL_CPU_AVX512 void to_half_avx512(bool f16, const float* in, uint16_t* out, int64_t n) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 mask = static_cast<__mmask16>(n - i >= 16 ? 0xffffu : (1u << (n - i)) - 1u);
    _mm256_mask_storeu_epi16(out + i, mask, round_half_x16(f16, _mm512_maskz_loadu_ps(mask, in + i)));
  }
}

}  // namespace

void half_span_to_f32(ctl_dtype d, const uint16_t* in, float* out, int64_t n) {
  const bool f16 = d == CTL_DTYPE_F16;
  if (active_isa() == Isa::kAvx512) return to_f32_avx512(f16, in, out, n);
  for (int64_t i = 0; i < n; ++i) out[i] = f16 ? sdk::half_to_float(in[i]) : sdk::bf16_to_float(in[i]);
}

void f32_span_to_half(ctl_dtype d, const float* in, uint16_t* out, int64_t n) {
  const bool f16 = d == CTL_DTYPE_F16;
  if (active_isa() == Isa::kAvx512) return to_half_avx512(f16, in, out, n);
  for (int64_t i = 0; i < n; ++i) out[i] = f16 ? sdk::float_to_half(in[i]) : sdk::float_to_bf16(in[i]);
}

}  // namespace catalyst::cpu
