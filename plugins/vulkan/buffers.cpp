// buffers.cpp — buffers as ranges of the sub-allocator's blocks, and transfers. Writes go
// through the open batch's staging buffer and are copied on the device when the batch
// runs; reads copy into staging, submit, wait and copy out (the host needs the bytes before
// the call returns its promise); copies and fills are transfer commands in the batch.
#include <algorithm>
#include <cstring>
#include <vector>

#include "catalyst/sdk/status.hpp"
#include "plugin.h"
#include "streams.h"

namespace catalyst::vulkan {
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

Range range_of(const ctl_plugin_buffer* b) {
  return {b->allocation.buffer, b->allocation.offset, b->allocation.size};
}

// Room for `size` bytes in the open batch's staging buffer (growing it while the batch is
// still empty of staged data); submits a batch that has staged data and no room.
ctl_status* stage(ctl_plugin_stream* stream, uint64_t size, const char* what, Batch** out_batch, uint64_t* out_offset) {
  ctl_plugin_device* device = stream->device;
  Batch* batch = nullptr;
  CTL_SDK_RETURN_IF_ERROR(open_batch(stream, what, &batch));
  uint64_t offset = (batch->staging_used + 15) / 16 * 16;
  if (offset + size > batch->staging.size) {
    if (batch->staging_used > 0) {
      CTL_SDK_RETURN_IF_ERROR(submit(stream, what));
      CTL_SDK_RETURN_IF_ERROR(open_batch(stream, what, &batch));
    }
    offset = 0;
    if (size > batch->staging.size) {
      destroy_host_buffer(device, &batch->staging);
      const uint64_t grown = std::max<uint64_t>(size, 1 << 20);
      CTL_SDK_RETURN_IF_ERROR(create_host_buffer(
          device, grown, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, what, &batch->staging));
    }
  }
  batch->staging_used = offset + size;
  *out_batch = batch;
  *out_offset = offset;
  return nullptr;
}

void record_copy(ctl_plugin_device* device, Batch* batch, VkBuffer src, uint64_t src_offset, VkBuffer dst,
                 uint64_t dst_offset, uint64_t size, const Range* read, const Range* written) {
  order_access(device, batch, read, read ? 1 : 0, written, written ? 1 : 0);
  const VkBufferCopy region{src_offset, dst_offset, size};
  device->fn.vkCmdCopyBuffer(batch->commands, src, dst, 1, &region);
}

}  // namespace

ctl_status* buffer_allocate(ctl_plugin_device* device, uint64_t size, ctl_plugin_buffer** out_buffer) {
  const ctl_host_api* host = device->instance->host;
  if (!out_buffer) {
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%sbuffer_allocate: out_buffer is NULL", kLogPrefix);
  }
  CTL_VK_RETURN_IF_LOST(device, "buffer_allocate");
  Allocation a;
  CTL_SDK_RETURN_IF_ERROR(device->memory->allocate(size, "buffer_allocate", &a));
  auto* buffer = host_new<ctl_plugin_buffer>(host);
  if (!buffer) {
    device->memory->release_now(a);
    return sdk::make_status(host, CTL_STATUS_OUT_OF_MEMORY, "%sbuffer_allocate: no host memory", kLogPrefix);
  }
  buffer->allocation = a;
  buffer->size = size;
  *out_buffer = buffer;
  return nullptr;
}

void buffer_free(ctl_plugin_device* device, ctl_plugin_buffer* buffer) {
  if (!buffer) return;
  device->memory->release(buffer->allocation);
  host_delete(device->instance->host, buffer);
}

ctl_status* buffer_write(ctl_plugin_stream* stream, ctl_plugin_buffer* buffer, uint64_t offset, const void* source,
                         uint64_t size) {
  const ctl_host_api* host = host_of(stream);
  CTL_SDK_RETURN_IF_ERROR(check_range(host, "buffer_write", buffer, offset, size));
  if (size == 0) return nullptr;
  if (!source) return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%sbuffer_write: source is NULL", kLogPrefix);
  CTL_VK_RETURN_IF_LOST(stream->device, "buffer_write");
  std::lock_guard lock(stream->mutex);
  const Range dst = range_of(buffer);
  for (uint64_t done = 0; done < size;) {
    const uint64_t chunk = std::min(size - done, kStagingChunk);
    Batch* batch = nullptr;
    uint64_t at = 0;
    CTL_SDK_RETURN_IF_ERROR(stage(stream, chunk, "buffer_write", &batch, &at));
    std::memcpy(batch->staging.mapped + at, static_cast<const unsigned char*>(source) + done, chunk);
    record_copy(stream->device, batch, batch->staging.buffer, at, dst.buffer, dst.offset + offset + done, chunk,
                nullptr, &dst);
    done += chunk;
  }
  return nullptr;
}

ctl_status* buffer_read(ctl_plugin_stream* stream, ctl_plugin_buffer* buffer, uint64_t offset, void* destination,
                        uint64_t size) {
  const ctl_host_api* host = host_of(stream);
  CTL_SDK_RETURN_IF_ERROR(check_range(host, "buffer_read", buffer, offset, size));
  if (size == 0) return nullptr;
  if (!destination) {
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%sbuffer_read: destination is NULL", kLogPrefix);
  }
  CTL_VK_RETURN_IF_LOST(stream->device, "buffer_read");
  std::lock_guard lock(stream->mutex);
  const Range src = range_of(buffer);
  for (uint64_t done = 0; done < size;) {
    const uint64_t chunk = std::min(size - done, kStagingChunk);
    Batch* batch = nullptr;
    uint64_t at = 0;
    CTL_SDK_RETURN_IF_ERROR(stage(stream, chunk, "buffer_read", &batch, &at));
    record_copy(stream->device, batch, src.buffer, src.offset + offset + done, batch->staging.buffer, at, chunk, &src,
                nullptr);
    batch->host_read = true;
    CTL_SDK_RETURN_IF_ERROR(submit(stream, "buffer_read"));
    CTL_SDK_RETURN_IF_ERROR(wait_for(stream, stream->submitted, "buffer_read"));
    // The batch is idle now and nothing reuses it before this copy.
    std::memcpy(static_cast<unsigned char*>(destination) + done, batch->staging.mapped + at, chunk);
    done += chunk;
  }
  return nullptr;
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
  CTL_VK_RETURN_IF_LOST(stream->device, "buffer_copy");
  std::lock_guard lock(stream->mutex);
  Batch* batch = nullptr;
  CTL_SDK_RETURN_IF_ERROR(open_batch(stream, "buffer_copy", &batch));
  // Exact byte ranges: a copy between two halves of one buffer is no hazard with itself.
  const Range src{source->allocation.buffer, source->allocation.offset + source_offset, size};
  const Range dst{destination->allocation.buffer, destination->allocation.offset + destination_offset, size};
  record_copy(stream->device, batch, src.buffer, src.offset, dst.buffer, dst.offset, size, &src, &dst);
  return nullptr;
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
  CTL_VK_RETURN_IF_LOST(stream->device, "buffer_fill");
  const Range dst = range_of(buffer);
  const uint64_t at = dst.offset + offset;
  if (pattern_size <= 4 && at % 4 == 0 && size % 4 == 0) {
    // vkCmdFillBuffer repeats 4 bytes: widen a 1- or 2-byte pattern to them.
    unsigned char word[4];
    for (uint32_t i = 0; i < 4; ++i) word[i] = static_cast<const unsigned char*>(pattern)[i % pattern_size];
    uint32_t data;
    std::memcpy(&data, word, 4);
    std::lock_guard lock(stream->mutex);
    Batch* batch = nullptr;
    CTL_SDK_RETURN_IF_ERROR(open_batch(stream, "buffer_fill", &batch));
    order_access(stream->device, batch, nullptr, 0, &dst, 1);
    stream->device->fn.vkCmdFillBuffer(batch->commands, dst.buffer, at, size, data);
    return nullptr;
  }
  // Otherwise the repeated pattern goes through staging like a write.
  std::lock_guard lock(stream->mutex);
  for (uint64_t done = 0; done < size;) {
    const uint64_t chunk = std::min(size - done, kStagingChunk / 8 * 8);
    Batch* batch = nullptr;
    uint64_t staged = 0;
    CTL_SDK_RETURN_IF_ERROR(stage(stream, chunk, "buffer_fill", &batch, &staged));
    for (uint64_t i = 0; i < chunk; i += pattern_size) {
      std::memcpy(batch->staging.mapped + staged + i, pattern, pattern_size);
    }
    record_copy(stream->device, batch, batch->staging.buffer, staged, dst.buffer, at + done, chunk, nullptr, &dst);
    done += chunk;
  }
  return nullptr;
}

}  // namespace catalyst::vulkan
