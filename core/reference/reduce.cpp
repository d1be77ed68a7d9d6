// reduce.cpp — reference kernels for the reductions: sum, mean, max, min, logsumexp over
// any set of axes, and argmax/argmin over one axis. The core hands over an output view
// with the input's rank and size 1 on every reduced axis (keepdims is its business).
// Floats accumulate in double, integers in wrapping int64.
#include <cmath>
#include <limits>

#include "catalyst/sdk/view.hpp"
#include "reference_kernels.h"

namespace catalyst::reference {
namespace {

// Which axes are reduced, after checking the attrs and the output shape against them.
struct Reduction {
  bool reduced[CTL_MAX_RANK] = {};
  int64_t inner_shape[CTL_MAX_RANK] = {};  // the input's shape on reduced axes, else 1
  int64_t count = 1;                       // elements folded into one output element
  uint32_t axis_count = 0;
};

ctl_status* plan(const Call& call, Reduction* r) {
  ctl_reduce_attrs attrs;
  bool present = false;
  CTL_SDK_RETURN_IF_ERROR(read_attrs(call, CTL_REDUCE_ATTRS_STRUCT_SIZE, &attrs, &present));
  const Operand& x = call.in[0];
  const Operand& y = call.out[0];
  if (attrs.axis_count > x.rank)
    return call.invalid("axis_count %u exceeds the input's rank %u", attrs.axis_count, x.rank);
  if (attrs.axis_count == 0) {  // zero axes means every axis, as in catalyst.h
    for (uint32_t i = 0; i < x.rank; ++i) r->reduced[i] = true;
  }
  for (uint32_t i = 0; i < attrs.axis_count; ++i) {
    const int32_t axis = attrs.axes[i];
    if (axis < 0 || static_cast<uint32_t>(axis) >= x.rank || (i > 0 && axis <= attrs.axes[i - 1]))
      return call.invalid("axes must be sorted, distinct and in [0, %u); axes[%u] is %d", x.rank, i, axis);
    r->reduced[axis] = true;
  }
  if (y.rank != x.rank) return call.invalid("output rank %u must equal the input's rank %u", y.rank, x.rank);
  for (uint32_t i = 0; i < x.rank; ++i) {
    r->axis_count += r->reduced[i] ? 1 : 0;
    r->inner_shape[i] = r->reduced[i] ? x.shape[i] : 1;
    r->count *= r->inner_shape[i];
    if (y.shape[i] != (r->reduced[i] ? 1 : x.shape[i]))
      return call.invalid("output shape %s does not match input %s reduced over the axes", shape_string(y).c_str(),
                          shape_string(x).c_str());
  }
  return nullptr;
}

}  // namespace

ctl_status* run_reduce(const Call& call) {
  Reduction r;
  CTL_SDK_RETURN_IF_ERROR(plan(call, &r));
  const Operand& x = call.in[0];
  const Operand& y = call.out[0];
  const ctl_op_id op = call.op;
  if (r.count == 0 && (op == CTL_OP_MAX || op == CTL_OP_MIN))
    return call.invalid("reducing an empty axis has no maximum or minimum");
  const bool floats = is_float(x.dtype);
  sdk::StridedWalker<2> outer(y.rank, y.shape);
  const size_t xs = outer.add(x.strides), ys = outer.add(y.strides);
  sdk::StridedWalker<1> inner(x.rank, r.inner_shape);
  inner.add(x.strides);
  for (int64_t o = 0, n = y.numel(); o < n; ++o, outer.next()) {
    const int64_t base = outer.offset(xs);
    inner.seek(0);
    if (!floats) {  // sum, max, min: exact in int64; the store wraps a sum to the dtype
      int64_t acc = op == CTL_OP_SUM ? 0 : x.load_i(base);
      for (int64_t k = 0; k < r.count; ++k, inner.next()) {
        const int64_t v = x.load_i(base + inner.offset(0));
        if (op == CTL_OP_SUM) acc = wrap_add(acc, v);
        if (op == CTL_OP_MAX && v > acc) acc = v;
        if (op == CTL_OP_MIN && v < acc) acc = v;
      }
      y.store_i(outer.offset(ys), acc);
      continue;
    }
    double acc = 0.0;
    if (op == CTL_OP_MAX || op == CTL_OP_MIN) acc = x.load(base);
    double m = -std::numeric_limits<double>::infinity();  // logsumexp's shift: max(x)
    for (int64_t k = 0; k < r.count; ++k, inner.next()) {
      const double v = x.load(base + inner.offset(0));
      if (op == CTL_OP_SUM || op == CTL_OP_MEAN) acc += v;
      if (op == CTL_OP_MAX) acc = float_maximum(acc, v);
      if (op == CTL_OP_MIN) acc = float_minimum(acc, v);
      if (op == CTL_OP_LOGSUMEXP) m = float_maximum(m, v);
    }
    if (op == CTL_OP_MEAN) acc /= static_cast<double>(r.count);  // empty: 0 / 0 is NaN
    if (op == CTL_OP_LOGSUMEXP) {
      if (std::isinf(m) || std::isnan(m)) {  // ±inf (and -inf for an empty axis) is m
        acc = m;
      } else {
        double sum = 0.0;
        inner.seek(0);
        for (int64_t k = 0; k < r.count; ++k, inner.next()) {
          sum += std::exp(x.load(base + inner.offset(0)) - m);
        }
        acc = m + std::log(sum);
      }
    }
    y.store(outer.offset(ys), acc);
  }
  return nullptr;
}

// argmax/argmin: NaN counts as the extreme value (the first NaN wins); otherwise the first
// of equal values wins.
ctl_status* run_arg_reduce(const Call& call) {
  Reduction r;
  CTL_SDK_RETURN_IF_ERROR(plan(call, &r));
  const Operand& x = call.in[0];
  const Operand& y = call.out[0];
  if (r.axis_count != 1) return call.invalid("needs exactly one axis, got %u reduced axes", r.axis_count);
  uint32_t axis = 0;
  while (!r.reduced[axis]) ++axis;
  const int64_t length = x.shape[axis], stride = x.strides[axis];
  if (length == 0) return call.invalid("axis %u is empty: no index to return", axis);
  const bool is_max = call.op == CTL_OP_ARGMAX;
  const bool floats = is_float(x.dtype);
  sdk::StridedWalker<2> outer(y.rank, y.shape);
  const size_t xs = outer.add(x.strides), ys = outer.add(y.strides);
  for (int64_t o = 0, n = y.numel(); o < n; ++o, outer.next()) {
    const int64_t base = outer.offset(xs);
    int64_t best = 0;
    for (int64_t k = 1; k < length; ++k) {
      bool better;
      if (floats) {
        const double v = x.load(base + k * stride), b = x.load(base + best * stride);
        better = !std::isnan(b) && (std::isnan(v) || (is_max ? v > b : v < b));
      } else {
        const int64_t v = x.load_i(base + k * stride), b = x.load_i(base + best * stride);
        better = is_max ? v > b : v < b;
      }
      if (better) best = k;
    }
    y.store_i(outer.offset(ys), best);
  }
  return nullptr;
}

}  // namespace catalyst::reference
