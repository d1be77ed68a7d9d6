// host_share.cpp — fallbacks between host-memory devices share the bytes (host_share.h).
#include "placement/host_share.h"

#include "graph/capture.h"
#include "placement/lazy_move.h"
#include "placement/transfer.h"
#include "runtime.h"
#include "status.h"
#include "tensor.h"

namespace catalyst {
namespace {

// The shared storage's on_release: lets go of the storage whose bytes it viewed.
void release_shared(void* context) {
  static_cast<Storage*>(context)->release();
}

}  // namespace

bool can_share_host_memory(const ctl_device* from, const ctl_device* to) {
  return from != to && from->plugin != to->plugin && from->host_visible && to->host_visible &&
         from->api().buffer_host_pointer && to->api().buffer_wrap_host && !active_capture(from) && !active_capture(to);
}

ctl_status* share_host_memory(ctl_tensor* source, ctl_device* target, ctl_tensor** out_tensor) {
  ctl_device* from = source->device();
  CTL_RETURN_IF_ERROR(fetch_if_pending(source));
  CTL_RETURN_IF_ERROR(check_target_dtype(source->layout.dtype, from, target));
  Storage* bytes = source->storage;
  void* base = nullptr;
  if (bytes->size_bytes > 0) {
    CTL_RETURN_IF_ERROR(from->api().buffer_host_pointer(from->handle, bytes->buffer, &base));
    CTL_RETURN_IF_ERROR(synchronize(from));  // the target reads what was queued there
  }
  ctl_plugin_buffer* buffer = nullptr;
  if (bytes->size_bytes > 0) {
    CTL_RETURN_IF_ERROR(target->api().buffer_wrap_host(target->handle, base, bytes->size_bytes, &buffer));
  }
  auto* shared = new Storage;
  shared->device = target;
  shared->buffer = buffer;
  shared->size_bytes = bytes->size_bytes;
  bytes->retain();
  shared->on_release = release_shared;
  shared->on_release_context = bytes;
  ctl_runtime_retain(target->runtime);  // as every storage holds its runtime (Storage::release)
  *out_tensor = make_view(shared, source->layout);
  shared->release();  // the view holds it now
  return nullptr;
}

}  // namespace catalyst
