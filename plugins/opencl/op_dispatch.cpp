// op_dispatch.cpp — the op table: which ops and dtypes this plugin computes (the CPU
// plugin's table, limited by what each device's driver offers), op_supports, and
// op_execute's routing to a family.
#include <exception>
#include <new>

#include "catalyst/sdk/status.hpp"
#include "kernels.h"
#include "plugin.h"

namespace catalyst::opencl {
namespace {

constexpr uint32_t bit(ctl_dtype d) {
  return 1u << static_cast<unsigned>(d);
}
constexpr uint32_t kFloat = bit(CTL_DTYPE_F32) | bit(CTL_DTYPE_F64) | bit(CTL_DTYPE_F16) | bit(CTL_DTYPE_BF16);
constexpr uint32_t kInt = bit(CTL_DTYPE_I8) | bit(CTL_DTYPE_U8) | bit(CTL_DTYPE_I32) | bit(CTL_DTYPE_I64);
constexpr uint32_t kNumeric = kFloat | kInt;
constexpr uint32_t kAll = kNumeric | bit(CTL_DTYPE_BOOL);
constexpr uint32_t kMatmul = kFloat | bit(CTL_DTYPE_I32) | bit(CTL_DTYPE_I64);

// Which view's dtype decides support: the first input, or the first output for ops
// without inputs (fill, arange, random).
enum class Key { kInput0, kOutput0 };

struct OpEntry {
  ctl_op_id id;
  const char* name;
  uint32_t dtypes;
  Key key;
  ctl_status* (*run)(const OpContext&);
};

constexpr OpEntry kOps[] = {
    {CTL_OP_NEG, "neg", kNumeric, Key::kInput0, run_unary},
    {CTL_OP_ABS, "abs", kNumeric, Key::kInput0, run_unary},
    {CTL_OP_EXP, "exp", kFloat, Key::kInput0, run_unary},
    {CTL_OP_LOG, "log", kFloat, Key::kInput0, run_unary},
    {CTL_OP_SQRT, "sqrt", kFloat, Key::kInput0, run_unary},
    {CTL_OP_RSQRT, "rsqrt", kFloat, Key::kInput0, run_unary},
    {CTL_OP_TANH, "tanh", kFloat, Key::kInput0, run_unary},
    {CTL_OP_SIGMOID, "sigmoid", kFloat, Key::kInput0, run_unary},
    {CTL_OP_RELU, "relu", kNumeric, Key::kInput0, run_unary},
    {CTL_OP_GELU, "gelu", kFloat, Key::kInput0, run_unary},
    {CTL_OP_GELU_TANH, "gelu_tanh", kFloat, Key::kInput0, run_unary},
    {CTL_OP_SILU, "silu", kFloat, Key::kInput0, run_unary},
    {CTL_OP_SIN, "sin", kFloat, Key::kInput0, run_unary},
    {CTL_OP_COS, "cos", kFloat, Key::kInput0, run_unary},
    {CTL_OP_RECIPROCAL, "reciprocal", kFloat, Key::kInput0, run_unary},
    {CTL_OP_ADD, "add", kNumeric, Key::kInput0, run_binary},
    {CTL_OP_SUB, "sub", kNumeric, Key::kInput0, run_binary},
    {CTL_OP_MUL, "mul", kNumeric, Key::kInput0, run_binary},
    {CTL_OP_DIV, "div", kNumeric, Key::kInput0, run_binary},
    {CTL_OP_POW, "pow", kNumeric, Key::kInput0, run_binary},
    {CTL_OP_MAXIMUM, "maximum", kNumeric, Key::kInput0, run_binary},
    {CTL_OP_MINIMUM, "minimum", kNumeric, Key::kInput0, run_binary},
    {CTL_OP_EQ, "eq", kAll, Key::kInput0, run_compare},
    {CTL_OP_NE, "ne", kAll, Key::kInput0, run_compare},
    {CTL_OP_LT, "lt", kAll, Key::kInput0, run_compare},
    {CTL_OP_LE, "le", kAll, Key::kInput0, run_compare},
    {CTL_OP_GT, "gt", kAll, Key::kInput0, run_compare},
    {CTL_OP_GE, "ge", kAll, Key::kInput0, run_compare},
    {CTL_OP_WHERE, "where", kAll, Key::kOutput0, run_where},  // keyed by a/b's dtype
    {CTL_OP_SUM, "sum", kNumeric, Key::kInput0, run_reduce},
    {CTL_OP_MEAN, "mean", kFloat, Key::kInput0, run_reduce},
    {CTL_OP_MAX, "max", kNumeric, Key::kInput0, run_reduce},
    {CTL_OP_MIN, "min", kNumeric, Key::kInput0, run_reduce},
    {CTL_OP_ARGMAX, "argmax", kNumeric, Key::kInput0, run_reduce},
    {CTL_OP_ARGMIN, "argmin", kNumeric, Key::kInput0, run_reduce},
    {CTL_OP_LOGSUMEXP, "logsumexp", kFloat, Key::kInput0, run_reduce},
    {CTL_OP_MATMUL, "matmul", kMatmul, Key::kInput0, run_matmul},
    {CTL_OP_SOFTMAX, "softmax", kFloat, Key::kInput0, run_softmax},
    {CTL_OP_LOG_SOFTMAX, "log_softmax", kFloat, Key::kInput0, run_softmax},
    {CTL_OP_LAYER_NORM, "layer_norm", kFloat, Key::kInput0, run_layer_norm},
    {CTL_OP_RMS_NORM, "rms_norm", kFloat, Key::kInput0, run_rms_norm},
    {CTL_OP_COPY, "copy", kAll, Key::kInput0, run_copy},
    {CTL_OP_CAST, "cast", kAll, Key::kInput0, run_cast},
    {CTL_OP_CONCAT, "concat", kAll, Key::kOutput0, run_concat},
    {CTL_OP_GATHER, "gather", kAll, Key::kInput0, run_gather},
    {CTL_OP_SCATTER_ADD, "scatter_add", kNumeric, Key::kInput0, run_scatter_add},
    {CTL_OP_FILL, "fill", kAll, Key::kOutput0, run_fill},
    {CTL_OP_ARANGE, "arange", kNumeric, Key::kOutput0, run_arange},
    {CTL_OP_RANDOM_UNIFORM, "random_uniform", kFloat, Key::kOutput0, run_random},
    {CTL_OP_RANDOM_NORMAL, "random_normal", kFloat, Key::kOutput0, run_random},
    // ABI 1.1
    {CTL_OP_CROSS_ENTROPY, "cross_entropy", kFloat, Key::kInput0, run_cross_entropy},  // keyed by the logits
    {CTL_OP_CROSS_ENTROPY_BACKWARD, "cross_entropy_backward", kFloat, Key::kInput0, run_cross_entropy_backward},
    {CTL_OP_ADAMW_STEP, "adamw_step", kFloat, Key::kInput0, run_adamw_step},  // keyed by grad
    {CTL_OP_SOFTMAX_BACKWARD, "softmax_backward", kFloat, Key::kInput0, run_softmax_backward},
    {CTL_OP_LOG_SOFTMAX_BACKWARD, "log_softmax_backward", kFloat, Key::kInput0, run_softmax_backward},
    {CTL_OP_LAYER_NORM_BACKWARD, "layer_norm_backward", kFloat, Key::kInput0, run_layer_norm_backward},
    {CTL_OP_RMS_NORM_BACKWARD, "rms_norm_backward", kFloat, Key::kInput0, run_rms_norm_backward},
    {CTL_OP_GELU_BACKWARD, "gelu_backward", kFloat, Key::kInput0, run_gelu_backward},
    {CTL_OP_GELU_TANH_BACKWARD, "gelu_tanh_backward", kFloat, Key::kInput0, run_gelu_backward},
    {CTL_OP_CONV2D, "conv2d", kFloat, Key::kInput0, run_conv2d},
    {CTL_OP_CONV2D_BACKWARD_INPUT, "conv2d_backward_input", kFloat, Key::kInput0, run_conv2d_backward_input},
    {CTL_OP_CONV2D_BACKWARD_WEIGHT, "conv2d_backward_weight", kFloat, Key::kInput0, run_conv2d_backward_weight},
    {CTL_OP_MAX_POOL2D, "max_pool2d", kFloat, Key::kInput0, run_max_pool2d},
    {CTL_OP_MAX_POOL2D_BACKWARD, "max_pool2d_backward", kFloat, Key::kInput0, run_max_pool2d_backward},
    {CTL_OP_AVG_POOL2D, "avg_pool2d", kFloat, Key::kInput0, run_avg_pool2d},
    {CTL_OP_AVG_POOL2D_BACKWARD, "avg_pool2d_backward", kFloat, Key::kInput0, run_avg_pool2d_backward},
};

const OpEntry* find_op(int64_t id) {
  for (const OpEntry& entry : kOps) {
    if (entry.id == id) return &entry;
  }
  return nullptr;
}

// Every view of the call must be in a dtype the device computes in (f64 and f16 depend
// on the driver), not only the one that keys the table.
ctl_status* check_view_dtypes(const ctl_host_api* host, const ctl_plugin_device* device, const OpEntry& entry,
                              const ctl_tensor_view* const* views, uint32_t count) {
  for (uint32_t i = 0; views && i < count; ++i) {
    const ctl_tensor_view* v = views[i];
    if (!v || v->struct_size < CTL_TENSOR_VIEW_STRUCT_SIZE) continue;  // the family reports it
    const int64_t dtype = raw_enum(v->dtype);
    if (dtype >= 0 && dtype < CTL_DTYPE_COUNT_ && !(device->dtype_mask & bit(static_cast<ctl_dtype>(dtype)))) {
      return sdk::make_status(host, CTL_STATUS_UNSUPPORTED, "%s%s: %s has no %s support (needs cl_khr_%s)", kLogPrefix,
                              entry.name, device->name.c_str(), dtype_name(static_cast<ctl_dtype>(dtype)),
                              dtype == CTL_DTYPE_F64 ? "fp64" : "fp16");
    }
  }
  return nullptr;
}

// Checks the call header and that op and dtype are in the table; NULL when they are.
ctl_status* check_supported(const ctl_host_api* host, const ctl_plugin_device* device, const ctl_op_call* call,
                            const OpEntry** out_entry) {
  if (!call) return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%scall is NULL", kLogPrefix);
  if (call->struct_size < CTL_OP_CALL_STRUCT_SIZE) {
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%scall struct_size %zu is smaller than %zu", kLogPrefix,
                            call->struct_size, static_cast<size_t>(CTL_OP_CALL_STRUCT_SIZE));
  }
  const OpEntry* entry = find_op(raw_enum(call->op));
  if (!entry) {
    return sdk::make_status(host, CTL_STATUS_UNSUPPORTED, "%sunknown op id %lld", kLogPrefix,
                            static_cast<long long>(raw_enum(call->op)));
  }
  const ctl_tensor_view* view = nullptr;
  if (entry->key == Key::kInput0) {
    if (call->input_count > 0 && call->inputs) view = call->inputs[0];
  } else if (call->output_count > 0 && call->outputs) {
    view = call->outputs[0];
  }
  if (!view || view->struct_size < CTL_TENSOR_VIEW_STRUCT_SIZE) {
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%s%s: the call has no %s to take the dtype from",
                            kLogPrefix, entry->name, entry->key == Key::kInput0 ? "input 0" : "output 0");
  }
  const int64_t dtype = raw_enum(view->dtype);
  if (dtype < 0 || dtype >= CTL_DTYPE_COUNT_) {
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%s%s: unknown dtype %lld", kLogPrefix, entry->name,
                            static_cast<long long>(dtype));
  }
  const auto known = static_cast<ctl_dtype>(dtype);
  if (!(entry->dtypes & bit(known))) {
    return sdk::make_status(host, CTL_STATUS_UNSUPPORTED, "%s%s does not support dtype %s", kLogPrefix, entry->name,
                            dtype_name(known));
  }
  CTL_SDK_RETURN_IF_ERROR(check_view_dtypes(host, device, *entry, call->inputs, call->input_count));
  CTL_SDK_RETURN_IF_ERROR(check_view_dtypes(host, device, *entry, call->outputs, call->output_count));
  if (entry->id == CTL_OP_MATMUL && !(kFloat & bit(known)) && call->attrs &&
      *static_cast<const size_t*>(call->attrs) >= CTL_MATMUL_ATTRS_STRUCT_SIZE &&
      raw_enum(static_cast<const ctl_matmul_attrs*>(call->attrs)->activation) != CTL_ACTIVATION_NONE) {
    return sdk::make_status(host, CTL_STATUS_UNSUPPORTED, "%smatmul: a fused activation needs a float dtype, not %s",
                            kLogPrefix, dtype_name(known));
  }
  *out_entry = entry;
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
  const OpContext ctx{host, device, stream, call, entry->name};
  // Nothing may escape through the C table: exceptions become statuses.
  try {
    return entry->run(ctx);
  } catch (const std::bad_alloc&) {
    return ctx.fail(CTL_STATUS_OUT_OF_MEMORY, "out of host memory");
  } catch (const std::exception& e) {
    return ctx.fail(CTL_STATUS_INTERNAL, "%s", e.what());
  } catch (...) {
    return ctx.fail(CTL_STATUS_INTERNAL, "unknown exception");
  }
}

}  // namespace catalyst::opencl
