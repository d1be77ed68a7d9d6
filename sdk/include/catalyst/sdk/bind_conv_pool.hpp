// bind_conv_pool.hpp — conv2d, max_pool2d, avg_pool2d and their backward forms read and
// checked into problems over NCHW views: the views, and the sizes and window of
// conv_geometry.hpp. For any plugin context with the call reader's members (op_call.hpp)
// and any view with rank, shape and strides. The output is checked distinct (no stride-0
// axis of size > 1): one element per work-item, never a race.
#pragma once

#include <cstdint>

#include "catalyst/sdk/conv_geometry.hpp"
#include "catalyst/sdk/status.hpp"
#include "catalyst/sdk/view_check.hpp"
#include "catalyst_plugin.h"

namespace catalyst::sdk {

// The views of a conv2d call and their sizes (N, C, H, W, O, ...; sdk/conv_geometry.hpp).
template <class View>
struct ConvProblem : Conv2dGeometry {
  View x, w, bias, dy, out;  // out: y, dx or dweight
  bool has_bias = false;
};

// op: CTL_OP_CONV2D (x, w, bias|NULL -> y), CTL_OP_CONV2D_BACKWARD_INPUT (dy, x, w -> dx),
// CTL_OP_CONV2D_BACKWARD_WEIGHT (dy, x, w -> dw).
template <class Ctx, class View>
ctl_status* bind_conv(const Ctx& ctx, ctl_op_id op, ConvProblem<View>* v) {
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
  CTL_SDK_RETURN_IF_ERROR(ctx.check(check_rank4(v->x, x_name)));
  CTL_SDK_RETURN_IF_ERROR(ctx.check(check_rank4(v->w, w_name)));

  // The normalised form always carries attrs; a zeroed (or absent) struct means the defaults.
  ctl_conv2d_attrs a;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&a, sizeof a, CTL_CONV2D_ATTRS_STRUCT_SIZE, "ctl_conv2d_attrs", &given));
  CTL_SDK_RETURN_IF_ERROR(ctx.check(conv2d_geometry(a, v->x.shape, v->w.shape, v)));
  const int64_t y_shape[4] = {v->N, v->O, v->OH, v->OW};
  if (forward) {
    if (v->has_bias && (v->bias.rank != 1 || v->bias.shape[0] != v->O)) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input 2 (bias) must be 1-D of length %lld (weight's outputs)",
                      static_cast<long long>(v->O));
    }
    CTL_SDK_RETURN_IF_ERROR(ctx.check(check_shape4(v->out, out_name, y_shape)));
  } else {
    CTL_SDK_RETURN_IF_ERROR(ctx.check(check_shape4(v->dy, "input 0 (dy)", y_shape)));
    const View& target = op == CTL_OP_CONV2D_BACKWARD_INPUT ? v->x : v->w;
    const int64_t shape[4] = {target.shape[0], target.shape[1], target.shape[2], target.shape[3]};
    CTL_SDK_RETURN_IF_ERROR(ctx.check(check_shape4(v->out, out_name, shape)));
  }
  return ctx.check(check_distinct(v->out, out_name));
}

// The views of a pooling call and their sizes (sdk/conv_geometry.hpp).
template <class View>
struct PoolProblem : Pool2dGeometry {
  View x, dy, out;  // out: y or dx
};

// max_pool2d / avg_pool2d (x -> y) and their backward forms (dy, x -> dx).
template <class Ctx, class View>
ctl_status* bind_pool(const Ctx& ctx, bool backward, PoolProblem<View>* v) {
  const uint32_t inputs = backward ? 2 : 1;
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(inputs, inputs, 1, 1));
  if (backward) CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "dy", &v->dy));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(backward ? 1 : 0, "x", &v->x));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, backward ? "dx" : "y", &v->out));
  const char* x_name = backward ? "input 1 (x)" : "input 0 (x)";
  const char* out_name = backward ? "output 0 (dx)" : "output 0 (y)";
  if (backward) CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(v->dy, "input 0 (dy)", v->x.dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(v->out, out_name, v->x.dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.check(check_rank4(v->x, x_name)));
  ctl_pool2d_attrs a;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&a, sizeof a, CTL_POOL2D_ATTRS_STRUCT_SIZE, "ctl_pool2d_attrs", &given));
  if (!given) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs is NULL; pooling needs a ctl_pool2d_attrs");
  CTL_SDK_RETURN_IF_ERROR(ctx.check(pool2d_geometry(a, v->x.shape, v)));
  const int64_t y_shape[4] = {v->N, v->C, v->OH, v->OW};
  if (backward) {
    CTL_SDK_RETURN_IF_ERROR(ctx.check(check_shape4(v->dy, "input 0 (dy)", y_shape)));
    const int64_t x_shape[4] = {v->N, v->C, v->H, v->W};
    CTL_SDK_RETURN_IF_ERROR(ctx.check(check_shape4(v->out, out_name, x_shape)));
  } else {
    CTL_SDK_RETURN_IF_ERROR(ctx.check(check_shape4(v->out, out_name, y_shape)));
  }
  return ctx.check(check_distinct(v->out, out_name));
}

}  // namespace catalyst::sdk
