// vk_api.cpp — opening the Vulkan loader and filling the entry-point tables of vk_api.h.
#include "vk_api.h"

#include <dlfcn.h>

namespace catalyst::vulkan {

bool open_loader(LoaderFunctions* out, const char** why) {
  void* library = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) library = dlopen("libvulkan.so", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    *why = dlerror();
    return false;
  }
  out->library = library;
  out->vkGetInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(library, "vkGetInstanceProcAddr"));
  if (!out->vkGetInstanceProcAddr) {
    *why = "libvulkan has no vkGetInstanceProcAddr";
    dlclose(library);
    out->library = nullptr;
    return false;
  }
  auto global = [&](const char* name) { return out->vkGetInstanceProcAddr(VK_NULL_HANDLE, name); };
  out->vkCreateInstance = reinterpret_cast<PFN_vkCreateInstance>(global("vkCreateInstance"));
  out->vkEnumerateInstanceExtensionProperties =
      reinterpret_cast<PFN_vkEnumerateInstanceExtensionProperties>(global("vkEnumerateInstanceExtensionProperties"));
  out->vkEnumerateInstanceLayerProperties =
      reinterpret_cast<PFN_vkEnumerateInstanceLayerProperties>(global("vkEnumerateInstanceLayerProperties"));
  out->vkEnumerateInstanceVersion =
      reinterpret_cast<PFN_vkEnumerateInstanceVersion>(global("vkEnumerateInstanceVersion"));
  if (!out->vkCreateInstance || !out->vkEnumerateInstanceExtensionProperties) {
    *why = "libvulkan lacks vkCreateInstance";
    close_loader(out);
    return false;
  }
  return true;
}

void close_loader(LoaderFunctions* loader) {
  if (loader->library) dlclose(loader->library);
  *loader = LoaderFunctions{};
}

bool load_instance_functions(const LoaderFunctions& loader, VkInstance instance, InstanceFunctions* out,
                             const char** missing) {
#define CATALYST_VK_LOAD(name)                                                             \
  out->name = reinterpret_cast<PFN_##name>(loader.vkGetInstanceProcAddr(instance, #name)); \
  if (!out->name) {                                                                        \
    *missing = #name;                                                                      \
    return false;                                                                          \
  }
  CATALYST_VK_INSTANCE_FUNCTIONS(CATALYST_VK_LOAD)
#undef CATALYST_VK_LOAD
  out->vkCreateDebugUtilsMessengerEXT = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
      loader.vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
  out->vkDestroyDebugUtilsMessengerEXT = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
      loader.vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
  return true;
}

bool load_device_functions(const InstanceFunctions& fns, VkDevice device, DeviceFunctions* out, const char** missing) {
#define CATALYST_VK_LOAD(name)                                                      \
  out->name = reinterpret_cast<PFN_##name>(fns.vkGetDeviceProcAddr(device, #name)); \
  if (!out->name) {                                                                 \
    *missing = #name;                                                               \
    return false;                                                                   \
  }
  CATALYST_VK_DEVICE_FUNCTIONS(CATALYST_VK_LOAD)
#undef CATALYST_VK_LOAD
  out->vkCmdPushDescriptorSetKHR =
      reinterpret_cast<PFN_vkCmdPushDescriptorSetKHR>(fns.vkGetDeviceProcAddr(device, "vkCmdPushDescriptorSetKHR"));
  return true;
}

const char* vk_result_name(VkResult result) {
  switch (result) {
#define CATALYST_VK_NAME(r) \
  case r:                   \
    return #r;
    CATALYST_VK_NAME(VK_SUCCESS)
    CATALYST_VK_NAME(VK_NOT_READY)
    CATALYST_VK_NAME(VK_TIMEOUT)
    CATALYST_VK_NAME(VK_INCOMPLETE)
    CATALYST_VK_NAME(VK_ERROR_OUT_OF_HOST_MEMORY)
    CATALYST_VK_NAME(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    CATALYST_VK_NAME(VK_ERROR_INITIALIZATION_FAILED)
    CATALYST_VK_NAME(VK_ERROR_DEVICE_LOST)
    CATALYST_VK_NAME(VK_ERROR_MEMORY_MAP_FAILED)
    CATALYST_VK_NAME(VK_ERROR_LAYER_NOT_PRESENT)
    CATALYST_VK_NAME(VK_ERROR_EXTENSION_NOT_PRESENT)
    CATALYST_VK_NAME(VK_ERROR_FEATURE_NOT_PRESENT)
    CATALYST_VK_NAME(VK_ERROR_INCOMPATIBLE_DRIVER)
    CATALYST_VK_NAME(VK_ERROR_TOO_MANY_OBJECTS)
    CATALYST_VK_NAME(VK_ERROR_FORMAT_NOT_SUPPORTED)
    CATALYST_VK_NAME(VK_ERROR_FRAGMENTED_POOL)
    CATALYST_VK_NAME(VK_ERROR_OUT_OF_POOL_MEMORY)
    CATALYST_VK_NAME(VK_ERROR_INVALID_SHADER_NV)
    CATALYST_VK_NAME(VK_ERROR_UNKNOWN)
#undef CATALYST_VK_NAME
    default:
      return "an unknown VkResult";
  }
}

}  // namespace catalyst::vulkan
