// movement.cpp — copy, cast, concat, gather, scatter_add and the creation ops (fill,
// arange, random). Copies move bits through ctx.copy_view; every conversion (cast, the
// creation ops' values, scatter_add's final rounding) follows ops.md's cast rules in
// kernels/movement.cl, bit for bit as the reference and the CPU plugin do. Out-of-range
// indices behave as in the reference: gather writes zeros, scatter_add skips them; the
// kernels check every index, so no index value can reach outside a view.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "catalyst/sdk/half.hpp"
#include "kernels.h"

namespace catalyst::opencl {
namespace {

std::string define(const char* slot, ctl_dtype dtype) {
  return std::string("-D") + slot + "=" + dtype_tag(dtype);
}

// A view of `rank` axes with these sizes and strides, for make_iteration only: the walks
// below pair the axes of views whose shapes differ (gather's x against its output).
DeviceView walk_view(uint32_t rank, const int64_t* shape, const int64_t* strides) {
  DeviceView v;
  v.rank = rank;
  for (uint32_t d = 0; d < rank; ++d) {
    v.shape[d] = shape[d];
    v.strides[d] = strides[d];
  }
  return v;
}

bool is_float_dtype(ctl_dtype d) {
  return d == CTL_DTYPE_F32 || d == CTL_DTYPE_F64 || d == CTL_DTYPE_F16 || d == CTL_DTYPE_BF16;
}

// The axis of ctl_axis_attrs (NULL attrs: 0; negative counts from the end), checked.
ctl_status* read_axis(const OpContext& ctx, uint32_t rank, uint32_t* out_axis) {
  ctl_axis_attrs attrs;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&attrs, sizeof attrs, CTL_AXIS_ATTRS_STRUCT_SIZE, "ctl_axis_attrs", &given));
  int64_t axis = given ? attrs.axis : 0;
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= static_cast<int64_t>(rank)) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs.axis %d is out of range for rank %u", attrs.axis, rank);
  }
  *out_axis = static_cast<uint32_t>(axis);
  return nullptr;
}

ctl_status* check_index(const OpContext& ctx, const DeviceView& index) {
  if (index.dtype != CTL_DTYPE_I32 && index.dtype != CTL_DTYPE_I64) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input 1 (index) has dtype %s, expected i32 or i64",
                    dtype_name(index.dtype));
  }
  return nullptr;
}

// Checks big.shape == table.shape[:axis] + index.shape + table.shape[axis+1:] (`big` is
// gather's output or scatter_add's src, `table` gather's x or scatter_add's target).
ctl_status* check_take_shape(const OpContext& ctx, const DeviceView& big, const char* big_name, const DeviceView& table,
                             const DeviceView& index, uint32_t axis) {
  const uint32_t q = index.rank;
  if (big.rank != table.rank - 1 + q) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "%s has rank %u, expected %u (%s.rank - 1 + index.rank)", big_name,
                    big.rank, table.rank - 1 + q, big_name);
  }
  for (uint32_t d = 0; d < big.rank; ++d) {
    const int64_t expected = d < axis ? table.shape[d] : d < axis + q ? index.shape[d - axis] : table.shape[d - q + 1];
    if (big.shape[d] != expected) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "%s has size %lld on axis %u, expected %lld", big_name,
                      static_cast<long long>(big.shape[d]), d, static_cast<long long>(expected));
    }
  }
  return nullptr;
}

// A double as the raw bits of `dtype`, by the float-source cast rules (cpu/cast_rules.h).
template <class I>
uint64_t saturated(double v) {
  if (std::isnan(v)) return 0;
  const double t = std::trunc(v);
  constexpr double lo = static_cast<double>(std::numeric_limits<I>::lowest());
  constexpr double hi_plus_one = static_cast<double>(std::numeric_limits<I>::max() / 2 + 1) * 2.0;
  I r;
  if (t <= lo)
    r = std::numeric_limits<I>::lowest();
  else if (t >= hi_plus_one)
    r = std::numeric_limits<I>::max();
  else
    r = static_cast<I>(t);
  using U = std::make_unsigned_t<I>;
  return static_cast<U>(r);
}

uint64_t bits_from_double(ctl_dtype dtype, double v) {
  switch (dtype) {
    case CTL_DTYPE_F32: {
      const float f = static_cast<float>(v);
      uint32_t bits;
      std::memcpy(&bits, &f, sizeof bits);
      return bits;
    }
    case CTL_DTYPE_F64: {
      uint64_t bits;
      std::memcpy(&bits, &v, sizeof bits);
      return bits;
    }
    case CTL_DTYPE_F16:
      return sdk::double_to_half(v);
    case CTL_DTYPE_BF16:
      return sdk::double_to_bf16(v);
    case CTL_DTYPE_I8:
      return saturated<int8_t>(v);
    case CTL_DTYPE_U8:
      return saturated<uint8_t>(v);
    case CTL_DTYPE_I32:
      return saturated<int32_t>(v);
    case CTL_DTYPE_I64:
      return saturated<int64_t>(v);
    default:
      return v != 0.0 ? 1 : 0;  // bool: NaN != 0 is true
  }
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
  CTL_SDK_RETURN_IF_ERROR(ctx.one_to_one(&x, &y, /*same_dtype=*/false));
  // The output's dtype is the target; attrs, when given, must agree with it.
  ctl_cast_attrs attrs;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&attrs, sizeof attrs, CTL_CAST_ATTRS_STRUCT_SIZE, "ctl_cast_attrs", &given));
  if (given && raw_enum(attrs.dtype) != raw_enum(y.dtype)) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs.dtype %lld differs from output 0 (y)'s dtype %s",
                    static_cast<long long>(raw_enum(attrs.dtype)), dtype_name(y.dtype));
  }
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
  if (ctx.call->input_count == 0) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "needs at least one input");
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(1, UINT32_MAX, 1, 1));
  DeviceView out;
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "out", &out));
  if (out.rank == 0) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "output 0 (out) must have rank >= 1");
  uint32_t axis;
  CTL_SDK_RETURN_IF_ERROR(read_axis(ctx, out.rank, &axis));
  // Check every input before enqueueing anything.
  int64_t total = 0;
  for (uint32_t i = 0; i < ctx.call->input_count; ++i) {
    DeviceView in;
    CTL_SDK_RETURN_IF_ERROR(ctx.input(i, "x", &in));
    if (in.dtype != out.dtype) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input %u has dtype %s, the output %s", i, dtype_name(in.dtype),
                      dtype_name(out.dtype));
    }
    if (in.rank != out.rank) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input %u has rank %u, the output %u", i, in.rank, out.rank);
    }
    for (uint32_t d = 0; d < out.rank; ++d) {
      if (d != axis && in.shape[d] != out.shape[d]) {
        return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input %u has size %lld on axis %u, the output %lld", i,
                        static_cast<long long>(in.shape[d]), d, static_cast<long long>(out.shape[d]));
      }
    }
    total += in.shape[axis];
  }
  if (total != out.shape[axis]) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "inputs add up to %lld along axis %u, the output has %lld",
                    static_cast<long long>(total), axis, static_cast<long long>(out.shape[axis]));
  }
  int64_t start = 0;
  for (uint32_t i = 0; i < ctx.call->input_count; ++i) {
    DeviceView in;
    CTL_SDK_RETURN_IF_ERROR(ctx.input(i, "x", &in));
    if (in.numel() > 0) {
      DeviceView part = out;  // the slice of out this input fills
      part.shape[axis] = in.shape[axis];
      part.offset = out.offset + start * out.strides[axis];
      CTL_SDK_RETURN_IF_ERROR(ctx.copy_view(in, part));
    }
    start += in.shape[axis];
  }
  return nullptr;
}

ctl_status* run_gather(const OpContext& ctx) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(2, 2, 1, 1));
  DeviceView x, index, out;
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "x", &x));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(1, "index", &index));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "out", &out));
  CTL_SDK_RETURN_IF_ERROR(check_index(ctx, index));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(out, "output 0 (out)", x.dtype));
  if (x.rank == 0) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input 0 (x) must have rank >= 1");
  uint32_t axis;
  CTL_SDK_RETURN_IF_ERROR(read_axis(ctx, x.rank, &axis));
  CTL_SDK_RETURN_IF_ERROR(check_take_shape(ctx, out, "output 0 (out)", x, index, axis));
  if (out.numel() == 0) return nullptr;
  // One walk over out's shape: x steps on its own axes (0 on the index axes), index on its
  // axes (0 elsewhere); the gathered axis is added per element from the index value.
  const uint32_t q = index.rank;
  int64_t x_strides[CTL_MAX_RANK] = {}, index_strides[CTL_MAX_RANK] = {};
  for (uint32_t d = 0; d < out.rank; ++d) {
    if (d < axis)
      x_strides[d] = x.strides[d];
    else if (d < axis + q)
      index_strides[d] = index.strides[d - axis];
    else
      x_strides[d] = x.strides[d - q + 1];
  }
  const DeviceView xw = walk_view(out.rank, out.shape, x_strides);
  const DeviceView iw = walk_view(out.rank, out.shape, index_strides);
  const DeviceView* views[] = {&out, &xw, &iw};
  const Iteration it = make_iteration(views, 3);
  Kernel* k = nullptr;
  CTL_SDK_RETURN_IF_ERROR(
      ctx.kernel("movement", define("TA", x.dtype) + " " + define("TI", index.dtype), "gather_strided", &k));
  const cl_long n = it.numel, axis_size = x.shape[axis], axis_stride = x.strides[axis];
  return ctx.launch(k, n, out, it.strides[0], x, it.strides[1], index, it.strides[2], it.rank, it.shape, n, axis_size,
                    axis_stride);
}

ctl_status* run_scatter_add(const OpContext& ctx) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(3, 3, 1, 1));
  DeviceView target, index, src, out;
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "target", &target));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(1, "index", &index));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(2, "src", &src));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "out", &out));
  CTL_SDK_RETURN_IF_ERROR(check_index(ctx, index));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(src, "input 2 (src)", target.dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(out, "output 0 (out)", target.dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_same_shape(out, "output 0 (out)", target, "input 0 (target)"));
  if (target.rank == 0) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input 0 (target) must have rank >= 1");
  uint32_t axis;
  CTL_SDK_RETURN_IF_ERROR(read_axis(ctx, target.rank, &axis));
  CTL_SDK_RETURN_IF_ERROR(check_take_shape(ctx, src, "input 2 (src)", target, index, axis));
  if (out.numel() == 0) return nullptr;

  // The sums: a contiguous accumulator of the target's shape, in double (float on devices
  // without doubles) for floats and in 64-bit integers for integers.
  DeviceView acc = target;
  acc.dtype = is_float_dtype(target.dtype) && !ctx.device->has_fp64 ? CTL_DTYPE_F32 : CTL_DTYPE_F64;
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
    // Columns: the target's axes without `axis`, as src and acc step through them.
    const uint32_t q = index.rank, col_rank = target.rank - 1;
    int64_t col_shape[CTL_MAX_RANK] = {}, src_col[CTL_MAX_RANK] = {}, acc_col[CTL_MAX_RANK] = {};
    for (uint32_t d = 0, c = 0; d < target.rank; ++d) {
      if (d == axis) continue;
      col_shape[c] = target.shape[d];
      src_col[c] = src.strides[d < axis ? d : d - 1 + q];
      acc_col[c] = acc.strides[d];
      ++c;
    }
    const DeviceView sc = walk_view(col_rank, col_shape, src_col), ac = walk_view(col_rank, col_shape, acc_col);
    const DeviceView* col_views[] = {&sc, &ac};
    const Iteration cols = make_iteration(col_views, 2);
    // Index positions: index's axes, as index and src step through them.
    const DeviceView sj = walk_view(q, index.shape, src.strides + axis);
    const DeviceView* j_views[] = {&index, &sj};
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
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(0, 0, 1, 1));
  DeviceView out;
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "out", &out));
  ctl_fill_attrs attrs;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&attrs, sizeof attrs, CTL_FILL_ATTRS_STRUCT_SIZE, "ctl_fill_attrs", &given));
  if (out.numel() == 0) return nullptr;
  // One value for every element: converted here, stored as bits by the kernel.
  const cl_ulong bits = bits_from_double(out.dtype, given ? attrs.value : 0.0);
  const DeviceView* views[] = {&out};
  const Iteration it = make_iteration(views, 1);
  Kernel* k = nullptr;
  CTL_SDK_RETURN_IF_ERROR(ctx.kernel("movement", define("TA", out.dtype), "fill_strided", &k));
  const cl_long n = it.numel;
  return ctx.launch(k, n, out, it.strides[0], it.rank, it.shape, n, bits);
}

ctl_status* run_arange(const OpContext& ctx) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(0, 0, 1, 1));
  DeviceView out;
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "out", &out));
  if (out.rank != 1) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "output 0 (out) must be 1-D, it has rank %u", out.rank);
  }
  ctl_arange_attrs attrs;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&attrs, sizeof attrs, CTL_ARANGE_ATTRS_STRUCT_SIZE, "ctl_arange_attrs", &given));
  const double start = given ? attrs.start : 0.0, step = given ? attrs.step : 1.0;
  if (out.numel() == 0) return nullptr;
  const DeviceView* views[] = {&out};
  const Iteration it = make_iteration(views, 1);
  Kernel* k = nullptr;
  CTL_SDK_RETURN_IF_ERROR(ctx.kernel("movement", define("TA", out.dtype), "arange_strided", &k));
  return launch_wide(ctx, k, out, it, start, step, nullptr);
}

ctl_status* run_random(const OpContext& ctx) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(0, 0, 1, 1));
  DeviceView out;
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "out", &out));
  ctl_random_attrs attrs;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&attrs, sizeof attrs, CTL_RANDOM_ATTRS_STRUCT_SIZE, "ctl_random_attrs", &given));
  if (!given) {  // uniform [0, 1) / standard normal
    attrs.a = 0.0;
    attrs.b = 1.0;
  }
  if (!is_float_dtype(out.dtype)) {
    return ctx.fail(CTL_STATUS_UNSUPPORTED, "dtype %s is not supported", dtype_name(out.dtype));
  }
  if (out.numel() == 0) return nullptr;
  const bool normal = raw_enum(ctx.call->op) == CTL_OP_RANDOM_NORMAL;
  // Element i is row-major index i of the output: the iteration's order, whatever its strides.
  const DeviceView* views[] = {&out};
  const Iteration it = make_iteration(views, 1);
  Kernel* k = nullptr;
  CTL_SDK_RETURN_IF_ERROR(
      ctx.kernel("movement", define("TA", out.dtype), normal ? "random_normal" : "random_uniform", &k));
  const cl_ulong philox[2] = {attrs.seed, attrs.offset};
  return launch_wide(ctx, k, out, it, attrs.a, attrs.b, philox);
}

}  // namespace catalyst::opencl
