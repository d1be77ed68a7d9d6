// training.cpp — reference kernels of the ABI 1.1 ops that training needs: cross_entropy
// and its backward, adamw_step, and the backward forms of softmax, log_softmax,
// layer_norm, rms_norm, gelu and gelu_tanh (semantics: abi/catalyst.h at each op id).
// Everything is computed in double per row or element, targets are read as exact
// integers, and each result is rounded once on the store.
#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include "catalyst/sdk/sgd_attrs.hpp"
#include "catalyst/sdk/view.hpp"
#include "reference_kernels.h"

namespace catalyst::reference {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// True when `s` has `x`'s shape without its last axis (the shape of a norm's statistics,
// of cross_entropy's target).
bool is_leading_shape(const Operand& s, const Operand& x) {
  if (x.rank < 1 || s.rank != x.rank - 1) return false;
  for (uint32_t d = 0; d < s.rank; ++d) {
    if (s.shape[d] != x.shape[d]) return false;
  }
  return true;
}

bool is_vector_of(const Operand& v, int64_t n) {
  return v.rank == 1 && v.shape[0] == n;
}

ctl_status* require_same_shape(const Call& call, const char* role, const Operand& have, const char* other,
                               const Operand& want) {
  if (same_shape(have, want)) return nullptr;
  return call.invalid("%s has shape %s, expected %s's shape %s", role, shape_string(have).c_str(), other,
                      shape_string(want).c_str());
}

// Strides of an operand that a row walker skips (a scalar or an absent operand).
constexpr int64_t kNoStrides[CTL_MAX_RANK] = {};

// logsumexp of one row, as the logsumexp reduction computes it: an infinite or NaN
// maximum is the result.
double row_logsumexp(const Operand& z, int64_t base, int64_t stride, int64_t length) {
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t k = 0; k < length; ++k) m = float_maximum(m, z.load(base + k * stride));
  if (std::isinf(m) || std::isnan(m)) return m;
  double sum = 0.0;
  for (int64_t k = 0; k < length; ++k) sum += std::exp(z.load(base + k * stride) - m);
  return m + std::log(sum);
}

// docs/ops.md's forms without cancellation. Phi(x) = 0.5 (1 + erf(x / sqrt(2))) as
// 0.5 erfc(-x / sqrt(2)): 1 + erf was 0 in double from x = -8.3, where gelu'(x) is still
// a normal f32 (the conformance suite's ulp sweep caught it).
double gelu_erf_derivative(double x) {
  const double cdf = 0.5 * std::erfc(-x / std::numbers::sqrt2);
  const double pdf = std::exp(-0.5 * x * x) / std::sqrt(2.0 * std::numbers::pi);
  return cdf + x * pdf;
}

// 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3c x^2), t = tanh(z), z = k (x + c x^3), as
// s + 2 k x (1 + 3c x^2) s (1 - s), s = sigmoid(2z) = 0.5 (1 + t), 1 - t^2 = 4 s (1 - s):
// 1 + t and 1 - t^2 were exactly 0 in double from z = -19.1 (x = -10), where the derivative
// is about -2.8e-36, a normal f32. With e = exp(-2|z|) in (0, 1] nothing overflows or
// cancels. Where e underflows, x^3 may have overflowed: the second term is then x * 0
// (NaN for x = +-inf, as docs/ops.md says).
double gelu_tanh_derivative(double x) {
  const double k = std::sqrt(2.0 / std::numbers::pi), c = 0.044715;
  const double z = k * (x + c * x * x * x);
  const double e = std::exp(-2.0 * std::fabs(z)), r = 1.0 / (1.0 + e);
  const double s = z >= 0 ? r : e * r;
  if (e == 0) return s + (x - x);
  return s + 2.0 * k * x * (1.0 + 3.0 * c * x * x) * (e * r * r);
}
}  // namespace

// cross_entropy (logits, target) -> loss and cross_entropy_backward (logits, target,
// grad_loss) -> grad_logits. Rows are the indices of target's shape; C is the last axis.
ctl_status* run_cross_entropy(const Call& call) {
  ctl_cross_entropy_attrs attrs;
  bool present = false;  // NULL attrs read as a zeroed struct: the mean, nothing ignored
  CTL_SDK_RETURN_IF_ERROR(read_attrs(call, CTL_CROSS_ENTROPY_ATTRS_STRUCT_SIZE, &attrs, &present));
  const long long reduction = raw_enum(attrs.reduction);
  if (reduction < CTL_REDUCTION_MEAN || reduction > CTL_REDUCTION_NONE)
    return call.invalid("attrs reduction %lld is not a ctl_reduction", reduction);
  const bool per_target = reduction == CTL_REDUCTION_NONE;
  const bool backward = call.op == CTL_OP_CROSS_ENTROPY_BACKWARD;
  const Operand& logits = call.in[0];
  const Operand& target = call.in[1];
  const Operand& out = call.out[0];
  if (logits.rank < 1) return call.invalid("logits must have rank >= 1 (the last axis holds the classes)");
  if (!is_leading_shape(target, logits))
    return call.invalid("target has shape %s, expected the logits' shape %s without its last axis",
                        shape_string(target).c_str(), shape_string(logits).c_str());
  const Operand* grad = backward ? &call.in[2] : nullptr;
  if (grad && (per_target ? !same_shape(*grad, target) : grad->rank != 0))
    return call.invalid("grad_loss has shape %s, expected the loss's shape %s", shape_string(*grad).c_str(),
                        per_target ? shape_string(target).c_str() : "[]");
  if (backward) {
    CTL_SDK_RETURN_IF_ERROR(require_same_shape(call, "output", out, "the logits", logits));
  } else if (per_target ? !same_shape(out, target) : out.rank != 0) {
    return call.invalid("output has shape %s, expected %s", shape_string(out).c_str(),
                        per_target ? shape_string(target).c_str() : "[] (a reduced loss is a scalar)");
  }

  const int64_t classes = logits.shape[logits.rank - 1];
  const int64_t zc = logits.strides[logits.rank - 1];
  const int64_t rows = target.numel();
  auto ignored = [&](int64_t t) { return attrs.ignore_index_set && t == attrs.ignore_index; };
  auto in_range = [&](int64_t t) { return t >= 0 && t < classes; };
  // One walker over the rows keeps logits, target and the per-row loss (or grad) in step;
  // the row-major order of target's shape is the order of rows.
  sdk::StridedWalker<4> walk(target.rank, target.shape);
  const size_t zs = walk.add(logits.strides), ts = walk.add(target.strides);
  const size_t ls = walk.add(per_target ? (backward ? grad->strides : out.strides) : kNoStrides);
  const size_t os = walk.add(backward ? out.strides : kNoStrides);

  if (!backward) {
    double total = 0.0;
    int64_t counted = 0;
    for (int64_t r = 0; r < rows; ++r, walk.next()) {
      const int64_t t = target.load_i(walk.offset(ts));
      double loss = 0.0;
      if (!ignored(t)) {
        ++counted;
        const int64_t z0 = walk.offset(zs);
        loss = in_range(t) ? row_logsumexp(logits, z0, zc, classes) - logits.load(z0 + t * zc) : kNaN;
        total += loss;
      }
      if (per_target) out.store(walk.offset(ls), loss);
    }
    if (reduction == CTL_REDUCTION_SUM) out.store(0, total);
    if (reduction == CTL_REDUCTION_MEAN) out.store(0, total / static_cast<double>(counted));  // 0 / 0: NaN
    return nullptr;
  }

  double scale = 0.0;  // grad_loss, or grad_loss / count for the mean
  if (!per_target) {
    int64_t counted = 0;
    for (int64_t r = 0; r < rows; ++r, walk.next()) counted += ignored(target.load_i(walk.offset(ts))) ? 0 : 1;
    walk.seek(0);
    scale = grad->load(0);
    if (reduction == CTL_REDUCTION_MEAN) scale /= static_cast<double>(counted);
  }
  const int64_t oc = out.strides[out.rank - 1];
  for (int64_t r = 0; r < rows; ++r, walk.next()) {
    const int64_t t = target.load_i(walk.offset(ts));
    const int64_t z0 = walk.offset(zs), o0 = walk.offset(os);
    if (ignored(t) || !in_range(t)) {
      const double fill = ignored(t) ? 0.0 : kNaN;
      for (int64_t k = 0; k < classes; ++k) out.store(o0 + k * oc, fill);
      continue;
    }
    const double g = per_target ? grad->load(walk.offset(ls)) : scale;
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t k = 0; k < classes; ++k) m = float_maximum(m, logits.load(z0 + k * zc));
    double sum = 0.0;
    for (int64_t k = 0; k < classes; ++k) sum += std::exp(logits.load(z0 + k * zc) - m);
    for (int64_t k = 0; k < classes; ++k) {
      const double p = std::exp(logits.load(z0 + k * zc) - m) / sum;
      out.store(o0 + k * oc, g * (p - (k == t ? 1.0 : 0.0)));
    }
  }
  return nullptr;
}

// adamw_step: input grad; outputs param, exp_avg, exp_avg_sq, each read and then written.
// The update is done in double from the stored values and each result rounded once.
ctl_status* run_adamw_step(const Call& call) {
  ctl_adamw_attrs a;
  bool present = false;
  CTL_SDK_RETURN_IF_ERROR(read_attrs(call, CTL_ADAMW_ATTRS_STRUCT_SIZE, &a, &present));
  if (!present) return call.invalid("attrs are NULL; the step needs a ctl_adamw_attrs");
  if (a.step == 0) return call.invalid("attrs step is 0; the first update is step 1");
  if (!std::isfinite(a.lr) || !std::isfinite(a.weight_decay) || !(a.beta1 >= 0.0 && a.beta1 < 1.0) ||
      !(a.beta2 >= 0.0 && a.beta2 < 1.0) || !(a.eps > 0.0) || !std::isfinite(a.eps))
    return call.invalid(
        "attrs lr %g, beta1 %g, beta2 %g, eps %g, weight_decay %g: betas must be in [0, 1), eps > 0, all "
        "finite",
        a.lr, a.beta1, a.beta2, a.eps, a.weight_decay);
  const Operand& grad = call.in[0];
  const char* names[] = {"param", "exp_avg", "exp_avg_sq"};
  for (size_t i = 0; i < 3; ++i) CTL_SDK_RETURN_IF_ERROR(require_same_shape(call, names[i], call.out[i], "grad", grad));
  const Operand& param = call.out[0];
  const Operand& exp_avg = call.out[1];
  const Operand& exp_avg_sq = call.out[2];
  const double step = static_cast<double>(a.step);
  const double correction1 = 1.0 - std::pow(a.beta1, step);
  const double correction2 = 1.0 - std::pow(a.beta2, step);
  sdk::StridedWalker<4> walk(grad.rank, grad.shape);
  const size_t gs = walk.add(grad.strides), ps = walk.add(param.strides), ms = walk.add(exp_avg.strides),
               vs = walk.add(exp_avg_sq.strides);
  for (int64_t i = 0, n = grad.numel(); i < n; ++i, walk.next()) {
    const double g = grad.load(walk.offset(gs));
    double p = param.load(walk.offset(ps));
    double m = exp_avg.load(walk.offset(ms));
    double v = exp_avg_sq.load(walk.offset(vs));
    p = p - a.lr * a.weight_decay * p;
    m = a.beta1 * m + (1.0 - a.beta1) * g;
    v = a.beta2 * v + (1.0 - a.beta2) * g * g;
    p = p - a.lr * (m / correction1) / (std::sqrt(v / correction2) + a.eps);
    param.store(walk.offset(ps), p);
    exp_avg.store(walk.offset(ms), m);
    exp_avg_sq.store(walk.offset(vs), v);
  }
  return nullptr;
}

// sgd_step: input grad; outputs param and momentum_buf (absent when momentum is 0), read and
// then written. In double from the stored values, each result rounded once.
ctl_status* run_sgd_step(const Call& call) {
  ctl_sgd_attrs a;
  bool present = false;
  CTL_SDK_RETURN_IF_ERROR(read_attrs(call, CTL_SGD_ATTRS_STRUCT_SIZE, &a, &present));
  if (!present) return call.invalid("attrs are NULL; the step needs a ctl_sgd_attrs");
  const Operand& grad = call.in[0];
  const Operand& param = call.out[0];
  const Operand absent;
  const Operand& buffer = call.out.size() > 1 ? call.out[1] : absent;  // the registry allows one output
  const sdk::Check check = sdk::check_sgd_attrs(a, buffer.present());
  if (!check.ok()) return call.invalid("%s", check.message);
  CTL_SDK_RETURN_IF_ERROR(require_same_shape(call, "param", param, "grad", grad));
  if (buffer.present()) CTL_SDK_RETURN_IF_ERROR(require_same_shape(call, "momentum_buf", buffer, "grad", grad));
  sdk::StridedWalker<3> walk(grad.rank, grad.shape);
  const size_t gs = walk.add(grad.strides), ps = walk.add(param.strides);
  const size_t bs = buffer.present() ? walk.add(buffer.strides) : 0;
  for (int64_t i = 0, n = grad.numel(); i < n; ++i, walk.next()) {
    const double p = param.load(walk.offset(ps));
    const double g = grad.load(walk.offset(gs)) + a.weight_decay * p;
    double d = g;
    if (buffer.present()) {
      const double b = a.momentum * buffer.load(walk.offset(bs)) + (1.0 - a.dampening) * g;
      buffer.store(walk.offset(bs), b);
      d = a.nesterov ? g + a.momentum * b : b;
    }
    param.store(walk.offset(ps), p - a.lr * d);
  }
  return nullptr;
}

// softmax_backward and log_softmax_backward: inputs y (the forward op's output) and dy,
// one shape; rows along attrs' axis (NULL attrs: the last axis), as run_softmax has them.
ctl_status* run_softmax_backward(const Call& call) {
  ctl_axis_attrs attrs;
  bool present = false;
  CTL_SDK_RETURN_IF_ERROR(read_attrs(call, CTL_AXIS_ATTRS_STRUCT_SIZE, &attrs, &present));
  const Operand& y = call.in[0];
  const Operand& dy = call.in[1];
  const Operand& dx = call.out[0];
  CTL_SDK_RETURN_IF_ERROR(require_same_shape(call, "dy", dy, "y", y));
  CTL_SDK_RETURN_IF_ERROR(require_same_shape(call, "output", dx, "y", y));
  const int64_t axis = present ? attrs.axis : static_cast<int64_t>(y.rank) - 1;
  if (y.rank == 0 ? (axis != 0 && axis != -1) : (axis < 0 || axis >= y.rank))
    return call.invalid("axis %lld is out of range for rank %u", static_cast<long long>(axis), y.rank);
  int64_t row_shape[CTL_MAX_RANK];
  for (uint32_t d = 0; d < y.rank; ++d) row_shape[d] = d == axis ? 1 : y.shape[d];
  const int64_t length = y.rank == 0 ? 1 : y.shape[axis];
  const int64_t ya = y.rank == 0 ? 0 : y.strides[axis];
  const int64_t dya = y.rank == 0 ? 0 : dy.strides[axis];
  const int64_t dxa = y.rank == 0 ? 0 : dx.strides[axis];
  if (length == 0) return nullptr;  // nothing to write
  int64_t rows = 1;
  for (uint32_t d = 0; d < y.rank; ++d) rows *= row_shape[d];
  sdk::StridedWalker<3> walk(y.rank, row_shape);
  const size_t ys = walk.add(y.strides), dys = walk.add(dy.strides), dxs = walk.add(dx.strides);
  const bool log_form = call.op == CTL_OP_LOG_SOFTMAX_BACKWARD;
  for (int64_t r = 0; r < rows; ++r, walk.next()) {
    const int64_t y0 = walk.offset(ys), dy0 = walk.offset(dys), dx0 = walk.offset(dxs);
    double sum = 0.0;  // softmax: sum(dy * y); log_softmax: sum(dy)
    for (int64_t k = 0; k < length; ++k) {
      const double g = dy.load(dy0 + k * dya);
      sum += log_form ? g : g * y.load(y0 + k * ya);
    }
    for (int64_t k = 0; k < length; ++k) {
      const double yk = y.load(y0 + k * ya), g = dy.load(dy0 + k * dya);
      dx.store(dx0 + k * dxa, log_form ? g - std::exp(yk) * sum : yk * (g - sum));
    }
  }
  return nullptr;
}

// layer_norm_backward (dy, x, mean, rstd, weight|NULL) -> dx, dweight|NULL, dbias|NULL and
// rms_norm_backward (dy, x, rstd, weight|NULL) -> dx, dweight|NULL, over the last axis.
// With xh = (x - mean) * rstd (rms: x * rstd) and g = dy * weight:
//   layer_norm: dx = rstd * (g - mean(g) - xh * mean(g * xh))
//   rms_norm:   dx = rstd * (g - xh * mean(g * xh))
// and dweight = sum over rows of dy * xh, dbias = sum over rows of dy.
ctl_status* run_norm_backward(const Call& call) {
  const bool layer = call.op == CTL_OP_LAYER_NORM_BACKWARD;
  const Operand& dy = call.in[0];
  const Operand& x = call.in[1];
  const Operand* mean = layer ? &call.in[2] : nullptr;
  const Operand& rstd = call.in[layer ? 3 : 2];
  const size_t weight_slot = layer ? 4 : 3;
  const Operand* weight =
      call.in.size() > weight_slot && call.in[weight_slot].present() ? &call.in[weight_slot] : nullptr;
  const Operand& dx = call.out[0];
  const Operand* dweight = call.out.size() > 1 && call.out[1].present() ? &call.out[1] : nullptr;
  const Operand* dbias = call.out.size() > 2 && call.out[2].present() ? &call.out[2] : nullptr;
  if (x.rank < 1) return call.invalid("x must have rank >= 1 (normalises the last axis)");
  CTL_SDK_RETURN_IF_ERROR(require_same_shape(call, "dy", dy, "x", x));
  CTL_SDK_RETURN_IF_ERROR(require_same_shape(call, "output dx", dx, "x", x));
  for (const Operand* stat : {mean, &rstd}) {
    if (stat && !is_leading_shape(*stat, x))
      return call.invalid("%s has shape %s, expected x's shape %s without its last axis",
                          stat == mean ? "mean" : "rstd", shape_string(*stat).c_str(), shape_string(x).c_str());
  }
  const int64_t n = x.shape[x.rank - 1];
  const struct {
    const Operand* operand;
    const char* role;
  } vectors[] = {{weight, "weight"}, {dweight, "output dweight"}, {dbias, "output dbias"}};
  for (const auto& v : vectors) {
    if (v.operand && !is_vector_of(*v.operand, n))
      return call.invalid("%s has shape %s, expected [%lld]", v.role, shape_string(*v.operand).c_str(),
                          static_cast<long long>(n));
  }

  const int64_t rows = rstd.numel();
  const int64_t dyl = dy.strides[x.rank - 1], xl = x.strides[x.rank - 1], dxl = dx.strides[x.rank - 1];
  sdk::StridedWalker<5> walk(x.rank - 1, x.shape);
  const size_t dys = walk.add(dy.strides), xs = walk.add(x.strides), dxs = walk.add(dx.strides);
  const size_t ms = walk.add(mean ? mean->strides : kNoStrides), rs = walk.add(rstd.strides);
  std::vector<double> xh(static_cast<size_t>(n)), g(static_cast<size_t>(n));
  std::vector<double> dweight_sum(static_cast<size_t>(n), 0.0), dbias_sum(static_cast<size_t>(n), 0.0);
  const double count = static_cast<double>(n);
  for (int64_t r = 0; r < rows; ++r, walk.next()) {
    const int64_t dy0 = walk.offset(dys), x0 = walk.offset(xs), dx0 = walk.offset(dxs);
    const double mu = mean ? mean->load(walk.offset(ms)) : 0.0;
    const double s = rstd.load(walk.offset(rs));
    double sum_g = 0.0, sum_gxh = 0.0;
    for (int64_t k = 0; k < n; ++k) {
      const size_t i = static_cast<size_t>(k);
      const double d = dy.load(dy0 + k * dyl);
      xh[i] = (x.load(x0 + k * xl) - mu) * s;
      g[i] = weight ? d * weight->load(k * weight->strides[0]) : d;
      sum_g += g[i];
      sum_gxh += g[i] * xh[i];
      dweight_sum[i] += d * xh[i];
      dbias_sum[i] += d;
    }
    const double mean_g = layer ? sum_g / count : 0.0, mean_gxh = sum_gxh / count;
    for (int64_t k = 0; k < n; ++k) {
      const size_t i = static_cast<size_t>(k);
      dx.store(dx0 + k * dxl, s * (g[i] - mean_g - xh[i] * mean_gxh));
    }
  }
  for (int64_t k = 0; k < n; ++k) {
    const size_t i = static_cast<size_t>(k);
    if (dweight) dweight->store(k * dweight->strides[0], dweight_sum[i]);
    if (dbias) dbias->store(k * dbias->strides[0], dbias_sum[i]);
  }
  return nullptr;
}

// gelu_backward and gelu_tanh_backward: inputs dy, x already broadcast to the output's
// shape by the core (stride 0 on broadcast axes).
ctl_status* run_gelu_backward(const Call& call) {
  const Operand& dy = call.in[0];
  const Operand& x = call.in[1];
  const Operand& dx = call.out[0];
  CTL_SDK_RETURN_IF_ERROR(require_same_shape(call, "dy", dy, "the output", dx));
  CTL_SDK_RETURN_IF_ERROR(require_same_shape(call, "x", x, "the output", dx));
  const bool tanh_form = call.op == CTL_OP_GELU_TANH_BACKWARD;
  sdk::StridedWalker<3> walk(dx.rank, dx.shape);
  const size_t dys = walk.add(dy.strides), xs = walk.add(x.strides), dxs = walk.add(dx.strides);
  for (int64_t i = 0, n = dx.numel(); i < n; ++i, walk.next()) {
    const double v = x.load(walk.offset(xs));
    const double derivative = tanh_form ? gelu_tanh_derivative(v) : gelu_erf_derivative(v);
    dx.store(walk.offset(dxs), dy.load(walk.offset(dys)) * derivative);
  }
  return nullptr;
}

}  // namespace catalyst::reference
