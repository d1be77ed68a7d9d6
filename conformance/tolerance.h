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
//    and one or two transcendental steps: 4 (n + 8) u_acc (1 + |e|) plus 2u|e|.
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
  std::vector<double> scale;  // kSum: S per output element (empty: |expected|)
};

// The allowed |got - expected| for one element.
double allowed_error(const Tolerance& tol, ctl_dtype dtype, double expected, size_t element);

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
