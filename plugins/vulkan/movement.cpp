// movement.cpp — copy, cast and the creation ops (fill, arange): strided loops over the
// output, one shader template each (shaders/copy.comp, cast.comp, fill.comp, arange.comp).
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "catalyst/sdk/half.hpp"
#include "kernels.h"

namespace catalyst::vulkan {
namespace {

// A double as the raw bits of an integer dtype I, by the float-source cast rules.
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

// A double as the raw bits of `dtype`, by the cast rules.
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
  CTL_SDK_RETURN_IF_ERROR(ctx.one_to_one(&x, &y, /*same_dtype=*/false));
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
  Params p;
  p.add_iteration(it, views, 2);
  return ctx.dispatch(std::string("cast.") + dtype_name(x.dtype) + "." + dtype_name(y.dtype), kLoopLocal, {},
                      ctx.loop_groups(it.numel, kLoopLocal), 1, p, {reads(x), writes(y)});
}

ctl_status* run_fill(const OpContext& ctx) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(0, 0, 1, 1));
  DeviceView out;
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "out", &out));
  ctl_fill_attrs attrs;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&attrs, sizeof attrs, CTL_FILL_ATTRS_STRUCT_SIZE, "ctl_fill_attrs", &given));
  if (out.numel() == 0) return nullptr;
  const DeviceView* views[] = {&out};
  const Iteration it = make_iteration(views, 1);
  Params p;
  p.add_iteration(it, views, 1);
  p.add_i64(static_cast<int64_t>(bits_from_double(out.dtype, given ? attrs.value : 0.0)));
  return ctx.dispatch(std::string("fill.") + dtype_name(out.dtype), kLoopLocal, {},
                      ctx.loop_groups(it.numel, kLoopLocal), 1, p, {writes(out)});
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
  if (out.numel() == 0) return nullptr;
  if (!(ctx.device->dtype_mask & CTL_DTYPE_BIT(CTL_DTYPE_F64))) {
    return ctx.fail(CTL_STATUS_UNSUPPORTED, "arange computes in f64, which %s lacks", ctx.device->name.c_str());
  }
  const DeviceView* views[] = {&out};
  const Iteration it = make_iteration(views, 1);
  Params p;
  p.add_iteration(it, views, 1);
  p.add_f64(given ? attrs.start : 0.0);
  p.add_f64(given ? attrs.step : 1.0);
  return ctx.dispatch(std::string("arange.") + dtype_name(out.dtype), kLoopLocal, {},
                      ctx.loop_groups(it.numel, kLoopLocal), 1, p, {writes(out)});
}

}  // namespace catalyst::vulkan

namespace catalyst::vulkan {

ctl_status* run_concat(const OpContext& ctx) {
  if (ctx.call->input_count == 0) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "needs at least one input");
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(1, UINT32_MAX, 1, 1));
  DeviceView out;
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "out", &out));
  if (out.rank == 0) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "output 0 (out) must have rank >= 1");
  uint32_t axis;
  CTL_SDK_RETURN_IF_ERROR(read_axis(ctx, out.rank, &axis));
  // Check every input before recording anything.
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
      part.offset = static_cast<uint32_t>(out.offset + start * out.strides[axis]);
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
  DeviceView xw = walk_view(out.rank, out.shape, x_strides);
  DeviceView iw = walk_view(out.rank, out.shape, index_strides);
  xw.offset = x.offset;
  iw.offset = index.offset;
  const DeviceView* views[] = {&out, &xw, &iw};
  const Iteration it = make_iteration(views, 3);
  Params p;
  p.add_iteration(it, views, 3);
  p.add(static_cast<uint32_t>(x.shape[axis]));
  p.add(static_cast<uint32_t>(x.strides[axis]));
  return ctx.dispatch(std::string("gather.") + dtype_name(x.dtype) + "." + dtype_name(index.dtype), kLoopLocal, {},
                      ctx.loop_groups(it.numel, kLoopLocal), 1, p, {writes(out), reads(x), reads(index)});
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
  // The sums: a contiguous accumulator of the target's shape, double for floats and
  // wrapping int64 for integers, cast in from target and out to out.
  DeviceView acc = target;
  acc.dtype = is_float_dtype(target.dtype) ? CTL_DTYPE_F64 : CTL_DTYPE_I64;
  acc.element_size = 8;
  Temporary storage(ctx);
  CTL_SDK_RETURN_IF_ERROR(ctx.contiguous_like(acc, &storage, &acc));
  CTL_SDK_RETURN_IF_ERROR(cast_view(ctx, target, acc));
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
    DeviceView sc = walk_view(col_rank, col_shape, src_col), ac = walk_view(col_rank, col_shape, acc_col);
    sc.offset = src.offset;
    ac.offset = 0;
    const DeviceView* col_views[] = {&sc, &ac};
    const Iteration cols = make_iteration(col_views, 2);
    // Index positions: index's axes, as index and src step through them.
    DeviceView sj = walk_view(q, index.shape, src.strides + axis);
    sj.offset = 0;
    const DeviceView* j_views[] = {&index, &sj};
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
  p.add_i64(static_cast<int64_t>(attrs.seed));
  p.add_i64(static_cast<int64_t>(attrs.offset));
  p.add_f64(attrs.a);
  p.add_f64(attrs.b);
  return ctx.dispatch(std::string("random.") + dtype_name(out.dtype), kLoopLocal,
                      {static_cast<int32_t>(raw_enum(ctx.call->op))}, ctx.loop_groups(it.numel, kLoopLocal), 1, p,
                      {writes(out)});
}

}  // namespace catalyst::vulkan
