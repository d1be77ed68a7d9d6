// values.h — host-side element values of every dtype: loading and storing one element,
// the dtype's rounding constants, and the random inputs cases are made of.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "catalyst.h"

namespace catalyst::conformance {

bool is_float(ctl_dtype dtype);
// The required dtypes of the op set (DESIGN.md): what the core level is made of.
bool is_required_dtype(ctl_dtype dtype);

// One element at p, widened exactly (f16/bf16/f32 fit in a double; i64 may round, use
// load_int for exact integer comparison).
double load(const unsigned char* p, ctl_dtype dtype);
int64_t load_int(const unsigned char* p, ctl_dtype dtype);
// Stores v rounded once to the dtype (integers: v must be in range).
void store(unsigned char* p, ctl_dtype dtype, double v);

double unit_roundoff(ctl_dtype dtype);         // 2^-p: f32 2^-24, f64 2^-53, f16 2^-11, bf16 2^-8
double accumulator_roundoff(ctl_dtype dtype);  // f64 for f64, else f32 (a device may sum f16 in f32)
double smallest_subnormal(ctl_dtype dtype);
double smallest_normal(ctl_dtype dtype);

// The distributions inputs are drawn from.
enum class Values {
  kGeneral,   // floats in [-4, 4] with NaN, ±inf, ±0, ±1 and subnormals mixed in; integers in [-20, 20]
  kFinite,    // floats in [-2, 2], no specials (sums, matmul, norms)
  kPositive,  // floats in (0, 8] with specials (log, sqrt, rsqrt)
  kSmallInt,  // integers in [-3, 3], floats in [-3, 3] (pow exponents and bases)
  kIndex,     // indices in [-7, 7): in range, negative and out of range (gather, scatter_add)
};
std::vector<unsigned char> random_values(ctl_dtype dtype, int64_t count, Values kind, std::mt19937_64& rng);

}  // namespace catalyst::conformance
