// op_schema_preparer.h — inside op_schema: the op table's entries, the helpers every
// family's checks use, and Preparer, which validates, infers the outputs of and normalises
// one call. Its family methods live one family to a file (op_schema_<family>.cpp); the
// table and the entry points in op_schema.cpp. Not part of the core's interface: include
// op_schema.h instead.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string>

#include "enum_value.h"
#include "op_schema.h"
#include "status.h"

namespace catalyst::schema {

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

// The entry of op `op`, NULL for an unknown id (op_schema.cpp).
const OpInfo* find_op(const ctl_op_id& op);

inline bool is_float(ctl_dtype d) {
  return d == CTL_DTYPE_F32 || d == CTL_DTYPE_F64 || d == CTL_DTYPE_F16 || d == CTL_DTYPE_BF16;
}

inline bool dtype_allowed(Dtypes rule, ctl_dtype d) {
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

inline const char* rule_words(Dtypes rule) {
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
inline ctl_status* read_attrs(const OpInfo& info, const void* attrs, size_t minimum, T* out) {
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

inline ctl_status* normalize_axis(const OpInfo& info, int64_t axis, uint32_t rank, const char* what, int32_t* out) {
  if (axis < -static_cast<int64_t>(rank) || axis >= static_cast<int64_t>(rank)) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: %s is %lld, out of range for an input of rank %u", info.name,
                       what, static_cast<long long>(axis), rank);
  }
  *out = static_cast<int32_t>(axis < 0 ? axis + rank : axis);
  return nullptr;
}

// NumPy broadcasting of a shape of `have_rank` axes into `result` (both right-aligned).
inline ctl_status* broadcast_shape_into(const OpInfo& info, uint32_t have_rank, const int64_t* have_shape, size_t index,
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
inline ctl_status* broadcast_into(const OpInfo& info, const Layout& layout, size_t index, OutputSpec* result) {
  return broadcast_shape_into(info, layout.rank, layout.shape.data(), index, result);
}

// The view of `tensor` broadcast to `shape` (right-aligned, stride 0 on new or size-1 axes).
inline ctl_tensor_view broadcast_view(const ctl_tensor* tensor, uint32_t rank, const int64_t* shape) {
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

inline OutputSpec spec_of(ctl_dtype dtype, uint32_t rank, const int64_t* shape) {
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

  ctl_status* unary();

  ctl_status* elementwise();

  // fused_elementwise: 1 .. CTL_FUSED_MAX_INPUTS inputs of one float dtype, broadcast
  // together as the binary ops' are (every view at the output's shape, stride 0 where it
  // repeats), and a program checked by the sdk's read_fused_program, which plugins share.
  ctl_status* fused_elementwise();

  ctl_status* reduce();

  ctl_status* matmul();

  ctl_status* softmax();

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
  ctl_status* cross_entropy();

  // adamw_step: input grad; outputs param, exp_avg, exp_avg_sq, all updated in place.
  ctl_status* adamw();

  // sgd_step: input grad; outputs param and momentum_buf (NULL exactly when momentum is
  // 0), updated in place.
  ctl_status* sgd();

  // softmax_backward / log_softmax_backward: inputs y, dy of one shape; axis like softmax.
  ctl_status* softmax_backward();

  // layer_norm_backward (dy, x, mean, rstd, weight|NULL) -> dx, dweight?, dbias?
  // rms_norm_backward (dy, x, rstd, weight|NULL) -> dx, dweight?
  ctl_status* normalization_backward();

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
  ctl_status* conv2d();

  // max_pool2d / avg_pool2d (x); their backward forms (dy, x).
  ctl_status* pool2d();

  ctl_status* normalization();

  ctl_status* cast();

  ctl_status* concat();

  ctl_status* gather_scatter();

  ctl_status* create();

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

}  // namespace catalyst::schema
