// op_dispatch.cpp — the op table: which family computes each op of the op set, in every
// dtype sdk/op_dtypes.hpp (the table of docs/ops.md) gives it; op_supports, and
// op_execute's routing to a family.
#include "catalyst/sdk/op_families.hpp"
#include "catalyst/sdk/status.hpp"
#include "kernels.h"
#include "plugin.h"
#include "simd_state.h"

namespace catalyst::cpu {
namespace {

// The family that runs each op here. Names, dtypes and keys are the op set's
// (sdk/op_dtypes.hpp), joined in below so that this file cannot disagree with them.
using Run = ctl_status* (*)(const OpContext&);
using OpEntry = sdk::OpEntryOf<Run>;
constexpr auto kOps = sdk::op_table(sdk::OpFamilies<Run>{
    .unary = run_unary,
    .binary = run_binary,
    .compare = run_compare,
    .where = run_where,
    .gelu_backward = run_gelu_backward,
    .reduce = run_reduce,
    .matmul = run_matmul,
    .softmax = run_softmax,
    .softmax_backward = run_softmax_backward,
    .layer_norm = run_layer_norm,
    .layer_norm_backward = run_layer_norm_backward,
    .rms_norm = run_rms_norm,
    .rms_norm_backward = run_rms_norm_backward,
    .copy = run_copy,
    .cast = run_cast,
    .concat = run_concat,
    .gather = run_gather,
    .scatter_add = run_scatter_add,
    .fill = run_fill,
    .arange = run_arange,
    .random = run_random,
    .cross_entropy = run_cross_entropy,
    .cross_entropy_backward = run_cross_entropy_backward,
    .adamw_step = run_adamw_step,
    .sgd_step = run_sgd_step,
    .conv2d = run_conv2d,
    .conv2d_backward_input = run_conv2d_backward_input,
    .conv2d_backward_weight = run_conv2d_backward_weight,
    .max_pool2d = run_max_pool2d,
    .max_pool2d_backward = run_max_pool2d_backward,
    .avg_pool2d = run_avg_pool2d,
    .avg_pool2d_backward = run_avg_pool2d_backward,
    .fused_elementwise = run_fused_elementwise,
});

const OpEntry* find_op(int64_t id) {
  for (const OpEntry& entry : kOps) {
    if (entry.id == id) return &entry;
  }
  return nullptr;
}

// Checks the call header and that op and dtype are in the table; NULL when they are.
ctl_status* check_supported(const ctl_host_api* host, const ctl_op_call* call, const OpEntry** out_entry) {
  if (const sdk::Check check = sdk::find_op(kOps, call, "CPU", out_entry); !check.ok()) {
    return sdk::make_status(host, check.code, "%s%s", kLogPrefix, check.message);
  }
  return nullptr;
}

}  // namespace

const char* op_name(ctl_op_id op) {
  const OpEntry* entry = find_op(raw_enum(op));
  return entry ? entry->name : nullptr;
}

ctl_status* op_supports(ctl_plugin_device* device, const ctl_op_call* call) {
  if (!device) return null_handle("op_supports", "device");
  const OpEntry* entry = nullptr;
  return check_supported(device->instance->host, call, &entry);
}

ctl_status* op_execute(ctl_plugin_stream* stream, const ctl_op_call* call) {
  if (!stream) return null_handle("op_execute", "stream");
  ctl_plugin_device* device = stream->device;
  const ctl_host_api* host = device->instance->host;
  const OpEntry* entry = nullptr;
  CTL_SDK_RETURN_IF_ERROR(check_supported(host, call, &entry));
  const OpContext ctx{host, device->pool, call, entry->name, device->buffer_cache};
  clear_upper_state();  // the kernels are SSE-encoded: see simd_state.h
  return sdk::run_guarded(ctx, "out of memory", [&] { return entry->run(ctx); });
}

}  // namespace catalyst::cpu
