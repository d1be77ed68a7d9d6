// normalization.cpp — softmax and log_softmax along any axis, layer_norm and rms_norm over
// the last axis, and the backward forms of all four (shaders/normalization.comp): one
// work-group per row. dweight / dbias sum over rows in row order, one invocation per
// column, so no result depends on the launch. The argument checks follow the CPU plugin's.
#include <algorithm>
#include <string>

#include "kernels.h"

namespace catalyst::vulkan {
namespace {

constexpr uint32_t kRowLocal = 128;

ctl_dtype stat_dtype(ctl_dtype dtype) {
  return dtype == CTL_DTYPE_F16 || dtype == CTL_DTYPE_BF16 ? CTL_DTYPE_F32 : dtype;
}

// "<kind>.<dtype>", ".d" where the device computes in double for f32 / f16 / bf16.
std::string variant(const OpContext& ctx, const char* kind, ctl_dtype dtype) {
  std::string name = std::string(kind) + "." + dtype_name(dtype);
  if (dtype != CTL_DTYPE_F64 && (ctx.device->dtype_mask & CTL_DTYPE_BIT(CTL_DTYPE_F64))) name += ".d";
  return name;
}

void add_eps(const OpContext& ctx, ctl_dtype dtype, Params* p, double eps) {
  if (dtype == CTL_DTYPE_F64 || (ctx.device->dtype_mask & CTL_DTYPE_BIT(CTL_DTYPE_F64))) {
    p->add_f64(eps);
  } else {
    p->add_f32(static_cast<float>(eps));
    p->add(0);
  }
}

uint32_t row_groups(int64_t rows) {
  return static_cast<uint32_t>(std::min<int64_t>(rows, 4096));
}

ctl_status* expect_float(const OpContext& ctx, const DeviceView& x) {
  if (x.dtype == CTL_DTYPE_F32 || x.dtype == CTL_DTYPE_F64 || x.dtype == CTL_DTYPE_F16 || x.dtype == CTL_DTYPE_BF16) {
    return nullptr;
  }
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "dtype %s is not supported", dtype_name(x.dtype));
}

ctl_status* expect_vector(const OpContext& ctx, const DeviceView& v, const char* what, const DeviceView& x) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(v, what, x.dtype));
  if (v.rank != 1 || v.shape[0] != x.shape[x.rank - 1]) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "%s must be 1-D of length %lld (x's last axis)", what,
                    static_cast<long long>(x.shape[x.rank - 1]));
  }
  return nullptr;
}

ctl_status* expect_stat(const OpContext& ctx, const DeviceView& stat, const char* what, const DeviceView& x) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(stat, what, stat_dtype(x.dtype)));
  return ctx.expect_leading_shape(stat, what, x, "x");
}

const int64_t* strides_of(const DeviceView& v, bool present) {
  return present ? v.strides : nullptr;
}

ctl_status* run_norm(const OpContext& ctx, bool layer) {
  if (layer) {
    CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(1, 3, 1, 3));
  } else {
    CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(1, 2, 1, 2));
  }
  DeviceView x, weight, bias, y, mean, rstd;
  bool has_weight = false, has_bias = false, has_mean = false, has_rstd = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "x", &x));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(1, "weight", &weight, true, &has_weight));
  if (layer) CTL_SDK_RETURN_IF_ERROR(ctx.input(2, "bias", &bias, true, &has_bias));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "y", &y));
  if (layer) {
    CTL_SDK_RETURN_IF_ERROR(ctx.output(1, "mean", &mean, true, &has_mean));
    CTL_SDK_RETURN_IF_ERROR(ctx.output(2, "rstd", &rstd, true, &has_rstd));
  } else {
    CTL_SDK_RETURN_IF_ERROR(ctx.output(1, "rstd", &rstd, true, &has_rstd));
  }
  CTL_SDK_RETURN_IF_ERROR(expect_float(ctx, x));
  if (x.rank == 0) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input 0 (x) must have rank >= 1");
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(y, "output 0 (y)", x.dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_same_shape(y, "output 0 (y)", x, "input 0 (x)"));
  if (has_weight) CTL_SDK_RETURN_IF_ERROR(expect_vector(ctx, weight, "input 1 (weight)", x));
  if (has_bias) CTL_SDK_RETURN_IF_ERROR(expect_vector(ctx, bias, "input 2 (bias)", x));
  if (has_mean) CTL_SDK_RETURN_IF_ERROR(expect_stat(ctx, mean, "output 1 (mean)", x));
  if (has_rstd) CTL_SDK_RETURN_IF_ERROR(expect_stat(ctx, rstd, layer ? "output 2 (rstd)" : "output 1 (rstd)", x));
  ctl_norm_attrs attrs;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&attrs, sizeof attrs, CTL_NORM_ATTRS_STRUCT_SIZE, "ctl_norm_attrs", &given));
  double eps = 1e-5;
  if (given && attrs.epsilon != 0) eps = attrs.epsilon;  // 0 in a zeroed struct means 1e-5
  if (!(eps >= 0)) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs.epsilon %g is negative or NaN", eps);
  const uint32_t last = x.rank - 1;
  const Iteration rows =
      make_rows(x.rank, x.shape, last, {x.strides, y.strides, strides_of(mean, has_mean), strides_of(rstd, has_rstd)});
  if (rows.numel == 0) return nullptr;
  Params p;
  p.add_iteration(rows, {x.offset, y.offset, has_mean ? mean.offset : 0u, has_rstd ? rstd.offset : 0u});
  p.add(static_cast<uint32_t>(x.shape[last]));
  p.add(static_cast<uint32_t>(x.strides[last]));
  p.add(static_cast<uint32_t>(y.strides[last]));
  p.add(has_weight ? weight.offset : 0u);
  p.add(has_weight ? static_cast<uint32_t>(weight.strides[0]) : 0u);
  p.add(has_bias ? bias.offset : 0u);
  p.add(has_bias ? static_cast<uint32_t>(bias.strides[0]) : 0u);
  p.add((has_weight ? 1u : 0u) | (has_bias ? 2u : 0u) | (has_mean ? 4u : 0u) | (has_rstd ? 8u : 0u));
  add_eps(ctx, x.dtype, &p, eps);
  // An absent view binds another of the call's buffers, which the shader never touches.
  return ctx.dispatch(variant(ctx, "norm", x.dtype), kRowLocal, {static_cast<int32_t>(ctx.call->op)},
                      row_groups(rows.numel), 1, p,
                      {reads(x), writes(y), reads(has_weight ? weight : x), reads(has_bias ? bias : x),
                       writes(has_mean ? mean : y), writes(has_rstd ? rstd : y)});
}

struct NormBackward {
  DeviceView dy, x, mean, rstd, weight, dx, dweight, dbias;
  bool has_weight = false, has_dweight = false, has_dbias = false;
};

ctl_status* norm_backward_views(const OpContext& ctx, bool layer, NormBackward* v) {
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
  const DeviceView& x = v->x;
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
  ctl_norm_attrs attrs;
  bool given = false;
  return ctx.attrs(&attrs, sizeof attrs, CTL_NORM_ATTRS_STRUCT_SIZE, "ctl_norm_attrs", &given);
}

ctl_status* run_norm_backward(const OpContext& ctx, bool layer) {
  NormBackward v;
  CTL_SDK_RETURN_IF_ERROR(norm_backward_views(ctx, layer, &v));
  const DeviceView& x = v.x;
  const uint32_t last = x.rank - 1;
  const int64_t n = x.shape[last];
  const int32_t op = static_cast<int32_t>(ctx.call->op);
  const DeviceView& mean = layer ? v.mean : v.rstd;  // rms_norm never reads its mean
  const Iteration rows =
      make_rows(x.rank, x.shape, last, {v.dy.strides, x.strides, v.dx.strides, mean.strides, v.rstd.strides});
  if (rows.numel > 0 && n > 0) {
    Params p;
    p.add_iteration(rows, {v.dy.offset, x.offset, v.dx.offset, mean.offset, v.rstd.offset});
    p.add(static_cast<uint32_t>(n));
    p.add(static_cast<uint32_t>(v.dy.strides[last]));
    p.add(static_cast<uint32_t>(x.strides[last]));
    p.add(static_cast<uint32_t>(v.dx.strides[last]));
    p.add(v.has_weight ? v.weight.offset : 0u);
    p.add(v.has_weight ? static_cast<uint32_t>(v.weight.strides[0]) : 0u);
    p.add(v.has_weight ? 1u : 0u);
    CTL_SDK_RETURN_IF_ERROR(ctx.dispatch(
        variant(ctx, "norm_backward", x.dtype), kRowLocal, {op}, row_groups(rows.numel), 1, p,
        {reads(v.dy), reads(x), writes(v.dx), reads(mean), reads(v.rstd), reads(v.has_weight ? v.weight : x)}));
  }
  if (!(v.has_dweight || v.has_dbias) || n == 0) return nullptr;
  const Iteration prow = make_rows(x.rank, x.shape, last, {v.dy.strides, x.strides, mean.strides, v.rstd.strides});
  Params p;
  p.add_iteration(prow, {v.dy.offset, x.offset, mean.offset, v.rstd.offset});
  p.add(static_cast<uint32_t>(n));
  p.add(static_cast<uint32_t>(v.dy.strides[last]));
  p.add(static_cast<uint32_t>(x.strides[last]));
  p.add(v.has_dweight ? v.dweight.offset : 0u);
  p.add(v.has_dweight ? static_cast<uint32_t>(v.dweight.strides[0]) : 0u);
  p.add(v.has_dbias ? v.dbias.offset : 0u);
  p.add(v.has_dbias ? static_cast<uint32_t>(v.dbias.strides[0]) : 0u);
  p.add((v.has_dweight ? 1u : 0u) | (v.has_dbias ? 2u : 0u));
  // Each invocation adds its columns' terms over every row, about 2 + 4 x rank loop
  // iterations a row (the index arithmetic walks the axes for four views): past the loop
  // budget (op_context.h) the rows are split, the sums waiting in a carry between parts.
  const uint32_t groups = ctx.loop_groups(n, 64);
  const int64_t columns_per_invocation = (n + int64_t{groups} * 64 - 1) / (int64_t{groups} * 64);
  const int64_t rows_per_part =
      std::max<int64_t>(1, kLoopBudget / (columns_per_invocation * (2 + 4 * static_cast<int64_t>(prow.rank))));
  const int64_t parts = (prow.numel + rows_per_part - 1) / rows_per_part;
  const bool in_double = x.dtype == CTL_DTYPE_F64 || (ctx.device->dtype_mask & CTL_DTYPE_BIT(CTL_DTYPE_F64));
  const uint64_t compute_size = in_double ? 8 : 4;  // the shader's M, as variant() picks it
  Temporary carry_storage(ctx);
  DeviceView carry;
  CTL_SDK_RETURN_IF_ERROR(
      ctx.carry(parts > 1, static_cast<uint64_t>(2 * n) * compute_size, v.dx, &carry_storage, &carry));
  const size_t split_at = p.words.size();
  for (int64_t part = 0; part < std::max<int64_t>(parts, 1); ++part) {
    p.words.resize(split_at);
    p.add_part(part, parts, rows_per_part, prow.numel);
    CTL_SDK_RETURN_IF_ERROR(ctx.dispatch(variant(ctx, "norm_params", x.dtype), 64, {op}, groups, 1, p,
                                         {reads(v.dy), reads(x), reads(mean), reads(v.rstd),
                                          writes(v.has_dweight ? v.dweight : v.dx),
                                          writes(v.has_dbias ? v.dbias : v.dx), writes(carry)}));
  }
  return nullptr;
}

}  // namespace

ctl_status* run_softmax(const OpContext& ctx) {
  DeviceView x, y;
  CTL_SDK_RETURN_IF_ERROR(ctx.one_to_one(&x, &y));
  CTL_SDK_RETURN_IF_ERROR(expect_float(ctx, x));
  ctl_softmax_attrs attrs;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&attrs, sizeof attrs, CTL_AXIS_ATTRS_STRUCT_SIZE, "ctl_softmax_attrs", &given));
  if (x.rank == 0) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input 0 (x) must have rank >= 1");
  int64_t axis = given ? attrs.axis : -1;
  if (axis < 0) axis += x.rank;
  if (axis < 0 || axis >= static_cast<int64_t>(x.rank)) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs.axis %d is out of range for rank %u", attrs.axis, x.rank);
  }
  if (x.numel() == 0) return nullptr;
  const uint32_t a = static_cast<uint32_t>(axis);
  const Iteration rows = make_rows(x.rank, x.shape, a, {x.strides, y.strides});
  Params p;
  p.add_iteration(rows, {x.offset, y.offset});
  p.add(static_cast<uint32_t>(x.shape[a]));
  p.add(static_cast<uint32_t>(x.strides[a]));
  p.add(static_cast<uint32_t>(y.strides[a]));
  return ctx.dispatch(variant(ctx, "softmax", x.dtype), kRowLocal, {static_cast<int32_t>(ctx.call->op)},
                      row_groups(rows.numel), 1, p, {reads(x), writes(y)});
}

ctl_status* run_layer_norm(const OpContext& ctx) {
  return run_norm(ctx, true);
}

ctl_status* run_rms_norm(const OpContext& ctx) {
  return run_norm(ctx, false);
}

ctl_status* run_softmax_backward(const OpContext& ctx) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(2, 2, 1, 1));
  DeviceView y, dy, dx;
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "y", &y));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(1, "dy", &dy));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "dx", &dx));
  CTL_SDK_RETURN_IF_ERROR(expect_float(ctx, y));
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
  if (y.numel() == 0) return nullptr;
  const bool scalar = rank == 0;
  const uint32_t a = static_cast<uint32_t>(axis);
  const Iteration rows = make_rows(y.rank, y.shape, a, {y.strides, dy.strides, dx.strides});
  Params p;
  p.add_iteration(rows, {y.offset, dy.offset, dx.offset});
  p.add(scalar ? 1u : static_cast<uint32_t>(y.shape[a]));
  p.add(scalar ? 0u : static_cast<uint32_t>(y.strides[a]));
  p.add(scalar ? 0u : static_cast<uint32_t>(dy.strides[a]));
  p.add(scalar ? 0u : static_cast<uint32_t>(dx.strides[a]));
  return ctx.dispatch(variant(ctx, "softmax_backward", y.dtype), kRowLocal, {static_cast<int32_t>(ctx.call->op)},
                      row_groups(rows.numel), 1, p, {reads(y), reads(dy), writes(dx)});
}

ctl_status* run_layer_norm_backward(const OpContext& ctx) {
  return run_norm_backward(ctx, true);
}

ctl_status* run_rms_norm_backward(const OpContext& ctx) {
  return run_norm_backward(ctx, false);
}

}  // namespace catalyst::vulkan
