// op_dispatch.cpp — the op table: which family computes each op, in the dtypes of the op
// set (sdk/op_dtypes.hpp) narrowed by what this plugin's shaders compute and by what each
// device offers (f64, i64, 8- and 16-bit storage); op_supports, and op_execute's routing.
#include "catalyst/sdk/op_families.hpp"
#include "catalyst/sdk/status.hpp"
#include "kernels.h"
#include "plugin.h"

namespace catalyst::vulkan {
namespace {

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
});

// Checks the call header, that op and dtype are in the table, and that every view of the call
// is in a dtype the device computes in (f64 depends on the driver), not only the one that keys
// the table; NULL when they are.
ctl_status* check_supported(const ctl_host_api* host, const ctl_plugin_device* device, const ctl_op_call* call,
                            const OpEntry** out_entry) {
  if (const sdk::Check check = sdk::find_op(kOps, call, "Vulkan", out_entry); !check.ok()) {
    return sdk::make_status(host, check.code, "%s%s", kLogPrefix, check.message);
  }
  int64_t dtype = sdk::dtype_outside(call->inputs, call->input_count, device->dtype_mask);
  if (dtype < 0) dtype = sdk::dtype_outside(call->outputs, call->output_count, device->dtype_mask);
  if (dtype >= 0) {
    return sdk::make_status(host, CTL_STATUS_UNSUPPORTED, "%s%s: %s has no %s support", kLogPrefix, (*out_entry)->name,
                            device->name.c_str(), dtype_name(static_cast<ctl_dtype>(dtype)));
  }
  return nullptr;
}

}  // namespace

ctl_status* op_supports(ctl_plugin_device* device, const ctl_op_call* call) {
  const OpEntry* entry = nullptr;
  return check_supported(device->instance->host, device, call, &entry);
}

ctl_status* op_execute(ctl_plugin_stream* stream, const ctl_op_call* call) {
  ctl_plugin_device* device = stream->device;
  const ctl_host_api* host = device->instance->host;
  const OpEntry* entry = nullptr;
  CTL_SDK_RETURN_IF_ERROR(check_supported(host, device, call, &entry));
  CTL_VK_RETURN_IF_LOST(device, entry->name);
  const OpContext ctx{host, device, stream, call, entry->name};
  return sdk::run_guarded(ctx, "out of host memory", [&] { return entry->run(ctx); });
}

}  // namespace catalyst::vulkan
