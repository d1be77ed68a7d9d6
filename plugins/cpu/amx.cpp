// amx.cpp — see amx.h.
#include "amx.h"

#include "isa.h"

#if defined(__x86_64__) && defined(__linux__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace catalyst::cpu {
namespace {

#if defined(__x86_64__) && defined(__linux__)
bool detect() {
  if (active_isa() != Isa::kAvx512 || !isa_info().avx512_bf16) return false;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  const bool amx_bf16 = (edx >> 22) & 1u, amx_tile = (edx >> 24) & 1u;
  if (!amx_bf16 || !amx_tile) return false;
  unsigned lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));  // OSXSAVE is implied by avx512
  const unsigned long long xcr0 = (static_cast<unsigned long long>(hi) << 32) | lo;
  if ((xcr0 & 0x60000ull) != 0x60000ull) return false;
  // Linux 5.16+: ask for XFEATURE_XTILEDATA (18); the grant covers every thread of the
  // process. Older kernels or a refusing policy return an error: then no AMX.
  constexpr long kArchReqXcompPerm = 0x1023;
  constexpr long kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}
#else
bool detect() {
  return false;
}
#endif

}  // namespace

bool amx_bf16_usable() {
  static const bool usable = detect();
  return usable;
}

}  // namespace catalyst::cpu
