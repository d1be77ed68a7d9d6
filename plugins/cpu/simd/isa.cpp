// isa.cpp — CPUID + XGETBV detection of the instruction set, see isa.h.
#include "isa.h"

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace catalyst::cpu {
namespace {

#if defined(__x86_64__) || defined(__i386__)
struct Cpuid {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
};

Cpuid cpuid(unsigned leaf, unsigned subleaf) {
  Cpuid r;
  if (!__get_cpuid_count(leaf, subleaf, &r.eax, &r.ebx, &r.ecx, &r.edx)) r = Cpuid{};
  return r;
}

// XCR0: the register states the OS saves. Only callable when CPUID says OSXSAVE.
unsigned long long xcr0() {
  unsigned eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<unsigned long long>(edx) << 32) | eax;
}

constexpr bool bit(unsigned value, int n) {
  return (value >> n) & 1u;
}

IsaInfo detect() {
  IsaInfo info{Isa::kBaseline, Isa::kBaseline, false, false, false, nullptr, true, false};
  const Cpuid leaf1 = cpuid(1, 0);
  const bool osxsave = bit(leaf1.ecx, 27);
  const unsigned long long xcr = osxsave ? xcr0() : 0;
  const bool os_ymm = (xcr & 0x6) == 0x6;    // SSE and AVX state
  const bool os_zmm = (xcr & 0xe6) == 0xe6;  // plus opmask, ZMM0-15 upper halves, ZMM16-31
  const bool avx = bit(leaf1.ecx, 28), fma = bit(leaf1.ecx, 12), f16c = bit(leaf1.ecx, 29);
  const Cpuid leaf7 = cpuid(7, 0);
  const bool avx2 = bit(leaf7.ebx, 5);
  const bool avx512f = bit(leaf7.ebx, 16), avx512dq = bit(leaf7.ebx, 17), avx512bw = bit(leaf7.ebx, 30),
             avx512vl = bit(leaf7.ebx, 31);
  const bool avx512_fp16 = bit(leaf7.edx, 23);
  const bool avx512_bf16 = leaf7.eax >= 1 && bit(cpuid(7, 1).eax, 5);
  const bool amx_bf16 = bit(leaf7.edx, 22) && bit(leaf7.edx, 24) && (xcr & 0x60000) == 0x60000;
  if (os_ymm && avx && avx2 && fma && f16c) info.detected = Isa::kAvx2;
  if (info.detected == Isa::kAvx2 && os_zmm && avx512f && avx512dq && avx512bw && avx512vl) {
    info.detected = Isa::kAvx512;
  }
  info.isa = info.detected;
  if (const char* env = std::getenv("CATALYST_CPU_ISA")) {
    info.request = env;
    Isa wanted = info.detected;
    if (std::strcmp(env, "baseline") == 0) {
      wanted = Isa::kBaseline;
    } else if (std::strcmp(env, "avx2") == 0) {
      wanted = Isa::kAvx2;
    } else if (std::strcmp(env, "avx512") == 0) {
      wanted = Isa::kAvx512;
    } else {
      info.request_valid = false;
    }
    if (wanted < info.isa) info.isa = wanted;
  }
  if (info.isa == Isa::kAvx512) {
    info.avx512_bf16 = avx512_bf16;
    info.avx512_fp16 = avx512_fp16;
    info.amx_bf16 = avx512_bf16 && amx_bf16;
    const char* amx = std::getenv("CATALYST_CPU_AMX");
    if (info.amx_bf16 && amx && std::strcmp(amx, "0") == 0) {
      info.amx_bf16 = false;
      info.amx_turned_off = true;
    }
  }
  return info;
}
#else
IsaInfo detect() {
  return IsaInfo{Isa::kBaseline, Isa::kBaseline, false, false, false, std::getenv("CATALYST_CPU_ISA"), true, false};
}
#endif

}  // namespace

const IsaInfo& isa_info() {
  static const IsaInfo info = detect();
  return info;
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kAvx512:
      return "avx512";
    case Isa::kAvx2:
      return "avx2";
    default:
      return "baseline";
  }
}

}  // namespace catalyst::cpu
