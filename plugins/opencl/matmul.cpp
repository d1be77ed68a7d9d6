// PLACEHOLDER during development: replaced by the family's real kernels.
#include "kernels.h"

namespace catalyst::opencl {

ctl_status* run_matmul(const OpContext& ctx) {
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "not implemented yet");
}

}  // namespace catalyst::opencl
