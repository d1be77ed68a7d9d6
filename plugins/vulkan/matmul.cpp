// matmul.cpp — batched matmul with fused alpha, beta, bias and activation
// (shaders/matmul.comp): 64 x 64 output tiles from shared-memory slices of a and b. The call
// is read by sdk/bind_matmul.hpp; the batch axes of a, b, out and the bias become one
// Iteration over the output's batch shape.
#include <algorithm>
#include <string>

#include "catalyst/sdk/bind_matmul.hpp"
#include "kernels.h"

namespace catalyst::vulkan {

ctl_status* run_matmul(const OpContext& ctx) {
  sdk::MatmulProblem<DeviceView> mm;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_matmul(ctx, &mm));
  if (mm.empty()) return nullptr;
  DeviceView batch[4];  // a, b, out, bias along out's batch axes
  sdk::matmul_batch_views(mm, batch);
  const DeviceView* batch_views[4] = {&batch[0], &batch[1], &batch[2], &batch[3]};
  const Iteration it = make_iteration(batch_views, 4);
  // CPU devices take the direct variant (32 x 32 tiles, no shared memory, no barriers).
  const bool direct = ctx.device->kind == CTL_DEVICE_KIND_CPU;
  const int64_t tile_m = direct ? 32 : 64, tile_n = direct ? 32 : 64;
  const int64_t tiles_m = (mm.M + tile_m - 1) / tile_m, tiles_n = (mm.N + tile_n - 1) / tile_n;
  if (tiles_n > 65535 || tiles_m > 65535) {
    return ctx.fail(CTL_STATUS_UNSUPPORTED, "%lld x %lld tiles exceed one dispatch", static_cast<long long>(tiles_n),
                    static_cast<long long>(tiles_m));
  }
  Params p;
  p.add(static_cast<uint32_t>(mm.M));
  p.add(static_cast<uint32_t>(mm.N));
  p.add(static_cast<uint32_t>(mm.K));
  p.add(static_cast<uint32_t>(tiles_m));
  for (int64_t s : {mm.a_rs, mm.a_cs, mm.b_rs, mm.b_cs, mm.out_rs, mm.out_cs, mm.bias_rs, mm.bias_cs}) {
    p.add(static_cast<uint32_t>(s));
  }
  p.add((mm.has_bias ? 1u : 0u) | (mm.beta != 0.0 ? 2u : 0u));
  p.add(static_cast<uint32_t>(mm.activation));
  const bool in_double =
      mm.dtype == CTL_DTYPE_F64 || (mm.is_float && (ctx.device->dtype_mask & CTL_DTYPE_BIT(CTL_DTYPE_F64)));
  if (!mm.is_float) {
    p.add_i64(static_cast<int64_t>(mm.alpha));
    p.add_i64(static_cast<int64_t>(mm.beta));
  } else if (in_double) {
    p.add_f64(mm.alpha);
    p.add_f64(mm.beta);
  } else {
    p.add_f32(static_cast<float>(mm.alpha));
    p.add(0);
    p.add_f32(static_cast<float>(mm.beta));
    p.add(0);
  }
  // Depth is split into parts of at most kDepthPerDispatch (a multiple of the shared-memory
  // kernel's 16-deep slices): one invocation's K loop must stay well inside lavapipe's
  // 65,535 loop iterations (README, "Loop budget"). Between parts each sum waits in `carry`,
  // in the compute type, so the split changes no bit of the result.
  constexpr int64_t kDepthPerDispatch = 16384;
  const int64_t parts = std::max<int64_t>(1, (mm.K + kDepthPerDispatch - 1) / kDepthPerDispatch);
  const uint64_t compute_size = mm.dtype == CTL_DTYPE_F64 || mm.dtype == CTL_DTYPE_I64 ? 8 : 4;
  Temporary carry_storage(ctx);
  DeviceView carry;
  CTL_SDK_RETURN_IF_ERROR(
      ctx.carry(parts > 1, static_cast<uint64_t>(mm.M * mm.N) * compute_size, mm.out, &carry_storage, &carry));
  // One dispatch per batch element and part of K, its operands' offsets worked out here.
  const size_t batch_words = p.words.size();
  const DeviceView* bases[4] = {&mm.a, &mm.b, &mm.out, mm.has_bias ? &mm.bias : &mm.out};
  std::string name = std::string(direct ? "matmul_direct." : "matmul.") + dtype_name(mm.dtype);
  if (mm.is_float && mm.dtype != CTL_DTYPE_F64 && in_double) name += ".d";
  const DeviceView& bias_arg = mm.has_bias ? mm.bias : mm.out;  // any valid buffer when there is no bias
  for (int64_t index = 0; index < mm.batches; ++index) {
    p.words.resize(batch_words);
    int64_t rest = index;
    uint32_t offsets[4];
    for (int v = 0; v < 4; ++v) offsets[v] = v == 3 && !mm.has_bias ? 0 : static_cast<uint32_t>(bases[v]->offset);
    for (uint32_t k = 0; k < it.rank; ++k) {
      const int64_t position = k + 1 == it.rank ? rest : rest % it.shape[k];
      rest = k + 1 == it.rank ? 0 : rest / it.shape[k];
      for (int v = 0; v < 4; ++v) offsets[v] += static_cast<uint32_t>(position * it.strides[v][k]);
    }
    for (uint32_t o : offsets) p.add(o);
    const size_t part_words = p.words.size();
    for (int64_t part = 0; part < parts; ++part) {
      p.words.resize(part_words);
      p.add_part(part, parts, kDepthPerDispatch, mm.K);
      CTL_SDK_RETURN_IF_ERROR(ctx.dispatch(name, 16, {}, static_cast<uint32_t>(tiles_n),
                                           static_cast<uint32_t>(tiles_m), p,
                                           {reads(mm.a), reads(mm.b), writes(mm.out), reads(bias_arg), writes(carry)}));
    }
  }
  return nullptr;
}

}  // namespace catalyst::vulkan
