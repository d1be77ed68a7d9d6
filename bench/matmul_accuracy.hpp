// matmul_accuracy.hpp — how far an f16 or bf16 product is from the exact product of the
// same (already rounded) inputs, measured the same way for Catalyst and for its peers.
//
// The bound is the conformance suite's for matmul (conformance/README.md, "Tolerances",
// kind "sum of n terms"): |got - e| <= (K + 2) u_acc S + 2 u |e|, with e the exact product
// (here in double), S the same product over |a| and |b|, u_acc = 2^-24 (an f32 accumulator)
// and u the output dtype's unit roundoff. A ratio of at most 1 is within the tolerance.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace catalyst::bench {

struct MatmulError {
  double max_abs_error = 0;    // the largest |got - e| over the checked elements
  double tolerance_ratio = 0;  // the largest |got - e| / bound: at most 1 is within tolerance
};

// a (M x K), b (K x N), got (M x N), row-major f32 holding the exact values the product
// was given and the values it returned. Checks `sample_rows` rows spread over M, every
// column (a full check of a 4096 product would take longer than the product).
inline MatmulError check_matmul(const std::vector<float>& a, const std::vector<float>& b, const std::vector<float>& got,
                                int64_t m, int64_t k, int64_t n, double output_unit_roundoff,
                                int64_t sample_rows = 16) {
  MatmulError result;
  const double u_acc = std::ldexp(1.0, -24);
  std::vector<double> exact(static_cast<size_t>(n)), scale(static_cast<size_t>(n));
  const int64_t rows = std::min(sample_rows, m);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t i = rows == 1 ? 0 : r * (m - 1) / (rows - 1);
    std::fill(exact.begin(), exact.end(), 0.0);
    std::fill(scale.begin(), scale.end(), 0.0);
    // Row i of a times b, one row of b at a time so that b is read in order.
    for (int64_t p = 0; p < k; ++p) {
      const double x = a[static_cast<size_t>(i * k + p)];
      const float* b_row = &b[static_cast<size_t>(p * n)];
      for (int64_t j = 0; j < n; ++j) {
        exact[static_cast<size_t>(j)] += x * b_row[j];
        scale[static_cast<size_t>(j)] += std::fabs(x) * std::fabs(b_row[j]);
      }
    }
    for (int64_t j = 0; j < n; ++j) {
      const double e = exact[static_cast<size_t>(j)];
      const double error = std::fabs(static_cast<double>(got[static_cast<size_t>(i * n + j)]) - e);
      const double bound =
          static_cast<double>(k + 2) * u_acc * scale[static_cast<size_t>(j)] + 2 * output_unit_roundoff * std::fabs(e);
      result.max_abs_error = std::max(result.max_abs_error, error);
      // NaN must not pass: a NaN error makes the ratio infinite.
      const double ratio = std::isnan(error) ? INFINITY : bound > 0 ? error / bound : (error > 0 ? INFINITY : 0.0);
      result.tolerance_ratio = std::max(result.tolerance_ratio, ratio);
    }
  }
  return result;
}

}  // namespace catalyst::bench
