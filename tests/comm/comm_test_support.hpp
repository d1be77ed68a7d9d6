// comm_test_support.hpp — what the communicator tests share: per-rank values in every dtype
// the collectives reduce, the reference each collective must give (computed in double from
// the same values), and a bitwise comparison of ranks' results.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "catalyst/sdk/half.hpp"
#include "catalyst_comm.h"

namespace commtest {

inline const std::vector<ctl_dtype>& reduce_dtypes() {
  static const std::vector<ctl_dtype> all = {CTL_DTYPE_F32, CTL_DTYPE_F16, CTL_DTYPE_BF16,
                                             CTL_DTYPE_F64, CTL_DTYPE_I32, CTL_DTYPE_I64};
  return all;
}
inline const std::vector<int64_t>& sizes() {
  static const std::vector<int64_t> all = {0, 1, 17, 65537};  // empty, one, odd, large (and odd)
  return all;
}

inline bool is_float(ctl_dtype d) {
  return d != CTL_DTYPE_I32 && d != CTL_DTYPE_I64;
}

// `v` stored as one element of `dtype` (rounded to nearest even for floats).
inline void store(ctl_dtype dtype, double v, uint8_t* out) {
  switch (dtype) {
    case CTL_DTYPE_F32: {
      float f = static_cast<float>(v);
      std::memcpy(out, &f, 4);
      break;
    }
    case CTL_DTYPE_F64:
      std::memcpy(out, &v, 8);
      break;
    case CTL_DTYPE_F16: {
      uint16_t h = catalyst::sdk::float_to_half(catalyst::sdk::round_to_odd_float(v));
      std::memcpy(out, &h, 2);
      break;
    }
    case CTL_DTYPE_BF16: {
      uint16_t h = catalyst::sdk::float_to_bf16(catalyst::sdk::round_to_odd_float(v));
      std::memcpy(out, &h, 2);
      break;
    }
    case CTL_DTYPE_I32: {
      int32_t i = static_cast<int32_t>(v);
      std::memcpy(out, &i, 4);
      break;
    }
    default: {
      int64_t i = static_cast<int64_t>(v);
      std::memcpy(out, &i, 8);
      break;
    }
  }
}

inline double load(ctl_dtype dtype, const uint8_t* in) {
  switch (dtype) {
    case CTL_DTYPE_F32: {
      float f;
      std::memcpy(&f, in, 4);
      return f;
    }
    case CTL_DTYPE_F64: {
      double d;
      std::memcpy(&d, in, 8);
      return d;
    }
    case CTL_DTYPE_F16: {
      uint16_t h;
      std::memcpy(&h, in, 2);
      return catalyst::sdk::half_to_float(h);
    }
    case CTL_DTYPE_BF16: {
      uint16_t h;
      std::memcpy(&h, in, 2);
      return catalyst::sdk::bf16_to_float(h);
    }
    case CTL_DTYPE_I32: {
      int32_t i;
      std::memcpy(&i, in, 4);
      return i;
    }
    default: {
      int64_t i;
      std::memcpy(&i, in, 8);
      return static_cast<double>(i);
    }
  }
}

// Exact values: small multiples of 1/2 (integers for integer dtypes), so every sum of up to
// 4 ranks is exact in every dtype and any summation order gives the reference bit for bit.
inline double exact_value(ctl_dtype dtype, uint32_t rank, int64_t i) {
  const double v = double((i * 7 + rank * 13 + 3) % 17) - 8.0;
  return is_float(dtype) ? v * 0.5 : v;
}

// Values whose sums round: uniform in [-1, 1) (or large integers), from a fixed generator.
inline double random_value(ctl_dtype dtype, uint32_t rank, int64_t i) {
  uint64_t x = (uint64_t(i) * 0x9e3779b97f4a7c15ull) ^ (uint64_t(rank + 1) * 0xbf58476d1ce4e5b9ull);
  x ^= x >> 31;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 29;
  const double u = double(x >> 11) * 0x1.0p-53 * 2.0 - 1.0;
  return is_float(dtype) ? u : std::floor(u * 1e6);
}

inline std::vector<uint8_t> make_bytes(ctl_dtype dtype, int64_t n, uint32_t rank, bool exact) {
  const size_t es = ctl_dtype_size(dtype);
  std::vector<uint8_t> bytes(size_t(n) * es);
  for (int64_t i = 0; i < n; ++i)
    store(dtype, exact ? exact_value(dtype, rank, i) : random_value(dtype, rank, i), bytes.data() + i * es);
  return bytes;
}

// The reference reduction of element i over `ranks` ranks of exact values, in `dtype`'s
// semantics: sums are exact; MEAN divides the (exact) sum in the dtype's arithmetic (f16 and
// bf16 in f32), integers truncating.
inline std::vector<uint8_t> exact_reference(ctl_dtype dtype, ctl_comm_reduce_op op, int64_t n, uint32_t ranks) {
  const size_t es = ctl_dtype_size(dtype);
  std::vector<uint8_t> out(size_t(n) * es);
  for (int64_t i = 0; i < n; ++i) {
    double sum = 0, mx = -INFINITY, mn = INFINITY;
    for (uint32_t r = 0; r < ranks; ++r) {
      const double v = exact_value(dtype, r, i);
      sum += v;
      mx = std::max(mx, v);
      mn = std::min(mn, v);
    }
    double value = op == CTL_COMM_SUM ? sum : op == CTL_COMM_MAX ? mx : op == CTL_COMM_MIN ? mn : 0;
    if (op == CTL_COMM_MEAN) {
      switch (dtype) {
        case CTL_DTYPE_F64:
          value = sum / ranks;
          break;
        case CTL_DTYPE_I32:
        case CTL_DTYPE_I64:
          value = double(int64_t(sum) / int64_t(ranks));
          break;
        default:
          value = double(float(sum) / float(ranks));  // f32, and f16/bf16 divide in f32 then round
          break;
      }
    }
    store(dtype, value, out.data() + i * es);
  }
  return out;
}

// The sum (or max/min/mean) in double of random values, and a bound on the error of any
// summation order in `dtype`.
inline void random_reference(ctl_dtype dtype, ctl_comm_reduce_op op, int64_t i, uint32_t ranks, double* value,
                             double* tolerance) {
  double sum = 0, mag = 0, mx = -INFINITY, mn = INFINITY;
  for (uint32_t r = 0; r < ranks; ++r) {
    std::vector<uint8_t> one(8);
    store(dtype, random_value(dtype, r, i), one.data());
    const double v = load(dtype, one.data());
    sum += v;
    mag += std::fabs(v);
    mx = std::max(mx, v);
    mn = std::min(mn, v);
  }
  const double eps = dtype == CTL_DTYPE_F64    ? 0x1p-52
                     : dtype == CTL_DTYPE_F32  ? 0x1p-23
                     : dtype == CTL_DTYPE_F16  ? 0x1p-10
                     : dtype == CTL_DTYPE_BF16 ? 0x1p-7
                                               : 0;
  *value = op == CTL_COMM_SUM ? sum : op == CTL_COMM_MAX ? mx : op == CTL_COMM_MIN ? mn : sum / ranks;
  if (op == CTL_COMM_MEAN && !is_float(dtype)) *value = double(int64_t(sum) / int64_t(ranks));
  *tolerance = (op == CTL_COMM_SUM || op == CTL_COMM_MEAN) ? 2.0 * ranks * eps * (mag + 1e-30) : 0.0;
  if (op == CTL_COMM_MEAN) *tolerance /= ranks;
  *tolerance += eps * std::fabs(*value);
}

inline const char* op_label(ctl_comm_reduce_op op) {
  return op == CTL_COMM_SUM ? "sum" : op == CTL_COMM_MEAN ? "mean" : op == CTL_COMM_MAX ? "max" : "min";
}

}  // namespace commtest
