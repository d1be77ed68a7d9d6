// matmul.cpp — batched matmul: out = act(alpha * a @ b + beta * out + bias), with a and b
// (..., M, K) and (..., K, N) broadcast over the output's batch axes and an optional bias
// broadcast to the output. The tiled kernels (kernels/matmul.cl: matmul_tiled for GPUs,
// matmul_packed for CPU drivers) read every operand through its strides, so transposed,
// sliced and broadcast views need no copies; the tile shape is picked here from the
// device's work-group and local-memory limits.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

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

// The strides of an operand's batch axes (all but its last two) aligned to the output's
// batch axes: missing or size-1 axes broadcast with stride 0.
ctl_status* batch_strides(const OpContext& ctx, const DeviceView& v, const char* name, const DeviceView& out,
                          int64_t* strides) {
  const uint32_t batch_rank = out.rank - 2;
  const uint32_t v_batch = v.rank - 2;
  if (v_batch > batch_rank) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "%s has %u batch axes but the output has %u", name, v_batch,
                    batch_rank);
  }
  for (uint32_t axis = 0; axis < batch_rank; ++axis) {
    const int64_t v_axis = static_cast<int64_t>(axis) - static_cast<int64_t>(batch_rank - v_batch);
    if (v_axis < 0) {
      strides[axis] = 0;
      continue;
    }
    const int64_t size = v.shape[v_axis];
    if (size == out.shape[axis]) {
      strides[axis] = size == 1 ? 0 : v.strides[v_axis];
    } else if (size == 1) {
      strides[axis] = 0;
    } else {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "%s batch axis %lld has size %lld, the output's has %lld", name,
                      static_cast<long long>(v_axis), static_cast<long long>(size),
                      static_cast<long long>(out.shape[axis]));
    }
  }
  return nullptr;
}

void swap_last_two(DeviceView* v) {
  std::swap(v->shape[v->rank - 1], v->shape[v->rank - 2]);
  std::swap(v->strides[v->rank - 1], v->strides[v->rank - 2]);
}

// Integer alpha and beta must be whole numbers in int64's range, as the reference requires.
bool whole(double v) {
  return v == std::trunc(v) && std::fabs(v) < 0x1.0p63;
}

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
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(2, 3, 1, 1));
  DeviceView a, b, bias, out;
  bool has_bias = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "a", &a));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(1, "b", &b));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(2, "bias", &bias, true, &has_bias));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "out", &out));
  ctl_matmul_attrs attrs;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&attrs, sizeof attrs, CTL_MATMUL_ATTRS_STRUCT_SIZE, "ctl_matmul_attrs", &given));
  const double alpha = given && attrs.alpha_set ? attrs.alpha : 1.0;
  const double beta = given ? attrs.beta : 0.0;
  const int64_t activation = raw_enum(attrs.activation);  // zeroed (NONE) when attrs is NULL
  if (activation < CTL_ACTIVATION_NONE || activation > CTL_ACTIVATION_GELU_TANH) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs.activation %lld is not a ctl_activation",
                    static_cast<long long>(activation));
  }
  const ctl_dtype dtype = a.dtype;
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(b, "input 1 (b)", dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(out, "output 0 (out)", dtype));
  if (has_bias) CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(bias, "input 2 (bias)", dtype));
  const bool is_float =
      dtype == CTL_DTYPE_F32 || dtype == CTL_DTYPE_F64 || dtype == CTL_DTYPE_F16 || dtype == CTL_DTYPE_BF16;
  if (!is_float && dtype != CTL_DTYPE_I32 && dtype != CTL_DTYPE_I64) {
    return ctx.fail(CTL_STATUS_UNSUPPORTED, "dtype %s is not supported", dtype_name(dtype));
  }
  if (!is_float && activation != CTL_ACTIVATION_NONE) {
    return ctx.fail(CTL_STATUS_UNSUPPORTED, "a fused activation needs a float dtype, not %s", dtype_name(dtype));
  }
  if (!is_float && (!whole(alpha) || !whole(beta))) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "integer matmul needs whole alpha and beta, got %g and %g", alpha,
                    beta);
  }
  if (a.rank < 2 || b.rank < 2 || out.rank < 2) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "a, b and out need rank >= 2 (got %u, %u, %u)", a.rank, b.rank,
                    out.rank);
  }
  // The core applies transposes as strides; honour the flags anyway if a caller sets them.
  if (given && attrs.transpose_a) swap_last_two(&a);
  if (given && attrs.transpose_b) swap_last_two(&b);
  const int64_t M = a.shape[a.rank - 2], K = a.shape[a.rank - 1], N = b.shape[b.rank - 1];
  if (b.shape[b.rank - 2] != K) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "a is (..., %lld, %lld) but b is (..., %lld, %lld)",
                    static_cast<long long>(M), static_cast<long long>(K), static_cast<long long>(b.shape[b.rank - 2]),
                    static_cast<long long>(N));
  }
  if (out.shape[out.rank - 2] != M || out.shape[out.rank - 1] != N) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "output 0 (out) is (..., %lld, %lld), expected (..., %lld, %lld)",
                    static_cast<long long>(out.shape[out.rank - 2]), static_cast<long long>(out.shape[out.rank - 1]),
                    static_cast<long long>(M), static_cast<long long>(N));
  }

  // The batch axes of every operand as views of the output's batch shape, so that
  // make_iteration merges them and orders them innermost first for ctl_unravel.
  DeviceView batch[4];  // a, b, out, bias
  const uint32_t batch_rank = out.rank - 2;
  for (DeviceView& v : batch) {
    v = out;
    v.rank = batch_rank;
  }
  CTL_SDK_RETURN_IF_ERROR(batch_strides(ctx, a, "input 0 (a)", out, batch[0].strides));
  CTL_SDK_RETURN_IF_ERROR(batch_strides(ctx, b, "input 1 (b)", out, batch[1].strides));
  int64_t c_rs = 0, c_cs = 0;
  if (has_bias) {
    // The bias broadcasts to the whole output: pad it to the output's rank, then its
    // matrix axes broadcast like its batch axes.
    if (bias.rank > out.rank) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input 2 (bias) has rank %u, more than the output's %u", bias.rank,
                      out.rank);
    }
    DeviceView padded = bias;
    const uint32_t lead = out.rank - bias.rank;
    for (uint32_t i = 0; i < out.rank; ++i) {
      padded.shape[i] = i >= lead ? bias.shape[i - lead] : 1;
      padded.strides[i] = i >= lead ? bias.strides[i - lead] : 0;
      if (padded.shape[i] == 1) padded.strides[i] = 0;
      if (padded.shape[i] != 1 && padded.shape[i] != out.shape[i]) {
        return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input 2 (bias) does not broadcast to the output on axis %u", i);
      }
    }
    padded.rank = out.rank;
    CTL_SDK_RETURN_IF_ERROR(batch_strides(ctx, padded, "input 2 (bias)", out, batch[3].strides));
    c_rs = padded.strides[out.rank - 2];
    c_cs = padded.strides[out.rank - 1];
  } else {
    for (uint32_t i = 0; i < batch_rank; ++i) batch[3].strides[i] = 0;
  }
  int64_t batches = 1;
  for (uint32_t i = 0; i < batch_rank; ++i) batches *= out.shape[i];
  if (batches == 0 || M == 0 || N == 0) return nullptr;

  const DeviceView* batch_views[4] = {&batch[0], &batch[1], &batch[2], &batch[3]};
  const Iteration it = make_iteration(batch_views, 4);

  Kernel* k = nullptr;
  TileConfig config{};
  CTL_SDK_RETURN_IF_ERROR(tiled_kernel(ctx, dtype, &k, &config));

  const int64_t a_rs = a.strides[a.rank - 2], a_cs = a.strides[a.rank - 1];
  const int64_t b_rs = b.strides[b.rank - 2], b_cs = b.strides[b.rank - 1];
  const int64_t o_rs = out.strides[out.rank - 2], o_cs = out.strides[out.rank - 1];
  cl_int flags = static_cast<cl_int>(activation) << kFlagActivationShift;
  if (has_bias) flags |= kFlagBias;
  if (beta != 0.0) flags |= kFlagBeta;
  // Tiles load VW elements at a time along an operand's unit-stride axis.
  if (a_cs == 1) flags |= kFlagAKUnit;
  if (a_rs == 1) flags |= kFlagAMUnit;
  if (b_cs == 1) flags |= kFlagBNUnit;
  if (b_rs == 1) flags |= kFlagBKUnit;
  const ctl_dtype scalar_dtype = is_float ? dtype : CTL_DTYPE_I64;
  const Scalar alpha_s = compute_scalar(scalar_dtype, alpha), beta_s = compute_scalar(scalar_dtype, beta);
  const DeviceView& bias_arg = has_bias ? bias : out;  // any valid buffer when there is no bias

  // Grid: x = column tiles, y = row tiles, z = batch elements. Drivers may cap the groups
  // along y and z at 65535 (CUDA's grid limits), so larger problems take several launches.
  constexpr int64_t kMaxGroups = 65535;
  const size_t lx = config.packed ? 1 : static_cast<size_t>(config.tn / config.vw);
  const size_t ly = config.packed ? 1 : static_cast<size_t>(config.tm / config.wm);
  const int64_t col_tiles = (N + config.tn - 1) / config.tn, row_tiles = (M + config.tm - 1) / config.tm;
  const size_t local[3] = {lx, ly, 1};
  for (int64_t batch0 = 0; batch0 < batches; batch0 += kMaxGroups) {
    const int64_t nb = std::min(kMaxGroups, batches - batch0);
    for (int64_t tile0 = 0; tile0 < row_tiles; tile0 += kMaxGroups) {
      const int64_t nr = std::min(kMaxGroups, row_tiles - tile0);
      const size_t global[3] = {static_cast<size_t>(col_tiles) * lx, static_cast<size_t>(nr) * ly,
                                static_cast<size_t>(nb)};
      CTL_SDK_RETURN_IF_ERROR(ctx.enqueue(k, 3, global, local, a, b, out, bias_arg, cl_long{M}, cl_long{N}, cl_long{K},
                                          cl_long{a_rs}, cl_long{a_cs}, cl_long{b_rs}, cl_long{b_cs}, cl_long{o_rs},
                                          cl_long{o_cs}, cl_long{c_rs}, cl_long{c_cs}, it.rank, it.shape, it.strides[0],
                                          it.strides[1], it.strides[2], it.strides[3], cl_long{tile0}, cl_long{batch0},
                                          flags, alpha_s, beta_s));
    }
  }
  return nullptr;
}

}  // namespace catalyst::opencl
