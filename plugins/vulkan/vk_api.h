// vk_api.h — the Vulkan entry points the plugin calls, reached through tables rather than
// linked: the loader (libvulkan.so.1) is opened at run time, so the plugin loads and reports
// no devices on a machine without Vulkan. The device table is also where the test hook
// (CATALYST_VULKAN_FAULT, see faults.h) injects driver errors.
#pragma once

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#define CATALYST_VK_INSTANCE_FUNCTIONS(X)     \
  X(vkDestroyInstance)                        \
  X(vkEnumeratePhysicalDevices)               \
  X(vkGetPhysicalDeviceProperties)            \
  X(vkGetPhysicalDeviceProperties2)           \
  X(vkGetPhysicalDeviceFeatures2)             \
  X(vkGetPhysicalDeviceMemoryProperties)      \
  X(vkGetPhysicalDeviceMemoryProperties2)     \
  X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkEnumerateDeviceExtensionProperties)     \
  X(vkCreateDevice)                           \
  X(vkGetDeviceProcAddr)

#define CATALYST_VK_DEVICE_FUNCTIONS(X) \
  X(vkDestroyDevice)                    \
  X(vkGetDeviceQueue)                   \
  X(vkDeviceWaitIdle)                   \
  X(vkAllocateMemory)                   \
  X(vkFreeMemory)                       \
  X(vkMapMemory)                        \
  X(vkUnmapMemory)                      \
  X(vkCreateBuffer)                     \
  X(vkDestroyBuffer)                    \
  X(vkGetBufferMemoryRequirements)      \
  X(vkBindBufferMemory)                 \
  X(vkCreateCommandPool)                \
  X(vkDestroyCommandPool)               \
  X(vkAllocateCommandBuffers)           \
  X(vkFreeCommandBuffers)               \
  X(vkResetCommandBuffer)               \
  X(vkBeginCommandBuffer)               \
  X(vkEndCommandBuffer)                 \
  X(vkQueueSubmit)                      \
  X(vkCreateSemaphore)                  \
  X(vkDestroySemaphore)                 \
  X(vkWaitSemaphores)                   \
  X(vkGetSemaphoreCounterValue)         \
  X(vkCmdCopyBuffer)                    \
  X(vkCmdFillBuffer)                    \
  X(vkCmdPipelineBarrier)               \
  X(vkCmdBindPipeline)                  \
  X(vkCmdDispatch)                      \
  X(vkCmdPushConstants)                 \
  X(vkCmdBindDescriptorSets)            \
  X(vkCreateShaderModule)               \
  X(vkDestroyShaderModule)              \
  X(vkCreatePipelineLayout)             \
  X(vkDestroyPipelineLayout)            \
  X(vkCreateDescriptorSetLayout)        \
  X(vkDestroyDescriptorSetLayout)       \
  X(vkCreateComputePipelines)           \
  X(vkDestroyPipeline)                  \
  X(vkCreatePipelineCache)              \
  X(vkDestroyPipelineCache)             \
  X(vkGetPipelineCacheData)             \
  X(vkCreateDescriptorPool)             \
  X(vkDestroyDescriptorPool)            \
  X(vkResetDescriptorPool)              \
  X(vkAllocateDescriptorSets)           \
  X(vkUpdateDescriptorSets)

namespace catalyst::vulkan {

#define CATALYST_VK_MEMBER(name) PFN_##name name = nullptr;

// What the loader gives before an instance exists.
struct LoaderFunctions {
  void* library = nullptr;  // dlopen handle
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  PFN_vkCreateInstance vkCreateInstance = nullptr;
  PFN_vkEnumerateInstanceExtensionProperties vkEnumerateInstanceExtensionProperties = nullptr;
  PFN_vkEnumerateInstanceLayerProperties vkEnumerateInstanceLayerProperties = nullptr;
  PFN_vkEnumerateInstanceVersion vkEnumerateInstanceVersion = nullptr;  // NULL on a 1.0 loader
};

struct InstanceFunctions {
  CATALYST_VK_INSTANCE_FUNCTIONS(CATALYST_VK_MEMBER)
  PFN_vkCreateDebugUtilsMessengerEXT vkCreateDebugUtilsMessengerEXT = nullptr;
  PFN_vkDestroyDebugUtilsMessengerEXT vkDestroyDebugUtilsMessengerEXT = nullptr;
};

struct DeviceFunctions {
  CATALYST_VK_DEVICE_FUNCTIONS(CATALYST_VK_MEMBER)
  PFN_vkCmdPushDescriptorSetKHR vkCmdPushDescriptorSetKHR = nullptr;  // VK_KHR_push_descriptor
};

#undef CATALYST_VK_MEMBER

// Opens libvulkan.so.1; false with *why set when there is no loader.
bool open_loader(LoaderFunctions* out, const char** why);
void close_loader(LoaderFunctions* loader);
// false when an entry point the plugin needs is missing (named in *missing).
bool load_instance_functions(const LoaderFunctions& loader, VkInstance instance, InstanceFunctions* out,
                             const char** missing);
bool load_device_functions(const InstanceFunctions& fns, VkDevice device, DeviceFunctions* out, const char** missing);

// "VK_ERROR_DEVICE_LOST", ...
const char* vk_result_name(VkResult result);

}  // namespace catalyst::vulkan
