// kernels_normalization.cpp — softmax/f32/<rows>x<cols> and layer_norm/f32/<rows>x<cols>
// (4096 x 4096 by default), over the last axis, layer_norm with a weight and a bias as
// torch.nn.LayerNorm has. Each call returns a new output tensor, as catalyst::softmax and
// torch.softmax do: the figure is what a user's call costs, allocation included.
#include <string>

#include "kernels_bench.hpp"

namespace catalyst::bench {
namespace {

void softmax_case(benchmark::State& state, int64_t rows, int64_t cols) {
  try {
    const Tensor x = random(cpu_device(), CTL_DTYPE_F32, {rows, cols}, false, 1, 0, -4.0, 4.0);
    for (auto _ : state) {
      const Tensor y = softmax(x, -1);
      cpu_device().synchronize();
    }
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void layer_norm_case(benchmark::State& state, int64_t rows, int64_t cols) {
  try {
    const Device device = cpu_device();
    const Tensor x = random(device, CTL_DTYPE_F32, {rows, cols}, false, 1, 0, -4.0, 4.0);
    const Tensor weight = random(device, CTL_DTYPE_F32, {cols}, false, 2, 0, 0.5, 1.5);
    const Tensor bias = random(device, CTL_DTYPE_F32, {cols}, false, 3, 0, -0.5, 0.5);
    for (auto _ : state) {
      const Tensor y = layer_norm(x, weight, bias);
      device.synchronize();
    }
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

}  // namespace

void register_normalization(const Args& args) {
  const std::string shape = std::to_string(args.norm_rows) + "x" + std::to_string(args.norm_cols);
  benchmark::RegisterBenchmark(("softmax/f32/" + shape).c_str(), softmax_case, args.norm_rows, args.norm_cols)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark(("layer_norm/f32/" + shape).c_str(), layer_norm_case, args.norm_rows, args.norm_cols)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace catalyst::bench
