// reduce.hpp — element arithmetic of reductions on host bytes, with the meaning
// catalyst_comm.h gives it (f16 and bf16 in f32 rounded once per step, integers wrapping,
// NaN propagating through MAX and MIN), and the ring's chunk boundaries. The core's
// in-process communicator has its own copy: a plugin includes only abi/ and sdk/.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "catalyst/sdk/half.hpp"
#include "catalyst_comm.h"

namespace catalyst::mpi {

// A plugin links against no part of libcatalyst, so it sizes and names dtypes itself.
inline uint64_t element_size(ctl_dtype dtype) {
  switch (dtype) {
    case CTL_DTYPE_F64:
    case CTL_DTYPE_I64:
      return 8;
    case CTL_DTYPE_F32:
    case CTL_DTYPE_I32:
      return 4;
    case CTL_DTYPE_F16:
    case CTL_DTYPE_BF16:
      return 2;
    default:
      return 1;
  }
}

inline const char* dtype_label(ctl_dtype dtype) {
  static const char* const names[] = {"f32", "f64", "f16", "bf16", "i8", "u8", "i32", "i64", "bool"};
  const unsigned d = static_cast<unsigned>(dtype);
  return d < 9 ? names[d] : "unknown";
}

template <typename T>
T reduce_one(ctl_comm_reduce_op op, T a, T b) {
  if (op == CTL_COMM_MAX || op == CTL_COMM_MIN) {
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
    }
    return op == CTL_COMM_MAX ? (a > b ? a : b) : (a < b ? a : b);
  }
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

template <typename T>
void combine_as(ctl_comm_reduce_op op, const void* left, void* right, uint64_t n) {
  const T* l = static_cast<const T*>(left);
  T* r = static_cast<T*>(right);
  for (uint64_t i = 0; i < n; ++i) r[i] = reduce_one<T>(op, l[i], r[i]);
}

template <float (*to_float)(uint16_t), uint16_t (*from_float)(float)>
void combine_half(ctl_comm_reduce_op op, const void* left, void* right, uint64_t n) {
  const uint16_t* l = static_cast<const uint16_t*>(left);
  uint16_t* r = static_cast<uint16_t*>(right);
  for (uint64_t i = 0; i < n; ++i) r[i] = from_float(reduce_one<float>(op, to_float(l[i]), to_float(r[i])));
}

// right[i] = left[i] (op) right[i]: left is the partial that arrived, right this rank's own.
inline void combine(ctl_dtype dtype, ctl_comm_reduce_op op, const void* left, void* right, uint64_t n) {
  switch (dtype) {
    case CTL_DTYPE_F32:
      return combine_as<float>(op, left, right, n);
    case CTL_DTYPE_F64:
      return combine_as<double>(op, left, right, n);
    case CTL_DTYPE_I32:
      return combine_as<int32_t>(op, left, right, n);
    case CTL_DTYPE_I64:
      return combine_as<int64_t>(op, left, right, n);
    case CTL_DTYPE_F16:
      return combine_half<sdk::half_to_float, sdk::float_to_half>(op, left, right, n);
    case CTL_DTYPE_BF16:
      return combine_half<sdk::bf16_to_float, sdk::float_to_bf16>(op, left, right, n);
    default:
      return;
  }
}

template <typename T>
void divide_as(void* data, uint64_t n, uint32_t ranks) {
  T* d = static_cast<T*>(data);
  for (uint64_t i = 0; i < n; ++i) d[i] = static_cast<T>(d[i] / static_cast<T>(ranks));
}

template <float (*to_float)(uint16_t), uint16_t (*from_float)(float)>
void divide_half(void* data, uint64_t n, uint32_t ranks) {
  uint16_t* d = static_cast<uint16_t*>(data);
  for (uint64_t i = 0; i < n; ++i) d[i] = from_float(to_float(d[i]) / static_cast<float>(ranks));
}

// data[i] /= ranks (MEAN), integers truncating toward zero.
inline void divide(ctl_dtype dtype, void* data, uint64_t n, uint32_t ranks) {
  switch (dtype) {
    case CTL_DTYPE_F32:
      return divide_as<float>(data, n, ranks);
    case CTL_DTYPE_F64:
      return divide_as<double>(data, n, ranks);
    case CTL_DTYPE_I32:
      return divide_as<int32_t>(data, n, ranks);
    case CTL_DTYPE_I64:
      return divide_as<int64_t>(data, n, ranks);
    case CTL_DTYPE_F16:
      return divide_half<sdk::half_to_float, sdk::float_to_half>(data, n, ranks);
    case CTL_DTYPE_BF16:
      return divide_half<sdk::bf16_to_float, sdk::float_to_bf16>(data, n, ranks);
    default:
      return;
  }
}

// First element of chunk c when `count` elements are split into `parts` nearly equal chunks.
inline uint64_t chunk_begin(uint64_t count, uint32_t parts, uint32_t c) {
  return count / parts * c + (c < count % parts ? c : count % parts);
}

}  // namespace catalyst::mpi
