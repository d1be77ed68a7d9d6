// scratch_test.cpp — the CPU plugin's per-call scratch memory (plugins/cpu/op_context.h),
// compiled into the test with a counting host allocator: small requests reuse the block
// the thread keeps, without the host allocator; a second live Scratch, a large request
// and another thread get memory of their own; large requests come from the instance's
// buffer cache when there is one, the same block again call after call; a failed host
// allocation is a status.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>

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
  }

  CountingHost host_;
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

TEST_F(ScratchTest, SmallRequestsReuseTheThreadsBlockWithoutTheHostAllocator) {
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
    grown = take(ctx_, scratch, Scratch::kKeptBytes);
  }
  Scratch scratch(ctx_);
  EXPECT_EQ(take(ctx_, scratch, 100), grown) << "the grown block is the one kept";
  EXPECT_EQ(host_.allocs, 0);
}

TEST_F(ScratchTest, ASecondLiveScratchAndLargeRequestsUseTheHostAllocator) {
  {
    Scratch outer(ctx_);
    void* a = take(ctx_, outer, 256);
    Scratch inner(ctx_);  // a nested op on the same thread while `outer` is in use
    void* b = take(ctx_, inner, 256);
    EXPECT_NE(a, b);
    EXPECT_EQ(host_.allocs, 1);
  }
  EXPECT_EQ(host_.frees, 1);
  {
    Scratch big(ctx_);
    take(ctx_, big, Scratch::kKeptBytes + 1);
    EXPECT_EQ(host_.allocs, 2);
  }
  EXPECT_EQ(host_.frees, 2);
}

TEST_F(ScratchTest, AllocatingAgainReleasesTheFirstBlock) {
  Scratch scratch(ctx_);
  take(ctx_, scratch, Scratch::kKeptBytes + 64);
  void* small = take(ctx_, scratch, 64);  // the host block goes back; the kept one serves
  EXPECT_EQ(host_.frees, 1);
  Scratch other(ctx_);
  EXPECT_NE(take(ctx_, other, 64), small) << "the kept block is in use until `scratch` ends";
}

TEST_F(ScratchTest, EachThreadKeepsItsOwnBlock) {
  Scratch mine(ctx_);
  void* here = take(ctx_, mine, 512);
  void* there = nullptr;
  std::thread other([&] {
    Scratch theirs(ctx_);
    there = take(ctx_, theirs, 512);
  });
  other.join();
  EXPECT_NE(there, nullptr);
  EXPECT_NE(there, here);
  EXPECT_EQ(host_.allocs, 0);
}

TEST_F(ScratchTest, AFailedHostAllocationIsAnOutOfMemoryStatus) {
  host_.fail = true;
  Scratch scratch(ctx_);
  EXPECT_NE(scratch.allocate(ctx_, Scratch::kKeptBytes * 4), nullptr);
  EXPECT_EQ(host_.last_code, CTL_STATUS_OUT_OF_MEMORY);
  EXPECT_EQ(scratch.as<void>(), nullptr);
}

TEST_F(ScratchTest, LargeRequestsReuseABlockOfTheBufferCache) {
  BufferCache cache(size_t{64} << 20);
  OpContext ctx = ctx_;
  ctx.cache = &cache;
  const size_t bytes = Scratch::kKeptBytes + 4096;  // too large for the thread's block
  void* first = nullptr;
  {
    Scratch scratch(ctx);
    first = take(ctx, scratch, bytes);
  }
  for (int call = 0; call < 3; ++call) {
    Scratch scratch(ctx);
    EXPECT_EQ(take(ctx, scratch, bytes), first) << "call " << call << ": the block went back to the cache";
  }
  {
    Scratch outer(ctx), inner(ctx);  // both alive: two blocks
    void* a = take(ctx, outer, bytes);
    EXPECT_NE(take(ctx, inner, bytes), a);
  }
  EXPECT_EQ(host_.allocs, 0);
  EXPECT_EQ(host_.frees, 0);
  // Below the cache's minimum a second live Scratch still goes to the host.
  Scratch outer(ctx), inner(ctx);
  take(ctx, outer, 64);
  take(ctx, inner, 64);
  EXPECT_EQ(host_.allocs, 1);
}

}  // namespace
}  // namespace catalyst::cpu
