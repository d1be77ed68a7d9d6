// value_access.h — reading and writing one element of any dtype as double (floats) or
// int64 (integers and bool), with the conversion rules of docs/ops.md ("cast"). Every
// reference kernel goes through these, so there is one definition of each conversion.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "catalyst.h"
#include "catalyst/sdk/half.hpp"

namespace catalyst::reference {

// The integer stored in an enum field that a C caller filled: C++ may assume a loaded enum
// holds one of its enumerators' values, and a malformed call need not, so read the bits.
template <typename Enum>
long long raw_enum(const Enum& field) {
  std::underlying_type_t<Enum> value;
  std::memcpy(&value, &field, sizeof value);
  return static_cast<long long>(value);
}

inline bool is_float(ctl_dtype d) {
  return d == CTL_DTYPE_F32 || d == CTL_DTYPE_F64 || d == CTL_DTYPE_F16 || d == CTL_DTYPE_BF16;
}
inline bool is_integer(ctl_dtype d) {  // bool is not an integer here: it has no arithmetic
  return d == CTL_DTYPE_I8 || d == CTL_DTYPE_U8 || d == CTL_DTYPE_I32 || d == CTL_DTYPE_I64;
}
inline bool is_numeric(ctl_dtype d) {
  return is_float(d) || is_integer(d);
}

template <typename T>
T read_raw(const unsigned char* p) {
  T value;
  std::memcpy(&value, p, sizeof value);  // memcpy: views need not be aligned
  return value;
}

template <typename T>
void write_raw(unsigned char* p, T value) {
  std::memcpy(p, &value, sizeof value);
}

// Float -> integer: truncate toward zero, saturate at the type's range, NaN -> 0.
template <typename T>
T saturate(double v) {
  if (std::isnan(v)) return 0;
  const double limit = std::ldexp(1.0, std::numeric_limits<T>::digits);  // max + 1, exact
  const double low = std::numeric_limits<T>::is_signed ? -limit : 0.0;
  if (v <= low) return std::numeric_limits<T>::min();
  if (v >= limit) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

// The element at `p` as a double (exact for every dtype except i64 beyond 2^53).
inline double load_double(const unsigned char* p, ctl_dtype d) {
  switch (d) {
    case CTL_DTYPE_F32:
      return read_raw<float>(p);
    case CTL_DTYPE_F64:
      return read_raw<double>(p);
    case CTL_DTYPE_F16:
      return sdk::half_to_float(read_raw<uint16_t>(p));
    case CTL_DTYPE_BF16:
      return sdk::bf16_to_float(read_raw<uint16_t>(p));
    case CTL_DTYPE_I8:
      return read_raw<int8_t>(p);
    case CTL_DTYPE_U8:
      return read_raw<uint8_t>(p);
    case CTL_DTYPE_I32:
      return read_raw<int32_t>(p);
    case CTL_DTYPE_I64:
      return static_cast<double>(read_raw<int64_t>(p));
    case CTL_DTYPE_BOOL:
      return p[0] != 0 ? 1.0 : 0.0;
    default:
      return 0.0;
  }
}

// The element at `p` as an int64: exact for integers and bool, cast rules for floats.
inline int64_t load_int(const unsigned char* p, ctl_dtype d) {
  switch (d) {
    case CTL_DTYPE_I8:
      return read_raw<int8_t>(p);
    case CTL_DTYPE_U8:
      return read_raw<uint8_t>(p);
    case CTL_DTYPE_I32:
      return read_raw<int32_t>(p);
    case CTL_DTYPE_I64:
      return read_raw<int64_t>(p);
    case CTL_DTYPE_BOOL:
      return p[0] != 0 ? 1 : 0;
    default:
      return saturate<int64_t>(load_double(p, d));
  }
}

// Stores `v` rounded (floats: to nearest even) or cast (integers: truncate and saturate,
// NaN -> 0; bool: v != 0, so NaN is true).
inline void store_double(unsigned char* p, ctl_dtype d, double v) {
  switch (d) {
    case CTL_DTYPE_F32:
      write_raw(p, static_cast<float>(v));
      break;
    case CTL_DTYPE_F64:
      write_raw(p, v);
      break;
    case CTL_DTYPE_F16:
      write_raw(p, sdk::double_to_half(v));
      break;
    case CTL_DTYPE_BF16:
      write_raw(p, sdk::double_to_bf16(v));
      break;
    case CTL_DTYPE_I8:
      write_raw(p, saturate<int8_t>(v));
      break;
    case CTL_DTYPE_U8:
      write_raw(p, saturate<uint8_t>(v));
      break;
    case CTL_DTYPE_I32:
      write_raw(p, saturate<int32_t>(v));
      break;
    case CTL_DTYPE_I64:
      write_raw(p, saturate<int64_t>(v));
      break;
    case CTL_DTYPE_BOOL:
      p[0] = v != 0.0 ? 1 : 0;
      break;
    default:
      break;
  }
}

// Stores `v` wrapped to a narrower integer (two's complement), as 0/1 for bool, or
// rounded to nearest even for floats.
inline void store_int(unsigned char* p, ctl_dtype d, int64_t v) {
  const uint64_t bits = static_cast<uint64_t>(v);  // C++20: narrowing below is modular
  switch (d) {
    case CTL_DTYPE_F32:
      write_raw(p, static_cast<float>(v));
      break;
    case CTL_DTYPE_F64:
      write_raw(p, static_cast<double>(v));
      break;
    case CTL_DTYPE_F16:
      write_raw(p, sdk::int64_to_half(v));
      break;
    case CTL_DTYPE_BF16:
      write_raw(p, sdk::int64_to_bf16(v));
      break;
    case CTL_DTYPE_I8:
      write_raw(p, static_cast<int8_t>(bits));
      break;
    case CTL_DTYPE_U8:
      write_raw(p, static_cast<uint8_t>(bits));
      break;
    case CTL_DTYPE_I32:
      write_raw(p, static_cast<int32_t>(bits));
      break;
    case CTL_DTYPE_I64:
      write_raw(p, v);
      break;
    case CTL_DTYPE_BOOL:
      p[0] = v != 0 ? 1 : 0;
      break;
    default:
      break;
  }
}

// Wrapping integer arithmetic: done in uint64 so overflow is defined, then read back.
inline int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t wrap_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
inline int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

}  // namespace catalyst::reference
