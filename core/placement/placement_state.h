// placement_state.h — what a runtime keeps for placement (ctl_runtime_set_placement_policy)
// and what each device counts of its own use (ctl_device_get_usage). Kept apart from the
// logic (placed_dispatch.cpp, transfer.cpp) so that runtime.h stays light.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "catalyst.h"

namespace catalyst {

// Counters a device keeps; every field is updated without a lock.
struct DeviceUsage {
  std::atomic<uint64_t> busy_ns{0};
  std::atomic<uint64_t> ops{0};
  std::atomic<uint64_t> memory_in_use{0};
  std::atomic<uint64_t> memory_peak{0};
  std::atomic<uint64_t> bytes_in{0};
  std::atomic<uint64_t> bytes_out{0};

  void add_memory(uint64_t bytes) {
    const uint64_t now = memory_in_use.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    uint64_t peak = memory_peak.load(std::memory_order_relaxed);
    while (now > peak && !memory_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
  }
  void remove_memory(uint64_t bytes) { memory_in_use.fetch_sub(bytes, std::memory_order_relaxed); }
};

struct PlacementState {
  // Read on every op without the lock: false unless a policy allows something.
  std::atomic<bool> cross_device_inputs{false};
  std::atomic<bool> fallback{false};

  std::mutex mutex;  // guards everything below
  ctl_placement_mode mode = CTL_PLACEMENT_EXPLICIT;
  std::vector<ctl_device*> devices;  // empty: every device of the runtime

  // What one line of the report adds up (ctl_placement_record).
  struct Totals {
    uint64_t count = 0;
    uint64_t bytes = 0;
    uint64_t nanoseconds = 0;
  };
  // (kind, op, from, to) -> totals. An ordered map, so reports come out stable.
  using Key = std::tuple<int, int, const ctl_device*, const ctl_device*>;
  std::map<Key, Totals> records;
};

}  // namespace catalyst
