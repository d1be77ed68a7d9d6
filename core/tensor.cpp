// tensor.cpp — storages and tensors: creation, host transfers, moving between devices,
// reference counting, and the checks that catch NULL, foreign and released handles.
#include "tensor.h"

#include "autograd.h"
#include "enum_value.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include "c_guard.h"
#include "catalyst/sdk/view.hpp"
#include "dispatch.h"
#include "placement/lazy_move.h"
#include "placement/transfer.h"
#include "status.h"

namespace catalyst {

namespace {

// Released tensor handles are kept (marked released) for a while before their memory is
// freed, so that a use after release is reported instead of reading freed memory. A ring
// of atomic slots: releasing a tensor (every temporary of every op) takes no lock.
class Quarantine {
 public:
  void add(ctl_tensor* tensor) {
    const size_t slot = next_.fetch_add(1, std::memory_order_relaxed) % kCapacity;
    delete held_[slot].exchange(tensor, std::memory_order_acq_rel);
  }
  ~Quarantine() {
    for (auto& slot : held_) delete slot.load(std::memory_order_relaxed);
  }

 private:
  static constexpr size_t kCapacity = 4096;
  std::atomic<size_t> next_{0};
  std::array<std::atomic<ctl_tensor*>, kCapacity> held_{};
};

Quarantine& quarantine() {
  static Quarantine instance;
  return instance;
}

}  // namespace

void Storage::release() {
  const int64_t before = references.fetch_sub(1, std::memory_order_acq_rel);
  if (before == 2 && drop_buffer_when_graph_alone.load(std::memory_order_acquire)) {
    drop_graph_buffer(this);  // only the capturing graph holds it now
    return;
  }
  if (before != 1) return;
  ctl_runtime* runtime = device->runtime;
  ctl_tensor_release(pending.exchange(nullptr));  // bytes nobody needed here after all
  free_buffer();
  if (on_release) on_release(on_release_context);
  delete this;
  ctl_runtime_release(runtime);
}

ctl_status* Storage::allocate_buffer() {
  if (ctl_status* status = device->api().buffer_allocate(device->handle, size_bytes, &buffer)) {
    buffer = nullptr;
    return annotate(status, "allocating " + std::to_string(size_bytes) + " bytes on " + device->label);
  }
  if (!buffer && size_bytes > 0) {
    return make_status(CTL_STATUS_INTERNAL, "plugin %s returned success and no buffer from buffer_allocate",
                       device->plugin->name.c_str());
  }
  counts_usage = true;
  device->usage.add_memory(size_bytes);
  return nullptr;
}

void Storage::free_buffer() {
  if (buffer) device->api().buffer_free(device->handle, buffer);
  buffer = nullptr;
  if (counts_usage) device->usage.remove_memory(size_bytes);
  counts_usage = false;
}

int64_t Layout::numel() const {
  int64_t n = 1;
  for (uint32_t i = 0; i < rank; ++i) n *= shape[i];
  return n;
}

bool Layout::is_contiguous() const {
  int64_t expected = 1;
  for (uint32_t i = rank; i-- > 0;) {
    if (shape[i] != 1 && strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

void set_contiguous_strides(Layout& layout) {
  int64_t stride = 1;
  for (uint32_t i = layout.rank; i-- > 0;) {
    layout.strides[i] = stride;
    stride *= std::max<int64_t>(layout.shape[i], 1);
  }
}

std::string shape_text(const int64_t* shape, uint32_t rank) {
  // Appended piece by piece: GCC 12 at -O3 reports a false -Wrestrict overlap on
  // `"," + std::to_string(...)` (GCC bug 105329).
  std::string text = "[";
  for (uint32_t d = 0; d < rank; ++d) {
    if (d) text += ',';
    text += std::to_string(shape[d]);
  }
  text += ']';
  return text;
}

uint64_t extent_bytes(const Layout& layout) {
  if (layout.numel() == 0) return 0;
  int64_t last = layout.offset;
  for (uint32_t i = 0; i < layout.rank; ++i) last += (layout.shape[i] - 1) * layout.strides[i];
  return static_cast<uint64_t>(last + 1) * ctl_dtype_size(layout.dtype);
}

ctl_status* check_dtype(const ctl_dtype& dtype, const char* argument) {
  const int raw = enum_value(dtype);
  if (raw < 0 || raw >= CTL_DTYPE_COUNT_) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "argument '%s' is %d, not a ctl_dtype", argument, raw);
  }
  return nullptr;
}

ctl_status* check_shape(size_t rank, const int64_t* shape, ctl_dtype dtype, const char* argument) {
  if (rank > CTL_MAX_RANK) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "rank of '%s' is %zu; at most %d is supported", argument, rank,
                       CTL_MAX_RANK);
  }
  CTL_CHECK_ARG(rank == 0 || shape, "argument '%s' is NULL but the rank is %zu", argument, rank);
  const int64_t limit = INT64_MAX / static_cast<int64_t>(std::max<size_t>(ctl_dtype_size(dtype), 1));
  // Zero-sized axes count as 1: an empty tensor holds nothing, but its strides are still
  // products of the other axes and must be representable (NumPy refuses such shapes too).
  int64_t span = 1;
  for (size_t i = 0; i < rank; ++i) {
    if (shape[i] < 0) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s[%zu] is %lld; dimensions cannot be negative", argument, i,
                         static_cast<long long>(shape[i]));
    }
    const int64_t extent = std::max<int64_t>(shape[i], 1);
    if (span > limit / extent) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT,
                         "%s overflows: the tensor (its zero-sized axes counted as 1) would exceed 2^63 bytes",
                         argument);
    }
    span *= extent;
  }
  return nullptr;
}

ctl_status* check_tensor(const ctl_tensor* tensor, const char* argument) {
  if (!tensor) return make_status(CTL_STATUS_INVALID_ARGUMENT, "argument '%s' is NULL", argument);
  if (tensor->magic == kReleasedMagic) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT,
                       "argument '%s' is a released tensor (used after its last ctl_tensor_release)", argument);
  }
  if (tensor->magic != kTensorMagic) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "argument '%s' is not a valid ctl_tensor", argument);
  }
  return nullptr;
}

ctl_status* check_tensor_element_failed(const ctl_tensor* tensor, const char* array, size_t index) {
  char name[64];
  std::snprintf(name, sizeof name, "%s[%zu]", array, index);
  return check_tensor(tensor, name);
}

ctl_tensor* make_view(Storage* storage, const Layout& layout) {
  auto* tensor = new ctl_tensor;
  storage->retain();
  tensor->storage = storage;
  tensor->layout = layout;
  ctl_tensor_view& view = tensor->view;
  view.struct_size = sizeof view;
  view.buffer = storage->buffer;
  view.byte_offset = static_cast<uint64_t>(layout.offset) * sdk::dtype_size(layout.dtype);
  view.dtype = layout.dtype;
  view.rank = layout.rank;
  for (uint32_t i = 0; i < layout.rank; ++i) {
    view.shape[i] = layout.shape[i];
    view.strides[i] = layout.strides[i];
  }
  return tensor;
}

ctl_status* allocate_storage(ctl_device* device, uint64_t bytes, Storage** out_storage) {
  auto* storage = new Storage;
  storage->device = device;
  storage->size_bytes = bytes;
  if (ctl_status* status = storage->allocate_buffer()) {
    delete storage;  // it holds no buffer and no runtime reference yet
    return status;
  }
  ctl_runtime_retain(device->runtime);
  *out_storage = storage;
  return nullptr;
}

ctl_status* allocate_tensor(ctl_device* device, ctl_dtype dtype, uint32_t rank, const int64_t* shape,
                            ctl_tensor** out_tensor) {
  Layout layout;
  layout.dtype = dtype;
  layout.rank = rank;
  for (uint32_t i = 0; i < rank; ++i) layout.shape[i] = shape[i];
  set_contiguous_strides(layout);
  Storage* storage = nullptr;
  CTL_RETURN_IF_ERROR(
      allocate_storage(device, static_cast<uint64_t>(layout.numel()) * ctl_dtype_size(dtype), &storage));
  if (GraphCapture* capture = active_capture(device)) [[unlikely]]
    capture_note_storage(capture, storage);
  *out_tensor = make_view(storage, layout);
  storage->release();  // the view holds the only reference
  return nullptr;
}

namespace {

// Checks the common arguments of the creation functions.
ctl_status* check_create(ctl_device* device, ctl_dtype dtype, size_t rank, const int64_t* shape,
                         ctl_tensor** out_tensor) {
  CTL_RETURN_IF_ERROR(check_device(device, "device"));
  CTL_RETURN_IF_ERROR(check_dtype(dtype, "dtype"));
  CTL_RETURN_IF_ERROR(check_shape(rank, shape, dtype, "shape"));
  CTL_CHECK_ARG(out_tensor, "argument 'out_tensor' is NULL");
  if (!(device->dtype_mask & CTL_DTYPE_BIT(dtype))) {
    return make_status(CTL_STATUS_UNSUPPORTED, "device %s does not support dtype %s", device->label.c_str(),
                       ctl_dtype_name(dtype));
  }
  return nullptr;
}

// Reads a contiguous tensor's bytes into `destination` and waits for them.
ctl_status* read_contiguous(const ctl_tensor* tensor, void* destination, uint64_t bytes) {
  ctl_device* device = tensor->device();
  if (active_capture(device)) return refused_while_capturing(("reading tensor data from " + device->label).c_str());
  CTL_RETURN_IF_ERROR(fetch_if_pending(tensor));
  const uint64_t offset = static_cast<uint64_t>(tensor->layout.offset) * ctl_dtype_size(tensor->layout.dtype);
  std::lock_guard lock(device->stream_mutex);
  const auto begin = std::chrono::steady_clock::now();  // the host waits for the device here
  if (bytes > 0) {
    CTL_RETURN_IF_ERROR(device->api().buffer_read(device->stream, tensor->storage->buffer, offset, destination, bytes));
  }
  ctl_status* status = device->api().stream_synchronize(device->stream);
  count_busy(device, begin);
  return status;
}

// Zeroes a new contiguous tensor with the plugin's buffer_fill, or, where the plugin has
// none, by writing zeros from the host (the default catalyst_plugin.h promises).
ctl_status* fill_zero(ctl_tensor* tensor) {
  ctl_device* device = tensor->device();
  const uint64_t bytes = tensor->storage->size_bytes;
  if (bytes == 0) return nullptr;
  const uint8_t zero = 0;
  if (GraphCapture* capture = active_capture(device)) return capture_fill(capture, tensor->storage, 0, bytes, &zero, 1);
  std::lock_guard lock(device->stream_mutex);
  if (device->api().buffer_fill) {
    return device->api().buffer_fill(device->stream, tensor->storage->buffer, 0, bytes, &zero, 1);
  }
  std::vector<unsigned char> zeros(bytes, 0);
  CTL_RETURN_IF_ERROR(device->api().buffer_write(device->stream, tensor->storage->buffer, 0, zeros.data(), bytes));
  return device->api().stream_synchronize(device->stream);  // `zeros` dies on return
}

// A contiguous version of `tensor`: itself (retained) or a copy made on its device.
ctl_status* contiguous(ctl_tensor* tensor, ctl_tensor** out_tensor) {
  if (tensor->layout.is_contiguous()) {
    ctl_tensor_retain(tensor);
    *out_tensor = tensor;
    return nullptr;
  }
  return run_op(CTL_OP_COPY, 1, &tensor, nullptr, 1, out_tensor);
}

}  // namespace
}  // namespace catalyst

using namespace catalyst;

extern "C" {

CTL_EXPORT size_t ctl_dtype_size(ctl_dtype dtype) {
  const int raw = enum_value(dtype);
  return raw >= 0 && raw < CTL_DTYPE_COUNT_ ? sdk::dtype_size(dtype) : 0;
}

CTL_EXPORT const char* ctl_dtype_name(ctl_dtype dtype) {
  static const char* const kNames[] = {"f32", "f64", "f16", "bf16", "i8", "u8", "i32", "i64", "bool"};
  const int raw = enum_value(dtype);
  return raw >= 0 && raw < CTL_DTYPE_COUNT_ ? kNames[raw] : "unknown";
}

CTL_EXPORT void ctl_abi_version(uint32_t* out_major, uint32_t* out_minor) {
  if (out_major) *out_major = CTL_ABI_VERSION_MAJOR;
  if (out_minor) *out_minor = CTL_ABI_VERSION_MINOR;
}

CTL_EXPORT ctl_status* ctl_tensor_create(ctl_device* device, ctl_dtype dtype, size_t rank, const int64_t* shape,
                                         ctl_tensor** out_tensor) {
  CTL_RETURN_IF_ERROR(check_dtype(dtype, "dtype"));
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_create(device, dtype, rank, shape, out_tensor));
    return allocate_tensor(device, dtype, static_cast<uint32_t>(rank), shape, out_tensor);
  });
}

CTL_EXPORT ctl_status* ctl_tensor_create_zeros(ctl_device* device, ctl_dtype dtype, size_t rank, const int64_t* shape,
                                               ctl_tensor** out_tensor) {
  CTL_RETURN_IF_ERROR(check_dtype(dtype, "dtype"));
  return ctl_tensor_create_full(device, dtype, rank, shape, 0.0, out_tensor);
}

CTL_EXPORT ctl_status* ctl_tensor_create_full(ctl_device* device, ctl_dtype dtype, size_t rank, const int64_t* shape,
                                              double value, ctl_tensor** out_tensor) {
  CTL_RETURN_IF_ERROR(check_dtype(dtype, "dtype"));
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_create(device, dtype, rank, shape, out_tensor));
    ctl_tensor* tensor = nullptr;
    CTL_RETURN_IF_ERROR(allocate_tensor(device, dtype, static_cast<uint32_t>(rank), shape, &tensor));
    ctl_fill_attrs attrs{CTL_FILL_ATTRS_STRUCT_SIZE, value};
    // All-zero bytes are zero in every dtype, so zeros need no op at all.
    const bool zero_bits = value == 0.0 && !std::signbit(value);
    ctl_status* status = zero_bits ? fill_zero(tensor) : run_op_into(CTL_OP_FILL, 0, nullptr, &attrs, 1, &tensor);
    if (status) {
      ctl_tensor_release(tensor);
      return status;
    }
    *out_tensor = tensor;
    return nullptr;
  });
}

CTL_EXPORT ctl_status* ctl_tensor_from_host(ctl_device* device, ctl_dtype dtype, size_t rank, const int64_t* shape,
                                            const void* data, size_t data_bytes, ctl_tensor** out_tensor) {
  CTL_RETURN_IF_ERROR(check_dtype(dtype, "dtype"));
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_create(device, dtype, rank, shape, out_tensor));
    int64_t numel = 1;
    for (size_t i = 0; i < rank; ++i) numel *= shape[i];
    const uint64_t bytes = static_cast<uint64_t>(numel) * ctl_dtype_size(dtype);
    CTL_CHECK_ARG(data_bytes == bytes, "argument 'data_bytes' is %zu but a %s tensor of that shape has %llu bytes",
                  data_bytes, ctl_dtype_name(dtype), static_cast<unsigned long long>(bytes));
    CTL_CHECK_ARG(data || bytes == 0, "argument 'data' is NULL");
    ctl_tensor* tensor = nullptr;
    CTL_RETURN_IF_ERROR(allocate_tensor(device, dtype, static_cast<uint32_t>(rank), shape, &tensor));
    ctl_status* status = nullptr;
    if (GraphCapture* capture = active_capture(device)) {
      status = capture_write(capture, tensor->storage, 0, data, bytes);
    } else {
      std::lock_guard lock(device->stream_mutex);
      if (bytes > 0) status = device->api().buffer_write(device->stream, tensor->storage->buffer, 0, data, bytes);
      // The caller may free `data` as soon as we return.
      if (!status) status = device->api().stream_synchronize(device->stream);
    }
    if (status) {
      ctl_tensor_release(tensor);
      return annotate(status, "copying to " + device->label);
    }
    *out_tensor = tensor;
    return nullptr;
  });
}

CTL_EXPORT ctl_status* ctl_tensor_to_host(const ctl_tensor* tensor, void* dst, size_t dst_bytes) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_tensor(tensor, "tensor"));
    const uint64_t bytes = static_cast<uint64_t>(tensor->layout.numel()) * ctl_dtype_size(tensor->layout.dtype);
    CTL_CHECK_ARG(dst || bytes == 0, "argument 'dst' is NULL");
    CTL_CHECK_ARG(dst_bytes >= bytes, "argument 'dst_bytes' is %zu but the tensor has %llu bytes", dst_bytes,
                  static_cast<unsigned long long>(bytes));
    ctl_tensor* dense = nullptr;
    CTL_RETURN_IF_ERROR(contiguous(const_cast<ctl_tensor*>(tensor), &dense));
    ctl_status* status = read_contiguous(dense, dst, bytes);
    ctl_tensor_release(dense);
    return status;
  });
}

CTL_EXPORT ctl_status* ctl_tensor_to_device(const ctl_tensor* tensor, ctl_device* device, ctl_tensor** out_tensor) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_tensor(tensor, "tensor"));
    CTL_RETURN_IF_ERROR(check_device(device, "device"));
    CTL_CHECK_ARG(out_tensor, "argument 'out_tensor' is NULL");
    auto* source = const_cast<ctl_tensor*>(tensor);
    if (device == tensor->device()) {
      ctl_tensor* copy = nullptr;
      CTL_RETURN_IF_ERROR(run_op(CTL_OP_COPY, 1, &source, nullptr, 1, &copy));
      *out_tensor = copy;
      return nullptr;
    }
    // A peer copy inside one plugin, else through host memory (placement/transfer.h); a
    // device of another runtime is another plugin instance, so its moves go through the host.
    return move_tensor(source, device, CTL_OP_COPY, out_tensor);
  });
}

CTL_EXPORT void ctl_tensor_retain(ctl_tensor* tensor) {
  if (tensor && tensor->magic == kTensorMagic) tensor->references.fetch_add(1, std::memory_order_relaxed);
}

CTL_EXPORT void ctl_tensor_release(ctl_tensor* tensor) {
  if (!tensor || tensor->magic != kTensorMagic) return;
  if (tensor->references.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  tensor->magic = kReleasedMagic;
  delete tensor->autograd;  // releases its gradient and its share of the record
  tensor->autograd = nullptr;
  Storage* storage = tensor->storage;
  tensor->storage = nullptr;
  storage->release();
  quarantine().add(tensor);
}

CTL_EXPORT ctl_status* ctl_tensor_get_info(const ctl_tensor* tensor, ctl_tensor_info* out_info) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_tensor(tensor, "tensor"));
    CTL_CHECK_ARG(out_info, "argument 'out_info' is NULL");
    CTL_CHECK_ARG(out_info->struct_size >= offsetof(ctl_tensor_info, next),
                  "out_info->struct_size is %zu; set it to CTL_TENSOR_INFO_STRUCT_SIZE", out_info->struct_size);
    ctl_tensor_info info{};
    info.struct_size = sizeof info;
    info.next = out_info->next;
    info.dtype = tensor->layout.dtype;
    info.rank = tensor->layout.rank;
    for (uint32_t i = 0; i < tensor->layout.rank; ++i) {
      info.shape[i] = tensor->layout.shape[i];
      info.strides[i] = tensor->layout.strides[i];
    }
    info.offset = tensor->layout.offset;
    info.numel = tensor->layout.numel();
    info.contiguous = tensor->layout.is_contiguous();
    info.device = tensor->device();
    copy_out(&info, out_info);
    return nullptr;
  });
}

CTL_EXPORT ctl_dtype ctl_tensor_dtype(const ctl_tensor* tensor) {
  return tensor && tensor->magic == kTensorMagic ? tensor->layout.dtype : CTL_DTYPE_COUNT_;
}

CTL_EXPORT size_t ctl_tensor_rank(const ctl_tensor* tensor) {
  return tensor && tensor->magic == kTensorMagic ? tensor->layout.rank : 0;
}

CTL_EXPORT int64_t ctl_tensor_dim(const ctl_tensor* tensor, int64_t axis) {
  if (!tensor || tensor->magic != kTensorMagic) return -1;
  const int64_t rank = tensor->layout.rank;
  if (axis < -rank || axis >= rank) return -1;
  return tensor->layout.shape[axis < 0 ? axis + rank : axis];
}

CTL_EXPORT int64_t ctl_tensor_numel(const ctl_tensor* tensor) {
  return tensor && tensor->magic == kTensorMagic ? tensor->layout.numel() : 0;
}

CTL_EXPORT ctl_device* ctl_tensor_device(const ctl_tensor* tensor) {
  return tensor && tensor->magic == kTensorMagic ? tensor->device() : nullptr;
}

CTL_EXPORT ctl_status* ctl_tensor_contiguous(ctl_tensor* tensor, ctl_tensor** out_tensor) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_tensor(tensor, "tensor"));
    CTL_CHECK_ARG(out_tensor, "argument 'out_tensor' is NULL");
    return contiguous(tensor, out_tensor);
  });
}

}  // extern "C"
