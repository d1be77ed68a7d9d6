// adamw_attrs.hpp — checking adamw_step's hyperparameters (ctl_adamw_attrs) before a step, so
// every plugin rejects the same steps in the same words.
#pragma once

#include <cmath>

#include "catalyst/sdk/check.hpp"
#include "catalyst_plugin.h"

namespace catalyst::sdk {

// The attrs of a call that has them: step from 1, betas in [0, 1), eps > 0, all finite.
inline Check check_adamw_attrs(const ctl_adamw_attrs& a) {
  if (a.step == 0) return check_failed(CTL_STATUS_INVALID_ARGUMENT, "attrs.step is 0; the first update is step 1");
  const bool finite = std::isfinite(a.lr) && std::isfinite(a.eps) && std::isfinite(a.weight_decay);
  if (!finite || !(a.beta1 >= 0 && a.beta1 < 1) || !(a.beta2 >= 0 && a.beta2 < 1) || !(a.eps > 0)) {
    return check_failed(CTL_STATUS_INVALID_ARGUMENT,
                        "attrs hold lr %g, beta1 %g, beta2 %g, eps %g, weight_decay %g; betas must be in [0, 1), "
                        "eps > 0 and all finite",
                        a.lr, a.beta1, a.beta2, a.eps, a.weight_decay);
  }
  return Check();
}

}  // namespace catalyst::sdk
