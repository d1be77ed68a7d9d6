// host_reduce.cpp — see host_reduce.h.
#include "host_reduce.h"

#include <cmath>
#include <cstring>

#include "catalyst/sdk/half.hpp"

namespace catalyst::comm {
namespace {

template <typename T>
T apply(ctl_comm_reduce_op op, T a, T b) {
  switch (op) {
    case CTL_COMM_MAX:
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
      }
      return a > b ? a : b;
    case CTL_COMM_MIN:
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
      }
      return a < b ? a : b;
    default:
      if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));  // wraps, never UB
      } else {
        return a + b;
      }
  }
}

template <typename T>
void combine_as(ctl_comm_reduce_op op, const void* left, void* right, uint64_t count) {
  const T* l = static_cast<const T*>(left);
  T* r = static_cast<T*>(right);
  for (uint64_t i = 0; i < count; ++i) r[i] = apply<T>(op, l[i], r[i]);
}

template <float (*to_float)(uint16_t), uint16_t (*from_float)(float)>
void combine_half(ctl_comm_reduce_op op, const void* left, void* right, uint64_t count) {
  const uint16_t* l = static_cast<const uint16_t*>(left);
  uint16_t* r = static_cast<uint16_t*>(right);
  for (uint64_t i = 0; i < count; ++i) r[i] = from_float(apply<float>(op, to_float(l[i]), to_float(r[i])));
}

template <typename T>
void divide_as(void* data, uint64_t count, uint32_t ranks) {
  T* d = static_cast<T*>(data);
  for (uint64_t i = 0; i < count; ++i) d[i] = static_cast<T>(d[i] / static_cast<T>(ranks));
}

template <float (*to_float)(uint16_t), uint16_t (*from_float)(float)>
void divide_half(void* data, uint64_t count, uint32_t ranks) {
  uint16_t* d = static_cast<uint16_t*>(data);
  for (uint64_t i = 0; i < count; ++i) d[i] = from_float(to_float(d[i]) / static_cast<float>(ranks));
}

}  // namespace

bool reducible(ctl_dtype dtype) {
  switch (dtype) {
    case CTL_DTYPE_F32:
    case CTL_DTYPE_F64:
    case CTL_DTYPE_F16:
    case CTL_DTYPE_BF16:
    case CTL_DTYPE_I32:
    case CTL_DTYPE_I64:
      return true;
    default:
      return false;
  }
}

void combine(ctl_dtype dtype, ctl_comm_reduce_op op, const void* left, void* right, uint64_t count) {
  switch (dtype) {
    case CTL_DTYPE_F32:
      return combine_as<float>(op, left, right, count);
    case CTL_DTYPE_F64:
      return combine_as<double>(op, left, right, count);
    case CTL_DTYPE_I32:
      return combine_as<int32_t>(op, left, right, count);
    case CTL_DTYPE_I64:
      return combine_as<int64_t>(op, left, right, count);
    case CTL_DTYPE_F16:
      return combine_half<sdk::half_to_float, sdk::float_to_half>(op, left, right, count);
    case CTL_DTYPE_BF16:
      return combine_half<sdk::bf16_to_float, sdk::float_to_bf16>(op, left, right, count);
    default:
      return;  // callers check reducible() first
  }
}

void divide(ctl_dtype dtype, void* data, uint64_t count, uint32_t ranks) {
  switch (dtype) {
    case CTL_DTYPE_F32:
      return divide_as<float>(data, count, ranks);
    case CTL_DTYPE_F64:
      return divide_as<double>(data, count, ranks);
    case CTL_DTYPE_I32:
      return divide_as<int32_t>(data, count, ranks);
    case CTL_DTYPE_I64:
      return divide_as<int64_t>(data, count, ranks);
    case CTL_DTYPE_F16:
      return divide_half<sdk::half_to_float, sdk::float_to_half>(data, count, ranks);
    case CTL_DTYPE_BF16:
      return divide_half<sdk::bf16_to_float, sdk::float_to_bf16>(data, count, ranks);
    default:
      return;
  }
}

}  // namespace catalyst::comm
