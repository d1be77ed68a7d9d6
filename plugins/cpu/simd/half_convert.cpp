// half_convert.cpp — f16/bf16 spans to f32 and back (see half_convert.h): AVX-512 or
// AVX2 with F16C where active_isa() allows it, else the SDK's scalar conversions, which
// define the results (the vector forms give their bits, NaNs included).
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

#define CTL_CPU_AVX2_F16C __attribute__((target("avx2,fma,f16c")))

// The AVX2 forms, 8 values at a time; a tail of fewer than 8 takes the scalar rule.
CTL_CPU_AVX2_F16C void to_f32_avx2(bool f16, const uint16_t* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    const __m256i w = _mm256_cvtepu16_epi32(bits);
    if (!f16) {
      _mm256_storeu_ps(out + i, _mm256_castsi256_ps(_mm256_slli_epi32(w, 16)));
      continue;
    }
    __m256 v = _mm256_cvtph_ps(bits);
    // As half_to_f32_x16: NaNs keep their bits (vcvtph2ps would quiet a signalling one).
    const __m128i nan = _mm_cmpgt_epi16(_mm_and_si128(bits, _mm_set1_epi16(0x7fff)), _mm_set1_epi16(0x7c00));
    if (_mm_movemask_epi8(nan) != 0) {
      const __m256i sign = _mm256_slli_epi32(_mm256_and_si256(w, _mm256_set1_epi32(0x8000)), 16);
      const __m256i rest = _mm256_slli_epi32(_mm256_and_si256(w, _mm256_set1_epi32(0x7fff)), 13);
      const __m256i nan_bits = _mm256_or_si256(_mm256_or_si256(sign, rest), _mm256_set1_epi32(0x7f800000));
      v = _mm256_blendv_ps(v, _mm256_castsi256_ps(nan_bits), _mm256_castsi256_ps(_mm256_cvtepi16_epi32(nan)));
    }
    _mm256_storeu_ps(out + i, v);
  }
  for (; i < n; ++i) out[i] = f16 ? sdk::half_to_float(in[i]) : sdk::bf16_to_float(in[i]);
}

CTL_CPU_AVX2_F16C void to_half_avx2(bool f16, const float* in, uint16_t* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(in + i);
    __m128i half;
    if (f16) {
      half = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    } else {  // as round_half_x16: integer rounding, a NaN set quiet apart
      const __m256i bits = _mm256_castps_si256(v);
      const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
      const __m256i rounded = _mm256_add_epi32(bits, _mm256_add_epi32(odd, _mm256_set1_epi32(0x7fff)));
      const __m256i quiet = _mm256_or_si256(bits, _mm256_set1_epi32(0x00400000));
      const __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
      const __m256i top = _mm256_srli_epi32(
          _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(rounded), _mm256_castsi256_ps(quiet), nan)), 16);
      // Pack 8 x 32 to 8 x 16 (within each 128-bit lane), then bring the lanes' halves together.
      half = _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi32(top, top), 0x08));
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), half);
  }
  for (; i < n; ++i) out[i] = f16 ? sdk::float_to_half(in[i]) : sdk::float_to_bf16(in[i]);
}

}  // namespace

void half_span_to_f32(ctl_dtype d, const uint16_t* in, float* out, int64_t n) {
  const bool f16 = d == CTL_DTYPE_F16;
  if (active_isa() == Isa::kAvx512) return to_f32_avx512(f16, in, out, n);
  if (active_isa() == Isa::kAvx2) return to_f32_avx2(f16, in, out, n);
  for (int64_t i = 0; i < n; ++i) out[i] = f16 ? sdk::half_to_float(in[i]) : sdk::bf16_to_float(in[i]);
}

void f32_span_to_half(ctl_dtype d, const float* in, uint16_t* out, int64_t n) {
  const bool f16 = d == CTL_DTYPE_F16;
  if (active_isa() == Isa::kAvx512) return to_half_avx512(f16, in, out, n);
  if (active_isa() == Isa::kAvx2) return to_half_avx2(f16, in, out, n);
  for (int64_t i = 0; i < n; ++i) out[i] = f16 ? sdk::float_to_half(in[i]) : sdk::float_to_bf16(in[i]);
}

}  // namespace catalyst::cpu
