// machine_stream_triad.cpp — stream_triad/f32/<elements>/threads:<T>: a[i] = b[i] + s c[i]
// over three f32 arrays of --add-elements each (far larger than any cache), in chunks of
// 1 MiB shared by T threads (machine_threads.hpp): the DRAM bandwidth a streaming kernel
// can get, measured the way STREAM's triad is (our own code, not STREAM's).
//
// Counter: bytes_per_second, 3 x 4 bytes per element, as STREAM counts (the write-allocate
// read of a is not counted). Plain stores, as STREAM built with GCC has.
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>

#include "machine_bench.hpp"

namespace catalyst::bench {
namespace {

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};
using Array = std::unique_ptr<float[], FreeDeleter>;

Array allocate(int64_t elements) {
  // 2 MiB alignment lets the kernel back the arrays with huge pages where it may.
  const size_t bytes = (static_cast<size_t>(elements) * sizeof(float) + (2u << 20) - 1) / (2u << 20) * (2u << 20);
  return Array(static_cast<float*>(std::aligned_alloc(2u << 20, bytes)));
}

// Elements per chunk: 1 MiB of each array, enough to stream at full speed, small enough
// for the threads to share the work evenly.
constexpr int64_t kChunk = int64_t{1} << 18;

void triad_case(benchmark::State& state, int64_t elements, int64_t threads) {
  Array a = allocate(elements), b = allocate(elements), c = allocate(elements);
  if (!a || !b || !c) {
    state.SkipWithError("out of memory for the three arrays");
    return;
  }
  float* const pa = a.get();
  float* const pb = b.get();
  float* const pc = c.get();
  const int64_t chunks = (elements + kChunk - 1) / kChunk;
  run_chunks(threads, chunks, [&](int64_t chunk) {
    for (int64_t i = chunk * kChunk; i < std::min(elements, (chunk + 1) * kChunk); ++i) {
      pa[i] = 0.0f;
      pb[i] = 1.0f;
      pc[i] = 2.0f;
    }
  });
  const float s = 3.0f;
  for (auto _ : state) {
    run_chunks(threads, chunks, [&](int64_t chunk) {
      const int64_t end = std::min(elements, (chunk + 1) * kChunk);
      for (int64_t i = chunk * kChunk; i < end; ++i) pa[i] = pb[i] + s * pc[i];
    });
    benchmark::DoNotOptimize(pa);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * elements * 3 * static_cast<int64_t>(sizeof(float)));
}

}  // namespace

void register_stream_triad(const Args& args) {
  for (const int64_t threads : args.threads) {
    benchmark::RegisterBenchmark(
        ("stream_triad/f32/" + std::to_string(args.add_elements) + "/threads:" + std::to_string(threads)).c_str(),
        triad_case, args.add_elements, threads)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace catalyst::bench
