// bind_movement.hpp — the data-movement family's calls (cast, concat, gather, scatter_add,
// fill, arange, random) read and checked into problems, for any plugin whose context is an
// sdk::OpCall (op_call.hpp). What is left to the plugin: the dtype choice and the launch.
// Each binder returns the status of the first check that fails, with the message every
// plugin gives; an empty output is not an error here (the caller returns early on it).
#pragma once

#include <cstdint>

#include "catalyst/sdk/cast_rules.hpp"
#include "catalyst/sdk/op_call.hpp"
#include "catalyst/sdk/status.hpp"
#include "catalyst_plugin.h"

namespace catalyst::sdk {

// A view of `rank` axes with these sizes, strides and element offset, for walking views
// whose shapes differ on one shape (gather's x and index along its output).
template <class View>
View walk_view(uint32_t rank, const int64_t* shape, const int64_t* strides, int64_t offset = 0) {
  View v;
  v.rank = rank;
  v.offset = offset;
  for (uint32_t d = 0; d < rank; ++d) {
    v.shape[d] = shape[d];
    v.strides[d] = strides[d];
  }
  return v;
}

// The axis of ctl_axis_attrs (NULL attrs: 0; negative counts from the end), checked.
template <class Ctx>
ctl_status* read_axis(const Ctx& ctx, uint32_t rank, uint32_t* out_axis) {
  ctl_axis_attrs attrs;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&attrs, sizeof attrs, CTL_AXIS_ATTRS_STRUCT_SIZE, "ctl_axis_attrs", &given));
  int64_t axis = given ? attrs.axis : 0;
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= static_cast<int64_t>(rank)) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs.axis %d is out of range for rank %u", attrs.axis, rank);
  }
  *out_axis = static_cast<uint32_t>(axis);
  return nullptr;
}

template <class Ctx, class View>
ctl_status* check_index(const Ctx& ctx, const View& index) {
  if (index.dtype != CTL_DTYPE_I32 && index.dtype != CTL_DTYPE_I64) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input 1 (index) has dtype %s, expected i32 or i64",
                    dtype_name(index.dtype));
  }
  return nullptr;
}

// Checks big.shape == table.shape[:axis] + index.shape + table.shape[axis+1:] (`big` is
// gather's output or scatter_add's src, `table` gather's x or scatter_add's target).
template <class Ctx, class View>
ctl_status* check_take_shape(const Ctx& ctx, const View& big, const char* big_name, const View& table,
                             const View& index, uint32_t axis) {
  const uint32_t q = index.rank;
  if (big.rank != table.rank - 1 + q) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "%s has rank %u, expected %u (%s.rank - 1 + index.rank)", big_name,
                    big.rank, table.rank - 1 + q, big_name);
  }
  for (uint32_t d = 0; d < big.rank; ++d) {
    const int64_t expected = d < axis ? table.shape[d] : d < axis + q ? index.shape[d - axis] : table.shape[d - q + 1];
    if (big.shape[d] != expected) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "%s has size %lld on axis %u, expected %lld", big_name,
                      static_cast<long long>(big.shape[d]), d, static_cast<long long>(expected));
    }
  }
  return nullptr;
}

// cast: x and y of one shape; y's dtype is the target, and attrs, when given, must agree.
template <class Ctx, class View>
ctl_status* bind_cast(const Ctx& ctx, View* x, View* y) {
  CTL_SDK_RETURN_IF_ERROR(ctx.one_to_one(x, y, /*same_dtype=*/false));
  ctl_cast_attrs attrs;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&attrs, sizeof attrs, CTL_CAST_ATTRS_STRUCT_SIZE, "ctl_cast_attrs", &given));
  if (given && raw_enum(attrs.dtype) != raw_enum(y->dtype)) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs.dtype %lld differs from output 0 (y)'s dtype %s",
                    static_cast<long long>(raw_enum(attrs.dtype)), dtype_name(y->dtype));
  }
  return nullptr;
}

// concat: every input checked against the output before `copy(input, part)` runs for each
// non-empty input, `part` being the slice of the output it fills. Nothing is copied when a
// check fails.
template <class Ctx, class View, class CopyPart>
ctl_status* run_concat_parts(const Ctx& ctx, CopyPart&& copy) {
  if (ctx.call->input_count == 0) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "needs at least one input");
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(1, UINT32_MAX, 1, 1));
  View out;
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "out", &out));
  if (out.rank == 0) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "output 0 (out) must have rank >= 1");
  uint32_t axis;
  CTL_SDK_RETURN_IF_ERROR(read_axis(ctx, out.rank, &axis));
  int64_t total = 0;
  for (uint32_t i = 0; i < ctx.call->input_count; ++i) {
    View in;
    CTL_SDK_RETURN_IF_ERROR(ctx.input(i, "x", &in));
    if (in.dtype != out.dtype) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input %u has dtype %s, the output %s", i, dtype_name(in.dtype),
                      dtype_name(out.dtype));
    }
    if (in.rank != out.rank) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input %u has rank %u, the output %u", i, in.rank, out.rank);
    }
    for (uint32_t d = 0; d < out.rank; ++d) {
      if (d != axis && in.shape[d] != out.shape[d]) {
        return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input %u has size %lld on axis %u, the output %lld", i,
                        static_cast<long long>(in.shape[d]), d, static_cast<long long>(out.shape[d]));
      }
    }
    total += in.shape[axis];
  }
  if (total != out.shape[axis]) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "inputs add up to %lld along axis %u, the output has %lld",
                    static_cast<long long>(total), axis, static_cast<long long>(out.shape[axis]));
  }
  int64_t start = 0;
  for (uint32_t i = 0; i < ctx.call->input_count; ++i) {
    View in;
    CTL_SDK_RETURN_IF_ERROR(ctx.input(i, "x", &in));
    if (in.numel() > 0) {
      View part = out;
      part.shape[axis] = in.shape[axis];
      part.offset = out.offset + start * out.strides[axis];
      CTL_SDK_RETURN_IF_ERROR(copy(in, part));
    }
    start += in.shape[axis];
  }
  return nullptr;
}

// gather: out[..., j..., ...] = x[..., index[j...], ...] along `axis`. x_walk and index_walk
// step through x's and index's elements along out's shape (0 where a view does not move);
// the gathered axis is added per element from the index value: x.shape[axis] and
// x.strides[axis].
template <class View>
struct GatherProblem {
  View x, index, out;
  uint32_t axis = 0;
  View x_walk, index_walk;
};

template <class Ctx, class View>
ctl_status* bind_gather(const Ctx& ctx, GatherProblem<View>* p) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(2, 2, 1, 1));
  View &x = p->x, &index = p->index, &out = p->out;
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "x", &x));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(1, "index", &index));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "out", &out));
  CTL_SDK_RETURN_IF_ERROR(check_index(ctx, index));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(out, "output 0 (out)", x.dtype));
  if (x.rank == 0) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input 0 (x) must have rank >= 1");
  CTL_SDK_RETURN_IF_ERROR(read_axis(ctx, x.rank, &p->axis));
  const uint32_t axis = p->axis, q = index.rank;
  CTL_SDK_RETURN_IF_ERROR(check_take_shape(ctx, out, "output 0 (out)", x, index, axis));
  int64_t x_strides[CTL_MAX_RANK] = {}, index_strides[CTL_MAX_RANK] = {};
  for (uint32_t d = 0; d < out.rank; ++d) {
    if (d < axis)
      x_strides[d] = x.strides[d];
    else if (d < axis + q)
      index_strides[d] = index.strides[d - axis];
    else
      x_strides[d] = x.strides[d - q + 1];
  }
  p->x_walk = walk_view<View>(out.rank, out.shape, x_strides, x.offset);
  p->index_walk = walk_view<View>(out.rank, out.shape, index_strides, index.offset);
  return nullptr;
}

// scatter_add: out = target, plus src[..., j..., ...] added at target[..., index[j...], ...]
// along `axis` (out-of-range indices skipped).
template <class View>
struct ScatterAddProblem {
  View target, index, src, out;
  uint32_t axis = 0;
};

template <class Ctx, class View>
ctl_status* bind_scatter_add(const Ctx& ctx, ScatterAddProblem<View>* p) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(3, 3, 1, 1));
  View &target = p->target, &index = p->index, &src = p->src, &out = p->out;
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "target", &target));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(1, "index", &index));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(2, "src", &src));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "out", &out));
  CTL_SDK_RETURN_IF_ERROR(check_index(ctx, index));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(src, "input 2 (src)", target.dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(out, "output 0 (out)", target.dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_same_shape(out, "output 0 (out)", target, "input 0 (target)"));
  if (target.rank == 0) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input 0 (target) must have rank >= 1");
  CTL_SDK_RETURN_IF_ERROR(read_axis(ctx, target.rank, &p->axis));
  return check_take_shape(ctx, src, "input 2 (src)", target, index, p->axis);
}

// The walks of a scatter_add into `acc` (an accumulator of the target's shape): its columns
// (the target's axes but `axis`) as src and acc step through them, and its index positions
// (index's axes) as src steps through them. Add index position j of column c at
// acc[column c's offset + index[j] * acc.strides[axis]].
template <class View>
struct ScatterWalks {
  View src_columns, acc_columns, src_positions;
};

template <class View>
ScatterWalks<View> scatter_walks(const ScatterAddProblem<View>& p, const View& acc) {
  const uint32_t q = p.index.rank, col_rank = p.target.rank - 1, axis = p.axis;
  int64_t col_shape[CTL_MAX_RANK] = {}, src_col[CTL_MAX_RANK] = {}, acc_col[CTL_MAX_RANK] = {};
  for (uint32_t d = 0, c = 0; d < p.target.rank; ++d) {
    if (d == axis) continue;
    col_shape[c] = p.target.shape[d];
    src_col[c] = p.src.strides[d < axis ? d : d - 1 + q];
    acc_col[c] = acc.strides[d];
    ++c;
  }
  return {walk_view<View>(col_rank, col_shape, src_col, p.src.offset),
          walk_view<View>(col_rank, col_shape, acc_col, acc.offset),
          walk_view<View>(q, p.index.shape, p.src.strides + axis)};
}

// fill: every element of out = value (0 without attrs).
template <class Ctx, class View>
ctl_status* bind_fill(const Ctx& ctx, View* out, double* value) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(0, 0, 1, 1));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "out", out));
  ctl_fill_attrs attrs;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&attrs, sizeof attrs, CTL_FILL_ATTRS_STRUCT_SIZE, "ctl_fill_attrs", &given));
  *value = given ? attrs.value : 0.0;
  return nullptr;
}

// arange: out[i] = start + i * step (0 and 1 without attrs), out 1-D.
template <class Ctx, class View>
ctl_status* bind_arange(const Ctx& ctx, View* out, double* start, double* step) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(0, 0, 1, 1));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "out", out));
  if (out->rank != 1) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "output 0 (out) must be 1-D, it has rank %u", out->rank);
  }
  ctl_arange_attrs attrs;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&attrs, sizeof attrs, CTL_ARANGE_ATTRS_STRUCT_SIZE, "ctl_arange_attrs", &given));
  *start = given ? attrs.start : 0.0;
  *step = given ? attrs.step : 1.0;
  return nullptr;
}

// random_uniform / random_normal: element i (row-major) from counter offset + i of the
// generator (philox.hpp), in [a, b) or of mean a and deviation b; without attrs [0, 1) or
// the standard normal. Float outputs only.
struct RandomProblem {
  bool normal = false;
  uint64_t seed = 0, offset = 0;
  double a = 0, b = 1;
};

template <class Ctx, class View>
ctl_status* bind_random(const Ctx& ctx, View* out, RandomProblem* p) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(0, 0, 1, 1));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "out", out));
  ctl_random_attrs attrs;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&attrs, sizeof attrs, CTL_RANDOM_ATTRS_STRUCT_SIZE, "ctl_random_attrs", &given));
  if (!given) {
    attrs.a = 0.0;
    attrs.b = 1.0;
  }
  if (!is_float_dtype(out->dtype)) {
    return ctx.fail(CTL_STATUS_UNSUPPORTED, "dtype %s is not supported", dtype_name(out->dtype));
  }
  p->normal = raw_enum(ctx.call->op) == CTL_OP_RANDOM_NORMAL;
  p->seed = attrs.seed;
  p->offset = attrs.offset;
  p->a = attrs.a;
  p->b = attrs.b;
  return nullptr;
}

}  // namespace catalyst::sdk
