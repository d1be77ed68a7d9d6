// conv_pool.cpp — direct convolution and pooling over NCHW views: conv2d, its two backward
// forms, max_pool2d, avg_pool2d and their backward forms (kernels/conv_pool.cl).
//
// One work-item per output element, any strides, each element's terms added in a fixed
// order in double where the device has it: results never depend on the launch size, and
// the backward forms gather rather than scatter, so they need no atomics. The calls are read
// by sdk/bind_conv_pool.hpp, as every plugin's are, so all report a malformed call alike.
#include <string>

#include "catalyst/sdk/bind_conv_pool.hpp"
#include "kernels.h"

namespace catalyst::opencl {
namespace {

cl_long4 strides4(const DeviceView& v) {
  cl_long4 s{};
  for (int i = 0; i < 4; ++i) s.s[i] = v.strides[i];
  return s;
}

cl_long4 shape4(const DeviceView& v) {
  cl_long4 s{};
  for (int i = 0; i < 4; ++i) s.s[i] = v.shape[i];
  return s;
}

std::string dtype_define(ctl_dtype dtype) {
  return std::string("-DTA=") + dtype_tag(dtype);
}

// ---- conv2d and its backward forms --------------------------------------------------

// The views of a conv2d call and their sizes (sdk/bind_conv_pool.hpp).
using Conv = sdk::ConvProblem<DeviceView>;

ctl_status* run_conv(const OpContext& ctx, ctl_op_id op) {
  Conv v;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_conv(ctx, op, &v));
  const cl_long n = v.out.numel();
  if (n == 0) return nullptr;
  const cl_long4 x_shape = {{v.N, v.C, v.H, v.W}};
  const cl_long4 w_shape = {{v.O, v.Cg, v.KH, v.KW}};
  const cl_long2 out_hw = {{v.OH, v.OW}};
  const cl_long8 geo = {{v.sh, v.sw, v.ph, v.pw, v.dh, v.dw, v.Og, 0}};
  Kernel* k = nullptr;
  if (op == CTL_OP_CONV2D) {
    CTL_SDK_RETURN_IF_ERROR(ctx.kernel("conv_pool", dtype_define(v.x.dtype), "conv2d", &k));
    // Without a bias the kernel never reads its view: x stands in for the buffer argument.
    const DeviceView& bias = v.has_bias ? v.bias : v.x;
    const cl_long bias_stride = v.has_bias ? v.bias.strides[0] : 0;
    const cl_int has_bias = v.has_bias ? 1 : 0;
    return ctx.launch(k, n, v.x, strides4(v.x), v.w, strides4(v.w), bias, bias_stride, has_bias, v.out, strides4(v.out),
                      x_shape, w_shape, out_hw, geo, n);
  }
  if (op == CTL_OP_CONV2D_BACKWARD_INPUT) {
    CTL_SDK_RETURN_IF_ERROR(ctx.kernel("conv_pool", dtype_define(v.x.dtype), "conv2d_backward_input", &k));
    return ctx.launch(k, n, v.dy, strides4(v.dy), v.w, strides4(v.w), v.out, strides4(v.out), x_shape, w_shape, out_hw,
                      geo, n);
  }
  CTL_SDK_RETURN_IF_ERROR(ctx.kernel("conv_pool", dtype_define(v.x.dtype), "conv2d_backward_weight", &k));
  return ctx.launch(k, n, v.dy, strides4(v.dy), v.x, strides4(v.x), v.out, strides4(v.out), x_shape, w_shape, out_hw,
                    geo, n);
}

// ---- pooling ------------------------------------------------------------------------

// The views of a pooling call and their sizes (sdk/bind_conv_pool.hpp).
using Pool = sdk::PoolProblem<DeviceView>;

ctl_status* run_pool(const OpContext& ctx, bool backward, bool max) {
  Pool v;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_pool(ctx, backward, &v));
  const cl_long n = v.out.numel();
  if (n == 0) return nullptr;
  const cl_long4 x_shape = shape4(v.x);
  const cl_long2 out_hw = {{v.OH, v.OW}};
  const cl_long8 geo = {{v.kh, v.kw, v.sh, v.sw, v.ph, v.pw, v.exclude_padding ? 1 : 0, 0}};
  const cl_int is_max = max ? 1 : 0;
  Kernel* k = nullptr;
  if (!backward) {
    CTL_SDK_RETURN_IF_ERROR(ctx.kernel("conv_pool", dtype_define(v.x.dtype), "pool2d", &k));
    return ctx.launch(k, n, v.x, strides4(v.x), v.out, strides4(v.out), x_shape, out_hw, geo, is_max, n);
  }
  CTL_SDK_RETURN_IF_ERROR(ctx.kernel("conv_pool", dtype_define(v.x.dtype), "pool2d_backward", &k));
  return ctx.launch(k, n, v.dy, strides4(v.dy), v.x, strides4(v.x), v.out, strides4(v.out), x_shape, out_hw, geo,
                    is_max, n);
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

}  // namespace catalyst::opencl
