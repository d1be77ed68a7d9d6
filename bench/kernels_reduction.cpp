// kernels_reduction.cpp — sum/f32/<rows>x<cols>: the sum over the last axis of the same
// input as the normalisation cases (4096 x 4096 by default), a reduction along contiguous
// memory, as the norms' statistics and the gradient sums of bias terms are.
#include <string>

#include "kernels_bench.hpp"

namespace catalyst::bench {
namespace {

void sum_case(benchmark::State& state, int64_t rows, int64_t cols) {
  const Tensor x = random(cpu_device(), CTL_DTYPE_F32, {rows, cols}, false, 1, 0, -1.0, 1.0);
  time_calls(state, [&] { return sum(x, {-1}); });
  state.SetBytesProcessed(state.iterations() * rows * cols * static_cast<int64_t>(sizeof(float)));
}

}  // namespace

void register_reduction(const Args& args) {
  const std::string shape = std::to_string(args.norm_rows) + "x" + std::to_string(args.norm_cols);
  benchmark::RegisterBenchmark(("sum/f32/" + shape).c_str(), sum_case, args.norm_rows, args.norm_cols)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace catalyst::bench
