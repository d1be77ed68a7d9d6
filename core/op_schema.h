// op_schema.h — what the core knows about each op before any plugin sees it: its name,
// arity and dtype rules, and how to validate a call, infer its outputs and normalise it
// (broadcast inputs, resolve axes and transposes) into the form catalyst_plugin.h promises.
#pragma once

#include <array>
#include <vector>

#include "catalyst_plugin.h"
#include "small_vector.h"
#include "tensor.h"

namespace catalyst {

// The shape and dtype an op produces for one output.
struct OutputSpec {
  bool present = false;  // false for an optional output that is not requested
  ctl_dtype dtype = CTL_DTYPE_F32;
  uint32_t rank = 0;
  std::array<int64_t, CTL_MAX_RANK> shape{};
};

// Inputs and outputs most ops have at most; more go to the heap (small_vector.h).
constexpr size_t kInlineInputs = 6;
constexpr size_t kInlineOutputs = 4;

// A validated, normalised op call waiting for its output tensors. It lives on the stack
// of the op call: preparing an op of a few inputs allocates nothing.
struct PreparedOp {
  ctl_op_id op{};
  ctl_device* device = nullptr;
  union Attrs {
    ctl_reduce_attrs reduce;
    ctl_matmul_attrs matmul;
    ctl_axis_attrs axis;
    ctl_norm_attrs norm;
    ctl_cast_attrs cast;
    ctl_fill_attrs fill;
    ctl_arange_attrs arange;
    ctl_random_attrs random;
    ctl_cross_entropy_attrs cross_entropy;
    ctl_adamw_attrs adamw;
    ctl_sgd_attrs sgd;
    ctl_conv2d_attrs conv2d;
    ctl_pool2d_attrs pool2d;
    ctl_fused_elementwise_attrs fused;  // ABI 1.5
  } attrs{};
  bool has_attrs = false;
  SmallVector<ctl_tensor_view, kInlineInputs> input_views;  // normalised; unused slots for absent inputs
  SmallVector<bool, kInlineInputs> input_present;
  SmallVector<const ctl_tensor*, kInlineInputs> inputs;  // for overlap checks
  SmallVector<OutputSpec, kInlineOutputs> outputs;
  // matmul: the caller's transpose flags, which attrs no longer hold once they are strides.
  std::array<bool, 2> matmul_transposes{};
  // Reductions: the plugin sees outputs in keepdims form; these axes are re-inserted.
  uint32_t keepdims_mask = 0;
  uint32_t reduce_input_rank = 0;
};

// The op's name, or NULL for an unknown id. Takes a reference so that an out-of-range id
// from C is never loaded as the enum (see enum_value.h).
const char* op_name(const ctl_op_id& op);
// INVALID_ARGUMENT for an unknown op id; C entry points call it before any other use.
ctl_status* check_op_id(const ctl_op_id& op);

// 1 or 2 when `op` is a plain elementwise unary or binary op (no attributes, output of
// the inputs' dtype and shape) that accepts `dtype`; else 0. The fast path of
// elementwise_fast_path.h runs only such calls.
uint32_t plain_elementwise_arity(const ctl_op_id& op, ctl_dtype dtype);

// Validates and normalises a call. `outputs` (may be NULL) are the caller's output
// tensors for ctl_op_run_into: creation ops and cast take their dtype and shape from them.
ctl_status* prepare_op(ctl_op_id op, size_t input_count, ctl_tensor* const* inputs, const void* attrs,
                       size_t output_count, ctl_tensor* const* outputs, bool allocating, PreparedOp* out);

// The plugin view of an output tensor, in the form the op's plugin call expects.
ctl_tensor_view output_view(const PreparedOp& prepared, const ctl_tensor* output);

}  // namespace catalyst
