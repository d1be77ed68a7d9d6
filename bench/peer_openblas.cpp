// peer_openblas.cpp — catalyst-bench-openblas: the OpenBLAS peer of catalyst-kernels-bench,
// matmul/f32/<N> as cblas_sgemm (row-major, no transposes, into a preallocated C).
// Built only when OpenBLAS is found (bench/CMakeLists.txt).
//
//   OPENBLAS_CORETYPE=SkylakeX OPENBLAS_NUM_THREADS=2 catalyst-bench-openblas [--sizes ...]
//
// OPENBLAS_CORETYPE matters on this VM: without it OpenBLAS misdetects the CPU and runs
// without AVX-512. The context lines give the core and thread count it actually used.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <string>

#include "bench_args.hpp"
#include "host_matrix.hpp"

namespace {

void sgemm_case(benchmark::State& state, int64_t n) {
  const std::vector<float> a = catalyst::bench::random_matrix(n * n, 1);
  const std::vector<float> b = catalyst::bench::random_matrix(n * n, 2);
  std::vector<float> c(static_cast<size_t>(n * n));
  const auto size = static_cast<blasint>(n);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, size, size, size, 1.0f, a.data(), size, b.data(), size, 0.0f,
                c.data(), size);
    benchmark::DoNotOptimize(c.data());
  }
  const double nd = static_cast<double>(n);
  state.counters["flops"] = benchmark::Counter(2 * nd * nd * nd, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  catalyst::bench::Args args;
  if (!catalyst::bench::parse_args(argc, argv, &args)) return 2;
  benchmark::AddCustomContext("openblas_config", openblas_get_config());
  benchmark::AddCustomContext("openblas_core", openblas_get_corename());
  benchmark::AddCustomContext("openblas_threads", std::to_string(openblas_get_num_threads()));
  for (const int64_t n : args.sizes) {
    benchmark::RegisterBenchmark(("matmul/f32/" + std::to_string(n)).c_str(), sgemm_case, n)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
