// thread_pool.h — the instance's worker threads and a statically partitioned parallel-for.
//
// Work is split into at most size() contiguous parts, part p always covering the same
// range for a given part count, so reductions that combine per-part results in part order
// are deterministic for a given thread count.
//
// Hand-off: a job is published by bumping an atomic generation; its parts are then
// claimed one at a time from a shared counter by whichever thread comes first, the caller
// included. A worker that is asleep or not scheduled (a busy machine) therefore never
// holds the caller up: the caller runs the parts nobody has claimed and waits only for
// parts already running. Which thread runs a part never changes what the part computes.
// A worker that has just finished a job spins for a short, bounded time
// (kSpinMicroseconds) before it sleeps on a futex, so back-to-back ops do not each pay a
// wake-up; an idle pool never spins, and a thread that finds itself descheduled while
// spinning (a busy machine) sleeps at once for a while (see thread_pool.cpp).
// Workers are pinned one per allowed CPU when the pool has exactly one thread per CPU
// (see pinning_wanted in thread_pool.cpp). A pool that serves one device of several
// (device_plan.h) is given that device's CPUs: its workers never leave them.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace catalyst::cpu {

// One step of a spin-wait: tells the CPU this thread is only waiting.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Where a pool's workers run.
struct PoolPlacement {
  std::vector<int> cpus;  // OS numbers of the CPUs the pool serves; empty: those this process may use
  bool bind = false;      // keep every worker on `cpus` (a device that is a part of the machine)
  unsigned device = 0;    // names the workers "ctl-cpu<device>/w<i>" (top, /proc/self/task)
};

class ThreadPool {
 public:
  // `threads` counts the calling thread too: threads - 1 workers are started. The calling
  // thread belongs to the user and is never bound.
  explicit ThreadPool(unsigned threads, const PoolPlacement& placement = {});
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned size() const { return size_; }

  // Runs body(context, part) for every part in [0, parts), parts <= size(). Part 0 runs on
  // the calling thread. When the pool is already running a job (another thread's op, or
  // a nested call from inside a part) every part runs on the calling thread instead:
  // that can never deadlock, and the part indices stay in [0, parts) for scratch slots.
  // An exception thrown by a part is rethrown here after every part has finished.
  void run(unsigned parts, void (*body)(void*, unsigned), void* context);

  // How long a worker (or the caller) spins for the next job (or the last part) before
  // it sleeps. Long enough to cover the gap between two ops of a training step, short
  // enough that a pool left idle gives its cores back at once.
  static constexpr int64_t kSpinMicroseconds = 50;

 private:
  void worker_loop(unsigned index);
  // Claims and runs parts of job `generation` until none is left; returns how many ran.
  unsigned run_parts(uint32_t generation);

  unsigned size_;
  // The job: written by run() before the claim word is published; a thread reads them
  // only after it has claimed a part, which keeps the job from finishing (and the next
  // one from overwriting them) until that part is done.
  void (*body_)(void*, unsigned) = nullptr;
  void* context_ = nullptr;
  // Set by the destructor while a worker that woke for the last job may be reading it
  // (ThreadSanitizer saw the plain bool race): atomic, published by the generation bump.
  std::atomic<bool> stopping_{false};
  // generation (32 bits) | part count (16) | next unclaimed part (16).
  alignas(64) std::atomic<uint64_t> claim_{0};
  // Futex words: generation_ counts published jobs (workers sleep on it); finished_
  // counts the parts workers have finished in the current job (the caller sleeps on it).
  alignas(64) std::atomic<uint32_t> generation_{0};
  std::atomic<uint32_t> sleeping_workers_{0};
  alignas(64) std::atomic<uint32_t> finished_{0};
  std::atomic<uint32_t> caller_sleeping_{0};
  alignas(64) std::atomic<bool> busy_{false};
  unsigned caller_skip_spins_ = 0;  // the spin skips of whichever thread holds busy_
  std::mutex error_mutex_;  // taken only when a part throws
  std::exception_ptr error_;
  std::vector<std::thread> workers_;
};

// Number of threads an instance uses: CATALYST_CPU_THREADS when it is a positive integer,
// else the CPUs this process may run on.
unsigned default_thread_count();
// CATALYST_CPU_THREADS when it is a positive integer (at most 1024), else 0.
unsigned thread_count_setting();

// Calls f(begin, end, part) over [0, n) split into contiguous parts of at least `grain`
// items (one part, on the calling thread, when n is small).
template <class F>
void parallel_for(ThreadPool* pool, int64_t n, int64_t grain, F&& f) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t wanted = (n + grain - 1) / grain;
  const unsigned parts = pool ? static_cast<unsigned>(std::min<int64_t>(wanted, pool->size())) : 1u;
  if (parts <= 1) {
    f(int64_t{0}, n, 0u);
    return;
  }
  struct Job {
    F* f;
    int64_t n;
    unsigned parts;
  } job{&f, n, parts};
  pool->run(
      parts,
      [](void* context, unsigned part) {
        auto* j = static_cast<Job*>(context);
        const int64_t begin = j->n * part / j->parts;
        const int64_t end = j->n * (part + 1) / j->parts;
        if (begin < end) (*j->f)(begin, end, part);
      },
      &job);
}

}  // namespace catalyst::cpu
