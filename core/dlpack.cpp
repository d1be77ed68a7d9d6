// dlpack.cpp — DLPack interchange: export a tensor as DLManagedTensor (0.x) or
// DLManagedTensorVersioned (1.x), and import either, zero-copy for host-visible memory.
// Debian 12's dlpack.h predates 1.0; dlpack_versioned.h supplies the versioned struct.
#include <dlpack/dlpack.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#include "c_guard.h"
#include "enum_value.h"
#include "placement/lazy_move.h"
#include "runtime.h"
#include "status.h"
#include "tensor.h"

#include "dlpack_versioned.h"

namespace catalyst {
namespace {

constexpr uint8_t kDLBoolCode = 6;  // kDLBool, added to DLPack after Debian 12's 0.6 header

// The DLManagedTensorVersioned flags of DLPack 1.0 and 1.1. A bit outside them comes from a
// newer DLPack whose meaning Catalyst cannot honour, so import refuses it. IS_COPIED only
// informs; SUBBYTE_TYPE_PADDED matters only for dtypes under 8 bits, which import refuses.
constexpr uint64_t kKnownDLPackFlags =
    DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED | DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED;

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
  CTL_RETURN_IF_ERROR(fetch_if_pending(tensor));  // the consumer reads the bytes here
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

// The bytes a strided view spans from its first element to its last, inclusive; an error
// naming the strides when that does not fit the int64 element offsets Catalyst keeps.
ctl_status* checked_extent_bytes(const Layout& layout, uint64_t* out_bytes) {
  *out_bytes = 0;
  if (layout.numel() == 0) return nullptr;
  const uint64_t size = ctl_dtype_size(layout.dtype);
  const uint64_t limit = static_cast<uint64_t>(INT64_MAX) / size;  // elements
  uint64_t last = 0;
  for (uint32_t i = 0; i < layout.rank; ++i) {
    uint64_t span = 0;
    if (__builtin_mul_overflow(static_cast<uint64_t>(layout.shape[i] - 1), static_cast<uint64_t>(layout.strides[i]),
                               &span) ||
        __builtin_add_overflow(last, span, &last) || last >= limit) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT,
                         "DLPack strides[%u] is %lld with shape[%u] %lld: the view would span more than 2^63 bytes", i,
                         static_cast<long long>(layout.strides[i]), i, static_cast<long long>(layout.shape[i]));
    }
  }
  *out_bytes = (last + 1) * size;
  return nullptr;
}

// Checks where the view's memory lies: data + byte_offset must neither wrap around the
// address space nor be misaligned for the dtype, and neither may the view's last byte.
ctl_status* checked_address(const DLTensor& dl, const Layout& layout, uint64_t bytes, uintptr_t* out_address) {
  CTL_CHECK_ARG(dl.data || bytes == 0, "DLPack data is NULL for a tensor of %llu bytes",
                static_cast<unsigned long long>(bytes));
  const auto data = reinterpret_cast<uintptr_t>(dl.data);
  uintptr_t address = 0;
  if (__builtin_add_overflow(data, dl.byte_offset, &address)) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "DLPack byte_offset is %llu: data %p plus it wraps around memory",
                       static_cast<unsigned long long>(dl.byte_offset), dl.data);
  }
  uintptr_t end = 0;
  if (__builtin_add_overflow(address, bytes, &end)) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT,
                       "DLPack byte_offset is %llu: the %llu bytes it starts at data %p plus it wrap around memory",
                       static_cast<unsigned long long>(dl.byte_offset), static_cast<unsigned long long>(bytes),
                       dl.data);
  }
  const size_t size = ctl_dtype_size(layout.dtype);
  if (address % size != 0) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT,
                       "DLPack byte_offset is %llu: data %p plus it is not aligned to the %zu bytes of a %s",
                       static_cast<unsigned long long>(dl.byte_offset), dl.data, size, ctl_dtype_name(layout.dtype));
  }
  *out_address = address;
  return nullptr;
}

// Wraps the memory a DLTensor describes as a tensor on `device`; `on_release` runs once
// when the storage dies. Every field is checked before anything is created, so a failure
// leaves nothing behind (and the caller keeps the managed tensor, as catalyst.h says).
ctl_status* import_tensor(ctl_device* device, const DLTensor& dl, void (*on_release)(void*), void* context,
                          ctl_tensor** out_tensor) {
  CTL_RETURN_IF_ERROR(check_device(device, "device"));
  CTL_CHECK_ARG(out_tensor, "argument 'out_tensor' is NULL");
  // A C producer may store any int in the enum field (enum_value.h); found by the fuzzer.
  const int device_type = enum_value(dl.device.device_type);
  if (device_type != kDLCPU && device_type != kDLCUDAHost) {
    return make_status(CTL_STATUS_UNSUPPORTED,
                       "DLPack device type %d is not host memory; only kDLCPU and kDLCUDAHost can be imported",
                       device_type);
  }
  // DLPack gives host memory (plain and pinned) the device id 0; anything else is a
  // producer's mistake, not another host.
  CTL_CHECK_ARG(dl.device.device_id == 0, "DLPack device.device_id is %d; host memory (device type %d) has id 0",
                static_cast<int>(dl.device.device_id), device_type);
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
  // An empty view's strides address nothing; the producer's (possibly huge) ones are
  // replaced by contiguous ones so that no plugin multiplies them.
  if (dl.strides && layout.numel() != 0) {
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
  uint64_t bytes = 0;
  CTL_RETURN_IF_ERROR(checked_extent_bytes(layout, &bytes));
  uintptr_t address = 0;
  CTL_RETURN_IF_ERROR(checked_address(dl, layout, bytes, &address));
  ctl_plugin_buffer* buffer = nullptr;
  CTL_RETURN_IF_ERROR(device->api().buffer_wrap_host(device->handle, reinterpret_cast<void*>(address), bytes, &buffer));
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
    if (const uint64_t unknown = managed->flags & ~kKnownDLPackFlags) {
      return make_status(CTL_STATUS_UNSUPPORTED,
                         "DLPack flags is 0x%llx; Catalyst does not know the bits 0x%llx (it knows 0x%llx)",
                         static_cast<unsigned long long>(managed->flags), static_cast<unsigned long long>(unknown),
                         static_cast<unsigned long long>(kKnownDLPackFlags));
    }
    if (managed->flags & DLPACK_FLAG_BITMASK_READ_ONLY) {
      return make_status(CTL_STATUS_UNSUPPORTED,
                         "the DLPack tensor is read-only; Catalyst tensors are writable, so copy it first");
    }
    return import_tensor(device, managed->dl_tensor, &call_deleter_versioned, managed, out_tensor);
  });
}

}  // extern "C"
