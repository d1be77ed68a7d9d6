// buffer_cache.cpp — see buffer_cache.h.
#include "buffer_cache.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <new>

namespace catalyst::cpu {
namespace {

// Capacities are multiples of 64 KiB, so that sizes that differ a little share blocks.
constexpr size_t kGranule = size_t{64} << 10;

void unmap(void* block, size_t capacity) {
  munmap(block, capacity);
}

}  // namespace

BufferCache::~BufferCache() {
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
