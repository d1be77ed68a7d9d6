// kernels_bench.hpp — what the files of catalyst-kernels-bench share: the device every case
// runs on and one function per op family that registers its Google Benchmark cases.
//
// Case names are the comparison script's keys (bench/compare.py) and the peers use the
// same ones: matmul/<dtype>/<N>, add/f32/<elements>, softmax/f32/<rows>x<cols>,
// layer_norm/f32/<rows>x<cols>, op_overhead/<call>/<calls per iteration>. The other cases
// (gelu_tanh, log_softmax, rms_norm, sum, cross_entropy, adamw_step) have no peer in the
// comparison; they are there to follow the kernels the GPT's training step spends time in.
#pragma once

#include <benchmark/benchmark.h>

#include "bench_args.hpp"
#include "catalyst/catalyst.hpp"

namespace catalyst::bench {

// The CPU plugin's device, from one runtime that lives as long as the process. The plugin
// reads CATALYST_CPU_THREADS and CATALYST_CPU_ISA when it loads, so the comparison script
// sets them per process.
Device cpu_device();

// Marks the case as failed with the status's message (and frees the status). Returns true
// when there was an error, so a timed loop can stop.
bool failed(benchmark::State& state, ctl_status* status);

// Times `call`, which returns a new tensor (as a user's call does), each call ending with a
// device synchronize; a failure (catalyst::Error) marks the case failed.
template <class Call>
void time_calls(benchmark::State& state, Call&& call) {
  try {
    for (auto _ : state) {
      const Tensor result = call();
      cpu_device().synchronize();
    }
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void register_matmul(const Args& args);
void register_elementwise(const Args& args);
void register_normalization(const Args& args);
void register_reduction(const Args& args);
void register_training(const Args& args);
void register_op_overhead();

}  // namespace catalyst::bench
