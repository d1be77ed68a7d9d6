// training.cpp — the fused loss and optimizer steps: cross_entropy, its backward,
// adamw_step and sgd_step (kernels/training.cl).
//
// The losses run one work-group per row over the last axis, the row reductions in local
// memory with a power-of-two group size fixed by the kernel (never by the row count), so a
// result never depends on the launch size. MEAN and SUM keep each row's loss in a temporary
// that one group then adds in a fixed order: no float atomics anywhere.
#include <cmath>
#include <string>

#include "catalyst/sdk/bind_training.hpp"
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

// ---- cross_entropy and cross_entropy_backward ------------------------------------------

// The views and attrs of a loss call (sdk/bind_training.hpp).
using CrossEntropy = sdk::CrossEntropyProblem<DeviceView>;

std::string loss_defines(const CrossEntropy& v) {
  return std::string("-DTA=") + dtype_tag(v.logits.dtype) + " -DTB=" + dtype_tag(v.target.dtype);
}

}  // namespace

ctl_status* run_cross_entropy(const OpContext& ctx) {
  CrossEntropy v;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_cross_entropy(ctx, false, &v));
  const bool per_row = v.reduction == CTL_REDUCTION_NONE;
  const DeviceView z = sdk::without_last_axis(v.logits);
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
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_cross_entropy(ctx, true, &v));
  if (v.logits.numel() == 0) return nullptr;
  const bool per_row = v.reduction == CTL_REDUCTION_NONE;
  const DeviceView z = sdk::without_last_axis(v.logits);
  const DeviceView dz = sdk::without_last_axis(v.out);
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
  sdk::AdamwProblem<DeviceView> ap;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_adamw(ctx, &ap));
  const DeviceView& grad = ap.grad;
  const DeviceView* state = ap.state;
  const ctl_adamw_attrs& a = ap.attrs;
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
  sdk::SgdProblem<DeviceView> sp;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_sgd(ctx, &sp));
  const DeviceView &grad = sp.grad, &param = sp.param, &buffer = sp.buffer;
  const bool has_buffer = sp.has_buffer;
  const ctl_sgd_attrs& a = sp.attrs;
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
