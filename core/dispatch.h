// dispatch.h — running an op: validate and normalise it (op_schema.h), allocate or check
// outputs, and hand the call to the device's plugin on its default stream.
#pragma once

#include "catalyst.h"

namespace catalyst {

ctl_status* run_op(ctl_op_id op, size_t input_count, ctl_tensor* const* inputs, const void* attrs, size_t output_count,
                   ctl_tensor** out_tensors);
ctl_status* run_op_into(ctl_op_id op, size_t input_count, ctl_tensor* const* inputs, const void* attrs,
                        size_t output_count, ctl_tensor* const* outputs);

}  // namespace catalyst
