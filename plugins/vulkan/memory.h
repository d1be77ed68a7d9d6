// memory.h — the device-memory sub-allocator. Drivers cap the number of VkDeviceMemory
// allocations (often at 4096), so tensors never get one each: memory comes in blocks, each
// one VkDeviceMemory with one storage VkBuffer over all of it, no larger than
// maxMemoryAllocationSize or maxStorageBufferRange (a shader binds a range of the block's
// buffer). A tensor is a range of a block, first fit with neighbours merged when freed.
// Tensors too big to share a block get a dedicated one, up to the device's limits; larger
// requests are an OUT_OF_MEMORY status naming the limit.
//
// A freed range may still be read or written by work already recorded on some stream, so
// it is not reused at once: it waits on the points every live stream had reached when it
// was freed (timeline.h), and returns to the free list once they have passed.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "catalyst_plugin.h"
#include "timeline.h"
#include "vk_api.h"

namespace catalyst::vulkan {

struct Block {
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkBuffer buffer = VK_NULL_HANDLE;
  uint64_t size = 0;
  bool dedicated = false;
  std::map<uint64_t, uint64_t> free;  // offset -> size of each free range
  uint64_t used = 0;
};

// A range of a block's buffer; what a descriptor binds.
struct Allocation {
  Block* block = nullptr;
  VkBuffer buffer = VK_NULL_HANDLE;
  uint64_t offset = 0;  // bytes into the block's buffer
  uint64_t size = 0;    // bytes reserved (at least the request, at least 16)
};

struct MemoryStats {
  uint64_t blocks = 0;
  uint64_t block_bytes = 0;  // device memory held in blocks
  uint64_t live_bytes = 0;   // reserved by live allocations and deferred frees
};

class Memory {
 public:
  explicit Memory(ctl_plugin_device* device);
  ~Memory();
  Memory(const Memory&) = delete;
  Memory& operator=(const Memory&) = delete;

  // A range of at least `size` bytes; `what` names the caller in messages.
  ctl_status* allocate(uint64_t size, const char* what, Allocation* out);
  // Frees `a` once the work recorded so far on every stream has finished.
  void release(const Allocation& a);
  // Frees `a` now: the caller knows no recorded work uses it any more.
  void release_now(const Allocation& a);
  MemoryStats stats() const;
  // The largest allocation the device allows, and the limit that sets it.
  uint64_t largest() const { return largest_; }
  const char* largest_limit() const { return largest_limit_; }

 private:
  struct Deferred {
    Allocation allocation;
    std::vector<TimelinePoint> points;
  };
  bool place(Block* block, uint64_t size, Allocation* out);
  void give_back(const Allocation& a);  // mutex_ held
  void reclaim();                       // mutex_ held: deferred ranges whose points passed
  MemoryStats stats_locked() const;
  ctl_status* new_block(uint64_t size, bool dedicated, const char* what, Block** out);
  void destroy_block(Block* block);

  ctl_plugin_device* device_;
  uint64_t block_size_;
  uint64_t largest_;
  const char* largest_limit_;
  mutable std::mutex mutex_;
  std::vector<Block*> blocks_;
  std::vector<Deferred> deferred_;
  uint64_t live_bytes_ = 0;
};

}  // namespace catalyst::vulkan
