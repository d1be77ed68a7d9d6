// host_device.hpp — the device side of a plugin whose device memory is host memory (a CPU
// backend, an emulator, an accelerator that computes in host memory): one device per instance,
// buffers taken from host->alloc (so the core counts them and finds leaks), and streams that
// run each call before returning, which keeps the asynchronous contract trivially. The plugin
// gives its name, its device properties and its op entries; the rest of the function table
// comes from here, as generic implementations a plugin that can do better replaces entry by
// entry (IREE's hal/utils). A device with memory of its own writes these entries itself, as
// the skeleton plugin (sdk/skeleton/) does.
//
//   const ctl_plugin_api kApi = sdk::host_device_api("mydevice", "0.1.0", device_properties,
//                                                    op_supports, op_execute);
//
// In the op entries, host_of(device) and host_of(stream) give the host table, host_buffer()
// a buffer's bytes and size (for OpCall's buffer_size and bind_buffer).
#pragma once

#include <cstdint>
#include <cstring>
#include <new>

#include "catalyst/sdk/host_memory.hpp"
#include "catalyst/sdk/status.hpp"
#include "catalyst_plugin.h"

namespace catalyst::sdk {

// What a host-memory buffer handle points at: its bytes (64-byte aligned) and their count.
struct HostBuffer {
  char* data;
  uint64_t size;
};

namespace host_device_detail {

struct Device {  // also the instance: one device per instance
  const ctl_host_api* host;
};
struct Stream {
  Device* device;
};
constexpr uint64_t kHeader = 64;  // the HostBuffer before the bytes, keeping them aligned

inline Device* device(ctl_plugin_device* d) {
  return reinterpret_cast<Device*>(d);
}

inline ctl_status* out_of_memory(const ctl_host_api* host, const char* what) {
  return make_status(host, CTL_STATUS_OUT_OF_MEMORY, "out of host memory for %s", what);
}

inline ctl_status* instance_create(const ctl_host_api* host, ctl_plugin_instance** out) {
  Device* d = host_new<Device>(host, host);
  if (!d) return out_of_memory(host, "the instance");
  *out = reinterpret_cast<ctl_plugin_instance*>(d);
  return nullptr;
}
inline void instance_destroy(ctl_plugin_instance* instance) {
  auto* d = reinterpret_cast<Device*>(instance);
  host_delete(d->host, d);
}
inline ctl_status* device_count(ctl_plugin_instance*, uint32_t* out_count) {
  *out_count = 1;
  return nullptr;
}
inline ctl_status* device_get(ctl_plugin_instance* instance, uint32_t index, ctl_plugin_device** out) {
  auto* d = reinterpret_cast<Device*>(instance);
  if (index != 0) return make_status(d->host, CTL_STATUS_NOT_FOUND, "no device %u: there is one, device 0", index);
  *out = reinterpret_cast<ctl_plugin_device*>(d);
  return nullptr;
}

// One allocation holds the HostBuffer and, kHeader bytes on, the buffer's bytes.
inline ctl_status* buffer_allocate(ctl_plugin_device* d, uint64_t size, ctl_plugin_buffer** out) {
  const ctl_host_api* host = device(d)->host;
  void* memory = size <= SIZE_MAX - kHeader ? host->alloc(host->context, kHeader + size, 64) : nullptr;
  if (!memory) return out_of_memory(host, "a buffer");
  auto* buffer = new (memory) HostBuffer{static_cast<char*>(memory) + kHeader, size};
  *out = reinterpret_cast<ctl_plugin_buffer*>(buffer);
  return nullptr;
}
// A HostBuffer alone, whose bytes are someone else's host memory (DLPack, or a fallback to
// another host-memory device sharing a tensor instead of copying it).
inline ctl_status* buffer_wrap_host(ctl_plugin_device* d, void* pointer, uint64_t size, ctl_plugin_buffer** out) {
  const ctl_host_api* host = device(d)->host;
  void* memory = host->alloc(host->context, sizeof(HostBuffer), alignof(HostBuffer));
  if (!memory) return out_of_memory(host, "a wrapped buffer");
  auto* buffer = new (memory) HostBuffer{static_cast<char*>(pointer), size};
  *out = reinterpret_cast<ctl_plugin_buffer*>(buffer);
  return nullptr;
}
// Either kind is one allocation that starts with its HostBuffer; wrapped bytes stay their
// owner's.
inline void buffer_free(ctl_plugin_device* d, ctl_plugin_buffer* buffer) {
  device(d)->host->free(device(d)->host->context, buffer);
}
inline ctl_status* buffer_host_pointer(ctl_plugin_device*, ctl_plugin_buffer* buffer, void** out) {
  *out = reinterpret_cast<HostBuffer*>(buffer)->data;
  return nullptr;
}
inline char* bytes(ctl_plugin_buffer* buffer, uint64_t offset) {
  return reinterpret_cast<HostBuffer*>(buffer)->data + offset;
}
inline ctl_status* buffer_write(ctl_plugin_stream*, ctl_plugin_buffer* buffer, uint64_t offset, const void* source,
                                uint64_t size) {
  if (size) std::memcpy(bytes(buffer, offset), source, size);  // source may be NULL when size is 0
  return nullptr;
}
inline ctl_status* buffer_read(ctl_plugin_stream*, ctl_plugin_buffer* buffer, uint64_t offset, void* destination,
                               uint64_t size) {
  if (size) std::memcpy(destination, bytes(buffer, offset), size);
  return nullptr;
}

inline ctl_status* stream_create(ctl_plugin_device* d, ctl_plugin_stream** out) {
  auto* stream = host_new<Stream>(device(d)->host, device(d));
  if (!stream) return out_of_memory(device(d)->host, "a stream");
  *out = reinterpret_cast<ctl_plugin_stream*>(stream);
  return nullptr;
}
inline void stream_destroy(ctl_plugin_stream* stream) {
  auto* s = reinterpret_cast<Stream*>(stream);
  host_delete(s->device->host, s);
}
inline ctl_status* stream_synchronize(ctl_plugin_stream*) {
  return nullptr;  // every call ran before op_execute returned
}

}  // namespace host_device_detail

inline const ctl_host_api* host_of(ctl_plugin_device* device) {
  return host_device_detail::device(device)->host;
}
inline const ctl_host_api* host_of(ctl_plugin_stream* stream) {
  return reinterpret_cast<host_device_detail::Stream*>(stream)->device->host;
}
inline const HostBuffer& host_buffer(const ctl_plugin_buffer* buffer) {
  return *reinterpret_cast<const HostBuffer*>(buffer);
}

// Writes `properties` into the core's *out, only as far as out->struct_size reaches (an older
// core's struct is smaller), keeping the core's struct_size and next. host_visible is set:
// the memory is the host's (DLPack exports it in place; a fallback to the CPU shares it).
inline void write_properties(ctl_plugin_device_properties properties, ctl_plugin_device_properties* out) {
  properties.host_visible = true;
  const size_t size = out->struct_size < sizeof properties ? out->struct_size : sizeof properties;
  properties.struct_size = out->struct_size;
  properties.next = out->next;
  std::memcpy(out, &properties, size);
}

// The function table of a host-memory plugin: the entries above, the plugin's own device
// properties and op entries, host pointers and wrapping, and NULL for the other optional
// entries (the core's defaults: copies through buffer_read / buffer_write, events by
// synchronizing). Set more after it if you provide them.
constexpr ctl_plugin_api host_device_api(const char* name, const char* version,
                                         ctl_status* (*device_properties)(ctl_plugin_device*,
                                                                          ctl_plugin_device_properties*),
                                         ctl_status* (*op_supports)(ctl_plugin_device*, const ctl_op_call*),
                                         ctl_status* (*op_execute)(ctl_plugin_stream*, const ctl_op_call*)) {
  namespace d = host_device_detail;
  ctl_plugin_api api{};
  api.struct_size = CTL_PLUGIN_API_STRUCT_SIZE;
  api.abi_major = CTL_ABI_VERSION_MAJOR;
  api.abi_minor = CTL_ABI_VERSION_MINOR;
  api.name = name;
  api.version = version;
  api.instance_create = d::instance_create;
  api.instance_destroy = d::instance_destroy;
  api.device_count = d::device_count;
  api.device_get = d::device_get;
  api.device_properties = device_properties;
  api.buffer_allocate = d::buffer_allocate;
  api.buffer_free = d::buffer_free;
  api.buffer_write = d::buffer_write;
  api.buffer_read = d::buffer_read;
  api.buffer_host_pointer = d::buffer_host_pointer;
  api.buffer_wrap_host = d::buffer_wrap_host;
  api.stream_create = d::stream_create;
  api.stream_destroy = d::stream_destroy;
  api.stream_synchronize = d::stream_synchronize;
  api.op_execute = op_execute;
  api.op_supports = op_supports;
  return api;
}

}  // namespace catalyst::sdk
