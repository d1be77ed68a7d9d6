// link_measurement.h — timing a copy between two devices the way a program makes one
// (ctl_tensor_to_device, allocation of the destination included), so that the figure is
// what a move costs, whatever path the core takes today.
#pragma once

#include <cstdint>

#include "catalyst.h"

namespace catalyst::topology {

// Bytes moved per copy: large enough that a copy is not all fixed cost, small enough to
// stay "cheap" (a few milliseconds even when staged through the host).
constexpr uint64_t kMeasureBytes = 8ull << 20;

// Copies kMeasureBytes of f32 from `from` to `to` once to warm up, then three times, and
// gives the fastest of the three as bytes per second. A failing copy (a device out of
// memory, a plugin error) is returned as its status.
ctl_status* time_copy(ctl_device* from, ctl_device* to, uint64_t* out_bytes_per_second);

}  // namespace catalyst::topology
