// kernels_elementwise.cpp — add/f32/<elements>: c = a + b over contiguous f32 vectors (64M
// elements by default, far larger than any cache), into a preallocated c, so it measures
// how close the kernel comes to the memory's bandwidth; gelu_tanh/f32/<elements>; and
// cast/<from>_to_<to>/1048576, the casts between f32 and f16/bf16 that mixed-precision
// training runs on every weight, activation and gradient.
//
// Counter: bytes_per_second, counting 3 x 4 bytes per element (read a, read b, write c) as
// STREAM counts its triad, so it compares directly with catalyst-bench-machine's triad.
#include <string>

#include "kernels_bench.hpp"

namespace catalyst::bench {
namespace {

void add_case(benchmark::State& state, int64_t elements) {
  Tensor a, b, c;
  try {
    const Device device = cpu_device();
    a = random(device, CTL_DTYPE_F32, {elements}, false, 1, 0, -1.0, 1.0);
    b = random(device, CTL_DTYPE_F32, {elements}, false, 2, 0, -1.0, 1.0);
    // Written once before timing, so the timed calls see resident pages, as the triad does.
    c = Tensor::zeros(device, CTL_DTYPE_F32, {elements});
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  ctl_tensor* const inputs[2] = {a.get(), b.get()};
  ctl_tensor* const outputs[1] = {c.get()};
  ctl_device* const device = cpu_device().get();
  for (auto _ : state) {
    if (failed(state, ctl_op_run_into(CTL_OP_ADD, 2, inputs, nullptr, 1, outputs))) break;
    if (failed(state, ctl_device_synchronize(device))) break;
  }
  state.SetBytesProcessed(state.iterations() * elements * 3 * static_cast<int64_t>(sizeof(float)));
}

// The unary op with the most arithmetic per byte that the GPT uses: whether it is still
// bound by memory shows in its bytes_per_second (8 bytes per element) beside add's.
void gelu_tanh_case(benchmark::State& state, int64_t elements) {
  const Tensor x = random(cpu_device(), CTL_DTYPE_F32, {elements}, false, 1, 0, -4.0, 4.0);
  time_calls(state, [&] { return gelu_tanh(x); });
  state.SetBytesProcessed(state.iterations() * elements * 2 * static_cast<int64_t>(sizeof(float)));
}

// A cast of one 1M-element tensor (in L2/L3, as a GPT step's are) into a preallocated
// output; bytes_per_second counts what it reads and writes.
void cast_case(benchmark::State& state, ctl_dtype from, ctl_dtype to) {
  constexpr int64_t kElements = int64_t{1} << 20;
  Tensor x, y;
  try {
    const Device device = cpu_device();
    x = random(device, from, {kElements}, true, 1, 0, 0.0, 1.0);
    y = Tensor::zeros(device, to, {kElements});
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  ctl_tensor* const inputs[1] = {x.get()};
  ctl_tensor* const outputs[1] = {y.get()};
  ctl_device* const device = cpu_device().get();
  for (auto _ : state) {
    if (failed(state, ctl_op_run_into(CTL_OP_CAST, 1, inputs, nullptr, 1, outputs))) break;
    if (failed(state, ctl_device_synchronize(device))) break;
  }
  state.SetBytesProcessed(state.iterations() * kElements * 6);  // 4 bytes of f32, 2 of f16/bf16
}

}  // namespace

void register_elementwise(const Args& args) {
  benchmark::RegisterBenchmark(("add/f32/" + std::to_string(args.add_elements)).c_str(), add_case, args.add_elements)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark(("gelu_tanh/f32/" + std::to_string(args.add_elements)).c_str(), gelu_tanh_case,
                               args.add_elements)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  const struct {
    const char* name;
    ctl_dtype from, to;
  } casts[] = {{"f32_to_bf16", CTL_DTYPE_F32, CTL_DTYPE_BF16},
               {"bf16_to_f32", CTL_DTYPE_BF16, CTL_DTYPE_F32},
               {"f32_to_f16", CTL_DTYPE_F32, CTL_DTYPE_F16},
               {"f16_to_f32", CTL_DTYPE_F16, CTL_DTYPE_F32}};
  for (const auto& c : casts) {
    benchmark::RegisterBenchmark((std::string("cast/") + c.name + "/1048576").c_str(), cast_case, c.from, c.to)
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace catalyst::bench
