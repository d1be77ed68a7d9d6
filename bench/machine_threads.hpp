// machine_threads.hpp — runs one function on T threads at once, each pinned to its own CPU
// of the process's affinity mask, for the machine's own peaks (FMA, STREAM triad): a
// figure of the hardware must not depend on where the scheduler happens to put threads.
#pragma once

#include <sched.h>

#include <cstdint>
#include <thread>
#include <vector>

namespace catalyst::bench {

// The CPUs this process may run on, in order.
inline std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    }
  }
  return cpus;
}

// Calls body(t) on threads t = 0..threads-1, thread t pinned to the t-th allowed CPU
// (wrapping around when there are fewer CPUs than threads), and waits for all of them.
template <class Body>
void run_pinned(int64_t threads, const Body& body) {
  const std::vector<int> cpus = allowed_cpus();
  std::vector<std::thread> workers;
  for (int64_t t = 0; t < threads; ++t) {
    workers.emplace_back([&body, &cpus, t] {
      if (!cpus.empty()) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpus[static_cast<size_t>(t) % cpus.size()], &one);
        sched_setaffinity(0, sizeof one, &one);
      }
      body(t);
    });
  }
  for (std::thread& worker : workers) worker.join();
}

}  // namespace catalyst::bench
