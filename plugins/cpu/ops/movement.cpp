// movement.cpp — copy (any strides in and out), cast between every pair of dtypes, and
// concat. Contiguous runs become memcpy / tight conversion loops; everything else walks
// the coalesced strides.
#include <cstring>

#include "cast_rules.h"
#include "dtype_dispatch.h"
#include "elementwise.h"
#include "half_convert.h"
#include "kernels.h"

namespace catalyst::cpu {

void copy_elements(const OpContext& ctx, const View& src, const View& dst) {
  const auto layout = make_layout<2>(dst.rank, dst.shape, {dst.strides, src.strides});
  if (layout.numel == 0) return;
  const size_t es = dst.element_size;
  if (layout.rank == 1 && layout.strides[0][0] == 1 && layout.strides[1][0] == 1) {
    // Memory bandwidth, not the loop, is the limit: a few large memcpy calls.
    parallel_for(ctx.pool, layout.numel, 1 << 18, [&](int64_t begin, int64_t end, unsigned) {
      std::memcpy(dst.data + begin * es, src.data + begin * es, static_cast<size_t>(end - begin) * es);
    });
    return;
  }
  dispatch_raw(es, [&](auto tag) {
    using R = typename decltype(tag)::type;
    map_unary<R, R>(ctx, dst, src, kCheapGrain, [](R v) { return v; });
  });
}

ctl_status* run_copy(const OpContext& ctx) {
  View x, y;
  CTL_SDK_RETURN_IF_ERROR(ctx.one_to_one(&x, &y));
  copy_elements(ctx, x, y);
  return nullptr;
}

namespace {

// f32 <-> f16/bf16: contiguous runs go through half_convert's span conversions, which
// round as convert() does (rounding a float's exact double is rounding the float) and keep
// NaNs as it does; other runs take convert() element by element. A bf16 GPT step spent 8%
// of its time in the scalar casts (weights, activations and gradients change dtype every
// step). False, doing nothing, for other pairs of dtypes.
bool cast_half_spans(const OpContext& ctx, const View& x, const View& y) {
  const auto half = [](ctl_dtype d) { return d == CTL_DTYPE_F16 || d == CTL_DTYPE_BF16; };
  if (!(half(x.dtype) && y.dtype == CTL_DTYPE_F32) && !(x.dtype == CTL_DTYPE_F32 && half(y.dtype))) return false;
  const ctl_dtype d = half(x.dtype) ? x.dtype : y.dtype;
  dispatch_float(d, [&](auto tag) {
    using H = typename decltype(tag)::type;
    if constexpr (is_half_v<H>) {
      if (x.dtype == CTL_DTYPE_F32) {
        map_unary_spans<H, float>(
            ctx, y, x, kCheapGrain, [](float v) { return convert<float, H>(v); },
            [d](H* o, const float* v, int64_t n) { f32_span_to_half(d, v, reinterpret_cast<uint16_t*>(o), n); });
      } else {
        map_unary_spans<float, H>(
            ctx, y, x, kCheapGrain, [](H v) { return convert<H, float>(v); },
            [d](float* o, const H* v, int64_t n) { half_span_to_f32(d, reinterpret_cast<const uint16_t*>(v), o, n); });
      }
    }
  });
  return true;
}

}  // namespace

ctl_status* run_cast(const OpContext& ctx) {
  View x, y;
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
  if (x.dtype == y.dtype && x.dtype != CTL_DTYPE_BOOL) {
    copy_elements(ctx, x, y);
    return nullptr;
  }
  if (cast_half_spans(ctx, x, y)) return nullptr;
  dispatch_all(x.dtype, [&](auto source) {
    using S = typename decltype(source)::type;
    dispatch_all(y.dtype, [&](auto target) {
      using D = typename decltype(target)::type;
      map_unary<D, S>(ctx, y, x, kCheapGrain, [](S v) { return convert<S, D>(v); });
    });
  });
  return nullptr;
}

ctl_status* run_concat(const OpContext& ctx) {
  if (ctx.call->input_count == 0) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "needs at least one input");
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(1, UINT32_MAX, 1, 1));
  View out;
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "out", &out));
  ctl_axis_attrs attrs;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&attrs, sizeof attrs, CTL_AXIS_ATTRS_STRUCT_SIZE, "ctl_axis_attrs", &given));
  if (out.rank == 0) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "output 0 (out) must have rank >= 1");
  int64_t axis = given ? attrs.axis : 0;
  if (axis < 0) axis += out.rank;
  if (axis < 0 || axis >= static_cast<int64_t>(out.rank)) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs.axis %d is out of range for rank %u", attrs.axis, out.rank);
  }
  // Check every input before writing anything.
  int64_t total = 0;
  for (uint32_t i = 0; i < ctx.call->input_count; ++i) {
    View in;
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
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "inputs add up to %lld along axis %lld, the output has %lld",
                    static_cast<long long>(total), static_cast<long long>(axis),
                    static_cast<long long>(out.shape[axis]));
  }
  int64_t start = 0;
  for (uint32_t i = 0; i < ctx.call->input_count; ++i) {
    View in;
    CTL_SDK_RETURN_IF_ERROR(ctx.input(i, "x", &in));
    View part = out;  // the slice of out this input fills
    part.shape[axis] = in.shape[axis];
    if (in.numel() > 0) {
      part.data = out.data + static_cast<size_t>(start * out.strides[axis]) * out.element_size;
      copy_elements(ctx, in, part);
    }
    start += in.shape[axis];
  }
  return nullptr;
}

}  // namespace catalyst::cpu
