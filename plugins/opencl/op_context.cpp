// op_context.cpp — checking op calls against their buffers, and the shared device-memory
// helpers (temporaries, strided copies) every op family uses.
#include "op_context.h"

#include <cstdarg>
#include <cstdio>
#include <string>

#include "catalyst/sdk/attrs.hpp"
#include "catalyst/sdk/op_dtypes.hpp"
#include "catalyst/sdk/view_check.hpp"
#include "cl_errors.h"

namespace catalyst::opencl {

const char* dtype_tag(ctl_dtype dtype) {
  return sdk::dtype_name(dtype);  // the tags of kernels/common.cl are the dtype names
}

const char* dtype_name(ctl_dtype dtype) {
  return dtype_tag(dtype);
}

Scalar compute_scalar(ctl_dtype dtype, double value) {
  Scalar s;
  switch (dtype) {
    case CTL_DTYPE_F64: {
      const cl_double v = value;
      std::memcpy(s.bytes, &v, sizeof v);
      s.size = sizeof v;
      break;
    }
    case CTL_DTYPE_I64: {
      const cl_long v = static_cast<cl_long>(value);
      std::memcpy(s.bytes, &v, sizeof v);
      s.size = sizeof v;
      break;
    }
    case CTL_DTYPE_I8:
    case CTL_DTYPE_U8:
    case CTL_DTYPE_I32:
    case CTL_DTYPE_BOOL: {
      const cl_int v = static_cast<cl_int>(value);
      std::memcpy(s.bytes, &v, sizeof v);
      s.size = sizeof v;
      break;
    }
    default: {
      const cl_float v = static_cast<cl_float>(value);
      std::memcpy(s.bytes, &v, sizeof v);
      s.size = sizeof v;
      break;
    }
  }
  return s;
}

ctl_status* OpContext::fail(ctl_status_code code, const char* format, ...) const {
  char text[448];
  va_list args;
  va_start(args, format);
  std::vsnprintf(text, sizeof text, format, args);
  va_end(args);
  char message[512];
  std::snprintf(message, sizeof message, "%s%s: %s", kLogPrefix, name, text);
  return host->status_create(host->context, code, message);
}

ctl_status* OpContext::cl_failed(cl_int error, const char* cl_call) const {
  return cl_fail(host, error, cl_call, name);
}

ctl_status* OpContext::expect_counts(uint32_t inputs_min, uint32_t inputs_max, uint32_t outputs_min,
                                     uint32_t outputs_max) const {
  if (call->input_count < inputs_min || call->input_count > inputs_max) {
    return fail(CTL_STATUS_INVALID_ARGUMENT, "input_count is %u, expected %u to %u", call->input_count, inputs_min,
                inputs_max);
  }
  if (call->output_count < outputs_min || call->output_count > outputs_max) {
    return fail(CTL_STATUS_INVALID_ARGUMENT, "output_count is %u, expected %u to %u", call->output_count, outputs_min,
                outputs_max);
  }
  if (call->input_count > 0 && !call->inputs) return fail(CTL_STATUS_INVALID_ARGUMENT, "inputs is NULL");
  if (call->output_count > 0 && !call->outputs) return fail(CTL_STATUS_INVALID_ARGUMENT, "outputs is NULL");
  return nullptr;
}

namespace {

ctl_status* read_view(const OpContext& ctx, const ctl_tensor_view* const* views, uint32_t count, uint32_t index,
                      const char* kind, const char* what, DeviceView* out, bool optional, bool* present) {
  if (present) *present = false;
  const ctl_tensor_view* v = (views && index < count) ? views[index] : nullptr;
  if (!v && optional) return nullptr;
  sdk::ViewFacts facts;
  CTL_SDK_RETURN_IF_ERROR(ctx.check(sdk::check_view(
      v, kind, index, what, [](const ctl_plugin_buffer* buffer) { return buffer->size; }, &facts)));
  // Kernels index in elements: a view must start on an element boundary.
  if (facts.numel > 0 && v->byte_offset % facts.element_size != 0) {
    return ctx.fail(CTL_STATUS_UNSUPPORTED, "%s %u (%s): byte_offset %llu is not a multiple of the %zu-byte element",
                    kind, index, what, static_cast<unsigned long long>(v->byte_offset), facts.element_size);
  }
  out->mem = v->buffer->mem;
  out->offset = facts.numel > 0 ? static_cast<int64_t>(v->byte_offset / facts.element_size) : 0;
  out->dtype = v->dtype;
  out->element_size = facts.element_size;
  out->rank = v->rank;
  for (uint32_t i = 0; i < v->rank; ++i) {
    out->shape[i] = v->shape[i];
    out->strides[i] = v->strides[i];
  }
  if (present) *present = true;
  return nullptr;
}

std::string shape_text(const DeviceView& v) {
  std::string s = "[";
  for (uint32_t i = 0; i < v.rank; ++i) s += (i ? ", " : "") + std::to_string(v.shape[i]);
  return s + "]";
}

}  // namespace

ctl_status* OpContext::input(uint32_t index, const char* what, DeviceView* out, bool optional, bool* present) const {
  return read_view(*this, call->inputs, call->input_count, index, "input", what, out, optional, present);
}

ctl_status* OpContext::output(uint32_t index, const char* what, DeviceView* out, bool optional, bool* present) const {
  return read_view(*this, call->outputs, call->output_count, index, "output", what, out, optional, present);
}

ctl_status* OpContext::attrs(void* out, size_t out_size, size_t min_size, const char* struct_name, bool* given) const {
  return check(sdk::read_attrs(call->attrs, out, out_size, min_size, struct_name, given));
}

ctl_status* OpContext::expect_dtype(const DeviceView& v, const char* what, ctl_dtype dtype) const {
  if (raw_enum(v.dtype) == raw_enum(dtype)) return nullptr;
  return fail(CTL_STATUS_INVALID_ARGUMENT, "%s has dtype %s, expected %s", what, dtype_name(v.dtype),
              dtype_name(dtype));
}

ctl_status* OpContext::expect_same_shape(const DeviceView& a, const char* a_name, const DeviceView& b,
                                         const char* b_name) const {
  if (a.same_shape(b)) return nullptr;
  return fail(CTL_STATUS_INVALID_ARGUMENT, "%s has shape %s but %s has shape %s", b_name, shape_text(b).c_str(), a_name,
              shape_text(a).c_str());
}

ctl_status* OpContext::expect_leading_shape(const DeviceView& v, const char* v_name, const DeviceView& x,
                                            const char* x_name) const {
  bool ok = x.rank >= 1 && v.rank + 1 == x.rank;
  for (uint32_t i = 0; ok && i < v.rank; ++i) ok = v.shape[i] == x.shape[i];
  if (ok) return nullptr;
  return fail(CTL_STATUS_INVALID_ARGUMENT, "%s has shape %s; it must be %s's shape %s without its last axis", v_name,
              shape_text(v).c_str(), x_name, shape_text(x).c_str());
}

ctl_status* OpContext::one_to_one(DeviceView* x, DeviceView* y, bool same_dtype) const {
  CTL_SDK_RETURN_IF_ERROR(expect_counts(1, 1, 1, 1));
  CTL_SDK_RETURN_IF_ERROR(input(0, "x", x));
  CTL_SDK_RETURN_IF_ERROR(output(0, "y", y));
  if (same_dtype) CTL_SDK_RETURN_IF_ERROR(expect_dtype(*y, "output 0 (y)", x->dtype));
  return expect_same_shape(*y, "output 0 (y)", *x, "input 0 (x)");
}

size_t OpContext::loop_group_size(const Kernel* kernel) const {
  size_t local = 128;  // a multiple of every vendor's SIMD width (32 NVIDIA, 64 AMD, 8-16 CPUs)
  if (local > kernel->max_work_group_size) local = kernel->max_work_group_size;
  return local ? local : 1;
}

ctl_status* OpContext::temporary(uint64_t bytes, Temporary* out) const {
  if (bytes > device->max_allocation) {
    return fail(CTL_STATUS_OUT_OF_MEMORY, "a %llu-byte temporary exceeds the device's largest allocation (%llu bytes)",
                static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(device->max_allocation));
  }
  cl_int error = CL_SUCCESS;
  cl_mem mem = clCreateBuffer(device->context, CL_MEM_READ_WRITE, bytes ? bytes : 1, nullptr, &error);
  if (error != CL_SUCCESS) return cl_failed(error, "clCreateBuffer");
  out->reset(mem);
  return nullptr;
}

ctl_status* OpContext::contiguous_like(const DeviceView& like, Temporary* storage, DeviceView* out) const {
  *out = like;
  out->offset = 0;
  int64_t stride = 1;
  for (uint32_t i = like.rank; i-- > 0;) {
    out->strides[i] = stride;
    stride *= like.shape[i];
  }
  CTL_SDK_RETURN_IF_ERROR(temporary(static_cast<uint64_t>(like.numel()) * like.element_size, storage));
  out->mem = storage->mem();
  return nullptr;
}

ctl_status* OpContext::make_contiguous(const DeviceView& v, Temporary* storage, DeviceView* out) const {
  if (v.contiguous()) {
    *out = v;
    return nullptr;
  }
  CTL_SDK_RETURN_IF_ERROR(contiguous_like(v, storage, out));
  return copy_view(v, *out);
}

ctl_status* OpContext::copy_view(const DeviceView& src, const DeviceView& dst) const {
  const DeviceView* views[2] = {&src, &dst};
  const Iteration it = make_iteration(views, 2);
  if (it.numel == 0) return nullptr;
  Kernel* k = nullptr;
  CTL_SDK_RETURN_IF_ERROR(kernel("strided", std::string("-DTA=") + dtype_tag(src.dtype), "copy_strided", &k));
  const cl_long n = it.numel;
  return launch(k, n, src, it.strides[0], dst, it.strides[1], it.rank, it.shape, n);
}

}  // namespace catalyst::opencl
