// elementwise.cpp — unary, binary, comparison, where and the gelu backward forms. The core
// has broadcast every input to the output's shape (stride 0 on broadcast axes), so one
// Iteration walks all views; kernels/elementwise.cl holds one kernel per op, built per dtype.
#include <string>

#include "catalyst/sdk/bind_elementwise.hpp"
#include "kernels.h"

namespace catalyst::opencl {
namespace {

std::string dtype_define(ctl_dtype dtype) {
  return std::string("-DTA=") + dtype_tag(dtype);
}

// Enqueues kernel `kernel_name` of the elementwise program for `dtype` over `views` (the
// inputs, then the output), which share one shape.
ctl_status* run_strided(const OpContext& ctx, ctl_dtype dtype, const std::string& kernel_name,
                        const DeviceView* const* views, size_t count) {
  const Iteration it = make_iteration(views, count);
  if (it.numel == 0) return nullptr;
  Kernel* k = nullptr;
  CTL_SDK_RETURN_IF_ERROR(ctx.kernel("elementwise", dtype_define(dtype), kernel_name.c_str(), &k));
  const cl_long n = it.numel;
  switch (count) {
    case 2:
      return ctx.launch(k, n, *views[0], it.strides[0], *views[1], it.strides[1], it.rank, it.shape, n);
    case 3:
      return ctx.launch(k, n, *views[0], it.strides[0], *views[1], it.strides[1], *views[2], it.strides[2], it.rank,
                        it.shape, n);
    default:
      return ctx.launch(k, n, *views[0], it.strides[0], *views[1], it.strides[1], *views[2], it.strides[2], *views[3],
                        it.strides[3], it.rank, it.shape, n);
  }
}

}  // namespace

ctl_status* run_unary(const OpContext& ctx) {
  DeviceView x, y;
  CTL_SDK_RETURN_IF_ERROR(ctx.one_to_one(&x, &y));
  const DeviceView* views[] = {&x, &y};
  return run_strided(ctx, x.dtype, std::string("unary_") + ctx.name, views, 2);
}

ctl_status* run_binary(const OpContext& ctx) {
  DeviceView a, b, y;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_binary(ctx, &a, &b, &y, "a", "b", nullptr));
  const DeviceView* views[] = {&a, &b, &y};
  return run_strided(ctx, a.dtype, std::string("binary_") + ctx.name, views, 3);
}

ctl_status* run_compare(const OpContext& ctx) {
  DeviceView a, b, y;
  const ctl_dtype boolean = CTL_DTYPE_BOOL;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_binary(ctx, &a, &b, &y, "a", "b", &boolean));
  const DeviceView* views[] = {&a, &b, &y};
  return run_strided(ctx, a.dtype, std::string("compare_") + ctx.name, views, 3);
}

ctl_status* run_gelu_backward(const OpContext& ctx) {
  DeviceView dy, x, dx;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_binary(ctx, &dy, &x, &dx, "dy", "x", nullptr));
  const DeviceView* views[] = {&dy, &x, &dx};
  return run_strided(ctx, dy.dtype, ctx.name, views, 3);
}

ctl_status* run_where(const OpContext& ctx) {
  DeviceView cond, a, b, y;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_where(ctx, &cond, &a, &b, &y));
  const DeviceView* views[] = {&cond, &a, &b, &y};
  return run_strided(ctx, y.dtype, "where_select", views, 4);
}

}  // namespace catalyst::opencl
