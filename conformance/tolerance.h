// tolerance.h — how close a device's result must be to the reference's, per op family and
// dtype, and the element-by-element comparison that applies it.
//
// u is the unit roundoff of the output dtype (f32 2^-24, f64 2^-53, f16 2^-11, bf16 2^-8);
// u_acc the accumulator's (f64 for f64, else f32: a device may accumulate f16, bf16 and
// f32 in f32 while the reference uses double). The bounds, and why:
//  - integers and bool: exact, always.
//  - kExact (neg, abs, relu, maximum, minimum, max, min, comparisons, where, copy, cast,
//    concat, gather, fill, arange, argmax/argmin, random_uniform): bit-identical, signed
//    zeros and subnormals included; these ops round nothing or round once from an exact value.
//  - kArith (add, sub, mul, div, sqrt, reciprocal): IEEE 754 rounds the exact result once,
//    so one ulp (2u|e|); signed zeros must match.
//  - kTranscendental (exp, log, tanh, sigmoid, gelu, silu, sin, cos, rsqrt, pow): libm-quality
//    functions are within a few ulp in f32/f64, and gelu/silu/sigmoid cancel near zero, so
//    8u|e| + 32u; f16/bf16 are computed in at least f32 and rounded once: 2u|e| + 2u.
//  - kSum (sum, mean, matmul, scatter_add with repeated indices): the classic bound for a
//    sum of n terms in any order, (n + 2) u_acc S, with S the same reduction over |x|
//    (matmul: |alpha| |a| @ |b| + |beta out| + |bias|) computed on the reference; plus
//    2u|e| for the final rounding of f16/bf16.
//  - kRowNorm (logsumexp, softmax, log_softmax, layer_norm, rms_norm): a sum over the row
//    and one or two transcendental steps: 4 (n + 8) u_acc (S + |e|) plus 2u|e|, where S is 1
//    (the size of a normalised value) unless a case gives it per element from its inputs.
//    Rows far from that size need their own S; layer_norm's rows of a large mean and a small
//    spread need it most (numeric_cases.cpp, "large_rows"). The derivation, for a device
//    computing in unit roundoff u_c (= u_acc) a row of n values x with mean m, mean
//    absolute value M = mean|x| and sigma = sqrt(var + eps):
//     - The mean, in any summation order and divided by n: |m^ - m| <= (n + 1) u_c M.
//     - Every x - m^ then carries that error whole: xh = (x - m^) / sigma is off by
//       (n + 1) u_c K with K = M / sigma, the row's conditioning (K = |m| / sigma for a
//       row of a large mean). This is the rounded mean that the plain S = 1 cannot hold:
//       f32, m = 1e4, sigma = 1e-1: K = 1e5, and even a correct device's y is 1e-3 off.
//     - The variance. Two-pass, sum((x - m^)^2) / n = var + (m^ - m)^2 to first order
//       (the cross term sums to zero), so its relative error is (n + 3) u_c plus
//       ((n + 1) u_c K)^2, second order. Welford's update instead errs by up to n K u_c
//       relative (Chan, Golub and LeVeque, 1983), first order in K. rstd = 1/sqrt(v) halves
//       either, and y = xh w carries it as a relative error of xh.
//     - So |dy| <= (n + 1) u_c K (1 + |xh|) |w| (mean, then Welford's variance, whose
//       n K u_c / 2 |xh| is below it) plus the few roundings S = 1 already holds; the mean
//       output is a sum, off by (n + 1) u_c M; rstd is off by (n + 1) u_c K rstd relative.
//       The reference (double) errs the same way in f64: the bound is taken twice, and
//       4 (n + 8) >= 2 (n + 1) holds it. The cases give S = (1 + K)(1 + |xh|)|w| + |b| for
//       y, M for the mean, (1 + K) rstd for rstd; rms_norm has no mean to subtract (its sum
//       of squares is well conditioned): S = (1 + |xh|)|w| for y, rstd for rstd, so that a
//       tiny rstd is held relative to itself.
//    A one-pass variance, E[x^2] - E[x]^2, cancels instead: its absolute error is
//    (n + 2) u_c E[x^2] ~ n u_c m^2, relative to var about n u_c K^2, so y is off by about
//    n u_c K^2 / 2 |xh|, K / 2 times the bound's conditioning term: caught wherever
//    K >> 8 (n + 8) / n. The large_rows cases use K from 1e3 to 1e4 in f32 (1e6 to 1e10 in
//    f64, about 500 and 1900 in f16, whose 11 bits allow no more) with n = 16. bf16's 8
//    bits cap K at about 2^8, where n u_c K^2 (f32 compute) is below bf16's own rounding:
//    a one-pass variance cannot be told from a correct one there, and need not be.
//  - kNormal (random_normal): Box-Muller, r cos(2 pi u2) with r = sqrt(-2 log u1), from the
//    same counter-based bits on both sides, in the output's own precision on the device
//    when it has no wider one. OpenCL lets log err by 3 ulp, cos by 4, an f32 sqrt by 3:
//    with the product's rounding, up to 18u relative on the device (NVIDIA's OpenCL was
//    seen 17u off in f64); the reference's libm in double adds up to 5u in f64: 24u(1 + |e|).
//  - The training ops (training_cases.cpp) reuse these kinds. adamw_step: kTranscendental
//    (a few roundings of O(1) values per element). cross_entropy and its backward and the
//    six *_backward ops: kSum with n and a per-element S that bound the op's own arithmetic,
//    computed on the host from the inputs (the table in conformance/README.md gives each).
// Every non-exact bound also allows an absolute error of the smallest normal number of the
// dtype: OpenCL and Vulkan let a device flush subnormal results of arithmetic to zero.
// Data movement and sign ops (kExact) must still keep subnormals.
// For every op: NaN positions must match (any NaN payload), an expected ±inf must be
// matched exactly, and an unexpected inf is wrong.
//
// The ulp sweep (math_cases.cpp) holds each elementwise transcendental to a bound in ulps
// of the output dtype at the exact value (long double, in forms without cancellation), with
// no absolute floor: the kTranscendental floor of 32u let tanh(1e-8) = 0 pass. f32 and f64
// follow the OpenCL C specification's full-profile limits (section 7.4): exp, log 3 ulp;
// sqrt 3 ulp in f32, correctly rounded (0.5) in f64; rsqrt 2; reciprocal 2.5 in f32 (as
// x / y), 0.5 in f64; tanh 5; sin, cos 4 (at every argument: range reduction included);
// pow 16 (swept over a grid of bases and exponents).
// Functions OpenCL lacks get the sum of their parts' limits: sigmoid and silu 8 (exp's 3,
// an add, OpenCL's 2.5 for the divide, a multiply), gelu 18 (erfc's 16 and two
// multiplies), gelu_tanh 8 (as sigmoid). f16 and bf16 are computed in at least f32 and
// rounded once (ops.md): 1 ulp. gelu and gelu_tanh round an inner argument before the
// function sees it (x / sqrt(2); k (x + 0.044715 x^3)) as ops.md's formulas do, which costs
// up to that many roundings of the compute precision (f32 for f32, f16, bf16) times the
// function's condition number |x f'(x) / f(x)| (about x^2 for gelu at large negative x):
// 2 and 6 roundings. A result below the dtype's smallest normal may be flushed (error up
// to the smallest normal), and a subnormal argument may be read as zero, as OpenCL allows
// a device without denormals. Every bound also allows 1/256 ulp for the oracle's error.
// gelu_backward and gelu_tanh_backward (dy times the derivative at x) are sums of two terms
// that cancel near the derivative's zero (x = -0.752), where no form computed in the
// compute precision u_c is accurate relative to the result: their bound is 1 ulp (the
// add and the product with dy) plus term_ulps of the compute precision at the size of the
// terms, term_ulps 2 u_c |dy| (|first| + |second|), plus the argument roundings. gelu':
// Phi(x) = 0.5 erfc(-x / sqrt 2) and x phi(x), each as accurate as gelu: 18, 2 argument
// roundings. gelu_tanh': s = sigmoid(2z) (8) and 2 k x (1 + 3c x^2) s (1 - s), where
// s (1 - s) = e / (1 + e)^2 takes exp's 3, an add, a divide's 2.5 and two multiplies, and
// four more multiplies follow: 12, and gelu_tanh's 6 argument roundings. Far from the zero
// the terms' size is the result's, so a form that cancels (1 + erf, 1 + tanh, 1 - tanh^2,
// exact to u_c absolute rather than relative) fails by thousands of ulps.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "catalyst.h"

namespace catalyst::conformance {

enum class Tol { kExact, kArith, kTranscendental, kSum, kRowNorm, kNormal };
const char* tol_name(Tol kind);

struct Tolerance {
  Tolerance(Tol k = Tol::kExact) : kind(k) {}  // NOLINT: implicit on purpose
  Tol kind = Tol::kExact;
  double n = 0;               // kSum / kRowNorm: length of the reduced or normalised axis
  std::vector<double> scale;  // S per output element. kSum: empty means |expected|; kRowNorm: 1
};

// The allowed |got - expected| for one element.
double allowed_error(const Tolerance& tol, ctl_dtype dtype, double expected, size_t element);

// The ulp sweep's bound for op's results in dtype (see above): `ulps` of the dtype at the
// exact value, plus `argument_roundings` roundings of the compute precision times the
// condition number.
struct UlpBound {
  double ulps = 0;
  double argument_roundings = 0;
  double term_ulps = 0;  // the gelu derivatives: ulps of the compute precision at the size of each term
};
UlpBound ulp_bound(ctl_op_id op, ctl_dtype dtype);
// One ulp of the dtype at |v| (the subnormal spacing below the smallest normal; the top
// binade's ulp past the largest finite value), and 2^(emax+1), where an infinity counts.
long double ulp_of(ctl_dtype dtype, long double v);
long double overflow_threshold(ctl_dtype dtype);

// The first elements that break the tolerance, worst first.
struct Mismatch {
  size_t element = 0;  // row-major index into the output's shape
  double expected = 0;
  double got = 0;
  std::string why;
  double excess = 0;  // how far past the tolerance (for ordering)
};
struct Comparison {
  size_t bad = 0;  // elements that differ
  size_t total = 0;
  Mismatch worst;
};
// got and expected hold the output's elements in row-major order (dtype-sized each).
Comparison compare_elements(const std::vector<unsigned char>& got, const std::vector<unsigned char>& expected,
                            ctl_dtype dtype, const Tolerance& tol);

}  // namespace catalyst::conformance
