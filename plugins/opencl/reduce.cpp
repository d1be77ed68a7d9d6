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

// Which axes are reduced, from the attrs (negative axes count from the end; none means all).
ctl_status* reduced_axes(const OpContext& ctx, const DeviceView& x, bool arg, bool* reduced) {
  ctl_reduce_attrs attrs;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&attrs, sizeof attrs, CTL_REDUCE_ATTRS_STRUCT_SIZE, "ctl_reduce_attrs", &given));
  if (!given || attrs.axis_count == 0) {
    if (arg && x.rank != 1) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "needs exactly one axis (attrs.axis_count is 0, x has rank %u)",
                      x.rank);
    }
    for (uint32_t i = 0; i < x.rank; ++i) reduced[i] = true;
    return nullptr;
  }
  if (attrs.axis_count > CTL_MAX_RANK) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs.axis_count %u exceeds %d", attrs.axis_count, CTL_MAX_RANK);
  }
  if (arg && attrs.axis_count != 1) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "needs exactly one axis, attrs.axis_count is %u", attrs.axis_count);
  }
  for (uint32_t i = 0; i < attrs.axis_count; ++i) {
    int64_t axis = attrs.axes[i];
    if (axis < 0) axis += x.rank;
    if (axis < 0 || axis >= static_cast<int64_t>(x.rank)) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs.axes[%u] = %d is out of range for rank %u", i, attrs.axes[i],
                      x.rank);
    }
    if (reduced[axis]) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs.axes[%u] = %d repeats an axis", i, attrs.axes[i]);
    }
    reduced[axis] = true;
  }
  return nullptr;
}

}  // namespace

ctl_status* run_reduce(const OpContext& ctx) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(1, 1, 1, 1));
  DeviceView x, out;
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "x", &x));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "out", &out));
  const ctl_op_id op = ctx.call->op;
  const bool arg = op == CTL_OP_ARGMAX || op == CTL_OP_ARGMIN;
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(out, "output 0 (out)", arg ? CTL_DTYPE_I64 : x.dtype));
  const bool floats =
      x.dtype == CTL_DTYPE_F32 || x.dtype == CTL_DTYPE_F64 || x.dtype == CTL_DTYPE_F16 || x.dtype == CTL_DTYPE_BF16;
  if (x.dtype == CTL_DTYPE_BOOL || (!floats && (op == CTL_OP_MEAN || op == CTL_OP_LOGSUMEXP))) {
    return ctx.fail(CTL_STATUS_UNSUPPORTED, "dtype %s is not supported", dtype_name(x.dtype));
  }

  bool reduced[CTL_MAX_RANK] = {};
  CTL_SDK_RETURN_IF_ERROR(reduced_axes(ctx, x, arg, reduced));
  // The core hands over the output with x's rank and size 1 on reduced axes.
  if (out.rank != x.rank) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "output 0 (out) has rank %u, expected x's rank %u", out.rank, x.rank);
  }
  DeviceView kept_x = x, kept_out = out, red_x = x;
  kept_x.rank = kept_out.rank = red_x.rank = 0;
  for (uint32_t i = 0; i < x.rank; ++i) {
    const int64_t expected = reduced[i] ? 1 : x.shape[i];
    if (out.shape[i] != expected) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "output 0 (out) has size %lld on axis %u, expected %lld",
                      static_cast<long long>(out.shape[i]), i, static_cast<long long>(expected));
    }
    if (reduced[i]) {
      red_x.shape[red_x.rank] = x.shape[i];
      red_x.strides[red_x.rank++] = x.strides[i];
    } else {
      kept_x.shape[kept_x.rank] = kept_out.shape[kept_out.rank] = x.shape[i];
      kept_x.strides[kept_x.rank++] = x.strides[i];
      kept_out.strides[kept_out.rank++] = out.strides[i];
    }
  }
  Geometry g;
  const DeviceView* kept_views[] = {&kept_x, &kept_out};
  const DeviceView* red_views[] = {&red_x};
  g.kept = make_iteration(kept_views, 2);
  g.reduced = make_iteration(red_views, 1);
  g.outputs = g.kept.numel;
  g.count = g.reduced.numel;
  if (g.count == 0 && (op == CTL_OP_MAX || op == CTL_OP_MIN || arg)) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "cannot reduce an empty axis (it has no %s)",
                    op == CTL_OP_MIN || op == CTL_OP_ARGMIN ? "minimum" : "maximum");
  }
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
