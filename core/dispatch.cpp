// dispatch.cpp — ctl_op_run and ctl_op_run_into: prepare the call (op_schema.cpp),
// allocate or check the outputs, and submit it to the device's plugin.
#include "dispatch.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "autograd.h"
#include "c_guard.h"
#include "elementwise_fast_path.h"
#include "op_schema.h"
#include "placement/lazy_move.h"
#include "placement/placed_dispatch.h"
#include "status.h"
#include "tensor.h"

namespace catalyst {
namespace {

// Byte range [begin, end) of a tensor inside its storage.
std::pair<uint64_t, uint64_t> byte_range(const ctl_tensor* tensor) {
  const Layout& l = tensor->layout;
  const uint64_t begin = static_cast<uint64_t>(l.offset) * ctl_dtype_size(l.dtype);
  return {begin, std::max(begin, extent_bytes(l))};
}

}  // namespace

bool overlaps(const ctl_tensor* a, const ctl_tensor* b) {
  if (a->storage != b->storage) return false;
  const auto [a0, a1] = byte_range(a);
  const auto [b0, b1] = byte_range(b);
  return a0 < b1 && b0 < a1;
}

namespace {

bool any_pending(const CallTensors& tensors) {
  for (size_t i = 0; i < tensors.input_count; ++i) {
    if (tensors.inputs[i] && tensors.inputs[i]->storage->pending.load(std::memory_order_acquire)) return true;
  }
  for (size_t i = 0; i < tensors.output_count; ++i) {
    if (tensors.outputs[i] && tensors.outputs[i]->storage->pending.load(std::memory_order_acquire)) return true;
  }
  return false;
}

}  // namespace

ctl_status* execute_call(ctl_device* device, const ctl_op_call& call, const CallTensors& tensors) {
  // A fallback's result still on the device that computed it comes in before this device
  // reads it or writes part of it (placement/lazy_move.h) — unless the device refuses the
  // op, which then falls back too and reads those bytes where they are.
  if (any_pending(tensors)) [[unlikely]] {
    if (device->api().op_supports) {
      if (ctl_status* refusal = device->api().op_supports(device->handle, &call)) {
        if (ctl_status_get_code(refusal) == CTL_STATUS_UNSUPPORTED) {
          return annotate(refusal, std::string(op_name(call.op)) + " on " + device->label);
        }
        ctl_status_free(refusal);  // any other answer: op_execute gives its own
      }
    }
    for (size_t i = 0; i < tensors.input_count; ++i) CTL_RETURN_IF_ERROR(fetch_if_pending(tensors.inputs[i]));
    for (size_t i = 0; i < tensors.output_count; ++i) CTL_RETURN_IF_ERROR(fetch_if_pending(tensors.outputs[i]));
  }
  if (GraphCapture* capture = active_capture(device)) [[unlikely]] {
    return capture_op(capture, device, call, tensors);
  }
  // No op_supports round trip on the way: op_execute checks the call itself and answers
  // UNSUPPORTED for what it cannot run, so asking first would validate every op twice.
  ctl_status* status;
  {
    std::lock_guard lock(device->stream_mutex);
    const auto begin = std::chrono::steady_clock::now();
    status = device->api().op_execute(device->stream, &call);
    count_busy(device, begin);
  }
  device->usage.ops.fetch_add(1, std::memory_order_relaxed);
  return status ? annotate(status, std::string(op_name(call.op)) + " on " + device->label) : nullptr;
}

namespace {

// Checks a caller's output tensors against what the op produces.
ctl_status* check_outputs(const PreparedOp& prepared, size_t output_count, ctl_tensor* const* outputs) {
  const char* name = op_name(prepared.op);
  CTL_CHECK_ARG(outputs, "%s: argument 'outputs' is NULL", name);
  for (size_t i = 0; i < output_count; ++i) {
    const OutputSpec& spec = prepared.outputs[i];
    if (!spec.present) continue;  // an optional output the caller did not ask for
    if (ctl_status* status = check_tensor_at(outputs[i], "outputs", i)) return annotate(status, name);
    const Layout& l = outputs[i]->layout;
    CTL_CHECK_ARG(outputs[i]->device() == prepared.device, "%s: outputs[%zu] is on device %s, not %s", name, i,
                  outputs[i]->device()->label.c_str(), prepared.device->label.c_str());
    CTL_CHECK_ARG(l.dtype == spec.dtype, "%s: outputs[%zu] has dtype %s but the op produces %s", name, i,
                  ctl_dtype_name(l.dtype), ctl_dtype_name(spec.dtype));
    const bool same_shape =
        l.rank == spec.rank && std::equal(spec.shape.begin(), spec.shape.begin() + spec.rank, l.shape.begin());
    if (!same_shape) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: outputs[%zu] has shape %s but the op produces %s", name, i,
                         shape_text(l.shape.data(), l.rank).c_str(), shape_text(spec.shape.data(), spec.rank).c_str());
    }
    for (uint32_t d = 0; d < l.rank; ++d) {
      CTL_CHECK_ARG(l.strides[d] != 0 || l.shape[d] <= 1,
                    "%s: outputs[%zu] is a broadcast view (stride 0 on axis %u); outputs need distinct elements", name,
                    i, d);
    }
    for (size_t k = 0; k < prepared.inputs.size(); ++k) {
      if (prepared.inputs[k] && overlaps(outputs[i], prepared.inputs[k])) {
        return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: outputs[%zu] overlaps inputs[%zu] in memory", name, i, k);
      }
    }
    for (size_t k = 0; k < i; ++k) {
      if (outputs[k] && overlaps(outputs[i], outputs[k])) {
        return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: outputs[%zu] overlaps outputs[%zu]", name, i, k);
      }
    }
  }
  return nullptr;
}

// The plugin call for a prepared op and its outputs, on the caller's stack (no heap for
// a few inputs and outputs).
struct PluginCall {
  SmallVector<const ctl_tensor_view*, kInlineInputs> input_pointers;
  SmallVector<ctl_tensor_view, kInlineOutputs> output_views;
  SmallVector<const ctl_tensor_view*, kInlineOutputs> output_pointers;
  ctl_op_call call{};
};

ctl_status* build_call(const PreparedOp& prepared, size_t output_count, ctl_tensor* const* outputs, PluginCall* out) {
  ctl_device* device = prepared.device;
  out->input_pointers.assign(prepared.input_views.size(), nullptr);
  for (size_t i = 0; i < out->input_pointers.size(); ++i) {
    out->input_pointers[i] = prepared.input_present[i] ? &prepared.input_views[i] : nullptr;
  }
  out->output_views.assign(output_count, ctl_tensor_view{});
  out->output_pointers.assign(output_count, nullptr);
  for (size_t i = 0; i < output_count; ++i) {
    if (!outputs[i]) continue;
    if (!(device->dtype_mask & CTL_DTYPE_BIT(outputs[i]->layout.dtype))) {
      return make_status(CTL_STATUS_UNSUPPORTED, "%s: device %s does not support dtype %s (outputs[%zu])",
                         op_name(prepared.op), device->label.c_str(), ctl_dtype_name(outputs[i]->layout.dtype), i);
    }
    out->output_views[i] = output_view(prepared, outputs[i]);
    out->output_pointers[i] = &out->output_views[i];
  }
  ctl_op_call& call = out->call;
  call.struct_size = sizeof call;
  call.op = prepared.op;
  call.input_count = static_cast<uint32_t>(out->input_pointers.size());
  call.inputs = out->input_pointers.data();
  call.output_count = static_cast<uint32_t>(output_count);
  call.outputs = out->output_pointers.data();
  call.attrs = prepared.has_attrs ? static_cast<const void*>(&prepared.attrs) : nullptr;
  return nullptr;
}

// Builds the plugin call and runs it on the device's default stream.
ctl_status* submit(const PreparedOp& prepared, size_t output_count, ctl_tensor* const* outputs) {
  PluginCall plugin_call;
  CTL_RETURN_IF_ERROR(build_call(prepared, output_count, outputs, &plugin_call));
  const CallTensors tensors{prepared.inputs.data(), prepared.inputs.size(), outputs, output_count};
  return execute_call(prepared.device, plugin_call.call, tensors);
}

}  // namespace

namespace {

// run_op as the caller asked it: on the inputs' device, or an error.
ctl_status* run_op_as_asked(ctl_op_id op, size_t input_count, ctl_tensor* const* inputs, const void* attrs,
                            size_t output_count, ctl_tensor** out_tensors) {
  ctl_status* fast_status = nullptr;
  if (try_elementwise_allocating(op, input_count, inputs, output_count, out_tensors, &fast_status)) return fast_status;
  CTL_CHECK_ARG(out_tensors || output_count == 0, "argument 'out_tensors' is NULL");
  PreparedOp prepared;
  CTL_RETURN_IF_ERROR(prepare_op(op, input_count, inputs, attrs, output_count, nullptr, true, &prepared));
  // Recorded calls that keep more for the backward pass (after prepare_op: they look at
  // the inputs' autograd state only once the inputs are known to be tensors).
  ctl_status* recorded_status = nullptr;
  if (run_for_backward(prepared, input_count, inputs, attrs, output_count, out_tensors, &recorded_status)) {
    return recorded_status;
  }
  SmallVector<ctl_tensor*, kInlineOutputs> outputs;
  outputs.assign(output_count, nullptr);
  auto release_all = [&] {
    for (ctl_tensor* t : outputs) ctl_tensor_release(t);
  };
  for (size_t i = 0; i < output_count; ++i) {
    const OutputSpec& spec = prepared.outputs[i];
    if (ctl_status* status = allocate_tensor(prepared.device, spec.dtype, spec.rank, spec.shape.data(), &outputs[i])) {
      release_all();
      return status;
    }
  }
  if (ctl_status* status = submit(prepared, output_count, outputs.data())) {
    release_all();
    return status;
  }
  try {
    record_op(prepared, input_count, inputs, output_count, outputs.data());
  } catch (const std::bad_alloc&) {
    release_all();
    return make_status(CTL_STATUS_OUT_OF_MEMORY, "%s: out of memory recording the op for autograd", op_name(op));
  }
  std::copy(outputs.begin(), outputs.end(), out_tensors);
  return nullptr;
}

ctl_status* run_op_into_as_asked(ctl_op_id op, size_t input_count, ctl_tensor* const* inputs, const void* attrs,
                                 size_t output_count, ctl_tensor* const* outputs) {
  ctl_status* fast_status = nullptr;
  if (try_elementwise_into(op, input_count, inputs, output_count, outputs, &fast_status)) return fast_status;
  PreparedOp prepared;
  CTL_RETURN_IF_ERROR(prepare_op(op, input_count, inputs, attrs, output_count, outputs, false, &prepared));
  CTL_RETURN_IF_ERROR(check_outputs(prepared, output_count, outputs));
  return submit(prepared, output_count, outputs);
}

}  // namespace

// A call that failed as asked goes to placement (placement/placed_dispatch.h), which either
// resolves it under the runtime's policy or adds a hint to the error.
ctl_status* run_op(ctl_op_id op, size_t input_count, ctl_tensor* const* inputs, const void* attrs, size_t output_count,
                   ctl_tensor** out_tensors) {
  ctl_status* status = run_op_as_asked(op, input_count, inputs, attrs, output_count, out_tensors);
  if (status) [[unlikely]] {
    run_op_placed(op, input_count, inputs, attrs, output_count, out_tensors, &status);
  }
  return status;
}

ctl_status* run_op_into(ctl_op_id op, size_t input_count, ctl_tensor* const* inputs, const void* attrs,
                        size_t output_count, ctl_tensor* const* outputs) {
  ctl_status* status = run_op_into_as_asked(op, input_count, inputs, attrs, output_count, outputs);
  if (status) [[unlikely]] {
    run_op_into_placed(op, input_count, inputs, attrs, output_count, outputs, &status);
  }
  return status;
}

ctl_status* query_op_support(ctl_op_id op, size_t input_count, ctl_tensor* const* inputs, const void* attrs,
                             size_t output_count, ctl_tensor* const* outputs, bool* out_asked) {
  if (out_asked) *out_asked = false;
  PreparedOp prepared;
  CTL_RETURN_IF_ERROR(prepare_op(op, input_count, inputs, attrs, output_count, outputs, false, &prepared));
  CTL_RETURN_IF_ERROR(check_outputs(prepared, output_count, outputs));
  PluginCall plugin_call;
  CTL_RETURN_IF_ERROR(build_call(prepared, output_count, outputs, &plugin_call));
  ctl_device* device = prepared.device;
  if (!device->api().op_supports) return nullptr;
  if (out_asked) *out_asked = true;
  ctl_status* status = device->api().op_supports(device->handle, &plugin_call.call);
  return status ? annotate(status, std::string(op_name(op)) + " on " + device->label) : nullptr;
}

}  // namespace catalyst

using namespace catalyst;

extern "C" {

CTL_EXPORT const char* ctl_op_name(ctl_op_id op) {
  return op_name(op);
}

// Every entry point below checks its op id before anything reads it as an enum.

CTL_EXPORT ctl_status* ctl_op_run(ctl_op_id op, size_t input_count, ctl_tensor* const* inputs, const void* attrs,
                                  size_t output_count, ctl_tensor** out_tensors) {
  CTL_RETURN_IF_ERROR(check_op_id(op));
  return guard([&] { return run_op(op, input_count, inputs, attrs, output_count, out_tensors); });
}

CTL_EXPORT ctl_status* ctl_op_run_into(ctl_op_id op, size_t input_count, ctl_tensor* const* inputs, const void* attrs,
                                       size_t output_count, ctl_tensor* const* outputs) {
  CTL_RETURN_IF_ERROR(check_op_id(op));
  return guard([&] { return run_op_into(op, input_count, inputs, attrs, output_count, outputs); });
}

CTL_EXPORT ctl_status* ctl_op_unary(ctl_op_id op, ctl_tensor* x, ctl_tensor** out_tensor) {
  CTL_RETURN_IF_ERROR(check_op_id(op));
  return guard([&] { return run_op(op, 1, &x, nullptr, 1, out_tensor); });
}

CTL_EXPORT ctl_status* ctl_op_binary(ctl_op_id op, ctl_tensor* a, ctl_tensor* b, ctl_tensor** out_tensor) {
  CTL_RETURN_IF_ERROR(check_op_id(op));
  return guard([&] {
    ctl_tensor* inputs[2] = {a, b};
    return run_op(op, 2, inputs, nullptr, 1, out_tensor);
  });
}

CTL_EXPORT ctl_status* ctl_op_matmul(ctl_tensor* a, ctl_tensor* b, ctl_tensor** out_tensor) {
  return ctl_op_binary(CTL_OP_MATMUL, a, b, out_tensor);
}

CTL_EXPORT ctl_status* ctl_op_softmax(ctl_tensor* x, int64_t axis, ctl_tensor** out_tensor) {
  return guard([&]() -> ctl_status* {
    CTL_CHECK_ARG(axis >= INT32_MIN && axis <= INT32_MAX, "argument 'axis' is %lld, out of range",
                  static_cast<long long>(axis));
    ctl_softmax_attrs attrs{CTL_AXIS_ATTRS_STRUCT_SIZE, static_cast<int32_t>(axis)};
    return run_op(CTL_OP_SOFTMAX, 1, &x, &attrs, 1, out_tensor);
  });
}

CTL_EXPORT ctl_status* ctl_op_reduce(ctl_op_id op, ctl_tensor* x, size_t axis_count, const int64_t* axes, bool keepdims,
                                     ctl_tensor** out_tensor) {
  CTL_RETURN_IF_ERROR(check_op_id(op));
  return guard([&]() -> ctl_status* {
    CTL_CHECK_ARG(axis_count <= CTL_MAX_RANK, "argument 'axis_count' is %zu; at most %d", axis_count, CTL_MAX_RANK);
    CTL_CHECK_ARG(axis_count == 0 || axes, "argument 'axes' is NULL but axis_count is %zu", axis_count);
    CTL_CHECK_ARG(op >= CTL_OP_SUM && op <= CTL_OP_LOGSUMEXP, "argument 'op' is %s, not a reduction", op_name(op));
    ctl_reduce_attrs attrs{};
    attrs.struct_size = CTL_REDUCE_ATTRS_STRUCT_SIZE;
    attrs.axis_count = static_cast<uint32_t>(axis_count);
    for (size_t i = 0; i < axis_count; ++i) {
      CTL_CHECK_ARG(axes[i] >= -CTL_MAX_RANK && axes[i] < CTL_MAX_RANK, "axes[%zu] is %lld, out of range", i,
                    static_cast<long long>(axes[i]));
      attrs.axes[i] = static_cast<int32_t>(axes[i]);
    }
    attrs.keepdims = keepdims;
    return run_op(op, 1, &x, &attrs, 1, out_tensor);
  });
}

CTL_EXPORT ctl_status* ctl_op_cast(ctl_tensor* x, ctl_dtype dtype, ctl_tensor** out_tensor) {
  CTL_RETURN_IF_ERROR(check_dtype(dtype, "dtype"));
  return guard([&] {
    ctl_cast_attrs attrs{CTL_CAST_ATTRS_STRUCT_SIZE, dtype};
    return run_op(CTL_OP_CAST, 1, &x, &attrs, 1, out_tensor);
  });
}

}  // extern "C"
