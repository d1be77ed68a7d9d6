// autograd_rules.cpp — the gradient of every differentiable op and view, written as op
// calls (so a backward pass runs on whatever device holds the tensors). Each rule gets the
// node (its inputs and detached aliases of its outputs) and the gradients of its outputs,
// and returns one gradient per input, reduced back to the input's shape where the op
// broadcast it. Recording is off while rules run (autograd.cpp).
#include <algorithm>
#include <cmath>
#include <memory>

#include "autograd.h"
#include "dispatch.h"
#include "placement/host_share.h"
#include "placement/lazy_move.h"
#include "placement/transfer.h"
#include "status.h"
#include "tensor.h"

namespace catalyst {
namespace {

struct Releaser {
  void operator()(ctl_tensor* t) const { ctl_tensor_release(t); }
};
using T = std::unique_ptr<ctl_tensor, Releaser>;

void check(ctl_status* status) {
  if (status) throw StatusError{status};
}

std::vector<int64_t> shape_of(const ctl_tensor* t) {
  return {t->layout.shape.begin(), t->layout.shape.begin() + t->layout.rank};
}

T run1(ctl_op_id op, std::vector<ctl_tensor*> inputs, const void* attrs = nullptr) {
  ctl_tensor* out = nullptr;
  check(run_op(op, inputs.size(), inputs.data(), attrs, 1, &out));
  return T(out);
}

std::vector<T> run_n(ctl_op_id op, std::vector<ctl_tensor*> inputs, const void* attrs, size_t outputs) {
  std::vector<ctl_tensor*> raw(outputs, nullptr);
  check(run_op(op, inputs.size(), inputs.data(), attrs, outputs, raw.data()));
  std::vector<T> result;
  for (ctl_tensor* t : raw) result.emplace_back(t);
  return result;
}

T unary(ctl_op_id op, ctl_tensor* x) {
  return run1(op, {x});
}

T binary(ctl_op_id op, ctl_tensor* a, ctl_tensor* b) {
  return run1(op, {a, b});
}

// A scalar (rank 0) of `like`'s dtype on its device; broadcasts in binary ops.
T scalar(const ctl_tensor* like, double value) {
  ctl_tensor* t = nullptr;
  check(ctl_tensor_create_full(like->device(), like->layout.dtype, 0, nullptr, value, &t));
  return T(t);
}

// g where x > 0, else 0: ReLU's gradient, 0 at x = 0 (PyTorch's convention) and where x is
// NaN. One select, where a 0/1 mask and a product would take two passes and turn an
// infinite g at x <= 0 into NaN.
T pass_where_positive(ctl_tensor* x, ctl_tensor* g) {
  T zero = scalar(g, 0);
  T positive = binary(CTL_OP_GT, x, zero.get());
  return run1(CTL_OP_WHERE, {positive.get(), g, zero.get()});
}

T scaled(ctl_tensor* x, double factor) {
  T s = scalar(x, factor);
  return binary(CTL_OP_MUL, x, s.get());
}

T zeros_like(const ctl_tensor* like) {
  ctl_tensor* t = nullptr;
  const auto shape = shape_of(like);
  check(ctl_tensor_create_zeros(like->device(), like->layout.dtype, shape.size(), shape.data(), &t));
  return T(t);
}

T cast(ctl_tensor* x, ctl_dtype dtype) {
  ctl_cast_attrs a{CTL_CAST_ATTRS_STRUCT_SIZE, dtype};
  return run1(CTL_OP_CAST, {x}, &a);
}

T reshape(ctl_tensor* x, const std::vector<int64_t>& shape) {
  ctl_tensor* c = nullptr;
  check(ctl_tensor_contiguous(x, &c));
  T contiguous(c);
  ctl_tensor* t = nullptr;
  check(ctl_tensor_reshape(c, shape.size(), shape.data(), &t));
  return T(t);
}

T contiguous(ctl_tensor* x) {
  ctl_tensor* t = nullptr;
  check(ctl_tensor_contiguous(x, &t));
  return T(t);
}

T reduce_sum(ctl_tensor* x, const std::vector<int32_t>& axes, bool keepdims) {
  ctl_reduce_attrs a{};
  a.struct_size = CTL_REDUCE_ATTRS_STRUCT_SIZE;
  a.axis_count = static_cast<uint32_t>(axes.size());
  std::copy(axes.begin(), axes.end(), a.axes);
  a.keepdims = keepdims;
  return run1(CTL_OP_SUM, {x}, &a);
}

// Sums a broadcast gradient back to `shape` (NumPy broadcasting in reverse).
T reduce_to(ctl_tensor* g, const std::vector<int64_t>& shape) {
  const auto have = shape_of(g);
  if (have == shape) return contiguous(g);
  const size_t lead = have.size() - shape.size();
  std::vector<int32_t> axes;
  for (size_t i = 0; i < have.size(); ++i) {
    if (i < lead || (shape[i - lead] == 1 && have[i] != 1)) axes.push_back(static_cast<int32_t>(i));
  }
  T summed = axes.empty() ? contiguous(g) : reduce_sum(g, axes, true);
  return reshape(summed.get(), shape);
}

T expand_to(ctl_tensor* x, const std::vector<int64_t>& shape) {
  ctl_tensor* t = nullptr;
  check(ctl_tensor_expand(x, shape.size(), shape.data(), &t));
  return T(t);
}

// A reduction's output gradient (or output), brought back to the input's rank with size 1
// on the reduced axes, then broadcast to the input's shape.
T unreduce(ctl_tensor* g, const ctl_reduce_attrs& a, const std::vector<int64_t>& in_shape) {
  std::vector<int64_t> keep = in_shape;
  for (uint32_t i = 0; i < a.axis_count; ++i) keep[a.axes[i]] = 1;
  T k = reshape(g, keep);
  return expand_to(k.get(), in_shape);
}

// 1 where x > 0, -1 where x < 0, else 0 (the derivative of |x|, 0 at 0).
T sign(ctl_tensor* x) {
  T zero = scalar(x, 0);
  T pos = cast(binary(CTL_OP_GT, x, zero.get()).get(), x->layout.dtype);
  T neg = cast(binary(CTL_OP_LT, x, zero.get()).get(), x->layout.dtype);
  return binary(CTL_OP_SUB, pos.get(), neg.get());
}

// The gradient of maximum (or minimum) for `a`: 1 where a wins, 1/2 on ties, else 0.
T winner_weight(ctl_op_id compare, ctl_tensor* a, ctl_tensor* b, ctl_dtype dtype) {
  T wins = cast(binary(compare, a, b).get(), dtype);
  T ties = cast(binary(CTL_OP_EQ, a, b).get(), dtype);
  T half_ties = scaled(ties.get(), 0.5);
  return binary(CTL_OP_ADD, wins.get(), half_ties.get());
}

std::vector<ctl_tensor*> release_to_raw(std::vector<T>& grads) {
  std::vector<ctl_tensor*> raw;
  for (T& g : grads) raw.push_back(g.release());
  return raw;
}

std::vector<T> unary_rule(const Node& n, ctl_tensor* g) {
  ctl_tensor* x = n.inputs[0];
  ctl_tensor* y = n.outputs[0];
  std::vector<T> out(1);
  switch (n.op) {
    case CTL_OP_NEG:
      out[0] = unary(CTL_OP_NEG, g);
      break;
    case CTL_OP_ABS:
      out[0] = binary(CTL_OP_MUL, g, sign(x).get());
      break;
    case CTL_OP_EXP:
      out[0] = binary(CTL_OP_MUL, g, y);
      break;
    case CTL_OP_LOG:
      out[0] = binary(CTL_OP_DIV, g, x);
      break;
    case CTL_OP_SQRT: {  // g / (2 sqrt(x))
      T two_y = scaled(y, 2.0);
      out[0] = binary(CTL_OP_DIV, g, two_y.get());
      break;
    }
    case CTL_OP_RSQRT: {  // d x^-1/2 = -1/2 x^-3/2 = -1/2 y^3
      T y2 = binary(CTL_OP_MUL, y, y);
      T y3 = binary(CTL_OP_MUL, y2.get(), y);
      T d = scaled(y3.get(), -0.5);
      out[0] = binary(CTL_OP_MUL, g, d.get());
      break;
    }
    case CTL_OP_TANH: {  // 1 - y^2
      T y2 = binary(CTL_OP_MUL, y, y);
      T one = scalar(y, 1.0);
      T d = binary(CTL_OP_SUB, one.get(), y2.get());
      out[0] = binary(CTL_OP_MUL, g, d.get());
      break;
    }
    case CTL_OP_SIGMOID: {  // y (1 - y)
      T one = scalar(y, 1.0);
      T rest = binary(CTL_OP_SUB, one.get(), y);
      T d = binary(CTL_OP_MUL, y, rest.get());
      out[0] = binary(CTL_OP_MUL, g, d.get());
      break;
    }
    case CTL_OP_RELU:
      out[0] = pass_where_positive(x, g);
      break;
    case CTL_OP_GELU:
      out[0] = binary(CTL_OP_GELU_BACKWARD, g, x);
      break;
    case CTL_OP_GELU_TANH:
      out[0] = binary(CTL_OP_GELU_TANH_BACKWARD, g, x);
      break;
    case CTL_OP_SILU: {  // s (1 + x (1 - s)) with s = sigmoid(x)
      T s = unary(CTL_OP_SIGMOID, x);
      T one = scalar(x, 1.0);
      T rest = binary(CTL_OP_SUB, one.get(), s.get());
      T x_rest = binary(CTL_OP_MUL, x, rest.get());
      T inner = binary(CTL_OP_ADD, one.get(), x_rest.get());
      T d = binary(CTL_OP_MUL, s.get(), inner.get());
      out[0] = binary(CTL_OP_MUL, g, d.get());
      break;
    }
    case CTL_OP_SIN: {
      T c = unary(CTL_OP_COS, x);
      out[0] = binary(CTL_OP_MUL, g, c.get());
      break;
    }
    case CTL_OP_COS: {
      T s = unary(CTL_OP_SIN, x);
      T ns = unary(CTL_OP_NEG, s.get());
      out[0] = binary(CTL_OP_MUL, g, ns.get());
      break;
    }
    case CTL_OP_RECIPROCAL: {  // -y^2
      T y2 = binary(CTL_OP_MUL, y, y);
      T d = unary(CTL_OP_NEG, y2.get());
      out[0] = binary(CTL_OP_MUL, g, d.get());
      break;
    }
    case CTL_OP_COPY:
      out[0] = contiguous(g);
      break;
    case CTL_OP_CAST:
      out[0] = cast(g, x->layout.dtype);
      break;
    default:
      throw StatusError{make_status(CTL_STATUS_INTERNAL, "no gradient rule for %s", op_name(n.op))};
  }
  return out;
}

std::vector<T> binary_rule(const Node& n, ctl_tensor* g) {
  ctl_tensor* a = n.inputs[0];
  ctl_tensor* b = n.inputs[1];
  ctl_tensor* y = n.outputs[0];
  const ctl_dtype dt = y->layout.dtype;
  const bool want_a = keeps_grad(a), want_b = keeps_grad(b);  // x * constant: one product, not two
  T ga, gb;
  switch (n.op) {
    case CTL_OP_ADD:
      if (want_a) ga = contiguous(g);
      if (want_b) gb = contiguous(g);
      break;
    case CTL_OP_SUB:
      if (want_a) ga = contiguous(g);
      if (want_b) gb = unary(CTL_OP_NEG, g);
      break;
    case CTL_OP_MUL:
      if (want_a) ga = binary(CTL_OP_MUL, g, b);
      if (want_b) gb = binary(CTL_OP_MUL, g, a);
      break;
    case CTL_OP_DIV: {  // d(a/b)/db = -y / b
      if (want_a) ga = binary(CTL_OP_DIV, g, b);
      if (want_b) {
        T ratio = binary(CTL_OP_DIV, y, b);
        T t = binary(CTL_OP_MUL, g, ratio.get());
        gb = unary(CTL_OP_NEG, t.get());
      }
      break;
    }
    case CTL_OP_POW: {  // d a^b = b a^(b-1) da + a^b log(a) db
      if (want_a) {
        T one = scalar(b, 1.0);
        T bm1 = binary(CTL_OP_SUB, b, one.get());
        T p = binary(CTL_OP_POW, a, bm1.get());
        T d = binary(CTL_OP_MUL, b, p.get());
        ga = binary(CTL_OP_MUL, g, d.get());
      }
      if (want_b) {
        T la = unary(CTL_OP_LOG, a);
        T e = binary(CTL_OP_MUL, y, la.get());
        gb = binary(CTL_OP_MUL, g, e.get());
      }
      break;
    }
    case CTL_OP_MAXIMUM:
    case CTL_OP_MINIMUM: {
      const ctl_op_id wins = n.op == CTL_OP_MAXIMUM ? CTL_OP_GT : CTL_OP_LT;
      if (want_a) {
        T wa = winner_weight(wins, a, b, dt);
        ga = binary(CTL_OP_MUL, g, wa.get());
      }
      if (want_b) {
        T wb = winner_weight(wins, b, a, dt);
        gb = binary(CTL_OP_MUL, g, wb.get());
      }
      break;
    }
    case CTL_OP_GELU_BACKWARD:
    case CTL_OP_GELU_TANH_BACKWARD:
    default:
      throw StatusError{make_status(CTL_STATUS_INTERNAL, "no gradient rule for %s", op_name(n.op))};
  }
  std::vector<T> out(2);
  if (ga) out[0] = reduce_to(ga.get(), shape_of(a));
  if (gb) out[1] = reduce_to(gb.get(), shape_of(b));
  return out;
}

std::vector<T> where_rule(const Node& n, ctl_tensor* g) {
  ctl_tensor* c = n.inputs[0];
  T zero = scalar(g, 0);
  std::vector<T> out(3);
  if (keeps_grad(n.inputs[1])) {
    T ga = run1(CTL_OP_WHERE, {c, g, zero.get()});
    out[1] = reduce_to(ga.get(), shape_of(n.inputs[1]));
  }
  if (keeps_grad(n.inputs[2])) {
    T gb = run1(CTL_OP_WHERE, {c, zero.get(), g});
    out[2] = reduce_to(gb.get(), shape_of(n.inputs[2]));
  }
  return out;
}

std::vector<T> reduce_rule(const Node& n, ctl_tensor* g) {
  ctl_tensor* x = n.inputs[0];
  ctl_tensor* y = n.outputs[0];
  const ctl_reduce_attrs& a = n.attrs.reduce;
  const auto shape = shape_of(x);
  T ge = unreduce(g, a, shape);
  std::vector<T> out(1);
  switch (n.op) {
    case CTL_OP_SUM:
      out[0] = contiguous(ge.get());
      break;
    case CTL_OP_MEAN: {
      double count = 1;
      for (uint32_t i = 0; i < a.axis_count; ++i) count *= static_cast<double>(shape[a.axes[i]]);
      out[0] = scaled(ge.get(), count > 0 ? 1.0 / count : 0.0);
      break;
    }
    case CTL_OP_MAX:
    case CTL_OP_MIN: {  // shared evenly among the elements equal to the result
      T ye = unreduce(y, a, shape);
      T mask = cast(binary(CTL_OP_EQ, x, ye.get()).get(), x->layout.dtype);
      std::vector<int32_t> axes(a.axes, a.axes + a.axis_count);
      T count = reduce_sum(mask.get(), axes, true);
      T count_e = expand_to(count.get(), shape);
      T share = binary(CTL_OP_DIV, mask.get(), count_e.get());
      out[0] = binary(CTL_OP_MUL, ge.get(), share.get());
      break;
    }
    case CTL_OP_LOGSUMEXP: {  // softmax over the reduced axes
      T ye = unreduce(y, a, shape);
      T diff = binary(CTL_OP_SUB, x, ye.get());
      T p = unary(CTL_OP_EXP, diff.get());
      out[0] = binary(CTL_OP_MUL, ge.get(), p.get());
      break;
    }
    default:
      throw StatusError{make_status(CTL_STATUS_INTERNAL, "no gradient rule for %s", op_name(n.op))};
  }
  return out;
}

// The gradient of a matmul's b that the batch broadcast (a weight: b is one matrix, a
// has batch axes), as one product with the batch folded into the depth: db = sum over
// the batch of A_i^T gz_i = A^T gz with A and gz viewed as [batch * M, K] and
// [batch * M, N]. A product per batch element and a sum over the batch would write and
// read an intermediate of batch copies of b: 4 MiB for each MLP weight of the benchmark
// GPT (batch 16), and growing with the batch (PyTorch's linear layers fold it the same way).
// Null when the fold does not apply (a transposed, or not viewable so; b batched itself).
T weight_gradient_over_batch(ctl_tensor* a, ctl_tensor* b, ctl_tensor* gz, const ctl_matmul_attrs& m,
                             ctl_matmul_attrs attrs) {
  const Layout& al = a->layout;
  const Layout& bl = b->layout;
  if (m.transpose_a || al.rank < 3 || gz->layout.rank != al.rank) return nullptr;
  for (size_t i = 0; i + 2 < bl.rank; ++i) {
    if (bl.shape[i] != 1) return nullptr;
  }
  // a's batch must be the output's: a broadcast a has no rows to fold.
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < al.rank; ++i) {
    if (al.shape[i] != gz->layout.shape[i]) return nullptr;
    rows *= al.shape[i];
  }
  const int64_t a_flat[2] = {rows, al.shape[al.rank - 1]};
  const int64_t g_flat[2] = {rows, gz->layout.shape[gz->layout.rank - 1]};
  // Views only: where a's strides cannot merge the axes, the per-batch products read it as
  // it is, where a copy of a (which may be far larger than b) would be another pass.
  auto flat_view = [](ctl_tensor* t, const int64_t(&shape)[2]) {
    ctl_tensor* view = nullptr;
    if (ctl_status* status = ctl_tensor_reshape(t, 2, shape, &view)) ctl_status_free(status);
    return T(view);
  };
  T a2 = flat_view(a, a_flat), g2 = flat_view(gz, g_flat);
  if (!a2 || !g2) return nullptr;
  attrs.transpose_a = true;
  attrs.transpose_b = false;
  // db = A^T gz, or for a b that holds B^T, db = gz^T A.
  T d = m.transpose_b ? run1(CTL_OP_MATMUL, {g2.get(), a2.get()}, &attrs)
                      : run1(CTL_OP_MATMUL, {a2.get(), g2.get()}, &attrs);
  return reshape(d.get(), shape_of(b));
}

std::vector<T> matmul_rule(const Node& n, ctl_tensor* g) {
  const ctl_matmul_attrs& m = n.attrs.matmul;
  ctl_tensor* a = n.inputs[0];
  ctl_tensor* b = n.inputs[1];
  ctl_tensor* bias = n.inputs.size() > 2 ? n.inputs[2] : nullptr;
  // The gradient before the activation.
  T gz;
  if (m.activation == CTL_ACTIVATION_NONE) {
    gz = contiguous(g);
  } else if (m.activation == CTL_ACTIVATION_RELU) {
    // relu(z) > 0 exactly where z > 0, so the output gives the mask without recomputing
    // the product.
    gz = pass_where_positive(n.outputs[0], g);
  } else {  // GELU's derivative needs z itself: the product again, without the activation
    ctl_matmul_attrs linear = m;
    linear.activation = CTL_ACTIVATION_NONE;
    std::vector<ctl_tensor*> ins = {a, b};
    if (bias) ins.push_back(bias);
    T z = run1(CTL_OP_MATMUL, ins, &linear);
    gz = binary(m.activation == CTL_ACTIVATION_GELU ? CTL_OP_GELU_BACKWARD : CTL_OP_GELU_TANH_BACKWARD, g, z.get());
  }
  // With A = op(a), B = op(b): dA = alpha gz B^T and dB = alpha A^T gz. Each is computed
  // in its stored layout (for a transposed operand, the transpose of that product:
  // da = alpha B gz^T, db = alpha gz^T A) so that no transposed copy is made, and only for
  // the inputs whose gradients are kept.
  ctl_matmul_attrs attrs{};
  attrs.struct_size = CTL_MATMUL_ATTRS_STRUCT_SIZE;
  attrs.alpha = m.alpha;
  attrs.alpha_set = true;
  std::vector<T> out(n.inputs.size());
  if (keeps_grad(a)) {
    ctl_matmul_attrs ga = attrs;
    T d;
    if (m.transpose_a) {  // a holds A^T: da = B gz^T, B = op(b)
      ga.transpose_a = m.transpose_b;
      ga.transpose_b = true;
      d = run1(CTL_OP_MATMUL, {b, gz.get()}, &ga);
    } else {  // da = gz B^T
      ga.transpose_b = !m.transpose_b;
      d = run1(CTL_OP_MATMUL, {gz.get(), b}, &ga);
    }
    out[0] = reduce_to(d.get(), shape_of(a));
  }
  if (keeps_grad(b)) out[1] = weight_gradient_over_batch(a, b, gz.get(), m, attrs);
  if (keeps_grad(b) && !out[1]) {  // no fold: a product per batch element, then their sum
    ctl_matmul_attrs gb = attrs;
    T d;
    if (m.transpose_b) {  // b holds B^T: db = gz^T A, A = op(a)
      gb.transpose_a = true;
      gb.transpose_b = m.transpose_a;
      d = run1(CTL_OP_MATMUL, {gz.get(), a}, &gb);
    } else {  // db = A^T gz
      gb.transpose_a = !m.transpose_a;
      d = run1(CTL_OP_MATMUL, {a, gz.get()}, &gb);
    }
    out[1] = reduce_to(d.get(), shape_of(b));
  }
  if (keeps_grad(bias)) out[2] = reduce_to(gz.get(), shape_of(bias));
  return out;
}

std::vector<T> norm_rule(const Node& n, ctl_tensor* g) {
  const bool layer = n.op == CTL_OP_LAYER_NORM;
  ctl_tensor* x = n.inputs[0];
  ctl_tensor* w = n.inputs.size() > 1 ? n.inputs[1] : nullptr;
  ctl_tensor* b = layer && n.inputs.size() > 2 ? n.inputs[2] : nullptr;
  // The forward statistics: recorded calls keep them (dispatch.cpp asks for them); a node
  // without them has them recomputed.
  const size_t stats = layer ? 2 : 1;
  std::vector<ctl_tensor*> kept(n.outputs.begin() + 1, n.outputs.end());
  std::vector<T> fwd;
  if (kept.size() != stats || std::find(kept.begin(), kept.end(), nullptr) != kept.end()) {
    std::vector<ctl_tensor*> fwd_in = {x, w};
    if (layer) fwd_in.push_back(b);
    fwd = run_n(n.op, fwd_in, &n.attrs.norm, 1 + stats);
    kept.clear();
    for (size_t i = 1; i < fwd.size(); ++i) kept.push_back(fwd[i].get());
  }
  std::vector<ctl_tensor*> bwd_in = {g, x};
  bwd_in.insert(bwd_in.end(), kept.begin(), kept.end());
  bwd_in.push_back(w);
  std::vector<T> grads =
      run_n(layer ? CTL_OP_LAYER_NORM_BACKWARD : CTL_OP_RMS_NORM_BACKWARD, bwd_in, nullptr, layer ? 3 : 2);
  std::vector<T> out(n.inputs.size());
  out[0] = std::move(grads[0]);
  if (w) out[1] = std::move(grads[1]);
  if (b) out[2] = std::move(grads[2]);
  return out;
}

std::vector<T> op_rule(const Node& n, const std::vector<ctl_tensor*>& output_grads) {
  ctl_tensor* g = output_grads[0];
  if (!g) return std::vector<T>(n.inputs.size());  // only non-differentiable outputs (mean, rstd) got gradients
  switch (n.op) {
    case CTL_OP_ADD:
    case CTL_OP_SUB:
    case CTL_OP_MUL:
    case CTL_OP_DIV:
    case CTL_OP_POW:
    case CTL_OP_MAXIMUM:
    case CTL_OP_MINIMUM:
      return binary_rule(n, g);
    case CTL_OP_WHERE:
      return where_rule(n, g);
    case CTL_OP_SUM:
    case CTL_OP_MEAN:
    case CTL_OP_MAX:
    case CTL_OP_MIN:
    case CTL_OP_LOGSUMEXP:
      return reduce_rule(n, g);
    case CTL_OP_MATMUL:
      return matmul_rule(n, g);
    case CTL_OP_SOFTMAX:
    case CTL_OP_LOG_SOFTMAX: {
      std::vector<T> out(1);
      out[0] = run1(n.op == CTL_OP_SOFTMAX ? CTL_OP_SOFTMAX_BACKWARD : CTL_OP_LOG_SOFTMAX_BACKWARD, {n.outputs[0], g},
                    &n.attrs.axis);
      return out;
    }
    case CTL_OP_LAYER_NORM:
    case CTL_OP_RMS_NORM:
      return norm_rule(n, g);
    case CTL_OP_CONCAT: {
      std::vector<T> out;
      const int32_t axis = n.attrs.axis.axis;
      int64_t offset = 0;
      for (ctl_tensor* in : n.inputs) {
        const int64_t len = in->layout.shape[axis];
        ctl_tensor* part = nullptr;
        check(ctl_tensor_slice(g, axis, offset, offset + len, 1, &part));
        T owner(part);
        out.push_back(contiguous(part));
        offset += len;
      }
      return out;
    }
    case CTL_OP_GATHER: {  // scatter the gradient back to the rows it came from
      std::vector<T> out(2);
      T zero = zeros_like(n.inputs[0]);
      out[0] = run1(CTL_OP_SCATTER_ADD, {zero.get(), n.inputs[1], g}, &n.attrs.axis);
      return out;
    }
    case CTL_OP_SCATTER_ADD: {
      std::vector<T> out(3);
      out[0] = contiguous(g);
      out[2] = run1(CTL_OP_GATHER, {g, n.inputs[1]}, &n.attrs.axis);
      return out;
    }
    case CTL_OP_CONV2D: {
      ctl_tensor* x = n.inputs[0];
      ctl_tensor* w = n.inputs[1];
      ctl_tensor* bias = n.inputs.size() > 2 ? n.inputs[2] : nullptr;
      std::vector<T> out(n.inputs.size());
      out[0] = run1(CTL_OP_CONV2D_BACKWARD_INPUT, {g, x, w}, &n.attrs.conv2d);
      out[1] = run1(CTL_OP_CONV2D_BACKWARD_WEIGHT, {g, x, w}, &n.attrs.conv2d);
      if (bias) out[2] = reduce_to(reduce_sum(g, {0, 2, 3}, false).get(), shape_of(bias));
      return out;
    }
    case CTL_OP_MAX_POOL2D:
    case CTL_OP_AVG_POOL2D: {
      std::vector<T> out(1);
      out[0] = run1(n.op == CTL_OP_MAX_POOL2D ? CTL_OP_MAX_POOL2D_BACKWARD : CTL_OP_AVG_POOL2D_BACKWARD,
                    {g, n.inputs[0]}, &n.attrs.pool2d);
      return out;
    }
    case CTL_OP_CROSS_ENTROPY: {
      std::vector<T> out(2);
      out[0] = run1(CTL_OP_CROSS_ENTROPY_BACKWARD, {n.inputs[0], n.inputs[1], g}, &n.attrs.cross_entropy);
      return out;
    }
    default:
      return unary_rule(n, g);
  }
}

std::vector<T> view_rule(const Node& n, ctl_tensor* g) {
  ctl_tensor* x = n.inputs[0];
  const auto shape = shape_of(x);
  std::vector<T> out(1);
  switch (n.view) {
    case ViewKind::kReshape:
      out[0] = reshape(g, shape);
      break;
    case ViewKind::kPermute: {
      std::vector<int64_t> inverse(n.params.size());
      for (size_t i = 0; i < n.params.size(); ++i) inverse[n.params[i]] = static_cast<int64_t>(i);
      ctl_tensor* t = nullptr;
      check(ctl_tensor_permute(g, inverse.size(), inverse.data(), &t));
      T owner(t);
      out[0] = contiguous(t);
      break;
    }
    case ViewKind::kSlice: {  // zeros, with the gradient copied into the sliced positions
      const int64_t axis = n.params[0], start = n.params[1], step = n.params[2];
      const int64_t len = g->layout.shape[axis];
      T grad = zeros_like(x);
      ctl_tensor* window = nullptr;
      check(ctl_tensor_slice(grad.get(), axis, start, start + step * len, step, &window));
      T owner(window);
      ctl_tensor* in[1] = {g};
      check(run_op_into(CTL_OP_COPY, 1, in, nullptr, 1, &window));
      out[0] = std::move(grad);
      break;
    }
    case ViewKind::kExpand:
      out[0] = reduce_to(g, shape);
      break;
    case ViewKind::kMove: {  // the gradient goes back to the device the tensor came from
      // A fallback's gradient goes back as its forward bytes did: shared between host-memory
      // devices, else lazily; for a result's move it is read where an earlier fallback left
      // it, when it is there (autograd.h).
      const int64_t made_by = n.params.empty() ? 0 : n.params[0];
      const bool fallback = made_by == kFallbackInputMove || made_by == kFallbackResultMove;
      ctl_tensor* back = nullptr;
      if (fallback && can_share_host_memory(g->device(), x->device())) {
        if (ctl_status* status = share_host_memory(g, x->device(), &back)) throw StatusError{status};
      } else if (made_by == kFallbackResultMove) {
        back = pending_view_on(g, x->device());
      }
      if (!back) {
        ctl_status* status = fallback ? move_lazily(g, x->device(), CTL_OP_COPY, &back)
                                      : move_tensor(g, x->device(), CTL_OP_COPY, &back);
        if (status) throw StatusError{status};
      }
      out[0] = T(back);
      break;
    }
  }
  return out;
}

}  // namespace

std::vector<ctl_tensor*> node_backward(const Node& node, const std::vector<ctl_tensor*>& output_grads) {
  std::vector<T> grads = node.is_view ? view_rule(node, output_grads[0]) : op_rule(node, output_grads);
  return release_to_raw(grads);
}

}  // namespace catalyst
