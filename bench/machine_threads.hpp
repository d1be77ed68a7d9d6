// machine_threads.hpp — runs the machine's own peaks (FMA, STREAM triad) on T threads,
// the work cut into chunks that each thread takes as it comes free.
//
// Neither a static split nor pinned threads: with either, a thread that shares its core
// with another process holds up the whole pass, and the machine's ceiling would come out
// below what the kernels it is compared with (whose threads are not pinned either) get on
// the same machine at the same moment. On an idle machine the scheduler puts the T busy
// threads on T cores by itself.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace catalyst::bench {

// Runs body(chunk) for every chunk in [0, chunks) on `threads` threads, each taking the
// next chunk when it is done with its last, and waits for all of them.
template <class Body>
void run_chunks(int64_t threads, int64_t chunks, const Body& body) {
  std::atomic<int64_t> next{0};
  std::vector<std::thread> workers;
  for (int64_t t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      for (int64_t chunk = next.fetch_add(1); chunk < chunks; chunk = next.fetch_add(1)) body(chunk);
    });
  }
  for (std::thread& worker : workers) worker.join();
}

}  // namespace catalyst::bench
