// training.cpp — the fused loss and optimizer steps: cross_entropy, its backward,
// adamw_step and sgd_step (shaders/training.comp). Everything computes in double, so these
// need a device with shaderFloat64. The losses run one work-group per row over the last
// axis; MEAN and SUM keep each row's loss in a temporary that one group then adds in a
// fixed order: no float atomics anywhere.
#include <cmath>
#include <string>

#include "catalyst/sdk/adamw_attrs.hpp"
#include "catalyst/sdk/sgd_attrs.hpp"
#include "catalyst/sdk/view_check.hpp"
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

ctl_status* expect_scalar(const OpContext& ctx, const DeviceView& v, const char* what) {
  if (v.rank == 0) return nullptr;
  return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "%s must be a scalar (rank 0) for a MEAN or SUM reduction, not rank %u",
                  what, v.rank);
}

// v without its last axis: the walk over rows.
DeviceView leading(const DeviceView& v) {
  DeviceView out = v;
  out.rank = v.rank - 1;
  out.shape[out.rank] = 0;
  out.strides[out.rank] = 0;
  return out;
}

// ---- cross_entropy and cross_entropy_backward ------------------------------------------

struct CrossEntropy {
  DeviceView logits, target, grad, out;  // grad: cross_entropy_backward's grad_loss
  int64_t reduction = CTL_REDUCTION_MEAN;
  int64_t ignore_index = 0;
  bool ignore_set = false;
};

ctl_status* cross_entropy_views(const OpContext& ctx, bool backward, CrossEntropy* v) {
  const uint32_t inputs = backward ? 3 : 2;
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(inputs, inputs, 1, 1));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "logits", &v->logits));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(1, "target", &v->target));
  if (backward) CTL_SDK_RETURN_IF_ERROR(ctx.input(2, "grad_loss", &v->grad));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, backward ? "grad_logits" : "loss", &v->out));
  if (v->logits.rank == 0) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input 0 (logits) is a scalar; it needs a class axis");
  }
  if (raw_enum(v->target.dtype) != CTL_DTYPE_I32 && raw_enum(v->target.dtype) != CTL_DTYPE_I64) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input 1 (target) has dtype %s; class ids are i32 or i64",
                    dtype_name(v->target.dtype));
  }
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_leading_shape(v->target, "input 1 (target)", v->logits, "logits"));
  // The normalised form always carries attrs; a zeroed (or absent) struct means MEAN.
  ctl_cross_entropy_attrs attrs;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(
      ctx.attrs(&attrs, sizeof attrs, CTL_CROSS_ENTROPY_ATTRS_STRUCT_SIZE, "ctl_cross_entropy_attrs", &given));
  v->reduction = raw_enum(attrs.reduction);
  if (v->reduction < CTL_REDUCTION_MEAN || v->reduction > CTL_REDUCTION_NONE) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs.reduction %lld is not a ctl_reduction",
                    static_cast<long long>(v->reduction));
  }
  v->ignore_index = attrs.ignore_index;
  v->ignore_set = sdk::raw_bool(attrs.ignore_index_set);
  const bool per_row = v->reduction == CTL_REDUCTION_NONE;
  if (backward) {
    CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(v->grad, "input 2 (grad_loss)", v->logits.dtype));
    if (per_row) {
      CTL_SDK_RETURN_IF_ERROR(ctx.expect_leading_shape(v->grad, "input 2 (grad_loss)", v->logits, "logits"));
    } else {
      CTL_SDK_RETURN_IF_ERROR(expect_scalar(ctx, v->grad, "input 2 (grad_loss)"));
    }
    CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(v->out, "output 0 (grad_logits)", v->logits.dtype));
    return ctx.expect_same_shape(v->out, "output 0 (grad_logits)", v->logits, "input 0 (logits)");
  }
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(v->out, "output 0 (loss)", v->logits.dtype));
  if (per_row) return ctx.expect_leading_shape(v->out, "output 0 (loss)", v->logits, "logits");
  return expect_scalar(ctx, v->out, "output 0 (loss)");
}

std::string loss_variant(const char* kind, const CrossEntropy& v) {
  return std::string(kind) + "." + dtype_name(v.logits.dtype) + "." + dtype_name(v.target.dtype);
}

}  // namespace

ctl_status* run_cross_entropy(const OpContext& ctx) {
  CrossEntropy v;
  CTL_SDK_RETURN_IF_ERROR(cross_entropy_views(ctx, false, &v));
  CTL_SDK_RETURN_IF_ERROR(expect_double(ctx));
  const bool per_row = v.reduction == CTL_REDUCTION_NONE;
  const DeviceView z = leading(v.logits);
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
  CTL_SDK_RETURN_IF_ERROR(cross_entropy_views(ctx, true, &v));
  CTL_SDK_RETURN_IF_ERROR(expect_double(ctx));
  if (v.logits.numel() == 0) return nullptr;
  const bool per_row = v.reduction == CTL_REDUCTION_NONE;
  const bool mean = v.reduction == CTL_REDUCTION_MEAN;
  const DeviceView z = leading(v.logits);
  const DeviceView dz = leading(v.out);
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
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(1, 1, 3, 3));
  DeviceView grad, state[3];
  static const char* const names[3] = {"output 0 (param)", "output 1 (exp_avg)", "output 2 (exp_avg_sq)"};
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "grad", &grad));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "param", &state[0]));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(1, "exp_avg", &state[1]));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(2, "exp_avg_sq", &state[2]));
  for (int i = 0; i < 3; ++i) {
    CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(state[i], names[i], grad.dtype));
    CTL_SDK_RETURN_IF_ERROR(ctx.expect_same_shape(state[i], names[i], grad, "input 0 (grad)"));
    CTL_SDK_RETURN_IF_ERROR(ctx.check(sdk::check_distinct(state[i], names[i], "it is updated in place")));
  }
  ctl_adamw_attrs a;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&a, sizeof a, CTL_ADAMW_ATTRS_STRUCT_SIZE, "ctl_adamw_attrs", &given));
  if (!given) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs is NULL; adamw_step needs a ctl_adamw_attrs");
  CTL_SDK_RETURN_IF_ERROR(ctx.check(sdk::check_adamw_attrs(a)));
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
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(1, 1, 2, 2));
  DeviceView grad, param, buffer;
  bool has_buffer = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "grad", &grad));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "param", &param));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(1, "momentum_buf", &buffer, true, &has_buffer));
  ctl_sgd_attrs a;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&a, sizeof a, CTL_SGD_ATTRS_STRUCT_SIZE, "ctl_sgd_attrs", &given));
  if (!given) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs is NULL; sgd_step needs a ctl_sgd_attrs");
  CTL_SDK_RETURN_IF_ERROR(ctx.check(sdk::check_sgd_attrs(a, has_buffer)));
  if (!has_buffer) buffer = param;  // an unused stand-in, so the shader keeps one layout
  static const char* const names[2] = {"output 0 (param)", "output 1 (momentum_buf)"};
  const DeviceView* state[2] = {&param, &buffer};
  for (int i = 0; i < (has_buffer ? 2 : 1); ++i) {
    CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(*state[i], names[i], grad.dtype));
    CTL_SDK_RETURN_IF_ERROR(ctx.expect_same_shape(*state[i], names[i], grad, "input 0 (grad)"));
    CTL_SDK_RETURN_IF_ERROR(ctx.check(sdk::check_distinct(*state[i], names[i], "it is updated in place")));
  }
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
