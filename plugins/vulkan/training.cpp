// training.cpp — the fused loss and optimizer steps: cross_entropy, its backward,
// adamw_step and sgd_step (shaders/training.comp). Everything computes in double, so these
// need a device with shaderFloat64. The losses run one work-group per row over the last
// axis; MEAN and SUM keep each row's loss in a temporary that one group then adds in a
// fixed order: no float atomics anywhere.
#include <cmath>
#include <string>

#include "catalyst/sdk/bind_training.hpp"
#include "kernels.h"

namespace catalyst::vulkan {
namespace {

constexpr uint32_t kRowLocal = 128;

ctl_status* expect_double(const OpContext& ctx) {
  if (ctx.device->dtype_mask & CTL_DTYPE_BIT(CTL_DTYPE_F64)) return nullptr;
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "computes in f64, which %s lacks", ctx.device->name.c_str());
}

uint32_t row_groups(int64_t rows) {
  return static_cast<uint32_t>(rows < 4096 ? rows : 4096);
}

// ---- cross_entropy and cross_entropy_backward ------------------------------------------

// The views and attrs of a loss call (sdk/bind_training.hpp).
using CrossEntropy = sdk::CrossEntropyProblem<DeviceView>;

std::string loss_variant(const char* kind, const CrossEntropy& v) {
  return std::string(kind) + "." + dtype_name(v.logits.dtype) + "." + dtype_name(v.target.dtype);
}

}  // namespace

ctl_status* run_cross_entropy(const OpContext& ctx) {
  CrossEntropy v;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_cross_entropy(ctx, false, &v));
  CTL_SDK_RETURN_IF_ERROR(expect_double(ctx));
  const bool per_row = v.reduction == CTL_REDUCTION_NONE;
  const DeviceView z = sdk::without_last_axis(v.logits);
  DeviceView out_rows = per_row ? v.out : z;
  const DeviceView* views[3] = {&z, &v.target, &out_rows};
  const Iteration it = make_iteration(views, 3);
  const int64_t rows = it.numel;
  if (per_row && rows == 0) return nullptr;
  Temporary partial(ctx), counted(ctx);
  if (!per_row) {
    CTL_SDK_RETURN_IF_ERROR(ctx.temporary(static_cast<uint64_t>(rows) * 8, &partial));
    CTL_SDK_RETURN_IF_ERROR(ctx.temporary(static_cast<uint64_t>(rows) * 8, &counted));
  }
  auto bind = [](const Temporary& t, const DeviceView& fallback, bool write) {
    return t.allocation.block ? Binding{t.allocation.buffer, t.allocation.offset, t.allocation.size, write}
                              : Binding{fallback.buffer, fallback.base, fallback.range, write};
  };
  if (rows > 0) {
    Params p;
    p.add_iteration(it, {z.offset, v.target.offset, per_row ? v.out.offset : 0u});
    p.add(static_cast<uint32_t>(v.logits.strides[v.logits.rank - 1]));
    p.add(static_cast<uint32_t>(v.logits.shape[v.logits.rank - 1]));
    p.add_i64(v.ignore_index);
    p.add(v.ignore_set ? 1u : 0u);
    p.add(per_row ? 1u : 0u);
    CTL_SDK_RETURN_IF_ERROR(ctx.dispatch(
        loss_variant("ce_rows", v), kRowLocal, {}, row_groups(rows), 1, p,
        {reads(v.logits), reads(v.target), writes(v.out), bind(partial, v.out, true), bind(counted, v.out, true)}));
  }
  if (per_row) return nullptr;
  Params p;
  p.add(static_cast<uint32_t>(rows));
  p.add(v.reduction == CTL_REDUCTION_MEAN ? 1u : 0u);
  p.add(v.out.offset);
  return ctx.dispatch(std::string("ce_total.") + dtype_name(v.logits.dtype), kRowLocal, {}, 1, 1, p,
                      {bind(partial, v.out, false), bind(counted, v.out, false), writes(v.out)});
}

ctl_status* run_cross_entropy_backward(const OpContext& ctx) {
  CrossEntropy v;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_cross_entropy(ctx, true, &v));
  CTL_SDK_RETURN_IF_ERROR(expect_double(ctx));
  if (v.logits.numel() == 0) return nullptr;
  const bool per_row = v.reduction == CTL_REDUCTION_NONE;
  const bool mean = v.reduction == CTL_REDUCTION_MEAN;
  const DeviceView z = sdk::without_last_axis(v.logits);
  const DeviceView dz = sdk::without_last_axis(v.out);
  DeviceView g_rows = per_row ? v.grad : z;
  const DeviceView* views[4] = {&z, &v.target, &dz, &g_rows};
  const Iteration it = make_iteration(views, 4);
  const int64_t rows = it.numel;
  Temporary count(ctx);
  CTL_SDK_RETURN_IF_ERROR(ctx.temporary(8, &count));
  const Binding count_binding{count.allocation.buffer, count.allocation.offset, count.allocation.size, false};
  if (mean) {
    const DeviceView* one[1] = {&v.target};
    const Iteration ti = make_iteration(one, 1);
    Params p;
    p.add_iteration(ti, {v.target.offset});
    p.add_i64(v.ignore_index);
    p.add(v.ignore_set ? 1u : 0u);
    Binding out = count_binding;
    out.write = true;
    CTL_SDK_RETURN_IF_ERROR(ctx.dispatch(std::string("ce_count.") + dtype_name(v.target.dtype), kRowLocal, {}, 1, 1, p,
                                         {reads(v.target), out}));
  }
  Params p;
  p.add_iteration(it, {z.offset, v.target.offset, dz.offset, per_row ? v.grad.offset : 0u});
  p.add(static_cast<uint32_t>(v.logits.strides[v.logits.rank - 1]));
  p.add(static_cast<uint32_t>(v.out.strides[v.out.rank - 1]));
  p.add(static_cast<uint32_t>(v.logits.shape[v.logits.rank - 1]));
  p.add_i64(v.ignore_index);
  p.add(v.ignore_set ? 1u : 0u);
  p.add(per_row ? 1u : 0u);
  p.add(mean ? 1u : 0u);
  p.add(v.grad.offset);
  return ctx.dispatch(loss_variant("ce_backward", v), kRowLocal, {}, row_groups(rows), 1, p,
                      {reads(v.logits), reads(v.target), writes(v.out), reads(v.grad), count_binding});
}

ctl_status* run_adamw_step(const OpContext& ctx) {
  sdk::AdamwProblem<DeviceView> ap;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_adamw(ctx, &ap));
  const DeviceView& grad = ap.grad;
  const DeviceView* state = ap.state;
  const ctl_adamw_attrs& a = ap.attrs;
  CTL_SDK_RETURN_IF_ERROR(expect_double(ctx));
  const DeviceView* views[4] = {&grad, &state[0], &state[1], &state[2]};
  const Iteration it = make_iteration(views, 4);
  if (it.numel == 0) return nullptr;
  Params p;
  p.add_iteration(it, views, 4);
  p.add_f64(a.lr);
  p.add_f64(a.lr * a.weight_decay);
  p.add_f64(a.beta1);
  p.add_f64(a.beta2);
  p.add_f64(a.eps);
  // The bias corrections in double on the host, as the reference computes them.
  p.add_f64(1 - std::pow(a.beta1, static_cast<double>(a.step)));
  p.add_f64(1 - std::pow(a.beta2, static_cast<double>(a.step)));
  return ctx.dispatch(std::string("adamw.") + dtype_name(grad.dtype), kLoopLocal, {},
                      ctx.loop_groups(it.numel, kLoopLocal), 1, p,
                      {reads(grad), writes(state[0]), writes(state[1]), writes(state[2])});
}

ctl_status* run_sgd_step(const OpContext& ctx) {
  sdk::SgdProblem<DeviceView> sp;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_sgd(ctx, &sp));
  const DeviceView &grad = sp.grad, &param = sp.param, &buffer = sp.buffer;
  const bool has_buffer = sp.has_buffer;
  const ctl_sgd_attrs& a = sp.attrs;
  CTL_SDK_RETURN_IF_ERROR(expect_double(ctx));
  const DeviceView* views[3] = {&grad, &param, &buffer};
  const Iteration it = make_iteration(views, 3);
  if (it.numel == 0) return nullptr;
  Params p;
  p.add_iteration(it, views, 3);
  p.add_f64(a.lr);
  p.add_f64(a.momentum);
  p.add_f64(1 - a.dampening);
  p.add_f64(a.weight_decay);
  p.add(has_buffer ? 1u : 0u);
  p.add(a.nesterov ? 1u : 0u);
  return ctx.dispatch(std::string("sgd.") + dtype_name(grad.dtype), kLoopLocal, {},
                      ctx.loop_groups(it.numel, kLoopLocal), 1, p, {reads(grad), writes(param), writes(buffer)});
}

}  // namespace catalyst::vulkan
