// dlpack.cpp — DLPack interchange: export a tensor as DLManagedTensor (0.x) or
// DLManagedTensorVersioned (1.x), and import either, zero-copy for host-visible memory.
// Debian 12's dlpack.h predates 1.0; dlpack_versioned.h supplies the versioned struct.
#include <dlpack/dlpack.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "c_guard.h"
#include "runtime.h"
#include "status.h"
#include "tensor.h"

#include "dlpack_versioned.h"

namespace catalyst {
namespace {

constexpr uint8_t kDLBoolCode = 6;  // kDLBool, added to DLPack after Debian 12's 0.6 header

// What an exported tensor keeps alive: a reference to the tensor and its shape arrays.
struct ExportContext {
  ctl_tensor* tensor;
  std::array<int64_t, CTL_MAX_RANK> shape;
  std::array<int64_t, CTL_MAX_RANK> strides;
};

ctl_status* to_dl_dtype(ctl_dtype dtype, DLDataType* out) {
  out->lanes = 1;
  out->bits = static_cast<uint8_t>(ctl_dtype_size(dtype) * 8);
  switch (dtype) {
    case CTL_DTYPE_F32:
    case CTL_DTYPE_F64:
    case CTL_DTYPE_F16:
      out->code = kDLFloat;
      return nullptr;
    case CTL_DTYPE_BF16:
      out->code = kDLBfloat;
      return nullptr;
    case CTL_DTYPE_I8:
    case CTL_DTYPE_I32:
    case CTL_DTYPE_I64:
      out->code = kDLInt;
      return nullptr;
    case CTL_DTYPE_U8:
      out->code = kDLUInt;
      return nullptr;
    case CTL_DTYPE_BOOL:
      out->code = kDLBoolCode;
      return nullptr;
    default:
      return make_status(CTL_STATUS_INTERNAL, "dtype %d has no DLPack form", static_cast<int>(dtype));
  }
}

ctl_status* from_dl_dtype(DLDataType dt, ctl_dtype* out) {
  if (dt.lanes != 1) {
    return make_status(CTL_STATUS_UNSUPPORTED, "DLPack dtype has %u lanes; only 1 is supported", dt.lanes);
  }
  struct Entry {
    uint8_t code, bits;
    ctl_dtype dtype;
  };
  static constexpr Entry kTable[] = {
      {kDLFloat, 32, CTL_DTYPE_F32},   {kDLFloat, 64, CTL_DTYPE_F64}, {kDLFloat, 16, CTL_DTYPE_F16},
      {kDLBfloat, 16, CTL_DTYPE_BF16}, {kDLInt, 8, CTL_DTYPE_I8},     {kDLUInt, 8, CTL_DTYPE_U8},
      {kDLInt, 32, CTL_DTYPE_I32},     {kDLInt, 64, CTL_DTYPE_I64},   {kDLBoolCode, 8, CTL_DTYPE_BOOL}};
  for (const auto& entry : kTable) {
    if (entry.code == dt.code && entry.bits == dt.bits) {
      *out = entry.dtype;
      return nullptr;
    }
  }
  return make_status(CTL_STATUS_UNSUPPORTED, "DLPack dtype (code %u, %u bits) has no Catalyst dtype", dt.code, dt.bits);
}

// Fills `dl` for `tensor` and returns the context that keeps it alive.
ctl_status* export_tensor(ctl_tensor* tensor, DLTensor* dl, ExportContext** out_context) {
  CTL_RETURN_IF_ERROR(check_tensor(tensor, "tensor"));
  ctl_device* device = tensor->device();
  if (!device->host_visible) {
    return make_status(CTL_STATUS_UNSUPPORTED,
                       "tensor is on device %s, whose memory is not host-visible; copy it to a CPU device first",
                       device->label.c_str());
  }
  void* base = nullptr;
  CTL_RETURN_IF_ERROR(device->api().buffer_host_pointer(device->handle, tensor->storage->buffer, &base));
  // The consumer reads the memory directly, so pending work must be finished.
  CTL_RETURN_IF_ERROR(synchronize(device));
  auto* context = new ExportContext{tensor, {}, {}};
  const Layout& l = tensor->layout;
  std::copy_n(l.shape.begin(), l.rank, context->shape.begin());
  std::copy_n(l.strides.begin(), l.rank, context->strides.begin());
  std::memset(dl, 0, sizeof *dl);
  dl->data = base;
  dl->device = {kDLCPU, 0};
  dl->ndim = static_cast<int32_t>(l.rank);
  if (ctl_status* status = to_dl_dtype(l.dtype, &dl->dtype)) {
    delete context;
    return status;
  }
  dl->shape = context->shape.data();
  dl->strides = context->strides.data();
  dl->byte_offset = static_cast<uint64_t>(l.offset) * ctl_dtype_size(l.dtype);
  ctl_tensor_retain(tensor);
  *out_context = context;
  return nullptr;
}

void release_export(void* manager_ctx) {
  auto* context = static_cast<ExportContext*>(manager_ctx);
  ctl_tensor_release(context->tensor);
  delete context;
}

void delete_managed(DLManagedTensor* self) {
  if (!self) return;
  release_export(self->manager_ctx);
  delete self;
}

void delete_managed_versioned(DLManagedTensorVersioned* self) {
  if (!self) return;
  release_export(self->manager_ctx);
  delete self;
}

// Wraps the memory a DLTensor describes as a tensor on `device`; `on_release` runs once
// when the storage dies.
ctl_status* import_tensor(ctl_device* device, const DLTensor& dl, void (*on_release)(void*), void* context,
                          ctl_tensor** out_tensor) {
  CTL_RETURN_IF_ERROR(check_device(device, "device"));
  CTL_CHECK_ARG(out_tensor, "argument 'out_tensor' is NULL");
  if (dl.device.device_type != kDLCPU && dl.device.device_type != kDLCUDAHost) {
    return make_status(CTL_STATUS_UNSUPPORTED,
                       "DLPack device type %d is not host memory; only kDLCPU and kDLCUDAHost can be imported",
                       static_cast<int>(dl.device.device_type));
  }
  if (!device->host_visible || !device->api().buffer_wrap_host) {
    return make_status(CTL_STATUS_UNSUPPORTED, "device %s cannot wrap host memory; import onto a CPU device",
                       device->label.c_str());
  }
  CTL_CHECK_ARG(dl.ndim >= 0 && dl.ndim <= CTL_MAX_RANK, "DLPack ndim is %d; Catalyst supports 0 to %d", dl.ndim,
                CTL_MAX_RANK);
  CTL_CHECK_ARG(dl.ndim == 0 || dl.shape, "DLPack shape is NULL with ndim %d", dl.ndim);
  Layout layout;
  CTL_RETURN_IF_ERROR(from_dl_dtype(dl.dtype, &layout.dtype));
  layout.rank = static_cast<uint32_t>(dl.ndim);
  std::copy_n(dl.shape, dl.ndim, layout.shape.begin());
  CTL_RETURN_IF_ERROR(check_shape(layout.rank, layout.shape.data(), layout.dtype, "DLPack shape"));
  if (dl.strides) {
    for (int32_t i = 0; i < dl.ndim; ++i) {
      if (dl.strides[i] < 0) {
        return make_status(CTL_STATUS_UNSUPPORTED, "DLPack strides[%d] is %lld; negative strides are not supported", i,
                           static_cast<long long>(dl.strides[i]));
      }
      layout.strides[i] = dl.strides[i];
    }
  } else {
    set_contiguous_strides(layout);
  }
  const uint64_t bytes = extent_bytes(layout);
  CTL_CHECK_ARG(dl.data || bytes == 0, "DLPack data is NULL");
  void* data = static_cast<char*>(dl.data) + dl.byte_offset;
  ctl_plugin_buffer* buffer = nullptr;
  CTL_RETURN_IF_ERROR(device->api().buffer_wrap_host(device->handle, data, bytes, &buffer));
  auto* storage = new Storage;
  storage->device = device;
  storage->buffer = buffer;
  storage->size_bytes = bytes;
  storage->on_release = on_release;
  storage->on_release_context = context;
  ctl_runtime_retain(device->runtime);
  *out_tensor = make_view(storage, layout);
  storage->release();
  return nullptr;
}

void call_deleter(void* managed) {
  auto* m = static_cast<DLManagedTensor*>(managed);
  if (m->deleter) m->deleter(m);
}

void call_deleter_versioned(void* managed) {
  auto* m = static_cast<DLManagedTensorVersioned*>(managed);
  if (m->deleter) m->deleter(m);
}

}  // namespace
}  // namespace catalyst

using namespace catalyst;

extern "C" {

CTL_EXPORT ctl_status* ctl_tensor_to_dlpack(ctl_tensor* tensor, DLManagedTensor** out_managed) {
  return guard([&]() -> ctl_status* {
    CTL_CHECK_ARG(out_managed, "argument 'out_managed' is NULL");
    auto* managed = new DLManagedTensor{};
    ExportContext* context = nullptr;
    if (ctl_status* status = export_tensor(tensor, &managed->dl_tensor, &context)) {
      delete managed;
      return status;
    }
    managed->manager_ctx = context;
    managed->deleter = &delete_managed;
    *out_managed = managed;
    return nullptr;
  });
}

CTL_EXPORT ctl_status* ctl_tensor_to_dlpack_versioned(ctl_tensor* tensor, DLManagedTensorVersioned** out_managed) {
  return guard([&]() -> ctl_status* {
    CTL_CHECK_ARG(out_managed, "argument 'out_managed' is NULL");
    auto* managed = new DLManagedTensorVersioned{};
    ExportContext* context = nullptr;
    if (ctl_status* status = export_tensor(tensor, &managed->dl_tensor, &context)) {
      delete managed;
      return status;
    }
    managed->version = {1, 0};
    managed->manager_ctx = context;
    managed->deleter = &delete_managed_versioned;
    managed->flags = 0;
    *out_managed = managed;
    return nullptr;
  });
}

CTL_EXPORT ctl_status* ctl_tensor_from_dlpack(ctl_device* device, DLManagedTensor* managed, ctl_tensor** out_tensor) {
  return guard([&]() -> ctl_status* {
    CTL_CHECK_ARG(managed, "argument 'managed' is NULL");
    return import_tensor(device, managed->dl_tensor, &call_deleter, managed, out_tensor);
  });
}

CTL_EXPORT ctl_status* ctl_tensor_from_dlpack_versioned(ctl_device* device, DLManagedTensorVersioned* managed,
                                                        ctl_tensor** out_tensor) {
  return guard([&]() -> ctl_status* {
    CTL_CHECK_ARG(managed, "argument 'managed' is NULL");
    if (managed->version.major != 1) {
      return make_status(CTL_STATUS_UNSUPPORTED, "DLPack version %u.%u; Catalyst reads major version 1",
                         managed->version.major, managed->version.minor);
    }
    if (managed->flags & DLPACK_FLAG_BITMASK_READ_ONLY) {
      return make_status(CTL_STATUS_UNSUPPORTED,
                         "the DLPack tensor is read-only; Catalyst tensors are writable, so copy it first");
    }
    return import_tensor(device, managed->dl_tensor, &call_deleter_versioned, managed, out_tensor);
  });
}

}  // extern "C"
