// PLACEHOLDER during development: replaced by the family's real kernels.
#include "kernels.h"

namespace catalyst::opencl {

ctl_status* run_copy(const OpContext& ctx) {
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "not implemented yet");
}

ctl_status* run_cast(const OpContext& ctx) {
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "not implemented yet");
}

ctl_status* run_concat(const OpContext& ctx) {
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "not implemented yet");
}

ctl_status* run_gather(const OpContext& ctx) {
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "not implemented yet");
}

ctl_status* run_scatter_add(const OpContext& ctx) {
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "not implemented yet");
}

ctl_status* run_fill(const OpContext& ctx) {
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "not implemented yet");
}

ctl_status* run_arange(const OpContext& ctx) {
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "not implemented yet");
}

ctl_status* run_random(const OpContext& ctx) {
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "not implemented yet");
}

}  // namespace catalyst::opencl
