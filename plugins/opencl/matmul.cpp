// matmul.cpp — batched matmul: out = act(alpha * a @ b + beta * out + bias), with a and b
// (..., M, K) and (..., K, N) broadcast over the output's batch axes and an optional bias
// broadcast to the output. The tiled kernels (kernels/matmul.cl: matmul_tiled for GPUs,
// matmul_packed for CPU drivers) read every operand through its strides, so transposed,
// sliced and broadcast views need no copies; the tile shape is picked here from the
// device's work-group and local-memory limits.
#include <algorithm>
#include <iterator>
#include <string>

#include "catalyst/sdk/bind_matmul.hpp"
#include "kernels.h"

namespace catalyst::opencl {
namespace {

// Bits of the kernel's `flags` argument (kernels/matmul.cl).
constexpr cl_int kFlagBias = 1, kFlagBeta = 2, kFlagAKUnit = 4, kFlagAMUnit = 8, kFlagBNUnit = 16, kFlagBKUnit = 32;
constexpr int kFlagActivationShift = 6;

// One work-group computes a TM x TN output tile in steps of TK along K. matmul_tiled
// (packed false): each work-item owns WM rows of VW adjacent columns. matmul_packed: one
// work-item walks the tile in WM x (NV * VW) micro-tiles (see kernels/matmul.cl).
struct TileConfig {
  int tm, tn, tk, wm, vw;
  bool packed;
  int nv;
  size_t threads() const { return packed ? 1 : static_cast<size_t>(tm / wm) * static_cast<size_t>(tn / vw); }
  uint64_t local_bytes(size_t element, int pad) const {
    const auto m = static_cast<uint64_t>(tm), n = static_cast<uint64_t>(tn), k = static_cast<uint64_t>(tk);
    const uint64_t buffers = packed ? 1 : 2;
    return (buffers * (m * (k + static_cast<uint64_t>(pad)) + k * n) + (packed ? m * n : 0)) * element;
  }
};

// Largest first: bigger tiles reuse each loaded element more often. The first that fits
// the device's work-group size and local memory (and the built kernel's own limit) wins.
// CPUs: one work-item per group, 8 x 32 floats (8 x 16 doubles) per micro-tile, which is
// 16 AVX-512 accumulators, and a 64 x 64 tile with 256-deep steps (about 144 KiB for f32,
// L2-sized). GPUs: 256 work-items of 4 x 4 outputs on a 64 x 64 tile.
constexpr TileConfig kCpuConfigs4[] = {
    {64, 64, 256, 8, 16, true, 2}, {64, 64, 64, 8, 16, true, 2}, {16, 16, 16, 4, 4, true, 1}};
constexpr TileConfig kCpuConfigs8[] = {
    {64, 64, 256, 8, 8, true, 2}, {64, 64, 64, 8, 8, true, 2}, {16, 16, 16, 4, 4, true, 1}};
constexpr TileConfig kGpuConfigs[] = {{64, 64, 16, 4, 4, false, 1},
                                      {32, 32, 16, 4, 4, false, 1},
                                      {16, 16, 16, 4, 4, false, 1},
                                      {4, 4, 4, 4, 4, false, 1}};

// The kernel for `dtype` with the largest tile configuration the device and the built
// kernel accept.
ctl_status* tiled_kernel(const OpContext& ctx, ctl_dtype dtype, Kernel** out, TileConfig* config) {
  const size_t element = dtype == CTL_DTYPE_F64 || dtype == CTL_DTYPE_I64 ? 8 : 4;  // the accumulator's size
  // GPUs lose bandwidth to bank conflicts when a column of a local tile is written by
  // neighbouring work-items; one padding element per row staggers the banks. CPUs have no
  // banks, and unpadded rows keep their vector loads aligned.
  const int pad = ctx.device->kind == CTL_DEVICE_KIND_CPU ? 0 : 1;
  const TileConfig* configs = kGpuConfigs;
  size_t count = std::size(kGpuConfigs);
  if (ctx.device->kind == CTL_DEVICE_KIND_CPU) {
    configs = element == 8 ? kCpuConfigs8 : kCpuConfigs4;
    count = element == 8 ? std::size(kCpuConfigs8) : std::size(kCpuConfigs4);
  }
  for (size_t i = 0; i < count; ++i) {
    const TileConfig& c = configs[i];
    const uint64_t local = c.local_bytes(element, pad);
    const bool last = i + 1 == count;
    if (!last && (c.threads() > ctx.device->max_work_group_size || local > ctx.device->local_memory_size)) continue;
    const std::string defines =
        std::string("-DTA=") + dtype_tag(dtype) + " -DTM=" + std::to_string(c.tm) + " -DTN=" + std::to_string(c.tn) +
        " -DTK=" + std::to_string(c.tk) + " -DWM=" + std::to_string(c.wm) + " -DVW=" + std::to_string(c.vw) +
        " -DLPAD=" + std::to_string(pad) + (c.packed ? " -DPACKED=1 -DNV=" + std::to_string(c.nv) : std::string());
    Kernel* k = nullptr;
    CTL_SDK_RETURN_IF_ERROR(ctx.kernel("matmul", defines, c.packed ? "matmul_packed" : "matmul_tiled", &k));
    // The built kernel may allow fewer work-items than the device (registers, local memory).
    if (!last && k->max_work_group_size < c.threads()) continue;
    *out = k;
    *config = c;
    return nullptr;
  }
  return ctx.fail(CTL_STATUS_INTERNAL, "no tile configuration fits the device");
}

}  // namespace

ctl_status* run_matmul(const OpContext& ctx) {
  sdk::MatmulProblem<DeviceView> mm;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_matmul(ctx, &mm));
  if (mm.empty()) return nullptr;
  DeviceView batch[4];  // a, b, out, bias along out's batch axes
  sdk::matmul_batch_views(mm, batch);
  const DeviceView* batch_views[4] = {&batch[0], &batch[1], &batch[2], &batch[3]};
  const Iteration it = make_iteration(batch_views, 4);

  Kernel* k = nullptr;
  TileConfig config{};
  CTL_SDK_RETURN_IF_ERROR(tiled_kernel(ctx, mm.dtype, &k, &config));

  const int64_t a_rs = mm.a_rs, a_cs = mm.a_cs, b_rs = mm.b_rs, b_cs = mm.b_cs, o_rs = mm.out_rs, o_cs = mm.out_cs,
                c_rs = mm.bias_rs, c_cs = mm.bias_cs;
  cl_int flags = static_cast<cl_int>(mm.activation) << kFlagActivationShift;
  if (mm.has_bias) flags |= kFlagBias;
  if (mm.beta != 0.0) flags |= kFlagBeta;
  // Tiles load VW elements at a time along an operand's unit-stride axis.
  if (a_cs == 1) flags |= kFlagAKUnit;
  if (a_rs == 1) flags |= kFlagAMUnit;
  if (b_cs == 1) flags |= kFlagBNUnit;
  if (b_rs == 1) flags |= kFlagBKUnit;
  const ctl_dtype scalar_dtype = mm.is_float ? mm.dtype : CTL_DTYPE_I64;
  const Scalar alpha_s = compute_scalar(scalar_dtype, mm.alpha), beta_s = compute_scalar(scalar_dtype, mm.beta);
  const DeviceView& bias_arg = mm.has_bias ? mm.bias : mm.out;  // any valid buffer when there is no bias

  // Grid: x = column tiles, y = row tiles, z = batch elements. Drivers may cap the groups
  // along y and z at 65535 (CUDA's grid limits), so larger problems take several launches.
  constexpr int64_t kMaxGroups = 65535;
  const size_t lx = config.packed ? 1 : static_cast<size_t>(config.tn / config.vw);
  const size_t ly = config.packed ? 1 : static_cast<size_t>(config.tm / config.wm);
  const int64_t col_tiles = (mm.N + config.tn - 1) / config.tn, row_tiles = (mm.M + config.tm - 1) / config.tm;
  const size_t local[3] = {lx, ly, 1};
  for (int64_t batch0 = 0; batch0 < mm.batches; batch0 += kMaxGroups) {
    const int64_t nb = std::min(kMaxGroups, mm.batches - batch0);
    for (int64_t tile0 = 0; tile0 < row_tiles; tile0 += kMaxGroups) {
      const int64_t nr = std::min(kMaxGroups, row_tiles - tile0);
      const size_t global[3] = {static_cast<size_t>(col_tiles) * lx, static_cast<size_t>(nr) * ly,
                                static_cast<size_t>(nb)};
      CTL_SDK_RETURN_IF_ERROR(ctx.enqueue(k, 3, global, local, mm.a, mm.b, mm.out, bias_arg, cl_long{mm.M},
                                          cl_long{mm.N}, cl_long{mm.K}, cl_long{a_rs}, cl_long{a_cs}, cl_long{b_rs},
                                          cl_long{b_cs}, cl_long{o_rs}, cl_long{o_cs}, cl_long{c_rs}, cl_long{c_cs},
                                          it.rank, it.shape, it.strides[0], it.strides[1], it.strides[2], it.strides[3],
                                          cl_long{tile0}, cl_long{batch0}, flags, alpha_s, beta_s));
    }
  }
  return nullptr;
}

}  // namespace catalyst::opencl
