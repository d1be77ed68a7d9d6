// simd_state.cpp — see simd_state.h.
#include "simd_state.h"

namespace catalyst::cpu {
namespace {

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx"))) void vzeroupper() {
  __builtin_ia32_vzeroupper();
}
const bool kHasAvx = [] {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx");
}();
#endif

}  // namespace

void clear_upper_state() {
#if defined(__x86_64__) || defined(__i386__)
  if (kHasAvx) vzeroupper();
#endif
}

}  // namespace catalyst::cpu
