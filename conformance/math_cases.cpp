// math_cases.cpp — the ulp sweep: every elementwise transcendental, in every float dtype,
// over its whole domain, measured in ulps against the exact value, as the Khronos CTS
// math tests measure OpenCL's built-ins.
//
// The numeric cases (numeric_cases.cpp) compare random arguments in [-4, 4] with the
// reference kernels under a bound with an absolute floor, which let a tanh that returned 0
// for |x| <= 1e-8 pass. Here the arguments are every binade of the dtype from the smallest
// subnormal to the largest finite value, both signs (f16 and bf16: all 65536 values), a
// dense grid over the range where exp and its relatives leave the dtype's range, the edges
// of that range, and ±0, ±inf, NaN; the oracle is the function itself in long double (64
// significand bits), written without cancellation; the bound is in ulps with no absolute
// floor (tolerance.h gives each bound and why). Each op and dtype is swept twice: with a
// contiguous input (where a plugin runs its vector code) and with a strided one (where it
// typically runs scalar code). The reference kernels are swept too, in the same case: a
// failure there is reported as the suite's own.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "case.h"
#include "dispatch.h"
#include "numeric_harness.h"
#include "tolerance.h"
#include "values.h"

namespace catalyst::conformance {
namespace {

const ctl_op_id kSwept[] = {CTL_OP_EXP,  CTL_OP_LOG,       CTL_OP_SQRT, CTL_OP_RSQRT, CTL_OP_TANH, CTL_OP_SIGMOID,
                            CTL_OP_GELU, CTL_OP_GELU_TANH, CTL_OP_SILU, CTL_OP_SIN,   CTL_OP_COS,  CTL_OP_RECIPROCAL};

// e^v / (1 + e^v) below 0, 1 / (1 + e^-v) above: no overflow, no cancellation.
long double sigmoid(long double v) {
  if (v < 0) {
    const long double e = std::exp(v);
    return e / (1 + e);
  }
  return 1 / (1 + std::exp(-v));
}

// The two gelu derivatives, in docs/ops.md's forms without cancellation, as the sum of
// their two terms (the bound allows roundings relative to the terms' size: near the
// derivative's zero at x = -0.75 they cancel in any formula). gelu': Phi(x) = 0.5 erfc(-x /
// sqrt(2)) and x phi(x). gelu_tanh': s = sigmoid(2z) and 2 k x (1 + 3c x^2) s (1 - s), z =
// k (x + c x^3), with s (1 - s) = e / (1 + e)^2, e = exp(-2|z|): no overflow, no 1 - t^2.
// Where e underflows (|x| past about 54 in long double) the second term is x * 0, so x =
// +-inf gives NaN, as docs/ops.md says, and a finite x no NaN from inf * 0.
struct Terms {
  long double first = 0, second = 0;
};
Terms gelu_derivative_terms(ctl_op_id op, long double x) {
  if (op == CTL_OP_GELU_BACKWARD) {
    const long double phi = std::exp(-0.5L * x * x) * 0.398942280401432677939946059934381868L;
    return {0.5L * std::erfc(-x * 0.707106781186547524400844362104849039L), x * phi};
  }
  constexpr long double k = 0.797884560802865355879892119868763737L, c = 0.044715L;
  const long double z = k * (x + c * x * x * x);
  const long double e = std::exp(-2 * std::fabs(z)), r = 1 / (1 + e);
  const long double s = z >= 0 ? r : e * r;
  if (e == 0) return {s, x - x};
  return {s, 2 * k * x * (1 + 3 * c * x * x) * (e * r * r)};
}

bool is_gelu_backward(ctl_op_id op) {
  return op == CTL_OP_GELU_BACKWARD || op == CTL_OP_GELU_TANH_BACKWARD;
}

// docs/ops.md's definitions, exactly (to long double's precision). gelu's
// 0.5 x (1 + erf(x / sqrt(2))) is 0.5 x erfc(-x / sqrt(2)), and gelu_tanh's
// 0.5 x (1 + tanh(z)) is x sigmoid(2z): the same functions without cancellation. At
// x = -inf these give NaN (-inf * 0), as the formulas do.
long double exact(ctl_op_id op, long double x) {
  switch (op) {
    case CTL_OP_EXP:
      return std::exp(x);
    case CTL_OP_LOG:
      return std::log(x);
    case CTL_OP_SQRT:
      return std::sqrt(x);
    case CTL_OP_RSQRT:
      return 1 / std::sqrt(x);
    case CTL_OP_TANH:
      return std::tanh(x);
    case CTL_OP_SIGMOID:
      return sigmoid(x);
    case CTL_OP_GELU:
      return 0.5L * x * std::erfc(-x * 0.707106781186547524400844362104849039L);
    case CTL_OP_GELU_TANH:
      return x * sigmoid(2 * 0.797884560802865355879892119868763737L * (x + 0.044715L * x * x * x));
    case CTL_OP_SILU:
      return x * sigmoid(x);
    case CTL_OP_SIN:
      return std::sin(x);
    case CTL_OP_COS:
      return std::cos(x);
    case CTL_OP_RECIPROCAL:
      return 1 / x;
    default:
      return std::numeric_limits<long double>::quiet_NaN();
  }
}

// The exact result for the inputs a and b: pow(a, b) (powl follows C's Annex F for the
// specials: pow(x, 0) = 1 even for NaN, pow(1, y) = 1, pow(-1, +-inf) = 1, ..., as OpenCL's
// pow does); for the gelu derivatives dy = a times the derivative at x = b; else f(a).
long double exact_at(ctl_op_id op, long double a, long double b) {
  if (op == CTL_OP_POW) return std::pow(a, b);
  if (is_gelu_backward(op)) {
    const Terms t = gelu_derivative_terms(op, b);
    return a * (t.first + t.second);
  }
  return exact(op, a);
}

// The argument that the bound's argument roundings apply to: x (b) for the derivatives.
long double function_argument(ctl_op_id op, long double a, long double b) {
  return is_gelu_backward(op) ? b : a;
}

// |x f'(x) / f(x)| by a central difference in x (the function's argument): how much a
// relative error in the argument grows.
double condition(ctl_op_id op, long double a, long double b, long double fx) {
  const long double x = function_argument(op, a, b);
  if (x == 0 || fx == 0 || !std::isfinite(x)) return 0;
  const long double h = std::fabs(x) * 1e-9L;
  const bool second = is_gelu_backward(op);
  const long double up = second ? exact_at(op, a, x + h) : exact_at(op, x + h, b);
  const long double down = second ? exact_at(op, a, x - h) : exact_at(op, x - h, b);
  return static_cast<double>(std::fabs(x * (up - down) / (2 * h) / fx));
}

// The size of the terms whose sum the result is (|dy| (|first| + |second|) for the gelu
// derivatives), or 0 for a function that is not such a sum.
long double terms_magnitude(ctl_op_id op, long double a, long double b) {
  if (!is_gelu_backward(op)) return 0;
  const Terms t = gelu_derivative_terms(op, b);
  return std::fabs(a) * (std::fabs(t.first) + std::fabs(t.second));
}

// The bit pattern of element i of a buffer of the dtype.
uint64_t bits_at(const std::vector<unsigned char>& bytes, ctl_dtype d, size_t i) {
  uint64_t b = 0;
  std::memcpy(&b, bytes.data() + i * ctl_dtype_size(d), ctl_dtype_size(d));
  return b;
}

// The arguments, as bytes of the dtype. Fixed (not from the run's seed): a sweep is the
// same on every run.
std::vector<unsigned char> sweep_arguments(ctl_dtype d) {
  const size_t size = ctl_dtype_size(d);
  std::vector<unsigned char> out;
  auto push_bits = [&](uint64_t b) {
    const size_t at = out.size();
    out.resize(at + size);
    std::memcpy(out.data() + at, &b, size);
  };
  auto push = [&](double v) {
    const size_t at = out.size();
    out.resize(at + size);
    store(out.data() + at, d, v);
  };
  if (size == 2) {  // f16, bf16: every value
    for (uint32_t b = 0; b < 65536; ++b) push_bits(b);
    return out;
  }
  const bool f64 = d == CTL_DTYPE_F64;
  const int mantissa_bits = f64 ? 52 : 23, exponents = f64 ? 2047 : 255, per_binade = f64 ? 8 : 32;
  const uint64_t mantissa_mask = (uint64_t{1} << mantissa_bits) - 1;
  std::mt19937_64 rng(0x5eed);
  for (int e = 0; e < exponents; ++e) {
    for (int k = 0; k < per_binade; ++k) {
      const uint64_t m = k == 0 ? 0 : k == 1 ? mantissa_mask : (rng() & mantissa_mask);
      for (uint64_t sign : {uint64_t{0}, uint64_t{1}}) {
        push_bits(sign << (size * 8 - 1) | static_cast<uint64_t>(e) << mantissa_bits | m);
      }
    }
  }
  // Where exp, sigmoid, silu and the gelus leave the range (f32 up to +-128, f64 +-1024).
  const double reach = f64 ? 1024 : 128, step = f64 ? 1.0 / 8 : 1.0 / 64;
  for (double v = -reach; v <= reach; v += step) push(v);
  // The edges themselves, and 8 neighbours on each side.
  const double max = f64 ? std::numeric_limits<double>::max() : std::numeric_limits<float>::max();
  const double min = f64 ? std::numeric_limits<double>::min() : std::numeric_limits<float>::min();
  const double sub = f64 ? std::numeric_limits<double>::denorm_min() : std::numeric_limits<float>::denorm_min();
  for (double edge : {std::log(max), std::log(min), std::log(sub), 1e-30, 1e-8, 1e-7, 1e-6}) {
    for (double sign : {1.0, -1.0}) {
      double v = sign * edge;
      if (!f64) v = static_cast<float>(v);
      for (int k = 0; k < 8; ++k)
        v = f64 ? std::nextafter(v, -INFINITY) : std::nextafter(static_cast<float>(v), -INFINITY);
      for (int k = 0; k < 17; ++k) {
        push(v);
        v = f64 ? std::nextafter(v, INFINITY) : std::nextafter(static_cast<float>(v), INFINITY);
      }
    }
  }
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (double v : {0.0, -0.0, inf, -inf, nan, max, -max, min, -min, sub, -sub}) push(v);
  return out;
}

// pow's arguments: every base of a set crossed with every exponent of another. Bases: each
// binade of the dtype, both signs, its first value and one random one (f16, bf16: every
// 16th bit pattern), and the specials. Exponents: those C's Annex F (and OpenCL's pow
// tests) treat apart - +-0, +-1, +-inf, NaN, odd and even integers, the largest odd
// integer below 2^p and the next even ones, halves, thirds - and a few large and random
// ones, each rounded to the dtype.
void pow_grid(ctl_dtype d, std::vector<unsigned char>* bases, std::vector<unsigned char>* exponents) {
  const size_t size = ctl_dtype_size(d);
  std::vector<unsigned char> b;
  auto push_bits = [&](std::vector<unsigned char>& out, uint64_t bits) {
    const size_t at = out.size();
    out.resize(at + size);
    std::memcpy(out.data() + at, &bits, size);
  };
  auto push = [&](std::vector<unsigned char>& out, double v) {
    const size_t at = out.size();
    out.resize(at + size);
    store(out.data() + at, d, v);
  };
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  std::mt19937_64 rng(0x90e);
  if (size == 2) {
    // Signaling NaNs left out: IEEE 754 lets pow(sNaN, 0) be NaN (glibc's is), while the
    // oracle, which reads every NaN through a double, sees a quiet one and expects 1.
    const bool f16 = d == CTL_DTYPE_F16;
    const uint32_t exponent = f16 ? 0x7c00 : 0x7f80, mantissa = f16 ? 0x3ff : 0x7f, quiet = f16 ? 0x200 : 0x40;
    for (uint32_t bits = 0; bits < 65536; bits += 16) {
      const uint32_t v = bits | (bits >> 4 & 0xF);
      if ((v & exponent) == exponent && (v & mantissa) != 0 && !(v & quiet)) continue;
      push_bits(b, v);
    }
  } else {
    const bool f64 = d == CTL_DTYPE_F64;
    const int mantissa_bits = f64 ? 52 : 23, exponent_count = f64 ? 2047 : 255;
    const uint64_t mask = (uint64_t{1} << mantissa_bits) - 1;
    for (int e = 0; e < exponent_count; e += f64 ? 2 : 1) {
      for (uint64_t m : {uint64_t{0}, rng() & mask}) {
        for (uint64_t sign : {uint64_t{0}, uint64_t{1}}) {
          push_bits(b, sign << (size * 8 - 1) | static_cast<uint64_t>(e) << mantissa_bits | m);
        }
      }
    }
  }
  for (double v : {0.0, -0.0, 1.0, -1.0, inf, -inf, nan, 0.5, -0.5, 2.0, -2.0, 10.0, -10.0}) push(b, v);
  const int p = d == CTL_DTYPE_F64 ? 53 : d == CTL_DTYPE_F32 ? 24 : d == CTL_DTYPE_F16 ? 11 : 8;
  const double odd = std::ldexp(1.0, p) - 1;  // the largest odd integer of the dtype
  std::vector<double> ys = {
      0.0,    -0.0, 1.0,   -1.0,    inf,      -inf, nan,  2.0, -2.0, 3.0,         -3.0,           0.5,
      -0.5,   1.5,  -1.5,  1 / 3.0, -1 / 3.0, 7.0,  -7.0, odd, -odd, 2 * odd + 2, -(2 * odd + 2), 100.5,
      -100.5, 1e-3, -1e-3, 1e5,     -1e5,     1e30, -1e30};
  for (int k = 0; k < 6; ++k) ys.push_back(std::ldexp(std::uniform_real_distribution<double>(-1, 1)(rng), k * 3));
  const size_t base_count = b.size() / size;
  for (double y : ys) {
    bases->insert(bases->end(), b.begin(), b.end());
    for (size_t i = 0; i < base_count; ++i) push(*exponents, y);
  }
}

// The gelu derivatives' inputs: x over sweep_arguments' whole domain, crossed with dy = 1
// (the derivative itself), -2.5 (a sign and an exact scale) and 0.1 (a scale that rounds,
// so dx takes one more rounding).
void derivative_grid(ctl_dtype d, std::vector<unsigned char>* dys, std::vector<unsigned char>* xs) {
  const std::vector<unsigned char> x = sweep_arguments(d);
  const size_t size = ctl_dtype_size(d), n = x.size() / size;
  for (double dy : {1.0, -2.5, 0.1}) {
    xs->insert(xs->end(), x.begin(), x.end());
    const size_t at = dys->size();
    dys->resize(at + x.size());
    for (size_t i = 0; i < n; ++i) store(dys->data() + at + i * size, d, dy);
  }
}

// The device's results for the arguments (one array per input, all of one length), from
// one op call on `device`: each input is contiguous, or (strided) every other element of a
// buffer twice as long.
std::vector<unsigned char> run_on(ctl_device* device, ctl_op_id op, ctl_dtype d,
                                  const std::vector<std::vector<unsigned char>>& arg_sets, bool strided,
                                  bool* unsupported, std::string* why) {
  const size_t size = ctl_dtype_size(d);
  const int64_t n = static_cast<int64_t>(arg_sets.front().size() / size);
  std::vector<TensorPtr> owners, inputs;
  for (const auto& args : arg_sets) {
    std::vector<unsigned char> base = args;
    if (strided) {
      base.assign(args.size() * 2, 0);
      for (int64_t i = 0; i < n; ++i) {
        std::memcpy(base.data() + 2 * i * size, args.data() + i * size, size);
        store(base.data() + (2 * i + 1) * size, d, 0.5);  // between them: a value that must not leak in
      }
    }
    const int64_t base_n = static_cast<int64_t>(base.size() / size);
    ctl_tensor* t = nullptr;
    check_ok(ctl_tensor_from_host(device, d, 1, &base_n, base.data(), base.size(), &t), "creating the sweep's input");
    TensorPtr owner(t);
    if (strided) {
      ctl_tensor* view = nullptr;
      check_ok(ctl_tensor_slice(t, 0, 0, base_n, 2, &view), "slicing the sweep's input");
      inputs.emplace_back(view);
      owners.push_back(std::move(owner));
    } else {
      inputs.push_back(std::move(owner));
    }
  }
  ctl_tensor* y = nullptr;
  check_ok(ctl_tensor_create(device, d, 1, &n, &y), "creating the sweep's output");
  TensorPtr output(y);
  std::vector<ctl_tensor*> in;
  for (const auto& t : inputs) in.push_back(t.get());
  const uint32_t count = static_cast<uint32_t>(in.size());
  ctl_tensor* out[1] = {output.get()};
  bool asked = false;
  if (ctl_status* s = query_op_support(op, count, in.data(), nullptr, 1, out, &asked)) {
    const ctl_status_code code = ctl_status_get_code(s);
    *why = std::string("op_supports: ") + ctl_status_get_message(s);
    ctl_status_free(s);
    if (code == CTL_STATUS_UNSUPPORTED) {
      *unsupported = true;
      return {};
    }
    throw CaseFailure(std::string("op_supports failed with ") + ctl_status_code_name(code) + ": " + *why);
  }
  if (ctl_status* s = ctl_op_run_into(op, count, in.data(), nullptr, 1, out)) {
    const ctl_status_code code = ctl_status_get_code(s);
    *why = std::string("op_execute: ") + ctl_status_get_message(s);
    ctl_status_free(s);
    if (code == CTL_STATUS_UNSUPPORTED && !asked) {
      *unsupported = true;
      return {};
    }
    throw CaseFailure(std::string(ctl_op_name(op)) + " failed: " + *why);
  }
  std::vector<unsigned char> result(static_cast<size_t>(n) * size);
  check_ok(ctl_tensor_to_host(output.get(), result.data(), result.size()), "reading the sweep's results");
  return result;
}

// How far past its bound one result is, in ulps (0: within it), or +inf for a wrong
// special (NaN, infinity, sign of zero). a and b are the op's inputs (b only for a binary op).
double excess(ctl_op_id op, ctl_dtype d, const UlpBound& bound, bool binary, long double a, long double b,
              long double got, double* ulps) {
  const long double e = exact_at(op, a, b);
  *ulps = 0;
  if (std::isnan(e) || std::isnan(got)) return std::isnan(e) == std::isnan(got) ? 0 : INFINITY;
  if (std::isinf(e)) return got == e ? 0 : INFINITY;  // an exact infinity (inf input, log(0), 1/0)
  // A gelu derivative is never 0 for a finite x (its one zero, near -0.75, is irrational):
  // an exact 0 there is long double's underflow (|x| past 54 or 151), a tiny value of either
  // sign, which the flush rule below judges.
  const bool underflowed = is_gelu_backward(op) && e == 0 && a != 0 && std::isfinite(a) && std::isfinite(b);
  if (e == 0 && !underflowed) return got == 0 && std::signbit(got) == std::signbit(e) ? 0 : INFINITY;
  // Beyond the largest finite value, an infinity and the next power of two are one value.
  const long double top = overflow_threshold(d);
  const long double ec = std::fabs(e) > top ? std::copysign(top, e) : e;
  const long double gc = std::isinf(got) ? std::copysign(top, got) : got;
  const long double diff = std::fabs(gc - ec);
  const long double ulp = ulp_of(d, ec);
  *ulps = static_cast<double>(diff / ulp);
  const long double min_normal = smallest_normal(d);
  if (std::fabs(e) < min_normal && diff <= min_normal) return 0;  // flushed to zero
  const double u_compute = d == CTL_DTYPE_F64 ? 0x1p-53 : 0x1p-24;
  double allowed = bound.ulps;
  if (bound.argument_roundings > 0) {
    allowed += bound.argument_roundings * condition(op, a, b, e) * u_compute * static_cast<double>(std::fabs(ec) / ulp);
  }
  if (bound.term_ulps > 0) {
    allowed += bound.term_ulps * 2 * u_compute * static_cast<double>(terms_magnitude(op, a, b) / ulp);
  }
  if (*ulps <= allowed) return 0;
  // A subnormal argument that the device read as zero (no denormals, as OpenCL allows).
  auto read_as_zero = [](long double v) { return v != 0 && std::isfinite(v) ? std::copysign(0.0L, v) : v; };
  if ((a != 0 && std::fabs(a) < min_normal) || (binary && b != 0 && std::fabs(b) < min_normal)) {
    const long double a0 = std::fabs(a) < min_normal ? read_as_zero(a) : a;
    const long double b0 = std::fabs(b) < min_normal ? read_as_zero(b) : b;
    const long double e0 = exact_at(op, a0, b0);
    if (got == e0 || (std::isfinite(e0) && e0 != 0 && std::fabs(got - e0) <= bound.ulps * ulp_of(d, e0))) return 0;
  }
  return *ulps - allowed;
}

std::string hex_bits(uint64_t b, size_t size) {
  std::ostringstream o;
  o << "0x" << std::hex;
  o.width(static_cast<int>(size * 2));
  o.fill('0');
  o << b;
  return o.str();
}

// Checks one device's results; returns "" or the failure in words. firsts holds the op's
// first input, seconds its second (pow's exponents, the derivatives' x) or is null.
std::string judge(ctl_op_id op, ctl_dtype d, const std::vector<unsigned char>& firsts,
                  const std::vector<unsigned char>* seconds, const std::vector<unsigned char>& got, const char* who,
                  const char* layout) {
  const size_t size = ctl_dtype_size(d), n = firsts.size() / size;
  const UlpBound bound = ulp_bound(op, d);
  const bool binary = seconds != nullptr;
  size_t bad = 0, worst_at = 0;
  double worst_excess = 0, worst_ulps = 0;
  for (size_t i = 0; i < n; ++i) {
    const long double a = load(firsts.data() + i * size, d), g = load(got.data() + i * size, d);
    const long double b = binary ? load(seconds->data() + i * size, d) : 0;
    double ulps = 0;
    const double over = excess(op, d, bound, binary, a, b, g, &ulps);
    if (over <= 0) continue;
    ++bad;
    if (over > worst_excess) worst_excess = over, worst_at = i, worst_ulps = ulps;
  }
  if (bad == 0) return "";
  const long double a = load(firsts.data() + worst_at * size, d), g = load(got.data() + worst_at * size, d);
  const long double b = binary ? load(seconds->data() + worst_at * size, d) : 0;
  const bool derivative = is_gelu_backward(op);
  std::ostringstream o;
  o.precision(17);
  o << ctl_op_name(op) << " " << ctl_dtype_name(d) << " on " << who << ", " << layout << ": " << bad << " of " << n
    << " results past the bound of " << bound.ulps << " ulp";
  if (bound.term_ulps > 0) o << " (+ " << bound.term_ulps << " ulp of the terms)";
  if (bound.argument_roundings > 0) o << " (+ " << bound.argument_roundings << " argument roundings)";
  o << "; worst at " << (derivative ? "dy" : "x") << " = " << static_cast<double>(a) << " ("
    << hex_bits(bits_at(firsts, d, worst_at), size) << ")";
  if (binary) {
    o << ", " << (derivative ? "x" : "y") << " = " << static_cast<double>(b) << " ("
      << hex_bits(bits_at(*seconds, d, worst_at), size) << ")";
  }
  o << ": expected " << static_cast<double>(exact_at(op, a, b)) << ", got " << static_cast<double>(g);
  if (std::isinf(worst_excess)) {
    o << " (a wrong special value: NaN, infinity or sign of zero)";
  } else {
    o << " (" << worst_ulps << " ulp off)";
  }
  return o.str();
}

void sweep(CaseContext& ctx, ctl_op_id op, ctl_dtype d, bool strided) {
  if (!(ctx.dtype_mask & CTL_DTYPE_BIT(d))) {
    throw CaseUnsupported(std::string("the device does not claim dtype ") + ctl_dtype_name(d));
  }
  std::vector<std::vector<unsigned char>> sets;
  if (op == CTL_OP_POW) {
    sets.resize(2);
    pow_grid(d, &sets[0], &sets[1]);
  } else if (is_gelu_backward(op)) {
    sets.resize(2);
    derivative_grid(d, &sets[0], &sets[1]);
  } else {
    sets.push_back(sweep_arguments(d));
  }
  const std::vector<unsigned char>& firsts = sets[0];
  const std::vector<unsigned char>* seconds = sets.size() > 1 ? &sets[1] : nullptr;
  const char* layout = strided ? "strided input (every other element)" : "contiguous input";
  bool unsupported = false;
  std::string why;
  const auto got = run_on(ctx.device, op, d, sets, strided, &unsupported, &why);
  if (unsupported) throw CaseUnsupported(why);
  const std::string failure = judge(op, d, firsts, seconds, got, "the device", layout);
  if (!failure.empty()) throw CaseFailure(failure);
  // The reference kernels are held to the same bound: they are every other case's oracle.
  const auto ref = run_on(ctx.reference, op, d, sets, strided, &unsupported, &why);
  const std::string ref_failure =
      unsupported ? "internal: " + why : judge(op, d, firsts, seconds, ref, "the reference", layout);
  if (!ref_failure.empty()) throw CaseFailure("internal: the reference kernels fail the sweep: " + ref_failure);
  ctx.note = std::to_string(firsts.size() / ctl_dtype_size(d)) + " arguments";
}

}  // namespace

void add_math_cases(std::vector<Case>& out) {
  std::vector<ctl_op_id> swept(std::begin(kSwept), std::end(kSwept));
  swept.push_back(CTL_OP_POW);  // binary: a grid of bases and exponents (pow_grid)
  // dy and x: the whole domain of x, times a few dy (derivative_grid); training ops (ABI 1.1)
  swept.push_back(CTL_OP_GELU_BACKWARD);
  swept.push_back(CTL_OP_GELU_TANH_BACKWARD);
  for (ctl_op_id op : swept) {
    for (ctl_dtype d : {CTL_DTYPE_F32, CTL_DTYPE_F64, CTL_DTYPE_F16, CTL_DTYPE_BF16}) {
      for (bool strided : {false, true}) {
        Case c;
        c.op = ctl_op_name(op);
        c.dtype = ctl_dtype_name(d);
        c.id = c.op + "." + c.dtype + (strided ? ".ulp_sweep_strided" : ".ulp_sweep");
        c.group = c.op;
        c.level = !is_required_dtype(d) ? Level::kFull : is_gelu_backward(op) ? Level::kTraining : Level::kCore;
        c.label = std::string("ulp sweep over the whole domain, ") + (strided ? "strided input" : "contiguous input");
        c.run = [op, d, strided](CaseContext& ctx) { sweep(ctx, op, d, strided); };
        out.push_back(std::move(c));
      }
    }
  }
}

}  // namespace catalyst::conformance
