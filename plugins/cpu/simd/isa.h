// isa.h — which instruction set the CPU plugin's kernels use, chosen once per process.
//
// Detection reads CPUID for what the CPU implements and XGETBV for which register states
// the OS saves on a context switch: a CPU with AVX-512 under an OS that does not enable
// the ZMM state must not run AVX-512 code. CATALYST_CPU_ISA=baseline|avx2|avx512 lowers
// the choice (to test every path on one machine); it never raises it past what the CPU
// and OS allow. CATALYST_CPU_AMX=0 turns AMX tiles off, so that a CPU with AMX can test
// the bf16 dot-product kernel that CPUs without it use.
#pragma once

namespace catalyst::cpu {

enum class Isa {
  kBaseline,  // x86-64-v2 (SSE4.2), what the plugin is compiled for
  kAvx2,      // AVX2 + FMA (x86-64-v3)
  kAvx512,    // AVX-512 F, VL, DQ, BW
};

struct IsaInfo {
  Isa isa;              // what the kernels use: detected, lowered by CATALYST_CPU_ISA
  Isa detected;         // the best the CPU and the OS allow
  bool avx512_bf16;     // vdpbf16ps: only when isa is kAvx512
  bool avx512_fp16;     // vfmadd*ph: only when isa is kAvx512
  bool amx_bf16;        // AMX tiles with tdpbf16ps, their state enabled by the OS (XCR0 bits
                        // 17-18): only when isa is kAvx512 with avx512_bf16. Linux still has to
                        // grant each process the tile data (amx.h asks).
  const char* request;  // CATALYST_CPU_ISA as given, or nullptr
  bool request_valid;   // false when CATALYST_CPU_ISA named no known path (then ignored)
  bool amx_turned_off;  // the CPU and OS allow AMX but CATALYST_CPU_AMX=0 turned it off
};

// Detected on first use (thread-safe) and fixed for the life of the process.
const IsaInfo& isa_info();
inline Isa active_isa() {
  return isa_info().isa;
}

// "baseline", "avx2" or "avx512".
const char* isa_name(Isa isa);

}  // namespace catalyst::cpu
