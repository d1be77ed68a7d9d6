// placed_dispatch.h — what run_op and run_op_into do when an op cannot run as asked and the
// runtime's placement policy may help: inputs on several devices (moved to one), or an op
// the device does not run (run on another device, results moved back). Only reached after
// the ordinary path failed, so ops that run as asked pay nothing for placement.
#pragma once

#include "catalyst.h"

namespace catalyst {

// When the policy allows resolving `failure` (the status the ordinary path returned for
// this call), takes it over: frees `failure`, sets *out_status to the placed call's result
// and returns true. Otherwise returns false and leaves `failure` to the caller, with a hint
// added to it when allowing fallback or cross-device inputs would have helped.
bool run_op_placed(ctl_op_id op, size_t input_count, ctl_tensor* const* inputs, const void* attrs, size_t output_count,
                   ctl_tensor** out_tensors, ctl_status** failure);
bool run_op_into_placed(ctl_op_id op, size_t input_count, ctl_tensor* const* inputs, const void* attrs,
                        size_t output_count, ctl_tensor* const* outputs, ctl_status** failure);

// ctl_tensor_transfer without the argument checks: a move that autograd records.
ctl_status* transfer_recorded(ctl_tensor* source, ctl_device* target, ctl_op_id op, ctl_tensor** out_tensor);

}  // namespace catalyst
