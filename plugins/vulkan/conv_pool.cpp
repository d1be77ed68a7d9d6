// conv_pool.cpp — direct convolution and pooling over NCHW views: conv2d, its two backward
// forms, max_pool2d, avg_pool2d and their backward forms (shaders/conv_pool.comp). One
// invocation per output element, any strides, terms added in double in the reference's
// order (so these need shaderFloat64). The calls are read by sdk/bind_conv_pool.hpp.
#include <string>

#include "catalyst/sdk/bind_conv_pool.hpp"
#include "kernels.h"

namespace catalyst::vulkan {
namespace {

ctl_status* expect_double(const OpContext& ctx) {
  if (ctx.device->dtype_mask & CTL_DTYPE_BIT(CTL_DTYPE_F64)) return nullptr;
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "computes in f64, which %s lacks", ctx.device->name.c_str());
}

void add4(Params* p, const int64_t* v) {
  for (int i = 0; i < 4; ++i) p->add(static_cast<uint32_t>(v[i]));
}

// The parameter block of conv_pool.comp (see its header).
Params conv_params(int64_t n, const DeviceView& first, const DeviceView* second, const DeviceView* bias,
                   const DeviceView& out, const int64_t* x_shape, const int64_t* w_shape, int64_t oh, int64_t ow,
                   const int64_t* geometry, bool max) {
  Params p;
  const int64_t zero[4] = {0, 0, 0, 0};
  p.add(static_cast<uint32_t>(n));
  add4(&p, first.strides);
  add4(&p, second ? second->strides : zero);
  p.add(bias ? static_cast<uint32_t>(bias->strides[0]) : 0u);
  p.add(bias ? 1u : 0u);
  add4(&p, out.strides);
  add4(&p, x_shape);
  add4(&p, w_shape);
  p.add(static_cast<uint32_t>(oh));
  p.add(static_cast<uint32_t>(ow));
  for (int i = 0; i < 7; ++i) p.add(static_cast<uint32_t>(geometry[i]));
  p.add(first.offset);
  p.add(second ? second->offset : 0u);
  p.add(bias ? bias->offset : 0u);
  p.add(out.offset);
  p.add(max ? 1u : 0u);
  return p;
}

// ---- conv2d and its backward forms --------------------------------------------------

// The views of a conv2d call and their sizes (sdk/bind_conv_pool.hpp).
using Conv = sdk::ConvProblem<DeviceView>;

ctl_status* run_conv(const OpContext& ctx, ctl_op_id op) {
  Conv v;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_conv(ctx, op, &v));
  CTL_SDK_RETURN_IF_ERROR(expect_double(ctx));
  const int64_t n = v.out.numel();
  if (n == 0) return nullptr;
  const int64_t x_shape[4] = {v.N, v.C, v.H, v.W};
  const int64_t w_shape[4] = {v.O, v.Cg, v.KH, v.KW};
  const int64_t geo[7] = {v.sh, v.sw, v.ph, v.pw, v.dh, v.dw, v.Og};
  const std::string t = dtype_name(v.x.dtype);
  const uint32_t groups = ctx.loop_groups(n, kLoopLocal);
  if (op == CTL_OP_CONV2D) {
    const Params p =
        conv_params(n, v.x, &v.w, v.has_bias ? &v.bias : nullptr, v.out, x_shape, w_shape, v.OH, v.OW, geo, false);
    return ctx.dispatch("conv." + t, kLoopLocal, {}, groups, 1, p,
                        {reads(v.x), reads(v.w), reads(v.has_bias ? v.bias : v.x), writes(v.out)});
  }
  if (op == CTL_OP_CONV2D_BACKWARD_INPUT) {
    const Params p = conv_params(n, v.dy, &v.w, nullptr, v.out, x_shape, w_shape, v.OH, v.OW, geo, false);
    return ctx.dispatch("conv_input." + t, kLoopLocal, {}, groups, 1, p,
                        {reads(v.dy), reads(v.w), reads(v.dy), writes(v.out)});
  }
  // Each weight element sums over N x OH rows of OW terms: past the loop budget
  // (op_context.h) the rows are split, each sum waiting in a carry between parts.
  Params p = conv_params(n, v.dy, &v.x, nullptr, v.out, x_shape, w_shape, v.OH, v.OW, geo, false);
  const int64_t rows = v.N * v.OH;
  const int64_t per_invocation = (n + int64_t{groups} * kLoopLocal - 1) / (int64_t{groups} * kLoopLocal);
  const int64_t rows_per_part = std::max<int64_t>(1, kLoopBudget / (per_invocation * (v.OW + 2)));
  const int64_t parts = std::max<int64_t>(1, (rows + rows_per_part - 1) / rows_per_part);
  Temporary carry_storage(ctx);
  DeviceView carry;
  CTL_SDK_RETURN_IF_ERROR(ctx.carry(parts > 1, static_cast<uint64_t>(n) * 8, v.out, &carry_storage, &carry));
  const size_t split_at = p.words.size();
  for (int64_t part = 0; part < parts; ++part) {
    p.words.resize(split_at);
    p.add_part(part, parts, rows_per_part, rows);
    CTL_SDK_RETURN_IF_ERROR(ctx.dispatch("conv_weight." + t, kLoopLocal, {}, groups, 1, p,
                                         {reads(v.dy), reads(v.x), reads(v.dy), writes(v.out), writes(carry)}));
  }
  return nullptr;
}

// ---- pooling ------------------------------------------------------------------------

// The views of a pooling call and their sizes (sdk/bind_conv_pool.hpp).
using Pool = sdk::PoolProblem<DeviceView>;

ctl_status* run_pool(const OpContext& ctx, bool backward, bool max) {
  Pool v;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_pool(ctx, backward, &v));
  CTL_SDK_RETURN_IF_ERROR(expect_double(ctx));
  const int64_t n = v.out.numel();
  if (n == 0) return nullptr;
  const int64_t x_shape[4] = {v.N, v.C, v.H, v.W};
  const int64_t w_shape[4] = {0, 0, 0, 0};
  const int64_t geo[7] = {v.kh, v.kw, v.sh, v.sw, v.ph, v.pw, v.exclude_padding ? 1 : 0};
  const std::string t = dtype_name(v.x.dtype);
  const uint32_t groups = ctx.loop_groups(n, kLoopLocal);
  if (!backward) {
    const Params p = conv_params(n, v.x, nullptr, nullptr, v.out, x_shape, w_shape, v.OH, v.OW, geo, max);
    return ctx.dispatch("pool." + t, kLoopLocal, {}, groups, 1, p, {reads(v.x), reads(v.x), reads(v.x), writes(v.out)});
  }
  const Params p = conv_params(n, v.dy, &v.x, nullptr, v.out, x_shape, w_shape, v.OH, v.OW, geo, max);
  return ctx.dispatch("pool_backward." + t, kLoopLocal, {}, groups, 1, p,
                      {reads(v.dy), reads(v.x), reads(v.dy), writes(v.out)});
}

}  // namespace

ctl_status* run_conv2d(const OpContext& ctx) {
  return run_conv(ctx, CTL_OP_CONV2D);
}

ctl_status* run_conv2d_backward_input(const OpContext& ctx) {
  return run_conv(ctx, CTL_OP_CONV2D_BACKWARD_INPUT);
}

ctl_status* run_conv2d_backward_weight(const OpContext& ctx) {
  return run_conv(ctx, CTL_OP_CONV2D_BACKWARD_WEIGHT);
}

ctl_status* run_max_pool2d(const OpContext& ctx) {
  return run_pool(ctx, false, true);
}

ctl_status* run_max_pool2d_backward(const OpContext& ctx) {
  return run_pool(ctx, true, true);
}

ctl_status* run_avg_pool2d(const OpContext& ctx) {
  return run_pool(ctx, false, false);
}

ctl_status* run_avg_pool2d_backward(const OpContext& ctx) {
  return run_pool(ctx, true, false);
}

}  // namespace catalyst::vulkan
