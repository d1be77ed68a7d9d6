// PLACEHOLDER during development: replaced by the family's real kernels.
#include "kernels.h"

namespace catalyst::opencl {

ctl_status* run_softmax(const OpContext& ctx) {
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "not implemented yet");
}

ctl_status* run_layer_norm(const OpContext& ctx) {
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "not implemented yet");
}

ctl_status* run_rms_norm(const OpContext& ctx) {
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "not implemented yet");
}

ctl_status* run_softmax_backward(const OpContext& ctx) {
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "not implemented yet");
}

ctl_status* run_layer_norm_backward(const OpContext& ctx) {
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "not implemented yet");
}

ctl_status* run_rms_norm_backward(const OpContext& ctx) {
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "not implemented yet");
}

}  // namespace catalyst::opencl
