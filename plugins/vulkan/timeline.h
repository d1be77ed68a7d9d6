// timeline.h — a stream's timeline semaphore and points on it. Value v of a stream's
// timeline is signalled when its v-th submission has finished; an event is such a point.
#pragma once

#include <cstdint>
#include <memory>

#include "vk_api.h"

namespace catalyst::vulkan {

// Shared, because an event recorded on a stream, or a buffer freed while the stream still
// used it, may outlive the stream.
struct Timeline {
  const DeviceFunctions* fn = nullptr;
  VkDevice device = VK_NULL_HANDLE;
  VkSemaphore semaphore = VK_NULL_HANDLE;
  Timeline() = default;
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;
  ~Timeline() {
    if (semaphore) fn->vkDestroySemaphore(device, semaphore, nullptr);
  }
  // True when the semaphore has reached `value` (false also when the query fails).
  bool reached(uint64_t value) const {
    uint64_t now = 0;
    return fn->vkGetSemaphoreCounterValue(device, semaphore, &now) == VK_SUCCESS && now >= value;
  }
};
using TimelineRef = std::shared_ptr<Timeline>;

struct TimelinePoint {
  TimelineRef timeline;
  uint64_t value = 0;
};

}  // namespace catalyst::vulkan
