// gemm_schedule.h — how the threads of one packed GEMM product share it.
//
// The product is walked as BLIS does: column blocks of B (at most nc_block wide), and in
// each, depth blocks (kc_step deep). C is cut into cells (row chunk x column chunk, several
// per thread) that threads claim first come, first served, so a thread on a slower or
// descheduled CPU computes fewer cells rather than holding up the end of the product.
// The kernel adds each depth block into C in order, so the order of every sum is fixed by
// K alone, whichever thread computes it and however many there are.
//
// Two ways to share B (matmul.cpp picks one by shape):
//
// Shared: each block of B is packed once, into one of two buffers all threads
// read, and a cell is one block's part of C. A block's work is a sequence of tasks, its
// pack tasks (groups of B panels) and then its cells, all claimed from one counter in that
// order. A task may have to wait:
//   - a cell, for its block's pack tasks;
//   - a cell of a later depth block, for the same cell of the block before;
//   - a pack task, for the cells of the block that last used its buffer.
// Every wait is for tasks claimed earlier, by a thread that is running them, so the
// schedule cannot deadlock, and one thread alone (a nested call, or a pool of one) runs
// every task in order without waiting.
//
// Independent (for a short A read in place): a cell runs through all depth blocks on one
// thread, packing just its own columns of B into that thread's buffer. Cells are column
// chunks first, so no panel of B is packed twice unless N is too narrow to give every
// thread several cells; nothing waits. Column chunks cost nothing when A is read in place,
// whereas with packed A each would pack A again.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>
#include <thread>

#include "thread_pool.h"

namespace catalyst::cpu {

// One depth block of one column block: columns [jc, jc + nc), depth [pc, pc + kc).
struct GemmBlock {
  int64_t index;        // column block * depth blocks + depth block
  int64_t jc, nc;       // columns
  int64_t pc, kc;       // depth
  int64_t depth_index;  // pc / kc_step
  bool first, last;     // the first and the last depth block of its columns
  int64_t buffer;       // which packed-B buffer holds it
};

// Rows [m0, m1) and columns [n0, n1) of C, inside one block's columns.
struct GemmCell {
  int64_t m0, m1, n0, n1;
};

class GemmSchedule {
 public:
  // M x N x K with tiles of mr x nr, depth blocks of kc_step, column blocks of nc_block
  // (a multiple of nr); cells have at most max_rows rows. `threads` is the number of
  // threads that will call run_part.
  GemmSchedule(int64_t M, int64_t N, int64_t K, int64_t mr, int64_t nr, int64_t kc_step, int64_t nc_block,
               int64_t max_rows, int64_t threads, bool independent)
      : M_(M), N_(N), K_(K), nr_(nr), kc_step_(kc_step), nc_block_(nc_block), independent_(independent) {
    depth_blocks_ = (K + kc_step - 1) / kc_step;
    column_blocks_ = (N + nc_block - 1) / nc_block;
    blocks_ = depth_blocks_ * column_blocks_;
    // Enough cells per thread that the faster CPU can take over most of a slower one's
    // share, but no more than the product has kMinCellWork multiply-adds, and none smaller
    // than a tile: each cell costs a claim, and in independent mode packs its B panels
    // again per row chunk.
    const int64_t row_tiles = (M + mr - 1) / mr;
    const int64_t block_panels = (std::min(N, nc_block) + nr - 1) / nr;
    const double work = static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
    const int64_t wanted =
        threads > 1
            ? std::max<int64_t>(threads, static_cast<int64_t>(std::min<double>(
                                             static_cast<double>(kCellsPerThread * threads), work / kMinCellWork)))
            : 1;
    const int64_t least_row_chunks = (M + max_rows - 1) / max_rows;
    int64_t row_chunks, column_chunks;
    if (independent) {  // columns first: a row chunk of its own packs the same B panels again
      column_chunks = std::min(block_panels, wanted);
      row_chunks = std::max(least_row_chunks, std::min(row_tiles, (wanted + column_chunks - 1) / column_chunks));
    } else {  // rows first: a column chunk of its own packs the same A rows again
      row_chunks = std::max(least_row_chunks, std::min(row_tiles, wanted));
      column_chunks = std::min(block_panels, (wanted + row_chunks - 1) / row_chunks);
    }
    row_chunk_ = (row_tiles + row_chunks - 1) / row_chunks * mr;
    row_chunks_ = (M + row_chunk_ - 1) / row_chunk_;
    column_chunk_ = (block_panels + column_chunks - 1) / column_chunks * nr;
    pack_groups_ = independent ? 0 : (threads > 1 ? 2 * threads : 1);
    buffers_ = independent ? threads : (threads > 1 ? 2 : 1);
    full_tasks_ = tasks_of(std::min(N, nc_block));
    last_tasks_ = tasks_of(N - (column_blocks_ - 1) * nc_block);
    const int64_t depth_steps = independent ? 1 : depth_blocks_;  // tasks per column block: one round of cells
    full_block_tasks_ = (column_blocks_ - 1) * depth_steps * full_tasks_;
    tasks_ = full_block_tasks_ + depth_steps * last_tasks_;
  }

  int64_t row_chunk() const { return row_chunk_; }  // rows of the largest cell
  int64_t buffers() const { return buffers_; }      // packed-B buffers (each one block wide)

  // Bytes of counters run_part needs, and their setup (once per product, before any
  // run_part).
  size_t counter_bytes() const { return sizeof(Counters) + sizeof(std::atomic<int32_t>) * words(); }
  void start(void* memory) {
    counters_ = new (memory) Counters;
    auto* w = reinterpret_cast<std::atomic<int32_t>*>(counters_ + 1);
    for (int64_t i = 0; i < words(); ++i) new (w + i) std::atomic<int32_t>(0);
    packed_ = w;
    computed_ = w + blocks_;
    progress_ = w + 2 * blocks_;
  }

  // Claims and runs tasks until none is left, as thread `thread` (< threads):
  // pack(block, first_panel, end_panel) packs panels of nr columns of the block into
  // buffer block.buffer, panel q at q * nr * kc; compute(block, cell) computes a cell
  // from that buffer.
  template <class Pack, class Compute>
  void run_part(int64_t thread, Pack&& pack, Compute&& compute) {
    for (;;) {
      const int64_t task = counters_->next.fetch_add(1, std::memory_order_relaxed);
      if (task >= tasks_) return;
      int64_t first_block, in_block;
      locate(task, &first_block, &in_block);
      if (independent_) {
        for (int64_t d = 0; d < depth_blocks_; ++d) {
          GemmBlock block = block_at(first_block + d);
          block.buffer = thread;
          const GemmCell cell = cell_at(block, in_block);
          pack(block, (cell.n0 - block.jc) / nr_, (cell.n1 - block.jc + nr_ - 1) / nr_);
          compute(block, cell);
        }
        continue;
      }
      const GemmBlock block = block_at(first_block);
      const int64_t panels = (block.nc + nr_ - 1) / nr_;
      const int64_t groups = std::min(panels, pack_groups_);
      if (in_block < groups) {
        if (block.index >= buffers_) {  // the block `buffers_` back used this buffer
          const int64_t old = block.index - buffers_;
          const int32_t cells = static_cast<int32_t>(cells_of(block_at(old).nc));
          wait_until([&] { return computed_[old].load(std::memory_order_acquire) == cells; });
        }
        pack(block, panels * in_block / groups, panels * (in_block + 1) / groups);
        packed_[block.index].fetch_add(1, std::memory_order_release);
        continue;
      }
      const int64_t cell_index = in_block - groups;
      wait_until([&] { return packed_[block.index].load(std::memory_order_acquire) == groups; });
      std::atomic<int32_t>& progress = progress_[block.jc / nc_block_ * max_cells() + cell_index];
      if (!block.first) {
        const int32_t done = static_cast<int32_t>(block.depth_index);
        wait_until([&] { return progress.load(std::memory_order_acquire) == done; });
      }
      compute(block, cell_at(block, cell_index));
      progress.store(static_cast<int32_t>(block.depth_index + 1), std::memory_order_release);
      computed_[block.index].fetch_add(1, std::memory_order_release);
    }
  }

 private:
  static constexpr int64_t kCellsPerThread = 8;
  static constexpr double kMinCellWork = 1 << 20;

  // A line of its own: the words after it start on the next one.
  struct alignas(64) Counters {
    std::atomic<int64_t> next{0};
  };

  // Shared mode's words: pack tasks and cells finished per block, and per column block
  // and cell, the depth blocks finished.
  int64_t words() const { return independent_ ? 0 : 2 * blocks_ + column_blocks_ * max_cells(); }
  int64_t column_chunks_of(int64_t nc) const { return (nc + column_chunk_ - 1) / column_chunk_; }
  int64_t cells_of(int64_t nc) const { return row_chunks_ * column_chunks_of(nc); }
  int64_t max_cells() const { return cells_of(std::min(N_, nc_block_)); }
  int64_t tasks_of(int64_t nc) const {
    const int64_t groups = pack_groups_ == 0 ? 0 : std::min((nc + nr_ - 1) / nr_, pack_groups_);
    return groups + cells_of(nc);
  }

  // The first block of a task (in independent mode, depth block 0 of its column block)
  // and the task's place among its block's tasks.
  void locate(int64_t task, int64_t* block, int64_t* in_block) const {
    int64_t step;
    if (task < full_block_tasks_) {
      step = task / full_tasks_;
      *in_block = task % full_tasks_;
    } else {
      const int64_t rest = task - full_block_tasks_;
      step = (column_blocks_ - 1) * (independent_ ? 1 : depth_blocks_) + rest / last_tasks_;
      *in_block = rest % last_tasks_;
    }
    *block = independent_ ? step * depth_blocks_ : step;
  }

  GemmBlock block_at(int64_t index) const {
    GemmBlock b;
    b.index = index;
    b.depth_index = index % depth_blocks_;
    b.jc = index / depth_blocks_ * nc_block_;
    b.nc = std::min(nc_block_, N_ - b.jc);
    b.pc = b.depth_index * kc_step_;
    b.kc = std::min(kc_step_, K_ - b.pc);
    b.first = b.depth_index == 0;
    b.last = b.depth_index == depth_blocks_ - 1;
    b.buffer = index % buffers_;
    return b;
  }

  GemmCell cell_at(const GemmBlock& block, int64_t cell_index) const {
    const int64_t column_chunks = column_chunks_of(block.nc);
    const int64_t r = cell_index / column_chunks, c = cell_index % column_chunks;
    return GemmCell{r * row_chunk_, std::min(M_, (r + 1) * row_chunk_), block.jc + c * column_chunk_,
                    block.jc + std::min(block.nc, (c + 1) * column_chunk_)};
  }

  // Waits for a task another thread has claimed and is running: spins, and after a while
  // yields, in case that thread shares this CPU.
  template <class Ready>
  static void wait_until(Ready ready) {
    for (int spins = 0; !ready(); ++spins) {
      if (spins < 4096) {
        cpu_relax();
      } else {
        std::this_thread::yield();
      }
    }
  }

  int64_t M_, N_, K_, nr_, kc_step_, nc_block_;
  bool independent_;
  int64_t depth_blocks_, column_blocks_, blocks_;
  int64_t row_chunk_, row_chunks_, column_chunk_, pack_groups_, buffers_;
  int64_t full_tasks_, last_tasks_, full_block_tasks_, tasks_;
  Counters* counters_ = nullptr;
  std::atomic<int32_t>* packed_ = nullptr;
  std::atomic<int32_t>* computed_ = nullptr;
  std::atomic<int32_t>* progress_ = nullptr;
};

}  // namespace catalyst::cpu
