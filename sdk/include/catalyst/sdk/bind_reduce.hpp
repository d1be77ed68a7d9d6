// bind_reduce.hpp — a reduction's call (sum, mean, max, min, argmax, argmin, logsumexp) read
// and checked into a problem, for any plugin context with the call reader's members
// (op_call.hpp): which axes are reduced, and x split into the views a kernel walks.
//
// Normal form: out has x's rank with size 1 on every reduced axis (keepdims or not, the
// core hands over this form); argmax / argmin reduce exactly one axis into i64; an empty
// axis has no maximum or minimum. The split: kept_x and kept_out walk the kept axes (one
// output each), reduced_x the reduced axes (offset 0: add kept_x's offset for an output).
#pragma once

#include <cstdint>

#include "catalyst/sdk/cast_rules.hpp"
#include "catalyst/sdk/op_dtypes.hpp"
#include "catalyst/sdk/status.hpp"
#include "catalyst_plugin.h"

namespace catalyst::sdk {

// Which axes are reduced, from the attrs (negative axes count from the end; none means all).
template <class Ctx>
ctl_status* read_reduced_axes(const Ctx& ctx, uint32_t rank, bool arg, bool* reduced) {
  ctl_reduce_attrs attrs;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&attrs, sizeof attrs, CTL_REDUCE_ATTRS_STRUCT_SIZE, "ctl_reduce_attrs", &given));
  if (!given || attrs.axis_count == 0) {
    if (arg && rank != 1) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "needs exactly one axis (attrs.axis_count is 0, x has rank %u)",
                      rank);
    }
    for (uint32_t i = 0; i < rank; ++i) reduced[i] = true;
    return nullptr;
  }
  if (attrs.axis_count > CTL_MAX_RANK) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs.axis_count %u exceeds %d", attrs.axis_count, CTL_MAX_RANK);
  }
  if (arg && attrs.axis_count != 1) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "needs exactly one axis, attrs.axis_count is %u", attrs.axis_count);
  }
  for (uint32_t i = 0; i < attrs.axis_count; ++i) {
    int64_t axis = attrs.axes[i];
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= static_cast<int64_t>(rank)) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs.axes[%u] = %d is out of range for rank %u", i, attrs.axes[i],
                      rank);
    }
    if (reduced[axis]) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs.axes[%u] = %d repeats an axis", i, attrs.axes[i]);
    }
    reduced[axis] = true;
  }
  return nullptr;
}

template <class View>
struct ReduceProblem {
  ctl_op_id op = CTL_OP_SUM;
  bool arg = false;  // argmax / argmin: out holds i64 positions along the one reduced axis
  View x, out;
  bool reduced[CTL_MAX_RANK] = {};
  View kept_x, kept_out, reduced_x;

  int64_t outputs() const { return kept_x.numel(); }
  int64_t count() const { return reduced_x.numel(); }  // elements per output
};

template <class Ctx, class View>
ctl_status* bind_reduce(const Ctx& ctx, ReduceProblem<View>* p) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(1, 1, 1, 1));
  View &x = p->x, &out = p->out;
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "x", &x));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "out", &out));
  const ctl_op_id op = p->op = ctx.call->op;
  const bool arg = p->arg = op == CTL_OP_ARGMAX || op == CTL_OP_ARGMIN;
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(out, "output 0 (out)", arg ? CTL_DTYPE_I64 : x.dtype));
  if (x.dtype == CTL_DTYPE_BOOL || (!is_float_dtype(x.dtype) && (op == CTL_OP_MEAN || op == CTL_OP_LOGSUMEXP))) {
    return ctx.fail(CTL_STATUS_UNSUPPORTED, "dtype %s is not supported", dtype_name(x.dtype));
  }
  CTL_SDK_RETURN_IF_ERROR(read_reduced_axes(ctx, x.rank, arg, p->reduced));
  if (out.rank != x.rank) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "output 0 (out) has rank %u, expected x's rank %u", out.rank, x.rank);
  }
  View &kept_x = p->kept_x, &kept_out = p->kept_out, &red_x = p->reduced_x;
  kept_x = x, kept_out = out, red_x = x;
  kept_x.rank = kept_out.rank = red_x.rank = 0;
  red_x.offset = 0;
  for (uint32_t i = 0; i < x.rank; ++i) {
    const int64_t expected = p->reduced[i] ? 1 : x.shape[i];
    if (out.shape[i] != expected) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "output 0 (out) has size %lld on axis %u, expected %lld",
                      static_cast<long long>(out.shape[i]), i, static_cast<long long>(expected));
    }
    if (p->reduced[i]) {
      red_x.shape[red_x.rank] = x.shape[i];
      red_x.strides[red_x.rank++] = x.strides[i];
    } else {
      kept_x.shape[kept_x.rank] = kept_out.shape[kept_out.rank] = x.shape[i];
      kept_x.strides[kept_x.rank++] = x.strides[i];
      kept_out.strides[kept_out.rank++] = out.strides[i];
    }
  }
  if (p->count() == 0 && (op == CTL_OP_MAX || op == CTL_OP_MIN || arg)) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "cannot reduce an empty axis (it has no %s)",
                    op == CTL_OP_MIN || op == CTL_OP_ARGMIN ? "minimum" : "maximum");
  }
  return nullptr;
}

}  // namespace catalyst::sdk
