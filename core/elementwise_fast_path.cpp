// elementwise_fast_path.cpp — see elementwise_fast_path.h.
#include "elementwise_fast_path.h"

#include "autograd.h"
#include "dispatch.h"
#include "op_schema.h"
#include "runtime.h"
#include "tensor.h"

namespace catalyst {
namespace {

bool same_shape(const Layout& a, const Layout& b) {
  if (a.rank != b.rank) return false;
  for (uint32_t d = 0; d < a.rank; ++d) {
    if (a.shape[d] != b.shape[d]) return false;
  }
  return true;
}

// The inputs of a plain elementwise call, checked: valid handles on one device, one dtype
// the op and the device accept, one shape. Returns the device, or NULL to decline.
ctl_device* simple_inputs(const ctl_op_id& op, size_t input_count, ctl_tensor* const* inputs, size_t output_count) {
  if (input_count == 0 || input_count > 2 || output_count != 1 || !inputs) return nullptr;
  const ctl_tensor* first = inputs[0];
  if (!first || first->magic != kTensorMagic) return nullptr;
  const Layout& l = first->layout;
  if (plain_elementwise_arity(op, l.dtype) != input_count) return nullptr;
  ctl_device* device = first->device();
  if (!(device->dtype_mask & CTL_DTYPE_BIT(l.dtype))) return nullptr;
  if (input_count == 2) {
    const ctl_tensor* second = inputs[1];
    if (!second || second->magic != kTensorMagic || second->device() != device) return nullptr;
    if (second->layout.dtype != l.dtype || !same_shape(second->layout, l)) return nullptr;
  }
  return device;
}

// Runs the call on the tensors' own views (inputs are never broadcast here).
ctl_status* execute(const ctl_op_id& op, ctl_device* device, size_t input_count, ctl_tensor* const* inputs,
                    const ctl_tensor* output) {
  const ctl_tensor_view* input_views[2] = {};
  for (size_t i = 0; i < input_count; ++i) input_views[i] = &inputs[i]->view;
  const ctl_tensor_view* output_view = &output->view;
  ctl_op_call call{};
  call.struct_size = sizeof call;
  call.op = op;
  call.input_count = static_cast<uint32_t>(input_count);
  call.inputs = input_views;
  call.output_count = 1;
  call.outputs = &output_view;
  call.attrs = nullptr;
  const ctl_tensor* const* tensor_inputs = inputs;
  return execute_call(device, call, CallTensors{tensor_inputs, input_count, &output, 1});
}

}  // namespace

bool try_elementwise_into(const ctl_op_id& op, size_t input_count, ctl_tensor* const* inputs, size_t output_count,
                          ctl_tensor* const* outputs, ctl_status** out_status) {
  ctl_device* device = simple_inputs(op, input_count, inputs, output_count);
  if (!device || !outputs) return false;
  const ctl_tensor* out = outputs[0];
  if (!out || out->magic != kTensorMagic || out->device() != device) return false;
  const Layout& l = out->layout;
  if (l.dtype != inputs[0]->layout.dtype || !same_shape(l, inputs[0]->layout)) return false;
  for (uint32_t d = 0; d < l.rank; ++d) {
    if (l.strides[d] == 0 && l.shape[d] > 1) return false;  // a broadcast view: the general path says why not
  }
  for (size_t i = 0; i < input_count; ++i) {
    if (overlaps(out, inputs[i])) return false;
  }
  *out_status = execute(op, device, input_count, inputs, out);
  return true;
}

bool try_elementwise_allocating(const ctl_op_id& op, size_t input_count, ctl_tensor* const* inputs, size_t output_count,
                                ctl_tensor** out_tensors, ctl_status** out_status) {
  if (!out_tensors) return false;
  ctl_device* device = simple_inputs(op, input_count, inputs, output_count);
  if (!device) return false;
  // An input that takes part in gradients, while the runtime records, needs the op
  // recorded: the general path does that. (Backward runs with recording off.)
  if (device->runtime->grad_enabled.load(std::memory_order_relaxed)) {
    for (size_t i = 0; i < input_count; ++i) {
      if (tracks_grad(inputs[i])) return false;
    }
  }
  const Layout& l = inputs[0]->layout;
  ctl_tensor* out = nullptr;
  if (ctl_status* status = allocate_tensor(device, l.dtype, l.rank, l.shape.data(), &out)) {
    *out_status = status;
    return true;
  }
  if (ctl_status* status = execute(op, device, input_count, inputs, out)) {
    ctl_tensor_release(out);
    *out_status = status;
    return true;
  }
  out_tensors[0] = out;
  *out_status = nullptr;
  return true;
}

}  // namespace catalyst
