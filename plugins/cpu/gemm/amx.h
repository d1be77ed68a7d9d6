// amx.h — whether this process may run Intel AMX tile instructions (the bf16 tile dot
// product, tdpbf16ps), found out once.
//
// Three things must all hold: CPUID lists amx_tile and amx_bf16, XCR0 has the tile
// configuration and tile data states (bits 17 and 18) enabled by the OS, and Linux grants
// the process the tile-data state (arch_prctl ARCH_REQ_XCOMP_PERM), which it only does on
// request because that state is 8 KiB per thread. AMX is an addition to the avx512 path:
// a CATALYST_CPU_ISA below avx512 turns it off, so the forced paths run their own code.
#pragma once

namespace catalyst::cpu {

// True when the active ISA is avx512 and the CPU, the OS and the permission allow AMX-BF16.
bool amx_bf16_usable();

}  // namespace catalyst::cpu
