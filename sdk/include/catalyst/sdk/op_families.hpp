// op_families.hpp — the op set grouped into families, so that a plugin names one function
// per family (unary, binary, reduce, ...) rather than one per op, and an op table a plugin
// dispatches through: which family runs an op, checked once, and the guard that keeps
// exceptions from crossing the C table.
//
//   constexpr auto kOps = sdk::op_table(sdk::OpFamilies<Run>{.unary = run_unary, ...});
//
// A family left NULL is one the plugin does not run: its ops are UNSUPPORTED.
#pragma once

#include <array>
#include <exception>
#include <iterator>
#include <new>

#include "catalyst/sdk/check.hpp"
#include "catalyst/sdk/op_dtypes.hpp"
#include "catalyst/sdk/status.hpp"
#include "catalyst_plugin.h"

namespace catalyst::sdk {

// One function per family; each runs every op named beside it (the family's own op where
// nothing is named). Designated initializers list them in this order.
template <class Run>
struct OpFamilies {
  // neg, abs, exp, log, sqrt, rsqrt, tanh, sigmoid, relu, gelu, gelu_tanh, silu, sin, cos, reciprocal
  Run unary = nullptr;
  Run binary = nullptr;   // add, sub, mul, div, pow, maximum, minimum
  Run compare = nullptr;  // eq, ne, lt, le, gt, ge
  Run where = nullptr;
  Run gelu_backward = nullptr;  // gelu_backward, gelu_tanh_backward
  Run reduce = nullptr;         // sum, mean, max, min, argmax, argmin, logsumexp
  Run matmul = nullptr;
  Run softmax = nullptr;           // softmax, log_softmax
  Run softmax_backward = nullptr;  // softmax_backward, log_softmax_backward
  Run layer_norm = nullptr;
  Run layer_norm_backward = nullptr;
  Run rms_norm = nullptr;
  Run rms_norm_backward = nullptr;
  Run copy = nullptr;
  Run cast = nullptr;
  Run concat = nullptr;
  Run gather = nullptr;
  Run scatter_add = nullptr;
  Run fill = nullptr;
  Run arange = nullptr;
  Run random = nullptr;  // random_uniform, random_normal
  Run cross_entropy = nullptr;
  Run cross_entropy_backward = nullptr;
  Run adamw_step = nullptr;
  Run sgd_step = nullptr;
  Run conv2d = nullptr;
  Run conv2d_backward_input = nullptr;
  Run conv2d_backward_weight = nullptr;
  Run max_pool2d = nullptr;
  Run max_pool2d_backward = nullptr;
  Run avg_pool2d = nullptr;
  Run avg_pool2d_backward = nullptr;
  Run fused_elementwise = nullptr;
};

template <class Run>
constexpr std::array<OpEntryOf<Run>, std::size(kOpDtypes)> op_table(const OpFamilies<Run>& f) {
  const OpRunOf<Run> runs[] = {
      {CTL_OP_NEG, f.unary},
      {CTL_OP_ABS, f.unary},
      {CTL_OP_EXP, f.unary},
      {CTL_OP_LOG, f.unary},
      {CTL_OP_SQRT, f.unary},
      {CTL_OP_RSQRT, f.unary},
      {CTL_OP_TANH, f.unary},
      {CTL_OP_SIGMOID, f.unary},
      {CTL_OP_RELU, f.unary},
      {CTL_OP_GELU, f.unary},
      {CTL_OP_GELU_TANH, f.unary},
      {CTL_OP_SILU, f.unary},
      {CTL_OP_SIN, f.unary},
      {CTL_OP_COS, f.unary},
      {CTL_OP_RECIPROCAL, f.unary},
      {CTL_OP_ADD, f.binary},
      {CTL_OP_SUB, f.binary},
      {CTL_OP_MUL, f.binary},
      {CTL_OP_DIV, f.binary},
      {CTL_OP_POW, f.binary},
      {CTL_OP_MAXIMUM, f.binary},
      {CTL_OP_MINIMUM, f.binary},
      {CTL_OP_EQ, f.compare},
      {CTL_OP_NE, f.compare},
      {CTL_OP_LT, f.compare},
      {CTL_OP_LE, f.compare},
      {CTL_OP_GT, f.compare},
      {CTL_OP_GE, f.compare},
      {CTL_OP_WHERE, f.where},
      {CTL_OP_SUM, f.reduce},
      {CTL_OP_MEAN, f.reduce},
      {CTL_OP_MAX, f.reduce},
      {CTL_OP_MIN, f.reduce},
      {CTL_OP_ARGMAX, f.reduce},
      {CTL_OP_ARGMIN, f.reduce},
      {CTL_OP_LOGSUMEXP, f.reduce},
      {CTL_OP_MATMUL, f.matmul},
      {CTL_OP_SOFTMAX, f.softmax},
      {CTL_OP_LOG_SOFTMAX, f.softmax},
      {CTL_OP_LAYER_NORM, f.layer_norm},
      {CTL_OP_RMS_NORM, f.rms_norm},
      {CTL_OP_COPY, f.copy},
      {CTL_OP_CAST, f.cast},
      {CTL_OP_CONCAT, f.concat},
      {CTL_OP_GATHER, f.gather},
      {CTL_OP_SCATTER_ADD, f.scatter_add},
      {CTL_OP_FILL, f.fill},
      {CTL_OP_ARANGE, f.arange},
      {CTL_OP_RANDOM_UNIFORM, f.random},
      {CTL_OP_RANDOM_NORMAL, f.random},
      {CTL_OP_CROSS_ENTROPY, f.cross_entropy},
      {CTL_OP_CROSS_ENTROPY_BACKWARD, f.cross_entropy_backward},
      {CTL_OP_ADAMW_STEP, f.adamw_step},
      {CTL_OP_SOFTMAX_BACKWARD, f.softmax_backward},
      {CTL_OP_LOG_SOFTMAX_BACKWARD, f.softmax_backward},
      {CTL_OP_LAYER_NORM_BACKWARD, f.layer_norm_backward},
      {CTL_OP_RMS_NORM_BACKWARD, f.rms_norm_backward},
      {CTL_OP_GELU_BACKWARD, f.gelu_backward},
      {CTL_OP_GELU_TANH_BACKWARD, f.gelu_backward},
      {CTL_OP_CONV2D, f.conv2d},
      {CTL_OP_CONV2D_BACKWARD_INPUT, f.conv2d_backward_input},
      {CTL_OP_CONV2D_BACKWARD_WEIGHT, f.conv2d_backward_weight},
      {CTL_OP_MAX_POOL2D, f.max_pool2d},
      {CTL_OP_MAX_POOL2D_BACKWARD, f.max_pool2d_backward},
      {CTL_OP_AVG_POOL2D, f.avg_pool2d},
      {CTL_OP_AVG_POOL2D_BACKWARD, f.avg_pool2d_backward},
      {CTL_OP_SGD_STEP, f.sgd_step},
      {CTL_OP_FUSED_ELEMENTWISE, f.fused_elementwise},
  };
  return join_op_table(runs);
}

// The entry of the call's op, after the checks every op gets (sdk::check_op_dtype: op id,
// arity of the dtype key, dtype in the op's set); UNSUPPORTED naming `plugin` when its family
// is NULL.
template <class Run, size_t N>
Check find_op(const std::array<OpEntryOf<Run>, N>& table, const ctl_op_call* call, const char* plugin,
              const OpEntryOf<Run>** out) {
  const OpDtypes* op = nullptr;
  if (Check check = check_op_dtype(call, &op); !check.ok()) return check;
  const OpEntryOf<Run>* entry = &table[static_cast<size_t>(op - kOpDtypes)];  // tables follow kOpDtypes' order
  if (!entry->run)
    return check_failed(CTL_STATUS_UNSUPPORTED, "%s: not implemented by the %s plugin", entry->name, plugin);
  *out = entry;
  return Check();
}

// The dtype of the first view of `views` outside `dtype_mask`, or -1 when every view's dtype
// is in it. Views the op's family will reject anyway (NULL, too small, unknown dtype) count
// as inside: the family reports them with its own message.
inline int64_t dtype_outside(const ctl_tensor_view* const* views, uint32_t count, uint32_t dtype_mask) {
  for (uint32_t i = 0; views && i < count; ++i) {
    const ctl_tensor_view* v = views[i];
    if (!v || v->struct_size < CTL_TENSOR_VIEW_STRUCT_SIZE) continue;
    const int64_t dtype = raw_enum(v->dtype);
    if (dtype >= 0 && dtype < CTL_DTYPE_COUNT_ && !(dtype_mask & dtype_bit(static_cast<ctl_dtype>(dtype)))) {
      return dtype;
    }
  }
  return -1;
}

// Runs `body` (returning a ctl_status*) with nothing escaping through the C table:
// exceptions become statuses from ctx.fail, bad_alloc as `out_of_memory`.
template <class Ctx, class Body>
ctl_status* run_guarded(const Ctx& ctx, const char* out_of_memory, Body&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return ctx.fail(CTL_STATUS_OUT_OF_MEMORY, "%s", out_of_memory);
  } catch (const std::exception& e) {
    return ctx.fail(CTL_STATUS_INTERNAL, "%s", e.what());
  } catch (...) {
    return ctx.fail(CTL_STATUS_INTERNAL, "unknown exception");
  }
}

}  // namespace catalyst::sdk
