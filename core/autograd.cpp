// autograd.cpp — recording op calls and views, the backward pass, and the autograd entry
// points of catalyst.h. The per-op rules are in autograd_rules.cpp.
#include "autograd.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "c_guard.h"
#include "dispatch.h"
#include "status.h"
#include "tensor.h"

namespace catalyst {
namespace {

bool is_float(ctl_dtype d) {
  return d == CTL_DTYPE_F32 || d == CTL_DTYPE_F64 || d == CTL_DTYPE_F16 || d == CTL_DTYPE_BF16;
}

AutogradMeta& meta_of(ctl_tensor* tensor) {
  if (!tensor->autograd) tensor->autograd = new AutogradMeta;
  return *tensor->autograd;
}

// A new tensor handle on the same storage and layout, outside the record.
ctl_tensor* alias(const ctl_tensor* tensor) {
  return make_view(tensor->storage, tensor->layout);
}

// Ops whose outputs carry gradients back to their float inputs.
bool differentiable(ctl_op_id op) {
  switch (op) {
    case CTL_OP_EQ:
    case CTL_OP_NE:
    case CTL_OP_LT:
    case CTL_OP_LE:
    case CTL_OP_GT:
    case CTL_OP_GE:
    case CTL_OP_ARGMAX:
    case CTL_OP_ARGMIN:
    case CTL_OP_FILL:
    case CTL_OP_ARANGE:
    case CTL_OP_RANDOM_UNIFORM:
    case CTL_OP_RANDOM_NORMAL:
    case CTL_OP_ADAMW_STEP:
    case CTL_OP_SGD_STEP:
    case CTL_OP_CROSS_ENTROPY_BACKWARD:
    case CTL_OP_SOFTMAX_BACKWARD:
    case CTL_OP_LOG_SOFTMAX_BACKWARD:
    case CTL_OP_LAYER_NORM_BACKWARD:
    case CTL_OP_RMS_NORM_BACKWARD:
    case CTL_OP_GELU_BACKWARD:
    case CTL_OP_GELU_TANH_BACKWARD:
    case CTL_OP_CONV2D_BACKWARD_INPUT:
    case CTL_OP_CONV2D_BACKWARD_WEIGHT:
    case CTL_OP_MAX_POOL2D_BACKWARD:
    case CTL_OP_AVG_POOL2D_BACKWARD:
      return false;  // comparisons, indices, creation; and gradients of gradients
    default:
      return true;
  }
}

bool recording(const ctl_tensor* any_input) {
  return any_input && any_input->device()->runtime->grad_enabled.load(std::memory_order_relaxed);
}

void attach(const std::shared_ptr<Node>& node, size_t output_count, ctl_tensor* const* outputs) {
  for (size_t i = 0; i < output_count; ++i) {
    if (!outputs[i]) {
      node->outputs.push_back(nullptr);
      continue;
    }
    node->outputs.push_back(alias(outputs[i]));
    if (!is_float(outputs[i]->layout.dtype)) continue;  // mean/rstd of f16 norms are f32: still float
    AutogradMeta& m = meta_of(outputs[i]);
    m.grad_fn = node;
    m.output_index = static_cast<uint32_t>(i);
  }
}

// Adds `grad` into *slot (taking ownership of grad); *slot may be NULL.
ctl_status* accumulate(ctl_tensor** slot, ctl_tensor* grad) {
  if (!*slot) {
    *slot = grad;
    return nullptr;
  }
  ctl_tensor* inputs[2] = {*slot, grad};
  ctl_tensor* sum = nullptr;
  ctl_status* status = run_op(CTL_OP_ADD, 2, inputs, nullptr, 1, &sum);
  ctl_tensor_release(grad);
  if (status) return status;
  ctl_tensor_release(*slot);
  *slot = sum;
  return nullptr;
}

}  // namespace

Node::~Node() {
  for (ctl_tensor* t : inputs) ctl_tensor_release(t);
  for (ctl_tensor* t : outputs) ctl_tensor_release(t);
}

AutogradMeta::~AutogradMeta() {
  ctl_tensor_release(grad);
}

bool tracks_grad(const ctl_tensor* tensor) {
  return tensor && tensor->autograd && (tensor->autograd->requires_grad || tensor->autograd->grad_fn);
}

bool keeps_grad(const ctl_tensor* input) {
  return input && tracks_grad(input) && is_float(input->layout.dtype);
}

bool will_record(ctl_op_id op, size_t input_count, ctl_tensor* const* inputs) {
  if (!differentiable(op) || input_count == 0) return false;
  bool any = false;
  const ctl_tensor* first = nullptr;
  for (size_t i = 0; i < input_count; ++i) {
    if (!inputs[i]) continue;
    if (!first) first = inputs[i];
    any = any || keeps_grad(inputs[i]);
  }
  return any && recording(first);
}

bool run_for_backward(const PreparedOp& prepared, size_t input_count, ctl_tensor* const* inputs, const void* attrs,
                      size_t output_count, ctl_tensor** out_tensors, ctl_status** status) {
  const ctl_op_id op = prepared.op;
  // Graph passes make the fused op after autograd has recorded the separate ops; a record
  // of it would have no rule to run at backward time, so refuse it now, not then.
  if (op == CTL_OP_FUSED_ELEMENTWISE && will_record(op, input_count, inputs)) {
    *status = make_status(CTL_STATUS_UNSUPPORTED,
                          "fused_elementwise has no gradient rule: run its separate ops while gradients are "
                          "recorded, or call it with recording off (ctl_runtime_set_grad_enabled)");
    return true;
  }
  const bool norm = (op == CTL_OP_LAYER_NORM || op == CTL_OP_RMS_NORM) && output_count == 1;
  bool gelu = false;
  if (op == CTL_OP_MATMUL && prepared.has_attrs) {
    // ReLU needs no split (its mask is the output's sign); f16/bf16 stay fused, since
    // storing z would round it once more.
    const ctl_activation a = prepared.attrs.matmul.activation;
    const ctl_dtype d = prepared.outputs[0].dtype;
    gelu = (a == CTL_ACTIVATION_GELU || a == CTL_ACTIVATION_GELU_TANH) && (d == CTL_DTYPE_F32 || d == CTL_DTYPE_F64);
  }
  if (!(norm || gelu) || !will_record(op, input_count, inputs)) return false;
  if (norm) {
    ctl_tensor* all[3] = {};
    const size_t count = op == CTL_OP_LAYER_NORM ? 3 : 2;
    *status = run_op(op, input_count, inputs, attrs, count, all);
    if (*status) return true;
    for (size_t i = 1; i < count; ++i) ctl_tensor_release(all[i]);  // the record holds them
    out_tensors[0] = all[0];
    return true;
  }
  // The caller's attributes again (the prepared ones hold the transposes as strides),
  // without the activation.
  ctl_matmul_attrs linear = prepared.attrs.matmul;
  linear.struct_size = CTL_MATMUL_ATTRS_STRUCT_SIZE;
  linear.transpose_a = prepared.matmul_transposes[0];
  linear.transpose_b = prepared.matmul_transposes[1];
  linear.activation = CTL_ACTIVATION_NONE;
  ctl_tensor* z = nullptr;
  *status = run_op(CTL_OP_MATMUL, input_count, inputs, &linear, 1, &z);
  if (*status) return true;
  const ctl_op_id activation = prepared.attrs.matmul.activation == CTL_ACTIVATION_GELU ? CTL_OP_GELU : CTL_OP_GELU_TANH;
  *status = run_op(activation, 1, &z, nullptr, 1, out_tensors);
  ctl_tensor_release(z);  // the activation's node keeps it
  return true;
}

void record_op(const PreparedOp& prepared, size_t input_count, ctl_tensor* const* inputs, size_t output_count,
               ctl_tensor* const* outputs) {
  const ctl_op_id op = prepared.op;
  if (!will_record(op, input_count, inputs)) return;
  bool float_output = false;
  for (size_t i = 0; i < output_count; ++i)
    float_output = float_output || (outputs[i] && is_float(outputs[i]->layout.dtype));
  if (!float_output) return;
  auto node = std::make_shared<Node>();
  node->op = op;
  node->attrs = prepared.attrs;
  node->has_attrs = prepared.has_attrs;
  if (op == CTL_OP_MATMUL) {
    // The schema folds transposes into strides; the rule needs the caller's flags.
    node->attrs.matmul.transpose_a = prepared.matmul_transposes[0];
    node->attrs.matmul.transpose_b = prepared.matmul_transposes[1];
  }
  for (size_t i = 0; i < input_count; ++i) {
    if (inputs[i]) ctl_tensor_retain(inputs[i]);
    node->inputs.push_back(inputs[i]);
  }
  attach(node, output_count, outputs);
}

void record_view(ViewKind kind, ctl_tensor* source, ctl_tensor* view, std::vector<int64_t> params) {
  if (!tracks_grad(source) || !is_float(source->layout.dtype) || !recording(source)) return;
  auto node = std::make_shared<Node>();
  node->is_view = true;
  node->view = kind;
  node->params = std::move(params);
  ctl_tensor_retain(source);
  node->inputs.push_back(source);
  attach(node, 1, &view);
}

ctl_status* run_backward(ctl_tensor* root, ctl_tensor* grad_output) {
  ctl_runtime* runtime = root->device()->runtime;
  // No recording while gradients are computed (no gradients of gradients).
  const bool was_enabled = runtime->grad_enabled.exchange(false);
  struct Restore {
    ctl_runtime* runtime;
    bool enabled;
    ~Restore() { runtime->grad_enabled.store(enabled); }
  } restore{runtime, was_enabled};

  ctl_tensor* seed = nullptr;
  if (grad_output) {
    ctl_tensor* inputs[1] = {grad_output};
    CTL_RETURN_IF_ERROR(run_op(CTL_OP_COPY, 1, inputs, nullptr, 1, &seed));
  } else {
    const Layout& l = root->layout;
    CTL_RETURN_IF_ERROR(allocate_tensor(root->device(), l.dtype, l.rank, l.shape.data(), &seed));
    ctl_fill_attrs one{CTL_FILL_ATTRS_STRUCT_SIZE, 1.0};
    if (ctl_status* s = run_op_into(CTL_OP_FILL, 0, nullptr, &one, 1, &seed)) {
      ctl_tensor_release(seed);
      return s;
    }
  }
  AutogradMeta* root_meta = root->autograd;
  if (!root_meta->grad_fn) return accumulate(&root_meta->grad, seed);  // a leaf: d(x)/d(x)

  // Reverse topological order of the nodes reachable from the root (iterative DFS).
  std::vector<Node*> order;
  std::set<Node*> seen;
  std::vector<std::pair<Node*, size_t>> stack = {{root_meta->grad_fn.get(), 0}};
  seen.insert(root_meta->grad_fn.get());
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next < node->inputs.size()) {
      ctl_tensor* input = node->inputs[next++];
      if (input && input->autograd && input->autograd->grad_fn) {
        Node* child = input->autograd->grad_fn.get();
        if (seen.insert(child).second) stack.emplace_back(child, 0);
      }
      continue;
    }
    order.push_back(node);
    stack.pop_back();
  }
  std::reverse(order.begin(), order.end());

  std::unordered_map<Node*, std::vector<ctl_tensor*>> grads;
  auto release_all = [&] {
    for (auto& [node, list] : grads) {
      for (ctl_tensor* t : list) ctl_tensor_release(t);
    }
  };
  grads[root_meta->grad_fn.get()].assign(root_meta->grad_fn->outputs.size(), nullptr);
  grads[root_meta->grad_fn.get()][root_meta->output_index] = seed;
  for (Node* node : order) {
    std::vector<ctl_tensor*> output_grads = std::move(grads[node]);
    grads.erase(node);
    output_grads.resize(node->outputs.size(), nullptr);
    std::vector<ctl_tensor*> input_grads;
    ctl_status* failure = nullptr;
    const bool any = std::any_of(output_grads.begin(), output_grads.end(), [](ctl_tensor* t) { return t; });
    if (any) {
      try {
        input_grads = node_backward(*node, output_grads);
      } catch (const StatusError& e) {
        failure = e.status;
      } catch (const std::bad_alloc&) {
        failure = make_status(CTL_STATUS_OUT_OF_MEMORY, "out of memory during backward");
      }
    }
    for (ctl_tensor* t : output_grads) ctl_tensor_release(t);
    if (failure) {
      release_all();
      return annotate(failure, "backward");
    }
    for (size_t i = 0; i < input_grads.size(); ++i) {
      ctl_tensor* g = input_grads[i];
      ctl_tensor* input = node->inputs[i];
      if (!g) continue;
      if (!keeps_grad(input)) {
        ctl_tensor_release(g);
        continue;
      }
      AutogradMeta& m = *input->autograd;
      ctl_status* s = nullptr;
      if (m.grad_fn) {
        auto& slot = grads[m.grad_fn.get()];
        slot.resize(m.grad_fn->outputs.size(), nullptr);
        s = accumulate(&slot[m.output_index], g);
      } else {
        s = accumulate(&m.grad, g);
      }
      if (s) {
        for (size_t k = i + 1; k < input_grads.size(); ++k) ctl_tensor_release(input_grads[k]);
        release_all();
        return annotate(s, "backward");
      }
    }
  }
  release_all();
  return nullptr;
}

}  // namespace catalyst

using namespace catalyst;

extern "C" {

CTL_EXPORT ctl_status* ctl_tensor_set_requires_grad(ctl_tensor* tensor, bool requires_grad) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_tensor(tensor, "tensor"));
    if (tensor->autograd && tensor->autograd->grad_fn) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT,
                         "tensor was produced by a recorded op (it is not a leaf); its gradient is derived. Use "
                         "ctl_tensor_detach for a leaf with the same data");
    }
    CTL_CHECK_ARG(!requires_grad || is_float(tensor->layout.dtype),
                  "tensor has dtype %s; only f32, f64, f16 and bf16 tensors can require gradients",
                  ctl_dtype_name(tensor->layout.dtype));
    if (requires_grad || tensor->autograd) meta_of(tensor).requires_grad = requires_grad;
    return nullptr;
  });
}

CTL_EXPORT bool ctl_tensor_requires_grad(const ctl_tensor* tensor) {
  if (!tensor || tensor->magic != kTensorMagic) return false;
  return tracks_grad(tensor);
}

CTL_EXPORT ctl_status* ctl_tensor_grad(const ctl_tensor* tensor, ctl_tensor** out_grad) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_tensor(tensor, "tensor"));
    CTL_CHECK_ARG(out_grad, "argument 'out_grad' is NULL");
    ctl_tensor* grad = tensor->autograd ? tensor->autograd->grad : nullptr;
    if (grad) ctl_tensor_retain(grad);
    *out_grad = grad;
    return nullptr;
  });
}

CTL_EXPORT ctl_status* ctl_tensor_zero_grad(ctl_tensor* tensor) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_tensor(tensor, "tensor"));
    if (tensor->autograd) {
      ctl_tensor_release(tensor->autograd->grad);
      tensor->autograd->grad = nullptr;
    }
    return nullptr;
  });
}

CTL_EXPORT ctl_status* ctl_tensor_backward(ctl_tensor* tensor, ctl_tensor* grad_output) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_tensor(tensor, "tensor"));
    CTL_CHECK_ARG(tracks_grad(tensor),
                  "tensor does not require gradients: no leaf it depends on was marked with "
                  "ctl_tensor_set_requires_grad while the runtime was recording");
    const Layout& l = tensor->layout;
    if (grad_output) {
      CTL_RETURN_IF_ERROR(check_tensor(grad_output, "grad_output"));
      const Layout& g = grad_output->layout;
      const bool same = g.rank == l.rank && std::equal(l.shape.begin(), l.shape.begin() + l.rank, g.shape.begin());
      CTL_CHECK_ARG(same && g.dtype == l.dtype, "grad_output must have the tensor's dtype %s and shape",
                    ctl_dtype_name(l.dtype));
      CTL_CHECK_ARG(grad_output->device() == tensor->device(), "grad_output is on device %s, the tensor on %s",
                    grad_output->device()->label.c_str(), tensor->device()->label.c_str());
    } else {
      CTL_CHECK_ARG(l.numel() == 1,
                    "grad_output is NULL, which means 1, but the tensor has %lld elements; pass d(loss)/d(tensor)",
                    static_cast<long long>(l.numel()));
    }
    return run_backward(tensor, grad_output);
  });
}

CTL_EXPORT ctl_status* ctl_tensor_detach(ctl_tensor* tensor, ctl_tensor** out_tensor) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_tensor(tensor, "tensor"));
    CTL_CHECK_ARG(out_tensor, "argument 'out_tensor' is NULL");
    *out_tensor = alias(tensor);
    return nullptr;
  });
}

CTL_EXPORT ctl_status* ctl_runtime_set_grad_enabled(ctl_runtime* runtime, bool enabled, bool* out_previous) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_runtime(runtime, "runtime"));
    const bool previous = runtime->grad_enabled.exchange(enabled);
    if (out_previous) *out_previous = previous;
    return nullptr;
  });
}

}  // extern "C"
