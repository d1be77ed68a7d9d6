// thread_pool.h — the instance's worker threads and a statically partitioned parallel-for.
//
// Work is split into at most size() contiguous parts, part p always covering the same
// range for a given part count, so reductions that combine per-part results in part order
// are deterministic for a given thread count. Idle workers sleep on a condition variable.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace catalyst::cpu {

class ThreadPool {
 public:
  // `threads` counts the calling thread too: threads - 1 workers are started.
  explicit ThreadPool(unsigned threads);
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

 private:
  void worker_loop(unsigned index);

  unsigned size_;
  std::mutex mutex_;
  std::condition_variable start_;
  std::condition_variable done_;
  uint64_t generation_ = 0;
  unsigned parts_ = 0;
  unsigned pending_ = 0;
  bool stopping_ = false;
  void (*body_)(void*, unsigned) = nullptr;
  void* context_ = nullptr;
  std::exception_ptr error_;
  std::atomic<bool> busy_{false};
  std::vector<std::thread> workers_;
};

// Number of threads an instance uses: CATALYST_CPU_THREADS when it is a positive integer,
// else the CPUs this process may run on.
unsigned default_thread_count();

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
