// kernels_training.cpp — the fused training ops:
//   cross_entropy/f32/<rows>x<cols>  mean cross-entropy of <rows> rows of <cols> logits
//                                    (the normalisation shape) against random class ids
//   adamw_step/f32/<elements>        one AdamW update of <elements> parameters in place
//                                    (a quarter of --add-elements: param, grad and two
//                                    moments are four arrays)
#include <algorithm>
#include <string>
#include <vector>

#include "kernels_bench.hpp"

namespace catalyst::bench {
namespace {

void cross_entropy_case(benchmark::State& state, int64_t rows, int64_t cols) {
  const Device device = cpu_device();
  const Tensor logits = random(device, CTL_DTYPE_F32, {rows, cols}, false, 1, 0, -4.0, 4.0);
  std::vector<int64_t> ids(static_cast<size_t>(rows));
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>((i * 7919) % static_cast<size_t>(cols));
  const Tensor target = Tensor::from_vector(device, {rows}, ids);
  time_calls(state, [&] { return cross_entropy(logits, target); });
}

void adamw_case(benchmark::State& state, int64_t elements) {
  Tensor param, grad, exp_avg, exp_avg_sq;
  try {
    const Device device = cpu_device();
    param = random(device, CTL_DTYPE_F32, {elements}, false, 1, 0, -1.0, 1.0);
    grad = random(device, CTL_DTYPE_F32, {elements}, false, 2, 0, -1.0, 1.0);
    exp_avg = Tensor::zeros(device, CTL_DTYPE_F32, {elements});
    exp_avg_sq = Tensor::zeros(device, CTL_DTYPE_F32, {elements});
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  ctl_adamw_attrs attrs{CTL_ADAMW_ATTRS_STRUCT_SIZE, 3e-4, 0.9, 0.95, 1e-8, 0.1, 1};
  ctl_tensor* const inputs[1] = {grad.get()};
  ctl_tensor* const outputs[3] = {param.get(), exp_avg.get(), exp_avg_sq.get()};
  ctl_device* const device = cpu_device().get();
  for (auto _ : state) {
    if (failed(state, ctl_op_run_into(CTL_OP_ADAMW_STEP, 1, inputs, &attrs, 3, outputs))) break;
    if (failed(state, ctl_device_synchronize(device))) break;
    ++attrs.step;
  }
  // Reads grad, param and both moments; writes param and both moments.
  state.SetBytesProcessed(state.iterations() * elements * 7 * static_cast<int64_t>(sizeof(float)));
}

}  // namespace

void register_training(const Args& args) {
  const std::string shape = std::to_string(args.norm_rows) + "x" + std::to_string(args.norm_cols);
  benchmark::RegisterBenchmark(("cross_entropy/f32/" + shape).c_str(), cross_entropy_case, args.norm_rows,
                               args.norm_cols)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  const int64_t parameters = std::max<int64_t>(args.add_elements / 4, 1);
  benchmark::RegisterBenchmark(("adamw_step/f32/" + std::to_string(parameters)).c_str(), adamw_case, parameters)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace catalyst::bench
