// tolerance.cpp — see tolerance.h for the bounds and the reasons behind them.
#include "tolerance.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "values.h"

namespace catalyst::conformance {

const char* tol_name(Tol kind) {
  switch (kind) {
    case Tol::kExact:
      return "exact";
    case Tol::kArith:
      return "one rounding";
    case Tol::kTranscendental:
      return "transcendental";
    case Tol::kSum:
      return "sum of n terms";
    case Tol::kRowNorm:
      return "row normalisation";
    case Tol::kNormal:
      return "normal random";
  }
  return "?";
}

double allowed_error(const Tolerance& tol, ctl_dtype d, double expected, size_t element) {
  if (tol.kind == Tol::kExact) return 0;
  const double u = unit_roundoff(d), ua = accumulator_roundoff(d);
  const double ae = std::fabs(expected);
  const bool narrow = d == CTL_DTYPE_F16 || d == CTL_DTYPE_BF16;
  double t = smallest_normal(d);  // flushed subnormal results (see tolerance.h)
  switch (tol.kind) {
    case Tol::kArith:
      t += 2 * u * ae;
      break;
    case Tol::kTranscendental:
      t += narrow ? 2 * u * ae + 2 * u : 8 * u * ae + 32 * u;
      break;
    case Tol::kSum: {
      const double s = tol.scale.empty() || element >= tol.scale.size() ? ae : tol.scale[element];
      t += (tol.n + 2) * ua * s + (narrow ? 2 * u * ae : 0);
      break;
    }
    case Tol::kRowNorm: {
      // S defaults to 1, the size of a normalised value (see tolerance.h).
      const double s = tol.scale.empty() || element >= tol.scale.size() ? 1 : tol.scale[element];
      t += 4 * (tol.n + 8) * ua * (s + ae) + (narrow ? 2 * u * ae : 0);
      break;
    }
    case Tol::kNormal:
      t += 24 * u * (1 + ae);
      break;
    case Tol::kExact:
      break;
  }
  return t;
}

UlpBound ulp_bound(ctl_op_id op, ctl_dtype d) {
  const bool narrow = d == CTL_DTYPE_F16 || d == CTL_DTYPE_BF16;
  const bool f64 = d == CTL_DTYPE_F64;
  UlpBound b;
  switch (op) {
    case CTL_OP_EXP:
    case CTL_OP_LOG:
      b.ulps = 3;
      break;
    case CTL_OP_SQRT:
      b.ulps = f64 ? 0.5 : 3;
      break;
    case CTL_OP_RSQRT:
      b.ulps = 2;
      break;
    case CTL_OP_RECIPROCAL:
      b.ulps = f64 ? 0.5 : 2.5;
      break;
    case CTL_OP_TANH:
      b.ulps = 5;
      break;
    case CTL_OP_SIN:
    case CTL_OP_COS:
      b.ulps = 4;
      break;
    case CTL_OP_POW:
      b.ulps = 16;
      break;
    case CTL_OP_SIGMOID:
    case CTL_OP_SILU:
      b.ulps = 8;
      break;
    case CTL_OP_GELU:
      b.ulps = 18;
      b.argument_roundings = 2;
      break;
    case CTL_OP_GELU_TANH:
      b.ulps = 8;
      b.argument_roundings = 6;
      break;
    case CTL_OP_GELU_BACKWARD:
      b.ulps = 1;
      b.term_ulps = 18;
      b.argument_roundings = 2;
      break;
    case CTL_OP_GELU_TANH_BACKWARD:
      b.ulps = 1;
      b.term_ulps = 12;
      b.argument_roundings = 6;
      break;
    default:
      b.ulps = 0;
      break;
  }
  if (narrow) b.ulps = 1;
  b.ulps += 1.0 / 256;  // the oracle's own error
  return b;
}

namespace {

// Significand bits (with the implicit one) and the smallest normal exponent of each float.
void float_format(ctl_dtype d, int* precision, int* min_exponent, int* max_exponent) {
  switch (d) {
    case CTL_DTYPE_F64:
      *precision = 53, *min_exponent = -1022, *max_exponent = 1023;
      return;
    case CTL_DTYPE_F16:
      *precision = 11, *min_exponent = -14, *max_exponent = 15;
      return;
    case CTL_DTYPE_BF16:
      *precision = 8, *min_exponent = -126, *max_exponent = 127;
      return;
    default:
      *precision = 24, *min_exponent = -126, *max_exponent = 127;
      return;
  }
}

}  // namespace

long double ulp_of(ctl_dtype d, long double v) {
  int p = 0, emin = 0, emax = 0;
  float_format(d, &p, &emin, &emax);
  int e = 0;
  std::frexp(std::fabs(v), &e);  // |v| in [2^(e-1), 2^e)
  return std::ldexp(1.0L, std::min(std::max(e - 1, emin), emax) - p + 1);
}

long double overflow_threshold(ctl_dtype d) {
  int p = 0, emin = 0, emax = 0;
  float_format(d, &p, &emin, &emax);
  return std::ldexp(1.0L, emax + 1);
}

namespace {

std::string number(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.9g", v);
  return buffer;
}

}  // namespace

Comparison compare_elements(const std::vector<unsigned char>& got_bytes, const std::vector<unsigned char>& exp_bytes,
                            ctl_dtype d, const Tolerance& tol) {
  Comparison result;
  const size_t size = ctl_dtype_size(d);
  result.total = got_bytes.size() / size;
  double worst_excess = -1;
  for (size_t i = 0; i < result.total; ++i) {
    const unsigned char* gp = got_bytes.data() + i * size;
    const unsigned char* ep = exp_bytes.data() + i * size;
    std::string why;
    double excess = 0;
    const double g = load(gp, d), e = load(ep, d);
    if (!is_float(d)) {
      if (load_int(gp, d) != load_int(ep, d)) why = "integers differ", excess = 1e300;
    } else if (std::isnan(e) || std::isnan(g)) {
      if (std::isnan(e) != std::isnan(g)) why = std::isnan(e) ? "expected NaN" : "unexpected NaN", excess = 1e300;
    } else if (std::isinf(e) || std::isinf(g)) {
      if (g != e) why = std::isinf(e) ? "expected an infinity of this sign" : "unexpected infinity", excess = 1e300;
    } else if (tol.kind == Tol::kExact) {
      if (std::memcmp(gp, ep, size) != 0) {
        why = g == e ? "signed zero differs (exact op)" : "not bit-identical (exact op)";
        excess = std::fabs(g - e) + 1e-300;
      }
    } else {
      const double t = allowed_error(tol, d, e, i);
      const double diff = std::fabs(g - e);
      if (!(diff <= t)) {  // a NaN bound (a NaN scale) fails rather than passing silently
        why = "differs by " + number(diff) + ", tolerance (" + tol_name(tol.kind) + ") " + number(t);
        excess = diff / t;
      } else if (tol.kind == Tol::kArith && e == 0 && g == 0 && std::signbit(e) != std::signbit(g)) {
        why = "signed zero differs", excess = 1e-300;
      }
    }
    if (why.empty()) continue;
    ++result.bad;
    if (excess > worst_excess) {
      worst_excess = excess;
      result.worst = {i, e, g, why, excess};
    }
  }
  return result;
}

}  // namespace catalyst::conformance
