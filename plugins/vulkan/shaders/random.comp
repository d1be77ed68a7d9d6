#version 450
// random.comp — Philox-4x32-10 (sdk/philox.hpp): element i (row-major) uses counter
// offset + i and key seed, computed in double and cast to TB by the cast rules, so every
// device gives the reference's numbers. OP (spec constant 1) is 167 uniform [a, b) or 168
// normal (Box-Muller, cosine arm). P[0..18] the iteration over out; then seed, offset (two
// words each), a, b (doubles).
#include "common.glsl"
#include "math_f64.glsl"
#include "convert.glsl"

layout(constant_id = 1) const int OP = 0;
layout(std430, binding = 1) writeonly buffer Y { S_(TB) y[]; };

uvec4 ctl_philox(uint64_t counter, uint64_t key) {
  uvec4 c = uvec4(uint(counter), uint(counter >> 32), 0u, 0u);
  uint k0 = uint(key), k1 = uint(key >> 32);
  for (int round = 0; round < 10; ++round) {
    uint hi0, lo0, hi1, lo1;
    umulExtended(0xD2511F53u, c.x, hi0, lo0);
    umulExtended(0xCD9E8D57u, c.z, hi1, lo1);
    c = uvec4(hi1 ^ c.y ^ k0, lo1, hi0 ^ c.w ^ k1, lo0);
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return c;
}

// 53 random bits in [0, 1), exact in double.
double ctl_unit(uint high, uint low) {
  return double(((uint64_t(high) << 32) | uint64_t(low)) >> 11) * 1.1102230246251565404e-16lf;
}

void main() {
  uint n = P[0];
  uint64_t seed = packUint2x32(uvec2(P[19], P[20]));
  uint64_t offset = packUint2x32(uvec2(P[21], P[22]));
  double a = packDouble2x32(uvec2(P[23], P[24]));
  double b = packDouble2x32(uvec2(P[25], P[26]));
  FOR_EACH_ITEM(i, n) {
    uvec4 r = ctl_philox(offset + uint64_t(i), seed);  // the counter wraps, as the generator's
    precise double v;
    if (OP == 168) {
      double u1 = 1.0lf - ctl_unit(r.x, r.y);  // (0, 1]: the log is finite
      double u2 = ctl_unit(r.z, r.w);
      v = a + b * sqrt(-2.0lf * ctl_log_d(u1)) * ctl_cos_d(6.283185307179586476925286766559lf * u2);
    } else {
      v = a + ctl_unit(r.x, r.y) * (b - a);
    }
    y[ctl_offset(0u, ctl_unravel(0u, i), 0u)] = ST(TB, ctl_convert(v));
  }
}
