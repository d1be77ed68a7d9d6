// host_share.h — a fallback between two devices that both address host memory shares the
// memory instead of copying it.
//
// A vendor's first plugin often computes in host memory (docs/vendor-guide.md), and the
// device its missing ops fall back to is the CPU's: both can hand the core a host pointer
// for a buffer (buffer_host_pointer) or wrap one (buffer_wrap_host), as DLPack already
// uses them. A fallback between two such devices of different plugins then reads and
// writes the tensors where they are: a view on the other device of the same bytes. Two
// devices of one plugin keep the plugin's own peer copy (split CPU devices copy to keep
// memory on their NUMA node), and no other move shares: only a fallback's moves, whose
// views live no longer than the op and its autograd record need them.
#pragma once

#include "catalyst.h"

namespace catalyst {

// True when a fallback from `from` to `to` (or back) may share host memory.
bool can_share_host_memory(const ctl_device* from, const ctl_device* to);

// A view on `target` of `source`'s own bytes (a new reference that keeps source's storage
// alive; not recorded by autograd), after the work queued on source's device has finished.
// Only when can_share_host_memory(source's device, target).
ctl_status* share_host_memory(ctl_tensor* source, ctl_device* target, ctl_tensor** out_tensor);

}  // namespace catalyst
