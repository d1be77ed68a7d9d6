// op_schema_conv_pool.cpp — the schema of conv2d, pooling and their backward forms: validation, output inference and
// normalisation (op_schema.h, docs/ops.md).
#include "op_schema_preparer.h"

namespace catalyst::schema {

// conv2d (x, weight, bias|NULL); conv2d_backward_input (dy, x, weight);
// conv2d_backward_weight (dy, x, weight). x and weight give the shapes.
ctl_status* Preparer::conv2d() {
  const bool forward = info_.op == CTL_OP_CONV2D;
  CTL_RETURN_IF_ERROR(arity(forward ? 2 : 3, 3, 1, 1));
  const size_t xi = forward ? 0 : 1, wi = forward ? 1 : 2;
  for (size_t i = 0; i < input_count_; ++i) CTL_RETURN_IF_ERROR(input(i, forward && i == 2));
  CTL_RETURN_IF_ERROR(dtype_rule(xi));
  for (size_t i = 0; i < input_count_; ++i) {
    if (!inputs_[i]) continue;
    CTL_RETURN_IF_ERROR(same_dtype(xi, i));
  }
  CTL_RETURN_IF_ERROR(rank4(xi, "x"));
  CTL_RETURN_IF_ERROR(rank4(wi, "weight"));
  ctl_conv2d_attrs& a = out_->attrs.conv2d;
  CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_CONV2D_ATTRS_STRUCT_SIZE, &a));
  out_->has_attrs = true;
  for (int k = 0; k < 2; ++k) {
    if (a.stride[k] == 0) a.stride[k] = 1;
    if (a.dilation[k] == 0) a.dilation[k] = 1;
    if (a.stride[k] < 1 || a.dilation[k] < 1 || a.padding[k] < 0 || a.padding[k] > (int64_t{1} << 30) ||
        a.stride[k] > (int64_t{1} << 30) || a.dilation[k] > (int64_t{1} << 30)) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT,
                         "%s: attrs hold stride %lld, padding %lld, dilation %lld on axis %d; stride and dilation "
                         "must be >= 1 and padding >= 0",
                         info_.name, static_cast<long long>(a.stride[k]), static_cast<long long>(a.padding[k]),
                         static_cast<long long>(a.dilation[k]), k);
    }
  }
  if (a.groups == 0) a.groups = 1;
  const Layout& x = layout(xi);
  const Layout& w = layout(wi);
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  const int64_t O = w.shape[0], KH = w.shape[2], KW = w.shape[3];
  if (a.groups < 1 || C % a.groups != 0 || O % a.groups != 0 || w.shape[1] != C / a.groups) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT,
                       "%s: x has %lld channels and weight is %s with groups %lld; weight must be (O, C / groups, "
                       "KH, KW) with C and O multiples of groups",
                       info_.name, static_cast<long long>(C), shape_words(w).c_str(), static_cast<long long>(a.groups));
  }
  const int64_t OH = sweep(H, KH, a.stride[0], a.padding[0], a.dilation[0]);
  const int64_t OW = sweep(W, KW, a.stride[1], a.padding[1], a.dilation[1]);
  if (KH < 1 || KW < 1 || OH < 1 || OW < 1) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT,
                       "%s: a %lldx%lld kernel (dilation %lld, %lld) does not fit the padded %lldx%lld input",
                       info_.name, static_cast<long long>(KH), static_cast<long long>(KW),
                       static_cast<long long>(a.dilation[0]), static_cast<long long>(a.dilation[1]),
                       static_cast<long long>(H + 2 * a.padding[0]), static_cast<long long>(W + 2 * a.padding[1]));
  }
  const int64_t y_shape[4] = {N, O, OH, OW};
  if (forward) {
    if (input_count_ == 3 && inputs_[2]) CTL_RETURN_IF_ERROR(per_feature(2, O, "bias"));
    out_->outputs = {spec_of(x.dtype, 4, y_shape)};
    return nullptr;
  }
  const Layout& dy = layout(0);
  if (dy.rank != 4 || !std::equal(y_shape, y_shape + 4, dy.shape.begin())) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT,
                       "%s: inputs[0] (dy) has shape %s; the convolution's output is "
                       "[%lld,%lld,%lld,%lld]",
                       info_.name, shape_words(dy).c_str(), static_cast<long long>(N), static_cast<long long>(O),
                       static_cast<long long>(OH), static_cast<long long>(OW));
  }
  const Layout& target = info_.op == CTL_OP_CONV2D_BACKWARD_INPUT ? x : w;
  out_->outputs = {spec_of(x.dtype, 4, target.shape.data())};
  return nullptr;
}

// max_pool2d / avg_pool2d (x); their backward forms (dy, x).
ctl_status* Preparer::pool2d() {
  const bool backward = info_.op == CTL_OP_MAX_POOL2D_BACKWARD || info_.op == CTL_OP_AVG_POOL2D_BACKWARD;
  const size_t xi = backward ? 1 : 0;
  CTL_RETURN_IF_ERROR(arity(xi + 1, xi + 1, 1, 1));
  CTL_RETURN_IF_ERROR(all_inputs());
  CTL_RETURN_IF_ERROR(dtype_rule(xi));
  if (backward) CTL_RETURN_IF_ERROR(same_dtype(xi, 0));
  CTL_RETURN_IF_ERROR(rank4(xi, "x"));
  ctl_pool2d_attrs& a = out_->attrs.pool2d;
  if (!attrs_)
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "%s: attrs is NULL; pass a ctl_pool2d_attrs", info_.name);
  CTL_RETURN_IF_ERROR(read_attrs(info_, attrs_, CTL_POOL2D_ATTRS_STRUCT_SIZE, &a));
  out_->has_attrs = true;
  const Layout& x = layout(xi);
  int64_t out[2];
  for (int k = 0; k < 2; ++k) {
    if (a.stride[k] == 0) a.stride[k] = a.kernel[k];
    if (a.kernel[k] < 1 || a.stride[k] < 1 || a.padding[k] < 0 || a.padding[k] > a.kernel[k] / 2 ||
        a.kernel[k] > (int64_t{1} << 30) || a.stride[k] > (int64_t{1} << 30)) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT,
                         "%s: attrs hold kernel %lld, stride %lld, padding %lld on axis %d; kernel and stride must "
                         "be >= 1 and padding in [0, kernel / 2]",
                         info_.name, static_cast<long long>(a.kernel[k]), static_cast<long long>(a.stride[k]),
                         static_cast<long long>(a.padding[k]), k);
    }
    out[k] = sweep(x.shape[2 + k], a.kernel[k], a.stride[k], a.padding[k], 1);
    if (out[k] < 1) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT,
                         "%s: a %lld window does not fit axis %d of size %lld (padding %lld)", info_.name,
                         static_cast<long long>(a.kernel[k]), 2 + k, static_cast<long long>(x.shape[2 + k]),
                         static_cast<long long>(a.padding[k]));
    }
  }
  const int64_t y_shape[4] = {x.shape[0], x.shape[1], out[0], out[1]};
  if (!backward) {
    out_->outputs = {spec_of(x.dtype, 4, y_shape)};
    return nullptr;
  }
  const Layout& dy = layout(0);
  if (dy.rank != 4 || !std::equal(y_shape, y_shape + 4, dy.shape.begin())) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT,
                       "%s: inputs[0] (dy) has shape %s; the pooling's output is "
                       "[%lld,%lld,%lld,%lld]",
                       info_.name, shape_words(dy).c_str(), static_cast<long long>(y_shape[0]),
                       static_cast<long long>(y_shape[1]), static_cast<long long>(y_shape[2]),
                       static_cast<long long>(y_shape[3]));
  }
  out_->outputs = {spec_of(x.dtype, 4, x.shape.data())};
  return nullptr;
}

}  // namespace catalyst::schema
