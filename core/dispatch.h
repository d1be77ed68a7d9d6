// dispatch.h — running an op: validate and normalise it (op_schema.h), allocate or check
// outputs, and hand the call to the device's plugin on its default stream.
#pragma once

#include "catalyst_plugin.h"
#include "graph/capture.h"

namespace catalyst {

// True when the two tensors share bytes of one storage.
bool overlaps(const ctl_tensor* a, const ctl_tensor* b);

// Runs a built plugin call on the device's default stream; a failure is annotated with the
// op and the device. While this thread captures a graph on the device's runtime the call
// is recorded instead, with `tensors` (the tensors behind the call's views) naming the
// storages it uses.
ctl_status* execute_call(ctl_device* device, const ctl_op_call& call, const CallTensors& tensors);

ctl_status* run_op(ctl_op_id op, size_t input_count, ctl_tensor* const* inputs, const void* attrs, size_t output_count,
                   ctl_tensor** out_tensors);
ctl_status* run_op_into(ctl_op_id op, size_t input_count, ctl_tensor* const* inputs, const void* attrs,
                        size_t output_count, ctl_tensor* const* outputs);

// Validates and normalises a call exactly as run_op_into does, then asks the device's
// op_supports without running anything: NULL when the device claims the call (or has no
// op_supports, in which case *out_asked is false), else the validation error or the
// plugin's UNSUPPORTED status. The conformance suite judges plugins on these claims.
ctl_status* query_op_support(ctl_op_id op, size_t input_count, ctl_tensor* const* inputs, const void* attrs,
                             size_t output_count, ctl_tensor* const* outputs, bool* out_asked);

}  // namespace catalyst
