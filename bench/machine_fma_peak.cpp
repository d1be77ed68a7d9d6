// machine_fma_peak.cpp — fma_peak/f32/threads:<T>: the f32 multiply-add rate of the cores
// with nothing but registers involved, the ceiling an sgemm can approach. Each thread runs
// independent chains of vector FMAs, enough of them to cover the FMA latency on every FMA
// port, with the widest vectors the CPU has (AVX-512, else AVX2+FMA).
//
// Counter: flops (FLOP/s, 2 per lane of each FMA); context fma_isa says which path ran.
#include <immintrin.h>

#include <string>

#include "machine_bench.hpp"

namespace catalyst::bench {
namespace {

// One chunk of work: FMAs per chain, about 2.5 ms at 3 GHz. A benchmark iteration is 20
// chunks per thread (about 50 ms), handed out as threads come free (run_chunks).
constexpr int64_t kRounds = int64_t{1} << 20;
constexpr int64_t kChunksPerThread = 20;

// 16 chains: a 4-cycle latency times 2 FMA ports needs 8; 16 leaves room to spare, and
// with the two constants they still fit in the 32 ZMM registers.
constexpr int kChains512 = 16;
__attribute__((target("avx512f"))) float fma_chains_avx512(int64_t rounds) {
  __m512 acc[kChains512];
  for (int c = 0; c < kChains512; ++c) acc[c] = _mm512_set1_ps(1.0f + 0.001f * static_cast<float>(c));
  const __m512 scale = _mm512_set1_ps(0.9999999f), shift = _mm512_set1_ps(1e-7f);
  for (int64_t r = 0; r < rounds; ++r) {
#pragma GCC unroll 16
    for (int c = 0; c < kChains512; ++c) acc[c] = _mm512_fmadd_ps(acc[c], scale, shift);
  }
  __m512 sum = acc[0];
  for (int c = 1; c < kChains512; ++c) sum = _mm512_add_ps(sum, acc[c]);
  // Stored and added by hand: GCC 12 warns falsely inside _mm512_reduce_add_ps.
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  float total = 0;
  for (float lane : lanes) total += lane;
  return total;
}

// AVX2 has 16 YMM registers: 12 chains and the two constants.
constexpr int kChains256 = 12;
__attribute__((target("avx2,fma"))) float fma_chains_avx2(int64_t rounds) {
  __m256 acc[kChains256];
  for (int c = 0; c < kChains256; ++c) acc[c] = _mm256_set1_ps(1.0f + 0.001f * static_cast<float>(c));
  const __m256 scale = _mm256_set1_ps(0.9999999f), shift = _mm256_set1_ps(1e-7f);
  for (int64_t r = 0; r < rounds; ++r) {
#pragma GCC unroll 12
    for (int c = 0; c < kChains256; ++c) acc[c] = _mm256_fmadd_ps(acc[c], scale, shift);
  }
  __m256 sum = acc[0];
  for (int c = 1; c < kChains256; ++c) sum = _mm256_add_ps(sum, acc[c]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sum);
  float total = 0;
  for (float lane : lanes) total += lane;
  return total;
}

void fma_peak_case(benchmark::State& state, int64_t threads, bool avx512) {
  const int64_t chunks = kChunksPerThread * threads;
  std::vector<float> sinks(static_cast<size_t>(chunks));
  for (auto _ : state) {
    run_chunks(threads, chunks, [&](int64_t chunk) {
      sinks[static_cast<size_t>(chunk)] = avx512 ? fma_chains_avx512(kRounds) : fma_chains_avx2(kRounds);
    });
    benchmark::DoNotOptimize(sinks.data());
  }
  const double per_chunk = static_cast<double>(kRounds) * (avx512 ? kChains512 * 16 : kChains256 * 8) * 2;
  state.counters["flops"] =
      benchmark::Counter(per_chunk * static_cast<double>(chunks), benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

void register_fma_peak(const Args& args) {
  __builtin_cpu_init();
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  benchmark::AddCustomContext("fma_isa", avx512 ? "avx512" : avx2 ? "avx2" : "none");
  if (!avx512 && !avx2) return;  // no vector FMA: there is no FMA peak to report
  for (const int64_t threads : args.threads) {
    benchmark::RegisterBenchmark(("fma_peak/f32/threads:" + std::to_string(threads)).c_str(), fma_peak_case, threads,
                                 avx512)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace catalyst::bench
