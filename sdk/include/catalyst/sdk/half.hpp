// half.hpp — IEEE binary16 and bfloat16 conversions, shared by every plugin and the
// core's reference kernels so that "round to nearest even" means one thing everywhere.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace catalyst::sdk {

// binary16 bits -> float (exact: every half is a float).
inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0x1f) {  // Inf or NaN; keep the payload
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {  // normal
    bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {  // signed zero
    bits = sign;
  } else {  // subnormal: shift the mantissa up until the implicit bit appears
    uint32_t e = 113;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --e;
    }
    bits = sign | (e << 23) | ((mantissa & 0x3ffu) << 13);
  }
  return std::bit_cast<float>(bits);
}

// float -> binary16 bits, round to nearest even, overflow to Inf, NaN stays NaN (quiet).
inline uint16_t float_to_half(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past 65504
  if (abs < 0x38800000u) {               // result is subnormal or zero: scale so one ulp is 2^-24
    if (abs < 0x33000000u) return sign;  // below half of the smallest subnormal
    const uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - (abs >> 23);  // 14..24
    uint32_t result = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1u);
    if (rest > half || (rest == half && (result & 1u))) ++result;
    return static_cast<uint16_t>(sign | result);
  }
  uint32_t result = ((abs >> 13) - (112u << 10));
  const uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (result & 1u))) ++result;
  return static_cast<uint16_t>(sign | result);
}

inline float bf16_to_float(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

// float -> bfloat16 bits, round to nearest even, NaN stays NaN (quiet).
inline uint16_t float_to_bf16(float f) {
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

// double -> float rounded to odd: truncate, and set the last bit when inexact. Rounding
// that float again to f16/bf16 (to nearest even) equals rounding the double directly
// (float has more than twice their precision plus two bits), while a plain
// double -> float -> half chain rounds twice and is off by one ulp on some ties.
inline float round_to_odd_float(double d) {
  float f = static_cast<float>(d);
  if (std::isnan(d) || static_cast<double>(f) == d) return f;
  if ((std::bit_cast<uint32_t>(f) & 1u) == 0) {
    // f is the even neighbour; the odd one lies on the other side of d.
    f = std::nextafter(f, static_cast<double>(f) < d ? std::numeric_limits<float>::infinity()
                                                     : -std::numeric_limits<float>::infinity());
  }
  return f;
}

// int64 -> float rounded to odd, for the same reason (int64 -> float may already round).
inline float int64_to_float_odd(int64_t v) {
  uint64_t magnitude = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  uint64_t sticky = 0;
  int shift = 0;
  while (magnitude >= (uint64_t{1} << 24)) {  // keep 24 significant bits, remember the rest
    sticky |= magnitude & 1u;
    magnitude >>= 1;
    ++shift;
  }
  const float f = std::ldexp(static_cast<float>(magnitude | sticky), shift);
  return v < 0 ? -f : f;
}

// Correctly rounded (once, to nearest even) conversions to the 16-bit formats.
inline uint16_t double_to_half(double d) {
  return float_to_half(round_to_odd_float(d));
}
inline uint16_t double_to_bf16(double d) {
  return float_to_bf16(round_to_odd_float(d));
}
inline uint16_t int64_to_half(int64_t v) {
  return float_to_half(int64_to_float_odd(v));
}
inline uint16_t int64_to_bf16(int64_t v) {
  return float_to_bf16(int64_to_float_odd(v));
}

}  // namespace catalyst::sdk
