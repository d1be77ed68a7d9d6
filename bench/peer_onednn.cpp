// peer_onednn.cpp — catalyst-bench-onednn: the oneDNN peer of catalyst-kernels-bench, a
// oneDNN matmul primitive on plain row-major memory (the layout Catalyst is given too),
// created once before timing as oneDNN intends, executed into a preallocated destination:
//   matmul/f32/<N>   f32 in, f32 out (every --sizes N)
//   matmul/bf16/<N>  bf16 in, bf16 out, f32 accumulation (every --lowp-sizes N), with
//                    max_abs_error and tolerance_ratio as Catalyst's (matmul_accuracy.hpp)
// Built only when oneDNN is found (bench/CMakeLists.txt). Debian's oneDNN runs on OpenMP:
// OMP_NUM_THREADS sets its threads. The context line onednn_isa says which kernels it chose.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdlib>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>

#include "bench_args.hpp"
#include "host_matrix.hpp"
#include "matmul_accuracy.hpp"

namespace {

using dnnl::memory;

const char* isa_name(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::sse41:
      return "sse41";
    case dnnl::cpu_isa::avx:
      return "avx";
    case dnnl::cpu_isa::avx2:
      return "avx2";
    case dnnl::cpu_isa::avx2_vnni:
      return "avx2_vnni";
    case dnnl::cpu_isa::avx512_core:
      return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni:
      return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16:
      return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx:
      return "avx512_core_amx";
    default:
      return "other";
  }
}

// One N x N x N product of `type` (f32 or bf16) per iteration.
void matmul_case(benchmark::State& state, memory::data_type type, int64_t n) {
  try {
    const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    dnnl::stream stream(engine);
    const memory::desc desc({n, n}, type, memory::format_tag::ab);
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(desc, desc, desc), engine);
    const dnnl::matmul product(pd);
    memory a(desc, engine), b(desc, engine), c(desc, engine);
    std::vector<float> a32 = catalyst::bench::random_matrix(n * n, 1);
    std::vector<float> b32 = catalyst::bench::random_matrix(n * n, 2);
    const bool bf16 = type == memory::data_type::bf16;
    const auto fill = [&](memory& m, std::vector<float>& values) {
      if (!bf16) {
        std::copy(values.begin(), values.end(), static_cast<float*>(m.get_data_handle()));
        return;
      }
      auto* out = static_cast<uint16_t*>(m.get_data_handle());
      for (size_t i = 0; i < values.size(); ++i) {
        out[i] = catalyst::bench::bf16_from_float(values[i]);
        values[i] = catalyst::bench::float_from_bf16(out[i]);  // what the product really gets
      }
    };
    fill(a, a32);
    fill(b, b32);
    for (auto _ : state) {
      product.execute(stream, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
      stream.wait();
    }
    const double nd = static_cast<double>(n);
    state.counters["flops"] = benchmark::Counter(2 * nd * nd * nd, benchmark::Counter::kIsIterationInvariantRate);
    if (bf16) {
      const auto* out = static_cast<const uint16_t*>(c.get_data_handle());
      std::vector<float> got(static_cast<size_t>(n * n));
      for (size_t i = 0; i < got.size(); ++i) got[i] = catalyst::bench::float_from_bf16(out[i]);
      const catalyst::bench::MatmulError error =
          catalyst::bench::check_matmul(a32, b32, got, n, n, n, std::ldexp(1.0, -8));
      state.counters["max_abs_error"] = error.max_abs_error;
      state.counters["tolerance_ratio"] = error.tolerance_ratio;
    }
  } catch (const dnnl::error& e) {
    state.SkipWithError(e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  catalyst::bench::Args args;
  if (!catalyst::bench::parse_args(argc, argv, &args)) return 2;
  benchmark::AddCustomContext("onednn_isa", isa_name(dnnl::get_effective_cpu_isa()));
  const dnnl_version_t* version = dnnl_version();
  benchmark::AddCustomContext("onednn_version", std::to_string(version->major) + "." + std::to_string(version->minor) +
                                                    "." + std::to_string(version->patch));
  const char* omp_threads = std::getenv("OMP_NUM_THREADS");
  benchmark::AddCustomContext("OMP_NUM_THREADS", omp_threads ? omp_threads : "(unset)");
  for (const int64_t n : args.sizes) {
    benchmark::RegisterBenchmark(("matmul/f32/" + std::to_string(n)).c_str(), matmul_case, memory::data_type::f32, n)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  for (const int64_t n : args.lowp_sizes) {
    benchmark::RegisterBenchmark(("matmul/bf16/" + std::to_string(n)).c_str(), matmul_case, memory::data_type::bf16, n)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
