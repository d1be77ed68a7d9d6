// op_schema_matmul.cpp — the schema of batched matmul with its broadcast, transposes, alpha, beta, bias and activation:
// validation, output inference and normalisation (op_schema.h, docs/ops.md).
#include "op_schema_preparer.h"

namespace catalyst::schema {

ctl_status* Preparer::matmul() {
  CTL_RETURN_IF_ERROR(arity(2, 3, 1, 1));
  CTL_RETURN_IF_ERROR(input(0));
  CTL_RETURN_IF_ERROR(input(1));
  if (input_count_ == 3) CTL_RETURN_IF_ERROR(input(2, true));
  CTL_RETURN_IF_ERROR(dtype_rule(0));
  CTL_RETURN_IF_ERROR(same_dtype(0, 1));
  ctl_matmul_attrs& m = out_->attrs.matmul;
  CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_MATMUL_ATTRS_STRUCT_SIZE, &m));
  out_->has_attrs = true;
  if (!m.alpha_set) m.alpha = 1.0;
  m.alpha_set = true;
  if (allocating_ && m.beta != 0.0) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT,
                       "matmul: attrs->beta is %g but ctl_op_run has no existing output to scale; use "
                       "ctl_op_run_into",
                       m.beta);
  }
  const int activation = enum_value(m.activation);
  if (activation < CTL_ACTIVATION_NONE || activation > CTL_ACTIVATION_GELU_TANH) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "matmul: attrs->activation is %d, not a ctl_activation",
                       activation);
  }
  const ctl_dtype dtype = layout(0).dtype;
  if (m.activation != CTL_ACTIVATION_NONE && !is_float(dtype)) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "matmul: an activation needs a floating dtype, not %s",
                       ctl_dtype_name(dtype));
  }
  // Each operand's matrix axes, transposed as asked, read straight from its layout: this
  // runs on every matmul call, and copying whole 160-byte views (a rep movs or stos of
  // some 30 cycles each, ten of them) was about 0.1 us of a small matmul.
  int64_t rows[2], cols[2], row_strides[2], col_strides[2];
  for (int k = 0; k < 2; ++k) {
    const Layout& l = layout(k);
    if (l.rank < 2) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT,
                         "matmul: inputs[%d] has rank %u; matmul needs rank >= 2 (reshape a vector to 1xN)", k, l.rank);
    }
    const bool transpose = k == 0 ? m.transpose_a : m.transpose_b;
    const uint32_t r = transpose ? l.rank - 1 : l.rank - 2, c = transpose ? l.rank - 2 : l.rank - 1;
    rows[k] = l.shape[r];
    cols[k] = l.shape[c];
    row_strides[k] = l.strides[r];
    col_strides[k] = l.strides[c];
  }
  const int64_t M = rows[0], K = cols[0], K2 = rows[1], N = cols[1];
  if (K != K2) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT,
                       "matmul: inner dimensions differ: a is ...x%lldx%lld and b is ...x%lldx%lld (after "
                       "transposes)",
                       static_cast<long long>(M), static_cast<long long>(K), static_cast<long long>(K2),
                       static_cast<long long>(N));
  }
  // Broadcast the batch axes of a and b.
  OutputSpec spec;
  for (int k = 0; k < 2; ++k) {
    const Layout& l = layout(k);
    CTL_RETURN_IF_ERROR(broadcast_shape_into(info_, l.rank - 2, l.shape.data(), k, &spec));
  }
  const uint32_t batch_rank = spec.rank;
  spec.present = true;
  spec.dtype = dtype;
  spec.rank = batch_rank + 2;
  if (spec.rank > CTL_MAX_RANK) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "matmul: the output would have rank %u", spec.rank);
  }
  spec.shape[batch_rank] = M;
  spec.shape[batch_rank + 1] = N;
  CTL_RETURN_IF_ERROR(check_shape(spec.rank, spec.shape.data(), dtype, "matmul output shape"));
  // The operands' views, written where the plugin reads them: batch axes broadcast to the
  // output's (stride 0 where new or of size 1), then the two matrix axes.
  for (int k = 0; k < 2; ++k) {
    const ctl_tensor_view& v = inputs_[k]->view;
    ctl_tensor_view& b = out_->input_views[k];
    b.struct_size = v.struct_size;
    b.buffer = v.buffer;
    b.byte_offset = v.byte_offset;
    b.dtype = v.dtype;
    b.rank = spec.rank;
    const uint32_t have = v.rank - 2, lead = batch_rank - have;
    for (uint32_t i = 0; i < batch_rank; ++i) {
      const bool is_new = i < lead;
      const int64_t size = is_new ? 1 : v.shape[i - lead];
      b.shape[i] = spec.shape[i];
      b.strides[i] = (is_new || (size == 1 && spec.shape[i] != 1)) ? 0 : v.strides[i - lead];
    }
    b.shape[batch_rank] = rows[k];
    b.shape[batch_rank + 1] = cols[k];
    b.strides[batch_rank] = row_strides[k];
    b.strides[batch_rank + 1] = col_strides[k];
  }
  if (input_count_ == 3 && inputs_[2]) {
    CTL_RETURN_IF_ERROR(same_dtype(0, 2));
    OutputSpec check = spec;
    CTL_RETURN_IF_ERROR(broadcast_into(info_, layout(2), 2, &check));
    if (check.rank != spec.rank || check.shape != spec.shape) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT,
                         "matmul: inputs[2] (bias) does not broadcast to the output shape without enlarging it");
    }
    out_->input_views[2] = broadcast_view(inputs_[2], spec.rank, spec.shape.data());
  }
  out_->matmul_transposes = {m.transpose_a, m.transpose_b};  // for autograd's rule
  m.transpose_a = m.transpose_b = false;
  out_->outputs = {spec};
  return nullptr;
}

}  // namespace catalyst::schema
