// buffer_cache_test.cpp — the CPU plugin's cache of large buffers (plugins/cpu/runtime/buffer_cache.h),
// compiled into the test directly: freed blocks are reused for close sizes only, the limit
// bounds what is kept, and a request the system cannot map fails without crashing.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "buffer_cache.h"

namespace catalyst::cpu {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

TEST(BufferCache, AFreedBlockIsReusedForTheSameOrACloseSize) {
  BufferCache cache(64 * kMiB);
  size_t capacity = 0;
  void* block = cache.take(3 * kMiB + 5, &capacity);
  ASSERT_NE(block, nullptr);
  EXPECT_GE(capacity, 3 * kMiB + 5);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % 64, 0u);
  std::memset(block, 0x5a, 3 * kMiB + 5);  // the whole request is writable
  cache.give(block, capacity);
  size_t again = 0;
  EXPECT_EQ(cache.take(3 * kMiB, &again), block) << "a close size reuses the kept block";
  EXPECT_EQ(again, capacity);
  cache.give(block, again);
  size_t other = 0;
  void* small = cache.take(kMiB, &other);  // a third of the kept block: not worth its waste
  EXPECT_NE(small, block);
  cache.give(small, other);
}

TEST(BufferCache, KeepsNoMoreThanItsLimit) {
  BufferCache cache(4 * kMiB);
  size_t c1 = 0, c2 = 0;
  void* b1 = cache.take(3 * kMiB, &c1);
  void* b2 = cache.take(3 * kMiB, &c2);
  ASSERT_NE(b1, nullptr);
  ASSERT_NE(b2, nullptr);
  cache.give(b1, c1);
  cache.give(b2, c2);  // over the limit: unmapped, not kept
  size_t c3 = 0, c4 = 0;
  void* b3 = cache.take(3 * kMiB, &c3);
  void* b4 = cache.take(3 * kMiB, &c4);
  EXPECT_EQ(b3, b1);
  EXPECT_NE(b4, b1);
  cache.give(b3, c3);
  cache.give(b4, c4);
}

TEST(BufferCache, AnImpossibleRequestFailsCleanly) {
  BufferCache cache(4 * kMiB);
  size_t capacity = 0;
  EXPECT_EQ(cache.take(SIZE_MAX - 10, &capacity), nullptr);
  EXPECT_EQ(cache.take(size_t{1} << 62, &capacity), nullptr);
}

}  // namespace
}  // namespace catalyst::cpu
