// normalization.cpp — softmax and log_softmax along any axis, layer_norm and rms_norm over
// the last axis, and the backward forms of all four (ABI 1.1). Every row is one work-group
// of kernels/normalization.cl with its max and sums in local memory; dweight / dbias sum
// over rows in fixed blocks whose partials are added in block order, so no result depends
// on the launch size. The calls are read by sdk/bind_normalization.hpp.
#include <algorithm>
#include <initializer_list>
#include <string>

#include "catalyst/sdk/bind_normalization.hpp"
#include "kernels.h"

namespace catalyst::opencl {
namespace {

constexpr size_t kMostGroupSize = 256;
constexpr int64_t kParamBlockRows = 1024;  // rows per dweight / dbias partial

using Rows = BasicIteration<5>;

// x's dtype as TA and its statistics' dtype as TS.
std::string defines(ctl_dtype dtype) {
  return std::string("-DTA=") + dtype_tag(dtype) + " -DTS=" + dtype_tag(sdk::norm_stat_dtype(dtype));
}

// One work-group per row: a power-of-two local size no larger than the row needs, and at
// most as many groups as keep every compute unit busy (the kernels loop over the rest).
struct RowLaunch {
  size_t global = 0;
  size_t local = 1;
};
RowLaunch row_launch(const OpContext& ctx, const Kernel* k, int64_t rows, int64_t n) {
  size_t most = std::min(k->max_work_group_size, kMostGroupSize);
  if (ctx.device->local_memory_size > 0) most = std::min<size_t>(most, ctx.device->local_memory_size / 16);
  RowLaunch launch;
  while (launch.local * 2 <= most && static_cast<int64_t>(launch.local) < n) launch.local *= 2;
  const size_t groups =
      std::min<size_t>(static_cast<size_t>(rows), static_cast<size_t>(ctx.device->compute_units) * 256);
  launch.global = groups * launch.local;
  return launch;
}

// The epsilon of a compute in MATH_T (double where the device has it).
Scalar math_scalar(const OpContext& ctx, double value) {
  return compute_scalar(ctx.device->has_fp64 ? CTL_DTYPE_F64 : CTL_DTYPE_F32, value);
}

ctl_status* run_norm(const OpContext& ctx, bool layer) {
  sdk::NormProblem<DeviceView> np;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_norm(ctx, layer, &np));
  const DeviceView &x = np.x, &weight = np.weight, &bias = np.bias, &y = np.y, &mean = np.mean, &rstd = np.rstd;
  const bool has_weight = np.has_weight, has_bias = np.has_bias, has_mean = np.has_mean, has_rstd = np.has_rstd;
  using sdk::strides_of;
  const uint32_t last = x.rank - 1;
  // Stats have rank x.rank - 1: their strides line up with x's leading axes.
  const Rows rows =
      make_rows(x.rank, x.shape, last, {x.strides, y.strides, strides_of(mean, has_mean), strides_of(rstd, has_rstd)});
  if (rows.numel == 0) return nullptr;
  const int64_t n = x.shape[last];
  Kernel* k = nullptr;
  CTL_SDK_RETURN_IF_ERROR(ctx.kernel("normalization", defines(x.dtype), "norm_rows", &k));
  const RowLaunch launch = row_launch(ctx, k, rows.numel, n);
  // An absent view still fills its kernel arguments: it passes x's buffer, which the kernel
  // reads through that argument only when the matching has_* flag is set, never here.
  const DeviceView& w = has_weight ? weight : x;
  const DeviceView& b = has_bias ? bias : x;
  const DeviceView& mo = has_mean ? mean : y;
  const DeviceView& ro = has_rstd ? rstd : y;
  const cl_long w_step = has_weight ? weight.strides[0] : 0, b_step = has_bias ? bias.strides[0] : 0;
  return ctx.enqueue(k, 1, &launch.global, &launch.local, x, rows.strides[0], static_cast<cl_long>(x.strides[last]), y,
                     rows.strides[1], static_cast<cl_long>(y.strides[last]), w, w_step, b, b_step, mo, rows.strides[2],
                     ro, rows.strides[3], rows.rank, rows.shape, static_cast<cl_long>(rows.numel),
                     static_cast<cl_long>(n), cl_int{layer}, cl_int{has_weight}, cl_int{has_bias}, cl_int{has_mean},
                     cl_int{has_rstd}, math_scalar(ctx, np.eps), LocalBytes{launch.local * 8});
}

ctl_status* run_norm_backward(const OpContext& ctx, bool layer) {
  sdk::NormBackwardProblem<DeviceView> v;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_norm_backward(ctx, layer, &v));
  const DeviceView& x = v.x;
  const uint32_t last = x.rank - 1;
  const int64_t n = x.shape[last];
  const std::string defs = defines(x.dtype);
  const DeviceView& mean = layer ? v.mean : v.rstd;  // rms_norm never reads its mean
  const Rows rows = make_rows(
      x.rank, x.shape, last, {v.dy.strides, x.strides, v.dx.strides, layer ? v.mean.strides : nullptr, v.rstd.strides});
  const cl_long row_count = rows.numel, length = n;
  const cl_long dy_step = v.dy.strides[last], x_step = x.strides[last], dx_step = v.dx.strides[last];
  if (rows.numel > 0 && n > 0) {
    Kernel* k = nullptr;
    CTL_SDK_RETURN_IF_ERROR(ctx.kernel("normalization", defs, "norm_backward_rows", &k));
    const RowLaunch launch = row_launch(ctx, k, rows.numel, n);
    const DeviceView& w = v.has_weight ? v.weight : x;
    const cl_long w_step = v.has_weight ? v.weight.strides[0] : 0;
    CTL_SDK_RETURN_IF_ERROR(ctx.enqueue(k, 1, &launch.global, &launch.local, v.dy, rows.strides[0], dy_step, x,
                                        rows.strides[1], x_step, v.dx, rows.strides[2], dx_step, mean, rows.strides[3],
                                        v.rstd, rows.strides[4], w, w_step, rows.rank, rows.shape, row_count, length,
                                        cl_int{layer}, cl_int{v.has_weight}, LocalBytes{launch.local * 8}));
  }
  if (!(v.has_dweight || v.has_dbias) || n == 0) return nullptr;

  // dweight = sum over rows of dy * xh, dbias = sum over rows of dy: per block of rows,
  // then the blocks in order.
  const int64_t blocks = (rows.numel + kParamBlockRows - 1) / kParamBlockRows;
  Temporary partial;
  CTL_SDK_RETURN_IF_ERROR(ctx.temporary(static_cast<uint64_t>(2 * blocks * n) * 8, &partial));
  const cl_long block_rows = kParamBlockRows, block_count = blocks;
  if (blocks > 0) {
    Kernel* k = nullptr;
    CTL_SDK_RETURN_IF_ERROR(ctx.kernel("normalization", defs, "norm_params_partial", &k));
    CTL_SDK_RETURN_IF_ERROR(ctx.launch(k, blocks * n, v.dy, rows.strides[0], dy_step, x, rows.strides[1], x_step, mean,
                                       rows.strides[3], v.rstd, rows.strides[4], rows.rank, rows.shape, row_count,
                                       length, cl_int{layer}, block_rows, block_count, partial.mem()));
  }
  Kernel* combine = nullptr;
  CTL_SDK_RETURN_IF_ERROR(ctx.kernel("normalization", defs, "norm_params_combine", &combine));
  const DeviceView& dw = v.has_dweight ? v.dweight : v.dx;
  const DeviceView& db = v.has_dbias ? v.dbias : v.dx;
  const cl_long dw_step = v.has_dweight ? v.dweight.strides[0] : 0, db_step = v.has_dbias ? v.dbias.strides[0] : 0;
  return ctx.launch(combine, n, partial.mem(), block_count, length, dw, dw_step, db, db_step, cl_int{v.has_dweight},
                    cl_int{v.has_dbias});
}

}  // namespace

ctl_status* run_softmax(const OpContext& ctx) {
  sdk::SoftmaxProblem<DeviceView> sp;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_softmax(ctx, &sp));
  const DeviceView &x = sp.x, &y = sp.y;
  if (x.numel() == 0) return nullptr;
  const uint32_t a = sp.axis;
  const Rows rows = make_rows(x.rank, x.shape, a, {x.strides, y.strides});
  const int64_t n = x.shape[a];
  Kernel* k = nullptr;
  CTL_SDK_RETURN_IF_ERROR(ctx.kernel("normalization", defines(x.dtype), "softmax_rows", &k));
  const RowLaunch launch = row_launch(ctx, k, rows.numel, n);
  const cl_int log_form = sp.log_form;
  return ctx.enqueue(k, 1, &launch.global, &launch.local, x, rows.strides[0], static_cast<cl_long>(x.strides[a]), y,
                     rows.strides[1], static_cast<cl_long>(y.strides[a]), rows.rank, rows.shape,
                     static_cast<cl_long>(rows.numel), static_cast<cl_long>(n), log_form, LocalBytes{launch.local * 8});
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
  const Rows rows = make_rows(y.rank, y.shape, sb.axis, {y.strides, dy.strides, dx.strides});
  const int64_t n = sb.length();
  const cl_long y_step = sb.step(y), dy_step = sb.step(dy), dx_step = sb.step(dx);
  Kernel* k = nullptr;
  CTL_SDK_RETURN_IF_ERROR(ctx.kernel("normalization", defines(y.dtype), "softmax_backward_rows", &k));
  const RowLaunch launch = row_launch(ctx, k, rows.numel, n);
  const cl_int log_form = sb.log_form;
  return ctx.enqueue(k, 1, &launch.global, &launch.local, y, rows.strides[0], y_step, dy, rows.strides[1], dy_step, dx,
                     rows.strides[2], dx_step, rows.rank, rows.shape, static_cast<cl_long>(rows.numel),
                     static_cast<cl_long>(n), log_form, LocalBytes{launch.local * 8});
}

ctl_status* run_layer_norm_backward(const OpContext& ctx) {
  return run_norm_backward(ctx, true);
}

ctl_status* run_rms_norm_backward(const OpContext& ctx) {
  return run_norm_backward(ctx, false);
}

}  // namespace catalyst::opencl
