// kernels_reduction.cpp — two sums of f32:
//   sum/f32/<rows>x<cols>: over the last axis of the same input as the normalisation cases
//     (4096 x 4096 by default), a reduction along contiguous memory, as the norms'
//     statistics are;
//   column_sum/f32/<rows>x<cols>: over the first axis, the gradient of a bias broadcast
//     down the rows of a matmul's output. The shapes are the benchmark GPT's (batch 16 x
//     context 128 = 2048 rows): its MLP's 512 and its attention's 384 (q, k, v) columns;
//     and 16 x 16384, its position embedding's gradient (128 x 128, summed over the batch).
#include <string>
#include <utility>

#include "kernels_bench.hpp"

namespace catalyst::bench {
namespace {

void sum_case(benchmark::State& state, int64_t rows, int64_t cols, int64_t axis) {
  const Tensor x = random(cpu_device(), CTL_DTYPE_F32, {rows, cols}, false, 1, 0, -1.0, 1.0);
  time_calls(state, [&] { return sum(x, {axis}); });
  state.SetBytesProcessed(state.iterations() * rows * cols * static_cast<int64_t>(sizeof(float)));
}

}  // namespace

void register_reduction(const Args& args) {
  const std::string shape = std::to_string(args.norm_rows) + "x" + std::to_string(args.norm_cols);
  benchmark::RegisterBenchmark(("sum/f32/" + shape).c_str(), sum_case, args.norm_rows, args.norm_cols, -1)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  for (const auto& [rows, cols] : {std::pair{2048, 384}, std::pair{2048, 512}, std::pair{16, 16384}}) {
    benchmark::RegisterBenchmark(("column_sum/f32/" + std::to_string(rows) + "x" + std::to_string(cols)).c_str(),
                                 sum_case, rows, cols, 0)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace catalyst::bench
