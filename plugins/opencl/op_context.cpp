// op_context.cpp — what the call reader (sdk/op_call.hpp) leaves to this plugin: scalar
// kernel arguments, OpenCL errors, and the device-memory helpers (temporaries, strided
// copies) every op family uses.
#include "op_context.h"

#include <string>

#include "catalyst/sdk/op_dtypes.hpp"
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

ctl_status* OpContext::cl_failed(cl_int error, const char* cl_call) const {
  return cl_fail(host, error, cl_call, name);
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
