// thread_pool.cpp — worker threads that spin briefly, then sleep on a futex, until a
// parallel-for hands them a part.
#include "thread_pool.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "simd_state.h"

namespace catalyst::cpu {
namespace {

void futex_wait(std::atomic<uint32_t>* word, uint32_t expected) {
  // Returns at once when *word != expected (EAGAIN), on a wake-up, or spuriously (EINTR);
  // every caller re-checks the word in a loop.
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

void futex_wake_all(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

// Spins until *word differs from `seen` or kSpinMicroseconds pass; returns the last value
// read. The clock is read only every 64 pauses: a pause is tens of nanoseconds.
//
// On a machine with more runnable threads than CPUs spinning backfires: the spinner uses
// up its share and, unlike a thread woken from sleep, gets no priority from the scheduler
// when the next job comes, so its parts end up run one after another by the caller. A
// spinner that finds it was descheduled (a gap between two clock reads far longer than
// 64 pauses) stops spinning for its next kSkipAfterPreemption waits and sleeps at once.
// *skip_spins counts those waits; it belongs to the waiting thread's role (each worker, and
// the pool's one caller at a time), not to a thread_local: a plugin is a library that may be
// unloaded, and its thread-locals would outlive it in every thread that touched them.
uint32_t spin_while_equal(const std::atomic<uint32_t>& word, uint32_t seen, unsigned* skip_spins) {
  using Clock = std::chrono::steady_clock;
  constexpr auto kPreempted = std::chrono::microseconds(200);
  constexpr unsigned kSkipAfterPreemption = 1000;
  if (*skip_spins > 0) {
    --*skip_spins;
    return word.load(std::memory_order_acquire);
  }
  auto last = Clock::now();
  const auto deadline = last + std::chrono::microseconds(ThreadPool::kSpinMicroseconds);
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      const uint32_t value = word.load(std::memory_order_acquire);
      if (value != seen) return value;
      cpu_relax();
    }
    const auto now = Clock::now();
    if (now - last > kPreempted) {
      *skip_spins = kSkipAfterPreemption;
      return word.load(std::memory_order_acquire);
    }
    if (now >= deadline) return word.load(std::memory_order_acquire);
    last = now;
  }
}

// Waits until *word differs from `seen`: a bounded spin, then futex sleeps. `sleepers`
// counts threads asleep on the word, so that the waker calls into the kernel only when
// someone sleeps. The seq_cst increment and load pair with the waker's seq_cst store and
// load: either the waker sees the sleeper, or the sleeper sees the new value.
uint32_t wait_while_equal(std::atomic<uint32_t>& word, uint32_t seen, std::atomic<uint32_t>& sleepers,
                          unsigned* skip_spins) {
  uint32_t value = spin_while_equal(word, seen, skip_spins);
  if (value != seen) return value;
  sleepers.fetch_add(1, std::memory_order_seq_cst);
  while ((value = word.load(std::memory_order_seq_cst)) == seen) futex_wait(&word, seen);
  sleepers.fetch_sub(1, std::memory_order_relaxed);
  return value;
}

void wake_if_sleeping(std::atomic<uint32_t>& word, const std::atomic<uint32_t>& sleepers) {
  if (sleepers.load(std::memory_order_seq_cst) != 0) futex_wake_all(&word);
}

// The CPUs this process may run on, in order.
std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

// Pinning keeps each worker's slice of the data in one core's caches from op to op; it
// helps only when every thread has a CPU of its own. With more threads than CPUs (or
// CATALYST_CPU_PIN=0) the scheduler is left to balance, over the device's CPUs when the
// pool is bound to them (PoolPlacement::bind). The caller's thread belongs to
// the user and is never pinned; worker i gets the i-th allowed CPU, leaving CPU 0 of the
// set, where the scheduler usually keeps the main thread, to the caller.
bool pinning_wanted(unsigned threads, const std::vector<int>& cpus) {
  if (const char* env = std::getenv("CATALYST_CPU_PIN")) {
    if (std::strcmp(env, "0") == 0) return false;
  }
  return threads > 1 && cpus.size() == threads;
}

}  // namespace

unsigned thread_count_setting() {
  if (const char* env = std::getenv("CATALYST_CPU_THREADS")) {
    char* end = nullptr;
    const long value = std::strtol(env, &end, 10);
    // A bad value is ignored rather than fatal: the plugin must load whatever the env says.
    if (end != env && *end == '\0' && value > 0) return static_cast<unsigned>(std::min(value, 1024L));
  }
  return 0;
}

unsigned default_thread_count() {
  if (const unsigned setting = thread_count_setting()) return setting;
  const std::vector<int> cpus = allowed_cpus();
  if (!cpus.empty()) return static_cast<unsigned>(cpus.size());
  const unsigned hw = std::thread::hardware_concurrency();
  return hw ? hw : 1u;
}

ThreadPool::ThreadPool(unsigned threads, const PoolPlacement& placement) : size_(threads ? threads : 1u) {
  const std::vector<int> cpus = placement.cpus.empty() ? allowed_cpus() : placement.cpus;
  const bool pin = pinning_wanted(size_, cpus);
  workers_.reserve(size_ - 1);
  for (unsigned i = 1; i < size_; ++i) {
    workers_.emplace_back([this, i] { worker_loop(i); });
    const pthread_t handle = workers_.back().native_handle();
    char name[32];
    std::snprintf(name, sizeof name, "ctl-cpu%u/w%u", placement.device, i);
    name[15] = '\0';  // the kernel keeps 15 characters
    pthread_setname_np(handle, name);
    // Best effort: a refused affinity (a container's policy) only costs locality.
    cpu_set_t set;
    CPU_ZERO(&set);
    if (pin) {
      CPU_SET(cpus[i], &set);
    } else if (placement.bind) {
      for (const int cpu : cpus) {
        if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, &set);
      }
    }
    if (CPU_COUNT(&set) > 0) pthread_setaffinity_np(handle, sizeof set, &set);
  }
}

ThreadPool::~ThreadPool() {
  stopping_.store(true, std::memory_order_relaxed);  // the seq_cst bump below publishes it
  generation_.fetch_add(1, std::memory_order_seq_cst);
  futex_wake_all(&generation_);
  for (auto& t : workers_) t.join();
}

namespace {

constexpr uint64_t claim_word(uint32_t generation, unsigned parts, unsigned next) {
  return (uint64_t{generation} << 32) | (uint64_t{parts} << 16) | next;
}

}  // namespace

unsigned ThreadPool::run_parts(uint32_t generation) {
  unsigned ran = 0;
  uint64_t word = claim_.load(std::memory_order_acquire);
  for (;;) {
    const unsigned parts = static_cast<unsigned>(word >> 16) & 0xffffu;
    const unsigned next = static_cast<unsigned>(word) & 0xffffu;
    if (static_cast<uint32_t>(word >> 32) != generation || next >= parts) return ran;
    if (!claim_.compare_exchange_weak(word, word + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
    try {
      body_(context_, next);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex_);
      if (!error_) error_ = std::current_exception();
    }
    ++ran;
    word = claim_.load(std::memory_order_acquire);
  }
}

void ThreadPool::worker_loop(unsigned /*index*/) {
  uint32_t seen = 0;
  unsigned skip_spins = 0;
  for (;;) {
    seen = wait_while_equal(generation_, seen, sleeping_workers_, &skip_spins);
    if (stopping_.load(std::memory_order_acquire)) return;
    clear_upper_state();
    const unsigned ran = run_parts(seen);
    if (ran == 0) continue;
    finished_.fetch_add(ran, std::memory_order_seq_cst);
    wake_if_sleeping(finished_, caller_sleeping_);
  }
}

void ThreadPool::run(unsigned parts, void (*body)(void*, unsigned), void* context) {
  if (parts == 0) return;
  bool expected = false;
  if (parts == 1 || workers_.empty() || !busy_.compare_exchange_strong(expected, true, std::memory_order_acquire)) {
    for (unsigned p = 0; p < parts; ++p) body(context, p);
    return;
  }
  parts = std::min(parts, size_);
  body_ = body;
  context_ = context;
  error_ = nullptr;
  finished_.store(0, std::memory_order_relaxed);
  const uint32_t generation = generation_.load(std::memory_order_relaxed) + 1;
  claim_.store(claim_word(generation, parts, 0), std::memory_order_release);
  // seq_cst: pairs with a sleeping worker's (see wait_while_equal).
  generation_.store(generation, std::memory_order_seq_cst);
  wake_if_sleeping(generation_, sleeping_workers_);
  const unsigned mine = run_parts(generation);
  const uint32_t theirs = parts - mine;
  for (uint32_t done = finished_.load(std::memory_order_acquire); done != theirs;
       done = finished_.load(std::memory_order_acquire)) {
    wait_while_equal(finished_, done, caller_sleeping_, &caller_skip_spins_);
  }
  std::exception_ptr error = error_;
  error_ = nullptr;
  busy_.store(false, std::memory_order_release);
  if (error) std::rethrow_exception(error);
}

}  // namespace catalyst::cpu
