// streams.cpp — batches, submission, streams and events (see streams.h). Events are points
// on the recording stream's timeline semaphore: recording one submits the stream's open
// batch, waiting on one adds the point to the waiting stream's next submission.
#include "streams.h"

#include <algorithm>

#include "catalyst/sdk/status.hpp"

namespace catalyst::vulkan {
namespace {

const ctl_host_api* host_of(const ctl_plugin_device* device) {
  return device->instance->host;
}

void destroy_batch(ctl_plugin_device* device, ctl_plugin_stream* stream, Batch* batch) {
  for (const Allocation& a : batch->temporaries) device->memory->release_now(a);
  destroy_host_buffer(device, &batch->params);
  destroy_host_buffer(device, &batch->staging);
  if (batch->pool) device->fn.vkDestroyDescriptorPool(device->device, batch->pool, nullptr);
  if (batch->commands) device->fn.vkFreeCommandBuffers(device->device, stream->pool, 1, &batch->commands);
  delete batch;
}

// A finished (or never submitted) batch back to the idle list, ready to record again.
void recycle(ctl_plugin_stream* stream, Batch* batch) {
  ctl_plugin_device* device = stream->device;
  for (const Allocation& a : batch->temporaries) device->memory->release_now(a);
  batch->temporaries.clear();
  if (batch->pool) device->fn.vkResetDescriptorPool(device->device, batch->pool, 0);
  device->fn.vkResetCommandBuffer(batch->commands, 0);
  batch->params_used = batch->staging_used = 0;
  batch->sets_used = batch->command_count = 0;
  batch->read.clear();
  batch->written.clear();
  batch->host_read = false;
  stream->idle.push_back(batch);
}

// Recycles the batches whose submissions have finished.
void collect(ctl_plugin_stream* stream) {
  while (!stream->in_flight.empty() && stream->timeline->reached(stream->in_flight.front()->value)) {
    Batch* batch = stream->in_flight.front();
    stream->in_flight.pop_front();
    recycle(stream, batch);
  }
}

ctl_status* new_batch(ctl_plugin_stream* stream, const char* what, Batch** out) {
  ctl_plugin_device* device = stream->device;
  auto* batch = new Batch;
  VkCommandBufferAllocateInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  info.commandPool = stream->pool;
  info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  info.commandBufferCount = 1;
  VkResult r = device->fn.vkAllocateCommandBuffers(device->device, &info, &batch->commands);
  if (r != VK_SUCCESS) {
    delete batch;
    return vk_fail(device, r, "vkAllocateCommandBuffers", what);
  }
  ctl_status* status =
      create_host_buffer(device, kParamsBytes, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, what, &batch->params);
  if (!status && !device->has_push_descriptors) {
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kSetsPerPool * (kMaxBindings + 1)};
    VkDescriptorPoolCreateInfo pool{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pool.maxSets = kSetsPerPool;
    pool.poolSizeCount = 1;
    pool.pPoolSizes = &size;
    r = device->fn.vkCreateDescriptorPool(device->device, &pool, nullptr, &batch->pool);
    if (r != VK_SUCCESS) status = vk_fail(device, r, "vkCreateDescriptorPool", what);
  }
  if (status) {
    destroy_batch(device, stream, batch);
    return status;
  }
  *out = batch;
  return nullptr;
}

}  // namespace

ctl_status* create_host_buffer(ctl_plugin_device* device, uint64_t size, VkBufferUsageFlags usage, const char* what,
                               HostBuffer* out) {
  const DeviceFunctions& fn = device->fn;
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = size;
  info.usage = usage;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkResult r = fn.vkCreateBuffer(device->device, &info, nullptr, &out->buffer);
  if (r != VK_SUCCESS) return vk_fail(device, r, "vkCreateBuffer", what);
  VkMemoryRequirements req{};
  fn.vkGetBufferMemoryRequirements(device->device, out->buffer, &req);
  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = device->host_memory_type;
  r = fn.vkAllocateMemory(device->device, &alloc, nullptr, &out->memory);
  void* mapped = nullptr;
  if (r == VK_SUCCESS) r = fn.vkBindBufferMemory(device->device, out->buffer, out->memory, 0);
  if (r == VK_SUCCESS) r = fn.vkMapMemory(device->device, out->memory, 0, VK_WHOLE_SIZE, 0, &mapped);
  if (r != VK_SUCCESS) {
    destroy_host_buffer(device, out);
    if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY) {
      return sdk::make_status(host_of(device), CTL_STATUS_OUT_OF_MEMORY,
                              "%s%s: a %llu-byte host-visible buffer could not be allocated: %s", kLogPrefix, what,
                              static_cast<unsigned long long>(size), vk_result_name(r));
    }
    return vk_fail(device, r, "vkAllocateMemory (host-visible)", what);
  }
  out->mapped = static_cast<unsigned char*>(mapped);
  out->size = size;
  return nullptr;
}

void destroy_host_buffer(ctl_plugin_device* device, HostBuffer* buffer) {
  if (buffer->buffer) device->fn.vkDestroyBuffer(device->device, buffer->buffer, nullptr);
  if (buffer->memory) device->fn.vkFreeMemory(device->device, buffer->memory, nullptr);  // unmaps too
  *buffer = HostBuffer{};
}

ctl_status* wait_for(ctl_plugin_stream* stream, uint64_t value, const char* what) {
  ctl_plugin_device* device = stream->device;
  if (value > 0) {
    VkSemaphoreWaitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    info.semaphoreCount = 1;
    info.pSemaphores = &stream->timeline->semaphore;
    info.pValues = &value;
    const VkResult r = device->fn.vkWaitSemaphores(device->device, &info, UINT64_MAX);
    if (r != VK_SUCCESS) return vk_fail(device, r, "vkWaitSemaphores", what);
  }
  collect(stream);
  return nullptr;
}

ctl_status* open_batch(ctl_plugin_stream* stream, const char* what, Batch** out) {
  ctl_plugin_device* device = stream->device;
  CTL_VK_RETURN_IF_LOST(device, what);
  if (stream->open) {
    *out = stream->open;
    return nullptr;
  }
  collect(stream);
  if (stream->in_flight.size() >= kMaxInFlight) {
    CTL_SDK_RETURN_IF_ERROR(wait_for(stream, stream->in_flight.front()->value, what));
  }
  Batch* batch = nullptr;
  if (!stream->idle.empty()) {
    batch = stream->idle.back();
    stream->idle.pop_back();
  } else {
    CTL_SDK_RETURN_IF_ERROR(new_batch(stream, what, &batch));
  }
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  const VkResult r = device->fn.vkBeginCommandBuffer(batch->commands, &begin);
  if (r != VK_SUCCESS) {
    stream->idle.push_back(batch);
    return vk_fail(device, r, "vkBeginCommandBuffer", what);
  }
  stream->open = batch;
  stream->horizon.store(stream->submitted + 1);
  *out = batch;
  return nullptr;
}

namespace {

// submit() without the status, for stream_destroy, which has no caller to give one to.
VkResult submit_result(ctl_plugin_stream* stream) {
  ctl_plugin_device* device = stream->device;
  Batch* batch = stream->open;
  if (!batch) return VK_SUCCESS;
  stream->open = nullptr;
  const DeviceFunctions& fn = device->fn;
  if (batch->host_read) {
    VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    fn.vkCmdPipelineBarrier(batch->commands, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier,
                            0, nullptr, 0, nullptr);
  }
  VkResult r = fn.vkEndCommandBuffer(batch->commands);
  const uint64_t value = stream->submitted + 1;
  if (r == VK_SUCCESS) {
    std::vector<VkSemaphore> wait_semaphores;
    std::vector<uint64_t> wait_values;
    std::vector<VkPipelineStageFlags> wait_stages;
    if (stream->submitted > 0) {
      wait_semaphores.push_back(stream->timeline->semaphore);
      wait_values.push_back(stream->submitted);
    }
    for (const TimelinePoint& p : stream->waits) {
      wait_semaphores.push_back(p.timeline->semaphore);
      wait_values.push_back(p.value);
    }
    wait_stages.assign(wait_semaphores.size(), VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
    VkTimelineSemaphoreSubmitInfo timeline{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    timeline.waitSemaphoreValueCount = static_cast<uint32_t>(wait_values.size());
    timeline.pWaitSemaphoreValues = wait_values.data();
    timeline.signalSemaphoreValueCount = 1;
    timeline.pSignalSemaphoreValues = &value;
    VkSubmitInfo info{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    info.pNext = &timeline;
    info.waitSemaphoreCount = static_cast<uint32_t>(wait_semaphores.size());
    info.pWaitSemaphores = wait_semaphores.data();
    info.pWaitDstStageMask = wait_stages.data();
    info.commandBufferCount = 1;
    info.pCommandBuffers = &batch->commands;
    info.signalSemaphoreCount = 1;
    info.pSignalSemaphores = &stream->timeline->semaphore;
    r = device->faults.next(FaultSite::kSubmit);
    if (r == VK_SUCCESS) {
      std::lock_guard lock(device->queue_mutex);
      r = fn.vkQueueSubmit(device->queue, 1, &info, VK_NULL_HANDLE);
    }
  }
  if (r != VK_SUCCESS) {
    // The batch never ran: what it recorded is dropped with it.
    recycle(stream, batch);
    stream->waits.clear();
    stream->horizon.store(stream->submitted);
    return r;
  }
  stream->waits.clear();
  stream->submitted = value;
  stream->horizon.store(value);
  batch->value = value;
  stream->in_flight.push_back(batch);
  return VK_SUCCESS;
}

}  // namespace

ctl_status* submit(ctl_plugin_stream* stream, const char* what) {
  const VkResult r = submit_result(stream);
  return r == VK_SUCCESS ? nullptr : vk_fail(stream->device, r, "vkQueueSubmit", what);
}

static bool overlaps(const Range& a, const Range& b) {
  return a.buffer == b.buffer && a.offset < b.offset + b.size && b.offset < a.offset + a.size;
}

void order_access(ctl_plugin_device* device, Batch* batch, const Range* reads, size_t read_count, const Range* writes,
                  size_t write_count) {
  bool hazard = false;
  for (size_t i = 0; i < read_count && !hazard; ++i) {
    for (const Range& w : batch->written) hazard = hazard || overlaps(reads[i], w);
  }
  for (size_t i = 0; i < write_count && !hazard; ++i) {
    for (const Range& w : batch->written) hazard = hazard || overlaps(writes[i], w);
    for (const Range& r : batch->read) hazard = hazard || overlaps(writes[i], r);
  }
  if (hazard) {
    VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                            VK_ACCESS_TRANSFER_WRITE_BIT;
    const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    device->fn.vkCmdPipelineBarrier(batch->commands, stages, stages, 0, 1, &barrier, 0, nullptr, 0, nullptr);
    batch->read.clear();
    batch->written.clear();
  }
  batch->read.insert(batch->read.end(), reads, reads + read_count);
  batch->written.insert(batch->written.end(), writes, writes + write_count);
  ++batch->command_count;
}

bool reserve_params(const ctl_plugin_device* device, Batch* batch, uint64_t size, uint64_t* out_offset) {
  const uint64_t align = std::max<uint64_t>(device->storage_alignment, 16);
  const uint64_t offset = (batch->params_used + align - 1) / align * align;
  if (offset + size > batch->params.size) return false;
  batch->params_used = offset + size;
  *out_offset = offset;
  return true;
}

std::vector<TimelinePoint> pending_points(ctl_plugin_device* device) {
  std::vector<TimelinePoint> points;
  std::lock_guard lock(device->streams_mutex);
  for (ctl_plugin_stream* s : device->streams) {
    const uint64_t value = s->horizon.load();
    if (value > 0 && !s->timeline->reached(value)) points.push_back({s->timeline, value});
  }
  return points;
}

// ---- The ABI's stream and event entries ----

ctl_status* stream_create(ctl_plugin_device* device, ctl_plugin_stream** out_stream) {
  const ctl_host_api* host = host_of(device);
  if (!out_stream) {
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%sstream_create: out_stream is NULL", kLogPrefix);
  }
  CTL_VK_RETURN_IF_LOST(device, "stream_create");
  const DeviceFunctions& fn = device->fn;
  VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool_info.queueFamilyIndex = device->queue_family;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkResult r = fn.vkCreateCommandPool(device->device, &pool_info, nullptr, &pool);
  if (r != VK_SUCCESS) return vk_fail(device, r, "vkCreateCommandPool", "stream_create");
  auto timeline = std::make_shared<Timeline>();
  timeline->fn = &device->fn;
  timeline->device = device->device;
  VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  type.initialValue = 0;
  VkSemaphoreCreateInfo sem_info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
  sem_info.pNext = &type;
  r = fn.vkCreateSemaphore(device->device, &sem_info, nullptr, &timeline->semaphore);
  if (r != VK_SUCCESS) {
    fn.vkDestroyCommandPool(device->device, pool, nullptr);
    return vk_fail(device, r, "vkCreateSemaphore", "stream_create");
  }
  auto* stream = host_new<ctl_plugin_stream>(host);
  if (!stream) {
    fn.vkDestroyCommandPool(device->device, pool, nullptr);
    return sdk::make_status(host, CTL_STATUS_OUT_OF_MEMORY, "%sstream_create: no host memory", kLogPrefix);
  }
  stream->device = device;
  stream->pool = pool;
  stream->timeline = std::move(timeline);
  {
    std::lock_guard lock(device->streams_mutex);
    device->streams.push_back(stream);
  }
  *out_stream = stream;
  return nullptr;
}

void stream_destroy(ctl_plugin_stream* stream) {
  if (!stream) return;
  ctl_plugin_device* device = stream->device;
  {
    std::lock_guard lock(device->streams_mutex);
    device->streams.erase(std::find(device->streams.begin(), device->streams.end(), stream));
  }
  {
    std::lock_guard lock(stream->mutex);
    // Finish first: reads still queued write into host memory the caller is about to
    // reuse, and buffers may be freed right after. A lost device finishes nothing.
    if (!device->lost) {
      const VkResult r = submit_result(stream);
      if (r != VK_SUCCESS) {
        sdk::log(host_of(device), CTL_LOG_ERROR, "%sstream_destroy: vkQueueSubmit failed: %s", kLogPrefix,
                 vk_result_name(r));
        if (r == VK_ERROR_DEVICE_LOST) device->lost = true;
      }
    }
  }
  // The whole device drains, not only this stream: a submission of another stream may
  // still wait on this stream's timeline semaphore, which goes with it (drivers may touch
  // it until they retire that submission). vkDeviceWaitIdle needs the queue to itself:
  // the queue mutex keeps other threads' streams from submitting meanwhile.
  if (!device->lost) {
    std::lock_guard lock(device->queue_mutex);
    device->fn.vkDeviceWaitIdle(device->device);
  }
  for (Batch* b : stream->in_flight) destroy_batch(device, stream, b);
  for (Batch* b : stream->idle) destroy_batch(device, stream, b);
  if (stream->open) destroy_batch(device, stream, stream->open);
  device->fn.vkDestroyCommandPool(device->device, stream->pool, nullptr);
  host_delete(host_of(device), stream);
}

ctl_status* stream_synchronize(ctl_plugin_stream* stream) {
  CTL_VK_RETURN_IF_LOST(stream->device, "stream_synchronize");
  std::lock_guard lock(stream->mutex);
  CTL_SDK_RETURN_IF_ERROR(submit(stream, "stream_synchronize"));
  return wait_for(stream, stream->submitted, "stream_synchronize");
}

ctl_status* event_create(ctl_plugin_device* device, ctl_plugin_event** out_event) {
  const ctl_host_api* host = host_of(device);
  if (!out_event) {
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%sevent_create: out_event is NULL", kLogPrefix);
  }
  CTL_VK_RETURN_IF_LOST(device, "event_create");
  auto* event = host_new<ctl_plugin_event>(host);
  if (!event) return sdk::make_status(host, CTL_STATUS_OUT_OF_MEMORY, "%sevent_create: no host memory", kLogPrefix);
  event->device = device;
  *out_event = event;
  return nullptr;
}

void event_destroy(ctl_plugin_event* event) {
  if (!event) return;
  host_delete(host_of(event->device), event);
}

ctl_status* event_record(ctl_plugin_event* event, ctl_plugin_stream* stream) {
  ctl_plugin_device* device = stream->device;
  if (device != event->device) {
    return sdk::make_status(host_of(device), CTL_STATUS_INVALID_ARGUMENT,
                            "%sevent_record: the event and stream are on different devices", kLogPrefix);
  }
  CTL_VK_RETURN_IF_LOST(device, "event_record");
  TimelinePoint point;
  {
    std::lock_guard lock(stream->mutex);
    // Submit now: another stream that waits for this point must not wait on work still
    // unsubmitted here.
    CTL_SDK_RETURN_IF_ERROR(submit(stream, "event_record"));
    point = {stream->timeline, stream->submitted};
  }
  std::lock_guard lock(event->mutex);
  event->point = std::move(point);
  return nullptr;
}

ctl_status* stream_wait_event(ctl_plugin_stream* stream, ctl_plugin_event* event) {
  ctl_plugin_device* device = stream->device;
  TimelinePoint point;
  {
    std::lock_guard lock(event->mutex);
    point = event->point;
  }
  if (!point.timeline || point.value == 0) return nullptr;  // never recorded, or behind no work
  if (device != event->device) {
    return sdk::make_status(host_of(device), CTL_STATUS_INVALID_ARGUMENT,
                            "%sstream_wait_event: the event and stream are on different devices", kLogPrefix);
  }
  CTL_VK_RETURN_IF_LOST(device, "stream_wait_event");
  std::lock_guard lock(stream->mutex);
  if (point.timeline == stream->timeline) return nullptr;  // a stream is in order already
  // Work recorded before the wait need not wait: submit it first.
  if (stream->open && stream->open->command_count > 0) CTL_SDK_RETURN_IF_ERROR(submit(stream, "stream_wait_event"));
  stream->waits.push_back(std::move(point));
  return nullptr;
}

ctl_status* event_synchronize(ctl_plugin_event* event) {
  ctl_plugin_device* device = event->device;
  CTL_VK_RETURN_IF_LOST(device, "event_synchronize");
  TimelinePoint point;
  {
    std::lock_guard lock(event->mutex);
    point = event->point;
  }
  if (!point.timeline || point.value == 0) return nullptr;
  VkSemaphoreWaitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
  info.semaphoreCount = 1;
  info.pSemaphores = &point.timeline->semaphore;
  info.pValues = &point.value;
  const VkResult r = device->fn.vkWaitSemaphores(device->device, &info, UINT64_MAX);
  return r == VK_SUCCESS ? nullptr : vk_fail(device, r, "vkWaitSemaphores", "event_synchronize");
}

}  // namespace catalyst::vulkan
