// reduce.cpp — reductions over any set of axes (shaders/reduce.comp): the kept axes and the
// reduced axes each become an Iteration, one work-group per output element; a reduction too
// long for one dispatch's loop budget (op_context.h) is folded in parts.
#include <algorithm>
#include <string>

#include "catalyst/sdk/bind_reduce.hpp"
#include "kernels.h"

namespace catalyst::vulkan {

ctl_status* run_reduce(const OpContext& ctx) {
  sdk::ReduceProblem<DeviceView> rp;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_reduce(ctx, &rp));
  const DeviceView &x = rp.x, &out = rp.out, &kept_x = rp.kept_x, &kept_out = rp.kept_out, &red_x = rp.reduced_x;
  const ctl_op_id op = rp.op;
  const bool arg = rp.arg, floats = sdk::is_float_dtype(x.dtype);
  const DeviceView* kept_views[] = {&kept_x, &kept_out};
  const DeviceView* red_views[] = {&red_x};
  const Iteration kept = make_iteration(kept_views, 2);
  const Iteration red = make_iteration(red_views, 1);
  if (kept.numel == 0) return nullptr;
  Params p;
  p.add_iteration(kept, kept_views, 2);
  p.add_iteration(red, red_views, 1);
  // One group per output while there are groups; a group folds its outputs in turn.
  const int64_t groups = std::min<int64_t>(kept.numel, std::min<uint32_t>(ctx.device->max_group_count_x, 65535));
  const int64_t outputs_per_group = (kept.numel + groups - 1) / groups;
  // How many reduced elements one dispatch may fold: a lane's loop iterations (about
  // 2 + 2 x rank per element: the element loop and the index arithmetic's loops over the
  // axes) over all its outputs stay within kLoopBudget. Past that the reduction is split,
  // each lane's state waiting in a carry between parts.
  // An output also costs its tree and its index arithmetic: kPerOutput more.
  constexpr int64_t kPerOutput = 32;
  const int64_t per_element = 2 + 2 * static_cast<int64_t>(red.rank);
  const int64_t per_output = kLoopBudget / outputs_per_group - kPerOutput;
  const int64_t elements_per_lane = std::max<int64_t>(1, per_output / per_element);
  const int64_t part = elements_per_lane * kLoopLocal;  // a multiple of the local size
  const int64_t parts = std::max<int64_t>(1, (red.numel + part - 1) / part);
  if (per_output < per_element) {
    return ctx.fail(CTL_STATUS_UNSUPPORTED,
                    "%lld outputs of %lld reduced elements each are more than this device can fold within its "
                    "shaders' loop budget",
                    static_cast<long long>(kept.numel), static_cast<long long>(red.numel));
  }
  // Sums accumulate in double where the device has it.
  const bool in_double = floats && x.dtype != CTL_DTYPE_F64 && !arg &&
                         (op == CTL_OP_SUM || op == CTL_OP_MEAN || op == CTL_OP_LOGSUMEXP) &&
                         (ctx.device->dtype_mask & CTL_DTYPE_BIT(CTL_DTYPE_F64));
  std::string variant = std::string(arg ? "argreduce." : "reduce.") + dtype_name(x.dtype) + (in_double ? ".d" : "");
  const uint64_t carry_value_size = in_double || x.element_size == 8 ? 8 : 4;
  const auto lanes = static_cast<uint64_t>(kept.numel) * kLoopLocal;
  Temporary carry_values(ctx), carry_indices(ctx);
  DeviceView value_carry, index_carry;
  CTL_SDK_RETURN_IF_ERROR(ctx.carry(parts > 1, (2 * lanes + static_cast<uint64_t>(kept.numel)) * carry_value_size, x,
                                    &carry_values, &value_carry));
  CTL_SDK_RETURN_IF_ERROR(ctx.carry(parts > 1, lanes * 4, x, &carry_indices, &index_carry));
  // logsumexp split in parts takes two sweeps: the maximum over every part, then the sums.
  const bool two_sweeps = op == CTL_OP_LOGSUMEXP && parts > 1;
  const size_t split_at = p.words.size();
  for (uint32_t sweep = two_sweeps ? 0 : 2; sweep <= (two_sweeps ? 1u : 2u); ++sweep) {
    for (int64_t k = 0; k < parts; ++k) {
      p.words.resize(split_at);
      p.add_part(k, parts, part, red.numel);
      p.add(sweep);
      CTL_SDK_RETURN_IF_ERROR(ctx.dispatch(variant, kLoopLocal, {static_cast<int32_t>(op)},
                                           static_cast<uint32_t>(groups), 1, p,
                                           {reads(x), writes(out), writes(value_carry), writes(index_carry)}));
    }
  }
  return nullptr;
}

}  // namespace catalyst::vulkan
