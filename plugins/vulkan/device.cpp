// device.cpp — instances and devices: every physical device with a compute queue that
// offers Vulkan 1.2 timeline semaphores becomes one Catalyst device, with the properties
// the driver reports. No loader, no driver or no such device is not an error: the instance
// has no devices and says why at CATALYST_LOG=info.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "catalyst/sdk/status.hpp"
#include "pipelines.h"
#include "plugin.h"

namespace catalyst::vulkan {
namespace {

bool env_on(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

bool has_extension(const std::vector<VkExtensionProperties>& list, const char* name) {
  for (const VkExtensionProperties& e : list) {
    if (std::strcmp(e.extensionName, name) == 0) return true;
  }
  return false;
}

const char* vendor_name(uint32_t id) {
  switch (id) {
    case 0x10DE:
      return "NVIDIA";
    case 0x1002:
      return "AMD";
    case 0x8086:
      return "Intel";
    case 0x13B5:
      return "ARM";
    case 0x5143:
      return "Qualcomm";
    case 0x106B:
      return "Apple";
    case 0x1010:
      return "Imagination";
    case 0x10005:
      return "Mesa";
    default:
      return nullptr;
  }
}

// With CATALYST_VULKAN_VALIDATION_LOG=FILE each validation message is also appended to
// FILE as one line "<error|warning> <message id>", with one write(O_APPEND), so the worker
// processes of a conformance run can share it and a test can count the errors.
void append_validation_line(const char* kind, const char* id) {
  const char* path = std::getenv("CATALYST_VULKAN_VALIDATION_LOG");
  if (!path || !*path) return;
  char line[256];
  const int length = std::snprintf(line, sizeof line, "%s %s\n", kind, id ? id : "-");
  if (length <= 0) return;
  const int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const size_t size = static_cast<size_t>(length) < sizeof line ? static_cast<size_t>(length) : sizeof line - 1;
  [[maybe_unused]] const ssize_t written = write(fd, line, size);
  close(fd);
}

VKAPI_ATTR VkBool32 VKAPI_CALL on_validation_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                     VkDebugUtilsMessageTypeFlagsEXT,
                                                     const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  auto* instance = static_cast<ctl_plugin_instance*>(user);
  const bool error = severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  if (error) {
    ++instance->validation_errors;
  } else {
    ++instance->validation_warnings;
  }
  append_validation_line(error ? "error" : "warning", data ? data->pMessageIdName : nullptr);
  sdk::log(instance->host, error ? CTL_LOG_ERROR : CTL_LOG_WARNING, "%svalidation: %s", kLogPrefix,
           data && data->pMessage ? data->pMessage : "(no message)");
  return VK_FALSE;
}

// The instance, with the validation layer when CATALYST_VULKAN_VALIDATION is set. Returns
// false (having logged why at info) when there is no usable Vulkan.
bool create_vk_instance(ctl_plugin_instance* inst) {
  const ctl_host_api* host = inst->host;
  const char* why = nullptr;
  if (!open_loader(&inst->loader, &why)) {
    sdk::log(host, CTL_LOG_INFO, "%sno Vulkan loader (libvulkan.so.1): %s; no devices", kLogPrefix, why);
    return false;
  }
  uint32_t version = VK_API_VERSION_1_0;
  if (inst->loader.vkEnumerateInstanceVersion) inst->loader.vkEnumerateInstanceVersion(&version);
  if (version < VK_API_VERSION_1_2) {
    sdk::log(host, CTL_LOG_INFO, "%sthe Vulkan loader offers %u.%u; the plugin needs 1.2; no devices", kLogPrefix,
             VK_API_VERSION_MAJOR(version), VK_API_VERSION_MINOR(version));
    return false;
  }
  const bool validate = env_on("CATALYST_VULKAN_VALIDATION");
  std::vector<const char*> layers, extensions;
  if (validate) {
    uint32_t count = 0;
    inst->loader.vkEnumerateInstanceLayerProperties(&count, nullptr);
    std::vector<VkLayerProperties> available(count);
    inst->loader.vkEnumerateInstanceLayerProperties(&count, available.data());
    bool found = false;
    for (const VkLayerProperties& l : available)
      found = found || std::strcmp(l.layerName, "VK_LAYER_KHRONOS_validation") == 0;
    if (!found) {
      sdk::log(host, CTL_LOG_ERROR,
               "%sCATALYST_VULKAN_VALIDATION is set but VK_LAYER_KHRONOS_validation is not installed", kLogPrefix);
      append_validation_line("error", "layer-missing");
    } else {
      layers.push_back("VK_LAYER_KHRONOS_validation");
      extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    }
  }
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "catalyst";
  app.pEngineName = "catalyst-vulkan";
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  VkDebugUtilsMessengerCreateInfoEXT messenger{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  messenger.messageSeverity =
      VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                          VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messenger.pfnUserCallback = on_validation_message;
  messenger.pUserData = inst;
  if (!layers.empty()) info.pNext = &messenger;  // also covers vkCreateInstance itself
  const VkResult r = inst->loader.vkCreateInstance(&info, nullptr, &inst->instance);
  if (r != VK_SUCCESS) {
    sdk::log(host, CTL_LOG_INFO, "%svkCreateInstance failed: %s (no Vulkan driver?); no devices", kLogPrefix,
             vk_result_name(r));
    inst->instance = VK_NULL_HANDLE;
    return false;
  }
  const char* missing = nullptr;
  if (!load_instance_functions(inst->loader, inst->instance, &inst->fn, &missing)) {
    sdk::log(host, CTL_LOG_INFO, "%sthe Vulkan loader lacks %s; no devices", kLogPrefix, missing);
    return false;
  }
  if (!layers.empty() && inst->fn.vkCreateDebugUtilsMessengerEXT) {
    inst->fn.vkCreateDebugUtilsMessengerEXT(inst->instance, &messenger, nullptr, &inst->messenger);
    sdk::log(host, CTL_LOG_INFO, "%sVK_LAYER_KHRONOS_validation is on", kLogPrefix);
    append_validation_line("active", "-");
  }
  return true;
}

// Fills `d` for `physical` and creates its VkDevice; false (with *why) when it does not
// qualify, a status when creating it failed.
ctl_status* init_device(ctl_plugin_instance* inst, VkPhysicalDevice physical, ctl_plugin_device* d, std::string* why) {
  const InstanceFunctions& fn = inst->fn;
  d->instance = inst;
  d->physical = physical;

  uint32_t ext_count = 0;
  fn.vkEnumerateDeviceExtensionProperties(physical, nullptr, &ext_count, nullptr);
  std::vector<VkExtensionProperties> extensions(ext_count);
  fn.vkEnumerateDeviceExtensionProperties(physical, nullptr, &ext_count, extensions.data());
  const bool has_pci = has_extension(extensions, VK_EXT_PCI_BUS_INFO_EXTENSION_NAME);
  d->has_memory_budget = has_extension(extensions, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
  d->has_push_descriptors = has_extension(extensions, VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME) &&
                            !env_on("CATALYST_VULKAN_NO_PUSH_DESCRIPTORS");

  VkPhysicalDeviceProperties basic{};
  fn.vkGetPhysicalDeviceProperties(physical, &basic);
  if (basic.apiVersion < VK_API_VERSION_1_2) {
    *why = std::string(basic.deviceName) + " offers Vulkan " + std::to_string(VK_API_VERSION_MAJOR(basic.apiVersion)) +
           "." + std::to_string(VK_API_VERSION_MINOR(basic.apiVersion)) + "; the plugin needs 1.2";
    return nullptr;
  }
  VkPhysicalDevicePCIBusInfoPropertiesEXT pci{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PCI_BUS_INFO_PROPERTIES_EXT};
  VkPhysicalDeviceVulkan11Properties p11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES};
  VkPhysicalDeviceVulkan12Properties p12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props.pNext = &p11;
  p11.pNext = &p12;
  if (has_pci) p12.pNext = &pci;
  // Compute units where a vendor extension counts them (core Vulkan does not): NVIDIA's
  // streaming multiprocessors, AMD's active compute units. Others (Intel, lavapipe, whose
  // thread count Vulkan does not expose) report 0, the ABI's "unknown".
  VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
  VkPhysicalDeviceShaderCoreProperties2AMD amd{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_2_AMD};
  const bool has_sm = has_extension(extensions, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME);
  const bool has_amd = has_extension(extensions, VK_AMD_SHADER_CORE_PROPERTIES_2_EXTENSION_NAME);
  if (has_sm) {
    sm.pNext = props.pNext;
    props.pNext = &sm;
  }
  if (has_amd) {
    amd.pNext = props.pNext;
    props.pNext = &amd;
  }
  fn.vkGetPhysicalDeviceProperties2(physical, &props);

  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.pNext = &f11;
  f11.pNext = &f12;
  fn.vkGetPhysicalDeviceFeatures2(physical, &features);
  if (!f12.timelineSemaphore) {
    *why = std::string(basic.deviceName) + " has no timeline semaphores";
    return nullptr;
  }

  uint32_t family_count = 0;
  fn.vkGetPhysicalDeviceQueueFamilyProperties(physical, &family_count, nullptr);
  std::vector<VkQueueFamilyProperties> families(family_count);
  fn.vkGetPhysicalDeviceQueueFamilyProperties(physical, &family_count, families.data());
  // A compute-only family first (dedicated compute engines), else any with compute.
  uint32_t family = UINT32_MAX;
  for (uint32_t i = 0; i < family_count && family == UINT32_MAX; ++i) {
    if ((families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && !(families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT))
      family = i;
  }
  for (uint32_t i = 0; i < family_count && family == UINT32_MAX; ++i) {
    if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) family = i;
  }
  if (family == UINT32_MAX) {
    *why = std::string(basic.deviceName) + " has no compute queue";
    return nullptr;
  }
  d->queue_family = family;

  VkPhysicalDeviceMemoryProperties memory{};
  fn.vkGetPhysicalDeviceMemoryProperties(physical, &memory);
  uint32_t heap = UINT32_MAX;
  for (uint32_t i = 0; i < memory.memoryHeapCount; ++i) {
    if ((memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) &&
        (heap == UINT32_MAX || memory.memoryHeaps[i].size > memory.memoryHeaps[heap].size)) {
      heap = i;
    }
  }
  uint32_t device_type = UINT32_MAX, host_type = UINT32_MAX;
  for (uint32_t i = 0; i < memory.memoryTypeCount; ++i) {
    const VkMemoryPropertyFlags f = memory.memoryTypes[i].propertyFlags;
    if (device_type == UINT32_MAX && memory.memoryTypes[i].heapIndex == heap &&
        (f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)) {
      device_type = i;
    }
  }
  const VkMemoryPropertyFlags host_flags = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  for (uint32_t pass = 0; pass < 2 && host_type == UINT32_MAX; ++pass) {
    for (uint32_t i = 0; i < memory.memoryTypeCount && host_type == UINT32_MAX; ++i) {
      const VkMemoryPropertyFlags f = memory.memoryTypes[i].propertyFlags;
      // Cached memory first: the host reads results back through it.
      if ((f & host_flags) == host_flags && (pass == 1 || (f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT))) host_type = i;
    }
  }
  if (heap == UINT32_MAX || device_type == UINT32_MAX || host_type == UINT32_MAX) {
    *why = std::string(basic.deviceName) + " has no device-local or no host-visible coherent memory type";
    return nullptr;
  }
  d->device_local_heap = heap;
  d->memory_total = memory.memoryHeaps[heap].size;
  d->device_memory_type = device_type;
  d->host_memory_type = host_type;
  d->host_memory_cached = memory.memoryTypes[host_type].propertyFlags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT;

  // The features the shaders use, each only where the device has it.
  VkPhysicalDeviceVulkan11Features want11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features want12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceFeatures2 want{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  want.pNext = &want11;
  want11.pNext = &want12;
  want.features.shaderFloat64 = features.features.shaderFloat64;
  want.features.shaderInt64 = features.features.shaderInt64;
  want.features.shaderInt16 = features.features.shaderInt16;
  want11.storageBuffer16BitAccess = f11.storageBuffer16BitAccess;
  want12.storageBuffer8BitAccess = f12.storageBuffer8BitAccess;
  want12.shaderInt8 = f12.shaderInt8;
  want12.timelineSemaphore = VK_TRUE;
  std::vector<const char*> enable;
  if (d->has_push_descriptors) enable.push_back(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
  if (d->has_memory_budget) enable.push_back(VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue.queueFamilyIndex = family;
  queue.queueCount = 1;
  queue.pQueuePriorities = &priority;
  VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  info.pNext = &want;
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue;
  info.enabledExtensionCount = static_cast<uint32_t>(enable.size());
  info.ppEnabledExtensionNames = enable.data();
  VkResult r = fn.vkCreateDevice(physical, &info, nullptr, &d->device);
  if (r != VK_SUCCESS) {
    *why = std::string(basic.deviceName) + ": vkCreateDevice failed: " + vk_result_name(r);
    d->device = VK_NULL_HANDLE;
    return nullptr;
  }
  const char* missing = nullptr;
  if (!load_device_functions(fn, d->device, &d->fn, &missing)) {
    *why = std::string(basic.deviceName) + ": the driver lacks " + missing;
    return nullptr;
  }
  if (!d->fn.vkCmdPushDescriptorSetKHR) d->has_push_descriptors = false;
  d->fn.vkGetDeviceQueue(d->device, family, 0, &d->queue);

  d->name = basic.deviceName;
  const char* vendor = vendor_name(basic.vendorID);
  char text[64];
  std::snprintf(text, sizeof text, "0x%04x", basic.vendorID);
  d->vendor = vendor ? vendor : text;
  d->vendor_id = basic.vendorID;
  d->device_id = basic.deviceID;
  d->driver_version_raw = basic.driverVersion;
  d->driver_version =
      p12.driverName[0] ? std::string(p12.driverName) + " " + p12.driverInfo : std::to_string(basic.driverVersion);
  std::memcpy(d->pipeline_cache_uuid, basic.pipelineCacheUUID, VK_UUID_SIZE);
  std::memcpy(d->uuid, p11.deviceUUID, 16);
  d->has_uuid = false;
  for (uint8_t b : d->uuid) d->has_uuid = d->has_uuid || b != 0;
  d->kind = basic.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU     ? CTL_DEVICE_KIND_CPU
            : basic.deviceType == VK_PHYSICAL_DEVICE_TYPE_OTHER ? CTL_DEVICE_KIND_ACCELERATOR
                                                                : CTL_DEVICE_KIND_GPU;
  if (has_pci) {
    std::snprintf(text, sizeof text, "%04x:%02x:%02x.%x", pci.pciDomain, pci.pciBus, pci.pciDevice, pci.pciFunction);
    d->pci_bus_id = text;
  }
  const VkPhysicalDeviceLimits& limits = basic.limits;
  d->max_allocation = p11.maxMemoryAllocationSize;
  d->max_storage_range = limits.maxStorageBufferRange;
  d->storage_alignment = limits.minStorageBufferOffsetAlignment;
  d->max_work_group_size = limits.maxComputeWorkGroupInvocations < limits.maxComputeWorkGroupSize[0]
                               ? limits.maxComputeWorkGroupInvocations
                               : limits.maxComputeWorkGroupSize[0];
  d->max_group_count_x = limits.maxComputeWorkGroupCount[0];
  d->shared_memory = limits.maxComputeSharedMemorySize;
  d->subgroup_size = p11.subgroupSize ? p11.subgroupSize : 1;
  d->f64_denormals = p12.shaderDenormPreserveFloat64;
  d->compute_units = has_sm ? sm.shaderSMCount : has_amd ? amd.activeComputeUnitCount : 0;
  d->has_subgroup_arithmetic = (p11.subgroupSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                               (p11.subgroupSupportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT);

  // f32 and i32 everywhere; the others where the device can store or compute them.
  d->dtype_mask = CTL_DTYPE_BIT(CTL_DTYPE_F32) | CTL_DTYPE_BIT(CTL_DTYPE_I32);
  if (features.features.shaderInt64) d->dtype_mask |= CTL_DTYPE_BIT(CTL_DTYPE_I64);
  if (features.features.shaderFloat64 && features.features.shaderInt64) d->dtype_mask |= CTL_DTYPE_BIT(CTL_DTYPE_F64);
  if (f12.storageBuffer8BitAccess) {
    d->dtype_mask |= CTL_DTYPE_BIT(CTL_DTYPE_BOOL) | CTL_DTYPE_BIT(CTL_DTYPE_I8) | CTL_DTYPE_BIT(CTL_DTYPE_U8);
  }
  if (f11.storageBuffer16BitAccess) d->dtype_mask |= CTL_DTYPE_BIT(CTL_DTYPE_F16) | CTL_DTYPE_BIT(CTL_DTYPE_BF16);

  const char* fault_why = nullptr;
  if (!d->faults.configure(&fault_why)) {
    sdk::log(inst->host, CTL_LOG_WARNING, "%s%s; ignored", kLogPrefix, fault_why);
  }
  d->memory = new (std::nothrow) Memory(d);
  d->pipelines = new (std::nothrow) Pipelines(d);
  if (!d->memory || !d->pipelines) {
    return sdk::make_status(inst->host, CTL_STATUS_OUT_OF_MEMORY, "%sinstance_create: no host memory", kLogPrefix);
  }
  return nullptr;
}

void destroy_device(ctl_plugin_device* d) {
  if (d->device) {
    if (!d->lost) d->fn.vkDeviceWaitIdle(d->device);
    delete d->pipelines;
    delete d->memory;
    d->fn.vkDestroyDevice(d->device, nullptr);
  }
  d->~ctl_plugin_device();
}

}  // namespace

ctl_status* instance_create(const ctl_host_api* host, ctl_plugin_instance** out_instance) {
  if (!out_instance) {
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%sinstance_create: out_instance is NULL", kLogPrefix);
  }
  auto* inst = host_new<ctl_plugin_instance>(host);
  if (!inst) return sdk::make_status(host, CTL_STATUS_OUT_OF_MEMORY, "%sinstance_create: no host memory", kLogPrefix);
  inst->host = host;
  if (create_vk_instance(inst)) {
    uint32_t count = 0;
    inst->fn.vkEnumeratePhysicalDevices(inst->instance, &count, nullptr);
    std::vector<VkPhysicalDevice> physical(count);
    if (count) inst->fn.vkEnumeratePhysicalDevices(inst->instance, &count, physical.data());
    if (count == 0) sdk::log(host, CTL_LOG_INFO, "%sthe Vulkan loader reports no physical devices", kLogPrefix);
    void* memory =
        count ? host->alloc(host->context, sizeof(ctl_plugin_device) * count, alignof(ctl_plugin_device)) : nullptr;
    if (count && !memory) {
      instance_destroy(inst);
      return sdk::make_status(host, CTL_STATUS_OUT_OF_MEMORY, "%sinstance_create: no host memory", kLogPrefix);
    }
    inst->devices = static_cast<ctl_plugin_device*>(memory);
    for (uint32_t i = 0; i < count; ++i) {
      ctl_plugin_device* d = new (&inst->devices[inst->device_count]) ctl_plugin_device{};
      std::string why;
      ctl_status* status = init_device(inst, physical[i], d, &why);
      if (status) {
        destroy_device(d);
        instance_destroy(inst);
        return status;
      }
      if (!why.empty()) {
        sdk::log(host, CTL_LOG_INFO, "%sskipping %s", kLogPrefix, why.c_str());
        destroy_device(d);
        continue;
      }
      ++inst->device_count;
    }
  }
  *out_instance = inst;
  return nullptr;
}

void instance_destroy(ctl_plugin_instance* inst) {
  if (!inst) return;
  const ctl_host_api* host = inst->host;
  for (uint32_t i = 0; i < inst->device_count; ++i) destroy_device(&inst->devices[i]);
  if (inst->devices) host->free(host->context, inst->devices);
  if (inst->messenger) {
    sdk::log(host, CTL_LOG_INFO, "%svalidation: %llu error(s), %llu warning(s)", kLogPrefix,
             static_cast<unsigned long long>(inst->validation_errors.load()),
             static_cast<unsigned long long>(inst->validation_warnings.load()));
    inst->fn.vkDestroyDebugUtilsMessengerEXT(inst->instance, inst->messenger, nullptr);
  }
  if (inst->instance) inst->fn.vkDestroyInstance(inst->instance, nullptr);
  close_loader(&inst->loader);
  host_delete(host, inst);
}

ctl_status* device_count(ctl_plugin_instance* instance, uint32_t* out_count) {
  if (!out_count) {
    return sdk::make_status(instance->host, CTL_STATUS_INVALID_ARGUMENT, "%sdevice_count: out_count is NULL",
                            kLogPrefix);
  }
  *out_count = instance->device_count;
  return nullptr;
}

ctl_status* device_get(ctl_plugin_instance* instance, uint32_t index, ctl_plugin_device** out_device) {
  if (!out_device) {
    return sdk::make_status(instance->host, CTL_STATUS_INVALID_ARGUMENT, "%sdevice_get: out_device is NULL",
                            kLogPrefix);
  }
  if (index >= instance->device_count) {
    return sdk::make_status(instance->host, CTL_STATUS_NOT_FOUND, "%sdevice_get: index %u, but there are %u devices",
                            kLogPrefix, index, instance->device_count);
  }
  *out_device = &instance->devices[index];
  return nullptr;
}

ctl_status* device_properties(ctl_plugin_device* device, ctl_plugin_device_properties* out) {
  if (!out) {
    return sdk::make_status(device->instance->host, CTL_STATUS_INVALID_ARGUMENT,
                            "%sdevice_properties: out_properties is NULL", kLogPrefix);
  }
  // Free memory from VK_EXT_memory_budget: the heap's budget less its usage, both of which
  // the driver keeps for this process. Without it the ABI's "unknown" (0).
  uint64_t free_bytes = 0;
  if (device->has_memory_budget) {
    VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
    VkPhysicalDeviceMemoryProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
    props.pNext = &budget;
    device->instance->fn.vkGetPhysicalDeviceMemoryProperties2(device->physical, &props);
    const uint32_t h = device->device_local_heap;
    free_bytes = budget.heapBudget[h] > budget.heapUsage[h] ? budget.heapBudget[h] - budget.heapUsage[h] : 0;
  }
  const size_t size = out->struct_size;
  auto fits = [size](size_t offset, size_t field) { return offset + field <= size; };
#define CTL_SET(field, value) \
  if (fits(offsetof(ctl_plugin_device_properties, field), sizeof out->field)) out->field = (value)
  CTL_SET(name, device->name.c_str());
  CTL_SET(vendor, device->vendor.c_str());
  CTL_SET(driver_version, device->driver_version.c_str());
  CTL_SET(kind, device->kind);
  CTL_SET(memory_total, device->memory_total);
  CTL_SET(memory_free, free_bytes);
  CTL_SET(compute_units, device->compute_units);
  CTL_SET(pci_bus_id, device->pci_bus_id.empty() ? nullptr : device->pci_bus_id.c_str());
  CTL_SET(numa_node, -1);
  CTL_SET(has_uuid, device->has_uuid);
  CTL_SET(dtype_mask, device->dtype_mask);
  CTL_SET(host_visible, false);  // no buffer_host_pointer: memory is reached through staging
  CTL_SET(max_work_group_size, device->max_work_group_size);
#undef CTL_SET
  if (fits(offsetof(ctl_plugin_device_properties, uuid), sizeof out->uuid)) {
    std::memcpy(out->uuid, device->uuid, sizeof out->uuid);
  }
  return nullptr;
}

}  // namespace catalyst::vulkan
