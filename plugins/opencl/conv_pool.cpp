// conv_pool.cpp — direct convolution and pooling over NCHW views: conv2d, its two backward
// forms, max_pool2d, avg_pool2d and their backward forms (kernels/conv_pool.cl).
//
// One work-item per output element, any strides, each element's terms added in a fixed
// order in double where the device has it: results never depend on the launch size, and
// the backward forms gather rather than scatter, so they need no atomics. The checks are
// the CPU plugin's, so both report a malformed call alike.
#include <algorithm>
#include <cstring>
#include <string>

#include "kernels.h"

namespace catalyst::opencl {
namespace {

constexpr int64_t kAttrLimit = int64_t{1} << 30;  // stride, padding, dilation, kernel: as the core allows

// A malformed call may hold any byte in a bool field: read the byte, not the bool.
inline bool raw_bool(const bool& field) {
  unsigned char byte;
  std::memcpy(&byte, &field, 1);
  return byte != 0;
}

// The output size of a window sweep, or -1 when the window does not fit (or overflows).
int64_t sweep(int64_t size, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation) {
  int64_t span, room;
  if (kernel < 1 || __builtin_mul_overflow(dilation, kernel - 1, &span) || __builtin_add_overflow(span, 1, &span))
    return -1;
  if (__builtin_add_overflow(size, 2 * padding, &room) || __builtin_sub_overflow(room, span, &room)) return -1;
  return room < 0 ? -1 : room / stride + 1;
}

ctl_status* expect_rank4(const OpContext& ctx, const DeviceView& v, const char* what) {
  if (v.rank == 4) return nullptr;
  return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "%s has rank %u; it must be rank 4 (N, C, H, W)", what, v.rank);
}

ctl_status* expect_shape4(const OpContext& ctx, const DeviceView& v, const char* what, const int64_t (&shape)[4]) {
  CTL_SDK_RETURN_IF_ERROR(expect_rank4(ctx, v, what));
  if (std::equal(shape, shape + 4, v.shape)) return nullptr;
  return ctx.fail(
      CTL_STATUS_INVALID_ARGUMENT, "%s has shape [%lld, %lld, %lld, %lld], expected [%lld, %lld, %lld, %lld]", what,
      static_cast<long long>(v.shape[0]), static_cast<long long>(v.shape[1]), static_cast<long long>(v.shape[2]),
      static_cast<long long>(v.shape[3]), static_cast<long long>(shape[0]), static_cast<long long>(shape[1]),
      static_cast<long long>(shape[2]), static_cast<long long>(shape[3]));
}

// Outputs are written by one work-item per element: a broadcast axis would make them race.
ctl_status* expect_distinct(const OpContext& ctx, const DeviceView& v, const char* what) {
  for (uint32_t d = 0; d < v.rank; ++d) {
    if (v.strides[d] == 0 && v.shape[d] > 1) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT,
                      "%s is broadcast (stride 0) along axis %u; outputs need distinct elements", what, d);
    }
  }
  return nullptr;
}

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

struct Conv {
  DeviceView x, w, bias, dy, out;
  bool has_bias = false;
  int64_t N = 0, C = 0, H = 0, W = 0;  // x
  int64_t O = 0, G = 1, Cg = 0, Og = 0, KH = 0, KW = 0;
  int64_t OH = 0, OW = 0;
  int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
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
  CTL_SDK_RETURN_IF_ERROR(expect_rank4(ctx, v->x, x_name));
  CTL_SDK_RETURN_IF_ERROR(expect_rank4(ctx, v->w, w_name));

  // The normalised form always carries attrs; a zeroed (or absent) struct means the defaults.
  ctl_conv2d_attrs a;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&a, sizeof a, CTL_CONV2D_ATTRS_STRUCT_SIZE, "ctl_conv2d_attrs", &given));
  for (int k = 0; k < 2; ++k) {
    if (a.stride[k] == 0) a.stride[k] = 1;
    if (a.dilation[k] == 0) a.dilation[k] = 1;
    if (a.stride[k] < 1 || a.stride[k] > kAttrLimit || a.dilation[k] < 1 || a.dilation[k] > kAttrLimit ||
        a.padding[k] < 0 || a.padding[k] > kAttrLimit) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT,
                      "attrs hold stride %lld, padding %lld, dilation %lld on axis %d; stride and dilation must be "
                      ">= 1 and padding >= 0",
                      static_cast<long long>(a.stride[k]), static_cast<long long>(a.padding[k]),
                      static_cast<long long>(a.dilation[k]), k);
    }
  }
  if (a.groups == 0) a.groups = 1;
  v->sh = a.stride[0], v->sw = a.stride[1];
  v->ph = a.padding[0], v->pw = a.padding[1];
  v->dh = a.dilation[0], v->dw = a.dilation[1];
  v->G = a.groups;
  v->N = v->x.shape[0], v->C = v->x.shape[1], v->H = v->x.shape[2], v->W = v->x.shape[3];
  v->O = v->w.shape[0], v->KH = v->w.shape[2], v->KW = v->w.shape[3];
  if (v->G < 1 || v->C % v->G != 0 || v->O % v->G != 0 || v->w.shape[1] != v->C / v->G) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT,
                    "x has %lld channels, weight has %lld outputs and %lld channels, groups is %lld; weight must be "
                    "(O, C / groups, KH, KW) with C and O multiples of groups",
                    static_cast<long long>(v->C), static_cast<long long>(v->O), static_cast<long long>(v->w.shape[1]),
                    static_cast<long long>(v->G));
  }
  v->Cg = v->C / v->G;
  v->Og = v->O / v->G;
  v->OH = sweep(v->H, v->KH, v->sh, v->ph, v->dh);
  v->OW = sweep(v->W, v->KW, v->sw, v->pw, v->dw);
  if (v->OH < 1 || v->OW < 1) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT,
                    "a %lldx%lld kernel (dilation %lld, %lld) does not fit the %lldx%lld input with padding %lld, %lld",
                    static_cast<long long>(v->KH), static_cast<long long>(v->KW), static_cast<long long>(v->dh),
                    static_cast<long long>(v->dw), static_cast<long long>(v->H), static_cast<long long>(v->W),
                    static_cast<long long>(v->ph), static_cast<long long>(v->pw));
  }
  const int64_t y_shape[4] = {v->N, v->O, v->OH, v->OW};
  if (forward) {
    if (v->has_bias && (v->bias.rank != 1 || v->bias.shape[0] != v->O)) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input 2 (bias) must be 1-D of length %lld (weight's outputs)",
                      static_cast<long long>(v->O));
    }
    CTL_SDK_RETURN_IF_ERROR(expect_shape4(ctx, v->out, out_name, y_shape));
  } else {
    CTL_SDK_RETURN_IF_ERROR(expect_shape4(ctx, v->dy, "input 0 (dy)", y_shape));
    const DeviceView& target = op == CTL_OP_CONV2D_BACKWARD_INPUT ? v->x : v->w;
    const int64_t shape[4] = {target.shape[0], target.shape[1], target.shape[2], target.shape[3]};
    CTL_SDK_RETURN_IF_ERROR(expect_shape4(ctx, v->out, out_name, shape));
  }
  return expect_distinct(ctx, v->out, out_name);
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

struct Pool {
  DeviceView x, dy, out;
  int64_t N = 0, C = 0, H = 0, W = 0, OH = 0, OW = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0;
  bool exclude_padding = false;
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
  CTL_SDK_RETURN_IF_ERROR(expect_rank4(ctx, v->x, x_name));
  ctl_pool2d_attrs a;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&a, sizeof a, CTL_POOL2D_ATTRS_STRUCT_SIZE, "ctl_pool2d_attrs", &given));
  if (!given) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs is NULL; pooling needs a ctl_pool2d_attrs");
  for (int k = 0; k < 2; ++k) {
    if (a.stride[k] == 0) a.stride[k] = a.kernel[k];
    if (a.kernel[k] < 1 || a.kernel[k] > kAttrLimit || a.stride[k] < 1 || a.stride[k] > kAttrLimit ||
        a.padding[k] < 0 || a.padding[k] > a.kernel[k] / 2) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT,
                      "attrs hold kernel %lld, stride %lld, padding %lld on axis %d; kernel and stride must be >= 1 "
                      "and padding in [0, kernel / 2]",
                      static_cast<long long>(a.kernel[k]), static_cast<long long>(a.stride[k]),
                      static_cast<long long>(a.padding[k]), k);
    }
  }
  v->kh = a.kernel[0], v->kw = a.kernel[1];
  v->sh = a.stride[0], v->sw = a.stride[1];
  v->ph = a.padding[0], v->pw = a.padding[1];
  v->exclude_padding = raw_bool(a.exclude_padding);
  v->N = v->x.shape[0], v->C = v->x.shape[1], v->H = v->x.shape[2], v->W = v->x.shape[3];
  v->OH = sweep(v->H, v->kh, v->sh, v->ph, 1);
  v->OW = sweep(v->W, v->kw, v->sw, v->pw, 1);
  if (v->OH < 1 || v->OW < 1) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT,
                    "a %lldx%lld window does not fit the %lldx%lld input with padding %lld, %lld",
                    static_cast<long long>(v->kh), static_cast<long long>(v->kw), static_cast<long long>(v->H),
                    static_cast<long long>(v->W), static_cast<long long>(v->ph), static_cast<long long>(v->pw));
  }
  const int64_t y_shape[4] = {v->N, v->C, v->OH, v->OW};
  if (backward) {
    CTL_SDK_RETURN_IF_ERROR(expect_shape4(ctx, v->dy, "input 0 (dy)", y_shape));
    const int64_t x_shape[4] = {v->N, v->C, v->H, v->W};
    CTL_SDK_RETURN_IF_ERROR(expect_shape4(ctx, v->out, out_name, x_shape));
  } else {
    CTL_SDK_RETURN_IF_ERROR(expect_shape4(ctx, v->out, out_name, y_shape));
  }
  return expect_distinct(ctx, v->out, out_name);
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
