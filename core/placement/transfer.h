// transfer.h — moving a tensor's bytes from one device to another (ctl_tensor_to_device,
// ctl_tensor_transfer, and the moves placement makes for cross-device inputs and
// fallbacks), and the counters every move and fallback adds to.
#pragma once

#include <chrono>

#include "catalyst.h"

namespace catalyst {

// A new contiguous tensor on `target` holding `source`'s elements; not recorded by
// autograd. Within one plugin that has buffer_copy_peer the copy is queued on the target's
// stream behind an event recorded on the source's (nobody waits); otherwise the bytes go
// through host memory and the call returns once they have arrived. When `source` is on
// `target` already, the result is a plain copy there. The move is counted under `op`.
ctl_status* move_tensor(ctl_tensor* source, ctl_device* target, ctl_op_id op, ctl_tensor** out_tensor);

// Copies dense `source`'s elements to the start of `destination`'s storage on another
// device, and counts it as a move of `op` that began at `began` (placement report, both
// devices' usage).
ctl_status* copy_across(ctl_tensor* dense, ctl_tensor* destination, ctl_op_id op,
                        std::chrono::steady_clock::time_point began);

// UNSUPPORTED, naming both devices, when `target` does not hold `dtype`: a tensor of it
// cannot move (or be shared) there.
ctl_status* check_target_dtype(ctl_dtype dtype, const ctl_device* from, const ctl_device* target);

// Adds a fallback of `op` from `asked` to `ran_on`, which began at `began` and ends now, to
// the runtime's placement report.
void count_fallback(ctl_op_id op, ctl_device* asked, ctl_device* ran_on, std::chrono::steady_clock::time_point began);

}  // namespace catalyst
