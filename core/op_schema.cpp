// op_schema.cpp — validation, output inference and normalisation of every op (see
// op_schema.h and docs/ops.md). Every failure names the argument and the value at fault.
#include "op_schema.h"
#include "enum_value.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "catalyst/sdk/fused_program.hpp"
#include "catalyst/sdk/sgd_attrs.hpp"
#include "status.h"

namespace catalyst {
namespace {

enum class Family {
  kUnary,
  kBinary,
  kCompare,
  kWhere,
  kReduce,
  kMatmul,
  kSoftmax,
  kLayerNorm,
  kRmsNorm,
  kCopy,
  kCast,
  kConcat,
  kGather,
  kScatterAdd,
  kCreate,
  kCrossEntropy,  // forward and backward
  kAdamw,
  kSgd,
  kSoftmaxBackward,
  kLayerNormBackward,
  kRmsNormBackward,
  kConv2d,  // forward and both backward forms
  kPool2d,  // max and average, forward and backward
  kFused    // fused_elementwise: a program of elementwise ops (ABI 1.5)
};
enum class Dtypes { kFloat, kNumeric, kAll, kMatmul };

struct OpInfo {
  ctl_op_id op;
  const char* name;
  Family family;
  Dtypes dtypes;
};

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

bool is_float(ctl_dtype d) {
  return d == CTL_DTYPE_F32 || d == CTL_DTYPE_F64 || d == CTL_DTYPE_F16 || d == CTL_DTYPE_BF16;
}

bool dtype_allowed(Dtypes rule, ctl_dtype d) {
  switch (rule) {
    case Dtypes::kFloat:
      return is_float(d);
    case Dtypes::kNumeric:
      return d != CTL_DTYPE_BOOL;
    case Dtypes::kAll:
      return true;
    case Dtypes::kMatmul:
      return is_float(d) || d == CTL_DTYPE_I32 || d == CTL_DTYPE_I64;
  }
  return false;
}

const char* rule_words(Dtypes rule) {
  switch (rule) {
    case Dtypes::kFloat:
      return "a floating dtype (f32, f64, f16, bf16)";
    case Dtypes::kNumeric:
      return "a numeric dtype (not bool)";
    case Dtypes::kAll:
      return "any dtype";
    case Dtypes::kMatmul:
      return "a floating dtype, i32 or i64";
  }
  return "";
}

// Copies a caller's attribute struct (possibly an older, smaller or newer, larger one)
// into a zeroed current struct.
template <typename T>
ctl_status* read_attrs(const OpInfo& info, const void* attrs, size_t minimum, T* out) {
  std::memset(out, 0, sizeof *out);
  out->struct_size = sizeof(T);
  if (!attrs) return nullptr;
  const size_t size = *static_cast<const size_t*>(attrs);
  if (size < minimum) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT,
                       "attrs->struct_size is %zu, smaller than the %zu bytes %s's attribute struct needs", size,
                       minimum, info.name);
  }
  std::memcpy(out, attrs, std::min(size, sizeof(T)));
  out->struct_size = sizeof(T);
  return nullptr;
}

ctl_status* normalize_axis(const OpInfo& info, int64_t axis, uint32_t rank, const char* what, int32_t* out) {
  if (axis < -static_cast<int64_t>(rank) || axis >= static_cast<int64_t>(rank)) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: %s is %lld, out of range for an input of rank %u", info.name,
                       what, static_cast<long long>(axis), rank);
  }
  *out = static_cast<int32_t>(axis < 0 ? axis + rank : axis);
  return nullptr;
}

// NumPy broadcasting of a shape of `have_rank` axes into `result` (both right-aligned).
ctl_status* broadcast_shape_into(const OpInfo& info, uint32_t have_rank, const int64_t* have_shape, size_t index,
                                 OutputSpec* result) {
  const uint32_t rank = std::max(result->rank, have_rank);
  std::array<int64_t, CTL_MAX_RANK> shape{};
  for (uint32_t i = 0; i < rank; ++i) {
    const int64_t a = i < rank - result->rank ? 1 : result->shape[i - (rank - result->rank)];
    const int64_t b = i < rank - have_rank ? 1 : have_shape[i - (rank - have_rank)];
    if (a != b && a != 1 && b != 1) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT,
                         "%s: input %zu has size %lld on axis %u, which does not broadcast with size %lld", info.name,
                         index, static_cast<long long>(b), i, static_cast<long long>(a));
    }
    shape[i] = a == 1 ? b : a;
  }
  result->rank = rank;
  result->shape = shape;
  return nullptr;
}

// The same for a layout's shape.
ctl_status* broadcast_into(const OpInfo& info, const Layout& layout, size_t index, OutputSpec* result) {
  return broadcast_shape_into(info, layout.rank, layout.shape.data(), index, result);
}

// The view of `tensor` broadcast to `shape` (right-aligned, stride 0 on new or size-1 axes).
ctl_tensor_view broadcast_view(const ctl_tensor* tensor, uint32_t rank, const int64_t* shape) {
  ctl_tensor_view view = to_view(tensor);
  const Layout& layout = tensor->layout;
  const uint32_t lead = rank - layout.rank;
  view.rank = rank;
  for (uint32_t i = 0; i < rank; ++i) {
    const bool is_new = i < lead;
    const int64_t have = is_new ? 1 : layout.shape[i - lead];
    view.shape[i] = shape[i];
    view.strides[i] = (is_new || (have == 1 && shape[i] != 1)) ? 0 : layout.strides[i - lead];
  }
  return view;
}

OutputSpec spec_of(ctl_dtype dtype, uint32_t rank, const int64_t* shape) {
  OutputSpec spec;
  spec.present = true;
  spec.dtype = dtype;
  spec.rank = rank;
  std::copy_n(shape, rank, spec.shape.begin());
  return spec;
}

class Preparer {
 public:
  Preparer(const OpInfo& info, size_t input_count, ctl_tensor* const* inputs, const void* attrs, size_t output_count,
           ctl_tensor* const* outputs, bool allocating, PreparedOp* out)
      : info_(info),
        input_count_(input_count),
        inputs_(inputs),
        attrs_(attrs),
        output_count_(output_count),
        outputs_(outputs),
        allocating_(allocating),
        out_(out) {}

  ctl_status* run() {
    out_->op = info_.op;
    switch (info_.family) {
      case Family::kUnary:
      case Family::kCopy:
        return unary();
      case Family::kBinary:
      case Family::kCompare:
      case Family::kWhere:
        return elementwise();
      case Family::kReduce:
        return reduce();
      case Family::kMatmul:
        return matmul();
      case Family::kSoftmax:
        return softmax();
      case Family::kLayerNorm:
      case Family::kRmsNorm:
        return normalization();
      case Family::kCast:
        return cast();
      case Family::kConcat:
        return concat();
      case Family::kGather:
      case Family::kScatterAdd:
        return gather_scatter();
      case Family::kCreate:
        return create();
      case Family::kCrossEntropy:
        return cross_entropy();
      case Family::kAdamw:
        return adamw();
      case Family::kSgd:
        return sgd();
      case Family::kSoftmaxBackward:
        return softmax_backward();
      case Family::kLayerNormBackward:
      case Family::kRmsNormBackward:
        return normalization_backward();
      case Family::kConv2d:
        return conv2d();
      case Family::kPool2d:
        return pool2d();
      case Family::kFused:
        return fused_elementwise();
    }
    return make_status(CTL_STATUS_INTERNAL, "%s: no schema", info_.name);
  }

 private:
  ctl_status* arity(size_t min_inputs, size_t max_inputs, size_t min_outputs, size_t max_outputs) {
    if (input_count_ < min_inputs || input_count_ > max_inputs) {
      if (min_inputs == max_inputs) {
        return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s takes %zu inputs; input_count is %zu", info_.name,
                           min_inputs, input_count_);
      }
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s takes %zu to %zu inputs; input_count is %zu", info_.name,
                         min_inputs, max_inputs, input_count_);
    }
    if (input_count_ > 0 && !inputs_) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: argument 'inputs' is NULL", info_.name);
    }
    if (output_count_ < min_outputs || output_count_ > max_outputs) {
      if (min_outputs == max_outputs) {
        return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s produces %zu outputs; output_count is %zu", info_.name,
                           min_outputs, output_count_);
      }
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s produces %zu to %zu outputs; output_count is %zu", info_.name,
                         min_outputs, max_outputs, output_count_);
    }
    out_->input_views.assign(input_count_, ctl_tensor_view{});
    out_->input_present.assign(input_count_, false);
    out_->inputs.assign(input_count_, nullptr);
    return nullptr;
  }

  // Checks input `i` (optional inputs may be NULL) and that all inputs share a device.
  ctl_status* input(size_t i, bool optional = false) {
    const ctl_tensor* tensor = inputs_[i];
    if (!tensor && optional) return nullptr;
    if (ctl_status* status = check_tensor_at(tensor, "inputs", i)) return annotate(status, info_.name);
    if (!out_->device) {
      out_->device = tensor->device();
    } else if (out_->device != tensor->device()) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT,
                         "%s: inputs[%zu] is on device %s but earlier inputs are on %s; move it with "
                         "ctl_tensor_to_device, or allow cross-device inputs in the runtime's placement policy",
                         info_.name, i, tensor->device()->label.c_str(), out_->device->label.c_str());
    }
    out_->input_present[i] = true;
    out_->inputs[i] = tensor;
    out_->input_views[i] = to_view(tensor);
    return nullptr;
  }

  ctl_status* all_inputs() {
    for (size_t i = 0; i < input_count_; ++i) CTL_RETURN_IF_ERROR(input(i));
    return nullptr;
  }

  const Layout& layout(size_t i) const { return inputs_[i]->layout; }

  ctl_status* dtype_rule(size_t i) {
    const ctl_dtype d = layout(i).dtype;
    if (!dtype_allowed(info_.dtypes, d)) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: inputs[%zu] has dtype %s; %s needs %s", info_.name, i,
                         ctl_dtype_name(d), info_.name, rule_words(info_.dtypes));
    }
    return nullptr;
  }

  ctl_status* same_dtype(size_t i, size_t j) {
    if (layout(i).dtype != layout(j).dtype) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT,
                         "%s: inputs[%zu] is %s but inputs[%zu] is %s; cast one first (no implicit promotion)",
                         info_.name, j, ctl_dtype_name(layout(j).dtype), i, ctl_dtype_name(layout(i).dtype));
    }
    return nullptr;
  }

  ctl_status* no_attrs_needed() { return nullptr; }

  ctl_status* unary() {
    CTL_RETURN_IF_ERROR(arity(1, 1, 1, 1));
    CTL_RETURN_IF_ERROR(all_inputs());
    CTL_RETURN_IF_ERROR(dtype_rule(0));
    out_->outputs = {spec_of(layout(0).dtype, layout(0).rank, layout(0).shape.data())};
    return nullptr;
  }

  ctl_status* elementwise() {
    const bool is_where = info_.family == Family::kWhere;
    const size_t n = is_where ? 3 : 2;
    CTL_RETURN_IF_ERROR(arity(n, n, 1, 1));
    CTL_RETURN_IF_ERROR(all_inputs());
    const size_t first = is_where ? 1 : 0;
    if (is_where && layout(0).dtype != CTL_DTYPE_BOOL) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "where: inputs[0] (the condition) has dtype %s; it must be bool",
                         ctl_dtype_name(layout(0).dtype));
    }
    CTL_RETURN_IF_ERROR(dtype_rule(first));
    CTL_RETURN_IF_ERROR(same_dtype(first, first + 1));
    OutputSpec spec;
    spec.present = true;
    for (size_t i = 0; i < n; ++i) CTL_RETURN_IF_ERROR(broadcast_into(info_, layout(i), i, &spec));
    spec.dtype = info_.family == Family::kCompare ? CTL_DTYPE_BOOL : layout(first).dtype;
    CTL_RETURN_IF_ERROR(check_shape(spec.rank, spec.shape.data(), spec.dtype, "broadcast output shape"));
    for (size_t i = 0; i < n; ++i) out_->input_views[i] = broadcast_view(inputs_[i], spec.rank, spec.shape.data());
    out_->outputs = {spec};
    return nullptr;
  }

  // fused_elementwise: 1 .. CTL_FUSED_MAX_INPUTS inputs of one float dtype, broadcast
  // together as the binary ops' are (every view at the output's shape, stride 0 where it
  // repeats), and a program checked by the sdk's read_fused_program, which plugins share.
  ctl_status* fused_elementwise() {
    CTL_RETURN_IF_ERROR(arity(1, CTL_FUSED_MAX_INPUTS, 1, 1));
    CTL_RETURN_IF_ERROR(all_inputs());
    CTL_RETURN_IF_ERROR(dtype_rule(0));
    for (size_t i = 1; i < input_count_; ++i) CTL_RETURN_IF_ERROR(same_dtype(0, i));
    const sdk::Check check = sdk::read_fused_program(attrs_, static_cast<uint32_t>(input_count_), &out_->attrs.fused);
    if (!check.ok()) return make_status(check.code, "%s: %s", info_.name, check.message);
    out_->has_attrs = true;
    OutputSpec spec;
    spec.present = true;
    for (size_t i = 0; i < input_count_; ++i) CTL_RETURN_IF_ERROR(broadcast_into(info_, layout(i), i, &spec));
    spec.dtype = layout(0).dtype;
    CTL_RETURN_IF_ERROR(check_shape(spec.rank, spec.shape.data(), spec.dtype, "broadcast output shape"));
    for (size_t i = 0; i < input_count_; ++i) {
      out_->input_views[i] = broadcast_view(inputs_[i], spec.rank, spec.shape.data());
    }
    out_->outputs = {spec};
    return nullptr;
  }

  ctl_status* reduce() {
    CTL_RETURN_IF_ERROR(arity(1, 1, 1, 1));
    CTL_RETURN_IF_ERROR(all_inputs());
    CTL_RETURN_IF_ERROR(dtype_rule(0));
    ctl_reduce_attrs& a = out_->attrs.reduce;
    CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_REDUCE_ATTRS_STRUCT_SIZE, &a));
    out_->has_attrs = true;
    const Layout& x = layout(0);
    const bool is_arg = info_.op == CTL_OP_ARGMAX || info_.op == CTL_OP_ARGMIN;
    if (a.axis_count > CTL_MAX_RANK) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: attrs->axis_count is %u; at most %d axes", info_.name,
                         a.axis_count, CTL_MAX_RANK);
    }
    if (is_arg && a.axis_count != 1) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: attrs->axis_count is %u; %s takes exactly one axis",
                         info_.name, a.axis_count, info_.name);
    }
    uint32_t mask = 0;
    for (uint32_t i = 0; i < a.axis_count; ++i) {
      int32_t axis = 0;
      CTL_RETURN_IF_ERROR(normalize_axis(info_, a.axes[i], x.rank, "attrs->axes entry", &axis));
      if (mask & (1u << axis)) {
        return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: attrs->axes names axis %d twice", info_.name, axis);
      }
      mask |= 1u << axis;
    }
    if (a.axis_count == 0) mask = x.rank ? (1u << x.rank) - 1 : 0;
    a.axis_count = 0;
    for (uint32_t axis = 0; axis < x.rank; ++axis) {
      if (!(mask & (1u << axis))) continue;
      a.axes[a.axis_count++] = static_cast<int32_t>(axis);
      const bool needs_values = info_.op == CTL_OP_MAX || info_.op == CTL_OP_MIN || is_arg;
      if (needs_values && x.shape[axis] == 0) {
        return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: axis %u has size 0; %s of nothing is undefined",
                           info_.name, axis, info_.name);
      }
    }
    OutputSpec spec;
    spec.present = true;
    spec.dtype = is_arg ? CTL_DTYPE_I64 : x.dtype;
    for (uint32_t axis = 0; axis < x.rank; ++axis) {
      if (!(mask & (1u << axis))) {
        spec.shape[spec.rank++] = x.shape[axis];
      } else if (a.keepdims) {
        spec.shape[spec.rank++] = 1;
      }
    }
    out_->keepdims_mask = a.keepdims ? 0 : mask;
    out_->reduce_input_rank = x.rank;
    out_->outputs = {spec};
    return nullptr;
  }

  ctl_status* matmul() {
    CTL_RETURN_IF_ERROR(arity(2, 3, 1, 1));
    CTL_RETURN_IF_ERROR(input(0));
    CTL_RETURN_IF_ERROR(input(1));
    if (input_count_ == 3) CTL_RETURN_IF_ERROR(input(2, true));
    CTL_RETURN_IF_ERROR(dtype_rule(0));
    CTL_RETURN_IF_ERROR(same_dtype(0, 1));
    ctl_matmul_attrs& m = out_->attrs.matmul;
    CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_MATMUL_ATTRS_STRUCT_SIZE, &m));
    out_->has_attrs = true;
    if (!m.alpha_set) m.alpha = 1.0;
    m.alpha_set = true;
    if (allocating_ && m.beta != 0.0) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT,
                         "matmul: attrs->beta is %g but ctl_op_run has no existing output to scale; use "
                         "ctl_op_run_into",
                         m.beta);
    }
    const int activation = enum_value(m.activation);
    if (activation < CTL_ACTIVATION_NONE || activation > CTL_ACTIVATION_GELU_TANH) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "matmul: attrs->activation is %d, not a ctl_activation",
                         activation);
    }
    const ctl_dtype dtype = layout(0).dtype;
    if (m.activation != CTL_ACTIVATION_NONE && !is_float(dtype)) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "matmul: an activation needs a floating dtype, not %s",
                         ctl_dtype_name(dtype));
    }
    // Each operand's matrix axes, transposed as asked, read straight from its layout: this
    // runs on every matmul call, and copying whole 160-byte views (a rep movs or stos of
    // some 30 cycles each, ten of them) was about 0.1 us of a small matmul.
    int64_t rows[2], cols[2], row_strides[2], col_strides[2];
    for (int k = 0; k < 2; ++k) {
      const Layout& l = layout(k);
      if (l.rank < 2) {
        return make_status(CTL_STATUS_INVALID_ARGUMENT,
                           "matmul: inputs[%d] has rank %u; matmul needs rank >= 2 (reshape a vector to 1xN)", k,
                           l.rank);
      }
      const bool transpose = k == 0 ? m.transpose_a : m.transpose_b;
      const uint32_t r = transpose ? l.rank - 1 : l.rank - 2, c = transpose ? l.rank - 2 : l.rank - 1;
      rows[k] = l.shape[r];
      cols[k] = l.shape[c];
      row_strides[k] = l.strides[r];
      col_strides[k] = l.strides[c];
    }
    const int64_t M = rows[0], K = cols[0], K2 = rows[1], N = cols[1];
    if (K != K2) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT,
                         "matmul: inner dimensions differ: a is ...x%lldx%lld and b is ...x%lldx%lld (after "
                         "transposes)",
                         static_cast<long long>(M), static_cast<long long>(K), static_cast<long long>(K2),
                         static_cast<long long>(N));
    }
    // Broadcast the batch axes of a and b.
    OutputSpec spec;
    for (int k = 0; k < 2; ++k) {
      const Layout& l = layout(k);
      CTL_RETURN_IF_ERROR(broadcast_shape_into(info_, l.rank - 2, l.shape.data(), k, &spec));
    }
    const uint32_t batch_rank = spec.rank;
    spec.present = true;
    spec.dtype = dtype;
    spec.rank = batch_rank + 2;
    if (spec.rank > CTL_MAX_RANK) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "matmul: the output would have rank %u", spec.rank);
    }
    spec.shape[batch_rank] = M;
    spec.shape[batch_rank + 1] = N;
    CTL_RETURN_IF_ERROR(check_shape(spec.rank, spec.shape.data(), dtype, "matmul output shape"));
    // The operands' views, written where the plugin reads them: batch axes broadcast to the
    // output's (stride 0 where new or of size 1), then the two matrix axes.
    for (int k = 0; k < 2; ++k) {
      const ctl_tensor_view& v = inputs_[k]->view;
      ctl_tensor_view& b = out_->input_views[k];
      b.struct_size = v.struct_size;
      b.buffer = v.buffer;
      b.byte_offset = v.byte_offset;
      b.dtype = v.dtype;
      b.rank = spec.rank;
      const uint32_t have = v.rank - 2, lead = batch_rank - have;
      for (uint32_t i = 0; i < batch_rank; ++i) {
        const bool is_new = i < lead;
        const int64_t size = is_new ? 1 : v.shape[i - lead];
        b.shape[i] = spec.shape[i];
        b.strides[i] = (is_new || (size == 1 && spec.shape[i] != 1)) ? 0 : v.strides[i - lead];
      }
      b.shape[batch_rank] = rows[k];
      b.shape[batch_rank + 1] = cols[k];
      b.strides[batch_rank] = row_strides[k];
      b.strides[batch_rank + 1] = col_strides[k];
    }
    if (input_count_ == 3 && inputs_[2]) {
      CTL_RETURN_IF_ERROR(same_dtype(0, 2));
      OutputSpec check = spec;
      CTL_RETURN_IF_ERROR(broadcast_into(info_, layout(2), 2, &check));
      if (check.rank != spec.rank || check.shape != spec.shape) {
        return make_status(CTL_STATUS_INVALID_ARGUMENT,
                           "matmul: inputs[2] (bias) does not broadcast to the output shape without enlarging it");
      }
      out_->input_views[2] = broadcast_view(inputs_[2], spec.rank, spec.shape.data());
    }
    out_->matmul_transposes = {m.transpose_a, m.transpose_b};  // for autograd's rule
    m.transpose_a = m.transpose_b = false;
    out_->outputs = {spec};
    return nullptr;
  }

  ctl_status* softmax() {
    CTL_RETURN_IF_ERROR(arity(1, 1, 1, 1));
    CTL_RETURN_IF_ERROR(all_inputs());
    CTL_RETURN_IF_ERROR(dtype_rule(0));
    ctl_axis_attrs& a = out_->attrs.axis;
    CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_AXIS_ATTRS_STRUCT_SIZE, &a));
    if (!attrs_) a.axis = -1;
    out_->has_attrs = true;
    CTL_RETURN_IF_ERROR(normalize_axis(info_, a.axis, layout(0).rank, "attrs->axis", &a.axis));
    out_->outputs = {spec_of(layout(0).dtype, layout(0).rank, layout(0).shape.data())};
    return nullptr;
  }

  // Checks that inputs[i] has exactly inputs[0]'s shape (no broadcasting).
  ctl_status* same_shape(size_t i, size_t j, const char* what) {
    const Layout& a = layout(i);
    const Layout& b = layout(j);
    if (a.rank != b.rank || !std::equal(a.shape.begin(), a.shape.begin() + a.rank, b.shape.begin())) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: inputs[%zu] has shape %s but inputs[%zu] has %s; %s",
                         info_.name, j, shape_words(b).c_str(), i, shape_words(a).c_str(), what);
    }
    return nullptr;
  }

  static std::string shape_words(const Layout& l) { return shape_text(l.shape.data(), l.rank); }

  // Checks a 1-D parameter of length n (weight, bias) at inputs[i].
  ctl_status* per_feature(size_t i, int64_t n, const char* name) {
    const Layout& p = layout(i);
    if (p.rank != 1 || p.shape[0] != n) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT,
                         "%s: inputs[%zu] (%s) has shape %s; it must be 1-D of length %lld, the size of the last axis",
                         info_.name, i, name, shape_words(p).c_str(), static_cast<long long>(n));
    }
    return nullptr;
  }

  // cross_entropy (logits, target) and cross_entropy_backward (logits, target, grad_loss).
  ctl_status* cross_entropy() {
    const bool backward = info_.op == CTL_OP_CROSS_ENTROPY_BACKWARD;
    const size_t n = backward ? 3 : 2;
    CTL_RETURN_IF_ERROR(arity(n, n, 1, 1));
    CTL_RETURN_IF_ERROR(all_inputs());
    CTL_RETURN_IF_ERROR(dtype_rule(0));
    const Layout& logits = layout(0);
    const Layout& target = layout(1);
    if (logits.rank < 1) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: inputs[0] (logits) is a scalar; it needs a class axis",
                         info_.name);
    }
    if (target.dtype != CTL_DTYPE_I32 && target.dtype != CTL_DTYPE_I64) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: inputs[1] (target) has dtype %s; class ids are i32 or i64",
                         info_.name, ctl_dtype_name(target.dtype));
    }
    if (target.rank != logits.rank - 1 ||
        !std::equal(target.shape.begin(), target.shape.begin() + target.rank, logits.shape.begin())) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT,
                         "%s: inputs[1] (target) has shape %s; it must be the logits' shape %s without the class axis",
                         info_.name, shape_words(target).c_str(), shape_words(logits).c_str());
    }
    ctl_cross_entropy_attrs& a = out_->attrs.cross_entropy;
    CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_CROSS_ENTROPY_ATTRS_STRUCT_SIZE, &a));
    out_->has_attrs = true;
    const int reduction = enum_value(a.reduction);
    if (reduction < CTL_REDUCTION_MEAN || reduction > CTL_REDUCTION_NONE) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: attrs->reduction is %d; use a ctl_reduction value",
                         info_.name, reduction);
    }
    const bool per_target = reduction == CTL_REDUCTION_NONE;
    if (backward) {
      CTL_RETURN_IF_ERROR(same_dtype(0, 2));
      const Layout& g = layout(2);
      const bool ok = per_target ? (g.rank == target.rank &&
                                    std::equal(g.shape.begin(), g.shape.begin() + g.rank, target.shape.begin()))
                                 : g.rank == 0;
      if (!ok) {
        return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: inputs[2] (grad_loss) has shape %s; the loss has shape %s",
                           info_.name, shape_words(g).c_str(), per_target ? shape_words(target).c_str() : "[]");
      }
      out_->outputs = {spec_of(logits.dtype, logits.rank, logits.shape.data())};
    } else {
      out_->outputs = {per_target ? spec_of(logits.dtype, target.rank, target.shape.data())
                                  : spec_of(logits.dtype, 0, logits.shape.data())};
    }
    return nullptr;
  }

  // adamw_step: input grad; outputs param, exp_avg, exp_avg_sq, all updated in place.
  ctl_status* adamw() {
    CTL_RETURN_IF_ERROR(arity(1, 1, 3, 3));
    if (allocating_) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT,
                         "adamw_step updates param, exp_avg and exp_avg_sq in place; use ctl_op_run_into");
    }
    CTL_RETURN_IF_ERROR(all_inputs());
    CTL_RETURN_IF_ERROR(dtype_rule(0));
    ctl_adamw_attrs& a = out_->attrs.adamw;
    if (!attrs_) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "adamw_step: attrs is NULL; pass a ctl_adamw_attrs");
    }
    CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_ADAMW_ATTRS_STRUCT_SIZE, &a));
    out_->has_attrs = true;
    if (a.step == 0) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "adamw_step: attrs->step is 0; the first update is step 1");
    }
    const bool finite = std::isfinite(a.lr) && std::isfinite(a.eps) && std::isfinite(a.weight_decay);
    if (!finite || !(a.beta1 >= 0 && a.beta1 < 1) || !(a.beta2 >= 0 && a.beta2 < 1) || !(a.eps > 0)) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT,
                         "adamw_step: attrs hold lr %g, beta1 %g, beta2 %g, eps %g, weight_decay %g; betas must be in "
                         "[0, 1), eps > 0 and all finite",
                         a.lr, a.beta1, a.beta2, a.eps, a.weight_decay);
    }
    const Layout& g = layout(0);
    out_->outputs.assign(3, spec_of(g.dtype, g.rank, g.shape.data()));
    return nullptr;
  }

  // sgd_step: input grad; outputs param and momentum_buf (NULL exactly when momentum is
  // 0), updated in place.
  ctl_status* sgd() {
    CTL_RETURN_IF_ERROR(arity(1, 1, 2, 2));
    if (allocating_) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT,
                         "sgd_step updates param and momentum_buf in place; use ctl_op_run_into");
    }
    CTL_RETURN_IF_ERROR(all_inputs());
    CTL_RETURN_IF_ERROR(dtype_rule(0));
    ctl_sgd_attrs& a = out_->attrs.sgd;
    if (!attrs_) return make_status(CTL_STATUS_INVALID_ARGUMENT, "sgd_step: attrs is NULL; pass a ctl_sgd_attrs");
    CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_SGD_ATTRS_STRUCT_SIZE, &a));
    out_->has_attrs = true;
    const bool buffer = outputs_ && outputs_[1];
    const sdk::Check check = sdk::check_sgd_attrs(a, buffer);
    if (!check.ok()) return make_status(check.code, "sgd_step: %s", check.message);
    const Layout& g = layout(0);
    out_->outputs.assign(2, spec_of(g.dtype, g.rank, g.shape.data()));
    out_->outputs[1].present = buffer;
    return nullptr;
  }

  // softmax_backward / log_softmax_backward: inputs y, dy of one shape; axis like softmax.
  ctl_status* softmax_backward() {
    CTL_RETURN_IF_ERROR(arity(2, 2, 1, 1));
    CTL_RETURN_IF_ERROR(all_inputs());
    CTL_RETURN_IF_ERROR(dtype_rule(0));
    CTL_RETURN_IF_ERROR(same_dtype(0, 1));
    CTL_RETURN_IF_ERROR(same_shape(0, 1, "y and dy must have one shape"));
    ctl_axis_attrs& a = out_->attrs.axis;
    CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_AXIS_ATTRS_STRUCT_SIZE, &a));
    if (!attrs_) a.axis = -1;
    out_->has_attrs = true;
    CTL_RETURN_IF_ERROR(normalize_axis(info_, a.axis, layout(0).rank, "attrs->axis", &a.axis));
    out_->outputs = {spec_of(layout(0).dtype, layout(0).rank, layout(0).shape.data())};
    return nullptr;
  }

  // layer_norm_backward (dy, x, mean, rstd, weight|NULL) -> dx, dweight?, dbias?
  // rms_norm_backward (dy, x, rstd, weight|NULL) -> dx, dweight?
  ctl_status* normalization_backward() {
    const bool layer = info_.family == Family::kLayerNormBackward;
    const size_t stats = layer ? 2 : 1;
    const size_t weight = 2 + stats;
    CTL_RETURN_IF_ERROR(arity(weight, weight + 1, 1, layer ? 3 : 2));
    for (size_t i = 0; i < weight; ++i) CTL_RETURN_IF_ERROR(input(i));
    if (input_count_ > weight) CTL_RETURN_IF_ERROR(input(weight, true));
    CTL_RETURN_IF_ERROR(dtype_rule(0));
    CTL_RETURN_IF_ERROR(same_dtype(0, 1));
    CTL_RETURN_IF_ERROR(same_shape(0, 1, "dy and x must have one shape"));
    const Layout& x = layout(1);
    if (x.rank < 1) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: inputs[1] (x) is a scalar; it needs rank >= 1", info_.name);
    }
    const ctl_dtype stat = (x.dtype == CTL_DTYPE_F16 || x.dtype == CTL_DTYPE_BF16) ? CTL_DTYPE_F32 : x.dtype;
    for (size_t i = 2; i < weight; ++i) {
      const Layout& st = layout(i);
      const bool ok = st.dtype == stat && st.rank == x.rank - 1 &&
                      std::equal(st.shape.begin(), st.shape.begin() + st.rank, x.shape.begin());
      if (!ok) {
        Layout want = x;
        want.rank = x.rank - 1;
        return make_status(CTL_STATUS_INVALID_ARGUMENT,
                           "%s: inputs[%zu] (%s) is %s %s; for x of shape %s the forward op's statistics are %s %s",
                           info_.name, i, layer && i == 2 ? "mean" : "rstd", ctl_dtype_name(st.dtype),
                           shape_words(st).c_str(), shape_words(x).c_str(), ctl_dtype_name(stat),
                           shape_words(want).c_str());
      }
    }
    const int64_t n = x.shape[x.rank - 1];
    const bool has_weight = input_count_ > weight && inputs_[weight];
    if (has_weight) {
      CTL_RETURN_IF_ERROR(same_dtype(1, weight));
      CTL_RETURN_IF_ERROR(per_feature(weight, n, "weight"));
    }
    if (attrs_) {
      CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_NORM_ATTRS_STRUCT_SIZE, &out_->attrs.norm));
      out_->has_attrs = true;
    }
    out_->outputs = {spec_of(x.dtype, x.rank, x.shape.data())};
    for (size_t i = 1; i < output_count_; ++i) {
      OutputSpec s = spec_of(x.dtype, 1, &n);
      s.present = allocating_ || (outputs_ && outputs_[i]);
      out_->outputs.push_back(s);
    }
    return nullptr;
  }

  ctl_status* rank4(size_t i, const char* what) {
    if (layout(i).rank != 4) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT,
                         "%s: inputs[%zu] (%s) has rank %u; it must be rank 4 (N, C, H, W)", info_.name, i, what,
                         layout(i).rank);
    }
    return nullptr;
  }

  // The output size of a window sweep, or -1 when the window does not fit.
  static int64_t sweep(int64_t size, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation) {
    const int64_t span = dilation * (kernel - 1) + 1;
    const int64_t room = size + 2 * padding - span;
    return room < 0 ? -1 : room / stride + 1;
  }

  // conv2d (x, weight, bias|NULL); conv2d_backward_input (dy, x, weight);
  // conv2d_backward_weight (dy, x, weight). x and weight give the shapes.
  ctl_status* conv2d() {
    const bool forward = info_.op == CTL_OP_CONV2D;
    CTL_RETURN_IF_ERROR(arity(forward ? 2 : 3, 3, 1, 1));
    const size_t xi = forward ? 0 : 1, wi = forward ? 1 : 2;
    for (size_t i = 0; i < input_count_; ++i) CTL_RETURN_IF_ERROR(input(i, forward && i == 2));
    CTL_RETURN_IF_ERROR(dtype_rule(xi));
    for (size_t i = 0; i < input_count_; ++i) {
      if (!inputs_[i]) continue;
      CTL_RETURN_IF_ERROR(same_dtype(xi, i));
    }
    CTL_RETURN_IF_ERROR(rank4(xi, "x"));
    CTL_RETURN_IF_ERROR(rank4(wi, "weight"));
    ctl_conv2d_attrs& a = out_->attrs.conv2d;
    CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_CONV2D_ATTRS_STRUCT_SIZE, &a));
    out_->has_attrs = true;
    for (int k = 0; k < 2; ++k) {
      if (a.stride[k] == 0) a.stride[k] = 1;
      if (a.dilation[k] == 0) a.dilation[k] = 1;
      if (a.stride[k] < 1 || a.dilation[k] < 1 || a.padding[k] < 0 || a.padding[k] > (int64_t{1} << 30) ||
          a.stride[k] > (int64_t{1} << 30) || a.dilation[k] > (int64_t{1} << 30)) {
        return make_status(CTL_STATUS_INVALID_ARGUMENT,
                           "%s: attrs hold stride %lld, padding %lld, dilation %lld on axis %d; stride and dilation "
                           "must be >= 1 and padding >= 0",
                           info_.name, static_cast<long long>(a.stride[k]), static_cast<long long>(a.padding[k]),
                           static_cast<long long>(a.dilation[k]), k);
      }
    }
    if (a.groups == 0) a.groups = 1;
    const Layout& x = layout(xi);
    const Layout& w = layout(wi);
    const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
    const int64_t O = w.shape[0], KH = w.shape[2], KW = w.shape[3];
    if (a.groups < 1 || C % a.groups != 0 || O % a.groups != 0 || w.shape[1] != C / a.groups) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT,
                         "%s: x has %lld channels and weight is %s with groups %lld; weight must be (O, C / groups, "
                         "KH, KW) with C and O multiples of groups",
                         info_.name, static_cast<long long>(C), shape_words(w).c_str(),
                         static_cast<long long>(a.groups));
    }
    const int64_t OH = sweep(H, KH, a.stride[0], a.padding[0], a.dilation[0]);
    const int64_t OW = sweep(W, KW, a.stride[1], a.padding[1], a.dilation[1]);
    if (KH < 1 || KW < 1 || OH < 1 || OW < 1) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT,
                         "%s: a %lldx%lld kernel (dilation %lld, %lld) does not fit the padded %lldx%lld input",
                         info_.name, static_cast<long long>(KH), static_cast<long long>(KW),
                         static_cast<long long>(a.dilation[0]), static_cast<long long>(a.dilation[1]),
                         static_cast<long long>(H + 2 * a.padding[0]), static_cast<long long>(W + 2 * a.padding[1]));
    }
    const int64_t y_shape[4] = {N, O, OH, OW};
    if (forward) {
      if (input_count_ == 3 && inputs_[2]) CTL_RETURN_IF_ERROR(per_feature(2, O, "bias"));
      out_->outputs = {spec_of(x.dtype, 4, y_shape)};
      return nullptr;
    }
    const Layout& dy = layout(0);
    if (dy.rank != 4 || !std::equal(y_shape, y_shape + 4, dy.shape.begin())) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT,
                         "%s: inputs[0] (dy) has shape %s; the convolution's output is "
                         "[%lld,%lld,%lld,%lld]",
                         info_.name, shape_words(dy).c_str(), static_cast<long long>(N), static_cast<long long>(O),
                         static_cast<long long>(OH), static_cast<long long>(OW));
    }
    const Layout& target = info_.op == CTL_OP_CONV2D_BACKWARD_INPUT ? x : w;
    out_->outputs = {spec_of(x.dtype, 4, target.shape.data())};
    return nullptr;
  }

  // max_pool2d / avg_pool2d (x); their backward forms (dy, x).
  ctl_status* pool2d() {
    const bool backward = info_.op == CTL_OP_MAX_POOL2D_BACKWARD || info_.op == CTL_OP_AVG_POOL2D_BACKWARD;
    const size_t xi = backward ? 1 : 0;
    CTL_RETURN_IF_ERROR(arity(xi + 1, xi + 1, 1, 1));
    CTL_RETURN_IF_ERROR(all_inputs());
    CTL_RETURN_IF_ERROR(dtype_rule(xi));
    if (backward) CTL_RETURN_IF_ERROR(same_dtype(xi, 0));
    CTL_RETURN_IF_ERROR(rank4(xi, "x"));
    ctl_pool2d_attrs& a = out_->attrs.pool2d;
    if (!attrs_)
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: attrs is NULL; pass a ctl_pool2d_attrs", info_.name);
    CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_POOL2D_ATTRS_STRUCT_SIZE, &a));
    out_->has_attrs = true;
    const Layout& x = layout(xi);
    int64_t out[2];
    for (int k = 0; k < 2; ++k) {
      if (a.stride[k] == 0) a.stride[k] = a.kernel[k];
      if (a.kernel[k] < 1 || a.stride[k] < 1 || a.padding[k] < 0 || a.padding[k] > a.kernel[k] / 2 ||
          a.kernel[k] > (int64_t{1} << 30) || a.stride[k] > (int64_t{1} << 30)) {
        return make_status(CTL_STATUS_INVALID_ARGUMENT,
                           "%s: attrs hold kernel %lld, stride %lld, padding %lld on axis %d; kernel and stride must "
                           "be >= 1 and padding in [0, kernel / 2]",
                           info_.name, static_cast<long long>(a.kernel[k]), static_cast<long long>(a.stride[k]),
                           static_cast<long long>(a.padding[k]), k);
      }
      out[k] = sweep(x.shape[2 + k], a.kernel[k], a.stride[k], a.padding[k], 1);
      if (out[k] < 1) {
        return make_status(CTL_STATUS_INVALID_ARGUMENT,
                           "%s: a %lld window does not fit axis %d of size %lld (padding %lld)", info_.name,
                           static_cast<long long>(a.kernel[k]), 2 + k, static_cast<long long>(x.shape[2 + k]),
                           static_cast<long long>(a.padding[k]));
      }
    }
    const int64_t y_shape[4] = {x.shape[0], x.shape[1], out[0], out[1]};
    if (!backward) {
      out_->outputs = {spec_of(x.dtype, 4, y_shape)};
      return nullptr;
    }
    const Layout& dy = layout(0);
    if (dy.rank != 4 || !std::equal(y_shape, y_shape + 4, dy.shape.begin())) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT,
                         "%s: inputs[0] (dy) has shape %s; the pooling's output is "
                         "[%lld,%lld,%lld,%lld]",
                         info_.name, shape_words(dy).c_str(), static_cast<long long>(y_shape[0]),
                         static_cast<long long>(y_shape[1]), static_cast<long long>(y_shape[2]),
                         static_cast<long long>(y_shape[3]));
    }
    out_->outputs = {spec_of(x.dtype, 4, x.shape.data())};
    return nullptr;
  }

  ctl_status* normalization() {
    const bool layer = info_.family == Family::kLayerNorm;
    const size_t max_inputs = layer ? 3 : 2;
    const size_t max_outputs = layer ? 3 : 2;
    CTL_RETURN_IF_ERROR(arity(1, max_inputs, 1, max_outputs));
    if (allocating_ && output_count_ != 1 && output_count_ != max_outputs) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: output_count is %zu; ask for 1 or %zu outputs", info_.name,
                         output_count_, max_outputs);
    }
    CTL_RETURN_IF_ERROR(input(0));
    for (size_t i = 1; i < input_count_; ++i) CTL_RETURN_IF_ERROR(input(i, true));
    CTL_RETURN_IF_ERROR(dtype_rule(0));
    const Layout& x = layout(0);
    if (x.rank < 1) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: inputs[0] is a scalar; it needs rank >= 1", info_.name);
    }
    const int64_t n = x.shape[x.rank - 1];
    for (size_t i = 1; i < input_count_; ++i) {
      if (!inputs_[i]) continue;
      CTL_RETURN_IF_ERROR(same_dtype(0, i));
      CTL_RETURN_IF_ERROR(per_feature(i, n, i == 1 ? "weight" : "bias"));
    }
    ctl_norm_attrs& a = out_->attrs.norm;
    CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_NORM_ATTRS_STRUCT_SIZE, &a));
    out_->has_attrs = true;
    if (!(a.epsilon >= 0.0)) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: attrs->epsilon is %g; it must be >= 0", info_.name,
                         a.epsilon);
    }
    if (a.epsilon == 0.0) a.epsilon = 1e-5;
    const ctl_dtype stat = (x.dtype == CTL_DTYPE_F16 || x.dtype == CTL_DTYPE_BF16) ? CTL_DTYPE_F32 : x.dtype;
    out_->outputs = {spec_of(x.dtype, x.rank, x.shape.data())};
    for (size_t i = 1; i < output_count_; ++i) {
      OutputSpec s = spec_of(stat, x.rank - 1, x.shape.data());
      s.present = allocating_ || (outputs_ && outputs_[i]);
      out_->outputs.push_back(s);
    }
    return nullptr;
  }

  ctl_status* cast() {
    CTL_RETURN_IF_ERROR(arity(1, 1, 1, 1));
    CTL_RETURN_IF_ERROR(all_inputs());
    ctl_cast_attrs& a = out_->attrs.cast;
    CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_CAST_ATTRS_STRUCT_SIZE, &a));
    out_->has_attrs = true;
    if (!attrs_) {
      if (allocating_) {
        return make_status(CTL_STATUS_INVALID_ARGUMENT,
                           "cast: attrs is NULL; pass a ctl_cast_attrs naming the target dtype");
      }
      if (outputs_ && outputs_[0] && !check_tensor_quiet(outputs_[0])) a.dtype = outputs_[0]->layout.dtype;
    }
    if (ctl_status* status = check_dtype(a.dtype, "attrs->dtype")) return annotate(status, "cast");
    out_->outputs = {spec_of(a.dtype, layout(0).rank, layout(0).shape.data())};
    return nullptr;
  }

  ctl_status* concat() {
    CTL_RETURN_IF_ERROR(arity(1, 4096, 1, 1));
    CTL_RETURN_IF_ERROR(all_inputs());
    ctl_axis_attrs& a = out_->attrs.axis;
    CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_AXIS_ATTRS_STRUCT_SIZE, &a));
    out_->has_attrs = true;
    const Layout& first = layout(0);
    if (first.rank < 1) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "concat: inputs[0] is a scalar; concat needs rank >= 1");
    }
    CTL_RETURN_IF_ERROR(normalize_axis(info_, a.axis, first.rank, "attrs->axis", &a.axis));
    OutputSpec spec = spec_of(first.dtype, first.rank, first.shape.data());
    spec.shape[a.axis] = 0;
    for (size_t i = 0; i < input_count_; ++i) {
      CTL_RETURN_IF_ERROR(same_dtype(0, i));
      const Layout& l = layout(i);
      if (l.rank != first.rank) {
        return make_status(CTL_STATUS_INVALID_ARGUMENT, "concat: inputs[%zu] has rank %u but inputs[0] has rank %u", i,
                           l.rank, first.rank);
      }
      for (uint32_t d = 0; d < l.rank; ++d) {
        if (static_cast<int32_t>(d) != a.axis && l.shape[d] != first.shape[d]) {
          return make_status(CTL_STATUS_INVALID_ARGUMENT,
                             "concat: inputs[%zu] has size %lld on axis %u but inputs[0] has %lld", i,
                             static_cast<long long>(l.shape[d]), d, static_cast<long long>(first.shape[d]));
        }
      }
      spec.shape[a.axis] += l.shape[a.axis];
    }
    CTL_RETURN_IF_ERROR(check_shape(spec.rank, spec.shape.data(), spec.dtype, "concat output shape"));
    out_->outputs = {spec};
    return nullptr;
  }

  ctl_status* gather_scatter() {
    const bool scatter = info_.family == Family::kScatterAdd;
    const size_t n = scatter ? 3 : 2;
    CTL_RETURN_IF_ERROR(arity(n, n, 1, 1));
    CTL_RETURN_IF_ERROR(all_inputs());
    CTL_RETURN_IF_ERROR(dtype_rule(0));
    const Layout& x = layout(0);
    const Layout& index = layout(1);
    if (index.dtype != CTL_DTYPE_I32 && index.dtype != CTL_DTYPE_I64) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: inputs[1] (index) has dtype %s; it must be i32 or i64",
                         info_.name, ctl_dtype_name(index.dtype));
    }
    if (x.rank < 1) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: inputs[0] is a scalar; it needs rank >= 1", info_.name);
    }
    ctl_axis_attrs& a = out_->attrs.axis;
    CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_AXIS_ATTRS_STRUCT_SIZE, &a));
    out_->has_attrs = true;
    CTL_RETURN_IF_ERROR(normalize_axis(info_, a.axis, x.rank, "attrs->axis", &a.axis));
    // gather's output shape: x.shape[:axis] + index.shape + x.shape[axis+1:]
    OutputSpec gathered;
    gathered.present = true;
    gathered.dtype = x.dtype;
    if (x.rank - 1 + index.rank > CTL_MAX_RANK) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: the result would have rank %u; at most %d", info_.name,
                         x.rank - 1 + index.rank, CTL_MAX_RANK);
    }
    for (int32_t d = 0; d < a.axis; ++d) gathered.shape[gathered.rank++] = x.shape[d];
    for (uint32_t d = 0; d < index.rank; ++d) gathered.shape[gathered.rank++] = index.shape[d];
    for (uint32_t d = a.axis + 1; d < x.rank; ++d) gathered.shape[gathered.rank++] = x.shape[d];
    CTL_RETURN_IF_ERROR(check_shape(gathered.rank, gathered.shape.data(), x.dtype, "gather output shape"));
    if (!scatter) {
      out_->outputs = {gathered};
      return nullptr;
    }
    CTL_RETURN_IF_ERROR(same_dtype(0, 2));
    const Layout& src = layout(2);
    if (src.rank != gathered.rank ||
        !std::equal(gathered.shape.begin(), gathered.shape.begin() + gathered.rank, src.shape.begin())) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT,
                         "scatter_add: inputs[2] (src) must have the shape gather would produce from target and "
                         "index (target.shape[:axis] + index.shape + target.shape[axis+1:])");
    }
    out_->outputs = {spec_of(x.dtype, x.rank, x.shape.data())};
    return nullptr;
  }

  ctl_status* create() {
    if (allocating_) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT,
                         "%s creates values and has no input to size them by; use ctl_op_run_into with an "
                         "output tensor (or ctl_tensor_create_full)",
                         info_.name);
    }
    CTL_RETURN_IF_ERROR(arity(0, 0, 1, 1));
    if (!outputs_ || check_tensor_quiet(outputs_[0])) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: outputs[0] is not a valid tensor", info_.name);
    }
    const ctl_tensor* output = outputs_[0];
    out_->device = output->device();
    const Layout& o = output->layout;
    if (!dtype_allowed(info_.dtypes, o.dtype)) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: outputs[0] has dtype %s; %s needs %s", info_.name,
                         ctl_dtype_name(o.dtype), info_.name, rule_words(info_.dtypes));
    }
    if (!attrs_ && info_.op != CTL_OP_FILL) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: attrs is NULL; the op needs its attribute struct",
                         info_.name);
    }
    out_->has_attrs = true;
    switch (info_.op) {
      case CTL_OP_FILL:
        CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_FILL_ATTRS_STRUCT_SIZE, &out_->attrs.fill));
        break;
      case CTL_OP_ARANGE:
        CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_ARANGE_ATTRS_STRUCT_SIZE, &out_->attrs.arange));
        if (o.rank != 1) {
          return make_status(CTL_STATUS_INVALID_ARGUMENT, "arange: outputs[0] has rank %u; arange fills a 1-D tensor",
                             o.rank);
        }
        break;
      default:
        CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_RANDOM_ATTRS_STRUCT_SIZE, &out_->attrs.random));
        if (info_.op == CTL_OP_RANDOM_NORMAL && !(out_->attrs.random.b >= 0.0)) {
          return make_status(CTL_STATUS_INVALID_ARGUMENT,
                             "random_normal: attrs->b (the standard deviation) is %g; it must be >= 0",
                             out_->attrs.random.b);
        }
        break;
    }
    out_->outputs = {spec_of(o.dtype, o.rank, o.shape.data())};
    return nullptr;
  }

  static bool check_tensor_quiet(const ctl_tensor* tensor) {
    ctl_status* status = check_tensor(tensor, "");
    ctl_status_free(status);
    return status != nullptr;
  }

  const OpInfo& info_;
  size_t input_count_;
  ctl_tensor* const* inputs_;
  const void* attrs_;
  size_t output_count_;
  ctl_tensor* const* outputs_;
  bool allocating_;
  PreparedOp* out_;
};

}  // namespace

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
