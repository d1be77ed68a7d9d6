// movement.cpp — copy, cast, concat, gather, scatter_add and the creation ops (fill,
// arange, random). Copies move bits through ctx.copy_view; every conversion (cast, the
// creation ops' values, scatter_add's final rounding) follows ops.md's cast rules in
// kernels/movement.cl, bit for bit as the reference and the CPU plugin do. Out-of-range
// indices behave as in the reference: gather writes zeros, scatter_add skips them; the
// kernels check every index, so no index value can reach outside a view. The calls are read
// and checked by the sdk's binders (sdk/bind_movement.hpp).
#include <string>

#include "catalyst/sdk/bind_movement.hpp"
#include "kernels.h"

namespace catalyst::opencl {
namespace {

std::string define(const char* slot, ctl_dtype dtype) {
  return std::string("-D") + slot + "=" + dtype_tag(dtype);
}

// Launches a creation kernel (arange, random) over `out`: its last two arguments are WIDE_T
// in movement.cl, double where the device has doubles and float otherwise; random's seed
// and offset come before them.
ctl_status* launch_wide(const OpContext& ctx, Kernel* k, const DeviceView& out, const Iteration& it, double p, double q,
                        const cl_ulong* philox) {
  const cl_long n = it.numel;
  if (ctx.device->has_fp64) {
    const cl_double a = p, b = q;
    if (philox) return ctx.launch(k, n, out, it.strides[0], it.rank, it.shape, n, philox[0], philox[1], a, b);
    return ctx.launch(k, n, out, it.strides[0], it.rank, it.shape, n, a, b);
  }
  const cl_float a = static_cast<cl_float>(p), b = static_cast<cl_float>(q);
  if (philox) return ctx.launch(k, n, out, it.strides[0], it.rank, it.shape, n, philox[0], philox[1], a, b);
  return ctx.launch(k, n, out, it.strides[0], it.rank, it.shape, n, a, b);
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
  Kernel* k = nullptr;
  CTL_SDK_RETURN_IF_ERROR(
      ctx.kernel("movement", define("TA", x.dtype) + " " + define("TB", y.dtype), "cast_strided", &k));
  const cl_long n = it.numel;
  return ctx.launch(k, n, x, it.strides[0], y, it.strides[1], it.rank, it.shape, n);
}

ctl_status* run_concat(const OpContext& ctx) {
  return sdk::run_concat_parts<OpContext, DeviceView>(
      ctx, [&](const DeviceView& in, const DeviceView& part) { return ctx.copy_view(in, part); });
}

ctl_status* run_gather(const OpContext& ctx) {
  sdk::GatherProblem<DeviceView> g;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_gather(ctx, &g));
  const DeviceView &x = g.x, &index = g.index, &out = g.out;
  const uint32_t axis = g.axis;
  if (out.numel() == 0) return nullptr;
  const DeviceView* views[] = {&out, &g.x_walk, &g.index_walk};
  const Iteration it = make_iteration(views, 3);
  Kernel* k = nullptr;
  CTL_SDK_RETURN_IF_ERROR(
      ctx.kernel("movement", define("TA", x.dtype) + " " + define("TI", index.dtype), "gather_strided", &k));
  const cl_long n = it.numel, axis_size = x.shape[axis], axis_stride = x.strides[axis];
  return ctx.launch(k, n, out, it.strides[0], x, it.strides[1], index, it.strides[2], it.rank, it.shape, n, axis_size,
                    axis_stride);
}

ctl_status* run_scatter_add(const OpContext& ctx) {
  sdk::ScatterAddProblem<DeviceView> sp;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_scatter_add(ctx, &sp));
  const DeviceView &target = sp.target, &index = sp.index, &src = sp.src, &out = sp.out;
  const uint32_t axis = sp.axis;
  if (out.numel() == 0) return nullptr;

  // The sums: a contiguous accumulator of the target's shape, in double (float on devices
  // without doubles) for floats and in 64-bit integers for integers.
  DeviceView acc = target;
  acc.dtype = sdk::is_float_dtype(target.dtype) && !ctx.device->has_fp64 ? CTL_DTYPE_F32 : CTL_DTYPE_F64;
  acc.element_size = acc.dtype == CTL_DTYPE_F32 ? 4 : 8;
  Temporary storage;
  CTL_SDK_RETURN_IF_ERROR(ctx.contiguous_like(acc, &storage, &acc));

  const std::string defines = define("TA", target.dtype) + " " + define("TI", index.dtype);
  Kernel *init = nullptr, *columns = nullptr, *finish = nullptr;
  CTL_SDK_RETURN_IF_ERROR(ctx.kernel("movement", defines, "scatter_init", &init));
  CTL_SDK_RETURN_IF_ERROR(ctx.kernel("movement", defines, "scatter_columns", &columns));
  CTL_SDK_RETURN_IF_ERROR(ctx.kernel("movement", defines, "scatter_finish", &finish));

  {
    const DeviceView* views[] = {&target, &acc};
    const Iteration it = make_iteration(views, 2);
    const cl_long n = it.numel;
    CTL_SDK_RETURN_IF_ERROR(ctx.launch(init, n, target, it.strides[0], acc, it.strides[1], it.rank, it.shape, n));
  }

  const int64_t positions = index.numel();
  if (positions > 0) {
    const sdk::ScatterWalks<DeviceView> w = sdk::scatter_walks(sp, acc);
    const DeviceView* col_views[] = {&w.src_columns, &w.acc_columns};
    const Iteration cols = make_iteration(col_views, 2);
    const DeviceView* j_views[] = {&index, &w.src_positions};
    const Iteration js = make_iteration(j_views, 2);
    const cl_long column_count = cols.numel, position_count = positions, axis_size = target.shape[axis],
                  acc_axis_stride = acc.strides[axis];
    CTL_SDK_RETURN_IF_ERROR(ctx.launch(columns, column_count, src, cols.strides[0], acc, cols.strides[1], index,
                                       js.strides[0], js.strides[1], cols.rank, cols.shape, column_count, js.rank,
                                       js.shape, position_count, axis_size, acc_axis_stride));
  }

  const DeviceView* views[] = {&acc, &out};
  const Iteration it = make_iteration(views, 2);
  const cl_long n = it.numel;
  return ctx.launch(finish, n, acc, it.strides[0], out, it.strides[1], it.rank, it.shape, n);
}

ctl_status* run_fill(const OpContext& ctx) {
  DeviceView out;
  double value = 0;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_fill(ctx, &out, &value));
  if (out.numel() == 0) return nullptr;
  // One value for every element: converted here, stored as bits by the kernel.
  const cl_ulong bits = sdk::bits_from_double(out.dtype, value);
  const DeviceView* views[] = {&out};
  const Iteration it = make_iteration(views, 1);
  Kernel* k = nullptr;
  CTL_SDK_RETURN_IF_ERROR(ctx.kernel("movement", define("TA", out.dtype), "fill_strided", &k));
  const cl_long n = it.numel;
  return ctx.launch(k, n, out, it.strides[0], it.rank, it.shape, n, bits);
}

ctl_status* run_arange(const OpContext& ctx) {
  DeviceView out;
  double start = 0, step = 1;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_arange(ctx, &out, &start, &step));
  if (out.numel() == 0) return nullptr;
  const DeviceView* views[] = {&out};
  const Iteration it = make_iteration(views, 1);
  Kernel* k = nullptr;
  CTL_SDK_RETURN_IF_ERROR(ctx.kernel("movement", define("TA", out.dtype), "arange_strided", &k));
  return launch_wide(ctx, k, out, it, start, step, nullptr);
}

ctl_status* run_random(const OpContext& ctx) {
  DeviceView out;
  sdk::RandomProblem r;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_random(ctx, &out, &r));
  if (out.numel() == 0) return nullptr;
  // Element i is row-major index i of the output: the iteration's order, whatever its strides.
  const DeviceView* views[] = {&out};
  const Iteration it = make_iteration(views, 1);
  Kernel* k = nullptr;
  CTL_SDK_RETURN_IF_ERROR(
      ctx.kernel("movement", define("TA", out.dtype), r.normal ? "random_normal" : "random_uniform", &k));
  const cl_ulong philox[2] = {r.seed, r.offset};
  return launch_wide(ctx, k, out, it, r.a, r.b, philox);
}

}  // namespace catalyst::opencl
