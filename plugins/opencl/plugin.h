// plugin.h — the plugin-side objects behind the ABI's opaque handles, and the entries of
// the function table that live in separate files.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "catalyst/sdk/host_memory.hpp"
#include "catalyst_plugin.h"
#include "opencl_api.h"

namespace catalyst::opencl {
class KernelCache;
}

// The ABI declares these as opaque structs; the plugin gives them their bodies.
struct ctl_plugin_device {
  ctl_plugin_instance* instance;
  cl_platform_id platform;
  cl_device_id id;
  cl_context context;  // one context per device: buffers never cross devices
  std::string name, vendor, driver_version, platform_name, pci_bus_id;
  std::string cache_identity;  // platform, device and driver: part of every disk-cache key
  ctl_device_kind kind;
  uint64_t memory_total;
  uint64_t max_allocation;
  uint32_t compute_units;
  size_t max_work_group_size;
  uint64_t local_memory_size;
  uint32_t mem_base_align_bytes;
  bool has_fp64;
  bool fp32_correct_divide_sqrt;  // CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT
  bool has_uuid;
  uint8_t uuid[16];
  uint32_t dtype_mask;
  bool has_free_memory_amd = false;          // cl_amd_device_attribute_query: the one way OpenCL tells free memory
  std::atomic<uint64_t> bytes_allocated{0};  // this instance's own allocations
  catalyst::opencl::KernelCache* kernels;    // owned; programs built for this device
};

struct ctl_plugin_instance {
  const ctl_host_api* host;
  uint32_t device_count;
  ctl_plugin_device* devices;  // device_count entries, host-allocated
};

struct ctl_plugin_buffer {
  cl_mem mem;  // NULL for a zero-byte buffer: OpenCL has no empty buffers
  uint64_t size;
};

struct ctl_plugin_stream {
  ctl_plugin_device* device;
  cl_command_queue queue;  // in order: the stream's order is the queue's
};

struct ctl_plugin_event {
  ctl_plugin_device* device;
  std::mutex mutex;
  cl_event marker;  // the last record's marker, or NULL before the first record
};

namespace catalyst::opencl {

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
inline constexpr const char* kLogPrefix = "opencl plugin: ";

}  // namespace catalyst::opencl
