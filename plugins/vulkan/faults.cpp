// faults.cpp — parsing CATALYST_VULKAN_FAULT (see faults.h).
#include "faults.h"

#include <cstdlib>
#include <cstring>

namespace catalyst::vulkan {

bool FaultInjector::configure(const char** why) {
  const char* spec = std::getenv("CATALYST_VULKAN_FAULT");
  if (!spec || !*spec) return true;
  const char* colon = std::strchr(spec, ':');
  const char* second = colon ? std::strchr(colon + 1, ':') : nullptr;
  if (!second) {
    *why = "CATALYST_VULKAN_FAULT must be SITE:ERROR:N";
    return false;
  }
  const size_t site_length = static_cast<size_t>(colon - spec);
  const size_t error_length = static_cast<size_t>(second - colon - 1);
  if (site_length == 8 && std::strncmp(spec, "allocate", 8) == 0) {
    site_ = FaultSite::kAllocate;
  } else if (site_length == 6 && std::strncmp(spec, "submit", 6) == 0) {
    site_ = FaultSite::kSubmit;
  } else {
    *why = "CATALYST_VULKAN_FAULT: SITE must be allocate or submit";
    return false;
  }
  if (error_length == 20 && std::strncmp(colon + 1, "out_of_device_memory", 20) == 0) {
    result_ = VK_ERROR_OUT_OF_DEVICE_MEMORY;
  } else if (error_length == 11 && std::strncmp(colon + 1, "device_lost", 11) == 0) {
    result_ = VK_ERROR_DEVICE_LOST;
  } else {
    *why = "CATALYST_VULKAN_FAULT: ERROR must be out_of_device_memory or device_lost";
    return false;
  }
  char* end = nullptr;
  const unsigned long long n = std::strtoull(second + 1, &end, 10);
  if (n == 0 || !end || *end != '\0') {
    *why = "CATALYST_VULKAN_FAULT: N must be a positive integer";
    return false;
  }
  nth_ = n;
  armed_ = true;
  return true;
}

}  // namespace catalyst::vulkan
