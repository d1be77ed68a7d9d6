// op_schema_elementwise.cpp — the schema of unary and binary elementwise ops, comparisons, where, and the fused
// elementwise op: validation, output inference and normalisation (op_schema.h, docs/ops.md).
#include "op_schema_preparer.h"

#include "catalyst/sdk/fused_program.hpp"

namespace catalyst::schema {

ctl_status* Preparer::unary() {
  CTL_RETURN_IF_ERROR(arity(1, 1, 1, 1));
  CTL_RETURN_IF_ERROR(all_inputs());
  CTL_RETURN_IF_ERROR(dtype_rule(0));
  out_->outputs = {spec_of(layout(0).dtype, layout(0).rank, layout(0).shape.data())};
  return nullptr;
}

ctl_status* Preparer::elementwise() {
  const bool is_where = info_.family == Family::kWhere;
  const size_t n = is_where ? 3 : 2;
  CTL_RETURN_IF_ERROR(arity(n, n, 1, 1));
  CTL_RETURN_IF_ERROR(all_inputs());
  const size_t first = is_where ? 1 : 0;
  if (is_where && layout(0).dtype != CTL_DTYPE_BOOL) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "where: inputs[0] (the condition) has dtype %s; it must be bool",
                       ctl_dtype_name(layout(0).dtype));
  }
  CTL_RETURN_IF_ERROR(dtype_rule(first));
  CTL_RETURN_IF_ERROR(same_dtype(first, first + 1));
  OutputSpec spec;
  spec.present = true;
  for (size_t i = 0; i < n; ++i) CTL_RETURN_IF_ERROR(broadcast_into(info_, layout(i), i, &spec));
  spec.dtype = info_.family == Family::kCompare ? CTL_DTYPE_BOOL : layout(first).dtype;
  CTL_RETURN_IF_ERROR(check_shape(spec.rank, spec.shape.data(), spec.dtype, "broadcast output shape"));
  for (size_t i = 0; i < n; ++i) out_->input_views[i] = broadcast_view(inputs_[i], spec.rank, spec.shape.data());
  out_->outputs = {spec};
  return nullptr;
}

// fused_elementwise: 1 .. CTL_FUSED_MAX_INPUTS inputs of one float dtype, broadcast
// together as the binary ops' are (every view at the output's shape, stride 0 where it
// repeats), and a program checked by the sdk's read_fused_program, which plugins share.
ctl_status* Preparer::fused_elementwise() {
  CTL_RETURN_IF_ERROR(arity(1, CTL_FUSED_MAX_INPUTS, 1, 1));
  CTL_RETURN_IF_ERROR(all_inputs());
  CTL_RETURN_IF_ERROR(dtype_rule(0));
  for (size_t i = 1; i < input_count_; ++i) CTL_RETURN_IF_ERROR(same_dtype(0, i));
  const sdk::Check check = sdk::read_fused_program(attrs_, static_cast<uint32_t>(input_count_), &out_->attrs.fused);
  if (!check.ok()) return make_status(check.code, "%s: %s", info_.name, check.message);
  out_->has_attrs = true;
  OutputSpec spec;
  spec.present = true;
  for (size_t i = 0; i < input_count_; ++i) CTL_RETURN_IF_ERROR(broadcast_into(info_, layout(i), i, &spec));
  spec.dtype = layout(0).dtype;
  CTL_RETURN_IF_ERROR(check_shape(spec.rank, spec.shape.data(), spec.dtype, "broadcast output shape"));
  for (size_t i = 0; i < input_count_; ++i) {
    out_->input_views[i] = broadcast_view(inputs_[i], spec.rank, spec.shape.data());
  }
  out_->outputs = {spec};
  return nullptr;
}

}  // namespace catalyst::schema
