// cast_rules.hpp — the scalar conversions of docs/ops.md's cast definition, for a plugin that
// converts a value on the host (fill's value, a creation op's constant) before handing its
// bits to a kernel: float -> integer truncates toward zero and saturates, NaN -> 0;
// anything -> bool is x != 0 (NaN is true); -> f16/bf16 rounds once to nearest even from the
// double (half.hpp), never through f32 first.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "catalyst/sdk/half.hpp"
#include "catalyst_plugin.h"

namespace catalyst::sdk {

inline bool is_float_dtype(ctl_dtype d) {
  return d == CTL_DTYPE_F32 || d == CTL_DTYPE_F64 || d == CTL_DTYPE_F16 || d == CTL_DTYPE_BF16;
}

// A double as integer dtype I, truncated toward zero and saturated (NaN: 0), as the raw bits
// of I in the low bytes.
template <class I>
uint64_t saturated_bits(double v) {
  if (std::isnan(v)) return 0;
  const double t = std::trunc(v);
  // lowest is a power of two, exact as a double; max + 1 is too, so compare against that
  // rather than round max itself up.
  constexpr double lo = static_cast<double>(std::numeric_limits<I>::lowest());
  constexpr double hi_plus_one = static_cast<double>(std::numeric_limits<I>::max() / 2 + 1) * 2.0;
  I r;
  if (t <= lo)
    r = std::numeric_limits<I>::lowest();
  else if (t >= hi_plus_one)
    r = std::numeric_limits<I>::max();
  else
    r = static_cast<I>(t);
  using U = std::make_unsigned_t<I>;
  return static_cast<U>(r);
}

// A double as the raw bits of `dtype` (in the low bytes), by the cast rules.
inline uint64_t bits_from_double(ctl_dtype dtype, double v) {
  switch (dtype) {
    case CTL_DTYPE_F32: {
      const float f = static_cast<float>(v);
      uint32_t bits;
      std::memcpy(&bits, &f, sizeof bits);
      return bits;
    }
    case CTL_DTYPE_F64: {
      uint64_t bits;
      std::memcpy(&bits, &v, sizeof bits);
      return bits;
    }
    case CTL_DTYPE_F16:
      return double_to_half(v);
    case CTL_DTYPE_BF16:
      return double_to_bf16(v);
    case CTL_DTYPE_I8:
      return saturated_bits<int8_t>(v);
    case CTL_DTYPE_U8:
      return saturated_bits<uint8_t>(v);
    case CTL_DTYPE_I32:
      return saturated_bits<int32_t>(v);
    case CTL_DTYPE_I64:
      return saturated_bits<int64_t>(v);
    default:
      return v != 0.0 ? 1 : 0;  // bool: NaN != 0 is true
  }
}

}  // namespace catalyst::sdk
