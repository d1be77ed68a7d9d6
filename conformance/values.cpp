// values.cpp — see values.h.
#include "values.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "catalyst/sdk/half.hpp"

namespace catalyst::conformance {

bool is_float(ctl_dtype d) {
  return d == CTL_DTYPE_F32 || d == CTL_DTYPE_F64 || d == CTL_DTYPE_F16 || d == CTL_DTYPE_BF16;
}

bool is_required_dtype(ctl_dtype d) {
  return d == CTL_DTYPE_F32 || d == CTL_DTYPE_I32 || d == CTL_DTYPE_I64 || d == CTL_DTYPE_BOOL;
}

double load(const unsigned char* p, ctl_dtype d) {
  switch (d) {
    case CTL_DTYPE_F32: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case CTL_DTYPE_F64: {
      double v;
      std::memcpy(&v, p, 8);
      return v;
    }
    case CTL_DTYPE_F16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return sdk::half_to_float(v);
    }
    case CTL_DTYPE_BF16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return sdk::bf16_to_float(v);
    }
    case CTL_DTYPE_I8:
      return static_cast<int8_t>(*p);
    case CTL_DTYPE_U8:
    case CTL_DTYPE_BOOL:
      return *p;
    case CTL_DTYPE_I32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case CTL_DTYPE_I64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
    default:
      return 0;
  }
}

int64_t load_int(const unsigned char* p, ctl_dtype d) {
  if (d == CTL_DTYPE_I64) {
    int64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  return static_cast<int64_t>(load(p, d));
}

void store(unsigned char* p, ctl_dtype d, double v) {
  switch (d) {
    case CTL_DTYPE_F32: {
      const float f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
      break;
    }
    case CTL_DTYPE_F64:
      std::memcpy(p, &v, 8);
      break;
    case CTL_DTYPE_F16: {
      const uint16_t h = sdk::double_to_half(v);
      std::memcpy(p, &h, 2);
      break;
    }
    case CTL_DTYPE_BF16: {
      const uint16_t h = sdk::double_to_bf16(v);
      std::memcpy(p, &h, 2);
      break;
    }
    case CTL_DTYPE_I8:
      *p = static_cast<unsigned char>(static_cast<int8_t>(v));
      break;
    case CTL_DTYPE_U8:
      *p = static_cast<unsigned char>(v);
      break;
    case CTL_DTYPE_BOOL:
      *p = v != 0;
      break;
    case CTL_DTYPE_I32: {
      const int32_t i = static_cast<int32_t>(v);
      std::memcpy(p, &i, 4);
      break;
    }
    case CTL_DTYPE_I64: {
      const int64_t i = static_cast<int64_t>(v);
      std::memcpy(p, &i, 8);
      break;
    }
    default:
      break;
  }
}

double unit_roundoff(ctl_dtype d) {
  switch (d) {
    case CTL_DTYPE_F64:
      return std::ldexp(1.0, -53);
    case CTL_DTYPE_F16:
      return std::ldexp(1.0, -11);
    case CTL_DTYPE_BF16:
      return std::ldexp(1.0, -8);
    default:
      return std::ldexp(1.0, -24);
  }
}

double accumulator_roundoff(ctl_dtype d) {
  return d == CTL_DTYPE_F64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
}

double smallest_subnormal(ctl_dtype d) {
  switch (d) {
    case CTL_DTYPE_F64:
      return std::numeric_limits<double>::denorm_min();
    case CTL_DTYPE_F16:
      return std::ldexp(1.0, -24);
    case CTL_DTYPE_BF16:
      return std::ldexp(1.0, -133);  // f32's exponent range, but only 7 fraction bits
    default:
      return std::numeric_limits<float>::denorm_min();
  }
}

double smallest_normal(ctl_dtype d) {
  switch (d) {
    case CTL_DTYPE_F64:
      return std::numeric_limits<double>::min();
    case CTL_DTYPE_F16:
      return std::ldexp(1.0, -14);
    default:
      return std::numeric_limits<float>::min();
  }
}

std::vector<unsigned char> random_values(ctl_dtype d, int64_t n, Values kind, std::mt19937_64& rng) {
  const size_t size = ctl_dtype_size(d);
  std::vector<unsigned char> bytes(static_cast<size_t>(n) * size);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double sub = smallest_subnormal(d);
  const double specials[] = {std::nan(""), INFINITY, -INFINITY, 0.0, -0.0, 1.0, -1.0, sub, -37 * sub};
  constexpr size_t kSpecials = sizeof specials / sizeof specials[0];
  for (int64_t i = 0; i < n; ++i) {
    unsigned char* p = bytes.data() + i * size;
    if (d == CTL_DTYPE_BOOL) {
      *p = unit(rng) < 0.5;
      continue;
    }
    const bool special = kind != Values::kFinite && kind != Values::kIndex && is_float(d) && unit(rng) < 0.08;
    double v;
    if (special) {
      v = specials[static_cast<size_t>(unit(rng) * kSpecials) % kSpecials];
    } else if (is_float(d)) {
      switch (kind) {
        case Values::kFinite:
          v = -2.0 + 4.0 * unit(rng);
          break;
        case Values::kPositive:
          v = 8.0 * (1.0 - unit(rng));
          break;
        case Values::kSmallInt:
          v = -3.0 + 6.0 * unit(rng);
          break;
        default:
          v = -4.0 + 8.0 * unit(rng);
          break;
      }
    } else {
      int lo = -20, hi = 20;
      if (kind == Values::kSmallInt) lo = -3, hi = 3;
      if (kind == Values::kIndex) lo = -7, hi = 6;
      if (d == CTL_DTYPE_U8) lo = std::max(lo, 0), hi = kind == Values::kSmallInt ? 3 : 40;
      v = lo + static_cast<int>(unit(rng) * (hi - lo + 1));
      if (v > hi) v = hi;
    }
    store(p, d, v);
  }
  return bytes;
}

}  // namespace catalyst::conformance
