// bind_training.hpp — the fused loss and optimizer calls read and checked into problems:
// cross_entropy and its backward, adamw_step and sgd_step. For any plugin context with the
// call reader's members (op_call.hpp) and any view with rank, shape, strides and dtype.
#pragma once

#include <cstdint>

#include "catalyst/sdk/adamw_attrs.hpp"
#include "catalyst/sdk/op_dtypes.hpp"
#include "catalyst/sdk/raw_field.hpp"
#include "catalyst/sdk/sgd_attrs.hpp"
#include "catalyst/sdk/status.hpp"
#include "catalyst/sdk/view_check.hpp"
#include "catalyst_plugin.h"

namespace catalyst::sdk {

namespace training_detail {

template <class Ctx, class View>
ctl_status* expect_scalar(const Ctx& ctx, const View& v, const char* what) {
  if (v.rank == 0) return nullptr;
  return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "%s must be a scalar (rank 0) for a MEAN or SUM reduction, not rank %u",
                  what, v.rank);
}

}  // namespace training_detail

// v without its last axis: a loss's walk over rows.
template <class View>
View without_last_axis(const View& v) {
  View out = v;
  out.rank = v.rank - 1;
  out.shape[out.rank] = 0;
  out.strides[out.rank] = 0;
  return out;
}

template <class View>
struct CrossEntropyProblem {
  View logits, target, grad, out;  // grad: cross_entropy_backward's grad_loss; out: loss or grad_logits
  int64_t reduction = CTL_REDUCTION_MEAN;
  int64_t ignore_index = 0;
  bool ignore_set = false;
  // Whether a row of class id t is left out (its loss and gradient 0, not counted by MEAN).
  bool ignored(int64_t t) const { return ignore_set && t == ignore_index; }
};

// cross_entropy (logits, target -> loss) and its backward (logits, target, grad_loss ->
// grad_logits): classes along the last axis, class ids i32 or i64, reduction MEAN, SUM (a
// scalar loss) or NONE (one per row).
template <class Ctx, class View>
ctl_status* bind_cross_entropy(const Ctx& ctx, bool backward, CrossEntropyProblem<View>* v) {
  const uint32_t inputs = backward ? 3 : 2;
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(inputs, inputs, 1, 1));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "logits", &v->logits));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(1, "target", &v->target));
  if (backward) CTL_SDK_RETURN_IF_ERROR(ctx.input(2, "grad_loss", &v->grad));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, backward ? "grad_logits" : "loss", &v->out));
  if (v->logits.rank == 0) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input 0 (logits) is a scalar; it needs a class axis");
  }
  if (raw_enum(v->target.dtype) != CTL_DTYPE_I32 && raw_enum(v->target.dtype) != CTL_DTYPE_I64) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input 1 (target) has dtype %s; class ids are i32 or i64",
                    dtype_name(v->target.dtype));
  }
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_leading_shape(v->target, "input 1 (target)", v->logits, "logits"));
  // The normalised form always carries attrs; a zeroed (or absent) struct means MEAN.
  ctl_cross_entropy_attrs attrs;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(
      ctx.attrs(&attrs, sizeof attrs, CTL_CROSS_ENTROPY_ATTRS_STRUCT_SIZE, "ctl_cross_entropy_attrs", &given));
  v->reduction = raw_enum(attrs.reduction);
  if (v->reduction < CTL_REDUCTION_MEAN || v->reduction > CTL_REDUCTION_NONE) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs.reduction %lld is not a ctl_reduction",
                    static_cast<long long>(v->reduction));
  }
  v->ignore_index = attrs.ignore_index;
  v->ignore_set = raw_bool(attrs.ignore_index_set);
  const bool per_row = v->reduction == CTL_REDUCTION_NONE;
  if (backward) {
    CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(v->grad, "input 2 (grad_loss)", v->logits.dtype));
    if (per_row) {
      CTL_SDK_RETURN_IF_ERROR(ctx.expect_leading_shape(v->grad, "input 2 (grad_loss)", v->logits, "logits"));
    } else {
      CTL_SDK_RETURN_IF_ERROR(training_detail::expect_scalar(ctx, v->grad, "input 2 (grad_loss)"));
    }
    CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(v->out, "output 0 (grad_logits)", v->logits.dtype));
    return ctx.expect_same_shape(v->out, "output 0 (grad_logits)", v->logits, "input 0 (logits)");
  }
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(v->out, "output 0 (loss)", v->logits.dtype));
  if (per_row) return ctx.expect_leading_shape(v->out, "output 0 (loss)", v->logits, "logits");
  return training_detail::expect_scalar(ctx, v->out, "output 0 (loss)");
}

// adamw_step: grad in, param, exp_avg and exp_avg_sq updated in place (state[0..2]).
template <class View>
struct AdamwProblem {
  View grad, state[3];
  ctl_adamw_attrs attrs;
};

template <class Ctx, class View>
ctl_status* bind_adamw(const Ctx& ctx, AdamwProblem<View>* p) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(1, 1, 3, 3));
  View &grad = p->grad, *state = p->state;
  static const char* const names[3] = {"output 0 (param)", "output 1 (exp_avg)", "output 2 (exp_avg_sq)"};
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "grad", &grad));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "param", &state[0]));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(1, "exp_avg", &state[1]));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(2, "exp_avg_sq", &state[2]));
  for (int i = 0; i < 3; ++i) {
    CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(state[i], names[i], grad.dtype));
    CTL_SDK_RETURN_IF_ERROR(ctx.expect_same_shape(state[i], names[i], grad, "input 0 (grad)"));
    CTL_SDK_RETURN_IF_ERROR(ctx.check(check_distinct(state[i], names[i], "it is updated in place")));
  }
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(
      ctx.attrs(&p->attrs, sizeof p->attrs, CTL_ADAMW_ATTRS_STRUCT_SIZE, "ctl_adamw_attrs", &given));
  if (!given) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs is NULL; adamw_step needs a ctl_adamw_attrs");
  return ctx.check(check_adamw_attrs(p->attrs));
}

// sgd_step: grad in, param and (with momentum) momentum_buf updated in place. Without a
// buffer, `buffer` is param: a stand-in a kernel never writes, so it keeps one signature.
template <class View>
struct SgdProblem {
  View grad, param, buffer;
  bool has_buffer = false;
  ctl_sgd_attrs attrs;
};

template <class Ctx, class View>
ctl_status* bind_sgd(const Ctx& ctx, SgdProblem<View>* p) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(1, 1, 2, 2));
  View &grad = p->grad, &param = p->param, &buffer = p->buffer;
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "grad", &grad));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "param", &param));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(1, "momentum_buf", &buffer, true, &p->has_buffer));
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&p->attrs, sizeof p->attrs, CTL_SGD_ATTRS_STRUCT_SIZE, "ctl_sgd_attrs", &given));
  if (!given) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs is NULL; sgd_step needs a ctl_sgd_attrs");
  CTL_SDK_RETURN_IF_ERROR(ctx.check(check_sgd_attrs(p->attrs, p->has_buffer)));
  if (!p->has_buffer) buffer = param;
  static const char* const names[2] = {"output 0 (param)", "output 1 (momentum_buf)"};
  const View* state[2] = {&param, &buffer};
  for (int i = 0; i < (p->has_buffer ? 2 : 1); ++i) {
    CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(*state[i], names[i], grad.dtype));
    CTL_SDK_RETURN_IF_ERROR(ctx.expect_same_shape(*state[i], names[i], grad, "input 0 (grad)"));
    CTL_SDK_RETURN_IF_ERROR(ctx.check(check_distinct(*state[i], names[i], "it is updated in place")));
  }
  return nullptr;
}

}  // namespace catalyst::sdk
