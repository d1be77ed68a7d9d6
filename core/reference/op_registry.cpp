// op_registry.cpp — the reference device's op table: every op id of catalyst.h with its
// name, operand counts and kernel, the dtype rules of docs/ops.md's table (checked before
// any kernel runs), and the dtype and shape names that status messages use.
#include "op_registry.h"

#include "catalyst/sdk/status.hpp"

namespace catalyst::reference {
namespace {

constexpr OpInfo kOps[] = {
    {CTL_OP_NEG, "neg", Dtypes::kNumeric, 1, 1, 1, 1, run_unary},
    {CTL_OP_ABS, "abs", Dtypes::kNumeric, 1, 1, 1, 1, run_unary},
    {CTL_OP_EXP, "exp", Dtypes::kFloat, 1, 1, 1, 1, run_unary},
    {CTL_OP_LOG, "log", Dtypes::kFloat, 1, 1, 1, 1, run_unary},
    {CTL_OP_SQRT, "sqrt", Dtypes::kFloat, 1, 1, 1, 1, run_unary},
    {CTL_OP_RSQRT, "rsqrt", Dtypes::kFloat, 1, 1, 1, 1, run_unary},
    {CTL_OP_TANH, "tanh", Dtypes::kFloat, 1, 1, 1, 1, run_unary},
    {CTL_OP_SIGMOID, "sigmoid", Dtypes::kFloat, 1, 1, 1, 1, run_unary},
    {CTL_OP_RELU, "relu", Dtypes::kNumeric, 1, 1, 1, 1, run_unary},
    {CTL_OP_GELU, "gelu", Dtypes::kFloat, 1, 1, 1, 1, run_unary},
    {CTL_OP_GELU_TANH, "gelu_tanh", Dtypes::kFloat, 1, 1, 1, 1, run_unary},
    {CTL_OP_SILU, "silu", Dtypes::kFloat, 1, 1, 1, 1, run_unary},
    {CTL_OP_SIN, "sin", Dtypes::kFloat, 1, 1, 1, 1, run_unary},
    {CTL_OP_COS, "cos", Dtypes::kFloat, 1, 1, 1, 1, run_unary},
    {CTL_OP_RECIPROCAL, "reciprocal", Dtypes::kFloat, 1, 1, 1, 1, run_unary},
    {CTL_OP_ADD, "add", Dtypes::kNumeric, 2, 2, 1, 1, run_binary},
    {CTL_OP_SUB, "sub", Dtypes::kNumeric, 2, 2, 1, 1, run_binary},
    {CTL_OP_MUL, "mul", Dtypes::kNumeric, 2, 2, 1, 1, run_binary},
    {CTL_OP_DIV, "div", Dtypes::kNumeric, 2, 2, 1, 1, run_binary},
    {CTL_OP_POW, "pow", Dtypes::kNumeric, 2, 2, 1, 1, run_binary},
    {CTL_OP_MAXIMUM, "maximum", Dtypes::kNumeric, 2, 2, 1, 1, run_binary},
    {CTL_OP_MINIMUM, "minimum", Dtypes::kNumeric, 2, 2, 1, 1, run_binary},
    {CTL_OP_EQ, "eq", Dtypes::kAll, 2, 2, 1, 1, run_binary},
    {CTL_OP_NE, "ne", Dtypes::kAll, 2, 2, 1, 1, run_binary},
    {CTL_OP_LT, "lt", Dtypes::kAll, 2, 2, 1, 1, run_binary},
    {CTL_OP_LE, "le", Dtypes::kAll, 2, 2, 1, 1, run_binary},
    {CTL_OP_GT, "gt", Dtypes::kAll, 2, 2, 1, 1, run_binary},
    {CTL_OP_GE, "ge", Dtypes::kAll, 2, 2, 1, 1, run_binary},
    {CTL_OP_WHERE, "where", Dtypes::kAll, 3, 3, 1, 1, run_where},
    {CTL_OP_SUM, "sum", Dtypes::kNumeric, 1, 1, 1, 1, run_reduce},
    {CTL_OP_MEAN, "mean", Dtypes::kFloat, 1, 1, 1, 1, run_reduce},
    {CTL_OP_MAX, "max", Dtypes::kNumeric, 1, 1, 1, 1, run_reduce},
    {CTL_OP_MIN, "min", Dtypes::kNumeric, 1, 1, 1, 1, run_reduce},
    {CTL_OP_ARGMAX, "argmax", Dtypes::kNumeric, 1, 1, 1, 1, run_arg_reduce},
    {CTL_OP_ARGMIN, "argmin", Dtypes::kNumeric, 1, 1, 1, 1, run_arg_reduce},
    {CTL_OP_LOGSUMEXP, "logsumexp", Dtypes::kFloat, 1, 1, 1, 1, run_reduce},
    {CTL_OP_MATMUL, "matmul", Dtypes::kMatmul, 2, 3, 1, 1, run_matmul},
    {CTL_OP_SOFTMAX, "softmax", Dtypes::kFloat, 1, 1, 1, 1, run_softmax},
    {CTL_OP_LOG_SOFTMAX, "log_softmax", Dtypes::kFloat, 1, 1, 1, 1, run_softmax},
    {CTL_OP_LAYER_NORM, "layer_norm", Dtypes::kFloat, 1, 3, 1, 3, run_layer_norm},
    {CTL_OP_RMS_NORM, "rms_norm", Dtypes::kFloat, 1, 2, 1, 2, run_rms_norm},
    {CTL_OP_COPY, "copy", Dtypes::kAll, 1, 1, 1, 1, run_copy},
    {CTL_OP_CAST, "cast", Dtypes::kAll, 1, 1, 1, 1, run_cast},
    {CTL_OP_CONCAT, "concat", Dtypes::kAll, 1, kMany, 1, 1, run_concat},
    {CTL_OP_GATHER, "gather", Dtypes::kAll, 2, 2, 1, 1, run_gather},
    {CTL_OP_SCATTER_ADD, "scatter_add", Dtypes::kNumeric, 3, 3, 1, 1, run_scatter_add},
    {CTL_OP_FILL, "fill", Dtypes::kAll, 0, 0, 1, 1, run_fill},
    {CTL_OP_ARANGE, "arange", Dtypes::kNumeric, 0, 0, 1, 1, run_arange},
    {CTL_OP_RANDOM_UNIFORM, "random_uniform", Dtypes::kFloat, 0, 0, 1, 1, run_random},
    {CTL_OP_RANDOM_NORMAL, "random_normal", Dtypes::kFloat, 0, 0, 1, 1, run_random},
    // ABI 1.1
    {CTL_OP_CROSS_ENTROPY, "cross_entropy", Dtypes::kFloat, 2, 2, 1, 1, run_cross_entropy},
    {CTL_OP_CROSS_ENTROPY_BACKWARD, "cross_entropy_backward", Dtypes::kFloat, 3, 3, 1, 1, run_cross_entropy},
    {CTL_OP_ADAMW_STEP, "adamw_step", Dtypes::kFloat, 1, 1, 3, 3, run_adamw_step},
    {CTL_OP_SGD_STEP, "sgd_step", Dtypes::kFloat, 1, 1, 1, 2, run_sgd_step},  // ABI 1.2; momentum_buf may be NULL
    {CTL_OP_SOFTMAX_BACKWARD, "softmax_backward", Dtypes::kFloat, 2, 2, 1, 1, run_softmax_backward},
    {CTL_OP_LOG_SOFTMAX_BACKWARD, "log_softmax_backward", Dtypes::kFloat, 2, 2, 1, 1, run_softmax_backward},
    {CTL_OP_LAYER_NORM_BACKWARD, "layer_norm_backward", Dtypes::kFloat, 4, 5, 1, 3, run_norm_backward},
    {CTL_OP_RMS_NORM_BACKWARD, "rms_norm_backward", Dtypes::kFloat, 3, 4, 1, 2, run_norm_backward},
    {CTL_OP_GELU_BACKWARD, "gelu_backward", Dtypes::kFloat, 2, 2, 1, 1, run_gelu_backward},
    {CTL_OP_GELU_TANH_BACKWARD, "gelu_tanh_backward", Dtypes::kFloat, 2, 2, 1, 1, run_gelu_backward},
    {CTL_OP_CONV2D, "conv2d", Dtypes::kFloat, 2, 3, 1, 1, run_conv2d},
    {CTL_OP_CONV2D_BACKWARD_INPUT, "conv2d_backward_input", Dtypes::kFloat, 3, 3, 1, 1, run_conv2d},
    {CTL_OP_CONV2D_BACKWARD_WEIGHT, "conv2d_backward_weight", Dtypes::kFloat, 3, 3, 1, 1, run_conv2d},
    {CTL_OP_MAX_POOL2D, "max_pool2d", Dtypes::kFloat, 1, 1, 1, 1, run_pool2d},
    {CTL_OP_MAX_POOL2D_BACKWARD, "max_pool2d_backward", Dtypes::kFloat, 2, 2, 1, 1, run_pool2d},
    {CTL_OP_AVG_POOL2D, "avg_pool2d", Dtypes::kFloat, 1, 1, 1, 1, run_pool2d},
    {CTL_OP_AVG_POOL2D_BACKWARD, "avg_pool2d_backward", Dtypes::kFloat, 2, 2, 1, 1, run_pool2d},
    // ABI 1.5
    {CTL_OP_FUSED_ELEMENTWISE, "fused_elementwise", Dtypes::kFloat, 1, CTL_FUSED_MAX_INPUTS, 1, 1,
     run_fused_elementwise},
};

bool is_comparison(ctl_op_id op) {
  return op >= CTL_OP_EQ && op <= CTL_OP_GE;
}

// The dtype that docs/ops.md's table is about.
ctl_dtype primary_dtype(const Call& call) {
  if (call.op == CTL_OP_WHERE) return call.in[1].dtype;
  return call.in.empty() ? call.out[0].dtype : call.in[0].dtype;
}

bool allowed(Dtypes rule, ctl_dtype d) {
  switch (rule) {
    case Dtypes::kNumeric:
      return is_numeric(d);
    case Dtypes::kFloat:
      return is_float(d);
    case Dtypes::kAll:
      return true;
    case Dtypes::kMatmul:
      return is_float(d) || d == CTL_DTYPE_I32 || d == CTL_DTYPE_I64;
  }
  return false;
}

// The dtype of a norm's mean and rstd: f32 for the half types, else the input's.
ctl_dtype statistics_dtype(ctl_dtype p) {
  return p == CTL_DTYPE_F16 || p == CTL_DTYPE_BF16 ? CTL_DTYPE_F32 : p;
}

// The dtype input `i` must have; integer index operands are checked apart.
ctl_dtype expected_input_dtype(const Call& call, size_t i) {
  const ctl_dtype p = primary_dtype(call);
  if (call.op == CTL_OP_WHERE && i == 0) return CTL_DTYPE_BOOL;
  if (call.op == CTL_OP_LAYER_NORM_BACKWARD && (i == 2 || i == 3)) return statistics_dtype(p);  // mean, rstd
  if (call.op == CTL_OP_RMS_NORM_BACKWARD && i == 2) return statistics_dtype(p);                // rstd
  return p;
}

// Inputs that hold integer indices (gather's and scatter_add's index, cross_entropy's target).
bool is_index_input(const Call& call, size_t i) {
  if (call.op == CTL_OP_GATHER || call.op == CTL_OP_SCATTER_ADD) return i == 1;
  if (call.op == CTL_OP_CROSS_ENTROPY || call.op == CTL_OP_CROSS_ENTROPY_BACKWARD) return i == 1;
  return false;
}

// The dtype output `i` must have.
ctl_dtype expected_output_dtype(const Call& call, size_t i) {
  const ctl_dtype p = primary_dtype(call);
  if (is_comparison(call.op)) return CTL_DTYPE_BOOL;
  if (call.op == CTL_OP_ARGMAX || call.op == CTL_OP_ARGMIN) return CTL_DTYPE_I64;
  if (call.op == CTL_OP_CAST) return call.out[0].dtype;  // any
  if (i > 0 && (call.op == CTL_OP_LAYER_NORM || call.op == CTL_OP_RMS_NORM)) return statistics_dtype(p);
  return p;  // the backward ops' dweight and dbias, adamw_step's and sgd_step's state: the primary dtype
}

}  // namespace

ctl_status* check_dtypes(const Call& call, const OpInfo& info, ctl_status_code mismatch) {
  const ctl_dtype p = primary_dtype(call);
  if (!allowed(info.dtypes, p)) return call.unsupported("dtype %s is not supported (docs/ops.md)", dtype_name(p));
  auto require = [&](const char* role, size_t i, ctl_dtype have, ctl_dtype want) {
    return sdk::make_status(call.host, mismatch, "%s: %s[%zu] has dtype %s, expected %s", call.name, role, i,
                            dtype_name(have), dtype_name(want));
  };
  for (size_t i = 0; i < call.in.size(); ++i) {
    const Operand& x = call.in[i];
    if (!x.present()) continue;
    if (is_index_input(call, i)) {
      if (x.dtype != CTL_DTYPE_I32 && x.dtype != CTL_DTYPE_I64)
        return sdk::make_status(call.host, mismatch, "%s: %s dtype %s must be i32 or i64", call.name,
                                call.op == CTL_OP_GATHER || call.op == CTL_OP_SCATTER_ADD ? "index" : "target",
                                dtype_name(x.dtype));
      continue;
    }
    const ctl_dtype want = expected_input_dtype(call, i);
    if (x.dtype != want) return require("input", i, x.dtype, want);
  }
  for (size_t i = 0; i < call.out.size(); ++i) {
    if (!call.out[i].present()) continue;
    const ctl_dtype want = expected_output_dtype(call, i);
    if (call.out[i].dtype != want) return require("output", i, call.out[i].dtype, want);
  }
  if (call.op == CTL_OP_MATMUL && is_integer(p) && call.attrs &&
      *static_cast<const size_t*>(call.attrs) >= CTL_MATMUL_ATTRS_STRUCT_SIZE &&
      raw_enum(static_cast<const ctl_matmul_attrs*>(call.attrs)->activation) != CTL_ACTIVATION_NONE)
    return call.unsupported("a fused activation needs a float dtype, not %s", dtype_name(p));
  return nullptr;
}

const OpInfo* find_op(long long id) {
  for (const OpInfo& info : kOps) {
    if (static_cast<long long>(info.id) == id) return &info;
  }
  return nullptr;
}

std::string shape_string(const Operand& operand) {
  std::string s = "[";
  for (uint32_t i = 0; i < operand.rank; ++i) {
    if (i) s += ", ";
    s += std::to_string(operand.shape[i]);
  }
  return s + "]";
}

bool same_shape(const Operand& a, const Operand& b) {
  if (a.rank != b.rank) return false;
  for (uint32_t i = 0; i < a.rank; ++i) {
    if (a.shape[i] != b.shape[i]) return false;
  }
  return true;
}

const char* dtype_name(ctl_dtype dtype) {
  static constexpr const char* kNames[] = {"f32", "f64", "f16", "bf16", "i8", "u8", "i32", "i64", "bool"};
  const auto i = static_cast<unsigned>(dtype);
  return i < CTL_DTYPE_COUNT_ ? kNames[i] : "unknown";
}

}  // namespace catalyst::reference
