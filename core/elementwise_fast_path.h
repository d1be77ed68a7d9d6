// elementwise_fast_path.h — the short way through ctl_op_run_into and ctl_op_binary for
// the most common small op: a plain unary or binary elementwise op on inputs of one
// shape, dtype and device, with no gradient to record.
//
// The general path (op_schema.cpp, dispatch.cpp) validates every op family and builds its
// errors; this one only recognises calls that are certainly valid and sends them straight
// to the plugin, with the same views the general path would build. Anything else (a bad
// argument, broadcasting, an input that needs autograd) is declined, and the caller takes
// the general path, which names the error. No heap, no strings on the way.
#pragma once

#include "catalyst.h"

namespace catalyst {

// Runs the op into the caller's outputs when the call is the simple case; returns false
// (and does nothing) otherwise. *out_status receives the plugin's result when it ran.
bool try_elementwise_into(const ctl_op_id& op, size_t input_count, ctl_tensor* const* inputs, size_t output_count,
                          ctl_tensor* const* outputs, ctl_status** out_status);

// The same for an allocating call (ctl_op_run, ctl_op_unary, ctl_op_binary): the new
// output is stored in *out_tensor only on success.
bool try_elementwise_allocating(const ctl_op_id& op, size_t input_count, ctl_tensor* const* inputs, size_t output_count,
                                ctl_tensor** out_tensors, ctl_status** out_status);

}  // namespace catalyst
