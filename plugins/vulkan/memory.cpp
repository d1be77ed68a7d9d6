// memory.cpp — blocks of device memory and ranges within them (see memory.h).
#include "memory.h"

#include <algorithm>

#include "catalyst/sdk/status.hpp"
#include "plugin.h"
#include "streams.h"

namespace catalyst::vulkan {
namespace {

// Ranges start on 256 bytes: above every driver's minStorageBufferOffsetAlignment seen, and
// a multiple of every element size, so any view can be bound at its allocation's start.
constexpr uint64_t kAlignment = 256;
constexpr uint64_t kPreferredBlock = 64ull << 20;

uint64_t round_up(uint64_t v, uint64_t a) {
  return (v + a - 1) / a * a;
}

}  // namespace

Memory::Memory(ctl_plugin_device* device) : device_(device) {
  largest_ = device->max_storage_range;
  largest_limit_ = "maxStorageBufferRange, the largest buffer range a shader can bind";
  if (device->max_allocation < largest_) {
    largest_ = device->max_allocation;
    largest_limit_ = "maxMemoryAllocationSize";
  }
  if (device->memory_total && device->memory_total < largest_) {
    largest_ = device->memory_total;
    largest_limit_ = "the size of the device-local heap";
  }
  largest_ = largest_ / kAlignment * kAlignment;
  block_size_ = std::min<uint64_t>(kPreferredBlock, largest_);
}

Memory::~Memory() {
  for (Block* block : blocks_) destroy_block(block);
}

void Memory::destroy_block(Block* block) {
  const DeviceFunctions& fn = device_->fn;
  if (block->buffer) fn.vkDestroyBuffer(device_->device, block->buffer, nullptr);
  if (block->memory) fn.vkFreeMemory(device_->device, block->memory, nullptr);
  delete block;
}

ctl_status* Memory::new_block(uint64_t size, bool dedicated, const char* what, Block** out) {
  const ctl_host_api* host = device_->instance->host;
  const DeviceFunctions& fn = device_->fn;
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = size;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkResult r = fn.vkCreateBuffer(device_->device, &info, nullptr, &buffer);
  if (r != VK_SUCCESS) return vk_fail(device_, r, "vkCreateBuffer", what);
  VkMemoryRequirements req{};
  fn.vkGetBufferMemoryRequirements(device_->device, buffer, &req);
  if (!(req.memoryTypeBits & (1u << device_->device_memory_type))) {
    fn.vkDestroyBuffer(device_->device, buffer, nullptr);
    return sdk::make_status(host, CTL_STATUS_INTERNAL, "%s%s: storage buffers cannot live in memory type %u",
                            kLogPrefix, what, device_->device_memory_type);
  }
  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = device_->device_memory_type;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  r = device_->faults.next(FaultSite::kAllocate);
  if (r == VK_SUCCESS) r = fn.vkAllocateMemory(device_->device, &alloc, nullptr, &memory);
  if (r == VK_SUCCESS) r = fn.vkBindBufferMemory(device_->device, buffer, memory, 0);
  if (r != VK_SUCCESS) {
    fn.vkDestroyBuffer(device_->device, buffer, nullptr);
    if (memory) fn.vkFreeMemory(device_->device, memory, nullptr);
    if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY) {
      return sdk::make_status(host, CTL_STATUS_OUT_OF_MEMORY,
                              "%s%s: vkAllocateMemory of %llu bytes failed: %s (%llu bytes already in %zu blocks)",
                              kLogPrefix, what, static_cast<unsigned long long>(req.size), vk_result_name(r),
                              static_cast<unsigned long long>(stats_locked().block_bytes), blocks_.size());
    }
    return vk_fail(device_, r, "vkAllocateMemory", what);
  }
  auto* block = new Block;
  block->memory = memory;
  block->buffer = buffer;
  block->size = size;
  block->dedicated = dedicated;
  block->free.emplace(0, size);
  *out = block;
  return nullptr;
}

bool Memory::place(Block* block, uint64_t size, Allocation* out) {
  for (auto it = block->free.begin(); it != block->free.end(); ++it) {
    if (it->second < size) continue;
    const uint64_t offset = it->first, left = it->second - size;
    block->free.erase(it);
    if (left) block->free.emplace(offset + size, left);
    block->used += size;
    *out = Allocation{block, block->buffer, offset, size};
    return true;
  }
  return false;
}

ctl_status* Memory::allocate(uint64_t size, const char* what, Allocation* out) {
  const ctl_host_api* host = device_->instance->host;
  if (size > largest_) {
    return sdk::make_status(host, CTL_STATUS_OUT_OF_MEMORY,
                            "%s%s: %llu bytes exceed %s's largest buffer, %llu bytes (%s)", kLogPrefix, what,
                            static_cast<unsigned long long>(size), device_->name.c_str(),
                            static_cast<unsigned long long>(largest_), largest_limit_);
  }
  const uint64_t reserved = round_up(std::max<uint64_t>(size, 16), kAlignment);
  std::lock_guard lock(mutex_);
  reclaim();
  if (reserved <= block_size_ / 2) {
    for (Block* block : blocks_) {
      if (!block->dedicated && place(block, reserved, out)) {
        live_bytes_ += reserved;
        return nullptr;
      }
    }
  }
  const bool dedicated = reserved > block_size_ / 2;
  Block* block = nullptr;
  CTL_SDK_RETURN_IF_ERROR(new_block(dedicated ? reserved : block_size_, dedicated, what, &block));
  blocks_.push_back(block);
  place(block, reserved, out);
  live_bytes_ += reserved;
  return nullptr;
}

void Memory::give_back(const Allocation& a) {
  Block* block = a.block;
  block->used -= a.size;
  live_bytes_ -= a.size;
  if (block->dedicated) {
    blocks_.erase(std::find(blocks_.begin(), blocks_.end(), block));
    destroy_block(block);
    return;
  }
  uint64_t offset = a.offset, size = a.size;
  auto next = block->free.lower_bound(offset);
  if (next != block->free.end() && offset + size == next->first) {
    size += next->second;
    next = block->free.erase(next);
  }
  if (next != block->free.begin()) {
    auto previous = std::prev(next);
    if (previous->first + previous->second == offset) {
      offset = previous->first;
      size += previous->second;
      block->free.erase(previous);
    }
  }
  block->free.emplace(offset, size);
  // Keep one empty shared block for the next tensors; give the others back to the driver.
  if (block->used == 0) {
    size_t empty = 0;
    for (Block* b : blocks_) empty += !b->dedicated && b->used == 0;
    if (empty > 1) {
      blocks_.erase(std::find(blocks_.begin(), blocks_.end(), block));
      destroy_block(block);
    }
  }
}

void Memory::reclaim() {
  auto keep = deferred_.begin();
  for (auto it = deferred_.begin(); it != deferred_.end(); ++it) {
    bool passed = true;
    for (const TimelinePoint& p : it->points) passed = passed && p.timeline->reached(p.value);
    if (passed) {
      give_back(it->allocation);
    } else {
      if (keep != it) *keep = std::move(*it);
      ++keep;
    }
  }
  deferred_.erase(keep, deferred_.end());
}

void Memory::release(const Allocation& a) {
  if (!a.block) return;
  std::vector<TimelinePoint> points = pending_points(device_);
  std::lock_guard lock(mutex_);
  if (points.empty()) {
    give_back(a);
  } else {
    deferred_.push_back(Deferred{a, std::move(points)});
  }
}

void Memory::release_now(const Allocation& a) {
  if (!a.block) return;
  std::lock_guard lock(mutex_);
  give_back(a);
}

MemoryStats Memory::stats() const {
  std::lock_guard lock(mutex_);
  return stats_locked();
}

MemoryStats Memory::stats_locked() const {
  MemoryStats s;
  for (const Block* b : blocks_) {
    ++s.blocks;
    s.block_bytes += b->size;
  }
  s.live_bytes = live_bytes_;
  return s;
}

}  // namespace catalyst::vulkan
