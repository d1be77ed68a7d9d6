// gemm_schedule_test.cpp — the CPU GEMM's work sharing (plugins/cpu/gemm/gemm_schedule.h),
// compiled in and driven by recording tasks on real threads: every element of C gets every
// depth block exactly once and in order, a cell reads only panels packed for its own block
// (into its own thread's buffer, by itself or an earlier cell) and not overwritten while it
// reads them, blocks mode packs no panel twice into one buffer for one block, and this
// holds for one thread, for threads that run one after another (a nested call), and for
// more threads than CPUs.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gemm_schedule.h"

namespace catalyst::cpu {
namespace {

struct Case {
  int64_t M, N, K;
};

// Small tiles and blocks, so that products of a few hundred rows have many blocks of each
// kind, ragged last ones included.
constexpr int64_t kMr = 4, kNr = 8, kKc = 16, kNc = 64, kMaxRows = 96;

class Recorder {
 public:
  Recorder(const Case& c, int64_t buffers)
      : c_(c),
        depth_blocks_((c.K + kKc - 1) / kKc),
        next_depth_(static_cast<size_t>(c.M * c.N)),
        panel_owner_(static_cast<size_t>(buffers * (kNc / kNr))) {
    for (auto& d : next_depth_) d.store(0);
    for (auto& o : panel_owner_) o.store(-1);
  }

  // A cell told its panels are fresh packs them (all of them: see run_part).
  void pack(const GemmBlock& k, int64_t q0, int64_t q1, bool once) {
    for (int64_t q = q0; q < q1; ++q) {
      if (owner(k, q).exchange(k.index) == k.index && once) {
        fail("panel " + std::to_string(q) + " of block " + std::to_string(k.index) + " packed twice into buffer " +
             std::to_string(k.buffer));
      }
    }
  }

  void compute(const GemmBlock& k, const GemmCell& cell, bool fresh, int64_t thread, bool once) {
    check_block(k);
    if (thread != 0) computed_by_others_.fetch_add(1);
    if (k.buffer != thread) fail("thread " + std::to_string(thread) + " used buffer " + std::to_string(k.buffer));
    if (cell.m0 < 0 || cell.m1 > c_.M || cell.m0 >= cell.m1 || cell.n0 < k.jc || cell.n1 > k.jc + k.nc ||
        cell.n0 >= cell.n1) {
      fail("cell outside the block");
      return;
    }
    const int64_t q0 = (cell.n0 - k.jc) / kNr, q1 = (cell.n1 - k.jc + kNr - 1) / kNr;
    if (fresh) pack(k, q0, q1, once);
    auto panels_are_ours = [&] {
      for (int64_t q = q0; q < q1; ++q) {
        if (owner(k, q).load() != k.index) return false;
      }
      return true;
    };
    if (!panels_are_ours()) fail("a cell read panels not packed for its block");
    for (int64_t i = cell.m0; i < cell.m1; ++i) {
      for (int64_t j = cell.n0; j < cell.n1; ++j) {
        int expected = static_cast<int>(k.depth_index);
        if (!next_depth_[static_cast<size_t>(i * c_.N + j)].compare_exchange_strong(expected, expected + 1)) {
          fail("element (" + std::to_string(i) + ", " + std::to_string(j) + ") got depth block " +
               std::to_string(k.depth_index) + " after " + std::to_string(expected));
          return;
        }
      }
    }
    // Hold the panels a while, as a kernel would, so that an early overwrite shows.
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(20);
    while (std::chrono::steady_clock::now() < until) {
    }
    if (!panels_are_ours()) fail("a block's panels were overwritten while a cell read them");
  }

  // Every element got every depth block.
  void expect_complete() const {
    for (size_t e = 0; e < next_depth_.size(); ++e) {
      ASSERT_EQ(next_depth_[e].load(), depth_blocks_) << "element " << e;
    }
  }

  // Cells computed by threads other than thread 0.
  int64_t computed_by_others() const { return computed_by_others_.load(); }

  std::string first_failure() {
    std::lock_guard<std::mutex> lock(mutex_);
    return failure_;
  }

 private:
  std::atomic<int64_t>& owner(const GemmBlock& k, int64_t q) {
    return panel_owner_[static_cast<size_t>(k.buffer * (kNc / kNr) + q)];
  }
  void check_block(const GemmBlock& k) {
    if (k.pc != k.depth_index * kKc || k.kc != std::min(kKc, c_.K - k.pc) || k.jc % kNc != 0 ||
        k.nc != std::min(kNc, c_.N - k.jc) || k.first != (k.depth_index == 0) ||
        k.last != (k.depth_index == depth_blocks_ - 1) || k.buffer < 0 ||
        static_cast<size_t>((k.buffer + 1) * (kNc / kNr)) > panel_owner_.size()) {
      fail("block " + std::to_string(k.index) + " is not what its index says");
    }
  }
  void fail(const std::string& what) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failure_.empty()) failure_ = what;
  }

  Case c_;
  int depth_blocks_;
  std::vector<std::atomic<int>> next_depth_;
  std::vector<std::atomic<int64_t>> panel_owner_;
  std::atomic<int64_t> computed_by_others_{0};
  std::mutex mutex_;
  std::string failure_;
};

enum class Runner { kConcurrent, kOneAfterAnother };

void run_schedule(const Case& c, int64_t threads, bool independent, Runner runner) {
  SCOPED_TRACE("M N K = " + std::to_string(c.M) + " " + std::to_string(c.N) + " " + std::to_string(c.K) + ", " +
               std::to_string(threads) + " threads, " + (independent ? "independent" : "blocks") +
               (runner == Runner::kConcurrent ? "" : ", one after another"));
  GemmSchedule schedule(c.M, c.N, c.K, kMr, kNr, kKc, kNc, kMaxRows, threads, independent);
  ASSERT_EQ(schedule.buffers(), threads);
  ASSERT_LE(schedule.row_chunk(), kMaxRows + kMr);
  std::vector<unsigned char> counters(schedule.counter_bytes() + 64);
  void* memory = counters.data() + (64 - reinterpret_cast<uintptr_t>(counters.data()) % 64) % 64;
  schedule.start(memory);
  Recorder recorder(c, schedule.buffers());
  auto part = [&](int64_t thread) {
    schedule.run_part(thread, [&](const GemmBlock& k, const GemmCell& cell, bool fresh) {
      recorder.compute(k, cell, fresh, thread, !independent);
    });
  };
  if (runner == Runner::kConcurrent) {
    std::vector<std::thread> pool;
    for (int64_t t = 1; t < threads; ++t) pool.emplace_back(part, t);
    part(0);
    for (auto& t : pool) t.join();
  } else {
    for (int64_t t = 0; t < threads; ++t) part(t);
  }
  EXPECT_EQ(recorder.first_failure(), "");
  recorder.expect_complete();
  // Run in turn, thread 0 takes every other thread's cells as well: the later parts find
  // nothing left (and so never wait for work that no running thread has).
  if (runner == Runner::kOneAfterAnother) {
    EXPECT_EQ(recorder.computed_by_others(), 0);
  }
}

const Case kCases[] = {
    {1, 1, 1},        // one tile, one block
    {5, 9, 17},       // ragged tiles, two depth blocks
    {300, 700, 100},  // many cells, 11 column blocks (the last 60 wide), 7 depth blocks (the last 4 deep)
    {97, 64, 200},    // one column block, 13 depth blocks
    {400, 130, 33},   // more row chunks than one chunk's rows allow
};

TEST(GemmSchedule, EveryElementGetsEveryDepthBlockOnceAndInOrder) {
  for (const Case& c : kCases) {
    for (int64_t threads : {1, 2, 3, 5}) {
      for (bool independent : {false, true}) run_schedule(c, threads, independent, Runner::kConcurrent);
    }
  }
}

TEST(GemmSchedule, OneThreadRunningEveryPartInTurnFinishesWithoutWaiting) {
  // A nested call runs all of a job's parts on the calling thread, one after another:
  // the first must do all the work, and no part may wait for another.
  for (const Case& c : kCases) {
    for (bool independent : {false, true}) run_schedule(c, 3, independent, Runner::kOneAfterAnother);
  }
}

TEST(GemmSchedule, SurvivesManyRacesBetweenThreads) {
  // Blocks mode's claims and its one wait (depth blocks of a cell in order) under many
  // repetitions with more threads than CPUs.
  for (int repeat = 0; repeat < 40; ++repeat) run_schedule({120, 200, 64}, 4, false, Runner::kConcurrent);
}

}  // namespace
}  // namespace catalyst::cpu
