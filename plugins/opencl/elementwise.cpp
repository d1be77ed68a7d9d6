// elementwise.cpp — unary, binary, comparison, where and the gelu backward forms. The core
// has broadcast every input to the output's shape (stride 0 on broadcast axes), so one
// Iteration walks all views; kernels/elementwise.cl holds one kernel per op, built per dtype.
#include <string>

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

// Two inputs of one dtype and one output of `out_dtype`, all of one shape.
ctl_status* read_binary(const OpContext& ctx, DeviceView* a, DeviceView* b, DeviceView* y, const char* a_name,
                        const char* b_name, const ctl_dtype* out_dtype) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(2, 2, 1, 1));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, a_name, a));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(1, b_name, b));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "y", y));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(*b, "input 1", a->dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(*y, "output 0 (y)", out_dtype ? *out_dtype : a->dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_same_shape(*y, "output 0 (y)", *a, "input 0"));
  return ctx.expect_same_shape(*y, "output 0 (y)", *b, "input 1");
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
  CTL_SDK_RETURN_IF_ERROR(read_binary(ctx, &a, &b, &y, "a", "b", nullptr));
  const DeviceView* views[] = {&a, &b, &y};
  return run_strided(ctx, a.dtype, std::string("binary_") + ctx.name, views, 3);
}

ctl_status* run_compare(const OpContext& ctx) {
  DeviceView a, b, y;
  const ctl_dtype boolean = CTL_DTYPE_BOOL;
  CTL_SDK_RETURN_IF_ERROR(read_binary(ctx, &a, &b, &y, "a", "b", &boolean));
  const DeviceView* views[] = {&a, &b, &y};
  return run_strided(ctx, a.dtype, std::string("compare_") + ctx.name, views, 3);
}

ctl_status* run_gelu_backward(const OpContext& ctx) {
  DeviceView dy, x, dx;
  CTL_SDK_RETURN_IF_ERROR(read_binary(ctx, &dy, &x, &dx, "dy", "x", nullptr));
  const DeviceView* views[] = {&dy, &x, &dx};
  return run_strided(ctx, dy.dtype, ctx.name, views, 3);
}

ctl_status* run_where(const OpContext& ctx) {
  DeviceView cond, a, b, y;
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(3, 3, 1, 1));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "cond", &cond));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(1, "a", &a));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(2, "b", &b));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "y", &y));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(cond, "input 0 (cond)", CTL_DTYPE_BOOL));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(a, "input 1 (a)", y.dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(b, "input 2 (b)", y.dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_same_shape(y, "output 0 (y)", cond, "input 0 (cond)"));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_same_shape(y, "output 0 (y)", a, "input 1 (a)"));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_same_shape(y, "output 0 (y)", b, "input 2 (b)"));
  const DeviceView* views[] = {&cond, &a, &b, &y};
  return run_strided(ctx, y.dtype, "where_select", views, 4);
}

}  // namespace catalyst::opencl
