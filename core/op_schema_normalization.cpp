// op_schema_normalization.cpp — the schema of softmax, log_softmax, layer_norm, rms_norm and their backward forms:
// validation, output inference and normalisation (op_schema.h, docs/ops.md).
#include "op_schema_preparer.h"

namespace catalyst::schema {

ctl_status* Preparer::softmax() {
  CTL_RETURN_IF_ERROR(arity(1, 1, 1, 1));
  CTL_RETURN_IF_ERROR(all_inputs());
  CTL_RETURN_IF_ERROR(dtype_rule(0));
  ctl_axis_attrs& a = out_->attrs.axis;
  CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_AXIS_ATTRS_STRUCT_SIZE, &a));
  if (!attrs_) a.axis = -1;
  out_->has_attrs = true;
  CTL_RETURN_IF_ERROR(normalize_axis(info_, a.axis, layout(0).rank, "attrs->axis", &a.axis));
  out_->outputs = {spec_of(layout(0).dtype, layout(0).rank, layout(0).shape.data())};
  return nullptr;
}

// softmax_backward / log_softmax_backward: inputs y, dy of one shape; axis like softmax.
ctl_status* Preparer::softmax_backward() {
  CTL_RETURN_IF_ERROR(arity(2, 2, 1, 1));
  CTL_RETURN_IF_ERROR(all_inputs());
  CTL_RETURN_IF_ERROR(dtype_rule(0));
  CTL_RETURN_IF_ERROR(same_dtype(0, 1));
  CTL_RETURN_IF_ERROR(same_shape(0, 1, "y and dy must have one shape"));
  ctl_axis_attrs& a = out_->attrs.axis;
  CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_AXIS_ATTRS_STRUCT_SIZE, &a));
  if (!attrs_) a.axis = -1;
  out_->has_attrs = true;
  CTL_RETURN_IF_ERROR(normalize_axis(info_, a.axis, layout(0).rank, "attrs->axis", &a.axis));
  out_->outputs = {spec_of(layout(0).dtype, layout(0).rank, layout(0).shape.data())};
  return nullptr;
}

// layer_norm_backward (dy, x, mean, rstd, weight|NULL) -> dx, dweight?, dbias?
// rms_norm_backward (dy, x, rstd, weight|NULL) -> dx, dweight?
ctl_status* Preparer::normalization_backward() {
  const bool layer = info_.family == Family::kLayerNormBackward;
  const size_t stats = layer ? 2 : 1;
  const size_t weight = 2 + stats;
  CTL_RETURN_IF_ERROR(arity(weight, weight + 1, 1, layer ? 3 : 2));
  for (size_t i = 0; i < weight; ++i) CTL_RETURN_IF_ERROR(input(i));
  if (input_count_ > weight) CTL_RETURN_IF_ERROR(input(weight, true));
  CTL_RETURN_IF_ERROR(dtype_rule(0));
  CTL_RETURN_IF_ERROR(same_dtype(0, 1));
  CTL_RETURN_IF_ERROR(same_shape(0, 1, "dy and x must have one shape"));
  const Layout& x = layout(1);
  if (x.rank < 1) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: inputs[1] (x) is a scalar; it needs rank >= 1", info_.name);
  }
  const ctl_dtype stat = (x.dtype == CTL_DTYPE_F16 || x.dtype == CTL_DTYPE_BF16) ? CTL_DTYPE_F32 : x.dtype;
  for (size_t i = 2; i < weight; ++i) {
    const Layout& st = layout(i);
    const bool ok = st.dtype == stat && st.rank == x.rank - 1 &&
                    std::equal(st.shape.begin(), st.shape.begin() + st.rank, x.shape.begin());
    if (!ok) {
      Layout want = x;
      want.rank = x.rank - 1;
      return make_status(CTL_STATUS_INVALID_ARGUMENT,
                         "%s: inputs[%zu] (%s) is %s %s; for x of shape %s the forward op's statistics are %s %s",
                         info_.name, i, layer && i == 2 ? "mean" : "rstd", ctl_dtype_name(st.dtype),
                         shape_words(st).c_str(), shape_words(x).c_str(), ctl_dtype_name(stat),
                         shape_words(want).c_str());
    }
  }
  const int64_t n = x.shape[x.rank - 1];
  const bool has_weight = input_count_ > weight && inputs_[weight];
  if (has_weight) {
    CTL_RETURN_IF_ERROR(same_dtype(1, weight));
    CTL_RETURN_IF_ERROR(per_feature(weight, n, "weight"));
  }
  // epsilon is unused here (rstd is an input), but the plugin gets the struct all the same,
  // filled as layer_norm's: every op with an attribute struct receives it (the normal form).
  ctl_norm_attrs& a = out_->attrs.norm;
  CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_NORM_ATTRS_STRUCT_SIZE, &a));
  out_->has_attrs = true;
  if (a.epsilon == 0.0) a.epsilon = 1e-5;
  out_->outputs = {spec_of(x.dtype, x.rank, x.shape.data())};
  for (size_t i = 1; i < output_count_; ++i) {
    OutputSpec s = spec_of(x.dtype, 1, &n);
    s.present = allocating_ || (outputs_ && outputs_[i]);
    out_->outputs.push_back(s);
  }
  return nullptr;
}

ctl_status* Preparer::normalization() {
  const bool layer = info_.family == Family::kLayerNorm;
  const size_t max_inputs = layer ? 3 : 2;
  const size_t max_outputs = layer ? 3 : 2;
  CTL_RETURN_IF_ERROR(arity(1, max_inputs, 1, max_outputs));
  if (allocating_ && output_count_ != 1 && output_count_ != max_outputs) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: output_count is %zu; ask for 1 or %zu outputs", info_.name,
                       output_count_, max_outputs);
  }
  CTL_RETURN_IF_ERROR(input(0));
  for (size_t i = 1; i < input_count_; ++i) CTL_RETURN_IF_ERROR(input(i, true));
  CTL_RETURN_IF_ERROR(dtype_rule(0));
  const Layout& x = layout(0);
  if (x.rank < 1) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: inputs[0] is a scalar; it needs rank >= 1", info_.name);
  }
  const int64_t n = x.shape[x.rank - 1];
  for (size_t i = 1; i < input_count_; ++i) {
    if (!inputs_[i]) continue;
    CTL_RETURN_IF_ERROR(same_dtype(0, i));
    CTL_RETURN_IF_ERROR(per_feature(i, n, i == 1 ? "weight" : "bias"));
  }
  ctl_norm_attrs& a = out_->attrs.norm;
  CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_NORM_ATTRS_STRUCT_SIZE, &a));
  out_->has_attrs = true;
  if (!(a.epsilon >= 0.0)) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: attrs->epsilon is %g; it must be >= 0", info_.name, a.epsilon);
  }
  if (a.epsilon == 0.0) a.epsilon = 1e-5;
  const ctl_dtype stat = (x.dtype == CTL_DTYPE_F16 || x.dtype == CTL_DTYPE_BF16) ? CTL_DTYPE_F32 : x.dtype;
  out_->outputs = {spec_of(x.dtype, x.rank, x.shape.data())};
  for (size_t i = 1; i < output_count_; ++i) {
    OutputSpec s = spec_of(stat, x.rank - 1, x.shape.data());
    s.present = allocating_ || (outputs_ && outputs_[i]);
    out_->outputs.push_back(s);
  }
  return nullptr;
}

}  // namespace catalyst::schema
