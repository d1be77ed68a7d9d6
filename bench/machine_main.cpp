// machine_main.cpp — catalyst-bench-machine: the FMA peak and the STREAM triad of this
// machine (machine_bench.hpp), as Google Benchmark cases.
//
//   catalyst-bench-machine [--benchmark_* flags] [--threads 1,2] [--add-elements N]
#include "machine_bench.hpp"

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  catalyst::bench::Args args;
  if (!catalyst::bench::parse_args(argc, argv, &args)) return 2;
  catalyst::bench::register_fma_peak(args);
  catalyst::bench::register_stream_triad(args);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
