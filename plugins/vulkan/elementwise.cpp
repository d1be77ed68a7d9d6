// elementwise.cpp — unary, binary, comparison, where and the gelu backward forms. The core
// has broadcast every input to the output's shape (stride 0 on broadcast axes), so one
// Iteration walks all views; shaders/elementwise.comp holds every op, picked by its id as
// a specialisation constant.
#include <string>

#include "catalyst/sdk/bind_elementwise.hpp"
#include "kernels.h"

namespace catalyst::vulkan {
namespace {

// "<kind>.<dtype>", with ".d" for the f32/f16/bf16 variants that divide and take roots in
// double on devices that have it.
std::string variant(const OpContext& ctx, const char* kind, ctl_dtype dtype, bool math_in_double) {
  std::string name = std::string(kind) + "." + dtype_name(dtype);
  const bool narrow_float = dtype == CTL_DTYPE_F32 || dtype == CTL_DTYPE_F16 || dtype == CTL_DTYPE_BF16;
  if (math_in_double && narrow_float && (ctx.device->dtype_mask & CTL_DTYPE_BIT(CTL_DTYPE_F64))) name += ".d";
  return name;
}

ctl_status* run_strided(const OpContext& ctx, const std::string& name, const DeviceView* const* views, size_t count) {
  const Iteration it = make_iteration(views, count);
  if (it.numel == 0) return nullptr;
  Params p;
  p.add_iteration(it, views, count);
  const int32_t op = static_cast<int32_t>(raw_enum(ctx.call->op));
  const uint32_t groups = ctx.loop_groups(it.numel, kLoopLocal);
  switch (count) {
    case 2:
      return ctx.dispatch(name, kLoopLocal, {op}, groups, 1, p, {reads(*views[0]), writes(*views[1])});
    case 3:
      return ctx.dispatch(name, kLoopLocal, {op}, groups, 1, p,
                          {reads(*views[0]), reads(*views[1]), writes(*views[2])});
    default:
      return ctx.dispatch(name, kLoopLocal, {op}, groups, 1, p,
                          {reads(*views[0]), reads(*views[1]), reads(*views[2]), writes(*views[3])});
  }
}

}  // namespace

ctl_status* run_unary(const OpContext& ctx) {
  DeviceView x, y;
  CTL_SDK_RETURN_IF_ERROR(ctx.one_to_one(&x, &y));
  const DeviceView* views[] = {&x, &y};
  return run_strided(ctx, variant(ctx, "unary", x.dtype, true), views, 2);
}

ctl_status* run_binary(const OpContext& ctx) {
  DeviceView a, b, y;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_binary(ctx, &a, &b, &y, "a", "b", nullptr));
  const DeviceView* views[] = {&a, &b, &y};
  return run_strided(ctx, variant(ctx, "binary", a.dtype, true), views, 3);
}

ctl_status* run_compare(const OpContext& ctx) {
  DeviceView a, b, y;
  const ctl_dtype boolean = CTL_DTYPE_BOOL;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_binary(ctx, &a, &b, &y, "a", "b", &boolean));
  const DeviceView* views[] = {&a, &b, &y};
  return run_strided(ctx, variant(ctx, "compare", a.dtype, false), views, 3);
}

ctl_status* run_gelu_backward(const OpContext& ctx) {
  DeviceView dy, x, dx;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_binary(ctx, &dy, &x, &dx, "dy", "x", nullptr));
  const DeviceView* views[] = {&dy, &x, &dx};
  return run_strided(ctx, variant(ctx, "binary", dy.dtype, true), views, 3);
}

ctl_status* run_where(const OpContext& ctx) {
  DeviceView cond, a, b, y;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_where(ctx, &cond, &a, &b, &y));
  const DeviceView* views[] = {&cond, &a, &b, &y};
  return run_strided(ctx, variant(ctx, "where", y.dtype, false), views, 4);
}

}  // namespace catalyst::vulkan
