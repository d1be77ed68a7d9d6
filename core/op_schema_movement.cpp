// op_schema_movement.cpp — the schema of cast, concat, gather, scatter_add and the creation ops: validation, output
// inference and normalisation (op_schema.h, docs/ops.md).
#include "op_schema_preparer.h"

namespace catalyst::schema {

ctl_status* Preparer::cast() {
  CTL_RETURN_IF_ERROR(arity(1, 1, 1, 1));
  CTL_RETURN_IF_ERROR(all_inputs());
  ctl_cast_attrs& a = out_->attrs.cast;
  CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_CAST_ATTRS_STRUCT_SIZE, &a));
  out_->has_attrs = true;
  if (!attrs_) {
    if (allocating_) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT,
                         "cast: attrs is NULL; pass a ctl_cast_attrs naming the target dtype");
    }
    if (outputs_ && outputs_[0] && !check_tensor_quiet(outputs_[0])) a.dtype = outputs_[0]->layout.dtype;
  }
  if (ctl_status* status = check_dtype(a.dtype, "attrs->dtype")) return annotate(status, "cast");
  out_->outputs = {spec_of(a.dtype, layout(0).rank, layout(0).shape.data())};
  return nullptr;
}

ctl_status* Preparer::concat() {
  CTL_RETURN_IF_ERROR(arity(1, 4096, 1, 1));
  CTL_RETURN_IF_ERROR(all_inputs());
  ctl_axis_attrs& a = out_->attrs.axis;
  CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_AXIS_ATTRS_STRUCT_SIZE, &a));
  out_->has_attrs = true;
  const Layout& first = layout(0);
  if (first.rank < 1) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "concat: inputs[0] is a scalar; concat needs rank >= 1");
  }
  CTL_RETURN_IF_ERROR(normalize_axis(info_, a.axis, first.rank, "attrs->axis", &a.axis));
  OutputSpec spec = spec_of(first.dtype, first.rank, first.shape.data());
  spec.shape[a.axis] = 0;
  for (size_t i = 0; i < input_count_; ++i) {
    CTL_RETURN_IF_ERROR(same_dtype(0, i));
    const Layout& l = layout(i);
    if (l.rank != first.rank) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT, "concat: inputs[%zu] has rank %u but inputs[0] has rank %u", i,
                         l.rank, first.rank);
    }
    for (uint32_t d = 0; d < l.rank; ++d) {
      if (static_cast<int32_t>(d) != a.axis && l.shape[d] != first.shape[d]) {
        return make_status(CTL_STATUS_INVALID_ARGUMENT,
                           "concat: inputs[%zu] has size %lld on axis %u but inputs[0] has %lld", i,
                           static_cast<long long>(l.shape[d]), d, static_cast<long long>(first.shape[d]));
      }
    }
    spec.shape[a.axis] += l.shape[a.axis];
  }
  CTL_RETURN_IF_ERROR(check_shape(spec.rank, spec.shape.data(), spec.dtype, "concat output shape"));
  out_->outputs = {spec};
  return nullptr;
}

ctl_status* Preparer::gather_scatter() {
  const bool scatter = info_.family == Family::kScatterAdd;
  const size_t n = scatter ? 3 : 2;
  CTL_RETURN_IF_ERROR(arity(n, n, 1, 1));
  CTL_RETURN_IF_ERROR(all_inputs());
  CTL_RETURN_IF_ERROR(dtype_rule(0));
  const Layout& x = layout(0);
  const Layout& index = layout(1);
  if (index.dtype != CTL_DTYPE_I32 && index.dtype != CTL_DTYPE_I64) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: inputs[1] (index) has dtype %s; it must be i32 or i64",
                       info_.name, ctl_dtype_name(index.dtype));
  }
  if (x.rank < 1) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: inputs[0] is a scalar; it needs rank >= 1", info_.name);
  }
  ctl_axis_attrs& a = out_->attrs.axis;
  CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_AXIS_ATTRS_STRUCT_SIZE, &a));
  out_->has_attrs = true;
  CTL_RETURN_IF_ERROR(normalize_axis(info_, a.axis, x.rank, "attrs->axis", &a.axis));
  // gather's output shape: x.shape[:axis] + index.shape + x.shape[axis+1:]
  OutputSpec gathered;
  gathered.present = true;
  gathered.dtype = x.dtype;
  if (x.rank - 1 + index.rank > CTL_MAX_RANK) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: the result would have rank %u; at most %d", info_.name,
                       x.rank - 1 + index.rank, CTL_MAX_RANK);
  }
  for (int32_t d = 0; d < a.axis; ++d) gathered.shape[gathered.rank++] = x.shape[d];
  for (uint32_t d = 0; d < index.rank; ++d) gathered.shape[gathered.rank++] = index.shape[d];
  for (uint32_t d = a.axis + 1; d < x.rank; ++d) gathered.shape[gathered.rank++] = x.shape[d];
  CTL_RETURN_IF_ERROR(check_shape(gathered.rank, gathered.shape.data(), x.dtype, "gather output shape"));
  if (!scatter) {
    out_->outputs = {gathered};
    return nullptr;
  }
  CTL_RETURN_IF_ERROR(same_dtype(0, 2));
  const Layout& src = layout(2);
  if (src.rank != gathered.rank ||
      !std::equal(gathered.shape.begin(), gathered.shape.begin() + gathered.rank, src.shape.begin())) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT,
                       "scatter_add: inputs[2] (src) must have the shape gather would produce from target and "
                       "index (target.shape[:axis] + index.shape + target.shape[axis+1:])");
  }
  out_->outputs = {spec_of(x.dtype, x.rank, x.shape.data())};
  return nullptr;
}

ctl_status* Preparer::create() {
  if (allocating_) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT,
                       "%s creates values and has no input to size them by; use ctl_op_run_into with an "
                       "output tensor (or ctl_tensor_create_full)",
                       info_.name);
  }
  CTL_RETURN_IF_ERROR(arity(0, 0, 1, 1));
  if (!outputs_ || check_tensor_quiet(outputs_[0])) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: outputs[0] is not a valid tensor", info_.name);
  }
  const ctl_tensor* output = outputs_[0];
  out_->device = output->device();
  const Layout& o = output->layout;
  if (!dtype_allowed(info_.dtypes, o.dtype)) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: outputs[0] has dtype %s; %s needs %s", info_.name,
                       ctl_dtype_name(o.dtype), info_.name, rule_words(info_.dtypes));
  }
  if (!attrs_ && info_.op != CTL_OP_FILL) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: attrs is NULL; the op needs its attribute struct", info_.name);
  }
  out_->has_attrs = true;
  switch (info_.op) {
    case CTL_OP_FILL:
      CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_FILL_ATTRS_STRUCT_SIZE, &out_->attrs.fill));
      break;
    case CTL_OP_ARANGE:
      CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_ARANGE_ATTRS_STRUCT_SIZE, &out_->attrs.arange));
      if (o.rank != 1) {
        return make_status(CTL_STATUS_INVALID_ARGUMENT, "arange: outputs[0] has rank %u; arange fills a 1-D tensor",
                           o.rank);
      }
      break;
    default:
      CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_RANDOM_ATTRS_STRUCT_SIZE, &out_->attrs.random));
      if (info_.op == CTL_OP_RANDOM_NORMAL && !(out_->attrs.random.b >= 0.0)) {
        return make_status(CTL_STATUS_INVALID_ARGUMENT,
                           "random_normal: attrs->b (the standard deviation) is %g; it must be >= 0",
                           out_->attrs.random.b);
      }
      break;
  }
  out_->outputs = {spec_of(o.dtype, o.rank, o.shape.data())};
  return nullptr;
}

}  // namespace catalyst::schema
