// faults.h — the test hook that injects driver errors. CATALYST_VULKAN_FAULT=SITE:ERROR:N
// makes the N-th call (counted from 1, per device) at SITE fail with ERROR instead of
// reaching the driver, so tests can show that the plugin turns each into a status:
//   SITE  allocate (vkAllocateMemory of device memory) | submit (vkQueueSubmit)
//   ERROR out_of_device_memory | device_lost
// Unset, it costs one relaxed load per allocation or submission.
#pragma once

#include <atomic>
#include <cstdint>

#include "vk_api.h"

namespace catalyst::vulkan {

enum class FaultSite { kAllocate = 0, kSubmit = 1 };

class FaultInjector {
 public:
  // Reads CATALYST_VULKAN_FAULT; false with *why set when it is present but malformed.
  bool configure(const char** why);
  // VK_SUCCESS, or the error to report instead of making this call at `site`.
  VkResult next(FaultSite site) {
    if (!armed_) return VK_SUCCESS;
    const uint64_t n = count_[static_cast<int>(site)].fetch_add(1, std::memory_order_relaxed) + 1;
    return site == site_ && n == nth_ ? result_ : VK_SUCCESS;
  }

 private:
  bool armed_ = false;
  FaultSite site_ = FaultSite::kAllocate;
  VkResult result_ = VK_SUCCESS;
  uint64_t nth_ = 0;
  std::atomic<uint64_t> count_[2] = {0, 0};
};

}  // namespace catalyst::vulkan
