// kernels_normalization.cpp — softmax, log_softmax, layer_norm and rms_norm over the last
// axis of a <rows>x<cols> f32 input (4096 x 4096 by default), the norms with a weight (and
// layer_norm a bias) as torch.nn.LayerNorm has. Each call returns a new output tensor, as catalyst::softmax and
// torch.softmax do: the figure is what a user's call costs, allocation included.
#include <string>

#include "kernels_bench.hpp"

namespace catalyst::bench {
namespace {

void softmax_case(benchmark::State& state, int64_t rows, int64_t cols, bool log) {
  const Tensor x = random(cpu_device(), CTL_DTYPE_F32, {rows, cols}, false, 1, 0, -4.0, 4.0);
  time_calls(state, [&] { return log ? log_softmax(x, -1) : softmax(x, -1); });
}

void norm_case(benchmark::State& state, int64_t rows, int64_t cols, bool rms) {
  const Device device = cpu_device();
  const Tensor x = random(device, CTL_DTYPE_F32, {rows, cols}, false, 1, 0, -4.0, 4.0);
  const Tensor weight = random(device, CTL_DTYPE_F32, {cols}, false, 2, 0, 0.5, 1.5);
  const Tensor bias = random(device, CTL_DTYPE_F32, {cols}, false, 3, 0, -0.5, 0.5);
  time_calls(state, [&] { return rms ? rms_norm(x, weight) : layer_norm(x, weight, bias); });
}

}  // namespace

void register_normalization(const Args& args) {
  const std::string shape = std::to_string(args.norm_rows) + "x" + std::to_string(args.norm_cols);
  for (const bool log : {false, true}) {
    benchmark::RegisterBenchmark(((log ? "log_softmax/f32/" : "softmax/f32/") + shape).c_str(), softmax_case,
                                 args.norm_rows, args.norm_cols, log)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  for (const bool rms : {false, true}) {
    benchmark::RegisterBenchmark(((rms ? "rms_norm/f32/" : "layer_norm/f32/") + shape).c_str(), norm_case,
                                 args.norm_rows, args.norm_cols, rms)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
}

}  // namespace catalyst::bench
