// op_dtypes.hpp — the op set's dtypes: for every op id, its name, the dtypes it is defined
// for (docs/ops.md) and which view's dtype decides support. A plugin that computes an op in
// every dtype the op set defines claims exactly these; one that does less narrows them in
// its own op_supports. Shared so that plugins agree with each other and with docs/ops.md.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

#include "catalyst/sdk/check.hpp"
#include "catalyst/sdk/raw_field.hpp"
#include "catalyst_plugin.h"

namespace catalyst::sdk {

constexpr uint32_t dtype_bit(ctl_dtype d) {
  return 1u << static_cast<unsigned>(d);
}
constexpr uint32_t kFloatDtypes =
    dtype_bit(CTL_DTYPE_F32) | dtype_bit(CTL_DTYPE_F64) | dtype_bit(CTL_DTYPE_F16) | dtype_bit(CTL_DTYPE_BF16);
constexpr uint32_t kIntDtypes =
    dtype_bit(CTL_DTYPE_I8) | dtype_bit(CTL_DTYPE_U8) | dtype_bit(CTL_DTYPE_I32) | dtype_bit(CTL_DTYPE_I64);
constexpr uint32_t kNumericDtypes = kFloatDtypes | kIntDtypes;
constexpr uint32_t kAllDtypes = kNumericDtypes | dtype_bit(CTL_DTYPE_BOOL);
constexpr uint32_t kMatmulDtypes = kFloatDtypes | dtype_bit(CTL_DTYPE_I32) | dtype_bit(CTL_DTYPE_I64);

// "f32", "bf16", ...; "unknown" for a value outside the enum (read without loading it).
inline const char* dtype_name(ctl_dtype dtype) {
  static const char* const names[] = {"f32", "f64", "f16", "bf16", "i8", "u8", "i32", "i64", "bool"};
  const auto index = static_cast<uint64_t>(raw_enum(dtype));
  return index < sizeof names / sizeof names[0] ? names[index] : "unknown";
}

// Which view's dtype decides support: the first input, or the first output for ops
// without inputs (fill, arange, random) and for where (keyed by a and b's dtype).
enum class DtypeKey { kInput0, kOutput0 };

struct OpDtypes {
  ctl_op_id id;
  const char* name;
  uint32_t dtypes;
  DtypeKey key;
};

inline constexpr OpDtypes kOpDtypes[] = {
    {CTL_OP_NEG, "neg", kNumericDtypes, DtypeKey::kInput0},
    {CTL_OP_ABS, "abs", kNumericDtypes, DtypeKey::kInput0},
    {CTL_OP_EXP, "exp", kFloatDtypes, DtypeKey::kInput0},
    {CTL_OP_LOG, "log", kFloatDtypes, DtypeKey::kInput0},
    {CTL_OP_SQRT, "sqrt", kFloatDtypes, DtypeKey::kInput0},
    {CTL_OP_RSQRT, "rsqrt", kFloatDtypes, DtypeKey::kInput0},
    {CTL_OP_TANH, "tanh", kFloatDtypes, DtypeKey::kInput0},
    {CTL_OP_SIGMOID, "sigmoid", kFloatDtypes, DtypeKey::kInput0},
    {CTL_OP_RELU, "relu", kNumericDtypes, DtypeKey::kInput0},
    {CTL_OP_GELU, "gelu", kFloatDtypes, DtypeKey::kInput0},
    {CTL_OP_GELU_TANH, "gelu_tanh", kFloatDtypes, DtypeKey::kInput0},
    {CTL_OP_SILU, "silu", kFloatDtypes, DtypeKey::kInput0},
    {CTL_OP_SIN, "sin", kFloatDtypes, DtypeKey::kInput0},
    {CTL_OP_COS, "cos", kFloatDtypes, DtypeKey::kInput0},
    {CTL_OP_RECIPROCAL, "reciprocal", kFloatDtypes, DtypeKey::kInput0},
    {CTL_OP_ADD, "add", kNumericDtypes, DtypeKey::kInput0},
    {CTL_OP_SUB, "sub", kNumericDtypes, DtypeKey::kInput0},
    {CTL_OP_MUL, "mul", kNumericDtypes, DtypeKey::kInput0},
    {CTL_OP_DIV, "div", kNumericDtypes, DtypeKey::kInput0},
    {CTL_OP_POW, "pow", kNumericDtypes, DtypeKey::kInput0},
    {CTL_OP_MAXIMUM, "maximum", kNumericDtypes, DtypeKey::kInput0},
    {CTL_OP_MINIMUM, "minimum", kNumericDtypes, DtypeKey::kInput0},
    {CTL_OP_EQ, "eq", kAllDtypes, DtypeKey::kInput0},
    {CTL_OP_NE, "ne", kAllDtypes, DtypeKey::kInput0},
    {CTL_OP_LT, "lt", kAllDtypes, DtypeKey::kInput0},
    {CTL_OP_LE, "le", kAllDtypes, DtypeKey::kInput0},
    {CTL_OP_GT, "gt", kAllDtypes, DtypeKey::kInput0},
    {CTL_OP_GE, "ge", kAllDtypes, DtypeKey::kInput0},
    {CTL_OP_WHERE, "where", kAllDtypes, DtypeKey::kOutput0},  // keyed by a/b's dtype
    {CTL_OP_SUM, "sum", kNumericDtypes, DtypeKey::kInput0},
    {CTL_OP_MEAN, "mean", kFloatDtypes, DtypeKey::kInput0},
    {CTL_OP_MAX, "max", kNumericDtypes, DtypeKey::kInput0},
    {CTL_OP_MIN, "min", kNumericDtypes, DtypeKey::kInput0},
    {CTL_OP_ARGMAX, "argmax", kNumericDtypes, DtypeKey::kInput0},
    {CTL_OP_ARGMIN, "argmin", kNumericDtypes, DtypeKey::kInput0},
    {CTL_OP_LOGSUMEXP, "logsumexp", kFloatDtypes, DtypeKey::kInput0},
    {CTL_OP_MATMUL, "matmul", kMatmulDtypes, DtypeKey::kInput0},
    {CTL_OP_SOFTMAX, "softmax", kFloatDtypes, DtypeKey::kInput0},
    {CTL_OP_LOG_SOFTMAX, "log_softmax", kFloatDtypes, DtypeKey::kInput0},
    {CTL_OP_LAYER_NORM, "layer_norm", kFloatDtypes, DtypeKey::kInput0},
    {CTL_OP_RMS_NORM, "rms_norm", kFloatDtypes, DtypeKey::kInput0},
    {CTL_OP_COPY, "copy", kAllDtypes, DtypeKey::kInput0},
    {CTL_OP_CAST, "cast", kAllDtypes, DtypeKey::kInput0},
    {CTL_OP_CONCAT, "concat", kAllDtypes, DtypeKey::kOutput0},
    {CTL_OP_GATHER, "gather", kAllDtypes, DtypeKey::kInput0},
    {CTL_OP_SCATTER_ADD, "scatter_add", kNumericDtypes, DtypeKey::kInput0},
    {CTL_OP_FILL, "fill", kAllDtypes, DtypeKey::kOutput0},
    {CTL_OP_ARANGE, "arange", kNumericDtypes, DtypeKey::kOutput0},
    {CTL_OP_RANDOM_UNIFORM, "random_uniform", kFloatDtypes, DtypeKey::kOutput0},
    {CTL_OP_RANDOM_NORMAL, "random_normal", kFloatDtypes, DtypeKey::kOutput0},
    // ABI 1.1
    {CTL_OP_CROSS_ENTROPY, "cross_entropy", kFloatDtypes, DtypeKey::kInput0},  // keyed by the logits
    {CTL_OP_CROSS_ENTROPY_BACKWARD, "cross_entropy_backward", kFloatDtypes, DtypeKey::kInput0},
    {CTL_OP_ADAMW_STEP, "adamw_step", kFloatDtypes, DtypeKey::kInput0},  // keyed by grad
    {CTL_OP_SOFTMAX_BACKWARD, "softmax_backward", kFloatDtypes, DtypeKey::kInput0},
    {CTL_OP_LOG_SOFTMAX_BACKWARD, "log_softmax_backward", kFloatDtypes, DtypeKey::kInput0},
    {CTL_OP_LAYER_NORM_BACKWARD, "layer_norm_backward", kFloatDtypes, DtypeKey::kInput0},
    {CTL_OP_RMS_NORM_BACKWARD, "rms_norm_backward", kFloatDtypes, DtypeKey::kInput0},
    {CTL_OP_GELU_BACKWARD, "gelu_backward", kFloatDtypes, DtypeKey::kInput0},
    {CTL_OP_GELU_TANH_BACKWARD, "gelu_tanh_backward", kFloatDtypes, DtypeKey::kInput0},
    {CTL_OP_CONV2D, "conv2d", kFloatDtypes, DtypeKey::kInput0},
    {CTL_OP_CONV2D_BACKWARD_INPUT, "conv2d_backward_input", kFloatDtypes, DtypeKey::kInput0},
    {CTL_OP_CONV2D_BACKWARD_WEIGHT, "conv2d_backward_weight", kFloatDtypes, DtypeKey::kInput0},
    {CTL_OP_MAX_POOL2D, "max_pool2d", kFloatDtypes, DtypeKey::kInput0},
    {CTL_OP_MAX_POOL2D_BACKWARD, "max_pool2d_backward", kFloatDtypes, DtypeKey::kInput0},
    {CTL_OP_AVG_POOL2D, "avg_pool2d", kFloatDtypes, DtypeKey::kInput0},
    {CTL_OP_AVG_POOL2D_BACKWARD, "avg_pool2d_backward", kFloatDtypes, DtypeKey::kInput0},
    // ABI 1.2
    {CTL_OP_SGD_STEP, "sgd_step", kFloatDtypes, DtypeKey::kInput0},  // keyed by grad
    // ABI 1.5: made by graph passes; a plugin that lists no function for it answers UNSUPPORTED
    {CTL_OP_FUSED_ELEMENTWISE, "fused_elementwise", kFloatDtypes, DtypeKey::kInput0},
};

// kOpDtypes by op id: every op call looks its op up, so one load instead of a scan.
inline constexpr int64_t kLargestOpId = [] {
  int64_t largest = 0;
  for (const OpDtypes& entry : kOpDtypes) largest = std::max<int64_t>(largest, entry.id);
  return largest;
}();
inline constexpr auto kOpDtypesIndex = [] {
  std::array<int16_t, kLargestOpId + 1> index{};
  index.fill(-1);
  for (size_t i = 0; i < std::size(kOpDtypes); ++i)
    index[static_cast<size_t>(kOpDtypes[i].id)] = static_cast<int16_t>(i);
  return index;
}();

// The entry of op `id`, or NULL for an id outside the op set.
inline const OpDtypes* find_op_dtypes(int64_t id) {
  if (id < 0 || id > kLargestOpId) return nullptr;
  const int16_t i = kOpDtypesIndex[static_cast<size_t>(id)];
  return i < 0 ? nullptr : &kOpDtypes[i];
}

// The view whose dtype decides support, or NULL when the call has none to offer.
inline const ctl_tensor_view* dtype_key_view(const ctl_op_call* call, DtypeKey key) {
  const ctl_tensor_view* view = nullptr;
  if (key == DtypeKey::kInput0) {
    if (call->input_count > 0 && call->inputs) view = call->inputs[0];
  } else if (call->output_count > 0 && call->outputs) {
    view = call->outputs[0];
  }
  return view && view->struct_size >= CTL_TENSOR_VIEW_STRUCT_SIZE ? view : nullptr;
}

// The checks every plugin makes before routing a call: its header, that the op is in the op
// set, and that the op set defines it for the dtype of its key view (and, for matmul, that
// a fused activation has a float dtype). On success *out_op is the op's entry; on failure
// the message goes after the plugin's own prefix.
inline Check check_op_dtype(const ctl_op_call* call, const OpDtypes** out_op) {
  if (!call) return check_failed(CTL_STATUS_INVALID_ARGUMENT, "call is NULL");
  if (call->struct_size < CTL_OP_CALL_STRUCT_SIZE) {
    return check_failed(CTL_STATUS_INVALID_ARGUMENT, "call struct_size %zu is smaller than %zu", call->struct_size,
                        static_cast<size_t>(CTL_OP_CALL_STRUCT_SIZE));
  }
  const OpDtypes* op = find_op_dtypes(raw_enum(call->op));
  if (!op)
    return check_failed(CTL_STATUS_UNSUPPORTED, "unknown op id %lld", static_cast<long long>(raw_enum(call->op)));
  const ctl_tensor_view* key_view = dtype_key_view(call, op->key);
  if (!key_view) {
    return check_failed(CTL_STATUS_INVALID_ARGUMENT, "%s: the call has no %s to take the dtype from", op->name,
                        op->key == DtypeKey::kInput0 ? "input 0" : "output 0");
  }
  const int64_t dtype = raw_enum(key_view->dtype);
  if (dtype < 0 || dtype >= CTL_DTYPE_COUNT_) {
    return check_failed(CTL_STATUS_INVALID_ARGUMENT, "%s: unknown dtype %lld", op->name, static_cast<long long>(dtype));
  }
  const auto known = static_cast<ctl_dtype>(dtype);
  if (!(op->dtypes & dtype_bit(known))) {
    return check_failed(CTL_STATUS_UNSUPPORTED, "%s does not support dtype %s", op->name, dtype_name(known));
  }
  if (op->id == CTL_OP_MATMUL && !(kFloatDtypes & dtype_bit(known)) && call->attrs &&
      *static_cast<const size_t*>(call->attrs) >= CTL_MATMUL_ATTRS_STRUCT_SIZE &&
      raw_enum(static_cast<const ctl_matmul_attrs*>(call->attrs)->activation) != CTL_ACTIVATION_NONE) {
    return check_failed(CTL_STATUS_UNSUPPORTED, "matmul: a fused activation needs a float dtype, not %s",
                        dtype_name(known));
  }
  *out_op = op;
  return {};
}

// A plugin's op table: each op set entry joined with the plugin's function that runs it.
// Run is the plugin's function pointer type; the plugin lists only {id, function} pairs.
template <class Run>
struct OpRunOf {
  ctl_op_id id;
  Run run;
};
template <class Run>
struct OpEntryOf {
  ctl_op_id id;
  const char* name;
  uint32_t dtypes;
  DtypeKey key;
  Run run;  // NULL when the plugin listed no function for the op
};

template <class Run, size_t N>
constexpr std::array<OpEntryOf<Run>, std::size(kOpDtypes)> join_op_table(const OpRunOf<Run> (&runs)[N]) {
  std::array<OpEntryOf<Run>, std::size(kOpDtypes)> ops{};
  for (size_t i = 0; i < ops.size(); ++i) {
    const OpDtypes& op = kOpDtypes[i];
    ops[i] = {op.id, op.name, op.dtypes, op.key, nullptr};
    for (const OpRunOf<Run>& r : runs) {
      if (r.id == op.id) ops[i].run = r.run;
    }
  }
  return ops;
}

// True when `runs` names every op of the op set exactly once and nothing else: for a
// static_assert in a plugin that implements the whole op set. (It compares ids, not
// function pointers, which sanitizer builds do not allow in constant expressions.)
template <class Run, size_t N>
constexpr bool lists_every_op_once(const OpRunOf<Run> (&runs)[N]) {
  for (const OpDtypes& op : kOpDtypes) {
    size_t found = 0;
    for (const OpRunOf<Run>& r : runs) found += r.id == op.id ? 1 : 0;
    if (found != 1) return false;
  }
  return N == std::size(kOpDtypes);
}

}  // namespace catalyst::sdk
