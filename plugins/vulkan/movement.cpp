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
