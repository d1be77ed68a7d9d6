// bind_matmul.hpp — matmul's call read and checked into a problem, for any plugin context
// with the call reader's members (op_call.hpp) and any view with rank, shape, strides and
// dtype:
//
//   out = act(alpha * a @ b + beta * out + bias)
//
// a (..., M, K) and b (..., K, N) broadcast over out's batch axes; bias broadcasts to out.
// The problem gives each operand's matrix strides and its strides along out's batch axes
// (0 where it broadcasts), so a kernel or a BLAS caller needs nothing else of the call;
// matmul_batch_views turns the batch strides into views a plugin merges into its loop.
#pragma once

#include <cmath>
#include <cstdint>
#include <utility>

#include "catalyst/sdk/cast_rules.hpp"
#include "catalyst/sdk/op_dtypes.hpp"
#include "catalyst/sdk/raw_field.hpp"
#include "catalyst/sdk/status.hpp"
#include "catalyst_plugin.h"

namespace catalyst::sdk {

template <class View>
struct MatmulProblem {
  View a, b, out, bias;  // a and b with any transpose flag applied as strides
  bool has_bias = false;
  ctl_dtype dtype = CTL_DTYPE_F32;
  bool is_float = true;  // false: i32 or i64, with whole alpha and beta
  double alpha = 1.0, beta = 0.0;
  int64_t activation = CTL_ACTIVATION_NONE;
  int64_t M = 0, N = 0, K = 0;
  int64_t a_rs = 0, a_cs = 0, b_rs = 0, b_cs = 0, out_rs = 0, out_cs = 0;  // row and column strides
  int64_t bias_rs = 0, bias_cs = 0;                                        // 0 without a bias
  // The batch: out's leading batch_rank axes, and each operand's strides along them, in the
  // order a, b, out, bias (bias all 0 without one).
  uint32_t batch_rank = 0;
  int64_t batch_shape[CTL_MAX_RANK] = {};
  int64_t batch_strides[4][CTL_MAX_RANK] = {};
  int64_t batches = 1;

  bool empty() const { return batches == 0 || M == 0 || N == 0; }
};

// The strides of an operand's batch axes (all but its last two) along out's batch axes:
// missing or size-1 axes broadcast with stride 0. Fails naming the operand (`name`) when an
// axis neither matches out's nor is 1.
template <class Ctx, class View>
ctl_status* matmul_batch_strides(const Ctx& ctx, const View& v, const char* name, const View& out, int64_t* strides) {
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

// A transpose flag applied as strides: the view's last two axes swapped.
template <class View>
void swap_last_two(View* v) {
  std::swap(v->shape[v->rank - 1], v->shape[v->rank - 2]);
  std::swap(v->strides[v->rank - 1], v->strides[v->rank - 2]);
}

namespace matmul_detail {

// Integer alpha and beta must be whole numbers in int64's range, as the reference requires.
inline bool whole(double v) {
  return v == std::trunc(v) && std::fabs(v) < 0x1.0p63;
}

}  // namespace matmul_detail

template <class Ctx, class View>
ctl_status* bind_matmul(const Ctx& ctx, MatmulProblem<View>* p) {
  using namespace matmul_detail;
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(2, 3, 1, 1));
  View &a = p->a, &b = p->b, &bias = p->bias, &out = p->out;
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "a", &a));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(1, "b", &b));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(2, "bias", &bias, true, &p->has_bias));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "out", &out));
  ctl_matmul_attrs attrs;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&attrs, sizeof attrs, CTL_MATMUL_ATTRS_STRUCT_SIZE, "ctl_matmul_attrs", &given));
  p->alpha = given && attrs.alpha_set ? attrs.alpha : 1.0;
  p->beta = given ? attrs.beta : 0.0;
  p->activation = raw_enum(attrs.activation);  // zeroed (NONE) when attrs is NULL
  if (p->activation < CTL_ACTIVATION_NONE || p->activation > CTL_ACTIVATION_GELU_TANH) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs.activation %lld is not a ctl_activation",
                    static_cast<long long>(p->activation));
  }
  const ctl_dtype dtype = p->dtype = a.dtype;
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(b, "input 1 (b)", dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(out, "output 0 (out)", dtype));
  if (p->has_bias) CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(bias, "input 2 (bias)", dtype));
  p->is_float = is_float_dtype(dtype);
  if (!p->is_float && dtype != CTL_DTYPE_I32 && dtype != CTL_DTYPE_I64) {
    return ctx.fail(CTL_STATUS_UNSUPPORTED, "dtype %s is not supported", dtype_name(dtype));
  }
  if (!p->is_float && p->activation != CTL_ACTIVATION_NONE) {
    return ctx.fail(CTL_STATUS_UNSUPPORTED, "a fused activation needs a float dtype, not %s", dtype_name(dtype));
  }
  if (!p->is_float && (!whole(p->alpha) || !whole(p->beta))) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "integer matmul needs whole alpha and beta, got %g and %g", p->alpha,
                    p->beta);
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
  p->M = M, p->N = N, p->K = K;
  p->batch_rank = out.rank - 2;
  for (uint32_t i = 0; i < p->batch_rank; ++i) p->batch_shape[i] = out.shape[i];
  CTL_SDK_RETURN_IF_ERROR(matmul_batch_strides(ctx, a, "input 0 (a)", out, p->batch_strides[0]));
  CTL_SDK_RETURN_IF_ERROR(matmul_batch_strides(ctx, b, "input 1 (b)", out, p->batch_strides[1]));
  CTL_SDK_RETURN_IF_ERROR(matmul_batch_strides(ctx, out, "output 0 (out)", out, p->batch_strides[2]));
  if (p->has_bias) {
    // The bias broadcasts to the whole output: pad it to the output's rank, then its matrix
    // axes broadcast like its batch axes.
    if (bias.rank > out.rank) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input 2 (bias) has rank %u, more than the output's %u", bias.rank,
                      out.rank);
    }
    View padded = bias;
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
    CTL_SDK_RETURN_IF_ERROR(matmul_batch_strides(ctx, padded, "input 2 (bias)", out, p->batch_strides[3]));
    p->bias_rs = padded.strides[out.rank - 2];
    p->bias_cs = padded.strides[out.rank - 1];
  }
  p->a_rs = a.strides[a.rank - 2], p->a_cs = a.strides[a.rank - 1];
  p->b_rs = b.strides[b.rank - 2], p->b_cs = b.strides[b.rank - 1];
  p->out_rs = out.strides[out.rank - 2], p->out_cs = out.strides[out.rank - 1];
  p->batches = 1;
  for (uint32_t i = 0; i < p->batch_rank; ++i) p->batches *= out.shape[i];
  return nullptr;
}

// The batch axes as views over out's batch shape, one per operand (a, b, out, bias), for a
// plugin that merges them (merged_axes.hpp) into its kernel's batch loop.
template <class View>
void matmul_batch_views(const MatmulProblem<View>& p, View (&views)[4]) {
  for (int v = 0; v < 4; ++v) {
    views[v] = p.out;
    views[v].rank = p.batch_rank;
    for (uint32_t i = 0; i < p.batch_rank; ++i) views[v].strides[i] = p.batch_strides[v][i];
  }
}

}  // namespace catalyst::sdk
