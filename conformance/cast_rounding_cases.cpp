// cast_rounding_cases.cpp — for every (source, target) pair of cast, the values where a
// conversion that is not the one docs/ops.md defines gives other bits: halfway cases and
// their nearest neighbours in the source dtype, the overflow and subnormal edges of a float
// target, the saturation and truncation edges of an integer target from a float, the
// wrap-around edges from a wider integer, and what bool makes of each.
//
// "Rounds the exact source value once" is the rule these guard. A device that converts
// i64 to bf16 through f32, or f64 to f16 through f32, rounds twice: 2^40 + 2^32 + 1 becomes
// 2^40 + 2^32 in f32, a bf16 halfway case, then 2^40 by ties-to-even instead of 2^40 + 2^33.
// Random inputs almost never land there; these values are built to, for each binade edge
// the pair can reach: the tie itself (both parities of the last kept bit), and the tie plus
// or minus the smallest step the source can take there, plus steps that an f32 or f64
// intermediate would lose.
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>

#include "catalog.h"

namespace catalyst::conformance {
namespace {

using Wide = long double;  // x86's 64-bit significand: every i64 and every f64 exactly

struct FloatFormat {
  int precision;  // significand bits, the implicit one included
  int min_exponent;  // of the smallest normal
  int max_exponent;  // of the largest finite
};

FloatFormat format_of(ctl_dtype d) {
  switch (d) {
    case CTL_DTYPE_F16:
      return {11, -14, 15};
    case CTL_DTYPE_BF16:
      return {8, -126, 127};
    case CTL_DTYPE_F32:
      return {24, -126, 127};
    default:
      return {53, -1022, 1023};
  }
}

// The range of an integer dtype (bool: 0 and 1).
void integer_range(ctl_dtype d, Wide* low, Wide* high) {
  switch (d) {
    case CTL_DTYPE_I8:
      *low = -128, *high = 127;
      break;
    case CTL_DTYPE_U8:
      *low = 0, *high = 255;
      break;
    case CTL_DTYPE_I32:
      *low = -2147483648.0L, *high = 2147483647.0L;
      break;
    case CTL_DTYPE_I64:
      *low = -9223372036854775808.0L, *high = 9223372036854775807.0L;
      break;
    default:
      *low = 0, *high = 1;
  }
}

// Whether `v` is a value of dtype `d` exactly (NaN and ±inf are values of the floats).
bool holds(ctl_dtype d, Wide v) {
  if (is_float(d)) {
    if (std::isnan(v) || std::isinf(v)) return true;
    const double as_double = static_cast<double>(v);
    if (static_cast<Wide>(as_double) != v) return false;
    unsigned char bytes[8];
    store(bytes, d, as_double);
    return load(bytes, d) == as_double;
  }
  if (std::isnan(v) || std::isinf(v) || v != std::trunc(v)) return false;
  Wide low = 0, high = 0;
  integer_range(d, &low, &high);
  return v >= low && v <= high;
}

// Stores `v` (a value of `d`, see holds) into `p` exactly.
void store_exact(unsigned char* p, ctl_dtype d, Wide v) {
  if (is_float(d)) {
    store(p, d, static_cast<double>(v));
    return;
  }
  const int64_t i = static_cast<int64_t>(v);
  std::memcpy(p, &i, ctl_dtype_size(d));  // little-endian: the low bytes are the narrower integer
  if (d == CTL_DTYPE_BOOL) *p = i != 0;
}

// The smallest step `from` can take at magnitude |v| (0 when it has none there).
Wide source_step(ctl_dtype from, Wide v) {
  if (!is_float(from)) return 1;
  const FloatFormat f = format_of(from);
  int exponent = 0;
  std::frexp(v, &exponent);  // v = m 2^exponent, m in [0.5, 1)
  return std::ldexp(Wide{1}, std::max(exponent - 1, f.min_exponent) - f.precision + 1);
}

// Values of `from` around the roundings to float dtype `to`.
void float_target_values(ctl_dtype from, ctl_dtype to, std::set<Wide>* out) {
  const FloatFormat t = format_of(to);
  auto near = [&](Wide center, Wide limit) {
    // center, and center plus or minus steps below `limit` (half the target's ulp there):
    // the source's own smallest step, and steps an f32 (24 bits) or f64 (53 bits)
    // intermediate drops.
    out->insert(center);
    int exponent = 0;
    std::frexp(center, &exponent);
    for (Wide step : {source_step(from, center), limit / 2, std::ldexp(Wide{1}, exponent - 26),
                      std::ldexp(Wide{1}, exponent - 30), std::ldexp(Wide{1}, exponent - 55),
                      std::ldexp(Wide{1}, exponent - 63)}) {
      if (step > 0 && step < limit) {
        out->insert(center + step);
        out->insert(center - step);
      }
    }
  };
  // Halfway cases in binades across the target's range: after an even last bit (2^e) and
  // after an odd one (2^e + ulp).
  for (int e : {0, 1, 5, 10, 11, 12, 15, 23, 24, 25, 30, 31, 32, 40, 52, 53, 54, 62, 63, 64, 100, 127, 500, 1023,
                -1, -5, -13, -14, -24, -100, -125, -126, -500, -1022}) {
    if (e < t.min_exponent || e > t.max_exponent) continue;
    const Wide ulp = std::ldexp(Wide{1}, e - t.precision + 1);
    for (Wide start : {std::ldexp(Wide{1}, e), std::ldexp(Wide{1}, e) + ulp}) near(start + ulp / 2, ulp / 2);
  }
  // The overflow edge: the largest finite value, halfway past it (which rounds to infinity),
  // and one ulp past it.
  const Wide top_ulp = std::ldexp(Wide{1}, t.max_exponent - t.precision + 1);
  const Wide largest = std::ldexp(Wide{2}, t.max_exponent) - top_ulp;
  out->insert(largest);
  near(largest + top_ulp / 2, top_ulp / 2);
  out->insert(largest + top_ulp);
  // The subnormal edge: the smallest subnormal, half of it (a tie that rounds to 0), one
  // and a half (a tie that rounds up to two), and the largest subnormal's tie with the
  // smallest normal.
  const Wide tiny = std::ldexp(Wide{1}, t.min_exponent - t.precision + 1);
  out->insert(tiny);
  near(tiny / 2, tiny / 2);
  near(tiny * 3 / 2, tiny / 2);
  near(std::ldexp(Wide{1}, t.min_exponent) - tiny / 2, tiny / 2);
}

// Values of `from` around the conversion to integer dtype `to`.
void integer_target_values(ctl_dtype from, ctl_dtype to, std::set<Wide>* out) {
  Wide low = 0, high = 0;
  integer_range(to, &low, &high);
  for (Wide edge : {low, high, low - 1, high + 1}) {
    out->insert(edge);
    // Just inside and outside the edge, as near as the source can say.
    const Wide step = source_step(from, edge);
    for (Wide s : {step, step / 2, Wide{0.5}, Wide{0.25}}) {
      out->insert(edge + s);
      out->insert(edge - s);
    }
  }
  if (is_float(from)) {
    // Truncation toward zero, and what saturates.
    for (Wide v : {0.25L, 0.5L, 0.75L, 0.999L, 1.5L, 2.5L, 2.75L, 1e30L}) {
      out->insert(v);
      out->insert(-v);
    }
  } else {
    // Wrap-around from a wider integer: bits past the target's width are dropped.
    for (Wide v : {256.0L + 3, 65536.0L + 7, 4294967296.0L + 5, 1099511627776.0L + 129}) {
      out->insert(v);
      out->insert(-v);
    }
  }
}

std::vector<unsigned char> rounding_values(ctl_dtype from, ctl_dtype to, size_t* count) {
  std::set<Wide> candidates = {0.0L, 1.0L, -1.0L};
  if (to == CTL_DTYPE_BOOL) {
    candidates.insert({0.5L, -0.25L, 256.0L, 4294967296.0L});
  } else if (is_float(to)) {
    float_target_values(from, to, &candidates);
  } else {
    integer_target_values(from, to, &candidates);
  }
  // The source's own extremes and, for a float source, its smallest subnormal.
  Wide low = 0, high = 0;
  if (is_float(from)) {
    const FloatFormat f = format_of(from);
    high = std::ldexp(Wide{2}, f.max_exponent) - std::ldexp(Wide{1}, f.max_exponent - f.precision + 1);
    low = -high;
    candidates.insert(std::ldexp(Wide{1}, f.min_exponent - f.precision + 1));
  } else {
    integer_range(from, &low, &high);
  }
  candidates.insert({low, high});
  std::vector<Wide> values;
  for (Wide v : candidates) {
    if (holds(from, v)) values.push_back(v);
    if (v != 0 && holds(from, -v) && !candidates.count(-v)) values.push_back(-v);
  }
  const size_t size = ctl_dtype_size(from);
  std::vector<unsigned char> bytes(values.size() * size + (is_float(from) ? 4 * size : 0));
  for (size_t i = 0; i < values.size(); ++i) store_exact(bytes.data() + i * size, from, values[i]);
  if (is_float(from)) {
    // -0, ±inf and NaN, which the set above cannot hold apart or at all.
    unsigned char* p = bytes.data() + values.size() * size;
    store(p, from, -0.0);
    store(p + size, from, INFINITY);
    store(p + 2 * size, from, -INFINITY);
    store(p + 3 * size, from, std::nan(""));
  }
  *count = bytes.size() / size;
  return bytes;
}

}  // namespace

void cast_rounding_cases(Catalog& cat, ctl_dtype from, ctl_dtype to) {
  if (from == to) return;  // a copy: the other cast cases cover it
  size_t count = 0;
  const std::vector<unsigned char> bytes = rounding_values(from, to, &count);
  std::string what = is_float(to)            ? "halfway cases, their neighbours one source step away, and the "
                                               "overflow and subnormal edges"
                     : to == CTL_DTYPE_BOOL  ? "zeros, signs, NaN and values past every narrower width"
                     : is_float(from)        ? "truncation and saturation edges, NaN and ±inf"
                                             : "range edges and wrap-around";
  cat.add_named(CTL_OP_CAST, {from, to}, std::string("rounding_") + ctl_dtype_name(to),
                std::to_string(count) + " values of " + ctl_dtype_name(from) + " to " + ctl_dtype_name(to) + ": " +
                    what + " (rounded once, docs/ops.md)",
                [=](Harness& h) {
                  Operand x = h.input_bytes(from, {static_cast<int64_t>(count)}, bytes);
                  ctl_cast_attrs attrs{CTL_CAST_ATTRS_STRUCT_SIZE, to};
                  h.run(CTL_OP_CAST, {&x}, &attrs, 1, {Tol::kExact});
                });
}

}  // namespace catalyst::conformance
