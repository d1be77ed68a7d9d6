// sgd_attrs.hpp — checking sgd_step's hyperparameters (ctl_sgd_attrs) before a step, so every
// plugin and the core reject the same steps in the same words.
#pragma once

#include <cmath>

#include "catalyst/sdk/check.hpp"
#include "catalyst_plugin.h"

namespace catalyst::sdk {

// The attrs of a call that has them: all finite, momentum >= 0, dampening in [0, 1], and
// Nesterov only with momentum and without dampening (its look-ahead assumes both); and
// output 1, the momentum buffer, given (`has_buffer`) exactly when momentum is not 0.
inline Check check_sgd_attrs(const ctl_sgd_attrs& a, bool has_buffer) {
  const bool finite =
      std::isfinite(a.lr) && std::isfinite(a.momentum) && std::isfinite(a.dampening) && std::isfinite(a.weight_decay);
  if (!finite || !(a.momentum >= 0) || !(a.dampening >= 0 && a.dampening <= 1)) {
    return check_failed(CTL_STATUS_INVALID_ARGUMENT,
                        "attrs hold lr %g, momentum %g, dampening %g, weight_decay %g; momentum must be >= 0, "
                        "dampening in [0, 1] and all finite",
                        a.lr, a.momentum, a.dampening, a.weight_decay);
  }
  if (a.nesterov && (a.momentum == 0 || a.dampening != 0)) {
    return check_failed(CTL_STATUS_INVALID_ARGUMENT,
                        "attrs ask for Nesterov momentum with momentum %g and dampening %g; it needs momentum > 0 "
                        "and dampening 0",
                        a.momentum, a.dampening);
  }
  if (has_buffer != (a.momentum != 0)) {
    return check_failed(CTL_STATUS_INVALID_ARGUMENT,
                        a.momentum != 0 ? "momentum is %g but output 1 (momentum_buf) is NULL"
                                        : "momentum is %g, so output 1 (momentum_buf) must be NULL",
                        a.momentum);
  }
  return Check();
}

}  // namespace catalyst::sdk
