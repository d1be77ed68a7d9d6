// reduce.cpp — reductions over any set of axes (shaders/reduce.comp): the kept axes and the
// reduced axes each become an Iteration, one work-group per output element; a reduction too
// long for one dispatch's loop budget (op_context.h) is folded in parts.
#include <algorithm>
#include <string>

#include "kernels.h"

namespace catalyst::vulkan {
namespace {

// Which axes are reduced, from the attrs (negative axes count from the end; none means all).
ctl_status* reduced_axes(const OpContext& ctx, const DeviceView& x, bool arg, bool* reduced) {
  ctl_reduce_attrs attrs;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&attrs, sizeof attrs, CTL_REDUCE_ATTRS_STRUCT_SIZE, "ctl_reduce_attrs", &given));
  if (!given || attrs.axis_count == 0) {
    if (arg && x.rank != 1) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "needs exactly one axis (attrs.axis_count is 0, x has rank %u)",
                      x.rank);
    }
    for (uint32_t i = 0; i < x.rank; ++i) reduced[i] = true;
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
    if (axis < 0) axis += x.rank;
    if (axis < 0 || axis >= static_cast<int64_t>(x.rank)) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs.axes[%u] = %d is out of range for rank %u", i, attrs.axes[i],
                      x.rank);
    }
    if (reduced[axis]) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs.axes[%u] = %d repeats an axis", i, attrs.axes[i]);
    }
    reduced[axis] = true;
  }
  return nullptr;
}

}  // namespace

ctl_status* run_reduce(const OpContext& ctx) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(1, 1, 1, 1));
  DeviceView x, out;
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "x", &x));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "out", &out));
  const ctl_op_id op = ctx.call->op;
  const bool arg = op == CTL_OP_ARGMAX || op == CTL_OP_ARGMIN;
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(out, "output 0 (out)", arg ? CTL_DTYPE_I64 : x.dtype));
  const bool floats =
      x.dtype == CTL_DTYPE_F32 || x.dtype == CTL_DTYPE_F64 || x.dtype == CTL_DTYPE_F16 || x.dtype == CTL_DTYPE_BF16;
  if (x.dtype == CTL_DTYPE_BOOL || (!floats && (op == CTL_OP_MEAN || op == CTL_OP_LOGSUMEXP))) {
    return ctx.fail(CTL_STATUS_UNSUPPORTED, "dtype %s is not supported", dtype_name(x.dtype));
  }
  bool reduced[CTL_MAX_RANK] = {};
  CTL_SDK_RETURN_IF_ERROR(reduced_axes(ctx, x, arg, reduced));
  if (out.rank != x.rank) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "output 0 (out) has rank %u, expected x's rank %u", out.rank, x.rank);
  }
  DeviceView kept_x = x, kept_out = out, red_x = x;
  kept_x.rank = kept_out.rank = red_x.rank = 0;
  red_x.offset = 0;
  for (uint32_t i = 0; i < x.rank; ++i) {
    const int64_t expected = reduced[i] ? 1 : x.shape[i];
    if (out.shape[i] != expected) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "output 0 (out) has size %lld on axis %u, expected %lld",
                      static_cast<long long>(out.shape[i]), i, static_cast<long long>(expected));
    }
    if (reduced[i]) {
      red_x.shape[red_x.rank] = x.shape[i];
      red_x.strides[red_x.rank++] = x.strides[i];
    } else {
      kept_x.shape[kept_x.rank] = kept_out.shape[kept_out.rank] = x.shape[i];
      kept_x.strides[kept_x.rank++] = x.strides[i];
      kept_out.strides[kept_out.rank++] = out.strides[i];
    }
  }
  const DeviceView* kept_views[] = {&kept_x, &kept_out};
  const DeviceView* red_views[] = {&red_x};
  const Iteration kept = make_iteration(kept_views, 2);
  const Iteration red = make_iteration(red_views, 1);
  if (red.numel == 0 && (op == CTL_OP_MAX || op == CTL_OP_MIN || arg)) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "cannot reduce an empty axis (it has no %s)",
                    op == CTL_OP_MIN || op == CTL_OP_ARGMIN ? "minimum" : "maximum");
  }
  if (kept.numel == 0) return nullptr;
  Params p;
  p.add_iteration(kept, kept_views, 2);
  p.add_iteration(red, red_views, 1);
  // One group per output while there are groups; a group folds its outputs in turn.
  const int64_t groups = std::min<int64_t>(kept.numel, std::min<uint32_t>(ctx.device->max_group_count_x, 65535));
  const int64_t outputs_per_group = (kept.numel + groups - 1) / groups;
  // How many reduced elements one dispatch may fold: a lane's loop iterations (about
  // 2 + 2 x rank per element: the element loop and the index arithmetic's loops over the
  // axes) over all its outputs stay within kLoopBudget. Past that the reduction is split,
  // each lane's state waiting in a carry between parts.
  // An output also costs its tree and its index arithmetic: kPerOutput more.
  constexpr int64_t kPerOutput = 32;
  const int64_t per_element = 2 + 2 * static_cast<int64_t>(red.rank);
  const int64_t per_output = kLoopBudget / outputs_per_group - kPerOutput;
  const int64_t elements_per_lane = std::max<int64_t>(1, per_output / per_element);
  const int64_t part = elements_per_lane * kLoopLocal;  // a multiple of the local size
  const int64_t parts = std::max<int64_t>(1, (red.numel + part - 1) / part);
  if (per_output < per_element) {
    return ctx.fail(CTL_STATUS_UNSUPPORTED,
                    "%lld outputs of %lld reduced elements each are more than this device can fold within its "
                    "shaders' loop budget",
                    static_cast<long long>(kept.numel), static_cast<long long>(red.numel));
  }
  // Sums accumulate in double where the device has it.
  const bool in_double = floats && x.dtype != CTL_DTYPE_F64 && !arg &&
                         (op == CTL_OP_SUM || op == CTL_OP_MEAN || op == CTL_OP_LOGSUMEXP) &&
                         (ctx.device->dtype_mask & CTL_DTYPE_BIT(CTL_DTYPE_F64));
  std::string variant = std::string(arg ? "argreduce." : "reduce.") + dtype_name(x.dtype) + (in_double ? ".d" : "");
  const uint64_t carry_value_size = in_double || x.element_size == 8 ? 8 : 4;
  const auto lanes = static_cast<uint64_t>(kept.numel) * kLoopLocal;
  Temporary carry_values(ctx), carry_indices(ctx);
  DeviceView value_carry, index_carry;
  CTL_SDK_RETURN_IF_ERROR(ctx.carry(parts > 1, (2 * lanes + static_cast<uint64_t>(kept.numel)) * carry_value_size, x,
                                    &carry_values, &value_carry));
  CTL_SDK_RETURN_IF_ERROR(ctx.carry(parts > 1, lanes * 4, x, &carry_indices, &index_carry));
  // logsumexp split in parts takes two sweeps: the maximum over every part, then the sums.
  const bool two_sweeps = op == CTL_OP_LOGSUMEXP && parts > 1;
  const size_t split_at = p.words.size();
  for (uint32_t sweep = two_sweeps ? 0 : 2; sweep <= (two_sweeps ? 1u : 2u); ++sweep) {
    for (int64_t k = 0; k < parts; ++k) {
      p.words.resize(split_at);
      p.add_part(k, parts, part, red.numel);
      p.add(sweep);
      CTL_SDK_RETURN_IF_ERROR(ctx.dispatch(variant, kLoopLocal, {static_cast<int32_t>(op)},
                                           static_cast<uint32_t>(groups), 1, p,
                                           {reads(x), writes(out), writes(value_carry), writes(index_carry)}));
    }
  }
  return nullptr;
}

}  // namespace catalyst::vulkan
