// op_schema.cpp — validation, output inference and normalisation of every op (see
// op_schema.h and docs/ops.md). Every failure names the argument and the value at fault.
//
// The per-family checks are Preparer's methods, one family to a file (op_schema_<family>.cpp,
// declared in op_schema_preparer.h); here are the op table and the entry points.
#include "op_schema.h"

#include <algorithm>
#include <array>
#include <cstddef>

#include "enum_value.h"
#include "op_schema_preparer.h"
#include "status.h"

namespace catalyst::schema {

constexpr OpInfo kOps[] = {
    {CTL_OP_NEG, "neg", Family::kUnary, Dtypes::kNumeric},
    {CTL_OP_ABS, "abs", Family::kUnary, Dtypes::kNumeric},
    {CTL_OP_EXP, "exp", Family::kUnary, Dtypes::kFloat},
    {CTL_OP_LOG, "log", Family::kUnary, Dtypes::kFloat},
    {CTL_OP_SQRT, "sqrt", Family::kUnary, Dtypes::kFloat},
    {CTL_OP_RSQRT, "rsqrt", Family::kUnary, Dtypes::kFloat},
    {CTL_OP_TANH, "tanh", Family::kUnary, Dtypes::kFloat},
    {CTL_OP_SIGMOID, "sigmoid", Family::kUnary, Dtypes::kFloat},
    {CTL_OP_RELU, "relu", Family::kUnary, Dtypes::kNumeric},
    {CTL_OP_GELU, "gelu", Family::kUnary, Dtypes::kFloat},
    {CTL_OP_GELU_TANH, "gelu_tanh", Family::kUnary, Dtypes::kFloat},
    {CTL_OP_SILU, "silu", Family::kUnary, Dtypes::kFloat},
    {CTL_OP_SIN, "sin", Family::kUnary, Dtypes::kFloat},
    {CTL_OP_COS, "cos", Family::kUnary, Dtypes::kFloat},
    {CTL_OP_RECIPROCAL, "reciprocal", Family::kUnary, Dtypes::kFloat},
    {CTL_OP_ADD, "add", Family::kBinary, Dtypes::kNumeric},
    {CTL_OP_SUB, "sub", Family::kBinary, Dtypes::kNumeric},
    {CTL_OP_MUL, "mul", Family::kBinary, Dtypes::kNumeric},
    {CTL_OP_DIV, "div", Family::kBinary, Dtypes::kNumeric},
    {CTL_OP_POW, "pow", Family::kBinary, Dtypes::kNumeric},
    {CTL_OP_MAXIMUM, "maximum", Family::kBinary, Dtypes::kNumeric},
    {CTL_OP_MINIMUM, "minimum", Family::kBinary, Dtypes::kNumeric},
    {CTL_OP_EQ, "eq", Family::kCompare, Dtypes::kAll},
    {CTL_OP_NE, "ne", Family::kCompare, Dtypes::kAll},
    {CTL_OP_LT, "lt", Family::kCompare, Dtypes::kAll},
    {CTL_OP_LE, "le", Family::kCompare, Dtypes::kAll},
    {CTL_OP_GT, "gt", Family::kCompare, Dtypes::kAll},
    {CTL_OP_GE, "ge", Family::kCompare, Dtypes::kAll},
    {CTL_OP_WHERE, "where", Family::kWhere, Dtypes::kAll},
    {CTL_OP_SUM, "sum", Family::kReduce, Dtypes::kNumeric},
    {CTL_OP_MEAN, "mean", Family::kReduce, Dtypes::kFloat},
    {CTL_OP_MAX, "max", Family::kReduce, Dtypes::kNumeric},
    {CTL_OP_MIN, "min", Family::kReduce, Dtypes::kNumeric},
    {CTL_OP_ARGMAX, "argmax", Family::kReduce, Dtypes::kNumeric},
    {CTL_OP_ARGMIN, "argmin", Family::kReduce, Dtypes::kNumeric},
    {CTL_OP_LOGSUMEXP, "logsumexp", Family::kReduce, Dtypes::kFloat},
    {CTL_OP_MATMUL, "matmul", Family::kMatmul, Dtypes::kMatmul},
    {CTL_OP_SOFTMAX, "softmax", Family::kSoftmax, Dtypes::kFloat},
    {CTL_OP_LOG_SOFTMAX, "log_softmax", Family::kSoftmax, Dtypes::kFloat},
    {CTL_OP_LAYER_NORM, "layer_norm", Family::kLayerNorm, Dtypes::kFloat},
    {CTL_OP_RMS_NORM, "rms_norm", Family::kRmsNorm, Dtypes::kFloat},
    {CTL_OP_COPY, "copy", Family::kCopy, Dtypes::kAll},
    {CTL_OP_CAST, "cast", Family::kCast, Dtypes::kAll},
    {CTL_OP_CONCAT, "concat", Family::kConcat, Dtypes::kAll},
    {CTL_OP_GATHER, "gather", Family::kGather, Dtypes::kAll},
    {CTL_OP_SCATTER_ADD, "scatter_add", Family::kScatterAdd, Dtypes::kNumeric},
    {CTL_OP_FILL, "fill", Family::kCreate, Dtypes::kAll},
    {CTL_OP_ARANGE, "arange", Family::kCreate, Dtypes::kNumeric},
    {CTL_OP_RANDOM_UNIFORM, "random_uniform", Family::kCreate, Dtypes::kFloat},
    {CTL_OP_RANDOM_NORMAL, "random_normal", Family::kCreate, Dtypes::kFloat},
    {CTL_OP_CROSS_ENTROPY, "cross_entropy", Family::kCrossEntropy, Dtypes::kFloat},
    {CTL_OP_CROSS_ENTROPY_BACKWARD, "cross_entropy_backward", Family::kCrossEntropy, Dtypes::kFloat},
    {CTL_OP_ADAMW_STEP, "adamw_step", Family::kAdamw, Dtypes::kFloat},
    {CTL_OP_SGD_STEP, "sgd_step", Family::kSgd, Dtypes::kFloat},
    {CTL_OP_SOFTMAX_BACKWARD, "softmax_backward", Family::kSoftmaxBackward, Dtypes::kFloat},
    {CTL_OP_LOG_SOFTMAX_BACKWARD, "log_softmax_backward", Family::kSoftmaxBackward, Dtypes::kFloat},
    {CTL_OP_LAYER_NORM_BACKWARD, "layer_norm_backward", Family::kLayerNormBackward, Dtypes::kFloat},
    {CTL_OP_RMS_NORM_BACKWARD, "rms_norm_backward", Family::kRmsNormBackward, Dtypes::kFloat},
    {CTL_OP_GELU_BACKWARD, "gelu_backward", Family::kBinary, Dtypes::kFloat},
    {CTL_OP_GELU_TANH_BACKWARD, "gelu_tanh_backward", Family::kBinary, Dtypes::kFloat},
    {CTL_OP_CONV2D, "conv2d", Family::kConv2d, Dtypes::kFloat},
    {CTL_OP_CONV2D_BACKWARD_INPUT, "conv2d_backward_input", Family::kConv2d, Dtypes::kFloat},
    {CTL_OP_CONV2D_BACKWARD_WEIGHT, "conv2d_backward_weight", Family::kConv2d, Dtypes::kFloat},
    {CTL_OP_MAX_POOL2D, "max_pool2d", Family::kPool2d, Dtypes::kFloat},
    {CTL_OP_MAX_POOL2D_BACKWARD, "max_pool2d_backward", Family::kPool2d, Dtypes::kFloat},
    {CTL_OP_AVG_POOL2D, "avg_pool2d", Family::kPool2d, Dtypes::kFloat},
    {CTL_OP_AVG_POOL2D_BACKWARD, "avg_pool2d_backward", Family::kPool2d, Dtypes::kFloat},
    {CTL_OP_FUSED_ELEMENTWISE, "fused_elementwise", Family::kFused, Dtypes::kFloat},  // ABI 1.5
};

// kOps by op id, so that every op call finds its entry in one load instead of a scan.
constexpr int kLargestOpId = [] {
  int largest = 0;
  for (const auto& info : kOps) largest = std::max(largest, static_cast<int>(info.op));
  return largest;
}();
constexpr auto kOpIndex = [] {
  std::array<int16_t, kLargestOpId + 1> index{};
  index.fill(-1);
  for (size_t i = 0; i < std::size(kOps); ++i) index[kOps[i].op] = static_cast<int16_t>(i);
  return index;
}();

const OpInfo* find_op(const ctl_op_id& op) {
  const int raw = enum_value(op);
  if (raw < 0 || raw > kLargestOpId) return nullptr;
  const int16_t i = kOpIndex[static_cast<size_t>(raw)];
  return i < 0 ? nullptr : &kOps[i];
}

}  // namespace catalyst::schema

namespace catalyst {

using schema::dtype_allowed;
using schema::Family;
using schema::find_op;
using schema::OpInfo;
using schema::Preparer;

const char* op_name(const ctl_op_id& op) {
  const OpInfo* info = find_op(op);
  return info ? info->name : nullptr;
}

uint32_t plain_elementwise_arity(const ctl_op_id& op, ctl_dtype dtype) {
  const OpInfo* info = find_op(op);
  if (!info || !dtype_allowed(info->dtypes, dtype)) return 0;
  if (info->family == Family::kUnary) return 1;
  // gelu_backward and its tanh form are kBinary too: two inputs of one shape and dtype.
  if (info->family == Family::kBinary) return 2;
  return 0;
}

ctl_status* check_op_id(const ctl_op_id& op) {
  if (find_op(op)) return nullptr;
  return make_status(CTL_STATUS_INVALID_ARGUMENT, "argument 'op' is %d, not a known ctl_op_id", enum_value(op));
}

ctl_status* prepare_op(ctl_op_id op, size_t input_count, ctl_tensor* const* inputs, const void* attrs,
                       size_t output_count, ctl_tensor* const* outputs, bool allocating, PreparedOp* out) {
  CTL_RETURN_IF_ERROR(check_op_id(op));
  const OpInfo* info = find_op(op);
  CTL_RETURN_IF_ERROR(Preparer(*info, input_count, inputs, attrs, output_count, outputs, allocating, out).run());
  if (!out->device) return make_status(CTL_STATUS_INTERNAL, "%s: no device after validation", info->name);
  for (size_t i = 0; i < out->inputs.size(); ++i) {
    if (!out->input_present[i]) continue;
    const ctl_dtype d = out->inputs[i]->layout.dtype;
    if (!(out->device->dtype_mask & CTL_DTYPE_BIT(d))) {
      return make_status(CTL_STATUS_UNSUPPORTED, "%s: device %s does not support dtype %s (inputs[%zu])", info->name,
                         out->device->label.c_str(), ctl_dtype_name(d), i);
    }
  }
  return nullptr;
}

ctl_tensor_view output_view(const PreparedOp& prepared, const ctl_tensor* output) {
  ctl_tensor_view view = to_view(output);
  if (prepared.op < CTL_OP_SUM || prepared.op > CTL_OP_LOGSUMEXP || !prepared.keepdims_mask) return view;
  // Re-insert the reduced axes as size 1 so the plugin sees the input's rank.
  ctl_tensor_view full = view;
  full.rank = prepared.reduce_input_rank;
  uint32_t source = 0;
  for (uint32_t axis = 0; axis < full.rank; ++axis) {
    if (prepared.keepdims_mask & (1u << axis)) {
      full.shape[axis] = 1;
      full.strides[axis] = 0;
    } else {
      full.shape[axis] = view.shape[source];
      full.strides[axis] = view.strides[source];
      ++source;
    }
  }
  return full;
}

}  // namespace catalyst
