// op_dispatch.cpp — the op table: which family computes each op of the op set, in every
// dtype sdk/op_dtypes.hpp (the table of docs/ops.md) gives it; op_supports, and
// op_execute's routing to a family.
#include <array>
#include <exception>
#include <iterator>
#include <new>

#include "catalyst/sdk/op_dtypes.hpp"
#include "catalyst/sdk/status.hpp"
#include "kernels.h"
#include "plugin.h"
#include "simd_state.h"

namespace catalyst::cpu {
namespace {

// The family that runs each op here. Names, dtypes and keys are the op set's
// (sdk/op_dtypes.hpp), joined in below so that this file cannot disagree with them.
using OpRun = sdk::OpRunOf<ctl_status* (*)(const OpContext&)>;
using OpEntry = sdk::OpEntryOf<ctl_status* (*)(const OpContext&)>;
constexpr OpRun kRuns[] = {
    {CTL_OP_NEG, run_unary},
    {CTL_OP_ABS, run_unary},
    {CTL_OP_EXP, run_unary},
    {CTL_OP_LOG, run_unary},
    {CTL_OP_SQRT, run_unary},
    {CTL_OP_RSQRT, run_unary},
    {CTL_OP_TANH, run_unary},
    {CTL_OP_SIGMOID, run_unary},
    {CTL_OP_RELU, run_unary},
    {CTL_OP_GELU, run_unary},
    {CTL_OP_GELU_TANH, run_unary},
    {CTL_OP_SILU, run_unary},
    {CTL_OP_SIN, run_unary},
    {CTL_OP_COS, run_unary},
    {CTL_OP_RECIPROCAL, run_unary},
    {CTL_OP_ADD, run_binary},
    {CTL_OP_SUB, run_binary},
    {CTL_OP_MUL, run_binary},
    {CTL_OP_DIV, run_binary},
    {CTL_OP_POW, run_binary},
    {CTL_OP_MAXIMUM, run_binary},
    {CTL_OP_MINIMUM, run_binary},
    {CTL_OP_EQ, run_compare},
    {CTL_OP_NE, run_compare},
    {CTL_OP_LT, run_compare},
    {CTL_OP_LE, run_compare},
    {CTL_OP_GT, run_compare},
    {CTL_OP_GE, run_compare},
    {CTL_OP_WHERE, run_where},
    {CTL_OP_SUM, run_reduce},
    {CTL_OP_MEAN, run_reduce},
    {CTL_OP_MAX, run_reduce},
    {CTL_OP_MIN, run_reduce},
    {CTL_OP_ARGMAX, run_reduce},
    {CTL_OP_ARGMIN, run_reduce},
    {CTL_OP_LOGSUMEXP, run_reduce},
    {CTL_OP_MATMUL, run_matmul},
    {CTL_OP_SOFTMAX, run_softmax},
    {CTL_OP_LOG_SOFTMAX, run_softmax},
    {CTL_OP_LAYER_NORM, run_layer_norm},
    {CTL_OP_RMS_NORM, run_rms_norm},
    {CTL_OP_COPY, run_copy},
    {CTL_OP_CAST, run_cast},
    {CTL_OP_CONCAT, run_concat},
    {CTL_OP_GATHER, run_gather},
    {CTL_OP_SCATTER_ADD, run_scatter_add},
    {CTL_OP_FILL, run_fill},
    {CTL_OP_ARANGE, run_arange},
    {CTL_OP_RANDOM_UNIFORM, run_random},
    {CTL_OP_RANDOM_NORMAL, run_random},
    // ABI 1.1
    {CTL_OP_CROSS_ENTROPY, run_cross_entropy},
    {CTL_OP_CROSS_ENTROPY_BACKWARD, run_cross_entropy_backward},
    {CTL_OP_ADAMW_STEP, run_adamw_step},
    {CTL_OP_SOFTMAX_BACKWARD, run_softmax_backward},
    {CTL_OP_LOG_SOFTMAX_BACKWARD, run_softmax_backward},
    {CTL_OP_LAYER_NORM_BACKWARD, run_layer_norm_backward},
    {CTL_OP_RMS_NORM_BACKWARD, run_rms_norm_backward},
    {CTL_OP_GELU_BACKWARD, run_gelu_backward},
    {CTL_OP_GELU_TANH_BACKWARD, run_gelu_backward},
    {CTL_OP_CONV2D, run_conv2d},
    {CTL_OP_CONV2D_BACKWARD_INPUT, run_conv2d_backward_input},
    {CTL_OP_CONV2D_BACKWARD_WEIGHT, run_conv2d_backward_weight},
    {CTL_OP_MAX_POOL2D, run_max_pool2d},
    {CTL_OP_MAX_POOL2D_BACKWARD, run_max_pool2d_backward},
    {CTL_OP_AVG_POOL2D, run_avg_pool2d},
    {CTL_OP_AVG_POOL2D_BACKWARD, run_avg_pool2d_backward},
    // ABI 1.2
    {CTL_OP_SGD_STEP, run_sgd_step},
    // ABI 1.5
    {CTL_OP_FUSED_ELEMENTWISE, run_fused_elementwise},
};

constexpr auto kOps = sdk::join_op_table(kRuns);
static_assert(sdk::lists_every_op_once(kRuns),
              "every op of the op set (sdk/op_dtypes.hpp) needs exactly one family in kRuns");

const OpEntry* find_op(int64_t id) {
  for (const OpEntry& entry : kOps) {
    if (entry.id == id) return &entry;
  }
  return nullptr;
}

// Checks the call header and that op and dtype are in the table; NULL when they are.
ctl_status* check_supported(const ctl_host_api* host, const ctl_op_call* call, const OpEntry** out_entry) {
  const sdk::OpDtypes* op = nullptr;
  if (const sdk::Check check = sdk::check_op_dtype(call, &op); !check.ok()) {
    return sdk::make_status(host, check.code, "%s%s", kLogPrefix, check.message);
  }
  const OpEntry* entry = &kOps[static_cast<size_t>(op - sdk::kOpDtypes)];  // kOps follows kOpDtypes' order
  *out_entry = entry;
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
  // Nothing may escape through the C table: exceptions become statuses.
  try {
    return entry->run(ctx);
  } catch (const std::bad_alloc&) {
    return ctx.fail(CTL_STATUS_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception& e) {
    return ctx.fail(CTL_STATUS_INTERNAL, "%s", e.what());
  } catch (...) {
    return ctx.fail(CTL_STATUS_INTERNAL, "unknown exception");
  }
}

}  // namespace catalyst::cpu
