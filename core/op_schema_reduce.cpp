// op_schema_reduce.cpp — the schema of the reductions over any set of axes: validation, output inference and
// normalisation (op_schema.h, docs/ops.md).
#include "op_schema_preparer.h"

namespace catalyst::schema {

ctl_status* Preparer::reduce() {
  CTL_RETURN_IF_ERROR(arity(1, 1, 1, 1));
  CTL_RETURN_IF_ERROR(all_inputs());
  CTL_RETURN_IF_ERROR(dtype_rule(0));
  ctl_reduce_attrs& a = out_->attrs.reduce;
  CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_REDUCE_ATTRS_STRUCT_SIZE, &a));
  out_->has_attrs = true;
  const Layout& x = layout(0);
  const bool is_arg = info_.op == CTL_OP_ARGMAX || info_.op == CTL_OP_ARGMIN;
  if (a.axis_count > CTL_MAX_RANK) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: attrs->axis_count is %u; at most %d axes", info_.name,
                       a.axis_count, CTL_MAX_RANK);
  }
  if (is_arg && a.axis_count != 1) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: attrs->axis_count is %u; %s takes exactly one axis",
                       info_.name, a.axis_count, info_.name);
  }
  uint32_t mask = 0;
  for (uint32_t i = 0; i < a.axis_count; ++i) {
    int32_t axis = 0;
    CTL_RETURN_IF_ERROR(normalize_axis(info_, a.axes[i], x.rank, "attrs->axes entry", &axis));
    if (mask & (1u << axis)) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: attrs->axes names axis %d twice", info_.name, axis);
    }
    mask |= 1u << axis;
  }
  if (a.axis_count == 0) mask = x.rank ? (1u << x.rank) - 1 : 0;
  a.axis_count = 0;
  for (uint32_t axis = 0; axis < x.rank; ++axis) {
    if (!(mask & (1u << axis))) continue;
    a.axes[a.axis_count++] = static_cast<int32_t>(axis);
    const bool needs_values = info_.op == CTL_OP_MAX || info_.op == CTL_OP_MIN || is_arg;
    if (needs_values && x.shape[axis] == 0) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: axis %u has size 0; %s of nothing is undefined", info_.name,
                         axis, info_.name);
    }
  }
  OutputSpec spec;
  spec.present = true;
  spec.dtype = is_arg ? CTL_DTYPE_I64 : x.dtype;
  for (uint32_t axis = 0; axis < x.rank; ++axis) {
    if (!(mask & (1u << axis))) {
      spec.shape[spec.rank++] = x.shape[axis];
    } else if (a.keepdims) {
      spec.shape[spec.rank++] = 1;
    }
  }
  out_->keepdims_mask = a.keepdims ? 0 : mask;
  out_->reduce_input_rank = x.rank;
  out_->outputs = {spec};
  return nullptr;
}

}  // namespace catalyst::schema
