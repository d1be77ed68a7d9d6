// reduce.cpp — sum, mean, max, min, argmax, argmin and logsumexp over any set of axes.
//
// The input's axes split into kept axes (one output element per position) and reduced axes,
// each side merged where memory allows. Most reductions run one work-group per output with
// a tree in local memory (kernels/reduce.cl: reduce_groups); few outputs with long
// reductions cut each reduction into fixed chunks whose partials are then folded in order
// (reduce_combine), so the result never depends on how many groups the device runs; many
// outputs whose kept axis is the inner one in memory give each output to one work-item
// (reduce_items), so neighbouring items read neighbouring elements.
// logsumexp is a max into a temporary of x's dtype (exact: it is one of the inputs), then
// the sum of exp(x - max) with that max.
#include <string>

#include "catalyst/sdk/bind_reduce.hpp"
#include "kernels.h"

namespace catalyst::opencl {
namespace {

constexpr int64_t kChunk = 32768;       // reduced elements per partial result
constexpr int64_t kSplitOutputs = 64;   // fewer outputs than this may split reductions
constexpr int64_t kItemOutputs = 1024;  // at least this many outputs may use one item each
constexpr int64_t kItemCount = 4096;    // ... when each reduces at most this many elements
constexpr size_t kMostGroupSize = 256;

// Kernel-side operation codes (REDUCE_* in kernels/reduce.cl).
enum class Code { kSum = 0, kMean = 1, kMax = 2, kMin = 3, kArgmax = 4, kArgmin = 5, kSumExp = 6 };

struct Geometry {
  Iteration kept;     // kept axes: strides[0] in x, strides[1] in the output
  Iteration reduced;  // reduced axes: strides[0] in x
  int64_t outputs = 0;
  int64_t count = 0;  // reduced elements per output
};

std::string defines(ctl_dtype dtype, Code code) {
  std::string d = std::string("-DTA=") + dtype_tag(dtype) + " -DOP=" + std::to_string(static_cast<int>(code));
  if (dtype == CTL_DTYPE_I64) d += " -DTA_IS_I64";
  return d;
}

// A power-of-two work-group size: at most kMostGroupSize and the kernel's limit, and no more
// than `work` items need.
size_t group_size(const Kernel* k, int64_t work) {
  size_t most = k->max_work_group_size < kMostGroupSize ? k->max_work_group_size : kMostGroupSize;
  size_t size = 1;
  while (size * 2 <= most && static_cast<int64_t>(size) < work) size *= 2;
  return size;
}

// Reduces x (geometry g) with `code` into out (kept strides g.kept.strides[1] from out's
// element offset); `m` is logsumexp's max per output for kSumExp (contiguous, x's dtype).
ctl_status* reduce_into(const OpContext& ctx, Code code, const DeviceView& x, const Geometry& g, cl_mem out,
                        int64_t out_offset, cl_long8 out_strides, const DeviceView* m) {
  const std::string defs = defines(x.dtype, code);
  DeviceView shift = x;  // an unused buffer argument still needs a valid buffer
  shift.offset = 0;
  if (m) shift = *m;
  DeviceView target = x;
  target.mem = out;
  target.offset = out_offset;
  const cl_long count = g.count, outputs = g.outputs;

  // Many outputs side by side in memory: one work-item each.
  const bool kept_inner =
      g.kept.rank > 0 && (g.reduced.rank == 0 || g.kept.strides[0].s[0] <= g.reduced.strides[0].s[0]);
  if (kept_inner && g.outputs >= kItemOutputs && g.count <= kItemCount) {
    Kernel* k = nullptr;
    CTL_SDK_RETURN_IF_ERROR(ctx.kernel("reduce", defs, "reduce_items", &k));
    return ctx.launch(k, g.outputs, x, g.kept.rank, g.kept.shape, g.kept.strides[0], out_strides, g.reduced.rank,
                      g.reduced.shape, g.reduced.strides[0], count, outputs, shift, target);
  }

  const int64_t chunk = g.outputs < kSplitOutputs && g.count >= 2 * kChunk ? kChunk : (g.count > 0 ? g.count : 1);
  const int64_t chunks = g.count > chunk ? (g.count + chunk - 1) / chunk : 1;
  const int64_t tasks = g.outputs * chunks;
  const bool arg = code == Code::kArgmax || code == Code::kArgmin;
  Temporary part, part_index;
  if (chunks > 1) {
    CTL_SDK_RETURN_IF_ERROR(ctx.temporary(static_cast<uint64_t>(tasks) * 8, &part));
    if (arg) CTL_SDK_RETURN_IF_ERROR(ctx.temporary(static_cast<uint64_t>(tasks) * 8, &part_index));
  }
  cl_mem part_mem = chunks > 1 ? part.mem() : x.mem;
  cl_mem index_mem = chunks > 1 && arg ? part_index.mem() : x.mem;

  Kernel* k = nullptr;
  CTL_SDK_RETURN_IF_ERROR(ctx.kernel("reduce", defs, "reduce_groups", &k));
  size_t local = group_size(k, chunk);
  size_t groups = static_cast<size_t>(tasks);
  const size_t most = static_cast<size_t>(ctx.device->compute_units) * 256;
  if (groups > most) groups = most;
  size_t global = groups * local;
  CTL_SDK_RETURN_IF_ERROR(ctx.enqueue(
      k, 1, &global, &local, x, g.kept.rank, g.kept.shape, g.kept.strides[0], out_strides, g.reduced.rank,
      g.reduced.shape, g.reduced.strides[0], count, static_cast<cl_long>(chunk), static_cast<cl_long>(chunks),
      static_cast<cl_long>(tasks), shift, part_mem, index_mem, target, LocalBytes{local * 8}, LocalBytes{local * 8}));
  if (chunks == 1) return nullptr;

  Kernel* combine = nullptr;
  CTL_SDK_RETURN_IF_ERROR(ctx.kernel("reduce", defs, "reduce_combine", &combine));
  local = group_size(combine, chunks);
  groups = static_cast<size_t>(g.outputs);
  if (groups > most) groups = most;
  global = groups * local;
  return ctx.enqueue(combine, 1, &global, &local, part_mem, index_mem, static_cast<cl_long>(chunks), outputs,
                     g.kept.rank, g.kept.shape, out_strides, count, shift, target, LocalBytes{local * 8},
                     LocalBytes{local * 8});
}

}  // namespace

ctl_status* run_reduce(const OpContext& ctx) {
  sdk::ReduceProblem<DeviceView> rp;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_reduce(ctx, &rp));
  const DeviceView &x = rp.x, &out = rp.out, &kept_x = rp.kept_x, &kept_out = rp.kept_out, &red_x = rp.reduced_x;
  const ctl_op_id op = rp.op;
  Geometry g;
  const DeviceView* kept_views[] = {&kept_x, &kept_out};
  const DeviceView* red_views[] = {&red_x};
  g.kept = make_iteration(kept_views, 2);
  g.reduced = make_iteration(red_views, 1);
  g.outputs = g.kept.numel;
  g.count = g.reduced.numel;
  if (g.outputs == 0) return nullptr;

  Code code = Code::kSum;
  switch (op) {
    case CTL_OP_MEAN:
      code = Code::kMean;
      break;
    case CTL_OP_MAX:
      code = Code::kMax;
      break;
    case CTL_OP_MIN:
      code = Code::kMin;
      break;
    case CTL_OP_ARGMAX:
      code = Code::kArgmax;
      break;
    case CTL_OP_ARGMIN:
      code = Code::kArgmin;
      break;
    default:
      break;
  }
  if (op != CTL_OP_LOGSUMEXP) return reduce_into(ctx, code, x, g, out.mem, out.offset, g.kept.strides[1], nullptr);

  // logsumexp: the max of every output into a contiguous temporary (in the kept order),
  // then the shifted sum of exponentials.
  DeviceView m = x;
  m.rank = 1;
  m.shape[0] = g.outputs;
  m.strides[0] = 1;
  Temporary m_storage;
  CTL_SDK_RETURN_IF_ERROR(ctx.contiguous_like(m, &m_storage, &m));
  cl_long8 m_strides{};
  int64_t stride = 1;
  for (int i = 0; i < g.kept.rank; ++i) {
    m_strides.s[i] = stride;
    stride *= g.kept.shape.s[i];
  }
  CTL_SDK_RETURN_IF_ERROR(reduce_into(ctx, Code::kMax, x, g, m.mem, 0, m_strides, nullptr));
  return reduce_into(ctx, Code::kSumExp, x, g, out.mem, out.offset, g.kept.strides[1], &m);
}

}  // namespace catalyst::opencl
