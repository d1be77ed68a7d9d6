// lazy_move.h — moves whose copy waits until the bytes are needed where they were sent.
//
// A fallback runs an op on another device and hands its results back on the device asked
// for. Copied back at once, a chain of ops that all fall back would move every
// intermediate tensor there and back again; the issue that asked for this measured 3 GB
// over 50 steps of the default GPT. Instead a fallback's result is a tensor on the device
// asked for whose storage is "pending": its bytes stay on the device that computed them
// (Storage::pending, a dense tensor that nothing writes) until something needs them here —
// an op on this device, a read to the host, DLPack, a graph, a communication call, a move
// elsewhere — and only then are they copied in, once. The next fallback to that same
// device reads the pending bytes where they are, without a copy. Gradients flowing back
// through such moves are handed on the same way.
#pragma once

#include "catalyst.h"
#include "tensor.h"

namespace catalyst {

// A new tensor on `target` whose bytes are `source`'s, copied in when first needed.
// `source` must be dense and start at its storage's beginning, and nothing may write it
// afterwards: a fresh result only the caller holds. Counted as a move of `op` when the
// bytes are copied, not now.
ctl_status* move_lazily(ctl_tensor* source, ctl_device* target, ctl_op_id op, ctl_tensor** out_tensor);

// Copies a pending storage's bytes in (and counts the move); nothing when none are pending.
ctl_status* fetch_pending(Storage* storage);

// Whatever is about to read or write `tensor`'s bytes on its own device calls this first:
// one atomic load when nothing is pending.
inline ctl_status* fetch_if_pending(const ctl_tensor* tensor) {
  if (tensor && tensor->storage->pending.load(std::memory_order_acquire)) [[unlikely]] {
    return fetch_pending(tensor->storage);
  }
  return nullptr;
}

// `tensor` as a view on `device` of the pending bytes there, when its storage's bytes are
// pending on `device` (a new reference, not recorded by autograd); NULL otherwise. What a
// fallback uses instead of moving an input that an earlier fallback left there.
ctl_tensor* pending_view_on(const ctl_tensor* tensor, const ctl_device* device);

}  // namespace catalyst
