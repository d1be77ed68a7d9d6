// training.cpp — the fused loss and optimizer steps: cross_entropy, its backward,
// adamw_step and sgd_step (kernels/training.cl).
//
// The losses run one work-group per row over the last axis, the row reductions in local
// memory with a power-of-two group size fixed by the kernel (never by the row count), so a
// result never depends on the launch size. MEAN and SUM keep each row's loss in a temporary
// that one group then adds in a fixed order: no float atomics anywhere.
#include <cmath>
#include <string>

#include "catalyst/sdk/adamw_attrs.hpp"
#include "catalyst/sdk/sgd_attrs.hpp"
#include "catalyst/sdk/view_check.hpp"
#include "kernels.h"

namespace catalyst::opencl {
namespace {

// The type MATH_T of training.cl: double where the device has it.
size_t math_size(const OpContext& ctx) {
  return ctx.device->has_fp64 ? sizeof(cl_double) : sizeof(cl_float);
}
ctl_dtype math_dtype(const OpContext& ctx) {
  return ctx.device->has_fp64 ? CTL_DTYPE_F64 : CTL_DTYPE_F32;
}

// The largest power of two up to 128 that `kernel` may run as one group: the tree
// reductions halve it down to one.
size_t group_size(const Kernel* kernel) {
  size_t local = 1;
  while (local * 2 <= 128 && local * 2 <= kernel->max_work_group_size) local *= 2;
  return local;
}

// Enough groups to fill the device; each loops over its share of `rows`.
size_t row_groups(const OpContext& ctx, int64_t rows) {
  const int64_t most = static_cast<int64_t>(ctx.device->compute_units ? ctx.device->compute_units : 1) * 64;
  return static_cast<size_t>(rows < most ? rows : most);
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

std::string loss_defines(const CrossEntropy& v) {
  return std::string("-DTA=") + dtype_tag(v.logits.dtype) + " -DTB=" + dtype_tag(v.target.dtype);
}

}  // namespace

ctl_status* run_cross_entropy(const OpContext& ctx) {
  CrossEntropy v;
  CTL_SDK_RETURN_IF_ERROR(cross_entropy_views(ctx, false, &v));
  const bool per_row = v.reduction == CTL_REDUCTION_NONE;
  const DeviceView z = leading(v.logits);
  // NONE walks the output with the rows; MEAN / SUM write the row losses to temporaries.
  DeviceView out_rows = per_row ? v.out : z;
  const DeviceView* views[3] = {&z, &v.target, &out_rows};
  const Iteration it = make_iteration(views, 3);
  const cl_long rows = it.numel;
  const cl_long c = v.logits.shape[v.logits.rank - 1];
  const cl_long zs = v.logits.strides[v.logits.rank - 1];
  if (per_row && rows == 0) return nullptr;

  const std::string defines = loss_defines(v);
  Temporary partial, counted;
  if (!per_row) {
    CTL_SDK_RETURN_IF_ERROR(ctx.temporary(static_cast<uint64_t>(rows) * math_size(ctx), &partial));
    CTL_SDK_RETURN_IF_ERROR(ctx.temporary(static_cast<uint64_t>(rows) * sizeof(cl_long), &counted));
  }
  const cl_long ignore_index = v.ignore_index;
  const cl_int ignore_set = v.ignore_set ? 1 : 0;
  if (rows > 0) {
    Kernel* k = nullptr;
    CTL_SDK_RETURN_IF_ERROR(ctx.kernel("training", defines, "cross_entropy_rows", &k));
    const size_t local = group_size(k);
    const size_t global = row_groups(ctx, rows) * local;
    const cl_int per_row_flag = per_row ? 1 : 0;
    CTL_SDK_RETURN_IF_ERROR(ctx.enqueue(k, 1, &global, &local, v.logits, it.strides[0], zs, v.target, it.strides[1],
                                        v.out, per_row ? it.strides[2] : cl_long8{}, partial.mem(), counted.mem(),
                                        per_row_flag, it.rank, it.shape, rows, c, ignore_index, ignore_set,
                                        LocalBytes{local * math_size(ctx)}));
  }
  if (per_row) return nullptr;
  Kernel* k = nullptr;
  CTL_SDK_RETURN_IF_ERROR(ctx.kernel("training", defines, "cross_entropy_total", &k));
  const size_t local = group_size(k);
  const cl_int mean = v.reduction == CTL_REDUCTION_MEAN ? 1 : 0;
  return ctx.enqueue(k, 1, &local, &local, partial.mem(), counted.mem(), rows, mean, v.out,
                     LocalBytes{local * math_size(ctx)}, LocalBytes{local * sizeof(cl_long)});
}

ctl_status* run_cross_entropy_backward(const OpContext& ctx) {
  CrossEntropy v;
  CTL_SDK_RETURN_IF_ERROR(cross_entropy_views(ctx, true, &v));
  if (v.logits.numel() == 0) return nullptr;
  const bool per_row = v.reduction == CTL_REDUCTION_NONE;
  const DeviceView z = leading(v.logits);
  const DeviceView dz = leading(v.out);
  DeviceView g_rows = per_row ? v.grad : z;
  const DeviceView* views[4] = {&z, &v.target, &dz, &g_rows};
  const Iteration it = make_iteration(views, 4);
  const cl_long rows = it.numel;
  const cl_long c = v.logits.shape[v.logits.rank - 1];
  const cl_long zs = v.logits.strides[v.logits.rank - 1];
  const cl_long dzs = v.out.strides[v.out.rank - 1];
  const cl_long ignore_index = v.ignore_index;
  const cl_int ignore_set = v.ignore_set ? 1 : 0;
  const cl_int mean = v.reduction == CTL_REDUCTION_MEAN ? 1 : 0;
  const std::string defines = loss_defines(v);

  Temporary count;
  if (mean) {
    CTL_SDK_RETURN_IF_ERROR(ctx.temporary(sizeof(cl_long), &count));
    Kernel* k = nullptr;
    CTL_SDK_RETURN_IF_ERROR(ctx.kernel("training", defines, "cross_entropy_count", &k));
    const size_t local = group_size(k);
    CTL_SDK_RETURN_IF_ERROR(ctx.enqueue(k, 1, &local, &local, v.target, it.strides[1], it.rank, it.shape, rows,
                                        ignore_index, ignore_set, count.mem(), LocalBytes{local * sizeof(cl_long)}));
  }
  Kernel* k = nullptr;
  CTL_SDK_RETURN_IF_ERROR(ctx.kernel("training", defines, "cross_entropy_backward_rows", &k));
  const size_t local = group_size(k);
  const size_t global = row_groups(ctx, rows) * local;
  const cl_int per_row_flag = per_row ? 1 : 0;
  return ctx.enqueue(k, 1, &global, &local, v.logits, it.strides[0], zs, v.target, it.strides[1], v.out, it.strides[2],
                     dzs, v.grad, per_row ? it.strides[3] : cl_long8{}, count.mem(), per_row_flag, mean, it.rank,
                     it.shape, rows, c, ignore_index, ignore_set, LocalBytes{local * math_size(ctx)});
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
  const DeviceView* views[4] = {&grad, &state[0], &state[1], &state[2]};
  const Iteration it = make_iteration(views, 4);
  if (it.numel == 0) return nullptr;
  // The bias corrections in double on the host, as the reference computes them.
  const double correction1 = 1 - std::pow(a.beta1, static_cast<double>(a.step));
  const double correction2 = 1 - std::pow(a.beta2, static_cast<double>(a.step));
  const ctl_dtype math = math_dtype(ctx);
  Kernel* k = nullptr;
  CTL_SDK_RETURN_IF_ERROR(ctx.kernel("training", std::string("-DTA=") + dtype_tag(grad.dtype), "adamw_step", &k));
  const cl_long n = it.numel;
  return ctx.launch(k, n, grad, it.strides[0], state[0], it.strides[1], state[1], it.strides[2], state[2],
                    it.strides[3], it.rank, it.shape, n, compute_scalar(math, a.lr),
                    compute_scalar(math, a.lr * a.weight_decay), compute_scalar(math, a.beta1),
                    compute_scalar(math, a.beta2), compute_scalar(math, a.eps), compute_scalar(math, correction1),
                    compute_scalar(math, correction2));
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
  if (!has_buffer) buffer = param;  // an unused stand-in, so the kernel keeps one signature
  static const char* const names[2] = {"output 0 (param)", "output 1 (momentum_buf)"};
  const DeviceView* state[2] = {&param, &buffer};
  for (int i = 0; i < (has_buffer ? 2 : 1); ++i) {
    CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(*state[i], names[i], grad.dtype));
    CTL_SDK_RETURN_IF_ERROR(ctx.expect_same_shape(*state[i], names[i], grad, "input 0 (grad)"));
    CTL_SDK_RETURN_IF_ERROR(ctx.check(sdk::check_distinct(*state[i], names[i], "it is updated in place")));
  }
  const DeviceView* views[3] = {&grad, &param, &buffer};
  const Iteration it = make_iteration(views, 3);
  if (it.numel == 0) return nullptr;
  const ctl_dtype math = math_dtype(ctx);
  Kernel* k = nullptr;
  CTL_SDK_RETURN_IF_ERROR(ctx.kernel("training", std::string("-DTA=") + dtype_tag(grad.dtype), "sgd_step", &k));
  const cl_long n = it.numel;
  const cl_int has_buffer_flag = has_buffer ? 1 : 0, nesterov_flag = a.nesterov ? 1 : 0;
  return ctx.launch(k, n, grad, it.strides[0], param, it.strides[1], buffer, it.strides[2], it.rank, it.shape, n,
                    compute_scalar(math, a.lr), compute_scalar(math, a.momentum), compute_scalar(math, 1 - a.dampening),
                    compute_scalar(math, a.weight_decay), has_buffer_flag, nesterov_flag);
}

}  // namespace catalyst::opencl
