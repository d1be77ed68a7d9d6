// thread_pool.cpp — worker threads that sleep until a parallel-for hands them a part.
#include "thread_pool.h"

#include <sched.h>

#include <cstdlib>

#include "simd_state.h"

namespace catalyst::cpu {

unsigned default_thread_count() {
  if (const char* env = std::getenv("CATALYST_CPU_THREADS")) {
    char* end = nullptr;
    const long value = std::strtol(env, &end, 10);
    // A bad value is ignored rather than fatal: the plugin must load whatever the env says.
    if (end != env && *end == '\0' && value > 0) return static_cast<unsigned>(std::min(value, 1024L));
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int count = CPU_COUNT(&set);
    if (count > 0) return static_cast<unsigned>(count);
  }
  const unsigned hw = std::thread::hardware_concurrency();
  return hw ? hw : 1u;
}

ThreadPool::ThreadPool(unsigned threads) : size_(threads ? threads : 1u) {
  workers_.reserve(size_ - 1);
  for (unsigned i = 1; i < size_; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  start_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::worker_loop(unsigned index) {
  uint64_t seen = 0;
  for (;;) {
    void (*body)(void*, unsigned);
    void* context;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      start_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      if (index >= parts_) continue;  // this job has fewer parts than threads
      body = body_;
      context = context_;
    }
    std::exception_ptr error;
    clear_upper_state();
    try {
      body(context, index);
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (error && !error_) error_ = error;
    if (--pending_ == 0) done_.notify_one();
  }
}

void ThreadPool::run(unsigned parts, void (*body)(void*, unsigned), void* context) {
  if (parts == 0) return;
  bool expected = false;
  if (parts == 1 || workers_.empty() || !busy_.compare_exchange_strong(expected, true)) {
    for (unsigned p = 0; p < parts; ++p) body(context, p);
    return;
  }
  parts = std::min(parts, size_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    body_ = body;
    context_ = context;
    parts_ = parts;
    pending_ = parts - 1;
    error_ = nullptr;
    ++generation_;
  }
  start_.notify_all();
  std::exception_ptr error;
  try {
    body(context, 0);
  } catch (...) {
    error = std::current_exception();
  }
  {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
    if (!error) error = error_;
    error_ = nullptr;
  }
  busy_.store(false);
  if (error) std::rethrow_exception(error);
}

}  // namespace catalyst::cpu
