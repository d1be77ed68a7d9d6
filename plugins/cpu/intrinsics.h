// intrinsics.h — <immintrin.h> for the files that call AVX-512 and AMX intrinsics directly,
// and the target attribute of their f16/bf16 helpers.
#pragma once

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*(), which -Wmaybe-uninitialized
// reports once inlined (a known false positive of the header, not of our code).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

// AVX-512 F, VL, DQ and BW: what the AVX-512 kernels need, the f32 <-> f16 conversions
// included.
#define CTL_CPU_AVX512 __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")))

// AVX-512 with the bf16 conversions and F16C: what the AMX path's f16/bf16 packing uses.
#define CTL_CPU_AVX512_HALF __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx512bf16,avx2,fma,f16c")))
