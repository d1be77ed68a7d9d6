// plugin.h — the plugin-side objects behind the ABI's opaque handles, and the entries of
// the function table that live in separate files.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "catalyst/sdk/host_memory.hpp"
#include "catalyst_plugin.h"
#include "faults.h"
#include "memory.h"
#include "timeline.h"
#include "vk_api.h"

namespace catalyst::vulkan {
class Pipelines;
struct Batch;

}  // namespace catalyst::vulkan

struct ctl_plugin_device {
  ctl_plugin_instance* instance;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  catalyst::vulkan::DeviceFunctions fn;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t queue_family = 0;
  std::mutex queue_mutex;  // vkQueueSubmit needs the queue externally synchronised

  std::string name, vendor, driver_version, pci_bus_id;
  ctl_device_kind kind = CTL_DEVICE_KIND_GPU;
  uint32_t vendor_id = 0, device_id = 0, driver_version_raw = 0;
  uint8_t pipeline_cache_uuid[VK_UUID_SIZE] = {};
  bool has_uuid = false;
  uint8_t uuid[16] = {};
  uint32_t dtype_mask = 0;
  uint32_t compute_units = 0;
  uint64_t memory_total = 0;          // the largest device-local heap
  uint32_t device_local_heap = 0;     // its index
  bool has_memory_budget = false;     // VK_EXT_memory_budget
  bool has_push_descriptors = false;  // VK_KHR_push_descriptor (and not turned off)
  bool has_subgroup_arithmetic = false;
  bool f64_denormals = false;  // shaderDenormPreserveFloat64: subnormal doubles survive arithmetic
  uint32_t subgroup_size = 1;
  // Limits every dispatch and allocation respects.
  uint64_t max_allocation = 0;      // maxMemoryAllocationSize
  uint64_t max_storage_range = 0;   // maxStorageBufferRange
  uint64_t storage_alignment = 16;  // minStorageBufferOffsetAlignment
  uint32_t max_work_group_size = 1;
  uint32_t max_group_count_x = 65535;
  uint32_t shared_memory = 16384;
  uint32_t device_memory_type = 0;  // device-local storage buffers
  uint32_t host_memory_type = 0;    // host-visible, coherent: staging and parameters
  bool host_memory_cached = false;

  catalyst::vulkan::Memory* memory = nullptr;        // owned
  catalyst::vulkan::Pipelines* pipelines = nullptr;  // owned
  catalyst::vulkan::FaultInjector faults;
  std::atomic<bool> lost{false};  // VK_ERROR_DEVICE_LOST seen: every later call fails

  std::mutex streams_mutex;
  std::vector<ctl_plugin_stream*> streams;  // live streams, for deferred frees
};

struct ctl_plugin_instance {
  const ctl_host_api* host;
  catalyst::vulkan::LoaderFunctions loader;
  catalyst::vulkan::InstanceFunctions fn;
  VkInstance instance = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  std::atomic<uint64_t> validation_errors{0}, validation_warnings{0};
  uint32_t device_count = 0;
  ctl_plugin_device* devices = nullptr;  // device_count entries
};

struct ctl_plugin_buffer {
  catalyst::vulkan::Allocation allocation;
  uint64_t size;
};

struct ctl_plugin_stream {
  ctl_plugin_device* device;
  std::mutex mutex;
  VkCommandPool pool = VK_NULL_HANDLE;
  catalyst::vulkan::TimelineRef timeline;
  uint64_t submitted = 0;                              // value of the last submission
  std::atomic<uint64_t> horizon{0};                    // the value that covers all recorded work
  catalyst::vulkan::Batch* open = nullptr;             // the batch being recorded, or NULL
  std::deque<catalyst::vulkan::Batch*> in_flight;      // submitted, oldest first
  std::vector<catalyst::vulkan::Batch*> idle;          // finished, ready for reuse
  std::vector<catalyst::vulkan::TimelinePoint> waits;  // for the next submission (events)
};

struct ctl_plugin_event {
  ctl_plugin_device* device;
  std::mutex mutex;
  catalyst::vulkan::TimelinePoint point;  // empty before the first record
};

namespace catalyst::vulkan {

using sdk::host_delete;
using sdk::host_new;

// device.cpp
ctl_status* instance_create(const ctl_host_api* host, ctl_plugin_instance** out_instance);
void instance_destroy(ctl_plugin_instance* instance);
ctl_status* device_count(ctl_plugin_instance* instance, uint32_t* out_count);
ctl_status* device_get(ctl_plugin_instance* instance, uint32_t index, ctl_plugin_device** out_device);
ctl_status* device_properties(ctl_plugin_device* device, ctl_plugin_device_properties* out_properties);

// buffers.cpp
ctl_status* buffer_allocate(ctl_plugin_device* device, uint64_t size, ctl_plugin_buffer** out_buffer);
void buffer_free(ctl_plugin_device* device, ctl_plugin_buffer* buffer);
ctl_status* buffer_write(ctl_plugin_stream* stream, ctl_plugin_buffer* buffer, uint64_t offset, const void* source,
                         uint64_t size);
ctl_status* buffer_read(ctl_plugin_stream* stream, ctl_plugin_buffer* buffer, uint64_t offset, void* destination,
                        uint64_t size);
ctl_status* buffer_copy(ctl_plugin_stream* stream, ctl_plugin_buffer* source, uint64_t source_offset,
                        ctl_plugin_buffer* destination, uint64_t destination_offset, uint64_t size);
ctl_status* buffer_fill(ctl_plugin_stream* stream, ctl_plugin_buffer* buffer, uint64_t offset, uint64_t size,
                        const void* pattern, uint32_t pattern_size);

// streams.cpp
ctl_status* stream_create(ctl_plugin_device* device, ctl_plugin_stream** out_stream);
void stream_destroy(ctl_plugin_stream* stream);
ctl_status* stream_synchronize(ctl_plugin_stream* stream);
ctl_status* event_create(ctl_plugin_device* device, ctl_plugin_event** out_event);
void event_destroy(ctl_plugin_event* event);
ctl_status* event_record(ctl_plugin_event* event, ctl_plugin_stream* stream);
ctl_status* stream_wait_event(ctl_plugin_stream* stream, ctl_plugin_event* event);
ctl_status* event_synchronize(ctl_plugin_event* event);

// op_dispatch.cpp
ctl_status* op_supports(ctl_plugin_device* device, const ctl_op_call* call);
ctl_status* op_execute(ctl_plugin_stream* stream, const ctl_op_call* call);

// The fixed prefix of every message this plugin writes.
inline constexpr const char* kLogPrefix = "vulkan plugin: ";

// errors.cpp: a status for a failed Vulkan call ("vulkan plugin: <what>: <call> failed:
// <NAME> (<code>)"); VK_ERROR_DEVICE_LOST also marks the device lost for good.
ctl_status* vk_fail(ctl_plugin_device* device, VkResult result, const char* call, const char* what);
// The status every call on a lost device returns.
ctl_status* lost_status(const ctl_plugin_device* device, const char* what);

}  // namespace catalyst::vulkan

// Returns a DEVICE_LOST status from the enclosing entry when `device` was lost.
#define CTL_VK_RETURN_IF_LOST(device, what)                                                                   \
  do {                                                                                                        \
    if ((device)->lost.load(std::memory_order_relaxed)) return ::catalyst::vulkan::lost_status(device, what); \
  } while (0)
