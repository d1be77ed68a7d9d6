// amx.cpp — see amx.h.
#include "amx.h"

#include "isa.h"

#if defined(__x86_64__) && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace catalyst::cpu {
namespace {

#if defined(__x86_64__) && defined(__linux__)
bool detect() {
  if (!isa_info().amx_bf16) return false;  // the CPU and the OS's XCR0 (isa.cpp)
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
