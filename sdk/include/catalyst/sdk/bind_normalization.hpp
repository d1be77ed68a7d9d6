// bind_normalization.hpp — the normalisation family's calls read and checked into problems,
// for any plugin context with the call reader's members (op_call.hpp) and any view with
// rank, shape, strides and dtype: softmax and log_softmax
// along one axis, layer_norm and rms_norm over the last axis, and their backward forms.
// Float dtypes only; the statistics (mean, rstd) are f32 for f16 / bf16 x, else x's dtype.
// An empty tensor is not an error here: the caller returns early on it.
#pragma once

#include <algorithm>
#include <cstdint>

#include "catalyst/sdk/cast_rules.hpp"
#include "catalyst/sdk/op_dtypes.hpp"
#include "catalyst/sdk/raw_field.hpp"
#include "catalyst/sdk/status.hpp"
#include "catalyst_plugin.h"

namespace catalyst::sdk {

// The dtype of a norm's mean and rstd.
inline ctl_dtype norm_stat_dtype(ctl_dtype dtype) {
  return dtype == CTL_DTYPE_F16 || dtype == CTL_DTYPE_BF16 ? CTL_DTYPE_F32 : dtype;
}

// A view's strides, or NULL for an absent one (merge_axes reads zeros).
template <class View>
const int64_t* strides_of(const View& v, bool present) {
  return present ? v.strides : nullptr;
}

namespace norm_detail {

template <class Ctx, class View>
ctl_status* expect_float(const Ctx& ctx, const View& x) {
  if (is_float_dtype(x.dtype)) return nullptr;
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "dtype %s is not supported", dtype_name(x.dtype));
}

// weight, bias, dweight, dbias: 1-D of x's last axis, in x's dtype.
template <class Ctx, class View>
ctl_status* expect_vector(const Ctx& ctx, const View& v, const char* what, const View& x) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(v, what, x.dtype));
  if (v.rank != 1 || v.shape[0] != x.shape[x.rank - 1]) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "%s must be 1-D of length %lld (x's last axis)", what,
                    static_cast<long long>(x.shape[x.rank - 1]));
  }
  return nullptr;
}

template <class Ctx, class View>
ctl_status* expect_stat(const Ctx& ctx, const View& stat, const char* what, const View& x) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(stat, what, norm_stat_dtype(x.dtype)));
  return ctx.expect_leading_shape(stat, what, x, "x");
}

}  // namespace norm_detail

// layer_norm (layer) or rms_norm over x's last axis: y, and optionally the statistics.
template <class View>
struct NormProblem {
  bool layer = true;
  View x, weight, bias, y, mean, rstd;
  bool has_weight = false, has_bias = false, has_mean = false, has_rstd = false;
  double eps = 1e-5;
  uint32_t last = 0;  // x's last axis, the one normalised
};

template <class Ctx, class View>
ctl_status* bind_norm(const Ctx& ctx, bool layer, NormProblem<View>* p) {
  using namespace norm_detail;
  p->layer = layer;
  if (layer) {
    CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(1, 3, 1, 3));
  } else {
    CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(1, 2, 1, 2));
  }
  View &x = p->x, &y = p->y;
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "x", &x));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(1, "weight", &p->weight, true, &p->has_weight));
  if (layer) CTL_SDK_RETURN_IF_ERROR(ctx.input(2, "bias", &p->bias, true, &p->has_bias));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "y", &y));
  if (layer) {
    CTL_SDK_RETURN_IF_ERROR(ctx.output(1, "mean", &p->mean, true, &p->has_mean));
    CTL_SDK_RETURN_IF_ERROR(ctx.output(2, "rstd", &p->rstd, true, &p->has_rstd));
  } else {
    CTL_SDK_RETURN_IF_ERROR(ctx.output(1, "rstd", &p->rstd, true, &p->has_rstd));
  }
  CTL_SDK_RETURN_IF_ERROR(expect_float(ctx, x));
  if (x.rank == 0) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input 0 (x) must have rank >= 1");
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(y, "output 0 (y)", x.dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_same_shape(y, "output 0 (y)", x, "input 0 (x)"));
  if (p->has_weight) CTL_SDK_RETURN_IF_ERROR(expect_vector(ctx, p->weight, "input 1 (weight)", x));
  if (p->has_bias) CTL_SDK_RETURN_IF_ERROR(expect_vector(ctx, p->bias, "input 2 (bias)", x));
  if (p->has_mean) CTL_SDK_RETURN_IF_ERROR(expect_stat(ctx, p->mean, "output 1 (mean)", x));
  if (p->has_rstd) {
    CTL_SDK_RETURN_IF_ERROR(expect_stat(ctx, p->rstd, layer ? "output 2 (rstd)" : "output 1 (rstd)", x));
  }
  ctl_norm_attrs attrs;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&attrs, sizeof attrs, CTL_NORM_ATTRS_STRUCT_SIZE, "ctl_norm_attrs", &given));
  p->eps = 1e-5;
  if (given && attrs.epsilon != 0) p->eps = attrs.epsilon;  // 0 in a zeroed struct means 1e-5
  if (!(p->eps >= 0)) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs.epsilon %g is negative or NaN", p->eps);
  p->last = x.rank - 1;
  return nullptr;
}

// layer_norm_backward (layer) or rms_norm_backward: dx, and optionally dweight (and dbias).
// rms_norm has no mean input.
template <class View>
struct NormBackwardProblem {
  bool layer = true;
  View dy, x, mean, rstd, weight, dx, dweight, dbias;
  bool has_weight = false, has_dweight = false, has_dbias = false;
  uint32_t last = 0;
};

template <class Ctx, class View>
ctl_status* bind_norm_backward(const Ctx& ctx, bool layer, NormBackwardProblem<View>* v) {
  using namespace norm_detail;
  v->layer = layer;
  const uint32_t stats = layer ? 2 : 1, weight = 2 + stats;
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(weight, weight + 1, 1, layer ? 3 : 2));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "dy", &v->dy));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(1, "x", &v->x));
  if (layer) CTL_SDK_RETURN_IF_ERROR(ctx.input(2, "mean", &v->mean));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(weight - 1, "rstd", &v->rstd));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(weight, "weight", &v->weight, true, &v->has_weight));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "dx", &v->dx));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(1, "dweight", &v->dweight, true, &v->has_dweight));
  if (layer) CTL_SDK_RETURN_IF_ERROR(ctx.output(2, "dbias", &v->dbias, true, &v->has_dbias));
  const View& x = v->x;
  CTL_SDK_RETURN_IF_ERROR(expect_float(ctx, x));
  if (x.rank == 0) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input 1 (x) must have rank >= 1");
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(v->dy, "input 0 (dy)", x.dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_same_shape(v->dy, "input 0 (dy)", x, "input 1 (x)"));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(v->dx, "output 0 (dx)", x.dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_same_shape(v->dx, "output 0 (dx)", x, "input 1 (x)"));
  if (layer) CTL_SDK_RETURN_IF_ERROR(expect_stat(ctx, v->mean, "input 2 (mean)", x));
  CTL_SDK_RETURN_IF_ERROR(expect_stat(ctx, v->rstd, layer ? "input 3 (rstd)" : "input 2 (rstd)", x));
  if (v->has_weight) {
    CTL_SDK_RETURN_IF_ERROR(expect_vector(ctx, v->weight, layer ? "input 4 (weight)" : "input 3 (weight)", x));
  }
  if (v->has_dweight) CTL_SDK_RETURN_IF_ERROR(expect_vector(ctx, v->dweight, "output 1 (dweight)", x));
  if (v->has_dbias) CTL_SDK_RETURN_IF_ERROR(expect_vector(ctx, v->dbias, "output 2 (dbias)", x));
  v->last = x.rank - 1;
  // ctl_norm_attrs is unused, but a malformed struct is still an error.
  ctl_norm_attrs attrs;
  bool given = false;
  return ctx.attrs(&attrs, sizeof attrs, CTL_NORM_ATTRS_STRUCT_SIZE, "ctl_norm_attrs", &given);
}

// softmax / log_softmax of x along `axis` (NULL attrs: the last axis; rank >= 1).
template <class View>
struct SoftmaxProblem {
  View x, y;
  uint32_t axis = 0;
  bool log_form = false;
};

template <class Ctx, class View>
ctl_status* bind_softmax(const Ctx& ctx, SoftmaxProblem<View>* p) {
  View &x = p->x, &y = p->y;
  CTL_SDK_RETURN_IF_ERROR(ctx.one_to_one(&x, &y));
  CTL_SDK_RETURN_IF_ERROR(norm_detail::expect_float(ctx, x));
  ctl_softmax_attrs attrs;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&attrs, sizeof attrs, CTL_AXIS_ATTRS_STRUCT_SIZE, "ctl_softmax_attrs", &given));
  if (x.rank == 0) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input 0 (x) must have rank >= 1");
  int64_t axis = given ? attrs.axis : -1;
  if (axis < 0) axis += x.rank;
  if (axis < 0 || axis >= static_cast<int64_t>(x.rank)) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs.axis %d is out of range for rank %u", attrs.axis, x.rank);
  }
  p->axis = static_cast<uint32_t>(axis);
  p->log_form = raw_enum(ctx.call->op) == CTL_OP_LOG_SOFTMAX;
  return nullptr;
}

// softmax_backward / log_softmax_backward along `axis` (NULL attrs: the last axis). A
// rank-0 y is one row of one element (`scalar`; axis 0 or -1): its row length is 1 and its
// steps along the axis 0.
template <class View>
struct SoftmaxBackwardProblem {
  View y, dy, dx;
  uint32_t axis = 0;
  bool scalar = false;
  bool log_form = false;

  int64_t length() const { return scalar ? 1 : y.shape[axis]; }
  int64_t step(const View& v) const { return scalar ? 0 : v.strides[axis]; }
};

template <class Ctx, class View>
ctl_status* bind_softmax_backward(const Ctx& ctx, SoftmaxBackwardProblem<View>* p) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(2, 2, 1, 1));
  View &y = p->y, &dy = p->dy, &dx = p->dx;
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "y", &y));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(1, "dy", &dy));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "dx", &dx));
  CTL_SDK_RETURN_IF_ERROR(norm_detail::expect_float(ctx, y));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(dy, "input 1 (dy)", y.dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(dx, "output 0 (dx)", y.dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_same_shape(dy, "input 1 (dy)", y, "input 0 (y)"));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_same_shape(dx, "output 0 (dx)", y, "input 0 (y)"));
  ctl_axis_attrs attrs;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&attrs, sizeof attrs, CTL_AXIS_ATTRS_STRUCT_SIZE, "ctl_axis_attrs", &given));
  const int64_t rank = y.rank;
  int64_t axis = given ? attrs.axis : -1;
  if (axis < 0) axis += std::max<int64_t>(rank, 1);
  if (axis < 0 || axis >= std::max<int64_t>(rank, 1)) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs.axis %d is out of range for rank %u", attrs.axis, y.rank);
  }
  p->axis = static_cast<uint32_t>(axis);
  p->scalar = rank == 0;
  p->log_form = raw_enum(ctx.call->op) == CTL_OP_LOG_SOFTMAX_BACKWARD;
  return nullptr;
}

}  // namespace catalyst::sdk
