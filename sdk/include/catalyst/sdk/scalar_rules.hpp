// scalar_rules.hpp — the scalar rules of docs/ops.md, one element at a time, for a plugin that
// computes on the host (a device whose memory the host addresses, or a host-side path of any
// plugin): every elementwise op, matmul's activations, the NaN and signed-zero rules of
// maximum / minimum and of argmax / argmin, wrapping integer arithmetic, and the cast rules
// between the dtypes that have a C++ type.
//
//   y = sdk::unary_op(CTL_OP_GELU, x);       // T: float, double or an integer type
//   y = sdk::binary_op(CTL_OP_DIV, a, b);    // int32_t: truncates, x / 0 == 0, wraps
//   if (sdk::arg_replaces(v, best, true)) ...  // argmax: the first NaN, else the first maximum
//
// Float ops are computed in double and rounded once to T, which meets docs/ops.md's accuracy
// bounds for f32 (and f16 / bf16 after half.hpp's rounding). Integers wrap (two's complement).
// bool is not numeric: use it only with compare_op and cast_value.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "catalyst/sdk/cast_rules.hpp"
#include "catalyst_plugin.h"

namespace catalyst::sdk {

// IEEE 754-2019 maximum and minimum: NaN propagates, and -0 orders below +0 in either order.
inline double ieee_maximum(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return a + b;
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
inline double ieee_minimum(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return a + b;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

// Two's-complement arithmetic on integer T, without signed overflow.
template <class T>
T wrapping_add(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
template <class T>
T wrapping_sub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
}
template <class T>
T wrapping_mul(T a, T b) {
  // uint64_t, not U: a narrow U would be promoted to int, whose product can overflow.
  return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// div: truncates toward zero; x / 0 is 0; INT_MIN / -1 is INT_MIN.
template <class T>
T integer_div(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return wrapping_sub<T>(0, a);
  }
  return static_cast<T>(a / b);
}

// pow: wraps; a negative exponent gives 1 for base 1, +-1 for base -1 (by parity), else 0.
template <class T>
T integer_pow(T base, T exponent) {
  if constexpr (std::is_signed_v<T>) {
    if (exponent < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exponent & 1) ? -1 : 1;
      return 0;
    }
  }
  T result = 1;
  for (auto e = static_cast<std::make_unsigned_t<T>>(exponent); e; e >>= 1) {
    if (e & 1) result = wrapping_mul(result, base);
    base = wrapping_mul(base, base);
  }
  return result;
}

// The float forms, in double. gelu uses erfc and gelu_tanh and silu a quotient, so that
// nothing cancels far left of 0 (gelu(-10) is about -7.6e-23, not 0).
inline double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}
inline double gelu(double x) {
  return 0.5 * x * std::erfc(-x * 0.70710678118654752440);
}
inline double gelu_tanh(double x) {
  const double z = 0.79788456080286535588 * (x + 0.044715 * x * x * x);
  return x * sigmoid(2.0 * z);  // 0.5 * (1 + tanh(z)) == sigmoid(2z)
}

// The unary op `op` (CTL_OP_NEG .. CTL_OP_RECIPROCAL) of x. Integers: neg wraps, abs wraps
// (abs(INT_MIN) == INT_MIN, the identity for unsigned), relu; the float-only ops, which the
// op set refuses for integers, return x.
template <class T>
T unary_op(int64_t op, T x) {
  if constexpr (std::is_floating_point_v<T>) {
    const double v = x;
    switch (op) {
      case CTL_OP_NEG:
        return static_cast<T>(-v);
      case CTL_OP_ABS:
        return static_cast<T>(std::fabs(v));
      case CTL_OP_EXP:
        return static_cast<T>(std::exp(v));
      case CTL_OP_LOG:
        return static_cast<T>(std::log(v));
      case CTL_OP_SQRT:
        return static_cast<T>(std::sqrt(v));
      case CTL_OP_RSQRT:
        return static_cast<T>(1.0 / std::sqrt(v));
      case CTL_OP_TANH:
        return static_cast<T>(std::tanh(v));
      case CTL_OP_SIGMOID:
        return static_cast<T>(sigmoid(v));
      case CTL_OP_RELU:
        return std::isnan(v) ? x : static_cast<T>(v > 0 ? v : 0.0);
      case CTL_OP_GELU:
        return static_cast<T>(gelu(v));
      case CTL_OP_GELU_TANH:
        return static_cast<T>(gelu_tanh(v));
      case CTL_OP_SILU:
        return static_cast<T>(v * sigmoid(v));
      case CTL_OP_SIN:
        return static_cast<T>(std::sin(v));
      case CTL_OP_COS:
        return static_cast<T>(std::cos(v));
      case CTL_OP_RECIPROCAL:
        return static_cast<T>(1.0 / v);
      default:
        return x;
    }
  } else {
    switch (op) {
      case CTL_OP_NEG:
        return wrapping_sub<T>(0, x);
      case CTL_OP_ABS:
        return x < 0 ? wrapping_sub<T>(0, x) : x;
      case CTL_OP_RELU:
        return x > 0 ? x : 0;
      default:
        return x;
    }
  }
}

// maximum / minimum of one T: IEEE for floats.
template <class T>
T maximum_of(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return static_cast<T>(ieee_maximum(a, b));
  return a > b ? a : b;
}
template <class T>
T minimum_of(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return static_cast<T>(ieee_minimum(a, b));
  return a < b ? a : b;
}

// The binary op `op` (CTL_OP_ADD .. CTL_OP_MINIMUM) of a and b.
template <class T>
T binary_op(int64_t op, T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    const double x = a, y = b;
    switch (op) {
      case CTL_OP_ADD:
        return static_cast<T>(x + y);
      case CTL_OP_SUB:
        return static_cast<T>(x - y);
      case CTL_OP_MUL:
        return static_cast<T>(x * y);
      case CTL_OP_DIV:
        return static_cast<T>(x / y);
      case CTL_OP_POW:
        return static_cast<T>(std::pow(x, y));
      case CTL_OP_MAXIMUM:
        return maximum_of(a, b);
      default:
        return minimum_of(a, b);
    }
  } else {
    switch (op) {
      case CTL_OP_ADD:
        return wrapping_add(a, b);
      case CTL_OP_SUB:
        return wrapping_sub(a, b);
      case CTL_OP_MUL:
        return wrapping_mul(a, b);
      case CTL_OP_DIV:
        return integer_div(a, b);
      case CTL_OP_POW:
        return integer_pow(a, b);
      case CTL_OP_MAXIMUM:
        return maximum_of(a, b);
      default:
        return minimum_of(a, b);
    }
  }
}

// The comparison `op` (CTL_OP_EQ .. CTL_OP_GE): false with a NaN operand, except ne.
template <class T>
bool compare_op(int64_t op, T a, T b) {
  switch (op) {
    case CTL_OP_EQ:
      return a == b;
    case CTL_OP_NE:
      return a != b;
    case CTL_OP_LT:
      return a < b;
    case CTL_OP_LE:
      return a <= b;
    case CTL_OP_GT:
      return a > b;
    default:
      return a >= b;
  }
}

// matmul's fused activation (ctl_activation) of v.
inline double activation_op(int64_t activation, double v) {
  switch (activation) {
    case CTL_ACTIVATION_RELU:
      return unary_op(CTL_OP_RELU, v);
    case CTL_ACTIVATION_GELU:
      return gelu(v);
    case CTL_ACTIVATION_GELU_TANH:
      return gelu_tanh(v);
    default:
      return v;
  }
}

// argmax (is_max) / argmin: whether v, met after `best`, takes its place. NaN counts as the
// extreme, and the first of equal values (and the first NaN) keeps its place.
template <class T>
bool arg_replaces(T v, T best, bool is_max) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(best)) return false;
    if (std::isnan(v)) return true;
  }
  return is_max ? v > best : v < best;
}

// cast: to bool is v != 0 (NaN is true); float to integer truncates and saturates, NaN to 0;
// integer to integer wraps; to float rounds the exact value once.
template <class To, class From>
To cast_value(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From{};
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    return static_cast<To>(saturated_bits<To>(static_cast<double>(v)));
  } else {
    return static_cast<To>(v);
  }
}

// gather's and scatter_add's index rule: a negative index counts from the end of an axis of
// n; the position in [0, n), or -1 for an index outside [-n, n) (gather writes 0 there,
// scatter_add skips it).
inline int64_t index_position(int64_t index, int64_t n) {
  if (index < 0) index += n;
  return index >= 0 && index < n ? index : -1;
}

}  // namespace catalyst::sdk
