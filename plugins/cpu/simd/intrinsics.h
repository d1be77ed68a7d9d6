// intrinsics.h — <immintrin.h> for the files that call AVX-512 and AMX intrinsics directly,
// the target attributes of their helpers, and the bf16 conversions they share.
#pragma once

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*(), which -Wmaybe-uninitialized
// reports once inlined (a known false positive of the header, not of our code). Clang has
// no such warning.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif

// AVX-512 F, VL, DQ and BW: what the AVX-512 kernels need, the f32 <-> f16 conversions
// included.
#define CTL_CPU_AVX512 __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")))

// AVX-512 with the bf16 conversions and F16C: what the AMX path's f16/bf16 packing uses.
#define CTL_CPU_AVX512_HALF __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx512bf16,avx2,fma,f16c")))

namespace catalyst::cpu {

// 16 bf16 values (16-bit lanes) as floats: a bf16 is the top half of an f32.
CTL_CPU_AVX512 inline __m512 widen_bf16_x16(__m256i bits) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(bits), 16));
}

// The f32 bits of each lane of x with the carry of rounding to bf16 (to nearest even)
// added: the top 16 bits are the rounded bf16, the low 16 are left over. As
// sdk::float_to_bf16 for finite values; a NaN's payload may carry into its exponent, so
// callers that can see NaNs keep them apart. No AVX512-BF16 needed.
CTL_CPU_AVX512 inline __m512i bf16_rounding_x16(__m512 x) {
  const __m512i bits = _mm512_castps_si512(x);
  const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  return _mm512_add_epi32(bits, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7fff)));
}

// 16 f16 (f16 true) or bf16 values as floats. f16 goes through vcvtph2ps, which sets a
// signalling NaN's quiet bit (half_convert.cpp keeps it where a cast needs the exact bits).
CTL_CPU_AVX512 inline __m512 widen_half_x16(bool f16, __m256i bits) {
  return f16 ? _mm512_cvtph_ps(bits) : widen_bf16_x16(bits);
}

// 16 floats rounded to f16 (f16 true) or bf16, to nearest even, bit for bit as
// sdk::float_to_half / float_to_bf16. f16: vcvtps2ph keeps a NaN's sign and top payload
// bits with the quiet bit set. bf16: integer rounding (no AVX512-BF16 needed), a NaN set
// quiet apart, since the rounding's carry could turn its payload into an infinity.
CTL_CPU_AVX512 inline __m256i round_half_x16(bool f16, __m512 v) {
  if (f16) return _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  const __m512i rounded =
      _mm512_mask_or_epi32(bf16_rounding_x16(v), nan, _mm512_castps_si512(v), _mm512_set1_epi32(0x00400000));
  return _mm512_cvtepi32_epi16(_mm512_srli_epi32(rounded, 16));
}

}  // namespace catalyst::cpu
