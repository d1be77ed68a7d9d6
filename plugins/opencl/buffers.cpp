// buffers.cpp — device buffers as cl_mem objects, and transfers enqueued on the stream's
// command queue without blocking (the ABI lets them finish when the stream gets there).
#include <cstring>
#include <vector>

#include "catalyst/sdk/status.hpp"
#include "cl_errors.h"
#include "plugin.h"

namespace catalyst::opencl {
namespace {

ctl_status* check_range(const ctl_host_api* host, const char* function, const ctl_plugin_buffer* buffer,
                        uint64_t offset, uint64_t size) {
  if (offset > buffer->size || size > buffer->size - offset) {
    return sdk::make_status(host, CTL_STATUS_OUT_OF_RANGE,
                            "%s%s: bytes [%llu, %llu + %llu) lie outside a %llu-byte buffer", kLogPrefix, function,
                            static_cast<unsigned long long>(offset), static_cast<unsigned long long>(offset),
                            static_cast<unsigned long long>(size), static_cast<unsigned long long>(buffer->size));
  }
  return nullptr;
}

const ctl_host_api* host_of(const ctl_plugin_stream* stream) {
  return stream->device->instance->host;
}

}  // namespace

ctl_status* buffer_allocate(ctl_plugin_device* device, uint64_t size, ctl_plugin_buffer** out_buffer) {
  const ctl_host_api* host = device->instance->host;
  if (!out_buffer) {
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%sbuffer_allocate: out_buffer is NULL", kLogPrefix);
  }
  if (size > device->max_allocation) {
    return sdk::make_status(host, CTL_STATUS_OUT_OF_MEMORY,
                            "%sbuffer_allocate: %llu bytes exceed %s's largest allocation "
                            "(CL_DEVICE_MAX_MEM_ALLOC_SIZE, %llu bytes)",
                            kLogPrefix, static_cast<unsigned long long>(size), device->name.c_str(),
                            static_cast<unsigned long long>(device->max_allocation));
  }
  cl_mem mem = nullptr;
  if (size > 0) {
    cl_int error = CL_SUCCESS;
    mem = clCreateBuffer(device->context, CL_MEM_READ_WRITE, size, nullptr, &error);
    if (error != CL_SUCCESS) return cl_fail(host, error, "clCreateBuffer", "buffer_allocate");
  }
  auto* buffer = host_new<ctl_plugin_buffer>(host);
  if (!buffer) {
    if (mem) clReleaseMemObject(mem);
    return sdk::make_status(host, CTL_STATUS_OUT_OF_MEMORY, "%sbuffer_allocate: no host memory", kLogPrefix);
  }
  buffer->mem = mem;
  buffer->size = size;
  device->bytes_allocated += size;
  *out_buffer = buffer;
  return nullptr;
}

void buffer_free(ctl_plugin_device* device, ctl_plugin_buffer* buffer) {
  if (!buffer) return;
  // Safe while queued commands still use it: OpenCL frees the memory after they finish.
  if (buffer->mem) clReleaseMemObject(buffer->mem);
  device->bytes_allocated -= buffer->size;
  host_delete(device->instance->host, buffer);
}

ctl_status* buffer_write(ctl_plugin_stream* stream, ctl_plugin_buffer* buffer, uint64_t offset, const void* source,
                         uint64_t size) {
  const ctl_host_api* host = host_of(stream);
  CTL_SDK_RETURN_IF_ERROR(check_range(host, "buffer_write", buffer, offset, size));
  if (size == 0) return nullptr;
  if (!source) return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%sbuffer_write: source is NULL", kLogPrefix);
  const cl_int error =
      clEnqueueWriteBuffer(stream->queue, buffer->mem, CL_FALSE, offset, size, source, 0, nullptr, nullptr);
  return error == CL_SUCCESS ? nullptr : cl_fail(host, error, "clEnqueueWriteBuffer", "buffer_write");
}

ctl_status* buffer_read(ctl_plugin_stream* stream, ctl_plugin_buffer* buffer, uint64_t offset, void* destination,
                        uint64_t size) {
  const ctl_host_api* host = host_of(stream);
  CTL_SDK_RETURN_IF_ERROR(check_range(host, "buffer_read", buffer, offset, size));
  if (size == 0) return nullptr;
  if (!destination) {
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%sbuffer_read: destination is NULL", kLogPrefix);
  }
  const cl_int error =
      clEnqueueReadBuffer(stream->queue, buffer->mem, CL_FALSE, offset, size, destination, 0, nullptr, nullptr);
  return error == CL_SUCCESS ? nullptr : cl_fail(host, error, "clEnqueueReadBuffer", "buffer_read");
}

ctl_status* buffer_copy(ctl_plugin_stream* stream, ctl_plugin_buffer* source, uint64_t source_offset,
                        ctl_plugin_buffer* destination, uint64_t destination_offset, uint64_t size) {
  const ctl_host_api* host = host_of(stream);
  CTL_SDK_RETURN_IF_ERROR(check_range(host, "buffer_copy (source)", source, source_offset, size));
  CTL_SDK_RETURN_IF_ERROR(check_range(host, "buffer_copy (destination)", destination, destination_offset, size));
  if (size == 0) return nullptr;
  if (source == destination && source_offset < destination_offset + size && destination_offset < source_offset + size) {
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%sbuffer_copy: the source and destination overlap",
                            kLogPrefix);
  }
  const cl_int error = clEnqueueCopyBuffer(stream->queue, source->mem, destination->mem, source_offset,
                                           destination_offset, size, 0, nullptr, nullptr);
  return error == CL_SUCCESS ? nullptr : cl_fail(host, error, "clEnqueueCopyBuffer", "buffer_copy");
}

ctl_status* buffer_fill(ctl_plugin_stream* stream, ctl_plugin_buffer* buffer, uint64_t offset, uint64_t size,
                        const void* pattern, uint32_t pattern_size) {
  const ctl_host_api* host = host_of(stream);
  if (!pattern || (pattern_size != 1 && pattern_size != 2 && pattern_size != 4 && pattern_size != 8)) {
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT,
                            "%sbuffer_fill: the pattern must be 1, 2, 4 or 8 bytes (got %u bytes%s)", kLogPrefix,
                            pattern_size, pattern ? "" : " at NULL");
  }
  if (size % pattern_size != 0) {
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT,
                            "%sbuffer_fill: size %llu is not a multiple of the %u-byte pattern", kLogPrefix,
                            static_cast<unsigned long long>(size), pattern_size);
  }
  CTL_SDK_RETURN_IF_ERROR(check_range(host, "buffer_fill", buffer, offset, size));
  if (size == 0) return nullptr;
  if (offset % pattern_size == 0) {
    const cl_int error =
        clEnqueueFillBuffer(stream->queue, buffer->mem, pattern, pattern_size, offset, size, 0, nullptr, nullptr);
    return error == CL_SUCCESS ? nullptr : cl_fail(host, error, "clEnqueueFillBuffer", "buffer_fill");
  }
  // clEnqueueFillBuffer wants offset aligned to the pattern: write the repeated pattern
  // instead, blocking, because the host copy dies with this call.
  std::vector<unsigned char> bytes(size);
  for (uint64_t i = 0; i < size; i += pattern_size) std::memcpy(bytes.data() + i, pattern, pattern_size);
  const cl_int error =
      clEnqueueWriteBuffer(stream->queue, buffer->mem, CL_TRUE, offset, size, bytes.data(), 0, nullptr, nullptr);
  return error == CL_SUCCESS ? nullptr : cl_fail(host, error, "clEnqueueWriteBuffer", "buffer_fill");
}

}  // namespace catalyst::opencl
