// errors.cpp — Vulkan results as Catalyst statuses. Allocation failures are OUT_OF_MEMORY;
// VK_ERROR_DEVICE_LOST marks the device lost, after which every call answers DEVICE_LOST
// (the driver's objects are unusable, but the process and the other devices go on).
#include "catalyst/sdk/status.hpp"
#include "plugin.h"

namespace catalyst::vulkan {

ctl_status* vk_fail(ctl_plugin_device* device, VkResult result, const char* call, const char* what) {
  ctl_status_code code = CTL_STATUS_INTERNAL;
  switch (result) {
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    case VK_ERROR_OUT_OF_POOL_MEMORY:
    case VK_ERROR_TOO_MANY_OBJECTS:
      code = CTL_STATUS_OUT_OF_MEMORY;
      break;
    case VK_ERROR_DEVICE_LOST:
      code = CTL_STATUS_DEVICE_LOST;
      if (!device->lost.exchange(true)) {
        sdk::log(device->instance->host, CTL_LOG_ERROR, "%s%s: device lost (%s failed); every later call fails",
                 kLogPrefix, device->name.c_str(), call);
      }
      break;
    default:
      break;
  }
  return sdk::make_status(device->instance->host, code, "%s%s: %s failed: %s (%d)", kLogPrefix, what, call,
                          vk_result_name(result), static_cast<int>(result));
}

ctl_status* lost_status(const ctl_plugin_device* device, const char* what) {
  return sdk::make_status(device->instance->host, CTL_STATUS_DEVICE_LOST,
                          "%s%s: %s was lost (VK_ERROR_DEVICE_LOST) and takes no more work", kLogPrefix, what,
                          device->name.c_str());
}

}  // namespace catalyst::vulkan
