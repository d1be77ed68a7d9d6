// device.cpp — instances and devices: every device of every OpenCL platform the ICD loader
// reports becomes one Catalyst device, with the properties the driver tells us.
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <vector>

#include "catalyst/sdk/status.hpp"
#include "cl_errors.h"
#include "kernel_cache.h"
#include "plugin.h"

namespace catalyst::opencl {
namespace {

std::string device_string(cl_device_id device, cl_device_info what) {
  size_t size = 0;
  if (clGetDeviceInfo(device, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string text(size, '\0');
  if (clGetDeviceInfo(device, what, size, text.data(), nullptr) != CL_SUCCESS) return {};
  text.resize(std::strlen(text.c_str()));
  return text;
}

std::string platform_string(cl_platform_id platform, cl_platform_info what) {
  size_t size = 0;
  if (clGetPlatformInfo(platform, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
  std::string text(size, '\0');
  if (clGetPlatformInfo(platform, what, size, text.data(), nullptr) != CL_SUCCESS) return {};
  text.resize(std::strlen(text.c_str()));
  return text;
}

template <class T>
T device_value(cl_device_id device, cl_device_info what, T fallback) {
  T value{};
  return clGetDeviceInfo(device, what, sizeof value, &value, nullptr) == CL_SUCCESS ? value : fallback;
}

bool has_extension(const std::string& extensions, const char* name) {
  const std::string padded = " " + extensions + " ";
  return padded.find(std::string(" ") + name + " ") != std::string::npos;
}

// "dddd:bb:dd.f" from the Khronos extension, or from NVIDIA's or AMD's own queries.
std::string pci_bus_id(cl_device_id device, const std::string& extensions) {
  char text[32];
  if (has_extension(extensions, "cl_khr_pci_bus_info")) {
    cl_device_pci_bus_info_khr info{};
    if (clGetDeviceInfo(device, CL_DEVICE_PCI_BUS_INFO_KHR, sizeof info, &info, nullptr) == CL_SUCCESS) {
      std::snprintf(text, sizeof text, "%04x:%02x:%02x.%x", info.pci_domain, info.pci_bus, info.pci_device,
                    info.pci_function);
      return text;
    }
  }
  if (has_extension(extensions, "cl_nv_device_attribute_query")) {
    cl_uint bus = 0, slot = 0, domain = 0;
    if (clGetDeviceInfo(device, CATALYST_CL_DEVICE_PCI_BUS_ID_NV, sizeof bus, &bus, nullptr) == CL_SUCCESS &&
        clGetDeviceInfo(device, CATALYST_CL_DEVICE_PCI_SLOT_ID_NV, sizeof slot, &slot, nullptr) == CL_SUCCESS) {
      // Older NVIDIA drivers have no domain query; domain 0 is then the only one.
      if (clGetDeviceInfo(device, CATALYST_CL_DEVICE_PCI_DOMAIN_ID_NV, sizeof domain, &domain, nullptr) != CL_SUCCESS) {
        domain = 0;
      }
      // The slot id packs device (bits 3-7) and function (bits 0-2).
      std::snprintf(text, sizeof text, "%04x:%02x:%02x.%x", domain, bus & 0xff, (slot >> 3) & 0x1f, slot & 7);
      return text;
    }
  }
  if (has_extension(extensions, "cl_amd_device_attribute_query")) {
    struct {
      cl_uint type;
      cl_uint data[5];
    } topology{};
    if (clGetDeviceInfo(device, CL_DEVICE_TOPOLOGY_AMD, sizeof topology, &topology, nullptr) == CL_SUCCESS &&
        topology.type == 1) {  // CL_DEVICE_TOPOLOGY_TYPE_PCIE_AMD: bytes bus, device, function
      // In cl_device_topology_amd, bus, device and function follow 17 unused bytes.
      const auto* bytes = reinterpret_cast<const unsigned char*>(topology.data);
      std::snprintf(text, sizeof text, "0000:%02x:%02x.%x", bytes[17], bytes[18], bytes[19]);
      return text;
    }
  }
  return {};
}

// Bytes free on the device now, or 0 for "unknown" (catalyst_plugin.h). Core OpenCL has no
// such query, and NVIDIA's driver has no extension for it; AMD's driver answers
// CL_DEVICE_GLOBAL_FREE_MEMORY_AMD in KiB. Total minus our own allocations would claim the
// whole device is free whatever other processes hold, which is worse than "unknown".
uint64_t free_memory(const ctl_plugin_device* device) {
  if (!device->has_free_memory_amd) return 0;
  size_t kib[2] = {0, 0};  // total free, largest free block; some drivers write only the first
  size_t size = 0;
  if (clGetDeviceInfo(device->id, CL_DEVICE_GLOBAL_FREE_MEMORY_AMD, sizeof kib, kib, &size) != CL_SUCCESS ||
      size < sizeof kib[0]) {
    return 0;
  }
  return static_cast<uint64_t>(kib[0]) * 1024;
}

ctl_status* init_device(const ctl_host_api* host, cl_platform_id platform, cl_device_id id, ctl_plugin_device* d) {
  d->platform = platform;
  d->id = id;
  d->name = device_string(id, CL_DEVICE_NAME);
  d->vendor = device_string(id, CL_DEVICE_VENDOR);
  d->driver_version = device_string(id, CL_DRIVER_VERSION);
  d->platform_name = platform_string(platform, CL_PLATFORM_NAME);
  const std::string extensions = device_string(id, CL_DEVICE_EXTENSIONS);
  const auto type = device_value<cl_device_type>(id, CL_DEVICE_TYPE, CL_DEVICE_TYPE_DEFAULT);
  d->kind = (type & CL_DEVICE_TYPE_GPU)   ? CTL_DEVICE_KIND_GPU
            : (type & CL_DEVICE_TYPE_CPU) ? CTL_DEVICE_KIND_CPU
                                          : CTL_DEVICE_KIND_ACCELERATOR;
  d->memory_total = device_value<cl_ulong>(id, CL_DEVICE_GLOBAL_MEM_SIZE, 0);
  d->max_allocation = device_value<cl_ulong>(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, 0);
  d->compute_units = device_value<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS, 1);
  d->max_work_group_size = device_value<size_t>(id, CL_DEVICE_MAX_WORK_GROUP_SIZE, 1);
  d->local_memory_size = device_value<cl_ulong>(id, CL_DEVICE_LOCAL_MEM_SIZE, 0);
  d->mem_base_align_bytes = device_value<cl_uint>(id, CL_DEVICE_MEM_BASE_ADDR_ALIGN, 1024) / 8;
  d->has_fp64 = has_extension(extensions, "cl_khr_fp64") ||
                device_value<cl_device_fp_config>(id, CL_DEVICE_DOUBLE_FP_CONFIG, 0) != 0;
  d->fp32_correct_divide_sqrt =
      (device_value<cl_device_fp_config>(id, CL_DEVICE_SINGLE_FP_CONFIG, 0) & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT) != 0;
  d->pci_bus_id = pci_bus_id(id, extensions);
  d->has_free_memory_amd = has_extension(extensions, "cl_amd_device_attribute_query");
  d->has_uuid = has_extension(extensions, "cl_khr_device_uuid") &&
                clGetDeviceInfo(id, CL_DEVICE_UUID_KHR, sizeof d->uuid, d->uuid, nullptr) == CL_SUCCESS;
  // Every device computes in the required dtypes and in i8, u8, f16 and bf16: both 16-bit
  // floats are stored as 16 bits and computed in f32 (f16 through vload_half and
  // vstore_half_rte, core OpenCL 1.2, so no cl_khr_fp16 is needed: PoCL and NVIDIA's
  // driver have none). f64 needs the driver's cl_khr_fp64.
  d->dtype_mask = CTL_DTYPE_BIT(CTL_DTYPE_F32) | CTL_DTYPE_BIT(CTL_DTYPE_I32) | CTL_DTYPE_BIT(CTL_DTYPE_I64) |
                  CTL_DTYPE_BIT(CTL_DTYPE_BOOL) | CTL_DTYPE_BIT(CTL_DTYPE_I8) | CTL_DTYPE_BIT(CTL_DTYPE_U8) |
                  CTL_DTYPE_BIT(CTL_DTYPE_F16) | CTL_DTYPE_BIT(CTL_DTYPE_BF16);
  if (d->has_fp64) d->dtype_mask |= CTL_DTYPE_BIT(CTL_DTYPE_F64);
  d->cache_identity = d->platform_name + "|" + platform_string(platform, CL_PLATFORM_VERSION) + "|" + d->name + "|" +
                      d->vendor + "|" + d->driver_version + "|" + device_string(id, CL_DEVICE_VERSION);
  cl_int error = CL_SUCCESS;
  d->context = clCreateContext(nullptr, 1, &id, nullptr, nullptr, &error);
  if (error != CL_SUCCESS) return cl_fail(host, error, "clCreateContext", d->name.c_str());
  d->kernels = new KernelCache(host, d);
  return nullptr;
}

void destroy_device(ctl_plugin_device* d) {
  delete d->kernels;
  d->kernels = nullptr;
  if (d->context) clReleaseContext(d->context);
  d->context = nullptr;
}

ctl_status* create_devices(const ctl_host_api* host, ctl_plugin_instance* instance) {
  cl_uint platform_count = 0;
  const cl_int listed = clGetPlatformIDs(0, nullptr, &platform_count);
  // The ICD loader answers CL_PLATFORM_NOT_FOUND_KHR when no driver is installed: that is
  // a machine without OpenCL, not an error. The plugin loads and has no devices.
  if (listed == -1001 || platform_count == 0) {
    sdk::log(host, CTL_LOG_INFO, "%sno OpenCL platform found (is an ICD such as pocl-opencl-icd installed?)",
             kLogPrefix);
    return nullptr;
  }
  if (listed != CL_SUCCESS) return cl_fail(host, listed, "clGetPlatformIDs");
  std::vector<cl_platform_id> platforms(platform_count);
  CTL_CL_RETURN_IF_ERROR(host, clGetPlatformIDs(platform_count, platforms.data(), nullptr));
  std::vector<std::pair<cl_platform_id, cl_device_id>> found;
  for (cl_platform_id platform : platforms) {
    cl_uint count = 0;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS || count == 0) continue;
    std::vector<cl_device_id> ids(count);
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, ids.data(), nullptr) != CL_SUCCESS) continue;
    for (cl_device_id id : ids) {
      // A device without a compiler cannot build our kernels from source.
      if (!device_value<cl_bool>(id, CL_DEVICE_COMPILER_AVAILABLE, CL_FALSE) ||
          !device_value<cl_bool>(id, CL_DEVICE_AVAILABLE, CL_FALSE)) {
        sdk::log(host, CTL_LOG_INFO, "%sskipping %s: not available or no compiler", kLogPrefix,
                 device_string(id, CL_DEVICE_NAME).c_str());
        continue;
      }
      found.emplace_back(platform, id);
    }
  }
  if (found.empty()) return nullptr;
  void* memory = host->alloc(host->context, sizeof(ctl_plugin_device) * found.size(), alignof(ctl_plugin_device));
  if (!memory) return sdk::make_status(host, CTL_STATUS_OUT_OF_MEMORY, "%sno memory for the device list", kLogPrefix);
  instance->devices = static_cast<ctl_plugin_device*>(memory);
  for (size_t i = 0; i < found.size(); ++i) {
    ctl_plugin_device* d = new (&instance->devices[i]) ctl_plugin_device{};
    d->instance = instance;
    instance->device_count = static_cast<uint32_t>(i + 1);
    CTL_SDK_RETURN_IF_ERROR(init_device(host, found[i].first, found[i].second, d));
  }
  return nullptr;
}

}  // namespace

ctl_status* instance_create(const ctl_host_api* host, ctl_plugin_instance** out_instance) {
  if (!out_instance) {
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%sinstance_create: out_instance is NULL", kLogPrefix);
  }
  auto* instance = host_new<ctl_plugin_instance>(host);
  if (!instance) return sdk::make_status(host, CTL_STATUS_OUT_OF_MEMORY, "%sno memory for the instance", kLogPrefix);
  instance->host = host;
  ctl_status* status = nullptr;
  try {
    // PoCL initialises its devices lazily inside the first platform and device queries, and
    // two threads doing that at once crash in it (seen: clGetDeviceInfo reading a name not
    // yet written, when two runtimes were created concurrently). Discovery is rare and
    // short, so every instance finds its devices one at a time.
    static std::mutex discovery_mutex;
    std::lock_guard lock(discovery_mutex);
    status = create_devices(host, instance);
  } catch (const std::exception& e) {
    status = sdk::make_status(host, CTL_STATUS_INTERNAL, "%sfinding devices: %s", kLogPrefix, e.what());
  }
  if (status) {
    instance_destroy(instance);
    return status;
  }
  *out_instance = instance;
  return nullptr;
}

void instance_destroy(ctl_plugin_instance* instance) {
  if (!instance) return;
  const ctl_host_api* host = instance->host;
  for (uint32_t i = 0; i < instance->device_count; ++i) {
    destroy_device(&instance->devices[i]);
    instance->devices[i].~ctl_plugin_device();
  }
  if (instance->devices) host->free(host->context, instance->devices);
  host_delete(host, instance);
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
    return sdk::make_status(instance->host, CTL_STATUS_NOT_FOUND, "%sdevice index %u is past the %u device(s)",
                            kLogPrefix, index, instance->device_count);
  }
  *out_device = &instance->devices[index];
  return nullptr;
}

ctl_status* device_properties(ctl_plugin_device* device, ctl_plugin_device_properties* out_properties) {
  const ctl_host_api* host = device->instance->host;
  if (!out_properties || out_properties->struct_size < sizeof(size_t)) {
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%sdevice_properties: out_properties is %s", kLogPrefix,
                            out_properties ? "too small" : "NULL");
  }
  ctl_plugin_device_properties full{};
  full.name = device->name.c_str();
  full.vendor = device->vendor.c_str();
  full.driver_version = device->driver_version.c_str();
  full.kind = device->kind;
  full.memory_total = device->memory_total;
  full.memory_free = free_memory(device);
  full.compute_units = device->compute_units;
  full.pci_bus_id = device->pci_bus_id.empty() ? nullptr : device->pci_bus_id.c_str();
  full.numa_node = -1;
  full.has_uuid = device->has_uuid;
  if (device->has_uuid) std::memcpy(full.uuid, device->uuid, sizeof full.uuid);
  full.dtype_mask = device->dtype_mask;
  full.host_visible = false;
  full.max_work_group_size = static_cast<uint32_t>(device->max_work_group_size);
  // An older core passes a smaller struct: write only what it has room for, and keep its
  // own struct_size and next.
  const size_t caller_size = out_properties->struct_size;
  const void* next =
      caller_size >= offsetof(ctl_plugin_device_properties, next) + sizeof(void*) ? out_properties->next : nullptr;
  std::memcpy(out_properties, &full, caller_size < sizeof full ? caller_size : sizeof full);
  out_properties->struct_size = caller_size;
  if (caller_size >= offsetof(ctl_plugin_device_properties, next) + sizeof(void*)) out_properties->next = next;
  return nullptr;
}

}  // namespace catalyst::opencl
