// philox.hpp — the counter-based generator behind CTL_OP_RANDOM_UNIFORM/NORMAL.
//
// Philox-4x32 with 10 rounds (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
// SC 2011). Element i of an op's contiguous output uses counter (offset + i) and key seed,
// so every device produces the same stream; the mapping to uniform and normal values below
// is part of the op set's definition.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

namespace catalyst::sdk {

inline std::array<uint32_t, 4> philox4x32_10(uint64_t counter, uint64_t key) {
  constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  std::array<uint32_t, 4> c = {static_cast<uint32_t>(counter), static_cast<uint32_t>(counter >> 32), 0u, 0u};
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = static_cast<uint64_t>(kMul0) * c[0];
    const uint64_t p1 = static_cast<uint64_t>(kMul1) * c[2];
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k0, static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k1, static_cast<uint32_t>(p0)};
    k0 += kWeyl0;
    k1 += kWeyl1;
  }
  return c;
}

// 53 random bits as a double in [0, 1).
inline double philox_unit(uint32_t high, uint32_t low) {
  return static_cast<double>(((static_cast<uint64_t>(high) << 32) | low) >> 11) * 0x1.0p-53;
}

// Uniform in [a, b) for element `index`, computed in double.
inline double philox_uniform(uint64_t seed, uint64_t index, double a, double b) {
  const auto r = philox4x32_10(index, seed);
  return a + philox_unit(r[0], r[1]) * (b - a);
}

// Normal with mean a and standard deviation b for element `index` (Box-Muller, cosine arm).
inline double philox_normal(uint64_t seed, uint64_t index, double a, double b) {
  const auto r = philox4x32_10(index, seed);
  const double u1 = 1.0 - philox_unit(r[0], r[1]);  // (0, 1]: log is finite
  const double u2 = philox_unit(r[2], r[3]);
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  return a + b * std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
}

}  // namespace catalyst::sdk
