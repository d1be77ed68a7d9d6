// machine_bench.hpp — catalyst-bench-machine: the machine's own ceilings, measured by our
// own code in the same run as the kernels, so every "% of peak" in the comparison is
// against this machine as it is loaded now, not a data sheet.
#pragma once

#include <benchmark/benchmark.h>

#include "bench_args.hpp"
#include "machine_threads.hpp"

namespace catalyst::bench {

void register_fma_peak(const Args& args);
void register_stream_triad(const Args& args);

}  // namespace catalyst::bench
