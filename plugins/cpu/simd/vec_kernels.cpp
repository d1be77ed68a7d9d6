// vec_kernels.cpp — vec_kernels_body.h compiled three times: for AVX-512, for AVX2 + FMA
// and for the x86-64-v2 baseline, each in its own namespace (inline functions of one
// name but different instruction sets must never be merged by the linker) and under its
// own target region (CTL_CPU_TARGET_BEGIN below), and the table for active_isa().
//
// The file is compiled with -ffp-contract=fast: a * b + c becomes an FMA where the
// instruction set has one, which only makes the polynomials and row formulas more exact.
#include "vec_kernels.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "isa.h"
#include "simd_state.h"

// Everything between BEGIN and END is compiled for the named instruction sets. GCC takes
// a target pragma; Clang ignores that pragma and takes an attribute applied to every
// function declared in the region instead.
#if defined(__clang__)
#define CTL_CPU_PRAGMA(text) _Pragma(#text)
#define CTL_CPU_TARGET_BEGIN(isa) \
  CTL_CPU_PRAGMA(clang attribute push(__attribute__((target(isa))), apply_to = function))
#define CTL_CPU_TARGET_END _Pragma("clang attribute pop")
#else
#define CTL_CPU_PRAGMA(text) _Pragma(#text)
#define CTL_CPU_TARGET_BEGIN(isa) _Pragma("GCC push_options") CTL_CPU_PRAGMA(GCC target(isa))
#define CTL_CPU_TARGET_END _Pragma("GCC pop_options")
#endif

namespace catalyst::cpu {
namespace {

namespace avx512 {
CTL_CPU_TARGET_BEGIN("avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")
constexpr int kLanes = 16;
constexpr const char* kName = "avx512";
inline void enter() {}
template <class F>
inline void stream_store(float* p, F v) {
  _mm512_stream_ps(p, (__m512)v);
}
template <class D>
inline D sqrt_d(D v) {
  // The maskz form: GCC 12 warns that _mm512_sqrt_pd's undefined pass-through may be used.
  return (D)_mm512_maskz_sqrt_pd(static_cast<__mmask8>(0xff), (__m512d)v);
}
// GCC 12 compiles __builtin_convertvector from 8 floats to 8 doubles as two 4-wide
// conversions and an insert: two extra shuffles per vector, which more than halved the
// speed of a double-accumulated sum of data in L2. The maskz form, as for sqrt_d.
template <class D, class H>
inline D to_double(H h) {
  return (D)_mm512_maskz_cvtps_pd(static_cast<__mmask8>(0xff), (__m256)h);
}
#include "vec_kernels_body.h"
CTL_CPU_TARGET_END
}  // namespace avx512

namespace avx2 {
CTL_CPU_TARGET_BEGIN("avx2,fma")
constexpr int kLanes = 8;
constexpr const char* kName = "avx2";
inline void enter() {}
template <class F>
inline void stream_store(float* p, F v) {
  _mm256_stream_ps(p, (__m256)v);
}
template <class D>
inline D sqrt_d(D v) {
  return (D)_mm256_sqrt_pd((__m256d)v);
}
template <class D, class H>
inline D to_double(H h) {  // as for AVX-512: GCC 12 splits the conversion in two
  return (D)_mm256_cvtps_pd((__m128)h);
}
#include "vec_kernels_body.h"
CTL_CPU_TARGET_END
}  // namespace avx2

namespace baseline {
constexpr int kLanes = 4;
constexpr const char* kName = "baseline";
// This code is legacy SSE: see simd_state.h.
inline void enter() {
  clear_upper_state();
}
template <class F>
inline void stream_store(float* p, F v) {
  _mm_stream_ps(p, (__m128)v);
}
template <class D>
inline D sqrt_d(D v) {
  return (D)_mm_sqrt_pd((__m128d)v);
}
template <class D, class H>
inline D to_double(H h) {
  return __builtin_convertvector(h, D);
}
#include "vec_kernels_body.h"
}  // namespace baseline

}  // namespace

const VecKernels* vec_kernels_for(Isa isa) {
  if (static_cast<int>(isa) > static_cast<int>(isa_info().detected)) return nullptr;
  switch (isa) {
    case Isa::kAvx512:
      return &avx512::kTable;
    case Isa::kAvx2:
      return &avx2::kTable;
    case Isa::kBaseline:
      break;
  }
  return &baseline::kTable;
}

const VecKernels& vec_kernels() {
  static const VecKernels* const table = vec_kernels_for(active_isa());  // active_isa() <= detected
  return *table;
}

}  // namespace catalyst::cpu
