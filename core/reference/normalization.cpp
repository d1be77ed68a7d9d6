// normalization.cpp — reference kernels for softmax and log_softmax along one axis, and
// layer_norm and rms_norm over the last axis (with their optional statistics outputs).
// Everything is computed in double per row and rounded once on the store.
#include <cmath>
#include <limits>

#include "catalyst/sdk/view.hpp"
#include "reference_kernels.h"

namespace catalyst::reference {
namespace {

constexpr double kDefaultEpsilon = 1e-5;

// epsilon from ctl_norm_attrs; NULL attrs or a zero (zeroed struct) mean 1e-5.
ctl_status* read_epsilon(const Call& call, double* epsilon) {
  ctl_norm_attrs attrs;
  bool present = false;
  CTL_SDK_RETURN_IF_ERROR(read_attrs(call, CTL_NORM_ATTRS_STRUCT_SIZE, &attrs, &present));
  *epsilon = present && attrs.epsilon != 0.0 ? attrs.epsilon : kDefaultEpsilon;
  return nullptr;
}

// Checks y, the 1-D weight/bias of length n, and the x.shape[:-1] statistics outputs.
ctl_status* check_norm_shapes(const Call& call) {
  const Operand& x = call.in[0];
  if (x.rank < 1) return call.invalid("input must have rank >= 1 (normalises the last axis)");
  if (!same_shape(x, call.out[0]))
    return call.invalid("output shape %s differs from input shape %s", shape_string(call.out[0]).c_str(),
                        shape_string(x).c_str());
  const int64_t n = x.shape[x.rank - 1];
  for (size_t i = 1; i < call.in.size(); ++i) {
    const Operand& p = call.in[i];
    if (p.present() && (p.rank != 1 || p.shape[0] != n))
      return call.invalid("input[%zu] has shape %s, expected [%lld]", i, shape_string(p).c_str(),
                          static_cast<long long>(n));
  }
  for (size_t i = 1; i < call.out.size(); ++i) {
    const Operand& s = call.out[i];
    if (!s.present()) continue;
    bool ok = s.rank == x.rank - 1;
    for (uint32_t d = 0; ok && d < s.rank; ++d) ok = s.shape[d] == x.shape[d];
    if (!ok)
      return call.invalid(
          "output[%zu] has shape %s, expected the input's shape without its "
          "last axis",
          i, shape_string(s).c_str());
  }
  return nullptr;
}

// Walks the rows of a norm: every index of x.shape[:-1], keeping x, y and stats in step.
struct Rows {
  explicit Rows(const Call& call) : walk(call.in[0].rank - 1, call.in[0].shape) {
    for (int64_t& s : zero) s = 0;
    xs = walk.add(call.in[0].strides);
    ys = walk.add(call.out[0].strides);
    s1 = walk.add(call.out.size() > 1 && call.out[1].present() ? call.out[1].strides : zero);
    s2 = walk.add(call.out.size() > 2 && call.out[2].present() ? call.out[2].strides : zero);
  }
  int64_t zero[CTL_MAX_RANK];
  sdk::StridedWalker<4> walk;
  size_t xs, ys, s1, s2;
};

}  // namespace

ctl_status* run_softmax(const Call& call) {
  ctl_axis_attrs attrs;
  bool present = false;
  CTL_SDK_RETURN_IF_ERROR(read_attrs(call, CTL_AXIS_ATTRS_STRUCT_SIZE, &attrs, &present));
  const Operand& x = call.in[0];
  const Operand& y = call.out[0];
  if (!same_shape(x, y))
    return call.invalid("output shape %s differs from input shape %s", shape_string(y).c_str(),
                        shape_string(x).c_str());
  // NULL attrs mean the last axis; a scalar is one row of one element.
  const int64_t axis = present ? attrs.axis : static_cast<int64_t>(x.rank) - 1;
  if (x.rank == 0 ? (axis != 0 && axis != -1) : (axis < 0 || axis >= x.rank))
    return call.invalid("axis %lld is out of range for rank %u", static_cast<long long>(axis), x.rank);
  int64_t row_shape[CTL_MAX_RANK];
  for (uint32_t d = 0; d < x.rank; ++d) row_shape[d] = d == axis ? 1 : x.shape[d];
  const int64_t length = x.rank == 0 ? 1 : x.shape[axis];
  const int64_t xa = x.rank == 0 ? 0 : x.strides[axis], ya = x.rank == 0 ? 0 : y.strides[axis];
  int64_t rows = 1;
  for (uint32_t d = 0; d < x.rank; ++d) rows *= row_shape[d];
  if (length == 0) return nullptr;  // nothing to write
  sdk::StridedWalker<2> walk(x.rank, row_shape);
  const size_t xs = walk.add(x.strides), ys = walk.add(y.strides);
  for (int64_t r = 0; r < rows; ++r, walk.next()) {
    const int64_t x0 = walk.offset(xs), y0 = walk.offset(ys);
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t k = 0; k < length; ++k) m = float_maximum(m, x.load(x0 + k * xa));
    double sum = 0.0;  // a row of all -inf gives (-inf) - (-inf) = NaN, like PyTorch
    for (int64_t k = 0; k < length; ++k) sum += std::exp(x.load(x0 + k * xa) - m);
    for (int64_t k = 0; k < length; ++k) {
      const double shifted = x.load(x0 + k * xa) - m;
      y.store(y0 + k * ya, call.op == CTL_OP_SOFTMAX ? std::exp(shifted) / sum : shifted - std::log(sum));
    }
  }
  return nullptr;
}

ctl_status* run_layer_norm(const Call& call) {
  double epsilon = 0.0;
  CTL_SDK_RETURN_IF_ERROR(read_epsilon(call, &epsilon));
  CTL_SDK_RETURN_IF_ERROR(check_norm_shapes(call));
  const Operand& x = call.in[0];
  const Operand& y = call.out[0];
  const Operand* weight = call.in.size() > 1 && call.in[1].present() ? &call.in[1] : nullptr;
  const Operand* bias = call.in.size() > 2 && call.in[2].present() ? &call.in[2] : nullptr;
  const Operand* mean_out = call.out.size() > 1 && call.out[1].present() ? &call.out[1] : nullptr;
  const Operand* rstd_out = call.out.size() > 2 && call.out[2].present() ? &call.out[2] : nullptr;
  const int64_t n = x.shape[x.rank - 1];
  const int64_t xl = x.strides[x.rank - 1], yl = y.strides[y.rank - 1];
  Rows rows(call);
  int64_t row_count = 1;
  for (uint32_t d = 0; d + 1 < x.rank; ++d) row_count *= x.shape[d];
  for (int64_t r = 0; r < row_count; ++r, rows.walk.next()) {
    const int64_t x0 = rows.walk.offset(rows.xs), y0 = rows.walk.offset(rows.ys);
    double sum = 0.0;
    for (int64_t k = 0; k < n; ++k) sum += x.load(x0 + k * xl);
    const double mean = sum / static_cast<double>(n);  // n == 0: NaN statistics
    double squares = 0.0;
    for (int64_t k = 0; k < n; ++k) {
      const double d = x.load(x0 + k * xl) - mean;
      squares += d * d;
    }
    const double rstd = 1.0 / std::sqrt(squares / static_cast<double>(n) + epsilon);
    for (int64_t k = 0; k < n; ++k) {
      double v = (x.load(x0 + k * xl) - mean) * rstd;
      if (weight) v *= weight->load(k * weight->strides[0]);
      if (bias) v += bias->load(k * bias->strides[0]);
      y.store(y0 + k * yl, v);
    }
    if (mean_out) mean_out->store(rows.walk.offset(rows.s1), mean);
    if (rstd_out) rstd_out->store(rows.walk.offset(rows.s2), rstd);
  }
  return nullptr;
}

ctl_status* run_rms_norm(const Call& call) {
  double epsilon = 0.0;
  CTL_SDK_RETURN_IF_ERROR(read_epsilon(call, &epsilon));
  CTL_SDK_RETURN_IF_ERROR(check_norm_shapes(call));
  const Operand& x = call.in[0];
  const Operand& y = call.out[0];
  const Operand* weight = call.in.size() > 1 && call.in[1].present() ? &call.in[1] : nullptr;
  const Operand* rstd_out = call.out.size() > 1 && call.out[1].present() ? &call.out[1] : nullptr;
  const int64_t n = x.shape[x.rank - 1];
  const int64_t xl = x.strides[x.rank - 1], yl = y.strides[y.rank - 1];
  Rows rows(call);
  int64_t row_count = 1;
  for (uint32_t d = 0; d + 1 < x.rank; ++d) row_count *= x.shape[d];
  for (int64_t r = 0; r < row_count; ++r, rows.walk.next()) {
    const int64_t x0 = rows.walk.offset(rows.xs), y0 = rows.walk.offset(rows.ys);
    double squares = 0.0;
    for (int64_t k = 0; k < n; ++k) {
      const double v = x.load(x0 + k * xl);
      squares += v * v;
    }
    const double rstd = 1.0 / std::sqrt(squares / static_cast<double>(n) + epsilon);
    for (int64_t k = 0; k < n; ++k) {
      double v = x.load(x0 + k * xl) * rstd;
      if (weight) v *= weight->load(k * weight->strides[0]);
      y.store(y0 + k * yl, v);
    }
    if (rstd_out) rstd_out->store(rows.walk.offset(rows.s1), rstd);
  }
  return nullptr;
}

}  // namespace catalyst::reference
