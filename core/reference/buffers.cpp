// buffers.cpp — the reference device's buffers: host memory from the host allocator
// (64-byte aligned, at least one byte so size 0 works), wrapped host memory for DLPack
// import, and synchronous reads, writes, copies and fills with bounds checks.
#include <cstring>

#include "plugin_objects.h"

namespace catalyst::reference {
namespace {

// Finds [offset, offset + size) inside a buffer, or says why not.
ctl_status* region(const ctl_host_api* host, ctl_plugin_buffer* handle, uint64_t offset, uint64_t size,
                   unsigned char** out) {
  unsigned char* data = nullptr;
  uint64_t buffer_size = 0;
  if (!resolve_buffer(handle, &data, &buffer_size)) return null_argument(host, "buffer");
  if (offset > buffer_size || size > buffer_size - offset)
    return sdk::make_status(host, CTL_STATUS_OUT_OF_RANGE,
                            "reference: bytes [%llu, +%llu) lie outside a %llu-byte buffer",
                            static_cast<unsigned long long>(offset), static_cast<unsigned long long>(size),
                            static_cast<unsigned long long>(buffer_size));
  *out = data + offset;
  return nullptr;
}

}  // namespace

ctl_status* buffer_allocate(ctl_plugin_device* device, uint64_t size, ctl_plugin_buffer** out_buffer) {
  if (!device) return nullptr;
  const ctl_host_api* host = host_of(device);
  if (!out_buffer) return null_argument(host, "out_buffer");
  if (size > SIZE_MAX - 64)
    return sdk::make_status(host, CTL_STATUS_OUT_OF_MEMORY, "reference: buffer of %llu bytes is too large",
                            static_cast<unsigned long long>(size));
  // Size 0 is allowed; one byte keeps every buffer a distinct, non-NULL allocation.
  void* data = host->alloc(host->context, size ? static_cast<size_t>(size) : 1, 64);
  if (!data) return out_of_memory(host, "buffer memory");
  Buffer* buffer = host_new(host, Buffer{kBufferMagic, static_cast<unsigned char*>(data), size, true});
  if (!buffer) {
    host->free(host->context, data);
    return out_of_memory(host, "a buffer");
  }
  *out_buffer = reinterpret_cast<ctl_plugin_buffer*>(buffer);
  return nullptr;
}

void buffer_free(ctl_plugin_device* device, ctl_plugin_buffer* handle) {
  if (!device || !handle) return;
  const ctl_host_api* host = host_of(device);
  Buffer* buffer = reinterpret_cast<Buffer*>(handle);
  if (buffer->owned) host->free(host->context, buffer->data);
  buffer->magic = 0;
  host->free(host->context, buffer);
}

bool resolve_buffer(ctl_plugin_buffer* handle, unsigned char** data, uint64_t* size) {
  const Buffer* buffer = reinterpret_cast<const Buffer*>(handle);
  if (!buffer || buffer->magic != kBufferMagic) return false;
  *data = buffer->data;
  *size = buffer->size;
  return true;
}

ctl_status* buffer_host_pointer(ctl_plugin_device* device, ctl_plugin_buffer* handle, void** out_pointer) {
  if (!device) return nullptr;
  unsigned char* data = nullptr;
  uint64_t size = 0;
  if (!out_pointer) return null_argument(host_of(device), "out_pointer");
  if (!resolve_buffer(handle, &data, &size)) return null_argument(host_of(device), "buffer");
  *out_pointer = data;
  return nullptr;
}

ctl_status* buffer_wrap_host(ctl_plugin_device* device, void* pointer, uint64_t size, ctl_plugin_buffer** out_buffer) {
  if (!device) return nullptr;
  const ctl_host_api* host = host_of(device);
  if (!out_buffer) return null_argument(host, "out_buffer");
  if (!pointer && size > 0) return null_argument(host, "pointer");
  Buffer* buffer = host_new(host, Buffer{kBufferMagic, static_cast<unsigned char*>(pointer), size, false});
  if (!buffer) return out_of_memory(host, "a buffer");
  *out_buffer = reinterpret_cast<ctl_plugin_buffer*>(buffer);
  return nullptr;
}

ctl_status* buffer_write(ctl_plugin_stream* stream, ctl_plugin_buffer* buffer, uint64_t offset, const void* source,
                         uint64_t size) {
  if (!stream) return nullptr;
  const ctl_host_api* host = host_of(stream);
  unsigned char* target = nullptr;
  CTL_SDK_RETURN_IF_ERROR(region(host, buffer, offset, size, &target));
  if (size == 0) return nullptr;
  if (!source) return null_argument(host, "source");
  std::memcpy(target, source, size);
  return nullptr;
}

ctl_status* buffer_read(ctl_plugin_stream* stream, ctl_plugin_buffer* buffer, uint64_t offset, void* destination,
                        uint64_t size) {
  if (!stream) return nullptr;
  const ctl_host_api* host = host_of(stream);
  unsigned char* source = nullptr;
  CTL_SDK_RETURN_IF_ERROR(region(host, buffer, offset, size, &source));
  if (size == 0) return nullptr;
  if (!destination) return null_argument(host, "destination");
  std::memcpy(destination, source, size);
  return nullptr;
}

ctl_status* buffer_copy(ctl_plugin_stream* stream, ctl_plugin_buffer* source, uint64_t source_offset,
                        ctl_plugin_buffer* destination, uint64_t destination_offset, uint64_t size) {
  if (!stream) return nullptr;
  const ctl_host_api* host = host_of(stream);
  unsigned char *from = nullptr, *to = nullptr;
  CTL_SDK_RETURN_IF_ERROR(region(host, source, source_offset, size, &from));
  CTL_SDK_RETURN_IF_ERROR(region(host, destination, destination_offset, size, &to));
  if (size > 0) std::memmove(to, from, size);  // memmove: harmless if a caller overlaps
  return nullptr;
}

ctl_status* buffer_fill(ctl_plugin_stream* stream, ctl_plugin_buffer* buffer, uint64_t offset, uint64_t size,
                        const void* pattern, uint32_t pattern_size) {
  if (!stream) return nullptr;
  const ctl_host_api* host = host_of(stream);
  if (pattern_size != 1 && pattern_size != 2 && pattern_size != 4 && pattern_size != 8)
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "reference: pattern_size %u is not 1, 2, 4 or 8",
                            pattern_size);
  if (size % pattern_size != 0)
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT,
                            "reference: fill size %llu is not a multiple of pattern_size %u",
                            static_cast<unsigned long long>(size), pattern_size);
  if (!pattern) return null_argument(host, "pattern");
  unsigned char* target = nullptr;
  CTL_SDK_RETURN_IF_ERROR(region(host, buffer, offset, size, &target));
  for (uint64_t i = 0; i < size; i += pattern_size) std::memcpy(target + i, pattern, pattern_size);
  return nullptr;
}

}  // namespace catalyst::reference
