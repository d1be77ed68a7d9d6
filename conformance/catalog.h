// catalog.h — what the numeric case files share: the Catalog that turns case bodies into
// Cases with stable ids, and the words their labels are made of.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "case.h"
#include "numeric_harness.h"

namespace catalyst::conformance {

using Body = std::function<void(Harness&)>;

inline const std::vector<ctl_dtype> kFloat = {CTL_DTYPE_F32, CTL_DTYPE_F64, CTL_DTYPE_F16, CTL_DTYPE_BF16};
// The dtype lists of docs/ops.md: numeric ops, every dtype, matmul.
inline const std::vector<ctl_dtype> kNumeric = {CTL_DTYPE_F32, CTL_DTYPE_I32,  CTL_DTYPE_I64, CTL_DTYPE_F64,
                                                CTL_DTYPE_F16, CTL_DTYPE_BF16, CTL_DTYPE_I8,  CTL_DTYPE_U8};
inline const std::vector<ctl_dtype> kAll = {CTL_DTYPE_F32,  CTL_DTYPE_I32, CTL_DTYPE_I64,  CTL_DTYPE_BOOL, CTL_DTYPE_F64,
                                            CTL_DTYPE_F16,  CTL_DTYPE_BF16, CTL_DTYPE_I8,  CTL_DTYPE_U8};
inline const std::vector<ctl_dtype> kMatmul = {CTL_DTYPE_F32, CTL_DTYPE_I32, CTL_DTYPE_I64,
                                               CTL_DTYPE_F64, CTL_DTYPE_F16, CTL_DTYPE_BF16};

// Appends cases, numbering them per (op, dtype) in catalog order so ids stay stable: append
// variants, never reorder them. A case whose dtypes are all required ones gets
// `required_level` (core for the 1.0 op set, training for the training ops); any other
// dtype puts it at full.
class Catalog {
 public:
  Catalog(std::vector<Case>& out, Level required_level) : out_(out), required_level_(required_level) {}

  // `dtypes`: every dtype the call involves; the first names the case.
  void add(ctl_op_id op, const std::vector<ctl_dtype>& dtypes, std::string label, Body body) {
    add_named(op, dtypes, "", std::move(label), std::move(body));
  }
  void add(ctl_op_id op, ctl_dtype d, std::string label, Body body) {
    add(op, std::vector<ctl_dtype>{d}, std::move(label), std::move(body));
  }
  // The large case of an op and dtype, "<op>.<dtype>.large": named, so appending variants
  // never renumbers it.
  void add_large(ctl_op_id op, const std::vector<ctl_dtype>& dtypes, std::string label, Body body) {
    add_named(op, dtypes, "large", std::move(label), std::move(body));
  }
  void add_large(ctl_op_id op, ctl_dtype d, std::string label, Body body) {
    add_large(op, std::vector<ctl_dtype>{d}, std::move(label), std::move(body));
  }
  // A named case, "<op>.<dtype>.<name>", at `at_least` or the level its dtypes give, the
  // higher: the tail cases ("large_tail"), which are too slow for every core run.
  void add_named(ctl_op_id op, const std::vector<ctl_dtype>& dtypes, const std::string& name, std::string label,
                 Body body, Level at_least = Level::kCore);

 private:
  std::vector<Case>& out_;
  Level required_level_;
  std::map<std::string, int> counters_;
};

// "[3,4]".
std::string shape_label(const std::vector<int64_t>& shape);
// "contiguous", "permuted", ... as case labels say them.
const char* layout_word(Layout layout);
const char* output_word(OutputLayout layout);
// "[3,4] permuted & [4] contiguous".
std::string shaped_label(const std::vector<Shaped>& shapes);
int64_t numel_of(const std::vector<int64_t>& shape);
// A kSum tolerance over n terms with per-element scales.
Tolerance sum_tolerance(double n, std::vector<double> scale);

// layer_norm / rms_norm on rows of a large mean and a small spread, and of a large
// magnitude: "<op>.<dtype>.large_rows" (norm_large_rows.cpp).
void norm_large_row_cases(Catalog& cat, ctl_op_id op, ctl_dtype d);

// A reduction of x (of `shape`) over `axes`, with the tolerance of its kind: the sum bound
// with S the same reduction of |x| for float sums and means, row normalisation for
// logsumexp, exact otherwise (numeric_cases.cpp).
void run_reduce(Harness& h, ctl_op_id op, ctl_dtype d, const Operand& x, const std::vector<int64_t>& shape,
                const std::vector<int32_t>& axes, bool keepdims);

// A tensor's elements in row-major order, widened to double (training_cases.cpp).
std::vector<double> host_values(const ctl_tensor* t);
// A forward op's outputs on the reference (the backward ops' y, mean and rstd inputs).
std::vector<TensorPtr> reference_run(ctl_op_id op, const std::vector<ctl_tensor*>& inputs, const void* attrs,
                                     size_t output_count);
// layer_norm_backward's (layer) or rms_norm_backward's tolerances of dx, dweight and dbias
// for rows x n values x, dy, weight and the forward's rstd and mean (zeros for rms_norm):
// the S of conformance/README.md's table, per element.
std::vector<Tolerance> norm_backward_tolerances(bool layer, int64_t rows, int64_t n, const std::vector<double>& xv,
                                                const std::vector<double>& gv, const std::vector<double>& wv,
                                                const std::vector<double>& rstd, const std::vector<double>& mean);

// cast from `from` to `to` on the values where rounding twice, truncating wrongly or
// wrapping wrongly shows: "cast.<from>.rounding_<to>" (cast_rounding_cases.cpp).
void cast_rounding_cases(Catalog& cat, ctl_dtype from, ctl_dtype to);

// Cases on both sides of every size at which a plugin changes path (threshold_cases.cpp, size_thresholds.md).
void threshold_cases(Catalog& cat);

}  // namespace catalyst::conformance
