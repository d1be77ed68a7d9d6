// buffer_cache.h — large device buffers kept for reuse instead of returned to the OS.
//
// A training step frees and reallocates the same activation and gradient sizes every
// step. Through malloc, blocks this large are mapped and unmapped (or trimmed) again and
// again, and every reuse pays a page fault and a kernel zeroing per 4 KiB page (measured:
// about 9,000 faults and 5-6% of a GPT benchmark step). The cache maps large blocks itself
// and keeps freed ones, up to a limit, for the next allocation of a similar size. Small
// buffers never come here: malloc serves them well, and the small-op path takes no lock.
// Everything is unmapped when the instance is destroyed.
//
// It also keeps a few small blocks (up to kSmallBytes) for Scratch (op_context.h), so that a
// run of small ops neither calls the allocator nor takes a lock: a 12x16x32 matmul spent
// about a tenth of its 0.75 us in posix_memalign and free. They sit in lock-free slots of
// the device, not in thread_locals: a plugin is a library that may be unloaded, and a
// thread_local block outlived the runtime in every thread that had called it (and kept the
// library's dynamic thread-local storage, which LeakSanitizer misread, alive).
#pragma once

#include <atomic>
#include <cstddef>
#include <map>
#include <mutex>

namespace catalyst::cpu {

// Called on every block the cache maps, before anything touches it: a device bound to a
// NUMA node binds the block's pages there (device_plan.h).
struct MapHook {
  void (*function)(void* context, void* block, size_t bytes) = nullptr;
  void* context = nullptr;
};

class BufferCache {
 public:
  // Buffers from this size up are served here.
  static constexpr size_t kMinBytes = size_t{256} << 10;

  // Keeps at most `limit_bytes` of freed blocks.
  explicit BufferCache(size_t limit_bytes, MapHook on_map = {}) : limit_(limit_bytes), on_map_(on_map) {}
  ~BufferCache();
  BufferCache(const BufferCache&) = delete;
  BufferCache& operator=(const BufferCache&) = delete;

  // A block of at least `bytes` (page aligned): a kept one when one fits closely, else a
  // fresh mapping. *capacity receives its real size, to be given back with it. NULL when
  // the system has no memory for it.
  void* take(size_t bytes, size_t* capacity);
  // Returns a block from take(): kept while the cache is under its limit, else unmapped.
  void give(void* block, size_t capacity);

  // The limit for this machine: an eighth of physical memory, at most 4 GiB.
  static size_t default_limit();

  // Small blocks: at most this many bytes, 64-byte aligned, from the C allocator.
  static constexpr size_t kSmallBytes = size_t{1} << 20;
  // A block of at least `bytes` (<= kSmallBytes): a kept one (grown when it is too small),
  // else a new one; NULL when the allocator fails.
  void* take_small(size_t bytes);
  // Returns a block from take_small: kept in a free slot, else freed.
  void give_small(void* block);

 private:
  static constexpr int kSmallSlots = 8;
  std::atomic<void*> small_[kSmallSlots] = {};

  std::mutex mutex_;  // large buffers only: each costs far more than the lock
  std::multimap<size_t, void*> kept_;
  size_t kept_bytes_ = 0;
  size_t limit_;
  MapHook on_map_;
};

}  // namespace catalyst::cpu
