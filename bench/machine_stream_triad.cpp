// machine_stream_triad.cpp — stream_triad/<variant>/<elements>/threads:<T>: a[i] = b[i] + s c[i]
// over three f32 arrays of --add-elements each (far larger than any cache), in chunks of
// 1 MiB shared by T threads (machine_threads.hpp): the DRAM bandwidth a streaming kernel
// can get, measured the way STREAM's triad is (our own code, not STREAM's).
//
// Variants, because how the stores are written changes the traffic on this CPU:
//   plain      what GCC makes of the loop for the baseline x86-64 (SSE stores), as STREAM
//              built with plain gcc -O3: each store first reads its line (write-allocate)
//   avx512     whole-line 64-byte stores, as STREAM built with -march=native: recent Xeons
//              can skip the write-allocate read for a store that fills a whole line
//   avx512_nt  non-temporal (streaming) whole-line stores, which bypass the caches
// compare.py takes the best variant as the machine's bandwidth.
//
// Counter: bytes_per_second, 3 x 4 bytes per element, as STREAM counts (a write-allocate
// read of a, where there is one, is not counted).
#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

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

enum class Variant { kPlain, kAvx512, kAvx512Stream };

void triad_plain(float* a, const float* b, const float* c, float s, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) a[i] = b[i] + s * c[i];
}

// begin and end are multiples of 16 elements (chunks of kChunk, arrays of whole chunks
// apart from the tail, which triad_plain does) on 64-byte aligned arrays.
__attribute__((target("avx512f"))) void triad_avx512(float* a, const float* b, const float* c, float s, int64_t begin,
                                                     int64_t end, bool stream) {
  const __m512 scale = _mm512_set1_ps(s);
  for (int64_t i = begin; i < end; i += 16) {
    const __m512 v = _mm512_fmadd_ps(scale, _mm512_load_ps(c + i), _mm512_load_ps(b + i));
    if (stream) {
      _mm512_stream_ps(a + i, v);
    } else {
      _mm512_store_ps(a + i, v);
    }
  }
  if (stream) _mm_sfence();  // streaming stores are weakly ordered: finish them before the join
}

void triad_case(benchmark::State& state, int64_t elements, int64_t threads, Variant variant) {
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
      const int64_t begin = chunk * kChunk, end = std::min(elements, (chunk + 1) * kChunk);
      if (variant == Variant::kPlain) {
        triad_plain(pa, pb, pc, s, begin, end);
      } else {
        const int64_t vector_end = begin + (end - begin) / 16 * 16;
        triad_avx512(pa, pb, pc, s, begin, vector_end, variant == Variant::kAvx512Stream);
        triad_plain(pa, pb, pc, s, vector_end, end);
      }
    });
    benchmark::DoNotOptimize(pa);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * elements * 3 * static_cast<int64_t>(sizeof(float)));
}

}  // namespace

void register_stream_triad(const Args& args) {
  __builtin_cpu_init();
  std::vector<std::pair<Variant, const char*>> variants{{Variant::kPlain, "plain"}};
  if (__builtin_cpu_supports("avx512f")) {
    variants.insert(variants.end(), {{Variant::kAvx512, "avx512"}, {Variant::kAvx512Stream, "avx512_nt"}});
  }
  for (const int64_t threads : args.threads) {
    for (const auto& [variant, name] : variants) {
      benchmark::RegisterBenchmark(("stream_triad/" + std::string(name) + "/" + std::to_string(args.add_elements) +
                                    "/threads:" + std::to_string(threads))
                                       .c_str(),
                                   triad_case, args.add_elements, threads, variant)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
}

}  // namespace catalyst::bench
