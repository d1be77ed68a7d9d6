// streams.h — recording and submitting work. A stream records commands into a batch (one
// command buffer with its own parameter buffer, staging buffer and descriptor pool) and
// submits the batch when the caller needs its results (a synchronize, an event record, a
// read to the host), when it is full, or every kMaxCommands commands. Submissions signal
// the stream's timeline semaphore; each waits for the one before and for the events the
// stream was told to wait on. A finished batch is reset and reused, so steady work
// allocates nothing.
//
// Inside a batch, a pipeline barrier goes between two commands only where the second
// touches a range the first wrote (or writes one the first read): Hazards tracks the ranges
// read and written since the last barrier.
#pragma once

#include <cstdint>
#include <vector>

#include "memory.h"
#include "plugin.h"

namespace catalyst::vulkan {

// Host-visible, coherent memory mapped for the life of the buffer.
struct HostBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  unsigned char* mapped = nullptr;
  uint64_t size = 0;
};

struct Range {
  VkBuffer buffer;
  uint64_t offset;
  uint64_t size;
};

struct Batch {
  VkCommandBuffer commands = VK_NULL_HANDLE;
  uint64_t value = 0;  // the timeline value its submission signals
  HostBuffer params;   // dispatch parameters (binding 0 of every shader)
  uint64_t params_used = 0;
  HostBuffer staging;  // host transfers
  uint64_t staging_used = 0;
  VkDescriptorPool pool = VK_NULL_HANDLE;  // without push descriptors
  uint32_t sets_used = 0;
  std::vector<Allocation> temporaries;  // freed when the batch has finished
  std::vector<Range> read, written;     // since the last barrier
  uint32_t command_count = 0;
  bool host_read = false;  // a copy into staging the host will read
};

inline constexpr uint32_t kMaxCommands = 256;           // per batch, then it is submitted
inline constexpr uint64_t kParamsBytes = 256 << 10;     // per batch
inline constexpr uint32_t kSetsPerPool = kMaxCommands;  // descriptor sets per batch pool
inline constexpr uint32_t kMaxBindings = 8;             // storage buffers per dispatch
inline constexpr uint64_t kStagingChunk = 16ull << 20;  // largest host transfer in one batch
inline constexpr size_t kMaxInFlight = 4;               // batches per stream

// The open batch of `stream`, opening one (and waiting for an old one to finish, when
// kMaxInFlight are in flight) if there is none. The stream's mutex is held.
ctl_status* open_batch(ctl_plugin_stream* stream, const char* what, Batch** out);
// Submits the open batch, if any. The stream's mutex is held.
ctl_status* submit(ctl_plugin_stream* stream, const char* what);
// Waits until the stream's timeline reaches `value`, then recycles finished batches.
ctl_status* wait_for(ctl_plugin_stream* stream, uint64_t value, const char* what);
// Records a barrier first when a command that reads `reads` and writes `writes` would race
// with a command recorded since the last barrier; then notes its ranges.
void order_access(ctl_plugin_device* device, Batch* batch, const Range* reads, size_t read_count, const Range* writes,
                  size_t write_count);
// `size` bytes of parameter space in the batch (aligned for a storage-buffer binding);
// false when the batch has no room left (submit and open another).
bool reserve_params(const ctl_plugin_device* device, Batch* batch, uint64_t size, uint64_t* out_offset);
// The points every live stream of `device` must pass before memory freed now can be reused.
std::vector<TimelinePoint> pending_points(ctl_plugin_device* device);

ctl_status* create_host_buffer(ctl_plugin_device* device, uint64_t size, VkBufferUsageFlags usage, const char* what,
                               HostBuffer* out);
void destroy_host_buffer(ctl_plugin_device* device, HostBuffer* buffer);

}  // namespace catalyst::vulkan
