// movement.cpp — copy, cast, concat, gather, scatter_add and the creation ops (fill, arange,
// random): strided loops over the output, one shader template each (shaders/copy.comp,
// cast.comp, gather.comp, scatter.comp, fill.comp, arange.comp, random.comp). The calls are
// read and checked by the sdk's binders (sdk/bind_movement.hpp).
#include <algorithm>
#include <string>

#include "catalyst/sdk/bind_movement.hpp"
#include "kernels.h"

namespace catalyst::vulkan {
namespace {

// dst = cast(src) by the cast rules (same shape, any strides).
ctl_status* cast_view(const OpContext& ctx, const DeviceView& src, const DeviceView& dst) {
  const DeviceView* views[] = {&src, &dst};
  const Iteration it = make_iteration(views, 2);
  if (it.numel == 0) return nullptr;
  Params p;
  p.add_iteration(it, views, 2);
  return ctx.dispatch(std::string("cast.") + dtype_name(src.dtype) + "." + dtype_name(dst.dtype), kLoopLocal, {},
                      ctx.loop_groups(it.numel, kLoopLocal), 1, p, {reads(src), writes(dst)});
}

}  // namespace

ctl_status* run_copy(const OpContext& ctx) {
  DeviceView x, y;
  CTL_SDK_RETURN_IF_ERROR(ctx.one_to_one(&x, &y));
  return ctx.copy_view(x, y);
}

ctl_status* run_cast(const OpContext& ctx) {
  DeviceView x, y;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_cast(ctx, &x, &y));
  if (y.numel() == 0) return nullptr;
  // Same dtype moves bits (NaN payloads survive); bool still becomes 0/1.
  if (x.dtype == y.dtype && x.dtype != CTL_DTYPE_BOOL) return ctx.copy_view(x, y);
  const DeviceView* views[] = {&x, &y};
  const Iteration it = make_iteration(views, 2);
  Params p;
  p.add_iteration(it, views, 2);
  return ctx.dispatch(std::string("cast.") + dtype_name(x.dtype) + "." + dtype_name(y.dtype), kLoopLocal, {},
                      ctx.loop_groups(it.numel, kLoopLocal), 1, p, {reads(x), writes(y)});
}

ctl_status* run_fill(const OpContext& ctx) {
  DeviceView out;
  double value = 0;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_fill(ctx, &out, &value));
  if (out.numel() == 0) return nullptr;
  const DeviceView* views[] = {&out};
  const Iteration it = make_iteration(views, 1);
  Params p;
  p.add_iteration(it, views, 1);
  p.add_i64(static_cast<int64_t>(sdk::bits_from_double(out.dtype, value)));
  return ctx.dispatch(std::string("fill.") + dtype_name(out.dtype), kLoopLocal, {},
                      ctx.loop_groups(it.numel, kLoopLocal), 1, p, {writes(out)});
}

ctl_status* run_arange(const OpContext& ctx) {
  DeviceView out;
  double start = 0, step = 1;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_arange(ctx, &out, &start, &step));
  if (out.numel() == 0) return nullptr;
  if (!(ctx.device->dtype_mask & CTL_DTYPE_BIT(CTL_DTYPE_F64))) {
    return ctx.fail(CTL_STATUS_UNSUPPORTED, "arange computes in f64, which %s lacks", ctx.device->name.c_str());
  }
  const DeviceView* views[] = {&out};
  const Iteration it = make_iteration(views, 1);
  Params p;
  p.add_iteration(it, views, 1);
  p.add_f64(start);
  p.add_f64(step);
  return ctx.dispatch(std::string("arange.") + dtype_name(out.dtype), kLoopLocal, {},
                      ctx.loop_groups(it.numel, kLoopLocal), 1, p, {writes(out)});
}

ctl_status* run_concat(const OpContext& ctx) {
  return sdk::run_concat_parts<OpContext, DeviceView>(
      ctx, [&](const DeviceView& in, const DeviceView& part) { return ctx.copy_view(in, part); });
}

ctl_status* run_gather(const OpContext& ctx) {
  sdk::GatherProblem<DeviceView> g;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_gather(ctx, &g));
  const DeviceView &x = g.x, &index = g.index, &out = g.out;
  if (out.numel() == 0) return nullptr;
  const DeviceView* views[] = {&out, &g.x_walk, &g.index_walk};
  const Iteration it = make_iteration(views, 3);
  Params p;
  p.add_iteration(it, views, 3);
  p.add(static_cast<uint32_t>(x.shape[g.axis]));
  p.add(static_cast<uint32_t>(x.strides[g.axis]));
  return ctx.dispatch(std::string("gather.") + dtype_name(x.dtype) + "." + dtype_name(index.dtype), kLoopLocal, {},
                      ctx.loop_groups(it.numel, kLoopLocal), 1, p, {writes(out), reads(x), reads(index)});
}

ctl_status* run_scatter_add(const OpContext& ctx) {
  sdk::ScatterAddProblem<DeviceView> sp;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_scatter_add(ctx, &sp));
  const DeviceView &target = sp.target, &index = sp.index, &src = sp.src, &out = sp.out;
  const uint32_t axis = sp.axis;
  if (out.numel() == 0) return nullptr;
  // The sums: a contiguous accumulator of the target's shape, double for floats and
  // wrapping int64 for integers, cast in from target and out to out.
  DeviceView acc = target;
  acc.dtype = sdk::is_float_dtype(target.dtype) ? CTL_DTYPE_F64 : CTL_DTYPE_I64;
  acc.element_size = 8;
  Temporary storage(ctx);
  CTL_SDK_RETURN_IF_ERROR(ctx.contiguous_like(acc, &storage, &acc));
  CTL_SDK_RETURN_IF_ERROR(cast_view(ctx, target, acc));
  const int64_t positions = index.numel();
  if (positions > 0) {
    const sdk::ScatterWalks<DeviceView> w = sdk::scatter_walks(sp, acc);
    const DeviceView* col_views[] = {&w.src_columns, &w.acc_columns};
    const Iteration cols = make_iteration(col_views, 2);
    const DeviceView* j_views[] = {&index, &w.src_positions};
    const Iteration js = make_iteration(j_views, 2);
    Params p;
    p.add_iteration(cols, col_views, 2);
    p.add_iteration(js, j_views, 2);
    p.add(static_cast<uint32_t>(target.shape[axis]));
    p.add(static_cast<uint32_t>(acc.strides[axis]));
    // An invocation walks every position for each of its columns, about 2 + 6 x rank loop
    // iterations a position (the index arithmetic of three views): past the loop budget
    // (op_context.h) the positions are split over dispatches, in order.
    const uint32_t groups = ctx.loop_groups(cols.numel, kLoopLocal);
    const int64_t columns_per_invocation =
        (cols.numel + int64_t{groups} * kLoopLocal - 1) / (int64_t{groups} * kLoopLocal);
    const int64_t per_position = 2 + 6 * static_cast<int64_t>(js.rank);
    const int64_t positions_per_part = std::max<int64_t>(1, kLoopBudget / (columns_per_invocation * per_position));
    const size_t split_at = p.words.size();
    // Every column at least once, even when there are none but the one of a rank-1 target.
    for (int64_t begin = 0; begin < positions; begin += positions_per_part) {
      p.words.resize(split_at);
      p.add(static_cast<uint32_t>(begin));
      p.add(static_cast<uint32_t>(std::min(positions, begin + positions_per_part)));
      CTL_SDK_RETURN_IF_ERROR(ctx.dispatch(
          std::string("scatter.") + dtype_name(target.dtype) + "." + dtype_name(index.dtype), kLoopLocal, {}, groups,
          1, p, {reads(src), writes(acc), reads(index)}));
    }
  }
  return cast_view(ctx, acc, out);
}

ctl_status* run_random(const OpContext& ctx) {
  DeviceView out;
  sdk::RandomProblem r;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_random(ctx, &out, &r));
  if (!(ctx.device->dtype_mask & CTL_DTYPE_BIT(CTL_DTYPE_F64))) {
    return ctx.fail(CTL_STATUS_UNSUPPORTED, "random numbers are computed in f64, which %s lacks",
                    ctx.device->name.c_str());
  }
  if (out.numel() == 0) return nullptr;
  // Element i is row-major index i of the output: the iteration's order, whatever its strides.
  const DeviceView* views[] = {&out};
  const Iteration it = make_iteration(views, 1);
  Params p;
  p.add_iteration(it, views, 1);
  p.add_i64(static_cast<int64_t>(r.seed));
  p.add_i64(static_cast<int64_t>(r.offset));
  p.add_f64(r.a);
  p.add_f64(r.b);
  return ctx.dispatch(std::string("random.") + dtype_name(out.dtype), kLoopLocal,
                      {static_cast<int32_t>(raw_enum(ctx.call->op))}, ctx.loop_groups(it.numel, kLoopLocal), 1, p,
                      {writes(out)});
}

}  // namespace catalyst::vulkan
