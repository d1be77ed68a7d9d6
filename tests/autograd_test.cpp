// autograd_test.cpp — reverse-mode gradients through the C ABI, checked by central finite
// differences in f64 for every differentiable op and view, with broadcast and
// non-contiguous (transposed, sliced, expanded) inputs; the checker itself is shown to
// catch a wrong formula. Runs on the reference device and on the CPU plugin's device.
//
// Each check builds out = f(leaves) from leaves that require gradients, takes the scalar
// loss = sum(out * w) with fixed random weights w (so every output element matters),
// runs ctl_tensor_backward, and compares every leaf gradient element with
// (loss(x + h) - loss(x - h)) / 2h, h = 1e-6, computed with recording switched off.
#include <cmath>
#include <functional>
#include <random>

#include "test_support.hpp"

using namespace ctltest;

namespace {

struct Leaf {
  std::vector<int64_t> shape;
  std::vector<double> values;
};

using Build = std::function<ctl_tensor*(const std::vector<ctl_tensor*>& leaves)>;

// Returns *t after a call that fills it, or NULL (and a test failure) when the call failed.
ctl_tensor* must(ctl_status* status, ctl_tensor* const* t, const char* what) {
  if (status) {
    ADD_FAILURE() << what << ": " << describe(status);
    ctl_status_free(status);
    return nullptr;
  }
  return *t;
}

// Small helpers that build ops (the builders below read like formulas).
ctl_tensor* un(ctl_op_id op, ctl_tensor* x) {
  ctl_tensor* t = nullptr;
  return must(ctl_op_unary(op, x, &t), &t, ctl_op_name(op));
}
ctl_tensor* bin(ctl_op_id op, ctl_tensor* a, ctl_tensor* b) {
  ctl_tensor* t = nullptr;
  return must(ctl_op_binary(op, a, b, &t), &t, ctl_op_name(op));
}
ctl_tensor* run(ctl_op_id op, std::vector<ctl_tensor*> in, const void* attrs) {
  ctl_tensor* t = nullptr;
  return must(ctl_op_run(op, in.size(), in.data(), attrs, 1, &t), &t, ctl_op_name(op));
}
ctl_tensor* transposed(ctl_tensor* x) {
  ctl_tensor* t = nullptr;
  return must(ctl_tensor_transpose(x, 0, -1, &t), &t, "transpose");
}
ctl_tensor* reduce(ctl_op_id op, ctl_tensor* x, std::vector<int64_t> axes, bool keep) {
  ctl_tensor* t = nullptr;
  return must(ctl_op_reduce(op, x, axes.size(), axes.data(), keep, &t), &t, ctl_op_name(op));
}

// Owns the tensors a builder makes along the way.
struct Scope {
  std::vector<Tensor> held;
  ctl_tensor* operator()(ctl_tensor* t) {
    held.emplace_back(t);
    return t;
  }
};

std::vector<double> read(ctl_tensor* t) {
  std::vector<double> v(static_cast<size_t>(ctl_tensor_numel(t)));
  Status s(ctl_tensor_to_host(t, v.data(), v.size() * sizeof(double)));
  EXPECT_EQ(s, nullptr) << describe(s.get());
  return v;
}

class Gradcheck {
 public:
  Gradcheck(ctl_runtime* runtime, ctl_device* device) : runtime_(runtime), device_(device) {}

  ctl_tensor* leaf(const Leaf& l, bool requires_grad) {
    ctl_tensor* t = nullptr;
    Status s(ctl_tensor_from_host(device_, CTL_DTYPE_F64, l.shape.size(), l.shape.data(), l.values.data(),
                                  l.values.size() * sizeof(double), &t));
    EXPECT_EQ(s, nullptr) << describe(s.get());
    if (requires_grad) CTL_EXPECT_OK(ctl_tensor_set_requires_grad(t, true));
    return t;
  }

  // loss = sum(build(leaves) * w); w is drawn once per check.
  double loss(const std::vector<Leaf>& leaves, const Build& build, bool requires_grad, std::vector<Tensor>* keep_leaves,
              Tensor* keep_loss) {
    std::vector<ctl_tensor*> ts;
    std::vector<Tensor> owned;
    for (const Leaf& l : leaves) {
      owned.emplace_back(leaf(l, requires_grad));
      ts.push_back(owned.back().get());
    }
    Tensor out(build(ts));
    if (!out) return NAN;
    if (weights_.empty()) {
      std::mt19937_64 rng(99);
      std::uniform_real_distribution<double> u(-1, 1);
      weights_.resize(static_cast<size_t>(ctl_tensor_numel(out.get())));
      for (double& w : weights_) w = u(rng);
      weight_shape_.resize(ctl_tensor_rank(out.get()));
      for (size_t i = 0; i < weight_shape_.size(); ++i) weight_shape_[i] = ctl_tensor_dim(out.get(), i);
    }
    ctl_tensor* w = nullptr;
    CTL_EXPECT_OK(ctl_tensor_from_host(device_, CTL_DTYPE_F64, weight_shape_.size(), weight_shape_.data(),
                                       weights_.data(), weights_.size() * sizeof(double), &w));
    Tensor wt(w);
    Tensor weighted(bin(CTL_OP_MUL, out.get(), w));
    Tensor total(reduce(CTL_OP_SUM, weighted.get(), {}, false));
    const double value = read(total.get())[0];
    if (keep_leaves) *keep_leaves = std::move(owned);
    if (keep_loss) *keep_loss = std::move(total);
    return value;
  }

  // The analytic gradient of every leaf, from ctl_tensor_backward.
  std::vector<std::vector<double>> analytic(const std::vector<Leaf>& leaves, const Build& build) {
    std::vector<Tensor> owned;
    Tensor total;
    loss(leaves, build, true, &owned, &total);
    std::vector<std::vector<double>> grads;
    if (!total) return grads;
    Status s(ctl_tensor_backward(total.get(), nullptr));
    EXPECT_EQ(s, nullptr) << describe(s.get());
    for (auto& t : owned) {
      ctl_tensor* g = nullptr;
      CTL_EXPECT_OK(ctl_tensor_grad(t.get(), &g));
      Tensor gt(g);
      grads.push_back(g ? read(g) : std::vector<double>(static_cast<size_t>(ctl_tensor_numel(t.get())), 0.0));
    }
    return grads;
  }

  // Compares `grads` with central differences; returns the failures in words ("" = pass).
  std::string compare(const std::vector<Leaf>& leaves, const Build& build,
                      const std::vector<std::vector<double>>& grads) {
    bool previous = true;
    CTL_EXPECT_OK(ctl_runtime_set_grad_enabled(runtime_, false, &previous));
    std::string failures;
    const double h = 1e-6;
    for (size_t k = 0; k < leaves.size() && k < grads.size(); ++k) {
      for (size_t j = 0; j < leaves[k].values.size(); ++j) {
        std::vector<Leaf> plus = leaves, minus = leaves;
        plus[k].values[j] += h;
        minus[k].values[j] -= h;
        const double numeric =
            (loss(plus, build, false, nullptr, nullptr) - loss(minus, build, false, nullptr, nullptr)) / (2 * h);
        const double got = grads[k][j];
        if (!(std::fabs(got - numeric) <= 1e-5 * std::max(1.0, std::fabs(numeric)))) {
          failures += "leaf " + std::to_string(k) + " element " + std::to_string(j) + ": backward " +
                      std::to_string(got) + ", finite differences " + std::to_string(numeric) + "\n";
        }
      }
    }
    CTL_EXPECT_OK(ctl_runtime_set_grad_enabled(runtime_, previous, nullptr));
    return failures;
  }

 private:
  ctl_runtime* runtime_;
  ctl_device* device_;
  std::vector<double> weights_;
  std::vector<int64_t> weight_shape_;
};

std::vector<double> values(size_t n, double lo, double hi, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = u(rng);
  return v;
}

Leaf leaf_of(std::vector<int64_t> shape, double lo, double hi, uint64_t seed) {
  size_t n = 1;
  for (int64_t s : shape) n *= static_cast<size_t>(s);
  return {shape, values(n, lo, hi, seed)};
}

// An f64 tensor on `like`'s device that takes no part in gradients (a data batch, a
// mask): values in [0.5, 1.5), varied so that a swapped operand would show.
ctl_tensor* constant_of(ctl_tensor* like, std::vector<int64_t> shape, uint64_t seed) {
  const Leaf l = leaf_of(std::move(shape), 0.5, 1.5, seed);
  ctl_tensor* t = nullptr;
  return must(ctl_tensor_from_host(ctl_tensor_device(like), CTL_DTYPE_F64, l.shape.size(), l.shape.data(),
                                   l.values.data(), l.values.size() * sizeof(double), &t),
              &t, "constant");
}

struct Check {
  std::string name;
  std::vector<Leaf> leaves;
  Build build;
};

// One check per differentiable op and view. Away from kinks: |x| > 0.1 for abs and relu,
// no ties for maximum/minimum/max/min, positive bases for log, sqrt, rsqrt, pow.
std::vector<Check> checks(ctl_device* device) {
  std::vector<Check> c;
  auto unary = [&](ctl_op_id op, double lo, double hi) {
    // A transposed (non-contiguous) input.
    c.push_back({ctl_op_name(op), {leaf_of({3, 4}, lo, hi, op)}, [op](const std::vector<ctl_tensor*>& x) {
                   Scope s;
                   return un(op, s(transposed(x[0])));
                 }});
  };
  for (ctl_op_id op : {CTL_OP_NEG, CTL_OP_EXP, CTL_OP_TANH, CTL_OP_SIGMOID, CTL_OP_GELU, CTL_OP_GELU_TANH, CTL_OP_SILU,
                       CTL_OP_SIN, CTL_OP_COS}) {
    unary(op, -2, 2);
  }
  for (ctl_op_id op : {CTL_OP_LOG, CTL_OP_SQRT, CTL_OP_RSQRT, CTL_OP_RECIPROCAL}) unary(op, 0.5, 2);
  for (ctl_op_id op : {CTL_OP_ABS, CTL_OP_RELU}) {
    c.push_back({ctl_op_name(op),
                 {{{2, 3}, {-1.5, -0.4, 0.3, 0.9, -0.2, 1.7}}},
                 [op](const std::vector<ctl_tensor*>& x) { return un(op, x[0]); }});
  }
  // Binary ops: a is sliced with a step, b broadcasts ([3,1,4] with [2,4]).
  auto binary = [&](ctl_op_id op, double lo, double hi) {
    c.push_back({ctl_op_name(op),
                 {leaf_of({3, 1, 8}, lo, hi, op * 3), leaf_of({2, 4}, lo, hi, op * 5)},
                 [op](const std::vector<ctl_tensor*>& x) {
                   Scope s;
                   ctl_tensor* a = nullptr;
                   EXPECT_EQ(ctl_tensor_slice(x[0], 2, 0, 8, 2, &a), nullptr);
                   s(a);
                   return bin(op, a, x[1]);
                 }});
  };
  for (ctl_op_id op : {CTL_OP_ADD, CTL_OP_SUB, CTL_OP_MUL, CTL_OP_DIV, CTL_OP_MAXIMUM, CTL_OP_MINIMUM}) {
    binary(op, -2, 2);
  }
  binary(CTL_OP_POW, 0.5, 2);
  c.push_back(
      {"where", {leaf_of({2, 3}, -1, 1, 7), leaf_of({3}, -1, 1, 8)}, [device](const std::vector<ctl_tensor*>& x) {
         Scope s;
         const uint8_t cond[] = {1, 0, 1, 0, 0, 1};
         const int64_t shape[] = {2, 3};
         ctl_tensor* c = nullptr;
         EXPECT_EQ(ctl_tensor_from_host(device, CTL_DTYPE_BOOL, 2, shape, cond, sizeof cond, &c), nullptr);
         s(c);
         return run(CTL_OP_WHERE, {c, x[0], x[1]}, nullptr);
       }});
  // Reductions over a permuted input.
  auto reduction = [&](ctl_op_id op, std::vector<int64_t> axes, bool keep) {
    c.push_back({std::string(ctl_op_name(op)) + " axes " + std::to_string(axes.size()),
                 {leaf_of({3, 4, 2}, -2, 2, op * 7 + axes.size())},
                 [op, axes, keep](const std::vector<ctl_tensor*>& x) {
                   Scope s;
                   return reduce(op, s(transposed(x[0])), axes, keep);
                 }});
  };
  for (ctl_op_id op : {CTL_OP_SUM, CTL_OP_MEAN, CTL_OP_MAX, CTL_OP_MIN, CTL_OP_LOGSUMEXP}) {
    reduction(op, {1}, false);
    reduction(op, {0, 2}, true);
  }
  reduction(CTL_OP_SUM, {}, false);
  // matmul: every transpose pair (each has its own gradient products), batch
  // broadcasting, alpha, bias and each activation.
  for (int act = 0; act < 4; ++act) {
    for (int ta = 0; ta < 2; ++ta) {
      for (int tb = 0; tb < 2; ++tb) {
        c.push_back({"matmul act " + std::to_string(act) + (ta ? " transpose_a" : "") + (tb ? " transpose_b" : ""),
                     {leaf_of(ta ? std::vector<int64_t>{2, 4, 3} : std::vector<int64_t>{2, 3, 4}, -1, 1, 40 + act),
                      leaf_of(tb ? std::vector<int64_t>{5, 4} : std::vector<int64_t>{4, 5}, -1, 1, 50 + act),
                      leaf_of({5}, -1, 1, 60 + act)},
                     [act, ta, tb](const std::vector<ctl_tensor*>& x) {
                       ctl_matmul_attrs a{};
                       a.struct_size = CTL_MATMUL_ATTRS_STRUCT_SIZE;
                       a.transpose_a = ta;
                       a.transpose_b = tb;
                       a.alpha = 0.7;
                       a.alpha_set = true;
                       a.activation = static_cast<ctl_activation>(act);
                       return run(CTL_OP_MATMUL, {x[0], x[1], x[2]}, &a);
                     }});
      }
    }
  }
  // A weight that the batch broadcasts: its gradient is one product with the batch folded
  // into the depth (autograd_rules.cpp), here with two batch axes and a b of leading size
  // 1, stored transposed or not; an a whose axes no view can merge (a permutation) takes
  // the products per batch element and their sum instead.
  for (int tb = 0; tb < 2; ++tb) {
    for (int viewable = 0; viewable < 2; ++viewable) {
      c.push_back(
          {std::string("matmul broadcast weight") + (tb ? " transpose_b" : "") + (viewable ? "" : " permuted a"),
           {leaf_of(viewable ? std::vector<int64_t>{2, 2, 3, 4} : std::vector<int64_t>{4, 3, 2}, -1, 1, 70 + tb),
            leaf_of(tb ? std::vector<int64_t>{1, 5, 4} : std::vector<int64_t>{1, 4, 5}, -1, 1, 72 + viewable)},
           [tb, viewable](const std::vector<ctl_tensor*>& x) {
             Scope s;
             ctl_tensor* a = viewable ? x[0] : s(transposed(x[0]));
             ctl_matmul_attrs attrs{};
             attrs.struct_size = CTL_MATMUL_ATTRS_STRUCT_SIZE;
             attrs.transpose_b = tb;
             attrs.alpha = 1.3;
             attrs.alpha_set = true;
             return run(CTL_OP_MATMUL, {a, x[1]}, &attrs);
           }});
    }
  }
  // Inputs that do not track gradients (a data batch, a mask) get none computed; the
  // others' gradients are unchanged by that.
  for (int constant = 0; constant < 2; ++constant) {
    c.push_back({std::string("matmul relu with a constant ") + (constant ? "b" : "a"),
                 {leaf_of({3, 4}, -1, 1, 64 + constant)},
                 [constant](const std::vector<ctl_tensor*>& x) {
                   Scope s;
                   ctl_tensor* k = s(constant_of(x[0], {4, 3}, 90 + constant));
                   ctl_matmul_attrs a{};
                   a.struct_size = CTL_MATMUL_ATTRS_STRUCT_SIZE;
                   a.activation = CTL_ACTIVATION_RELU;
                   return constant ? run(CTL_OP_MATMUL, {x[0], k}, &a) : run(CTL_OP_MATMUL, {k, x[0]}, &a);
                 }});
  }
  for (ctl_op_id op : {CTL_OP_MUL, CTL_OP_DIV, CTL_OP_POW, CTL_OP_MAXIMUM}) {
    c.push_back({std::string(ctl_op_name(op)) + " with a constant operand",
                 {leaf_of({3, 4}, 0.5, 2, 66 + op)},
                 [op](const std::vector<ctl_tensor*>& x) {
                   Scope s;
                   ctl_tensor* k = s(constant_of(x[0], {4}, 92 + op));
                   ctl_tensor* ab = s(bin(op, x[0], k));
                   return bin(op, k, ab);
                 }});
  }
  for (ctl_op_id op : {CTL_OP_SOFTMAX, CTL_OP_LOG_SOFTMAX}) {
    c.push_back({ctl_op_name(op), {leaf_of({3, 5}, -2, 2, op)}, [op](const std::vector<ctl_tensor*>& x) {
                   Scope s;
                   ctl_axis_attrs a{CTL_AXIS_ATTRS_STRUCT_SIZE, 0};
                   return run(op, {s(transposed(x[0]))}, &a);
                 }});
  }
  c.push_back({"layer_norm",
               {leaf_of({3, 6}, -2, 2, 70), leaf_of({6}, 0.5, 1.5, 71), leaf_of({6}, -1, 1, 72)},
               [](const std::vector<ctl_tensor*>& x) {
                 ctl_norm_attrs a{CTL_NORM_ATTRS_STRUCT_SIZE, 1e-5};
                 return run(CTL_OP_LAYER_NORM, {x[0], x[1], x[2]}, &a);
               }});
  c.push_back(
      {"rms_norm", {leaf_of({6, 3}, -2, 2, 73), leaf_of({6}, 0.5, 1.5, 74)}, [](const std::vector<ctl_tensor*>& x) {
         Scope s;
         ctl_norm_attrs a{CTL_NORM_ATTRS_STRUCT_SIZE, 1e-5};
         return run(CTL_OP_RMS_NORM, {s(transposed(x[0])), x[1]}, &a);
       }});
  c.push_back({"copy of a transposed view", {leaf_of({3, 4}, -1, 1, 80)}, [](const std::vector<ctl_tensor*>& x) {
                 Scope s;
                 ctl_tensor* t = nullptr;
                 EXPECT_EQ(ctl_tensor_contiguous(s(transposed(x[0])), &t), nullptr);
                 return t;
               }});
  c.push_back({"cast f64 to f64", {leaf_of({4}, -1, 1, 81)}, [](const std::vector<ctl_tensor*>& x) {
                 ctl_cast_attrs a{CTL_CAST_ATTRS_STRUCT_SIZE, CTL_DTYPE_F64};
                 return run(CTL_OP_CAST, {x[0]}, &a);
               }});
  c.push_back(
      {"concat", {leaf_of({2, 3}, -1, 1, 82), leaf_of({2, 2}, -1, 1, 83)}, [](const std::vector<ctl_tensor*>& x) {
         ctl_axis_attrs a{CTL_AXIS_ATTRS_STRUCT_SIZE, 1};
         return run(CTL_OP_CONCAT, {x[0], x[1]}, &a);
       }});
  c.push_back({"gather (embedding)", {leaf_of({5, 3}, -1, 1, 84)}, [device](const std::vector<ctl_tensor*>& x) {
                 Scope s;
                 const int64_t idx[] = {4, 0, 4, 2};
                 const int64_t shape[] = {4};
                 ctl_tensor* i = nullptr;
                 EXPECT_EQ(ctl_tensor_from_host(device, CTL_DTYPE_I64, 1, shape, idx, sizeof idx, &i), nullptr);
                 s(i);
                 ctl_axis_attrs a{CTL_AXIS_ATTRS_STRUCT_SIZE, 0};
                 return run(CTL_OP_GATHER, {x[0], i}, &a);
               }});
  c.push_back({"scatter_add",
               {leaf_of({4, 2}, -1, 1, 85), leaf_of({3, 2}, -1, 1, 86)},
               [device](const std::vector<ctl_tensor*>& x) {
                 Scope s;
                 const int64_t idx[] = {1, 3, 1};
                 const int64_t shape[] = {3};
                 ctl_tensor* i = nullptr;
                 EXPECT_EQ(ctl_tensor_from_host(device, CTL_DTYPE_I64, 1, shape, idx, sizeof idx, &i), nullptr);
                 s(i);
                 ctl_axis_attrs a{CTL_AXIS_ATTRS_STRUCT_SIZE, 0};
                 return run(CTL_OP_SCATTER_ADD, {x[0], i, x[1]}, &a);
               }});
  for (int reduction = 0; reduction < 3; ++reduction) {
    c.push_back({"cross_entropy reduction " + std::to_string(reduction),
                 {leaf_of({4, 5}, -2, 2, 90 + reduction)},
                 [device, reduction](const std::vector<ctl_tensor*>& x) {
                   Scope s;
                   const int64_t target[] = {3, -1, 0, 4};  // -1 is ignored
                   const int64_t shape[] = {4};
                   ctl_tensor* t = nullptr;
                   EXPECT_EQ(ctl_tensor_from_host(device, CTL_DTYPE_I64, 1, shape, target, sizeof target, &t), nullptr);
                   s(t);
                   ctl_cross_entropy_attrs a{};
                   a.struct_size = CTL_CROSS_ENTROPY_ATTRS_STRUCT_SIZE;
                   a.reduction = static_cast<ctl_reduction>(reduction);
                   a.ignore_index = -1;
                   a.ignore_index_set = true;
                   return run(CTL_OP_CROSS_ENTROPY, {x[0], t}, &a);
                 }});
  }
  // Convolution (stride, padding, dilation, groups, bias) on a transposed input, and pooling
  // with overlapping windows and padding. Distinct input values keep each max unique.
  for (int variant = 0; variant < 2; ++variant) {
    c.push_back({"conv2d variant " + std::to_string(variant),
                 {leaf_of({2, 4, 5, 6}, -1, 1, 100 + variant),
                  leaf_of({6, variant ? 2 : 4, 3, 2}, -1, 1, 110 + variant), leaf_of({6}, -1, 1, 120 + variant)},
                 [variant](const std::vector<ctl_tensor*>& x) {
                   Scope s;
                   ctl_conv2d_attrs a{};
                   a.struct_size = CTL_CONV2D_ATTRS_STRUCT_SIZE;
                   if (variant) {
                     a.stride[0] = 2;
                     a.padding[0] = a.padding[1] = 1;
                     a.dilation[1] = 2;
                     a.groups = 2;
                   }
                   // x as the transpose of a transposed copy: a non-contiguous view of the leaf.
                   ctl_tensor* xt = nullptr;
                   EXPECT_EQ(ctl_tensor_transpose(x[0], 2, 3, &xt), nullptr);
                   s(xt);
                   ctl_tensor* xc = nullptr;
                   EXPECT_EQ(ctl_tensor_contiguous(xt, &xc), nullptr);
                   s(xc);
                   ctl_tensor* back = nullptr;
                   EXPECT_EQ(ctl_tensor_transpose(xc, 2, 3, &back), nullptr);
                   s(back);
                   return run(CTL_OP_CONV2D, {back, x[1], x[2]}, &a);
                 }});
  }
  for (ctl_op_id op : {CTL_OP_MAX_POOL2D, CTL_OP_AVG_POOL2D}) {
    for (int exclude = 0; exclude < 2; ++exclude) {
      Leaf l{{1, 2, 5, 5}, {}};
      for (int i = 0; i < 50; ++i) l.values.push_back(std::sin(1.7 * i) + 0.01 * i);  // distinct values
      c.push_back({std::string(ctl_op_name(op)) + (exclude ? " exclude_padding" : ""),
                   {l},
                   [op, exclude](const std::vector<ctl_tensor*>& x) {
                     ctl_pool2d_attrs a{};
                     a.struct_size = CTL_POOL2D_ATTRS_STRUCT_SIZE;
                     a.kernel[0] = a.kernel[1] = 3;
                     a.stride[0] = a.stride[1] = 1;
                     a.padding[0] = a.padding[1] = 1;
                     a.exclude_padding = exclude;
                     return run(op, {x[0]}, &a);
                   }});
    }
  }
  // Views: reshape, permute, slice with a step, expand, chained.
  c.push_back(
      {"views: reshape, permute, slice, expand", {leaf_of({2, 6}, -1, 1, 95)}, [](const std::vector<ctl_tensor*>& x) {
         Scope s;
         ctl_tensor *r = nullptr, *p = nullptr, *sl = nullptr, *e = nullptr;
         const int64_t shape[] = {3, 2, 2};
         EXPECT_EQ(ctl_tensor_reshape(x[0], 3, shape, &r), nullptr);
         s(r);
         const int64_t perm[] = {2, 0, 1};
         EXPECT_EQ(ctl_tensor_permute(r, 3, perm, &p), nullptr);
         s(p);
         EXPECT_EQ(ctl_tensor_slice(p, 1, 0, 3, 2, &sl), nullptr);  // [2,2,2]
         s(sl);
         const int64_t big[] = {3, 2, 2, 2};
         EXPECT_EQ(ctl_tensor_expand(sl, 4, big, &e), nullptr);
         s(e);
         return un(CTL_OP_SIN, e);
       }});
  // A leaf used twice (gradients add up) and a longer chain.
  c.push_back({"x * x + exp(x) (a leaf used twice)", {leaf_of({5}, -1, 1, 96)}, [](const std::vector<ctl_tensor*>& x) {
                 Scope s;
                 ctl_tensor* sq = s(bin(CTL_OP_MUL, x[0], x[0]));
                 ctl_tensor* e = s(un(CTL_OP_EXP, x[0]));
                 return bin(CTL_OP_ADD, sq, e);
               }});
  return c;
}

class Autograd : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    const bool reference = std::string(GetParam()) == "reference";
    std::vector<const char*> paths;
    if (!reference) paths.push_back(CTL_TEST_CPU_PLUGIN);
    ctl_runtime_options o = options(&paths, nullptr, reference);
    ctl_runtime* r = nullptr;
    CTL_ASSERT_OK(ctl_runtime_create(&o, &r));
    runtime_.reset(r);
    device_ = find_device(r, GetParam());
    ASSERT_NE(device_, nullptr);
  }
  Runtime runtime_;
  ctl_device* device_ = nullptr;
};

TEST_P(Autograd, EveryDifferentiableOpMatchesFiniteDifferences) {
  for (const Check& check : checks(device_)) {
    SCOPED_TRACE(check.name);
    Gradcheck g(runtime_.get(), device_);
    const auto grads = g.analytic(check.leaves, check.build);
    ASSERT_EQ(grads.size(), check.leaves.size());
    EXPECT_EQ(g.compare(check.leaves, check.build, grads), "") << check.name;
  }
}

// The checker is not blind: a wrong formula for sigmoid's derivative (y instead of
// y (1 - y)) is reported.
TEST_P(Autograd, TheCheckerCatchesAWrongFormula) {
  Gradcheck g(runtime_.get(), device_);
  std::vector<Leaf> leaves = {leaf_of({6}, -2, 2, 5)};
  Build build = [](const std::vector<ctl_tensor*>& x) { return un(CTL_OP_SIGMOID, x[0]); };
  auto grads = g.analytic(leaves, build);
  ASSERT_EQ(g.compare(leaves, build, grads), "");
  // Replace the gradient by the wrong formula's: w * y.
  std::vector<double> w(6);
  {
    std::mt19937_64 rng(99);
    std::uniform_real_distribution<double> u(-1, 1);
    for (double& v : w) v = u(rng);
  }
  for (size_t j = 0; j < 6; ++j) grads[0][j] = w[j] / (1 + std::exp(-leaves[0].values[j]));
  EXPECT_NE(g.compare(leaves, build, grads), "");
}

TEST_P(Autograd, GradientsAccumulateUntilZeroed) {
  Gradcheck g(runtime_.get(), device_);
  const Leaf l{{3}, {1, 2, 3}};
  Tensor x(g.leaf(l, true));
  for (int pass = 0; pass < 2; ++pass) {
    Tensor y(bin(CTL_OP_MUL, x.get(), x.get()));
    Tensor s(reduce(CTL_OP_SUM, y.get(), {}, false));
    CTL_ASSERT_OK(ctl_tensor_backward(s.get(), nullptr));
  }
  ctl_tensor* grad = nullptr;
  CTL_ASSERT_OK(ctl_tensor_grad(x.get(), &grad));
  Tensor gt(grad);
  EXPECT_EQ(read(grad), (std::vector<double>{4, 8, 12}));  // 2 * 2x
  CTL_ASSERT_OK(ctl_tensor_zero_grad(x.get()));
  ctl_tensor* none = nullptr;
  CTL_ASSERT_OK(ctl_tensor_grad(x.get(), &none));
  EXPECT_EQ(none, nullptr);
}

TEST_P(Autograd, NoGradModeAndDetachStopRecording) {
  Gradcheck g(runtime_.get(), device_);
  Tensor x(g.leaf({{2}, {1, 2}}, true));
  Tensor y(un(CTL_OP_EXP, x.get()));
  EXPECT_TRUE(ctl_tensor_requires_grad(y.get()));
  bool previous = false;
  CTL_ASSERT_OK(ctl_runtime_set_grad_enabled(runtime_.get(), false, &previous));
  EXPECT_TRUE(previous);
  Tensor z(un(CTL_OP_EXP, x.get()));
  EXPECT_FALSE(ctl_tensor_requires_grad(z.get()));
  CTL_ASSERT_OK(ctl_runtime_set_grad_enabled(runtime_.get(), true, nullptr));
  ctl_tensor* d = nullptr;
  CTL_ASSERT_OK(ctl_tensor_detach(y.get(), &d));
  Tensor dt(d);
  EXPECT_FALSE(ctl_tensor_requires_grad(d));
  Tensor w(un(CTL_OP_EXP, d));
  EXPECT_FALSE(ctl_tensor_requires_grad(w.get()));
}

TEST_P(Autograd, BadCallsGetClearErrors) {
  Gradcheck g(runtime_.get(), device_);
  Tensor x(g.leaf({{2}, {1, 2}}, false));
  // Backward from a tensor outside the record.
  Status s1(ctl_tensor_backward(x.get(), nullptr));
  ASSERT_NE(s1, nullptr);
  EXPECT_NE(std::string(ctl_status_get_message(s1.get())).find("does not require gradients"), std::string::npos);
  CTL_ASSERT_OK(ctl_tensor_set_requires_grad(x.get(), true));
  Tensor y(un(CTL_OP_EXP, x.get()));
  // A non-scalar without grad_output.
  Status s2(ctl_tensor_backward(y.get(), nullptr));
  ASSERT_NE(s2, nullptr);
  EXPECT_EQ(ctl_status_get_code(s2.get()), CTL_STATUS_INVALID_ARGUMENT);
  // requires_grad on a non-leaf, and on an integer tensor.
  Status s3(ctl_tensor_set_requires_grad(y.get(), true));
  EXPECT_NE(s3, nullptr);
  const int32_t ints[] = {1, 2};
  const int64_t shape[] = {2};
  ctl_tensor* it = nullptr;
  CTL_ASSERT_OK(ctl_tensor_from_host(device_, CTL_DTYPE_I32, 1, shape, ints, sizeof ints, &it));
  Tensor owner(it);
  Status s4(ctl_tensor_set_requires_grad(it, true));
  EXPECT_NE(s4, nullptr);
  // A grad_output of the wrong shape.
  Tensor wrong(g.leaf({{3}, {1, 2, 3}}, false));
  Status s5(ctl_tensor_backward(y.get(), wrong.get()));
  EXPECT_NE(s5, nullptr);
}

INSTANTIATE_TEST_SUITE_P(Devices, Autograd, ::testing::Values("reference", "cpu"));

}  // namespace
