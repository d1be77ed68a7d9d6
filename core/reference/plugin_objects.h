// plugin_objects.h — the reference plugin's objects behind the opaque ctl_plugin_* handles
// (instance, device, buffer, stream, event) and the small helpers its entry points share.
// Internal to core/reference/.
#pragma once

#include <algorithm>
#include <cstdint>
#include <new>

#include "catalyst/sdk/status.hpp"
#include "catalyst_plugin.h"

namespace catalyst::reference {

struct Instance;

struct Device {
  Instance* instance;
};

struct Instance {
  const ctl_host_api* host;
  Device device;
};

// A magic number lets buffer handles of another kind (or freed ones, often) be refused.
constexpr uint32_t kBufferMagic = 0x52454642u;  // "REFB"

struct Buffer {
  uint32_t magic;
  unsigned char* data;
  uint64_t size;
  bool owned;  // false for buffer_wrap_host: the caller keeps the memory
};

// Work runs at call time, so a stream and an event only need to know their device; they
// are still real allocations so that leaking one shows up in the host's counters.
struct Stream {
  Device* device;
};

struct Event {
  Device* device;
};

inline const ctl_host_api* host_of(ctl_plugin_device* device) {
  return reinterpret_cast<Device*>(device)->instance->host;
}
inline const ctl_host_api* host_of(ctl_plugin_stream* stream) {
  return host_of(reinterpret_cast<ctl_plugin_device*>(reinterpret_cast<Stream*>(stream)->device));
}

// Allocates and constructs a T with the host allocator; nullptr when it is out of memory.
template <typename T>
T* host_new(const ctl_host_api* host, const T& value) {
  void* memory = host->alloc(host->context, sizeof(T), std::max(alignof(T), sizeof(void*)));
  return memory ? new (memory) T(value) : nullptr;
}

inline ctl_status* out_of_memory(const ctl_host_api* host, const char* what) {
  return sdk::make_status(host, CTL_STATUS_OUT_OF_MEMORY, "reference: cannot allocate %s", what);
}

inline ctl_status* null_argument(const ctl_host_api* host, const char* what) {
  return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "reference: %s is NULL", what);
}

// Buffer entries (buffers.cpp), for the table in reference_plugin.cpp.
ctl_status* buffer_allocate(ctl_plugin_device* device, uint64_t size, ctl_plugin_buffer** out_buffer);
void buffer_free(ctl_plugin_device* device, ctl_plugin_buffer* handle);
bool resolve_buffer(ctl_plugin_buffer* handle, unsigned char** data, uint64_t* size);
ctl_status* buffer_host_pointer(ctl_plugin_device* device, ctl_plugin_buffer* handle, void** out_pointer);
ctl_status* buffer_wrap_host(ctl_plugin_device* device, void* pointer, uint64_t size, ctl_plugin_buffer** out_buffer);
ctl_status* buffer_write(ctl_plugin_stream* stream, ctl_plugin_buffer* buffer, uint64_t offset, const void* source,
                         uint64_t size);
ctl_status* buffer_read(ctl_plugin_stream* stream, ctl_plugin_buffer* buffer, uint64_t offset, void* destination,
                        uint64_t size);
ctl_status* buffer_copy(ctl_plugin_stream* stream, ctl_plugin_buffer* source, uint64_t source_offset,
                        ctl_plugin_buffer* destination, uint64_t destination_offset, uint64_t size);
ctl_status* buffer_fill(ctl_plugin_stream* stream, ctl_plugin_buffer* buffer, uint64_t offset, uint64_t size,
                        const void* pattern, uint32_t pattern_size);

}  // namespace catalyst::reference
