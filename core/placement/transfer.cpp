// transfer.cpp — device-to-device movement: a peer copy inside one plugin, ordered by an
// event, or staging through host memory between plugins.
#include "placement/transfer.h"

#include <chrono>
#include <vector>

#include "dispatch.h"
#include "placement/lazy_move.h"
#include "runtime.h"
#include "status.h"
#include "tensor.h"

namespace catalyst {
namespace {

void count(ctl_placement_event_kind kind, ctl_op_id op, const ctl_device* from, const ctl_device* to, uint64_t bytes,
           std::chrono::steady_clock::time_point began) {
  const auto elapsed = std::chrono::steady_clock::now() - began;
  PlacementState& state = *from->runtime->placement;
  std::lock_guard lock(state.mutex);
  PlacementState::Totals& totals = state.records[{kind, op, from, to}];
  ++totals.count;
  totals.bytes += bytes;
  totals.nanoseconds += uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count());
}

// The event a peer copy waits on lives as long as the tensor it filled: plugins need not
// support destroying an event that a stream still waits for.
struct PendingEvent {
  ctl_device* device;
  ctl_plugin_event* event;
};

void destroy_pending_event(void* context) {
  auto* pending = static_cast<PendingEvent*>(context);
  pending->device->api().event_destroy(pending->event);
  delete pending;
}

bool has_events(const ctl_device* device) {
  const ctl_plugin_api& api = device->api();
  return api.event_create && api.event_destroy && api.event_record && api.stream_wait_event && api.event_synchronize;
}

// Makes the target's stream wait for what is queued on the source's: an event when the
// plugin has them (attached to `destination` so it outlives the wait), else a synchronize.
ctl_status* order_after_source(ctl_device* from, ctl_device* to, ctl_tensor* destination) {
  if (!has_events(from)) return synchronize(from);
  const ctl_plugin_api& api = from->api();
  ctl_plugin_event* event = nullptr;
  CTL_RETURN_IF_ERROR(api.event_create(from->handle, &event));
  auto* pending = new PendingEvent{from, event};
  Storage* storage = destination->storage;
  storage->on_release = destroy_pending_event;
  storage->on_release_context = pending;
  {
    std::lock_guard lock(from->stream_mutex);
    CTL_RETURN_IF_ERROR(api.event_record(event, from->stream));
  }
  std::lock_guard lock(to->stream_mutex);
  return api.stream_wait_event(to->stream, event);
}

ctl_status* copy_bytes(ctl_tensor* dense, ctl_tensor* destination, uint64_t bytes) {
  ctl_device* from = dense->device();
  ctl_device* to = destination->device();
  const uint64_t source_offset = static_cast<uint64_t>(dense->layout.offset) * ctl_dtype_size(dense->layout.dtype);
  if (from->plugin == to->plugin && to->api().buffer_copy_peer) {
    CTL_RETURN_IF_ERROR(order_after_source(from, to, destination));
    std::lock_guard lock(to->stream_mutex);
    return to->api().buffer_copy_peer(to->stream, from->handle, dense->storage->buffer, source_offset,
                                      destination->storage->buffer, 0, bytes);
  }
  // Between plugins: through host memory. The read must have landed before the write is
  // queued, and the staging memory must outlive the write, so both streams are waited for.
  // The waits count as each device's busy time: for an asynchronous device they include
  // the work queued before the move.
  std::vector<unsigned char> staging(bytes);
  {
    std::lock_guard lock(from->stream_mutex);
    const auto begin = std::chrono::steady_clock::now();
    CTL_RETURN_IF_ERROR(
        from->api().buffer_read(from->stream, dense->storage->buffer, source_offset, staging.data(), bytes));
    ctl_status* status = from->api().stream_synchronize(from->stream);
    count_busy(from, begin);
    CTL_RETURN_IF_ERROR(status);
  }
  std::lock_guard lock(to->stream_mutex);
  const auto begin = std::chrono::steady_clock::now();
  CTL_RETURN_IF_ERROR(to->api().buffer_write(to->stream, destination->storage->buffer, 0, staging.data(), bytes));
  ctl_status* status = to->api().stream_synchronize(to->stream);
  count_busy(to, begin);
  return status;
}

}  // namespace

ctl_status* move_tensor(ctl_tensor* source, ctl_device* target, ctl_op_id op, ctl_tensor** out_tensor) {
  const auto began = std::chrono::steady_clock::now();
  CTL_RETURN_IF_ERROR(fetch_if_pending(source));
  const Layout& layout = source->layout;
  ctl_device* from = source->device();
  if (from != target && (active_capture(from) || active_capture(target))) {
    return refused_while_capturing(("moving a tensor from " + from->label + " to " + target->label).c_str());
  }
  auto release = [](ctl_tensor* t) { ctl_tensor_release(t); };
  std::unique_ptr<ctl_tensor, decltype(release)> dense(nullptr, release);
  if (from == target || !layout.is_contiguous()) {
    // A dense copy on the source device first (on the target, when that is the source).
    ctl_tensor* copy = nullptr;
    CTL_RETURN_IF_ERROR(allocate_tensor(from, layout.dtype, layout.rank, layout.shape.data(), &copy));
    dense.reset(copy);
    CTL_RETURN_IF_ERROR(run_op_into(CTL_OP_COPY, 1, &source, nullptr, 1, &copy));
    if (from == target) {
      *out_tensor = dense.release();
      return nullptr;
    }
  } else {
    ctl_tensor_retain(source);
    dense.reset(source);
  }
  CTL_RETURN_IF_ERROR(check_target_dtype(layout.dtype, from, target));
  ctl_tensor* moved = nullptr;
  CTL_RETURN_IF_ERROR(allocate_tensor(target, layout.dtype, layout.rank, layout.shape.data(), &moved));
  std::unique_ptr<ctl_tensor, decltype(release)> result(moved, release);
  CTL_RETURN_IF_ERROR(copy_across(dense.get(), moved, op, began));
  *out_tensor = result.release();
  return nullptr;
}

ctl_status* copy_across(ctl_tensor* dense, ctl_tensor* destination, ctl_op_id op,
                        std::chrono::steady_clock::time_point began) {
  ctl_device* from = dense->device();
  ctl_device* to = destination->device();
  const Layout& layout = dense->layout;
  const uint64_t bytes = static_cast<uint64_t>(layout.numel()) * ctl_dtype_size(layout.dtype);
  if (bytes > 0) {
    if (ctl_status* status = copy_bytes(dense, destination, bytes)) {
      return annotate(status, "moving " + std::to_string(bytes) + " bytes from " + from->label + " to " + to->label);
    }
  }
  from->usage.bytes_out.fetch_add(bytes, std::memory_order_relaxed);
  to->usage.bytes_in.fetch_add(bytes, std::memory_order_relaxed);
  count(CTL_PLACEMENT_MOVE, op, from, to, bytes, began);
  return nullptr;
}

ctl_status* check_target_dtype(ctl_dtype dtype, const ctl_device* from, const ctl_device* target) {
  if (target->dtype_mask & CTL_DTYPE_BIT(dtype)) return nullptr;
  return make_status(CTL_STATUS_UNSUPPORTED, "moving a %s tensor from %s to %s: %s does not support dtype %s",
                     ctl_dtype_name(dtype), from->label.c_str(), target->label.c_str(), target->label.c_str(),
                     ctl_dtype_name(dtype));
}

void count_fallback(ctl_op_id op, ctl_device* asked, ctl_device* ran_on, std::chrono::steady_clock::time_point began) {
  count(CTL_PLACEMENT_FALLBACK, op, asked, ran_on, 0, began);
}

}  // namespace catalyst
