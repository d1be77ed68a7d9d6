// conv_pool.cpp — direct convolution and pooling over NCHW views: conv2d, its two backward
// forms, max_pool2d, avg_pool2d and their backward forms (kernels/conv_pool.cl).
//
// One work-item per output element, any strides, each element's terms added in a fixed
// order in double where the device has it: results never depend on the launch size, and
// the backward forms gather rather than scatter, so they need no atomics. The checks are
// sdk/conv_geometry.hpp's, as the CPU plugin's are, so both report a malformed call alike.
#include <string>

#include "catalyst/sdk/conv_geometry.hpp"
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

// The views of a conv2d call and their sizes (N, C, H, W, O, ...; sdk/conv_geometry.hpp).
struct Conv : sdk::Conv2dGeometry {
  DeviceView x, w, bias, dy, out;
  bool has_bias = false;
};

// op: CTL_OP_CONV2D (x, w, bias|NULL -> y), CTL_OP_CONV2D_BACKWARD_INPUT (dy, x, w -> dx),
// CTL_OP_CONV2D_BACKWARD_WEIGHT (dy, x, w -> dw).
ctl_status* conv_views(const OpContext& ctx, ctl_op_id op, Conv* v) {
  const bool forward = op == CTL_OP_CONV2D;
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(forward ? 2 : 3, 3, 1, 1));
  const char* out_name =
      forward ? "output 0 (y)" : (op == CTL_OP_CONV2D_BACKWARD_INPUT ? "output 0 (dx)" : "output 0 (dweight)");
  if (forward) {
    CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "x", &v->x));
    CTL_SDK_RETURN_IF_ERROR(ctx.input(1, "weight", &v->w));
    CTL_SDK_RETURN_IF_ERROR(ctx.input(2, "bias", &v->bias, true, &v->has_bias));
    CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "y", &v->out));
  } else {
    CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "dy", &v->dy));
    CTL_SDK_RETURN_IF_ERROR(ctx.input(1, "x", &v->x));
    CTL_SDK_RETURN_IF_ERROR(ctx.input(2, "weight", &v->w));
    CTL_SDK_RETURN_IF_ERROR(ctx.output(0, op == CTL_OP_CONV2D_BACKWARD_INPUT ? "dx" : "dweight", &v->out));
  }
  const char* x_name = forward ? "input 0 (x)" : "input 1 (x)";
  const char* w_name = forward ? "input 1 (weight)" : "input 2 (weight)";
  const ctl_dtype dtype = v->x.dtype;
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(v->w, w_name, dtype));
  if (v->has_bias) CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(v->bias, "input 2 (bias)", dtype));
  if (!forward) CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(v->dy, "input 0 (dy)", dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(v->out, out_name, dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.check(sdk::check_rank4(v->x, x_name)));
  CTL_SDK_RETURN_IF_ERROR(ctx.check(sdk::check_rank4(v->w, w_name)));

  // The normalised form always carries attrs; a zeroed (or absent) struct means the defaults.
  ctl_conv2d_attrs a;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&a, sizeof a, CTL_CONV2D_ATTRS_STRUCT_SIZE, "ctl_conv2d_attrs", &given));
  CTL_SDK_RETURN_IF_ERROR(ctx.check(sdk::conv2d_geometry(a, v->x.shape, v->w.shape, v)));
  const int64_t y_shape[4] = {v->N, v->O, v->OH, v->OW};
  if (forward) {
    if (v->has_bias && (v->bias.rank != 1 || v->bias.shape[0] != v->O)) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input 2 (bias) must be 1-D of length %lld (weight's outputs)",
                      static_cast<long long>(v->O));
    }
    CTL_SDK_RETURN_IF_ERROR(ctx.check(sdk::check_shape4(v->out, out_name, y_shape)));
  } else {
    CTL_SDK_RETURN_IF_ERROR(ctx.check(sdk::check_shape4(v->dy, "input 0 (dy)", y_shape)));
    const DeviceView& target = op == CTL_OP_CONV2D_BACKWARD_INPUT ? v->x : v->w;
    const int64_t shape[4] = {target.shape[0], target.shape[1], target.shape[2], target.shape[3]};
    CTL_SDK_RETURN_IF_ERROR(ctx.check(sdk::check_shape4(v->out, out_name, shape)));
  }
  return ctx.check(sdk::check_distinct(v->out, out_name));
}

ctl_status* run_conv(const OpContext& ctx, ctl_op_id op) {
  Conv v;
  CTL_SDK_RETURN_IF_ERROR(conv_views(ctx, op, &v));
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

// The views of a pooling call and their sizes (sdk/conv_geometry.hpp).
struct Pool : sdk::Pool2dGeometry {
  DeviceView x, dy, out;
};

ctl_status* pool_views(const OpContext& ctx, bool backward, Pool* v) {
  const uint32_t inputs = backward ? 2 : 1;
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(inputs, inputs, 1, 1));
  if (backward) CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "dy", &v->dy));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(backward ? 1 : 0, "x", &v->x));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, backward ? "dx" : "y", &v->out));
  const char* x_name = backward ? "input 1 (x)" : "input 0 (x)";
  const char* out_name = backward ? "output 0 (dx)" : "output 0 (y)";
  if (backward) CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(v->dy, "input 0 (dy)", v->x.dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(v->out, out_name, v->x.dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.check(sdk::check_rank4(v->x, x_name)));
  ctl_pool2d_attrs a;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&a, sizeof a, CTL_POOL2D_ATTRS_STRUCT_SIZE, "ctl_pool2d_attrs", &given));
  if (!given) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs is NULL; pooling needs a ctl_pool2d_attrs");
  CTL_SDK_RETURN_IF_ERROR(ctx.check(sdk::pool2d_geometry(a, v->x.shape, v)));
  const int64_t y_shape[4] = {v->N, v->C, v->OH, v->OW};
  if (backward) {
    CTL_SDK_RETURN_IF_ERROR(ctx.check(sdk::check_shape4(v->dy, "input 0 (dy)", y_shape)));
    const int64_t x_shape[4] = {v->N, v->C, v->H, v->W};
    CTL_SDK_RETURN_IF_ERROR(ctx.check(sdk::check_shape4(v->out, out_name, x_shape)));
  } else {
    CTL_SDK_RETURN_IF_ERROR(ctx.check(sdk::check_shape4(v->out, out_name, y_shape)));
  }
  return ctx.check(sdk::check_distinct(v->out, out_name));
}

ctl_status* run_pool(const OpContext& ctx, bool backward, bool max) {
  Pool v;
  CTL_SDK_RETURN_IF_ERROR(pool_views(ctx, backward, &v));
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
