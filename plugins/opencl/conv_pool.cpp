// PLACEHOLDER during development: replaced by the family's real kernels.
#include "kernels.h"

namespace catalyst::opencl {

ctl_status* run_conv2d(const OpContext& ctx) {
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "not implemented yet");
}

ctl_status* run_conv2d_backward_input(const OpContext& ctx) {
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "not implemented yet");
}

ctl_status* run_conv2d_backward_weight(const OpContext& ctx) {
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "not implemented yet");
}

ctl_status* run_max_pool2d(const OpContext& ctx) {
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "not implemented yet");
}

ctl_status* run_max_pool2d_backward(const OpContext& ctx) {
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "not implemented yet");
}

ctl_status* run_avg_pool2d(const OpContext& ctx) {
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "not implemented yet");
}

ctl_status* run_avg_pool2d_backward(const OpContext& ctx) {
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "not implemented yet");
}

}  // namespace catalyst::opencl
