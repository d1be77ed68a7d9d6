// tensor.h — the structs behind ctl_tensor: a reference-counted storage (one device
// buffer) and the view (dtype, shape, strides, offset) every tensor is.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "catalyst_plugin.h"
#include "runtime.h"

namespace catalyst {

constexpr uint64_t kTensorMagic = 0x524f534e45544c43ull;    // "CLTENSOR"
constexpr uint64_t kReleasedMagic = 0x4441454452534e54ull;  // a released handle

// One device buffer shared by every view of it.
struct Storage {
  std::atomic<int64_t> references{1};
  ctl_device* device = nullptr;
  ctl_plugin_buffer* buffer = nullptr;
  uint64_t size_bytes = 0;
  // For imported (DLPack) memory: called once when the storage dies.
  void (*on_release)(void* context) = nullptr;
  void* on_release_context = nullptr;
  bool counts_usage = false;  // allocated by allocate_tensor: counted in the device's memory_in_use
  // Made while a graph was being captured (graph/capture.h): when the program lets go of
  // its last view, the graph alone holds it and no node has run yet, so the buffer is freed
  // at once, as eager execution would free it; the graph allocates bytes again (its plan's
  // arena, or a buffer of its own) before anything runs. Cleared when the capture ends.
  std::atomic<bool> drop_buffer_when_graph_alone{false};
  // Set while this storage's bytes are still on the device that computed them: a dense
  // tensor there (owned), which nothing writes, copied in the first time anything needs the
  // bytes here (placement/lazy_move.h). What a fallback's results are until they are used
  // on the device asked for, so that a chain of fallbacks moves nothing between its ops.
  std::atomic<ctl_tensor*> pending{nullptr};
  ctl_op_id pending_op{};    // the op the bytes were moved for, for the placement report
  std::mutex pending_mutex;  // one copy in, whichever thread needs the bytes first

  void retain() { references.fetch_add(1, std::memory_order_relaxed); }
  void release();
  // Gives the storage a plugin buffer of size_bytes, counted in the device's memory_in_use.
  ctl_status* allocate_buffer();
  // Frees the buffer, if any, and takes it out of the count.
  void free_buffer();
};

// A strided view's geometry, without storage.
struct Layout {
  ctl_dtype dtype = CTL_DTYPE_F32;
  uint32_t rank = 0;
  std::array<int64_t, CTL_MAX_RANK> shape{};
  std::array<int64_t, CTL_MAX_RANK> strides{};  // elements
  int64_t offset = 0;                           // elements

  int64_t numel() const;
  bool is_contiguous() const;
};

// Row-major strides for `shape`.
void set_contiguous_strides(Layout& layout);

// A shape as messages write it: "[2,3,4]", "[]" for a scalar.
std::string shape_text(const int64_t* shape, uint32_t rank);

// Validates a user-given shape: rank <= CTL_MAX_RANK, no negative dims, element count and
// byte size representable. `argument` names the parameter in messages.
ctl_status* check_shape(size_t rank, const int64_t* shape, ctl_dtype dtype, const char* argument);
// Takes a reference so that an out-of-range value from C is never loaded as the enum
// (see enum_value.h); C entry points call it before any other use of the dtype.
ctl_status* check_dtype(const ctl_dtype& dtype, const char* argument);

}  // namespace catalyst

namespace catalyst {
struct AutogradMeta;
}

struct ctl_tensor {
  uint64_t magic = catalyst::kTensorMagic;
  std::atomic<int64_t> references{1};
  catalyst::Storage* storage = nullptr;
  catalyst::Layout layout;
  catalyst::AutogradMeta* autograd = nullptr;  // gradients (autograd.h); NULL until needed
  // The plugin-facing view of storage and layout, which never change after make_view:
  // built once there, so an op call hands the plugin a pointer instead of building views.
  ctl_tensor_view view{};

  ctl_device* device() const { return storage->device; }
};

namespace catalyst {

ctl_status* check_tensor_element_failed(const ctl_tensor* tensor, const char* array, size_t index);

// Status for a NULL, foreign or released tensor passed as `argument`.
ctl_status* check_tensor(const ctl_tensor* tensor, const char* argument);
// The same for element `index` of the array argument `array` ("inputs[1]"): the name is
// formatted only when the check fails, so the op path does no string work.
inline ctl_status* check_tensor_at(const ctl_tensor* tensor, const char* array, size_t index) {
  if (tensor && tensor->magic == kTensorMagic) [[likely]]
    return nullptr;
  return check_tensor_element_failed(tensor, array, index);
}

// A new tensor viewing `storage` (which it retains) with `layout`.
ctl_tensor* make_view(Storage* storage, const Layout& layout);

// A new storage of `bytes` on `device` with one reference (the caller's), not seen by a
// graph capture: what allocate_tensor and a graph's memory plan start from.
ctl_status* allocate_storage(ctl_device* device, uint64_t bytes, Storage** out_storage);

// A new contiguous tensor with uninitialised contents.
ctl_status* allocate_tensor(ctl_device* device, ctl_dtype dtype, uint32_t rank, const int64_t* shape,
                            ctl_tensor** out_tensor);

// The plugin-facing view of a tensor (a copy of tensor->view).
inline ctl_tensor_view to_view(const ctl_tensor* tensor) {
  return tensor->view;
}

// Bytes from the buffer start to one past the last element, given the layout (0 if empty).
uint64_t extent_bytes(const Layout& layout);

}  // namespace catalyst
