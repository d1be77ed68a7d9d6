// PLACEHOLDER during development: replaced by the family's real kernels.
#include "kernels.h"

namespace catalyst::opencl {

ctl_status* run_cross_entropy(const OpContext& ctx) {
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "not implemented yet");
}

ctl_status* run_cross_entropy_backward(const OpContext& ctx) {
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "not implemented yet");
}

ctl_status* run_adamw_step(const OpContext& ctx) {
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "not implemented yet");
}

}  // namespace catalyst::opencl
