// plugin.h — the plugin-side objects behind the ABI's opaque handles, and the entries of
// the function table that live in separate files.
#pragma once

#include <cstdint>
#include <vector>

#include "buffer_cache.h"
#include "catalyst/sdk/host_memory.hpp"
#include "catalyst_plugin.h"
#include "thread_pool.h"

struct hwloc_topology;

// The ABI declares these as opaque structs; the plugin gives them their bodies.
struct ctl_plugin_device {
  ctl_plugin_instance* instance;
  uint32_t index;  // cpu:<index>
  char name[256];
  char vendor[64];
  uint32_t compute_units;  // logical CPUs
  int32_t numa_node;
  bool whole_machine;                        // memory is the machine's (device_plan.h)
  uint64_t node_memory;                      // else its node's bytes (0: unknown)
  bool node_free_known;                      // the node is this machine's: its free memory can be read
  catalyst::cpu::ThreadPool* pool;           // owned; its workers run on this device's CPUs
  catalyst::cpu::BufferCache* buffer_cache;  // owned; large buffers (buffer_cache.h)
};

struct ctl_plugin_instance {
  const ctl_host_api* host;
  hwloc_topology* topology;                 // owned; for binding memory; may be null
  std::vector<ctl_plugin_device*> devices;  // owned; one per CATALYST_CPU_DEVICES (device_plan.h)
};

struct ctl_plugin_buffer {
  void* data;
  uint64_t size;
  bool owned;              // false for buffer_wrap_host: the caller keeps the memory
  size_t cached_capacity;  // non-zero: the memory came from the instance's BufferCache
};

struct ctl_plugin_stream {
  ctl_plugin_device* device;
};

struct ctl_plugin_event {
  ctl_plugin_device* device;
  bool recorded;
};

namespace catalyst::cpu {

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
ctl_status* buffer_host_pointer(ctl_plugin_device* device, ctl_plugin_buffer* buffer, void** out_pointer);
ctl_status* buffer_wrap_host(ctl_plugin_device* device, void* pointer, uint64_t size, ctl_plugin_buffer** out_buffer);
ctl_status* buffer_write(ctl_plugin_stream* stream, ctl_plugin_buffer* buffer, uint64_t offset, const void* source,
                         uint64_t size);
ctl_status* buffer_read(ctl_plugin_stream* stream, ctl_plugin_buffer* buffer, uint64_t offset, void* destination,
                        uint64_t size);
ctl_status* buffer_copy(ctl_plugin_stream* stream, ctl_plugin_buffer* source, uint64_t source_offset,
                        ctl_plugin_buffer* destination, uint64_t destination_offset, uint64_t size);
ctl_status* buffer_fill(ctl_plugin_stream* stream, ctl_plugin_buffer* buffer, uint64_t offset, uint64_t size,
                        const void* pattern, uint32_t pattern_size);
ctl_status* buffer_copy_peer(ctl_plugin_stream* stream, ctl_plugin_device* source_device, ctl_plugin_buffer* source,
                             uint64_t source_offset, ctl_plugin_buffer* destination, uint64_t destination_offset,
                             uint64_t size);

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

// plugin_entry.cpp: a status for a NULL handle argument, which carries no host table of
// its own; made through the host that ctl_plugin_query was given (NULL if it had none).
ctl_status* null_handle(const char* function, const char* argument);
// The host tables of live instances: a NULL handle carries no host of its own, so its
// error status is made through any live instance's host (the query's host is only valid
// during ctl_plugin_query and is never kept).
void register_host(const ctl_host_api* host);
void unregister_host(const ctl_host_api* host);

// The fixed prefix of every message this plugin writes.
inline constexpr const char* kLogPrefix = "cpu plugin: ";

}  // namespace catalyst::cpu
