// scratch_test.cpp — the CPU plugin's per-call scratch memory (plugins/cpu/runtime/op_context.h),
// compiled into the test with a counting host allocator: small requests reuse the blocks
// the device keeps (buffer_cache.h), without the host allocator, from any thread; live
// Scratches never share a block; large requests come from the device's buffer cache, the
// same block again call after call; without a cache the host allocator serves, and a failed
// host allocation is a status.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "buffer_cache.h"
#include "op_context.h"

namespace catalyst::cpu {
namespace {

struct CountingHost {
  int allocs = 0;
  int frees = 0;
  bool fail = false;
  ctl_status_code last_code = CTL_STATUS_OK;
};

void* host_alloc(void* context, size_t size, size_t alignment) {
  auto* host = static_cast<CountingHost*>(context);
  if (host->fail) return nullptr;
  void* p = nullptr;
  if (posix_memalign(&p, alignment, size) != 0) return nullptr;
  ++host->allocs;
  return p;
}

void host_free(void* context, void* pointer) {
  ++static_cast<CountingHost*>(context)->frees;
  std::free(pointer);
}

// A status the test can recognise without the core: the code, as a non-null pointer.
ctl_status* host_status(void* context, ctl_status_code code, const char*) {
  auto* host = static_cast<CountingHost*>(context);
  host->last_code = code;
  return reinterpret_cast<ctl_status*>(host);
}

class ScratchTest : public ::testing::Test {
 protected:
  ScratchTest() {
    api_.struct_size = CTL_HOST_API_STRUCT_SIZE;
    api_.context = &host_;
    api_.alloc = host_alloc;
    api_.free = host_free;
    api_.status_create = host_status;
    ctx_.host = &api_;
    ctx_.pool = nullptr;
    ctx_.call = nullptr;
    ctx_.name = "test";
    ctx_.cache = &cache_;
  }

  CountingHost host_;
  BufferCache cache_{size_t{64} << 20};
  ctl_host_api api_{};
  OpContext ctx_{};
};

void* take(const OpContext& ctx, Scratch& scratch, size_t bytes) {
  EXPECT_EQ(scratch.allocate(ctx, bytes), nullptr);
  void* p = scratch.as<void>();
  EXPECT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  if (p) std::memset(p, 0x5a, bytes);  // all of it is writable (ASan checks the bounds)
  return p;
}

TEST_F(ScratchTest, SmallRequestsReuseTheDevicesBlockWithoutTheHostAllocator) {
  void* first = nullptr;
  {
    Scratch scratch(ctx_);
    first = take(ctx_, scratch, 1000);
  }
  for (size_t bytes : {size_t{1}, size_t{4096}, size_t{999}}) {
    Scratch scratch(ctx_);
    EXPECT_EQ(take(ctx_, scratch, bytes), first) << bytes << " bytes";
  }
  EXPECT_EQ(host_.allocs, 0);
}

TEST_F(ScratchTest, ALargerSmallRequestGrowsTheBlock) {
  {
    Scratch scratch(ctx_);
    take(ctx_, scratch, 100);
  }
  void* grown = nullptr;
  {
    Scratch scratch(ctx_);
    grown = take(ctx_, scratch, BufferCache::kSmallBytes);
  }
  Scratch scratch(ctx_);
  EXPECT_EQ(take(ctx_, scratch, 100), grown) << "the grown block is the one kept";
  EXPECT_EQ(host_.allocs, 0);
}

TEST_F(ScratchTest, LiveScratchesGetBlocksOfTheirOwnAndGiveThemBack) {
  // A nested op on the same thread while `outer` is in use, and more than the device keeps.
  std::vector<std::unique_ptr<Scratch>> live;
  std::vector<void*> blocks;
  for (int i = 0; i < 12; ++i) {
    live.push_back(std::make_unique<Scratch>(ctx_));
    blocks.push_back(take(ctx_, *live.back(), 256));
  }
  std::sort(blocks.begin(), blocks.end());
  EXPECT_EQ(std::unique(blocks.begin(), blocks.end()), blocks.end()) << "two live scratches share a block";
  live.clear();  // 8 kept, the rest freed
  EXPECT_EQ(host_.allocs, 0);
}

TEST_F(ScratchTest, AllocatingAgainReleasesTheFirstBlock) {
  Scratch scratch(ctx_);
  take(ctx_, scratch, BufferCache::kSmallBytes + 64);  // large: from the cache
  void* small = take(ctx_, scratch, 64);                // the large block goes back; a small one serves
  Scratch other(ctx_);
  EXPECT_NE(take(ctx_, other, 64), small) << "the small block is in use until `scratch` ends";
}

TEST_F(ScratchTest, ThreadsShareTheDevicesBlocks) {
  void* here = nullptr;
  {
    Scratch mine(ctx_);
    here = take(ctx_, mine, 512);
  }
  void* there = nullptr;
  std::thread other([&] {
    Scratch theirs(ctx_);
    there = take(ctx_, theirs, 512);
  });
  other.join();
  EXPECT_EQ(there, here) << "a block belongs to the device, not to the thread that first used it";
  EXPECT_EQ(host_.allocs, 0);
}

TEST_F(ScratchTest, WithoutACacheTheHostAllocatorServes) {
  OpContext ctx = ctx_;
  ctx.cache = nullptr;
  {
    Scratch scratch(ctx);
    take(ctx, scratch, 64);
    EXPECT_EQ(host_.allocs, 1);
  }
  EXPECT_EQ(host_.frees, 1);
}

TEST_F(ScratchTest, AFailedHostAllocationIsAnOutOfMemoryStatus) {
  OpContext ctx = ctx_;
  ctx.cache = nullptr;
  host_.fail = true;
  Scratch scratch(ctx);
  EXPECT_NE(scratch.allocate(ctx, BufferCache::kSmallBytes * 4), nullptr);
  EXPECT_EQ(host_.last_code, CTL_STATUS_OUT_OF_MEMORY);
  EXPECT_EQ(scratch.as<void>(), nullptr);
}

TEST_F(ScratchTest, LargeRequestsReuseABlockOfTheBufferCache) {
  const size_t bytes = BufferCache::kSmallBytes + 4096;  // too large for a small block
  void* first = nullptr;
  {
    Scratch scratch(ctx_);
    first = take(ctx_, scratch, bytes);
  }
  for (int call = 0; call < 3; ++call) {
    Scratch scratch(ctx_);
    EXPECT_EQ(take(ctx_, scratch, bytes), first) << "call " << call << ": the block went back to the cache";
  }
  {
    Scratch outer(ctx_), inner(ctx_);  // both alive: two blocks
    void* a = take(ctx_, outer, bytes);
    EXPECT_NE(take(ctx_, inner, bytes), a);
  }
  EXPECT_EQ(host_.allocs, 0);
  EXPECT_EQ(host_.frees, 0);
}

}  // namespace
}  // namespace catalyst::cpu
