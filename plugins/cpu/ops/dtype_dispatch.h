// dtype_dispatch.h — one C++ type per ctl_dtype, the type each is computed in, loads and
// stores between the two, and dispatch from a run-time dtype to a template instantiation.
#pragma once

#include <cstdint>
#include <type_traits>

#include "catalyst/sdk/half.hpp"
#include "catalyst_plugin.h"

namespace catalyst::cpu {

// 16-bit floats and bool get their own storage types so that overloads and templates
// can tell them apart from uint16_t / uint8_t.
struct f16 {
  uint16_t bits;
};
struct bf16 {
  uint16_t bits;
};
struct boolean {
  uint8_t value;
};  // 0 or 1 in memory; anything non-zero reads as true

template <class T>
struct Tag {
  using type = T;
};

template <class T>
inline constexpr bool is_half_v = std::is_same_v<T, f16> || std::is_same_v<T, bf16>;
template <class T>
inline constexpr bool is_float_v = std::is_floating_point_v<T> || is_half_v<T>;
template <class T>
inline constexpr bool is_bool_v = std::is_same_v<T, boolean>;
template <class T>
inline constexpr bool is_int_v = std::is_integral_v<T>;  // i8 u8 i32 i64

// f16/bf16 are computed in f32 (ops.md: "computed in at least f32").
template <class T>
struct compute_type {
  using type = T;
};
template <>
struct compute_type<f16> {
  using type = float;
};
template <>
struct compute_type<bf16> {
  using type = float;
};
template <>
struct compute_type<boolean> {
  using type = bool;
};
template <class T>
using compute_t = typename compute_type<T>::type;

template <class T>
inline compute_t<T> load(T x) {
  if constexpr (std::is_same_v<T, f16>)
    return sdk::half_to_float(x.bits);
  else if constexpr (std::is_same_v<T, bf16>)
    return sdk::bf16_to_float(x.bits);
  else if constexpr (std::is_same_v<T, boolean>)
    return x.value != 0;
  else
    return x;
}

template <class T, class C>
inline T store(C c) {
  if constexpr (std::is_same_v<T, f16>)
    return f16{sdk::float_to_half(static_cast<float>(c))};
  else if constexpr (std::is_same_v<T, bf16>)
    return bf16{sdk::float_to_bf16(static_cast<float>(c))};
  else if constexpr (std::is_same_v<T, boolean>)
    return boolean{static_cast<uint8_t>(c ? 1 : 0)};
  else
    return static_cast<T>(c);
}

// Element i of p, in double.
template <class T>
inline double load_double(const T* p, int64_t i) {
  return static_cast<double>(load(p[i]));
}

// double -> T rounded once (f16/bf16 directly, not through a float rounded first), for
// kernels that compute in double whatever the dtype.
template <class T>
inline T store_double(double d) {
  if constexpr (std::is_same_v<T, f16>)
    return f16{sdk::double_to_half(d)};
  else if constexpr (std::is_same_v<T, bf16>)
    return bf16{sdk::double_to_bf16(d)};
  else
    return static_cast<T>(d);
}

// Dispatchers call f(Tag<T>{}) for the C++ type of `dtype` when it is in their set and
// return true, else return false (so no code is instantiated for combinations ops.md
// does not allow).
template <class F>
bool dispatch_float(ctl_dtype dtype, F&& f) {
  switch (dtype) {
    case CTL_DTYPE_F32:
      f(Tag<float>{});
      return true;
    case CTL_DTYPE_F64:
      f(Tag<double>{});
      return true;
    case CTL_DTYPE_F16:
      f(Tag<f16>{});
      return true;
    case CTL_DTYPE_BF16:
      f(Tag<bf16>{});
      return true;
    default:
      return false;
  }
}

template <class F>
bool dispatch_int(ctl_dtype dtype, F&& f) {
  switch (dtype) {
    case CTL_DTYPE_I8:
      f(Tag<int8_t>{});
      return true;
    case CTL_DTYPE_U8:
      f(Tag<uint8_t>{});
      return true;
    case CTL_DTYPE_I32:
      f(Tag<int32_t>{});
      return true;
    case CTL_DTYPE_I64:
      f(Tag<int64_t>{});
      return true;
    default:
      return false;
  }
}

template <class F>
bool dispatch_numeric(ctl_dtype dtype, F&& f) {
  return dispatch_float(dtype, f) || dispatch_int(dtype, f);
}

template <class F>
bool dispatch_all(ctl_dtype dtype, F&& f) {
  if (dtype == CTL_DTYPE_BOOL) {
    f(Tag<boolean>{});
    return true;
  }
  return dispatch_numeric(dtype, f);
}

// Unsigned integer of `bytes` bytes, for moving elements without looking at them.
template <size_t bytes>
struct raw_type;
template <>
struct raw_type<1> {
  using type = uint8_t;
};
template <>
struct raw_type<2> {
  using type = uint16_t;
};
template <>
struct raw_type<4> {
  using type = uint32_t;
};
template <>
struct raw_type<8> {
  using type = uint64_t;
};

template <class F>
bool dispatch_raw(size_t element_size, F&& f) {
  switch (element_size) {
    case 1:
      f(Tag<uint8_t>{});
      return true;
    case 2:
      f(Tag<uint16_t>{});
      return true;
    case 4:
      f(Tag<uint32_t>{});
      return true;
    case 8:
      f(Tag<uint64_t>{});
      return true;
    default:
      return false;
  }
}

}  // namespace catalyst::cpu
