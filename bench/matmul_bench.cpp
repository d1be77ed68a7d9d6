// matmul_bench.cpp — catalyst-matmul-bench: matmul throughput (GFLOP/s) of N x N by
// N x N products on several Catalyst devices in one run, so their figures are comparable.
//
//   catalyst-matmul-bench [--devices cpu,opencl,vulkan] [--sizes 256,1024,2048] [--repeats 5]
//                         [--dtype f32|f16|bf16] [--json]
//
// Each figure is the median of --repeats timed products after one untimed warm-up (which
// also builds any kernels); a timed product ends with a device synchronize. The last column
// gives each device's figure as a ratio to the first device's.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "catalyst/catalyst.hpp"
#include "flags.hpp"

namespace {

using catalyst::Device;
using catalyst::Tensor;

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, ',');) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

// Median seconds of one N x N x N product on `device`.
double median_seconds(const Device& device, ctl_dtype dtype, int64_t n, int64_t repeats) {
  const Tensor a = catalyst::random(device, dtype, {n, n}, false, 1, 0, -1.0, 1.0);
  const Tensor b = catalyst::random(device, dtype, {n, n}, false, 2, 0, -1.0, 1.0);
  { const Tensor warm = catalyst::matmul(a, b); }
  device.synchronize();
  std::vector<double> times;
  for (int64_t r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    const Tensor c = catalyst::matmul(a, b);
    device.synchronize();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string devices_spec = "cpu,opencl,vulkan", sizes_spec = "256,1024,2048", dtype_name = "f32";
  int64_t repeats = 5;
  bool json = false;
  catalyst::examples::Flags flags;
  flags.add("--devices", &devices_spec);
  flags.add("--sizes", &sizes_spec);
  flags.add("--repeats", &repeats);
  flags.add("--dtype", &dtype_name);
  flags.add_switch("--json", &json);
  std::vector<std::string> positional;
  std::string error;
  const bool parsed = flags.parse(argc, argv, 1, &positional, &error);
  const ctl_dtype dtype = dtype_name == "f16" ? CTL_DTYPE_F16 : dtype_name == "bf16" ? CTL_DTYPE_BF16 : CTL_DTYPE_F32;
  if (parsed && dtype == CTL_DTYPE_F32 && dtype_name != "f32") error = "--dtype must be f32, f16 or bf16";
  if (!parsed || !error.empty() || !positional.empty() || repeats < 1) {
    std::fprintf(stderr,
                 "usage: catalyst-matmul-bench [--devices cpu,opencl,vulkan] [--sizes 256,1024,2048] [--repeats 5] "
                 "[--dtype f32|f16|bf16] [--json]\n%s\n",
                 error.c_str());
    return 2;
  }
  try {
    catalyst::Runtime runtime;
    std::vector<Device> devices;
    std::vector<std::string> labels;
    for (const std::string& spec : split(devices_spec)) {
      try {
        devices.push_back(runtime.device(spec));
        labels.push_back(spec);
      } catch (const catalyst::Error& e) {
        std::fprintf(stderr, "catalyst-matmul-bench: skipping %s: %s\n", spec.c_str(), e.what());
      }
    }
    if (devices.empty()) {
      std::fprintf(stderr, "catalyst-matmul-bench: none of the devices '%s' exists\n", devices_spec.c_str());
      return 1;
    }
    if (!json) {
      std::printf("%s matmul, N x N by N x N, median of %lld runs, GFLOP/s\n", dtype_name.c_str(),
                  static_cast<long long>(repeats));
      for (size_t d = 0; d < devices.size(); ++d) {
        std::printf("  %-8s %s\n", labels[d].c_str(), devices[d].name().c_str());
      }
      std::printf("%6s", "N");
      for (const auto& label : labels) std::printf(" %12s", label.c_str());
      for (size_t d = 1; d < labels.size(); ++d) std::printf(" %16s", (labels[d] + "/" + labels[0]).c_str());
      std::printf("\n");
    }
    for (const std::string& size_text : split(sizes_spec)) {
      const int64_t n = std::stoll(size_text);
      const double flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
      std::vector<double> gflops;
      for (const Device& device : devices) gflops.push_back(flops / median_seconds(device, dtype, n, repeats) / 1e9);
      if (json) {
        for (size_t d = 0; d < devices.size(); ++d) {
          std::printf(
              "{\"bench\": \"matmul_%s\", \"device\": \"%s\", \"name\": \"%s\", \"n\": %lld, \"gflops\": %.3f}\n",
              dtype_name.c_str(), labels[d].c_str(), devices[d].name().c_str(), static_cast<long long>(n), gflops[d]);
        }
      } else {
        std::printf("%6lld", static_cast<long long>(n));
        for (double g : gflops) std::printf(" %12.1f", g);
        for (size_t d = 1; d < gflops.size(); ++d) std::printf(" %15.2fx", gflops[d] / gflops[0]);
        std::printf("\n");
      }
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "catalyst-matmul-bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
