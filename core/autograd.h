// autograd.h — the reverse-mode record behind ctl_tensor_backward.
//
// While a runtime records (ctl_runtime_set_grad_enabled), every allocating op call and
// every view whose float inputs require gradients gets a Node: the op, its normalised
// attributes, its inputs (retained) and detached aliases of its outputs (the storage, not
// the tensor, so no reference cycle forms). Backward walks the nodes from the root in
// reverse topological order and runs each node's rule (autograd_rules.cpp), which is made of
// ordinary op calls, so it runs on whatever device holds the tensors.
#pragma once

#include <memory>
#include <vector>

#include "catalyst.h"
#include "op_schema.h"

namespace catalyst {

// How a view node undoes itself.
// kMove is a device-to-device move (ctl_tensor_transfer): its gradient moves back.
enum class ViewKind { kReshape, kPermute, kSlice, kExpand, kMove };
// A kMove's params[0] when a fallback made it (placement/placed_dispatch.cpp): its
// gradient, a fresh result nothing writes, moves back lazily (placement/lazy_move.h) as the
// forward bytes did. For a result's move the gradient may also be read where it already
// is: the source is an op's result, never a leaf whose .grad a program writes.
constexpr int64_t kFallbackInputMove = 1;
constexpr int64_t kFallbackResultMove = 2;

struct Node {
  bool is_view = false;
  ctl_op_id op{};
  ViewKind view{};
  PreparedOp::Attrs attrs{};  // the normalised attributes (matmul: with the caller's transposes)
  bool has_attrs = false;
  std::vector<ctl_tensor*> inputs;   // retained; NULL for absent optional inputs
  std::vector<ctl_tensor*> outputs;  // detached aliases of the outputs, retained
  std::vector<int64_t> params;       // view parameters (permutation; slice axis, start, step)

  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  ~Node();
};

// What a tensor knows about gradients. Owned by the tensor; created on first need.
struct AutogradMeta {
  bool requires_grad = false;     // a leaf the user marked
  ctl_tensor* grad = nullptr;     // a leaf's accumulated gradient (owned reference)
  std::shared_ptr<Node> grad_fn;  // the node that produced this tensor, for non-leaves
  uint32_t output_index = 0;      // which of grad_fn's outputs this tensor is

  ~AutogradMeta();
};

// True when the tensor takes part in gradients (a marked leaf or a recorded output).
bool tracks_grad(const ctl_tensor* tensor);

// True when a backward pass keeps a gradient for this op input (a float tensor that tracks
// gradients); rules skip the work for the others, such as data batches and masks.
bool keeps_grad(const ctl_tensor* input);

// True when an allocating call of `op` on these inputs would be recorded: the runtime
// records, the op is differentiable and some input keeps a gradient.
bool will_record(ctl_op_id op, size_t input_count, ctl_tensor* const* inputs);

// Runs an allocating call that will be recorded in a form that keeps what its backward
// pass needs, when it has one: an f32/f64 matmul with GELU as the product and then the
// activation op (the rule reads z instead of computing the product again), layer_norm and
// rms_norm with their statistics (the rule does not run the forward op again). Returns
// false, doing nothing, for any other call; else sets *status and returns true.
// `prepared` is the call (input_count, inputs, attrs, output_count) prepared and checked by
// prepare_op.
bool run_for_backward(const PreparedOp& prepared, size_t input_count, ctl_tensor* const* inputs, const void* attrs,
                      size_t output_count, ctl_tensor** out_tensors, ctl_status** status);

// Records an allocating op call that succeeded. Does nothing when the runtime is not
// recording, the op is not differentiable, or no input tracks gradients.
void record_op(const PreparedOp& prepared, size_t input_count, ctl_tensor* const* inputs, size_t output_count,
               ctl_tensor* const* outputs);
// Records a view of `source` (same rules).
void record_view(ViewKind kind, ctl_tensor* source, ctl_tensor* view, std::vector<int64_t> params = {});

// The backward pass (ctl_tensor_backward without the argument checks).
ctl_status* run_backward(ctl_tensor* root, ctl_tensor* grad_output);

// The gradients of a node's inputs given the gradients of its outputs (NULL entries are
// zero). Returns one entry per input; NULL where the input gets no gradient. Throws
// StatusError (autograd_rules.cpp) on a failed op.
std::vector<ctl_tensor*> node_backward(const Node& node, const std::vector<ctl_tensor*>& output_grads);

// An op call inside a rule failed: carries the status out of the rule.
struct StatusError {
  ctl_status* status;
};

}  // namespace catalyst
