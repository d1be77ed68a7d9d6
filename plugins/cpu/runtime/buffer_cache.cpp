// buffer_cache.cpp — see buffer_cache.h.
#include "buffer_cache.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace catalyst::cpu {
namespace {

// Capacities are multiples of 64 KiB, so that sizes that differ a little share blocks.
constexpr size_t kGranule = size_t{64} << 10;

void unmap(void* block, size_t capacity) {
  munmap(block, capacity);
}

// A small block's capacity sits in the 64 bytes before it.
constexpr size_t kSmallHeader = 64;

size_t small_capacity(void* block) {
  size_t capacity;
  std::memcpy(&capacity, static_cast<unsigned char*>(block) - kSmallHeader, sizeof capacity);
  return capacity;
}

void free_small(void* block) {
  if (block) std::free(static_cast<unsigned char*>(block) - kSmallHeader);
}

}  // namespace

void* BufferCache::take_small(size_t bytes) {
  void* block = nullptr;
  for (auto& slot : small_) {
    if ((block = slot.exchange(nullptr, std::memory_order_acquire))) break;
  }
  if (block && small_capacity(block) >= bytes) return block;
  free_small(block);
  // Grown in whole pages, so that slightly larger requests do not each replace it.
  const size_t capacity = (bytes + 4095) / 4096 * 4096;
  void* base = nullptr;
  if (posix_memalign(&base, 64, capacity + kSmallHeader) != 0) return nullptr;
  std::memcpy(base, &capacity, sizeof capacity);
  return static_cast<unsigned char*>(base) + kSmallHeader;
}

void BufferCache::give_small(void* block) {
  for (auto& slot : small_) {
    void* empty = nullptr;
    if (slot.compare_exchange_strong(empty, block, std::memory_order_release, std::memory_order_relaxed)) return;
  }
  free_small(block);
}

BufferCache::~BufferCache() {
  for (auto& slot : small_) free_small(slot.load(std::memory_order_acquire));
  for (const auto& [capacity, block] : kept_) unmap(block, capacity);
}

size_t BufferCache::default_limit() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  const size_t physical = pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) : 0;
  return std::min(physical / 8, size_t{4} << 30);
}

void* BufferCache::take(size_t bytes, size_t* capacity) {
  if (bytes > SIZE_MAX - kGranule) return nullptr;
  const size_t wanted = (bytes + kGranule - 1) / kGranule * kGranule;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // The smallest kept block that fits, if it wastes at most a quarter.
    const auto it = kept_.lower_bound(wanted);
    if (it != kept_.end() && it->first - wanted <= wanted / 4) {
      *capacity = it->first;
      void* block = it->second;
      kept_bytes_ -= it->first;
      kept_.erase(it);
      return block;
    }
  }
  void* block = mmap(nullptr, wanted, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (block == MAP_FAILED) return nullptr;
  if (on_map_.function) on_map_.function(on_map_.context, block, wanted);
  *capacity = wanted;
  return block;
}

void BufferCache::give(void* block, size_t capacity) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (kept_bytes_ + capacity <= limit_) {
      try {
        kept_.emplace(capacity, block);
        kept_bytes_ += capacity;
        return;
      } catch (const std::bad_alloc&) {
        // No room to remember it: unmap it below.
      }
    }
  }
  unmap(block, capacity);
}

}  // namespace catalyst::cpu
