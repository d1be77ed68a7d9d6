// kernels_op_overhead.cpp — what one call of a tiny op costs through the C ABI: an add of
// two 1-element f32 tensors, so the kernel's own work is nothing and the figure is the
// call's overhead (argument checks, dispatch, the plugin's op call).
//
//   op_overhead/run_into_add/1024  ctl_op_run_into(CTL_OP_ADD) into a preallocated output
//   op_overhead/binary_add/1024    ctl_op_binary(CTL_OP_ADD), a new output tensor each call
//
// One iteration is 1024 calls and one device synchronize (so an asynchronous device would
// still be measured doing the work). Counter: seconds_per_call.
#include "kernels_bench.hpp"

namespace catalyst::bench {
namespace {

constexpr int64_t kCallsPerIteration = 1024;

void run_into_case(benchmark::State& state) {
  Tensor a, b, c;
  try {
    const Device device = cpu_device();
    a = Tensor::full(device, CTL_DTYPE_F32, {1}, 1.0);
    b = Tensor::full(device, CTL_DTYPE_F32, {1}, 2.0);
    c = Tensor::empty(device, CTL_DTYPE_F32, {1});
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  ctl_tensor* const inputs[2] = {a.get(), b.get()};
  ctl_tensor* const outputs[1] = {c.get()};
  ctl_device* const device = cpu_device().get();
  for (auto _ : state) {
    ctl_status* status = nullptr;
    for (int64_t i = 0; i < kCallsPerIteration && status == nullptr; ++i) {
      status = ctl_op_run_into(CTL_OP_ADD, 2, inputs, nullptr, 1, outputs);
    }
    if (failed(state, status) || failed(state, ctl_device_synchronize(device))) break;
  }
  state.counters["seconds_per_call"] = benchmark::Counter(
      kCallsPerIteration, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void binary_case(benchmark::State& state) {
  Tensor a, b;
  try {
    const Device device = cpu_device();
    a = Tensor::full(device, CTL_DTYPE_F32, {1}, 1.0);
    b = Tensor::full(device, CTL_DTYPE_F32, {1}, 2.0);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  ctl_device* const device = cpu_device().get();
  for (auto _ : state) {
    ctl_status* status = nullptr;
    for (int64_t i = 0; i < kCallsPerIteration && status == nullptr; ++i) {
      ctl_tensor* c = nullptr;
      status = ctl_op_binary(CTL_OP_ADD, a.get(), b.get(), &c);
      ctl_tensor_release(c);
    }
    if (failed(state, status) || failed(state, ctl_device_synchronize(device))) break;
  }
  state.counters["seconds_per_call"] = benchmark::Counter(
      kCallsPerIteration, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

}  // namespace

void register_op_overhead() {
  benchmark::RegisterBenchmark("op_overhead/run_into_add/1024", run_into_case)->UseRealTime();
  benchmark::RegisterBenchmark("op_overhead/binary_add/1024", binary_case)->UseRealTime();
}

}  // namespace catalyst::bench
