// gemm_half.h — matmul of f16 and bf16 on the CPU's bf16 tile unit (AMX), with f32
// accumulation: bf16 directly, f16 through an exact split into bf16 pairs (gemm_amx.h).
#pragma once

#include "matmul_problem.h"

namespace catalyst::cpu {

// Runs the validated f16/bf16 matmul `p` when this path can: AMX usable (amx.h), K > 0,
// and inputs the tile unit takes exactly (f16: finite, as the exact split has no form for
// Inf and NaN; bf16: no subnormals, which tdpbf16ps reads as zero). Returns
// false, having written nothing, when the caller must use its f32 conversion path;
// *status is the call's result when it returns true.
bool matmul_half(const OpContext& ctx, const Problem& p, ctl_status** status);

// Whether the CPU's bf16 instructions (AMX tiles, or the vdpbf16ps dot product of the
// packed GEMM) compute every product of the f16/bf16 matmul `p` exactly: f16 inputs must
// be finite (for the hi/lo split), bf16 inputs free of subnormals, which both read as
// zero. Needs the AVX-512 instruction set. The threads of `pool` (may be null) share the
// scan of large inputs.
bool half_inputs_exact(const Problem& p, ThreadPool* pool);

}  // namespace catalyst::cpu
