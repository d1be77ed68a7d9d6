// matmul.cpp — batched matmul with fused alpha, beta, bias and activation
// (shaders/matmul.comp): 64 x 64 output tiles from shared-memory slices of a and b. Batch
// axes of a, b, out and the bias become one Iteration over the output's batch shape.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "kernels.h"

namespace catalyst::vulkan {
namespace {

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
  // CPU devices take the direct variant (32 x 32 tiles, no shared memory, no barriers).
  const bool direct = ctx.device->kind == CTL_DEVICE_KIND_CPU;
  const int64_t tile_m = direct ? 32 : 64, tile_n = direct ? 32 : 64;
  const int64_t tiles_m = (M + tile_m - 1) / tile_m, tiles_n = (N + tile_n - 1) / tile_n;
  if (tiles_n > 65535 || tiles_m > 65535) {
    return ctx.fail(CTL_STATUS_UNSUPPORTED, "%lld x %lld tiles exceed one dispatch", static_cast<long long>(tiles_n),
                    static_cast<long long>(tiles_m));
  }
  Params p;
  p.add(static_cast<uint32_t>(M));
  p.add(static_cast<uint32_t>(N));
  p.add(static_cast<uint32_t>(K));
  p.add(static_cast<uint32_t>(tiles_m));
  for (int64_t s : {a.strides[a.rank - 2], a.strides[a.rank - 1], b.strides[b.rank - 2], b.strides[b.rank - 1],
                    out.strides[out.rank - 2], out.strides[out.rank - 1], c_rs, c_cs}) {
    p.add(static_cast<uint32_t>(s));
  }
  p.add((has_bias ? 1u : 0u) | (beta != 0.0 ? 2u : 0u));
  p.add(static_cast<uint32_t>(activation));
  const bool in_double =
      dtype == CTL_DTYPE_F64 || (is_float && (ctx.device->dtype_mask & CTL_DTYPE_BIT(CTL_DTYPE_F64)));
  if (!is_float) {
    p.add_i64(static_cast<int64_t>(alpha));
    p.add_i64(static_cast<int64_t>(beta));
  } else if (in_double) {
    p.add_f64(alpha);
    p.add_f64(beta);
  } else {
    p.add_f32(static_cast<float>(alpha));
    p.add(0);
    p.add_f32(static_cast<float>(beta));
    p.add(0);
  }
  // Depth is split into parts of at most kDepthPerDispatch (a multiple of the shared-memory
  // kernel's 16-deep slices): one invocation's K loop must stay well inside lavapipe's
  // 65,535 loop iterations (README, "Loop budget"). Between parts each sum waits in `carry`,
  // in the compute type, so the split changes no bit of the result.
  constexpr int64_t kDepthPerDispatch = 16384;
  const int64_t parts = std::max<int64_t>(1, (K + kDepthPerDispatch - 1) / kDepthPerDispatch);
  const uint64_t compute_size = dtype == CTL_DTYPE_F64 || dtype == CTL_DTYPE_I64 ? 8 : 4;
  Temporary carry_storage(ctx);
  DeviceView carry;
  CTL_SDK_RETURN_IF_ERROR(ctx.carry(parts > 1, static_cast<uint64_t>(M * N) * compute_size, out, &carry_storage, &carry));
  // One dispatch per batch element and part of K, its operands' offsets worked out here.
  const size_t batch_words = p.words.size();
  const DeviceView* bases[4] = {&a, &b, &out, has_bias ? &bias : &out};
  std::string name = std::string(direct ? "matmul_direct." : "matmul.") + dtype_name(dtype);
  if (is_float && dtype != CTL_DTYPE_F64 && in_double) name += ".d";
  const DeviceView& bias_arg = has_bias ? bias : out;  // any valid buffer when there is no bias
  for (int64_t index = 0; index < batches; ++index) {
    p.words.resize(batch_words);
    int64_t rest = index;
    uint32_t offsets[4];
    for (int v = 0; v < 4; ++v) offsets[v] = v == 3 && !has_bias ? 0 : bases[v]->offset;
    for (uint32_t k = 0; k < it.rank; ++k) {
      const int64_t position = k + 1 == it.rank ? rest : rest % it.shape[k];
      rest = k + 1 == it.rank ? 0 : rest / it.shape[k];
      for (int v = 0; v < 4; ++v) offsets[v] += static_cast<uint32_t>(position * it.strides[v][k]);
    }
    for (uint32_t o : offsets) p.add(o);
    const size_t part_words = p.words.size();
    for (int64_t part = 0; part < parts; ++part) {
      p.words.resize(part_words);
      p.add_part(part, parts, kDepthPerDispatch, K);
      CTL_SDK_RETURN_IF_ERROR(ctx.dispatch(name, 16, {}, static_cast<uint32_t>(tiles_n),
                                           static_cast<uint32_t>(tiles_m), p,
                                           {reads(a), reads(b), writes(out), reads(bias_arg), writes(carry)}));
    }
  }
  return nullptr;
}

}  // namespace catalyst::vulkan
