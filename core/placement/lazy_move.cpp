// lazy_move.cpp — moves whose copy waits until the bytes are needed (lazy_move.h).
#include "placement/lazy_move.h"

#include <chrono>
#include <mutex>

#include "graph/capture.h"
#include "placement/transfer.h"
#include "status.h"

namespace catalyst {

ctl_status* move_lazily(ctl_tensor* source, ctl_device* target, ctl_op_id op, ctl_tensor** out_tensor) {
  const Layout& layout = source->layout;
  ctl_device* from = source->device();
  if (from == target || layout.offset != 0 || !layout.is_contiguous()) {
    return move_tensor(source, target, op, out_tensor);  // nothing to gain, or not a fresh result
  }
  if (active_capture(from) || active_capture(target)) {
    return refused_while_capturing(("moving a tensor from " + from->label + " to " + target->label).c_str());
  }
  CTL_RETURN_IF_ERROR(check_target_dtype(layout.dtype, from, target));
  ctl_tensor* moved = nullptr;
  CTL_RETURN_IF_ERROR(allocate_tensor(target, layout.dtype, layout.rank, layout.shape.data(), &moved));
  ctl_tensor_retain(source);
  moved->storage->pending_op = op;
  moved->storage->pending.store(source, std::memory_order_release);
  *out_tensor = moved;
  return nullptr;
}

ctl_status* fetch_pending(Storage* storage) {
  const auto began = std::chrono::steady_clock::now();
  std::lock_guard lock(storage->pending_mutex);
  ctl_tensor* source = storage->pending.load(std::memory_order_acquire);
  if (!source) return nullptr;  // another thread copied the bytes in meanwhile
  // A dense view of the whole storage, shaped as the source, to copy into.
  ctl_tensor* destination = make_view(storage, source->layout);
  ctl_status* status = copy_across(source, destination, storage->pending_op, began);
  ctl_tensor_release(destination);
  if (status) return status;  // still pending: a later use tries again
  storage->pending.store(nullptr, std::memory_order_release);
  ctl_tensor_release(source);
  return nullptr;
}

ctl_tensor* pending_view_on(const ctl_tensor* tensor, const ctl_device* device) {
  Storage* storage = tensor->storage;
  if (!storage->pending.load(std::memory_order_acquire)) return nullptr;
  std::lock_guard lock(storage->pending_mutex);
  ctl_tensor* source = storage->pending.load(std::memory_order_acquire);
  if (!source || source->device() != device) return nullptr;
  // The pending tensor is dense from its storage's start, as the storage here is, so the
  // tensor's own offset and strides address the same elements there.
  return make_view(source->storage, tensor->layout);
}

}  // namespace catalyst
