// normalization.cpp — softmax and log_softmax along any axis, layer_norm and rms_norm over
// the last axis, and the backward forms of all four (shaders/normalization.comp): one
// work-group per row. dweight / dbias sum over rows in row order, one invocation per
// column, so no result depends on the launch. The calls are read by
// sdk/bind_normalization.hpp.
#include <algorithm>
#include <string>

#include "catalyst/sdk/bind_normalization.hpp"
#include "kernels.h"

namespace catalyst::vulkan {
namespace {

constexpr uint32_t kRowLocal = 128;

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

ctl_status* run_norm(const OpContext& ctx, bool layer) {
  sdk::NormProblem<DeviceView> np;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_norm(ctx, layer, &np));
  const DeviceView &x = np.x, &weight = np.weight, &bias = np.bias, &y = np.y, &mean = np.mean, &rstd = np.rstd;
  const bool has_weight = np.has_weight, has_bias = np.has_bias, has_mean = np.has_mean, has_rstd = np.has_rstd;
  using sdk::strides_of;
  const uint32_t last = x.rank - 1;
  const Iteration rows =
      make_rows(x.rank, x.shape, last, {x.strides, y.strides, strides_of(mean, has_mean), strides_of(rstd, has_rstd)});
  if (rows.numel == 0) return nullptr;
  Params p;
  p.add_iteration(rows, {x.offset, y.offset, has_mean ? mean.offset : 0, has_rstd ? rstd.offset : 0});
  p.add(static_cast<uint32_t>(x.shape[last]));
  p.add(static_cast<uint32_t>(x.strides[last]));
  p.add(static_cast<uint32_t>(y.strides[last]));
  p.add(has_weight ? static_cast<uint32_t>(weight.offset) : 0u);
  p.add(has_weight ? static_cast<uint32_t>(weight.strides[0]) : 0u);
  p.add(has_bias ? static_cast<uint32_t>(bias.offset) : 0u);
  p.add(has_bias ? static_cast<uint32_t>(bias.strides[0]) : 0u);
  p.add((has_weight ? 1u : 0u) | (has_bias ? 2u : 0u) | (has_mean ? 4u : 0u) | (has_rstd ? 8u : 0u));
  add_eps(ctx, x.dtype, &p, np.eps);
  // An absent view binds another of the call's buffers, which the shader never touches.
  return ctx.dispatch(variant(ctx, "norm", x.dtype), kRowLocal, {static_cast<int32_t>(ctx.call->op)},
                      row_groups(rows.numel), 1, p,
                      {reads(x), writes(y), reads(has_weight ? weight : x), reads(has_bias ? bias : x),
                       writes(has_mean ? mean : y), writes(has_rstd ? rstd : y)});
}

ctl_status* run_norm_backward(const OpContext& ctx, bool layer) {
  sdk::NormBackwardProblem<DeviceView> v;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_norm_backward(ctx, layer, &v));
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
    p.add(v.has_weight ? static_cast<uint32_t>(v.weight.offset) : 0u);
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
  p.add(v.has_dweight ? static_cast<uint32_t>(v.dweight.offset) : 0u);
  p.add(v.has_dweight ? static_cast<uint32_t>(v.dweight.strides[0]) : 0u);
  p.add(v.has_dbias ? static_cast<uint32_t>(v.dbias.offset) : 0u);
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
  sdk::SoftmaxProblem<DeviceView> sp;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_softmax(ctx, &sp));
  const DeviceView &x = sp.x, &y = sp.y;
  if (x.numel() == 0) return nullptr;
  const uint32_t a = sp.axis;
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
  sdk::SoftmaxBackwardProblem<DeviceView> sb;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_softmax_backward(ctx, &sb));
  const DeviceView &y = sb.y, &dy = sb.dy, &dx = sb.dx;
  if (y.numel() == 0) return nullptr;
  const Iteration rows = make_rows(y.rank, y.shape, sb.axis, {y.strides, dy.strides, dx.strides});
  Params p;
  p.add_iteration(rows, {y.offset, dy.offset, dx.offset});
  p.add(static_cast<uint32_t>(sb.length()));
  p.add(static_cast<uint32_t>(sb.step(y)));
  p.add(static_cast<uint32_t>(sb.step(dy)));
  p.add(static_cast<uint32_t>(sb.step(dx)));
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
