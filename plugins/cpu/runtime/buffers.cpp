// buffers.cpp — device buffers are host memory from the host allocator; transfers are
// plain memcpy/fill, done before returning (the asynchronous contract allows that).
#include <cstring>

#include "catalyst/sdk/status.hpp"
#include "plugin.h"

namespace catalyst::cpu {
namespace {

const ctl_host_api* host_of(ctl_plugin_device* device) {
  return device->instance->host;
}
const ctl_host_api* host_of(ctl_plugin_stream* stream) {
  return stream->device->instance->host;
}

// [offset, offset + size) inside the buffer, without overflowing.
bool in_bounds(const ctl_plugin_buffer* buffer, uint64_t offset, uint64_t size) {
  return offset <= buffer->size && size <= buffer->size - offset;
}

ctl_status* check_range(const ctl_host_api* host, const char* what, const char* name, const ctl_plugin_buffer* buffer,
                        uint64_t offset, uint64_t size) {
  if (!buffer) return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%s%s: %s is NULL", kLogPrefix, what, name);
  if (!in_bounds(buffer, offset, size)) {
    return sdk::make_status(host, CTL_STATUS_OUT_OF_RANGE,
                            "%s%s: %s range [%llu, %llu + %llu) is outside the buffer of %llu bytes", kLogPrefix, what,
                            name, static_cast<unsigned long long>(offset), static_cast<unsigned long long>(offset),
                            static_cast<unsigned long long>(size), static_cast<unsigned long long>(buffer->size));
  }
  return nullptr;
}

}  // namespace

ctl_status* buffer_allocate(ctl_plugin_device* device, uint64_t size, ctl_plugin_buffer** out_buffer) {
  if (!device) return null_handle("buffer_allocate", "device");
  const ctl_host_api* host = host_of(device);
  if (!out_buffer)
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%sbuffer_allocate: out_buffer is NULL", kLogPrefix);
  if (size > SIZE_MAX - 64) {
    return sdk::make_status(host, CTL_STATUS_OUT_OF_MEMORY, "%sbuffer_allocate: size %llu does not fit in memory",
                            kLogPrefix, static_cast<unsigned long long>(size));
  }
  // Large buffers come from the device's cache (buffer_cache.h), page aligned and bound to
  // the device's NUMA node where it has one; others from the host allocator. A zero-size
  // buffer still gets a distinct pointer so that host_pointer is never NULL.
  BufferCache* cache = device->buffer_cache;
  size_t capacity = 0;
  void* data = cache && size >= BufferCache::kMinBytes
                   ? cache->take(static_cast<size_t>(size), &capacity)
                   : host->alloc(host->context, size ? static_cast<size_t>(size) : 1u, 64);
  if (!data) {
    return sdk::make_status(host, CTL_STATUS_OUT_OF_MEMORY, "%sbuffer_allocate: could not allocate %llu bytes",
                            kLogPrefix, static_cast<unsigned long long>(size));
  }
  ctl_plugin_buffer* buffer = host_new<ctl_plugin_buffer>(host, data, size, true, capacity);
  if (!buffer) {
    if (capacity) {
      cache->give(data, capacity);
    } else {
      host->free(host->context, data);
    }
    return sdk::make_status(host, CTL_STATUS_OUT_OF_MEMORY, "%sbuffer_allocate: out of host memory", kLogPrefix);
  }
  *out_buffer = buffer;
  return nullptr;
}

void buffer_free(ctl_plugin_device* device, ctl_plugin_buffer* buffer) {
  if (!device || !buffer) return;
  const ctl_host_api* host = host_of(device);
  if (buffer->cached_capacity) {
    device->buffer_cache->give(buffer->data, buffer->cached_capacity);
  } else if (buffer->owned) {
    host->free(host->context, buffer->data);
  }
  host_delete(host, buffer);
}

ctl_status* buffer_host_pointer(ctl_plugin_device* device, ctl_plugin_buffer* buffer, void** out_pointer) {
  if (!device) return null_handle("buffer_host_pointer", "device");
  const ctl_host_api* host = host_of(device);
  if (!buffer)
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%sbuffer_host_pointer: buffer is NULL", kLogPrefix);
  if (!out_pointer)
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%sbuffer_host_pointer: out_pointer is NULL",
                            kLogPrefix);
  *out_pointer = buffer->data;
  return nullptr;
}

ctl_status* buffer_wrap_host(ctl_plugin_device* device, void* pointer, uint64_t size, ctl_plugin_buffer** out_buffer) {
  if (!device) return null_handle("buffer_wrap_host", "device");
  const ctl_host_api* host = host_of(device);
  if (!out_buffer)
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%sbuffer_wrap_host: out_buffer is NULL", kLogPrefix);
  if (!pointer && size > 0) {
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%sbuffer_wrap_host: pointer is NULL with size %llu",
                            kLogPrefix, static_cast<unsigned long long>(size));
  }
  ctl_plugin_buffer* buffer = host_new<ctl_plugin_buffer>(host, pointer, size, false, size_t{0});
  if (!buffer)
    return sdk::make_status(host, CTL_STATUS_OUT_OF_MEMORY, "%sbuffer_wrap_host: out of host memory", kLogPrefix);
  *out_buffer = buffer;
  return nullptr;
}

ctl_status* buffer_write(ctl_plugin_stream* stream, ctl_plugin_buffer* buffer, uint64_t offset, const void* source,
                         uint64_t size) {
  if (!stream) return null_handle("buffer_write", "stream");
  const ctl_host_api* host = host_of(stream);
  CTL_SDK_RETURN_IF_ERROR(check_range(host, "buffer_write", "buffer", buffer, offset, size));
  if (size == 0) return nullptr;
  if (!source) return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%sbuffer_write: source is NULL", kLogPrefix);
  std::memcpy(static_cast<char*>(buffer->data) + offset, source, size);
  return nullptr;
}

ctl_status* buffer_read(ctl_plugin_stream* stream, ctl_plugin_buffer* buffer, uint64_t offset, void* destination,
                        uint64_t size) {
  if (!stream) return null_handle("buffer_read", "stream");
  const ctl_host_api* host = host_of(stream);
  CTL_SDK_RETURN_IF_ERROR(check_range(host, "buffer_read", "buffer", buffer, offset, size));
  if (size == 0) return nullptr;
  if (!destination)
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%sbuffer_read: destination is NULL", kLogPrefix);
  std::memcpy(destination, static_cast<const char*>(buffer->data) + offset, size);
  return nullptr;
}

ctl_status* buffer_copy(ctl_plugin_stream* stream, ctl_plugin_buffer* source, uint64_t source_offset,
                        ctl_plugin_buffer* destination, uint64_t destination_offset, uint64_t size) {
  if (!stream) return null_handle("buffer_copy", "stream");
  const ctl_host_api* host = host_of(stream);
  CTL_SDK_RETURN_IF_ERROR(check_range(host, "buffer_copy", "source", source, source_offset, size));
  CTL_SDK_RETURN_IF_ERROR(check_range(host, "buffer_copy", "destination", destination, destination_offset, size));
  if (size == 0) return nullptr;
  // The contract forbids overlap; memmove makes an overlapping call harmless anyway.
  std::memmove(static_cast<char*>(destination->data) + destination_offset,
               static_cast<const char*>(source->data) + source_offset, size);
  return nullptr;
}

ctl_status* buffer_copy_peer(ctl_plugin_stream* stream, ctl_plugin_device* source_device, ctl_plugin_buffer* source,
                             uint64_t source_offset, ctl_plugin_buffer* destination, uint64_t destination_offset,
                             uint64_t size) {
  if (!stream) return null_handle("buffer_copy_peer", "stream");
  const ctl_host_api* host = host_of(stream);
  if (!source_device) {
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%sbuffer_copy_peer: source_device is NULL", kLogPrefix);
  }
  // Devices of another instance (another runtime) may have been destroyed under us.
  if (source_device->instance != stream->device->instance) {
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT,
                            "%sbuffer_copy_peer: source_device cpu:%u belongs to another instance than the stream's "
                            "device cpu:%u",
                            kLogPrefix, source_device->index, stream->device->index);
  }
  CTL_SDK_RETURN_IF_ERROR(check_range(host, "buffer_copy_peer", "source", source, source_offset, size));
  CTL_SDK_RETURN_IF_ERROR(check_range(host, "buffer_copy_peer", "destination", destination, destination_offset, size));
  if (size == 0) return nullptr;
  // Work on every device of this plugin is done when its call returns, and the core has
  // made the stream wait for the source's writer: the copy can run now. The destination
  // device's threads copy, so that across NUMA nodes the pages are written locally.
  const char* from = static_cast<const char*>(source->data) + source_offset;
  char* to = static_cast<char*>(destination->data) + destination_offset;
  constexpr int64_t kGrainBytes = int64_t{1} << 20;
  parallel_for(stream->device->pool, static_cast<int64_t>(size), kGrainBytes,
               [&](int64_t begin, int64_t end, unsigned) {
                 std::memmove(to + begin, from + begin, static_cast<size_t>(end - begin));
               });
  return nullptr;
}

ctl_status* buffer_fill(ctl_plugin_stream* stream, ctl_plugin_buffer* buffer, uint64_t offset, uint64_t size,
                        const void* pattern, uint32_t pattern_size) {
  if (!stream) return null_handle("buffer_fill", "stream");
  const ctl_host_api* host = host_of(stream);
  CTL_SDK_RETURN_IF_ERROR(check_range(host, "buffer_fill", "buffer", buffer, offset, size));
  if (pattern_size != 1 && pattern_size != 2 && pattern_size != 4 && pattern_size != 8) {
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%sbuffer_fill: pattern_size %u is not 1, 2, 4 or 8",
                            kLogPrefix, pattern_size);
  }
  if (size % pattern_size != 0) {
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT,
                            "%sbuffer_fill: size %llu is not a multiple of pattern_size %u", kLogPrefix,
                            static_cast<unsigned long long>(size), pattern_size);
  }
  if (size == 0) return nullptr;
  if (!pattern)
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%sbuffer_fill: pattern is NULL", kLogPrefix);
  char* out = static_cast<char*>(buffer->data) + offset;
  // Write one pattern, then double the filled prefix: O(log n) memcpy calls.
  std::memcpy(out, pattern, pattern_size);
  uint64_t filled = pattern_size;
  while (filled < size) {
    const uint64_t chunk = filled < size - filled ? filled : size - filled;
    std::memcpy(out + filled, out, chunk);
    filled += chunk;
  }
  return nullptr;
}

}  // namespace catalyst::cpu
