// gemm_schedule.h — how the threads of one packed GEMM product share it.
//
// The product is walked as BLIS does: column blocks of B (at most nc_block wide), and in
// each, depth blocks (kc_step deep). C is cut into cells (row chunk x column chunk, several
// per thread) that threads claim, each its own run of cells first and then whatever the
// others have not reached, so a thread on a slower or descheduled CPU computes fewer cells
// rather than holding up the end of the product.
// The kernel adds each depth block into C in order, so the order of every sum is fixed by
// K alone, whichever thread computes it and however many there are.
//
// Two ways to share B (matmul.cpp picks one by shape):
//
// Blocks (the default): every thread walks the blocks in order and packs, into a buffer of
// its own, just the panels of the block that its cells need; a cell is one block's part
// of C. A block's cells are dealt out in contiguous runs, one run per thread: a thread
// claims the cells of its own run first, front to back, then takes unclaimed cells of the
// others' runs from the back. So each thread keeps to the same rows of C block after block
// and call after call, and nothing it packs is read by another core; the faster of two
// CPUs still finishes the slower one's run. Two cores on the VMs measured here write lines
// the other core holds at about 6.7 GB/s against 200 locally, which is what packing B
// once into a buffer all threads read cost (see plugins/cpu/README.md). The one wait: a
// cell of a later depth block waits for the same cell of the block before, which is
// normally its own thread's. A thread alone (a nested call, or a pool of one) runs every
// cell in order without waiting.
//
// Independent (for a short A read in place): a cell runs through all depth blocks on one
// thread, packing just its own columns of B into that thread's buffer. Cells are column
// chunks first, so no panel of B is packed twice unless N is too narrow to give every
// thread several cells; they are claimed as above, each thread's own run first, and
// nothing waits. Column chunks cost nothing when A is read in place, whereas with packed
// A each would pack A again.
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
  int64_t buffer;       // which packed-B buffer holds it: the running thread's
};

// Rows [m0, m1) and columns [n0, n1) of C, inside one block's columns.
struct GemmCell {
  int64_t m0, m1, n0, n1;
};

class GemmSchedule {
 public:
  // A column block has at most this many panels (nc_block / nr), so at most this many
  // column chunks: run_part keeps a bit per chunk on the stack.
  static constexpr int64_t kMaxPanels = 256;

  // M x N x K with tiles of mr x nr, depth blocks of kc_step, column blocks of nc_block
  // (a multiple of nr; wider than kMaxPanels panels is cut to that); cells have at most
  // max_rows rows. `threads` is the number of threads that will call run_part.
  GemmSchedule(int64_t M, int64_t N, int64_t K, int64_t mr, int64_t nr, int64_t kc_step, int64_t nc_block,
               int64_t max_rows, int64_t threads, bool independent)
      : M_(M),
        N_(N),
        K_(K),
        kc_step_(kc_step),
        nc_block_(std::min(nc_block, kMaxPanels * nr)),
        independent_(independent) {
    nc_block = nc_block_;
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
    } else {
      // Rows first, since a column chunk of its own packs the same A rows again; but with
      // more than two threads, as many column chunks as pairs of threads, so that about
      // two threads (each run of cells keeps to one column chunk) pack each panel of B.
      column_chunks = std::min(block_panels, (threads + 1) / 2);
      row_chunks = std::max(least_row_chunks, std::min(row_tiles, (wanted + column_chunks - 1) / column_chunks));
      column_chunks = std::max(column_chunks, std::min(block_panels, (wanted + row_chunks - 1) / row_chunks));
    }
    row_chunk_ = (row_tiles + row_chunks - 1) / row_chunks * mr;
    row_chunks_ = (M + row_chunk_ - 1) / row_chunk_;
    column_chunk_ = (block_panels + column_chunks - 1) / column_chunks * nr;
    threads_ = threads;
    full_tasks_ = cells_of(std::min(N, nc_block));
    last_tasks_ = cells_of(N - (column_blocks_ - 1) * nc_block);
    full_block_tasks_ = (column_blocks_ - 1) * full_tasks_;
    tasks_ = full_block_tasks_ + last_tasks_;
  }

  int64_t row_chunk() const { return row_chunk_; }  // rows of the largest cell
  int64_t buffers() const { return threads_; }      // packed-B buffers (each one block wide), one per thread

  // Bytes of counters run_part needs, and their setup (once per product, before any
  // run_part).
  size_t counter_bytes() const { return sizeof(std::atomic<int32_t>) * words(); }
  void start(void* memory) {
    auto* w = static_cast<std::atomic<int32_t>*>(memory);
    for (int64_t i = 0; i < words(); ++i) new (w + i) std::atomic<int32_t>(0);
    claimed_ = w;
    progress_ = independent_ ? nullptr : w + blocks_ * max_cells();
  }

  // Claims and runs cells until none is left, as thread `thread` (< threads):
  // compute(block, cell, fresh) computes a cell from the panels of nr columns of the block
  // in buffer block.buffer (panel q at q * nr * kc). With `fresh` the cell's panels are
  // not in that buffer yet: compute packs them, before it reads them or while it computes
  // its first row of tiles. Otherwise an earlier cell of this thread packed them for
  // this block. All cells of a column chunk have the same panels, and no two chunks share
  // one, so a cell's panels are all in the buffer or none is.
  template <class Compute>
  void run_part(int64_t thread, Compute&& compute) {
    if (independent_) {
      run_independent(thread, compute);
      return;
    }
    for (int64_t index = 0; index < blocks_; ++index) {
      // The column chunks of this block already in this thread's buffer.
      uint64_t packed[kMaxPanels / 64] = {};
      GemmBlock block = block_at(index);
      block.buffer = thread;
      const int64_t cells = cells_of(block.nc);
      std::atomic<int32_t>* const claimed = claimed_ + index * max_cells();
      for (int64_t step = 0; step < cells; ++step) {
        const int64_t c = claim(claimed, cells, thread, step);
        if (c < 0) continue;
        const GemmCell cell = cell_at(block, c);
        const int64_t chunk = (cell.n0 - block.jc) / column_chunk_;
        const uint64_t bit = uint64_t{1} << (chunk % 64);
        const bool fresh = (packed[chunk / 64] & bit) == 0;
        packed[chunk / 64] |= bit;
        std::atomic<int32_t>& progress = progress_[block.jc / nc_block_ * max_cells() + c];
        if (!block.first) {
          const int32_t done = static_cast<int32_t>(block.depth_index);
          wait_until([&] { return progress.load(std::memory_order_acquire) == done; });
        }
        compute(block, cell, fresh);
        progress.store(static_cast<int32_t>(block.depth_index + 1), std::memory_order_release);
      }
    }
  }

 private:
  static constexpr int64_t kCellsPerThread = 8;
  static constexpr double kMinCellWork = 1 << 20;

  // Words: in blocks mode, per block and cell, whether a thread has claimed it, and per
  // column block and cell, the depth blocks finished; in independent mode, per task
  // (cell of a column block), whether a thread has claimed it.
  int64_t words() const { return independent_ ? tasks_ : blocks_ * max_cells() + column_blocks_ * max_cells(); }

  // Step `step` of thread `thread`'s walk over `count` items, the flags in `claimed`: its
  // own run of items front to back, then the others' from the back. Returns the item if
  // this thread claimed it, else -1.
  int64_t claim(std::atomic<int32_t>* claimed, int64_t count, int64_t thread, int64_t step) const {
    const int64_t own0 = count * thread / threads_, own1 = count * (thread + 1) / threads_;
    int64_t i = own0 + step;
    if (i >= own1) {
      i = count - 1 - (step - (own1 - own0));
      if (i < own1) i -= own1 - own0;
    }
    if (claimed[i].load(std::memory_order_relaxed) != 0 || claimed[i].exchange(1, std::memory_order_relaxed) != 0) {
      return -1;
    }
    return i;
  }
  int64_t column_chunks_of(int64_t nc) const { return (nc + column_chunk_ - 1) / column_chunk_; }
  int64_t cells_of(int64_t nc) const { return row_chunks_ * column_chunks_of(nc); }
  int64_t max_cells() const { return cells_of(std::min(N_, nc_block_)); }

  // Independent mode: cells claimed as in blocks mode (own run first), each through all
  // depth blocks.
  template <class Compute>
  void run_independent(int64_t thread, Compute& compute) {
    for (int64_t step = 0; step < tasks_; ++step) {
      const int64_t task = claim(claimed_, tasks_, thread, step);
      if (task < 0) continue;
      int64_t first_block, in_block;
      locate(task, &first_block, &in_block);
      for (int64_t d = 0; d < depth_blocks_; ++d) {
        GemmBlock block = block_at(first_block + d);
        block.buffer = thread;
        const GemmCell cell = cell_at(block, in_block);
        compute(block, cell, true);
      }
    }
  }

  // Independent mode: the first block of a task (depth block 0 of its column block) and
  // the task's cell in it.
  void locate(int64_t task, int64_t* block, int64_t* in_block) const {
    int64_t step;
    if (task < full_block_tasks_) {
      step = task / full_tasks_;
      *in_block = task % full_tasks_;
    } else {
      step = column_blocks_ - 1;
      *in_block = task - full_block_tasks_;
    }
    *block = step * depth_blocks_;
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
    b.buffer = 0;
    return b;
  }

  // Cells are numbered down each column chunk, so that a run of cells shares panels.
  GemmCell cell_at(const GemmBlock& block, int64_t cell_index) const {
    const int64_t r = cell_index % row_chunks_, c = cell_index / row_chunks_;
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

  int64_t M_, N_, K_, kc_step_, nc_block_;
  bool independent_;
  int64_t depth_blocks_, column_blocks_, blocks_;
  int64_t row_chunk_, row_chunks_, column_chunk_, threads_;
  int64_t full_tasks_, last_tasks_, full_block_tasks_, tasks_;  // independent mode's tasks
  std::atomic<int32_t>* claimed_ = nullptr;
  std::atomic<int32_t>* progress_ = nullptr;
};

}  // namespace catalyst::cpu
