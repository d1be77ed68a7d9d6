// creation.cpp — reference kernels that create values without inputs: fill, arange and
// random (uniform, normal). Element i is the i-th element of the output view in row-major
// order, whatever its strides, so a strided output gets the same values as a contiguous one.
#include "catalyst/sdk/philox.hpp"
#include "catalyst/sdk/view.hpp"
#include "reference_kernels.h"

namespace catalyst::reference {
namespace {

// Calls value(i) for the i-th element in row-major order and stores it by the cast rules.
template <typename ValueFn>
void generate(const Operand& y, ValueFn value) {
  sdk::StridedWalker<1> walk(y.rank, y.shape);
  walk.add(y.strides);
  for (int64_t i = 0, n = y.numel(); i < n; ++i, walk.next()) {
    y.store(walk.offset(0), value(i));
  }
}

}  // namespace

ctl_status* run_fill(const Call& call) {
  ctl_fill_attrs attrs;
  bool present = false;
  CTL_SDK_RETURN_IF_ERROR(read_attrs(call, CTL_FILL_ATTRS_STRUCT_SIZE, &attrs, &present));
  const double value = present ? attrs.value : 0.0;  // NULL attrs: zeros
  generate(call.out[0], [&](int64_t) { return value; });
  return nullptr;
}

ctl_status* run_arange(const Call& call) {
  ctl_arange_attrs attrs;
  bool present = false;
  CTL_SDK_RETURN_IF_ERROR(read_attrs(call, CTL_ARANGE_ATTRS_STRUCT_SIZE, &attrs, &present));
  const double start = present ? attrs.start : 0.0;  // NULL attrs: 0, 1, 2, ...
  const double step = present ? attrs.step : 1.0;
  generate(call.out[0], [&](int64_t i) { return start + static_cast<double>(i) * step; });
  return nullptr;
}

ctl_status* run_random(const Call& call) {
  ctl_random_attrs attrs;
  bool present = false;
  CTL_SDK_RETURN_IF_ERROR(read_attrs(call, CTL_RANDOM_ATTRS_STRUCT_SIZE, &attrs, &present));
  if (!present) {  // NULL attrs: seed 0, offset 0, uniform [0, 1) or standard normal
    attrs.a = 0.0;
    attrs.b = 1.0;
  }
  const bool uniform = call.op == CTL_OP_RANDOM_UNIFORM;
  generate(call.out[0], [&](int64_t i) {
    const uint64_t counter = attrs.offset + static_cast<uint64_t>(i);  // wraps, as uint64
    return uniform ? sdk::philox_uniform(attrs.seed, counter, attrs.a, attrs.b)
                   : sdk::philox_normal(attrs.seed, counter, attrs.a, attrs.b);
  });
  return nullptr;
}

}  // namespace catalyst::reference
