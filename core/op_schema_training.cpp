// op_schema_training.cpp — the schema of cross_entropy and its backward, adamw_step and sgd_step: validation, output
// inference and normalisation (op_schema.h, docs/ops.md).
#include "op_schema_preparer.h"

#include "catalyst/sdk/sgd_attrs.hpp"

namespace catalyst::schema {

// cross_entropy (logits, target) and cross_entropy_backward (logits, target, grad_loss).
ctl_status* Preparer::cross_entropy() {
  const bool backward = info_.op == CTL_OP_CROSS_ENTROPY_BACKWARD;
  const size_t n = backward ? 3 : 2;
  CTL_RETURN_IF_ERROR(arity(n, n, 1, 1));
  CTL_RETURN_IF_ERROR(all_inputs());
  CTL_RETURN_IF_ERROR(dtype_rule(0));
  const Layout& logits = layout(0);
  const Layout& target = layout(1);
  if (logits.rank < 1) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: inputs[0] (logits) is a scalar; it needs a class axis",
                       info_.name);
  }
  if (target.dtype != CTL_DTYPE_I32 && target.dtype != CTL_DTYPE_I64) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: inputs[1] (target) has dtype %s; class ids are i32 or i64",
                       info_.name, ctl_dtype_name(target.dtype));
  }
  if (target.rank != logits.rank - 1 ||
      !std::equal(target.shape.begin(), target.shape.begin() + target.rank, logits.shape.begin())) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT,
                       "%s: inputs[1] (target) has shape %s; it must be the logits' shape %s without the class axis",
                       info_.name, shape_words(target).c_str(), shape_words(logits).c_str());
  }
  ctl_cross_entropy_attrs& a = out_->attrs.cross_entropy;
  CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_CROSS_ENTROPY_ATTRS_STRUCT_SIZE, &a));
  out_->has_attrs = true;
  const int reduction = enum_value(a.reduction);
  if (reduction < CTL_REDUCTION_MEAN || reduction > CTL_REDUCTION_NONE) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: attrs->reduction is %d; use a ctl_reduction value", info_.name,
                       reduction);
  }
  const bool per_target = reduction == CTL_REDUCTION_NONE;
  if (backward) {
    CTL_RETURN_IF_ERROR(same_dtype(0, 2));
    const Layout& g = layout(2);
    const bool ok = per_target ? (g.rank == target.rank &&
                                  std::equal(g.shape.begin(), g.shape.begin() + g.rank, target.shape.begin()))
                               : g.rank == 0;
    if (!ok) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: inputs[2] (grad_loss) has shape %s; the loss has shape %s",
                         info_.name, shape_words(g).c_str(), per_target ? shape_words(target).c_str() : "[]");
    }
    out_->outputs = {spec_of(logits.dtype, logits.rank, logits.shape.data())};
  } else {
    out_->outputs = {per_target ? spec_of(logits.dtype, target.rank, target.shape.data())
                                : spec_of(logits.dtype, 0, logits.shape.data())};
  }
  return nullptr;
}

// adamw_step: input grad; outputs param, exp_avg, exp_avg_sq, all updated in place.
ctl_status* Preparer::adamw() {
  CTL_RETURN_IF_ERROR(arity(1, 1, 3, 3));
  if (allocating_) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT,
                       "adamw_step updates param, exp_avg and exp_avg_sq in place; use ctl_op_run_into");
  }
  CTL_RETURN_IF_ERROR(all_inputs());
  CTL_RETURN_IF_ERROR(dtype_rule(0));
  ctl_adamw_attrs& a = out_->attrs.adamw;
  if (!attrs_) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "adamw_step: attrs is NULL; pass a ctl_adamw_attrs");
  }
  CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_ADAMW_ATTRS_STRUCT_SIZE, &a));
  out_->has_attrs = true;
  if (a.step == 0) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "adamw_step: attrs->step is 0; the first update is step 1");
  }
  const bool finite = std::isfinite(a.lr) && std::isfinite(a.eps) && std::isfinite(a.weight_decay);
  if (!finite || !(a.beta1 >= 0 && a.beta1 < 1) || !(a.beta2 >= 0 && a.beta2 < 1) || !(a.eps > 0)) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT,
                       "adamw_step: attrs hold lr %g, beta1 %g, beta2 %g, eps %g, weight_decay %g; betas must be in "
                       "[0, 1), eps > 0 and all finite",
                       a.lr, a.beta1, a.beta2, a.eps, a.weight_decay);
  }
  const Layout& g = layout(0);
  out_->outputs.assign(3, spec_of(g.dtype, g.rank, g.shape.data()));
  return nullptr;
}

// sgd_step: input grad; outputs param and momentum_buf (NULL exactly when momentum is
// 0), updated in place.
ctl_status* Preparer::sgd() {
  CTL_RETURN_IF_ERROR(arity(1, 1, 2, 2));
  if (allocating_) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT,
                       "sgd_step updates param and momentum_buf in place; use ctl_op_run_into");
  }
  CTL_RETURN_IF_ERROR(all_inputs());
  CTL_RETURN_IF_ERROR(dtype_rule(0));
  ctl_sgd_attrs& a = out_->attrs.sgd;
  if (!attrs_) return make_status(CTL_STATUS_INVALID_ARGUMENT, "sgd_step: attrs is NULL; pass a ctl_sgd_attrs");
  CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_SGD_ATTRS_STRUCT_SIZE, &a));
  out_->has_attrs = true;
  const bool buffer = outputs_ && outputs_[1];
  const sdk::Check check = sdk::check_sgd_attrs(a, buffer);
  if (!check.ok()) return make_status(check.code, "sgd_step: %s", check.message);
  const Layout& g = layout(0);
  out_->outputs.assign(2, spec_of(g.dtype, g.rank, g.shape.data()));
  out_->outputs[1].present = buffer;
  return nullptr;
}

}  // namespace catalyst::schema
