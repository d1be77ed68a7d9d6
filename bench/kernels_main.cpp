// kernels_main.cpp — catalyst-kernels-bench: Google Benchmark cases for the CPU plugin's
// kernels, called through the C ABI. bench/README.md lists the cases and flags.
//
//   catalyst-kernels-bench [--benchmark_* flags] [--sizes 128,...] [--lowp-sizes ...] ...
#include <cstdlib>
#include <string>

#include "kernels_bench.hpp"

namespace catalyst::bench {

Device cpu_device() {
  static const Runtime runtime;
  static const Device device = runtime.device("cpu");
  return device;
}

bool failed(benchmark::State& state, ctl_status* status) {
  if (status == nullptr) return false;
  state.SkipWithError(ctl_status_get_message(status));
  ctl_status_free(status);
  return true;
}

}  // namespace catalyst::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  catalyst::bench::Args args;
  if (!catalyst::bench::parse_args(argc, argv, &args)) return 2;
  try {
    const catalyst::Device device = catalyst::bench::cpu_device();
    benchmark::AddCustomContext("catalyst_device", device.name());
    for (const char* name : {"CATALYST_CPU_THREADS", "CATALYST_CPU_ISA"}) {
      const char* value = std::getenv(name);
      benchmark::AddCustomContext(name, value ? value : "(unset)");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "catalyst-kernels-bench: no CPU device: %s\n", e.what());
    return 1;
  }
  catalyst::bench::register_matmul(args);
  catalyst::bench::register_elementwise(args);
  catalyst::bench::register_normalization(args);
  catalyst::bench::register_reduction(args);
  catalyst::bench::register_training(args);
  catalyst::bench::register_op_overhead();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
