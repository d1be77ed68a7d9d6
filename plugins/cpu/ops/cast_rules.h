// cast_rules.h — the conversions of ops.md's cast definition, shared by cast, fill,
// arange, random and integer matmul's alpha/beta.
//
//  float -> integer truncates toward zero and saturates, NaN -> 0; anything -> bool is
//  x != 0 (NaN is true); bool -> number is 0 or 1; integer -> narrower integer wraps;
//  -> f16/bf16 rounds once to nearest even, from the exact double or integer value
//  (sdk/half.hpp), never through f32 first.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "dtype_dispatch.h"

namespace catalyst::cpu {

// A value of dtype D from a double, by the float-source rules.
template <class D>
inline D from_double(double v) {
  if constexpr (is_float_v<D>) {
    if constexpr (std::is_same_v<D, double>)
      return v;
    else if constexpr (std::is_same_v<D, f16>)
      return f16{sdk::double_to_half(v)};
    else if constexpr (std::is_same_v<D, bf16>)
      return bf16{sdk::double_to_bf16(v)};
    else
      return static_cast<float>(v);
  } else if constexpr (is_bool_v<D>) {
    return boolean{static_cast<uint8_t>(v != 0.0 ? 1 : 0)};  // NaN != 0 is true
  } else {
    if (std::isnan(v)) return D{0};
    const double t = std::trunc(v);
    // The limits as doubles: lowest is exact (a power of two); max + 1 is exact too, so
    // compare against that to avoid rounding max itself up.
    constexpr double lo = static_cast<double>(std::numeric_limits<D>::lowest());
    constexpr double hi_plus_one = static_cast<double>(std::numeric_limits<D>::max() / 2 + 1) * 2.0;
    if (t <= lo) return std::numeric_limits<D>::lowest();
    if (t >= hi_plus_one) return std::numeric_limits<D>::max();
    return static_cast<D>(t);
  }
}

// A value of dtype D from an integer (or bool as 0/1), by the integer-source rules.
template <class D>
inline D from_int64(int64_t v) {
  if constexpr (std::is_same_v<D, float> || std::is_same_v<D, double>)
    return static_cast<D>(v);
  else if constexpr (std::is_same_v<D, f16>)
    return f16{sdk::int64_to_half(v)};
  else if constexpr (std::is_same_v<D, bf16>)
    return bf16{sdk::int64_to_bf16(v)};
  else if constexpr (is_bool_v<D>)
    return boolean{static_cast<uint8_t>(v != 0 ? 1 : 0)};
  else
    return static_cast<D>(v);  // modular since C++20: wraps
}

template <class S, class D>
inline D convert(S s) {
  if constexpr (std::is_same_v<S, D>) {
    if constexpr (is_bool_v<S>)
      return boolean{static_cast<uint8_t>(s.value != 0)};
    else
      return s;
  } else if constexpr (is_float_v<S>) {
    return from_double<D>(static_cast<double>(load(s)));
  } else {
    return from_int64<D>(static_cast<int64_t>(load(s)));
  }
}

}  // namespace catalyst::cpu
