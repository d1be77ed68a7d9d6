// creation.cpp — ops without inputs: fill, arange and counter-based random numbers.
// Every value is computed in f64 and converted once by the cast rules, so the result
// is the same on every device; random element i (row-major) uses Philox counter
// offset + i, which makes any split of the work across threads give the same numbers.
#include <cstring>

#include "cast_rules.h"
#include "catalyst/sdk/philox.hpp"
#include "dtype_dispatch.h"
#include "elementwise.h"
#include "kernels.h"

namespace catalyst::cpu {
namespace {

// out[i] = value_of(i) for the row-major index i of every element.
template <class T, class F>
void generate(const OpContext& ctx, const View& out, int64_t grain, F value_of) {
  const auto layout = make_layout<1>(out.rank, out.shape, {out.strides});
  T* const base = out.as<T>();
  parallel_for(ctx.pool, layout.numel, grain, [&](int64_t begin, int64_t end, unsigned) {
    for_each_segment(layout, begin, end, [&](const std::array<int64_t, 1>& off, int64_t n, int64_t linear) {
      T* o = base + off[0];
      const int64_t s = layout.inner_stride(0);
      for (int64_t i = 0; i < n; ++i) o[i * s] = value_of(linear + i);
    });
  });
}

}  // namespace

ctl_status* run_fill(const OpContext& ctx) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(0, 0, 1, 1));
  View out;
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "out", &out));
  ctl_fill_attrs attrs;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&attrs, sizeof attrs, CTL_FILL_ATTRS_STRUCT_SIZE, "ctl_fill_attrs", &given));
  const double value = given ? attrs.value : 0.0;
  if (out.numel() == 0) return nullptr;
  dispatch_all(out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T element = from_double<T>(value);
    // Fill as raw bits so that the loop is a plain store the compiler vectorises.
    dispatch_raw(sizeof(T), [&](auto raw) {
      using R = typename decltype(raw)::type;
      R bits;
      std::memcpy(&bits, &element, sizeof bits);
      generate<R>(ctx, out, kCheapGrain, [bits](int64_t) { return bits; });
    });
  });
  return nullptr;
}

ctl_status* run_arange(const OpContext& ctx) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(0, 0, 1, 1));
  View out;
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "out", &out));
  if (out.rank != 1)
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "output 0 (out) must be 1-D, it has rank %u", out.rank);
  ctl_arange_attrs attrs;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&attrs, sizeof attrs, CTL_ARANGE_ATTRS_STRUCT_SIZE, "ctl_arange_attrs", &given));
  const double start = given ? attrs.start : 0.0, step = given ? attrs.step : 1.0;
  if (out.numel() == 0) return nullptr;
  const bool known = dispatch_numeric(out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    generate<T>(ctx, out, kCheapGrain,
                [=](int64_t i) { return from_double<T>(start + static_cast<double>(i) * step); });
  });
  if (!known) return ctx.fail(CTL_STATUS_UNSUPPORTED, "dtype %s is not supported", dtype_name(out.dtype));
  return nullptr;
}

ctl_status* run_random(const OpContext& ctx) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(0, 0, 1, 1));
  View out;
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "out", &out));
  ctl_random_attrs attrs;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&attrs, sizeof attrs, CTL_RANDOM_ATTRS_STRUCT_SIZE, "ctl_random_attrs", &given));
  if (!given) {  // uniform [0, 1) / standard normal
    attrs.a = 0.0;
    attrs.b = 1.0;
  }
  if (out.numel() == 0) return nullptr;
  const bool normal = ctx.call->op == CTL_OP_RANDOM_NORMAL;
  const uint64_t seed = attrs.seed, offset = attrs.offset;
  const double a = attrs.a, b = attrs.b;
  const bool known = dispatch_float(out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    generate<T>(ctx, out, kCostlyGrain / 4, [=](int64_t i) {
      const uint64_t counter = offset + static_cast<uint64_t>(i);  // wraps, as the generator's counter does
      return from_double<T>(normal ? sdk::philox_normal(seed, counter, a, b)
                                   : sdk::philox_uniform(seed, counter, a, b));
    });
  });
  if (!known) return ctx.fail(CTL_STATUS_UNSUPPORTED, "dtype %s is not supported", dtype_name(out.dtype));
  return nullptr;
}

}  // namespace catalyst::cpu
