// kernels_matmul.cpp — matmul/<dtype>/<N>: N x N by N x N products in f32 (every --sizes N)
// and in f16 and bf16 (every --lowp-sizes N), written into a preallocated output as the
// peers do (cblas_sgemm, a oneDNN primitive), so no case times an allocation.
//
// Counters: flops (FLOP/s, 2 N^3 per product); for f16 and bf16 also max_abs_error and
// tolerance_ratio against the exact product of the same rounded inputs (matmul_accuracy.hpp).
#include <cmath>
#include <string>

#include "kernels_bench.hpp"
#include "matmul_accuracy.hpp"

namespace catalyst::bench {
namespace {

double unit_roundoff(ctl_dtype dtype) {
  switch (dtype) {
    case CTL_DTYPE_F16:
      return std::ldexp(1.0, -11);
    case CTL_DTYPE_BF16:
      return std::ldexp(1.0, -8);
    default:
      return std::ldexp(1.0, -24);
  }
}

// The elements of a (possibly f16 or bf16) tensor as floats: exact, since f32 holds every
// f16 and bf16 value.
std::vector<float> host_floats(const Tensor& t) {
  return (t.dtype() == CTL_DTYPE_F32 ? t : cast(t, CTL_DTYPE_F32)).to_vector<float>();
}

void matmul_case(benchmark::State& state, ctl_dtype dtype, int64_t n) {
  Tensor a, b, c;
  try {
    const Device device = cpu_device();
    const Tensor a32 = random(device, CTL_DTYPE_F32, {n, n}, false, 1, 0, -1.0, 1.0);
    const Tensor b32 = random(device, CTL_DTYPE_F32, {n, n}, false, 2, 0, -1.0, 1.0);
    a = dtype == CTL_DTYPE_F32 ? a32 : cast(a32, dtype);
    b = dtype == CTL_DTYPE_F32 ? b32 : cast(b32, dtype);
    c = Tensor::empty(device, dtype, {n, n});
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
    return;
  }
  ctl_matmul_attrs attrs{};
  attrs.struct_size = CTL_MATMUL_ATTRS_STRUCT_SIZE;
  ctl_tensor* const inputs[2] = {a.get(), b.get()};
  ctl_tensor* const outputs[1] = {c.get()};
  ctl_device* const device = cpu_device().get();
  for (auto _ : state) {
    if (failed(state, ctl_op_run_into(CTL_OP_MATMUL, 2, inputs, &attrs, 1, outputs))) break;
    if (failed(state, ctl_device_synchronize(device))) break;
  }
  const double nd = static_cast<double>(n);
  state.counters["flops"] = benchmark::Counter(2 * nd * nd * nd, benchmark::Counter::kIsIterationInvariantRate);
  if (dtype != CTL_DTYPE_F32 && !state.error_occurred()) {
    const MatmulError error =
        check_matmul(host_floats(a), host_floats(b), host_floats(c), n, n, n, unit_roundoff(dtype));
    state.counters["max_abs_error"] = error.max_abs_error;
    state.counters["tolerance_ratio"] = error.tolerance_ratio;
  }
}

}  // namespace

void register_matmul(const Args& args) {
  const std::pair<ctl_dtype, const char*> lowp[] = {{CTL_DTYPE_F16, "f16"}, {CTL_DTYPE_BF16, "bf16"}};
  for (const int64_t n : args.sizes) {
    benchmark::RegisterBenchmark(("matmul/f32/" + std::to_string(n)).c_str(), matmul_case, CTL_DTYPE_F32, n)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  for (const auto& [dtype, name] : lowp) {
    for (const int64_t n : args.lowp_sizes) {
      benchmark::RegisterBenchmark(("matmul/" + std::string(name) + "/" + std::to_string(n)).c_str(), matmul_case,
                                   dtype, n)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
}

}  // namespace catalyst::bench
