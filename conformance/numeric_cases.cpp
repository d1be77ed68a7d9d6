// numeric_cases.cpp — the numeric cases: every op of the op set in every dtype docs/ops.md
// allows it, each variant one case (one op call) compared with the reference kernels.
//
// Per op and dtype there are fixed variants (shapes chosen to hit the edges: rank 0, empty
// tensors, broadcasting, each input layout, odd sizes past vector widths, specials such as
// NaN, ±inf, ±0 and subnormals where they mean something), random variants (rank 0 to 6,
// random broadcasting and views, drawn from the case's own seed), and, per op family, one
// large f32 case of at least 2^24 elements. Which dtypes an op takes comes from
// docs/ops.md; a plugin is judged only on the dtypes and calls it claims (harness).
#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <sstream>

#include "case.h"
#include "catalog.h"
#include "numeric_harness.h"

namespace catalyst::conformance {
namespace {

constexpr int64_t kLarge = 4096;  // kLarge^2 = 2^24 elements


// A random shape of `rank` with small dims (rarely 0), and a broadcast partner of it:
// leading axes dropped and some axes set to 1.
std::vector<int64_t> random_shape(std::mt19937_64& rng, size_t rank) {
  std::vector<int64_t> s(rank);
  for (auto& d : s) d = (rng() % 16 == 0) ? 0 : 1 + static_cast<int64_t>(rng() % 5);
  return s;
}
std::vector<int64_t> broadcast_partner(std::mt19937_64& rng, const std::vector<int64_t>& s) {
  const size_t drop = s.empty() ? 0 : rng() % (s.size() + 1);
  std::vector<int64_t> p(s.begin() + static_cast<std::ptrdiff_t>(drop), s.end());
  for (auto& d : p) {
    if (rng() % 3 == 0) d = 1;
  }
  return p;
}

// Shapes of one element count (48) whose last axis differs: a "same_count" case calls its op
// on each in turn, in one worker, so a plugin that keys a cached plan (a row length, a tile
// count) by element count rather than by shape gets a call whose plan does not fit it.
const std::vector<std::vector<int64_t>> kSameCount = {{4, 12}, {12, 4}, {6, 8}, {48}, {2, 3, 8}, {3, 16}};
const std::string kSameCountLabel = "one element count, rows of 12, 4, 8, 48, 8 and 16 in turn";

// ---- elementwise ------------------------------------------------------------------------

Tol unary_tol(ctl_op_id op) {
  switch (op) {
    case CTL_OP_NEG:
    case CTL_OP_ABS:
    case CTL_OP_RELU:
      return Tol::kExact;
    case CTL_OP_SQRT:
    case CTL_OP_RECIPROCAL:
      return Tol::kArith;
    default:
      return Tol::kTranscendental;
  }
}

void unary_cases(Catalog& cat, ctl_op_id op, ctl_dtype d) {
  const Values kind =
      (op == CTL_OP_LOG || op == CTL_OP_SQRT || op == CTL_OP_RSQRT) ? Values::kPositive : Values::kGeneral;
  const std::vector<std::pair<Shaped, OutputLayout>> fixed = {
      {{{3, 5}, Layout::kContiguous}, OutputLayout::kContiguous},
      {{{4, 6}, Layout::kPermuted}, OutputLayout::kContiguous},
      {{{3, 4}, Layout::kSliced}, OutputLayout::kTransposed},
      {{{3, 5}, Layout::kExpanded}, OutputLayout::kContiguous},
      {{{}, Layout::kContiguous}, OutputLayout::kContiguous},
      {{{0, 3}, Layout::kContiguous}, OutputLayout::kContiguous},
      {{{2, 3, 4}, Layout::kPermuted}, OutputLayout::kGapped},
      {{{257}, Layout::kContiguous}, OutputLayout::kContiguous},
      {{{1031}, Layout::kContiguous}, OutputLayout::kGapped},
  };
  const Tol tol = unary_tol(op);
  for (const auto& [s, out] : fixed) {
    // Structured bindings are copied by name: Clang 14 cannot capture them implicitly.
    cat.add(op, d, shaped_label({s}), [=, s = s, out = out](Harness& h) {
      Operand x = h.input(d, s.shape, s.layout, kind);
      h.run(op, {&x}, nullptr, 1, {tol}, out);
    });
  }
  if (kind == Values::kPositive) {
    cat.add(op, d, "[4,4] with negatives (NaN positions)", [=](Harness& h) {
      Operand x = h.input(d, {4, 4}, Layout::kContiguous, Values::kGeneral);
      h.run(op, {&x}, nullptr, 1, {tol});
    });
  }
  for (int k = 0; k < 3; ++k) {
    cat.add(op, d, "random rank 0-6 shape and view", [=](Harness& h) {
      auto& rng = h.context().rng;
      const auto shape = random_shape(rng, rng() % 7);
      Operand x = h.input(d, shape, Layout::kRandom, kind);
      h.run(op, {&x}, nullptr, 1, {tol}, static_cast<OutputLayout>(rng() % 3));
    });
  }
}

void binary_cases(Catalog& cat, ctl_op_id op, ctl_dtype d) {
  const bool comparison = op >= CTL_OP_EQ && op <= CTL_OP_GE;
  Tol tol = Tol::kExact;
  if (op == CTL_OP_ADD || op == CTL_OP_SUB || op == CTL_OP_MUL || op == CTL_OP_DIV) tol = Tol::kArith;
  if (op == CTL_OP_POW) tol = Tol::kTranscendental;
  if (comparison) tol = Tol::kExact;
  const Values kind = op == CTL_OP_POW ? Values::kSmallInt : Values::kGeneral;
  const std::vector<std::pair<Shaped, Shaped>> fixed = {
      {{{3, 4}, Layout::kContiguous}, {{3, 4}, Layout::kContiguous}},
      {{{3, 4}, Layout::kPermuted}, {{4}, Layout::kContiguous}},
      {{{2, 1, 4}, Layout::kSliced}, {{3, 1}, Layout::kContiguous}},
      {{{3, 4}, Layout::kExpanded}, {{3, 4}, Layout::kPermuted}},
      {{{}, Layout::kContiguous}, {{5}, Layout::kSliced}},
      {{{0, 4}, Layout::kContiguous}, {{4}, Layout::kContiguous}},
      {{{2, 3}, Layout::kContiguous}, {{}, Layout::kContiguous}},
      {{{300}, Layout::kContiguous}, {{300}, Layout::kContiguous}},
      {{{2, 3, 4, 5}, Layout::kPermuted}, {{3, 1, 5}, Layout::kSliced}},
  };
  int variant = 0;
  for (const auto& [sa, sb] : fixed) {
    const OutputLayout out = static_cast<OutputLayout>(variant++ % 3);
    cat.add(op, d, shaped_label({sa, sb}), [=, sa = sa, sb = sb](Harness& h) {
      Operand a = h.input(d, sa.shape, sa.layout, kind);
      Operand b = h.input(d, sb.shape, sb.layout, kind);
      h.run(op, {&a, &b}, nullptr, 1, {tol}, out);
    });
  }
  cat.add(op, d, "x op x (ties, equal operands)", [=](Harness& h) {
    Operand a = h.input(d, {4, 5}, Layout::kContiguous, kind);
    h.run(op, {&a, &a}, nullptr, 1, {tol});
  });
  if (is_float(d)) {
    cat.add(op, d, "signed zeros", [=](Harness& h) {
      Operand z1 = h.input_from(d, {4}, {0.0, -0.0, 0.0, -0.0});
      Operand z2 = h.input_from(d, {4}, {0.0, 0.0, -0.0, -0.0});
      h.run(op, {&z1, &z2}, nullptr, 1, {comparison ? Tol::kExact : (tol == Tol::kTranscendental ? tol : Tol::kArith)});
    });
    cat.add(op, d, "specials against specials (NaN, ±inf, ±0, subnormals)", [=](Harness& h) {
      const double sub = smallest_subnormal(d);
      const std::vector<double> v = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1.0, -2.5, sub, -3 * sub};
      std::vector<double> a, b;
      for (double x : v) {
        for (double y : v) a.push_back(x), b.push_back(y);
      }
      Operand oa = h.input_from(d, {9, 9}, a);
      Operand ob = h.input_from(d, {9, 9}, b);
      h.run(op, {&oa, &ob}, nullptr, 1, {tol});
    });
  }
  for (int k = 0; k < 4; ++k) {
    cat.add(op, d, "random rank 0-6 shapes with broadcasting and views", [=](Harness& h) {
      auto& rng = h.context().rng;
      auto sa = random_shape(rng, rng() % 7);
      auto sb = broadcast_partner(rng, sa);
      if (rng() % 2) std::swap(sa, sb);
      Operand a = h.input(d, sa, Layout::kRandom, kind);
      Operand b = h.input(d, sb, Layout::kRandom, kind);
      h.run(op, {&a, &b}, nullptr, 1, {tol}, static_cast<OutputLayout>(rng() % 3));
    });
  }
}

void where_cases(Catalog& cat, ctl_dtype d) {
  const std::vector<std::array<Shaped, 3>> fixed = {
      {{{{3, 1}, Layout::kContiguous}, {{1, 4}, Layout::kContiguous}, {{3, 4}, Layout::kPermuted}}},
      {{{{4, 3}, Layout::kSliced}, {{4, 3}, Layout::kExpanded}, {{4, 3}, Layout::kContiguous}}},
      {{{{}, Layout::kContiguous}, {{2, 3}, Layout::kContiguous}, {{3}, Layout::kContiguous}}},
      {{{{0, 2}, Layout::kContiguous}, {{2}, Layout::kContiguous}, {{1}, Layout::kContiguous}}},
      // A dense condition with one branch a scalar: ReLU's gradient, where(x > 0, g, 0).
      {{{{5, 37}, Layout::kContiguous}, {{5, 37}, Layout::kContiguous}, {{}, Layout::kContiguous}}},
      {{{{5, 37}, Layout::kContiguous}, {{}, Layout::kContiguous}, {{5, 37}, Layout::kContiguous}}},
  };
  for (const auto& s : fixed) {
    cat.add(CTL_OP_WHERE, {d, CTL_DTYPE_BOOL}, shaped_label({s[0], s[1], s[2]}), [=](Harness& h) {
      Operand c = h.input(CTL_DTYPE_BOOL, s[0].shape, s[0].layout, Values::kGeneral);
      Operand a = h.input(d, s[1].shape, s[1].layout, Values::kGeneral);
      Operand b = h.input(d, s[2].shape, s[2].layout, Values::kGeneral);
      h.run(CTL_OP_WHERE, {&c, &a, &b}, nullptr, 1, {Tol::kExact}, OutputLayout::kTransposed);
    });
  }
  for (int k = 0; k < 3; ++k) {
    cat.add(CTL_OP_WHERE, {d, CTL_DTYPE_BOOL}, "random rank 0-6 shapes with broadcasting and views", [=](Harness& h) {
      auto& rng = h.context().rng;
      const auto s = random_shape(rng, rng() % 7);
      Operand c = h.input(CTL_DTYPE_BOOL, broadcast_partner(rng, s), Layout::kRandom, Values::kGeneral);
      Operand a = h.input(d, s, Layout::kRandom, Values::kGeneral);
      Operand b = h.input(d, broadcast_partner(rng, s), Layout::kRandom, Values::kGeneral);
      h.run(CTL_OP_WHERE, {&c, &a, &b}, nullptr, 1, {Tol::kExact}, static_cast<OutputLayout>(rng() % 3));
    });
  }
}

// ---- reductions ---------------------------------------------------------------------------

ctl_reduce_attrs reduce_attrs(const std::vector<int32_t>& axes, bool keepdims) {
  ctl_reduce_attrs a{};
  a.struct_size = CTL_REDUCE_ATTRS_STRUCT_SIZE;
  a.axis_count = static_cast<uint32_t>(axes.size());
  for (size_t i = 0; i < axes.size(); ++i) a.axes[i] = axes[i];
  a.keepdims = keepdims;
  return a;
}

}  // namespace

// Runs one reduction with the tolerance its op needs.
void run_reduce(Harness& h, ctl_op_id op, ctl_dtype d, const Operand& x, const std::vector<int64_t>& shape,
                const std::vector<int32_t>& axes, bool keepdims) {
  const ctl_reduce_attrs attrs = reduce_attrs(axes, keepdims);
  Tolerance tol;
  double n = 1;
  if (axes.empty()) {
    for (int64_t s : shape) n *= static_cast<double>(s);
  } else {
    for (int32_t a : axes) n *= static_cast<double>(shape[a < 0 ? a + static_cast<int32_t>(shape.size()) : a]);
  }
  tol.n = n;
  if (is_float(d) && (op == CTL_OP_SUM || op == CTL_OP_MEAN)) {
    // S: the same reduction of |x|, on the reference.
    tol.kind = Tol::kSum;
    TensorPtr abs_x = h.reference_abs(x);
    tol.scale = h.reference_values(op, {abs_x.get()}, &attrs);
  } else if (op == CTL_OP_LOGSUMEXP) {
    tol.kind = Tol::kRowNorm;
  }
  h.run(op, {&x}, &attrs, 1, {tol});
}

namespace {

void reduce_cases(Catalog& cat, ctl_op_id op, ctl_dtype d) {
  const bool arg = op == CTL_OP_ARGMAX || op == CTL_OP_ARGMIN;
  const bool needs_values = arg || op == CTL_OP_MAX || op == CTL_OP_MIN;
  struct Fixed {
    Shaped x;
    std::vector<int32_t> axes;
    bool keepdims;
  };
  std::vector<Fixed> fixed = {
      {{{4, 5, 6}, Layout::kContiguous}, {1}, false}, {{{4, 5, 6}, Layout::kContiguous}, {-1}, true},
      {{{5, 6}, Layout::kPermuted}, {0}, false},      {{{6, 4}, Layout::kSliced}, {1}, true},
      {{{3, 4}, Layout::kExpanded}, {0}, false},      {{{2, 3, 4}, Layout::kPermuted}, {2}, false},
      {{{4, 0}, Layout::kContiguous}, {0}, false},    {{{1000}, Layout::kContiguous}, {0}, false},
      {{{3, 517}, Layout::kContiguous}, {1}, false},
  };
  if (!arg) {
    fixed.push_back({{{4, 5, 6}, Layout::kContiguous}, {}, false});
    fixed.push_back({{{4, 5, 6}, Layout::kPermuted}, {0, 2}, true});
    fixed.push_back({{{}, Layout::kContiguous}, {}, false});
    fixed.push_back({{{2, 3, 2, 3, 2, 3}, Layout::kSliced}, {5, 1, 3}, false});
    if (!needs_values) fixed.push_back({{{0, 5}, Layout::kContiguous}, {0}, false});
  }
  const Values kind = needs_values ? Values::kGeneral : Values::kFinite;
  for (const auto& f : fixed) {
    std::string label = shaped_label({f.x}) + " axes {";
    for (size_t i = 0; i < f.axes.size(); ++i) label += (i ? "," : "") + std::to_string(f.axes[i]);
    label += f.keepdims ? "} keepdims" : "}";
    cat.add(op, d, label, [=](Harness& h) {
      Operand x = h.input(d, f.x.shape, f.x.layout, kind);
      run_reduce(h, op, d, x, f.x.shape, f.axes, f.keepdims);
    });
  }
  if (is_float(d) && needs_values) {
    cat.add(op, d, "NaN wins, ties take the first index, ±0, ±inf along axis 1", [=](Harness& h) {
      Operand x = h.input_from(
          d, {4, 4},
          {1, NAN, 3, NAN, -INFINITY, -INFINITY, 2, 2, 0.0, -0.0, INFINITY, -0.0, -0.0, 0.0, -0.0, -INFINITY});
      run_reduce(h, op, d, x, {4, 4}, {1}, false);
    });
  }
  for (int k = 0; k < 3; ++k) {
    cat.add(op, d, "random rank 1-6 shape, view and axes", [=](Harness& h) {
      auto& rng = h.context().rng;
      auto shape = random_shape(rng, 1 + rng() % 6);
      if (needs_values) {
        for (auto& s : shape) s = std::max<int64_t>(s, 1);  // max/min/arg of nothing is an error
      }
      std::vector<int32_t> axes;
      if (arg) {
        axes.push_back(static_cast<int32_t>(rng() % shape.size()));
      } else {
        for (size_t a = 0; a < shape.size(); ++a) {
          if (rng() % 2) axes.push_back(static_cast<int32_t>(a));
        }
        if (axes.empty()) axes.push_back(static_cast<int32_t>(shape.size() - 1));
      }
      Operand x = h.input(d, shape, Layout::kRandom, kind);
      run_reduce(h, op, d, x, shape, axes, rng() % 2);
    });
  }
  cat.add_named(op, {d}, "same_count", kSameCountLabel + ", along the last axis", [=](Harness& h) {
    for (const auto& shape : kSameCount) {
      Operand x = h.input(d, shape, Layout::kContiguous, kind);
      run_reduce(h, op, d, x, shape, {-1}, false);
    }
  });
}

// ---- matmul -----------------------------------------------------------------------------

struct MatmulVariant {
  Shaped a, b;
  bool bias, ta, tb;
  double alpha;
  ctl_activation act;
};

void run_matmul(Harness& h, ctl_dtype d, const MatmulVariant& c, OutputLayout out) {
  Operand a = h.input(d, c.a.shape, c.a.layout, Values::kFinite);
  Operand b = h.input(d, c.b.shape, c.b.layout, Values::kFinite);
  const double alpha = is_float(d) ? c.alpha : std::round(c.alpha * 4);  // integers need a whole alpha
  const int64_t n = c.tb ? c.b.shape[c.b.shape.size() - 2] : c.b.shape.back();
  const int64_t k = c.ta ? c.a.shape[c.a.shape.size() - 2] : c.a.shape.back();
  Operand bias = h.input(d, {n}, Layout::kContiguous, Values::kFinite);
  ctl_matmul_attrs attrs{};
  attrs.struct_size = CTL_MATMUL_ATTRS_STRUCT_SIZE;
  attrs.transpose_a = c.ta;
  attrs.transpose_b = c.tb;
  attrs.alpha = alpha;
  attrs.alpha_set = true;
  attrs.activation = c.act;
  std::vector<const Operand*> ins = {&a, &b};
  if (c.bias) ins.push_back(&bias);
  Tolerance tol;
  if (is_float(d)) {
    // S = |alpha| |a| @ |b| + |bias| on the reference, before the activation (which does
    // not grow magnitudes much: gelu' <= 1.13, plus its own rounding).
    tol.kind = Tol::kSum;
    tol.n = static_cast<double>(k) + 4;
    ctl_matmul_attrs abs_attrs = attrs;
    abs_attrs.alpha = std::fabs(alpha);
    abs_attrs.activation = CTL_ACTIVATION_NONE;
    tol.scale = h.reference_abs_values(CTL_OP_MATMUL, ins, {}, &abs_attrs);
    if (c.act != CTL_ACTIVATION_NONE) {
      for (double& v : tol.scale) v = 1.2 * v + 8;
    }
  }
  h.run(CTL_OP_MATMUL, ins, &attrs, 1, {tol}, out);
}

void matmul_cases(Catalog& cat, ctl_dtype d) {
  using L = Layout;
  std::vector<MatmulVariant> fixed = {
      {{{3, 4}, L::kContiguous}, {{4, 5}, L::kContiguous}, false, false, false, 1, CTL_ACTIVATION_NONE},
      {{{2, 3, 4}, L::kContiguous}, {{4, 5}, L::kPermuted}, true, false, false, 1, CTL_ACTIVATION_NONE},
      {{{4, 3}, L::kPermuted}, {{5, 4}, L::kSliced}, false, true, true, 0.5, CTL_ACTIVATION_NONE},
      {{{2, 1, 3, 8}, L::kContiguous}, {{3, 8, 2}, L::kContiguous}, true, false, false, 1, CTL_ACTIVATION_NONE},
      {{{3, 0}, L::kContiguous}, {{0, 4}, L::kContiguous}, true, false, false, 1, CTL_ACTIVATION_NONE},
      {{{0, 3}, L::kContiguous}, {{3, 4}, L::kContiguous}, false, false, false, 1, CTL_ACTIVATION_NONE},
      {{{17, 33}, L::kContiguous}, {{33, 65}, L::kContiguous}, true, false, false, 1, CTL_ACTIVATION_NONE},
      {{{3, 4}, L::kExpanded}, {{4, 5}, L::kContiguous}, false, false, false, 1, CTL_ACTIVATION_NONE},
      {{{70, 129}, L::kPermuted}, {{67, 129}, L::kContiguous}, true, false, true, 1, CTL_ACTIVATION_NONE},
      {{{1, 1}, L::kContiguous}, {{1, 1}, L::kContiguous}, false, false, false, 1, CTL_ACTIVATION_NONE},
  };
  if (is_float(d)) {
    fixed.push_back({{{6, 7}, L::kContiguous}, {{7, 5}, L::kContiguous}, true, false, false, 1, CTL_ACTIVATION_RELU});
    fixed.push_back({{{6, 7}, L::kContiguous}, {{7, 5}, L::kContiguous}, true, false, false, 2, CTL_ACTIVATION_GELU});
    fixed.push_back(
        {{{6, 7}, L::kContiguous}, {{7, 5}, L::kContiguous}, false, false, false, 1, CTL_ACTIVATION_GELU_TANH});
  }
  int variant = 0;
  for (const auto& c : fixed) {
    std::ostringstream label;
    label << shaped_label({c.a, c.b}) << (c.bias ? " +bias" : "") << (c.ta ? " transpose_a" : "")
          << (c.tb ? " transpose_b" : "") << " alpha " << c.alpha << " activation " << static_cast<int>(c.act);
    const OutputLayout out = static_cast<OutputLayout>(variant++ % 3);
    cat.add(CTL_OP_MATMUL, d, label.str(), [=](Harness& h) { run_matmul(h, d, c, out); });
  }
  cat.add(CTL_OP_MATMUL, d, "beta: out = a @ b + beta * out (run_into)", [=](Harness& h) {
    Operand a = h.input(d, {3, 4}, Layout::kContiguous, Values::kFinite);
    Operand b = h.input(d, {4, 2}, Layout::kContiguous, Values::kFinite);
    Operand out = h.input(d, {3, 2}, Layout::kContiguous, Values::kFinite);
    ctl_matmul_attrs attrs{};
    attrs.struct_size = CTL_MATMUL_ATTRS_STRUCT_SIZE;
    attrs.beta = is_float(d) ? 0.5 : 2;
    Tolerance tol;
    tol.kind = is_float(d) ? Tol::kSum : Tol::kExact;
    tol.n = 8;
    tol.scale.assign(6, 16.0 + 2 * 2);  // |a||b| <= 4 * 2 * 2, |beta out| <= 2
    h.run(CTL_OP_MATMUL, {&a, &b}, &attrs, 1, {tol}, OutputLayout::kTransposed, &out);
  });
  for (int k = 0; k < 3; ++k) {
    cat.add(CTL_OP_MATMUL, d, "random sizes, batch broadcasting, transposes and views", [=](Harness& h) {
      auto& rng = h.context().rng;
      const int64_t m = 1 + static_cast<int64_t>(rng() % 40), kk = static_cast<int64_t>(rng() % 40),
                    n = 1 + static_cast<int64_t>(rng() % 40);
      std::vector<int64_t> batch = random_shape(rng, rng() % 3);
      for (auto& s : batch) s = std::max<int64_t>(s, 1);
      MatmulVariant c{};
      c.ta = rng() % 2;
      c.tb = rng() % 2;
      c.a.shape = broadcast_partner(rng, batch);
      c.b.shape = broadcast_partner(rng, batch);
      if (c.ta)
        c.a.shape.push_back(kk), c.a.shape.push_back(m);
      else
        c.a.shape.push_back(m), c.a.shape.push_back(kk);
      if (c.tb)
        c.b.shape.push_back(n), c.b.shape.push_back(kk);
      else
        c.b.shape.push_back(kk), c.b.shape.push_back(n);
      c.a.layout = Layout::kRandom;
      c.b.layout = Layout::kRandom;
      c.bias = rng() % 2;
      c.alpha = (rng() % 2) ? 1.0 : 0.75;
      c.act = is_float(d) ? static_cast<ctl_activation>(rng() % 4) : CTL_ACTIVATION_NONE;
      run_matmul(h, d, c, static_cast<OutputLayout>(rng() % 3));
    });
  }
  if (d == CTL_DTYPE_I32 || d == CTL_DTYPE_I64) {
    // Scales other than 1 in wrapping arithmetic: a device that applies alpha and beta in
    // double saturates an overflowing i32 result and drops the low bits of an i64 one past
    // 2^53, where docs/ops.md wraps.
    cat.add_named(CTL_OP_MATMUL, {d}, "wraps_with_scales", "[2,2] @ [2,2] +bias, alpha 3, beta -2, results that overflow",
                  [=](Harness& h) {
                    const bool wide = d == CTL_DTYPE_I64;
                    const int64_t big = wide ? (int64_t{1} << 61) + 12345 : (int64_t{1} << 30) + 7;
                    const auto bytes = [&](std::vector<int64_t> v) {
                      std::vector<unsigned char> out(v.size() * ctl_dtype_size(d));
                      for (size_t i = 0; i < v.size(); ++i) {
                        const int32_t narrow = static_cast<int32_t>(v[i]);
                        std::memcpy(out.data() + i * ctl_dtype_size(d), wide ? static_cast<const void*>(&v[i]) : &narrow,
                                    ctl_dtype_size(d));
                      }
                      return out;
                    };
                    Operand a = h.input_bytes(d, {2, 2}, bytes({big, 3, -big, 5}));
                    Operand b = h.input_bytes(d, {2, 2}, bytes({3, -1, 7, big}));
                    Operand bias = h.input_bytes(d, {2}, bytes({big, -9}));
                    Operand out = h.input_bytes(d, {2, 2}, bytes({big, -big, 11, big}));
                    ctl_matmul_attrs attrs{};
                    attrs.struct_size = CTL_MATMUL_ATTRS_STRUCT_SIZE;
                    attrs.alpha = 3;
                    attrs.alpha_set = true;
                    attrs.beta = -2;
                    h.run(CTL_OP_MATMUL, {&a, &b, &bias}, &attrs, 1, {Tol::kExact}, OutputLayout::kContiguous, &out);
                  });
  }
  // a, b and out of one element count each, with other M, K and N: a plan keyed by the
  // operands' sizes instead of their shapes gets the wrong depth.
  cat.add_named(CTL_OP_MATMUL, {d}, "same_count", "[4,12]@[12,4], [12,4]@[4,12]... with 48-element a and b",
                [=](Harness& h) {
                  for (const auto& [m, k, n] : std::vector<std::array<int64_t, 3>>{
                           {4, 12, 4}, {12, 4, 12}, {6, 8, 6}, {8, 6, 8}, {2, 24, 2}}) {
                    MatmulVariant c{};
                    c.a = {{m, k}, Layout::kContiguous};
                    c.b = {{k, n}, Layout::kContiguous};
                    c.alpha = 1;
                    c.act = CTL_ACTIVATION_NONE;
                    run_matmul(h, d, c, OutputLayout::kContiguous);
                  }
                });
}

// ---- normalisation ----------------------------------------------------------------------

void softmax_cases(Catalog& cat, ctl_op_id op, ctl_dtype d) {
  const std::vector<std::pair<Shaped, int32_t>> fixed = {
      {{{4, 7}, Layout::kContiguous}, -1}, {{{6, 5}, Layout::kPermuted}, 0},
      {{{3, 4, 5}, Layout::kSliced}, 1},   {{{3, 5}, Layout::kExpanded}, 0},
      {{{0, 4}, Layout::kContiguous}, -1}, {{{2, 1000}, Layout::kContiguous}, 1},
      {{{5}, Layout::kContiguous}, 0},     {{{2, 2, 2, 2, 3}, Layout::kPermuted}, 3}};
  int variant = 0;
  for (const auto& [s, axis] : fixed) {
    const OutputLayout out = static_cast<OutputLayout>(variant++ % 3);
    cat.add(op, d, shaped_label({s}) + " axis " + std::to_string(axis), [=, s = s, axis = axis](Harness& h) {
      Operand x = h.input(d, s.shape, s.layout, Values::kFinite);
      ctl_softmax_attrs attrs{CTL_AXIS_ATTRS_STRUCT_SIZE, axis};
      Tolerance tol(Tol::kRowNorm);
      tol.n = static_cast<double>(s.shape[axis < 0 ? axis + static_cast<int32_t>(s.shape.size()) : axis]);
      h.run(op, {&x}, &attrs, 1, {tol}, out);
    });
  }
  cat.add(op, d, "rows of -inf, +inf and NaN", [=](Harness& h) {
    Operand x = h.input_from(d, {3, 3}, {-INFINITY, -INFINITY, -INFINITY, 1, INFINITY, 2, NAN, 0, 1});
    Tolerance tol(Tol::kRowNorm);
    tol.n = 3;
    h.run(op, {&x}, nullptr, 1, {tol});
  });
  // Large finite logits, no infinity anywhere: exp overflows (or, far below zero, every
  // term underflows to 0) unless the row's maximum is subtracted first. Rows around 1e4,
  // -1e4, just past exp's overflow for the dtype (f32 and bf16 88.7, f64 709.8, f16 11.1),
  // and one spanning both signs.
  cat.add(op, d, "[4,37] large finite logits (about ±1e4, and just past exp's overflow)", [=](Harness& h) {
    const double edge = d == CTL_DTYPE_F64 ? 712 : d == CTL_DTYPE_F16 ? 11.5 : 89;
    std::uniform_real_distribution<double> spread(0.0, 3.0);
    auto& rng = h.context().rng;
    std::vector<double> v;
    for (double center : {1e4, -1e4, edge + 1.5, -2 * edge}) {
      for (int i = 0; i < 37; ++i) v.push_back(center + spread(rng));
    }
    v[3 * 37 + 5] = 1e4;  // the last row also holds one huge logit and many negative ones
    Operand x = h.input_from(d, {4, 37}, v);
    Tolerance tol(Tol::kRowNorm);
    tol.n = 37;
    h.run(op, {&x}, nullptr, 1, {tol});
  });
  cat.add_named(op, {d}, "same_count", kSameCountLabel + ", along the last axis", [=](Harness& h) {
    for (const auto& shape : kSameCount) {
      Operand x = h.input(d, shape, Layout::kContiguous, Values::kFinite);
      Tolerance tol(Tol::kRowNorm);
      tol.n = static_cast<double>(shape.back());
      h.run(op, {&x}, nullptr, 1, {tol});
    }
  });
}

void norm_cases(Catalog& cat, ctl_op_id op, ctl_dtype d) {
  const bool layer = op == CTL_OP_LAYER_NORM;
  const std::vector<Shaped> shapes = {{{5, 8}, Layout::kContiguous},  {{4, 6}, Layout::kPermuted},
                                      {{2, 3, 16}, Layout::kSliced},  {{3, 5}, Layout::kExpanded},
                                      {{7}, Layout::kContiguous},     {{0, 4}, Layout::kContiguous},
                                      {{2, 700}, Layout::kContiguous}};
  for (const auto& s : shapes) {
    const int64_t n = s.shape.back();
    for (int present = 0; present < (layer ? 4 : 2); ++present) {
      const size_t outputs = present % 2 == 0 ? (layer ? 3 : 2) : 1;
      const std::string label = shaped_label({s}) + (present & 1 ? " weight" : "") +
                                (layer && (present & 2) ? " bias" : "") + ", " + std::to_string(outputs) + " output(s)";
      cat.add(op, d, label, [=](Harness& h) {
        Operand x = h.input(d, s.shape, s.layout, Values::kFinite);
        Operand w = h.input(d, {n}, Layout::kContiguous, Values::kFinite);
        Operand b = h.input(d, {n}, Layout::kContiguous, Values::kFinite);
        std::vector<const Operand*> ins = {&x, (present & 1) ? &w : nullptr};
        if (layer) ins.push_back((present & 2) ? &b : nullptr);
        ctl_norm_attrs attrs{CTL_NORM_ATTRS_STRUCT_SIZE, present == 1 ? 1e-3 : 0.0};
        Tolerance tol(Tol::kRowNorm);
        tol.n = static_cast<double>(n);
        h.run(op, ins, &attrs, outputs, {tol}, static_cast<OutputLayout>(present % 3));
      });
    }
  }
  cat.add_named(op, {d}, "same_count", kSameCountLabel + ", with weight, every output", [=](Harness& h) {
    for (const auto& shape : kSameCount) {
      const int64_t n = shape.back();
      Operand x = h.input(d, shape, Layout::kContiguous, Values::kFinite);
      Operand w = h.input(d, {n}, Layout::kContiguous, Values::kFinite);
      std::vector<const Operand*> ins = {&x, &w};
      if (layer) ins.push_back(nullptr);
      ctl_norm_attrs attrs{CTL_NORM_ATTRS_STRUCT_SIZE, 0.0};
      Tolerance tol(Tol::kRowNorm);
      tol.n = static_cast<double>(n);
      h.run(op, ins, &attrs, layer ? 3 : 2, {tol});
    }
  });
  norm_large_row_cases(cat, op, d);
}

// ---- data movement and creation ---------------------------------------------------------

void copy_cases(Catalog& cat, ctl_dtype d) {
  const std::vector<std::pair<Shaped, OutputLayout>> fixed = {
      {{{3, 5}, Layout::kPermuted}, OutputLayout::kContiguous},
      {{{4, 3}, Layout::kSliced}, OutputLayout::kContiguous},
      {{{3, 5}, Layout::kExpanded}, OutputLayout::kGapped},
      {{{}, Layout::kContiguous}, OutputLayout::kContiguous},
      {{{0, 2}, Layout::kContiguous}, OutputLayout::kContiguous},
      {{{2, 3, 4}, Layout::kPermuted}, OutputLayout::kTransposed},
      {{{4, 6}, Layout::kSliced}, OutputLayout::kTransposed},
      {{{1, 2, 1, 3, 1, 2}, Layout::kPermuted}, OutputLayout::kGapped},
  };
  for (const auto& [s, out] : fixed) {
    cat.add(CTL_OP_COPY, d, shaped_label({s}), [=, s = s, out = out](Harness& h) {
      Operand x = h.input(d, s.shape, s.layout, Values::kGeneral);
      h.run(CTL_OP_COPY, {&x}, nullptr, 1, {Tol::kExact}, out);
    });
  }
  for (int k = 0; k < 3; ++k) {
    cat.add(CTL_OP_COPY, d, "random rank 0-6 shape, view and output layout", [=](Harness& h) {
      auto& rng = h.context().rng;
      Operand x = h.input(d, random_shape(rng, rng() % 7), Layout::kRandom, Values::kGeneral);
      h.run(CTL_OP_COPY, {&x}, nullptr, 1, {Tol::kExact}, static_cast<OutputLayout>(rng() % 3));
    });
  }
}

void cast_cases(Catalog& cat, ctl_dtype from) {
  for (ctl_dtype to : kAll) {
    cat.add(CTL_OP_CAST, {from, to}, std::string("[5,7] permuted to ") + ctl_dtype_name(to), [=](Harness& h) {
      Operand x = h.input(from, {5, 7}, Layout::kPermuted, Values::kGeneral);
      ctl_cast_attrs attrs{CTL_CAST_ATTRS_STRUCT_SIZE, to};
      h.run(CTL_OP_CAST, {&x}, &attrs, 1, {Tol::kExact}, OutputLayout::kGapped);
    });
    if (is_float(from)) {
      cat.add(CTL_OP_CAST, {from, to},
              std::string("saturation, truncation, NaN, rounding ties, subnormals to ") + ctl_dtype_name(to),
              [=](Harness& h) {
                const double sub = smallest_subnormal(from);
                Operand s = h.input_from(from, {14},
                                         {1e10, -1e10, 300.7, -300.7, 2.5, -2.5, 0.49999, 65519.0, 1e-8, std::nan(""),
                                          INFINITY, -INFINITY, sub, -5 * sub});
                ctl_cast_attrs attrs{CTL_CAST_ATTRS_STRUCT_SIZE, to};
                h.run(CTL_OP_CAST, {&s}, &attrs, 1, {Tol::kExact});
              });
    }
    cast_rounding_cases(cat, from, to);
  }
}

void concat_cases(Catalog& cat, ctl_dtype d) {
  cat.add(CTL_OP_CONCAT, d, "[2,3] [2,1] expanded [2,0] [2,4] permuted along 1", [=](Harness& h) {
    Operand a = h.input(d, {2, 3}, Layout::kContiguous, Values::kGeneral);
    Operand b = h.input(d, {2, 1}, Layout::kExpanded, Values::kGeneral);
    Operand e = h.input(d, {2, 0}, Layout::kContiguous, Values::kGeneral);
    Operand c = h.input(d, {2, 4}, Layout::kPermuted, Values::kGeneral);
    ctl_axis_attrs axis{CTL_AXIS_ATTRS_STRUCT_SIZE, 1};
    h.run(CTL_OP_CONCAT, {&a, &b, &e, &c}, &axis, 1, {Tol::kExact}, OutputLayout::kTransposed);
  });
  cat.add(CTL_OP_CONCAT, d, "[2,3] [3,3] sliced along -2", [=](Harness& h) {
    Operand a = h.input(d, {2, 3}, Layout::kContiguous, Values::kGeneral);
    Operand f = h.input(d, {3, 3}, Layout::kSliced, Values::kGeneral);
    ctl_axis_attrs axis{CTL_AXIS_ATTRS_STRUCT_SIZE, -2};
    h.run(CTL_OP_CONCAT, {&a, &f}, &axis, 1, {Tol::kExact}, OutputLayout::kGapped);
  });
  cat.add(CTL_OP_CONCAT, d, "one input", [=](Harness& h) {
    Operand one = h.input(d, {5}, Layout::kContiguous, Values::kGeneral);
    h.run(CTL_OP_CONCAT, {&one}, nullptr, 1, {Tol::kExact});
  });
  for (int k = 0; k < 2; ++k) {
    cat.add(CTL_OP_CONCAT, d, "random rank 1-6, 1-4 inputs with views", [=](Harness& h) {
      auto& rng = h.context().rng;
      auto shape = random_shape(rng, 1 + rng() % 6);
      const int32_t axis = static_cast<int32_t>(rng() % shape.size());
      std::vector<Operand> parts;
      const size_t count = 1 + rng() % 4;
      for (size_t i = 0; i < count; ++i) {
        auto s = shape;
        s[axis] = static_cast<int64_t>(rng() % 4);
        parts.push_back(h.input(d, s, Layout::kRandom, Values::kGeneral));
      }
      std::vector<const Operand*> ins;
      for (auto& p : parts) ins.push_back(&p);
      ctl_axis_attrs attrs{CTL_AXIS_ATTRS_STRUCT_SIZE, axis};
      h.run(CTL_OP_CONCAT, ins, &attrs, 1, {Tol::kExact}, static_cast<OutputLayout>(rng() % 3));
    });
  }
}

void gather_cases(Catalog& cat, ctl_dtype d) {
  for (ctl_dtype index : {CTL_DTYPE_I64, CTL_DTYPE_I32}) {
    const std::string idx = std::string(", index ") + ctl_dtype_name(index);
    cat.add(CTL_OP_GATHER, {d, index}, "axis 0, [2,3] index (negative and out-of-range entries)" + idx,
            [=](Harness& h) {
              Operand x = h.input(d, {5, 4}, Layout::kPermuted, Values::kGeneral);
              Operand i = h.input(index, {2, 3}, Layout::kContiguous, Values::kIndex);
              ctl_axis_attrs axis{CTL_AXIS_ATTRS_STRUCT_SIZE, 0};
              h.run(CTL_OP_GATHER, {&x, &i}, &axis, 1, {Tol::kExact}, OutputLayout::kTransposed);
            });
    cat.add(CTL_OP_GATHER, {d, index}, "axis -1, sliced index" + idx, [=](Harness& h) {
      Operand x = h.input(d, {5, 4}, Layout::kPermuted, Values::kGeneral);
      Operand i = h.input(index, {6}, Layout::kSliced, Values::kIndex);
      ctl_axis_attrs axis{CTL_AXIS_ATTRS_STRUCT_SIZE, -1};
      h.run(CTL_OP_GATHER, {&x, &i}, &axis, 1, {Tol::kExact});
    });
    cat.add(CTL_OP_GATHER, {d, index}, "rank-0 index -1" + idx, [=](Harness& h) {
      Operand x = h.input(d, {5, 4}, Layout::kContiguous, Values::kGeneral);
      Operand i = h.input_from(index, {}, {-1});
      ctl_axis_attrs axis{CTL_AXIS_ATTRS_STRUCT_SIZE, 0};
      h.run(CTL_OP_GATHER, {&x, &i}, &axis, 1, {Tol::kExact});
    });
    cat.add(CTL_OP_GATHER, {d, index}, "empty index" + idx, [=](Harness& h) {
      Operand x = h.input(d, {5, 4}, Layout::kContiguous, Values::kGeneral);
      Operand i = h.input(index, {0}, Layout::kContiguous, Values::kIndex);
      ctl_axis_attrs axis{CTL_AXIS_ATTRS_STRUCT_SIZE, 0};
      h.run(CTL_OP_GATHER, {&x, &i}, &axis, 1, {Tol::kExact});
    });
    cat.add(CTL_OP_GATHER, {d, index}, "random rank 1-4 source, rank 0-2 index, random axis" + idx, [=](Harness& h) {
      auto& rng = h.context().rng;
      auto shape = random_shape(rng, 1 + rng() % 4);
      const int32_t axis = static_cast<int32_t>(rng() % shape.size());
      shape[axis] = std::max<int64_t>(shape[axis], 1);
      Operand x = h.input(d, shape, Layout::kRandom, Values::kGeneral);
      Operand i = h.input(index, random_shape(rng, rng() % 3), Layout::kRandom, Values::kIndex);
      ctl_axis_attrs attrs{CTL_AXIS_ATTRS_STRUCT_SIZE, axis};
      h.run(CTL_OP_GATHER, {&x, &i}, &attrs, 1, {Tol::kExact}, static_cast<OutputLayout>(rng() % 3));
    });
  }
}

void scatter_add_cases(Catalog& cat, ctl_dtype d) {
  for (int axis : {0, 1}) {
    const ctl_dtype index = axis ? CTL_DTYPE_I32 : CTL_DTYPE_I64;
    cat.add(CTL_OP_SCATTER_ADD, {d, index}, "axis " + std::to_string(axis) + ", repeated indices", [=](Harness& h) {
      Operand target = h.input(d, {5, 4}, axis ? Layout::kPermuted : Layout::kContiguous, Values::kFinite);
      const int64_t count = axis ? 7 : 9;  // more positions than the axis: repeats
      Operand i = h.input(index, {count}, Layout::kContiguous, Values::kIndex);
      const std::vector<int64_t> src_shape = axis ? std::vector<int64_t>{5, count} : std::vector<int64_t>{count, 4};
      Operand src = h.input(d, src_shape, Layout::kSliced, Values::kFinite);
      ctl_axis_attrs attrs{CTL_AXIS_ATTRS_STRUCT_SIZE, axis};
      Tolerance tol;
      if (is_float(d)) {
        // Repeated indices may be summed in any order: the sum bound over |target| + |src|.
        tol.kind = Tol::kSum;
        tol.n = static_cast<double>(count) + 1;
        tol.scale.assign(20, 2.0 * (count + 1));
      }
      h.run(CTL_OP_SCATTER_ADD, {&target, &i, &src}, &attrs, 1, {tol}, static_cast<OutputLayout>(axis + 1));
    });
  }
}

void creation_cases(Catalog& cat, ctl_op_id op, ctl_dtype d) {
  auto add = [&](std::string label, std::vector<int64_t> shape, auto attrs, Tol tol, OutputLayout out) {
    cat.add(op, d, label, [=](Harness& h) { h.run_creation(op, d, shape, &attrs, tol, out); });
  };
  if (op == CTL_OP_FILL) {
    for (double v : {2.5, -3.75, 1e10, -1e10, std::nan(""), -0.0, 1.0, 1e-40}) {
      std::ostringstream label;
      label << "fill " << v << " into [3,5]";
      add(label.str(), {3, 5}, ctl_fill_attrs{CTL_FILL_ATTRS_STRUCT_SIZE, v}, Tol::kExact, OutputLayout::kTransposed);
    }
    add("fill rank 0", {}, ctl_fill_attrs{CTL_FILL_ATTRS_STRUCT_SIZE, 7}, Tol::kExact, OutputLayout::kContiguous);
    add("fill empty", {0, 5}, ctl_fill_attrs{CTL_FILL_ATTRS_STRUCT_SIZE, 7}, Tol::kExact, OutputLayout::kContiguous);
    add("fill [2,3,4,5,3,2] gapped", {2, 3, 4, 5, 3, 2}, ctl_fill_attrs{CTL_FILL_ATTRS_STRUCT_SIZE, -1}, Tol::kExact,
        OutputLayout::kGapped);
  } else if (op == CTL_OP_ARANGE) {
    add("arange -3 + 0.75 i", {11}, ctl_arange_attrs{CTL_ARANGE_ATTRS_STRUCT_SIZE, -3, 0.75}, Tol::kExact,
        OutputLayout::kContiguous);
    add("arange 5 - 2 i", {7}, ctl_arange_attrs{CTL_ARANGE_ATTRS_STRUCT_SIZE, 5, -2}, Tol::kExact,
        OutputLayout::kGapped);
    add("arange 0 + i, 300 long", {300}, ctl_arange_attrs{CTL_ARANGE_ATTRS_STRUCT_SIZE, 0, 1}, Tol::kExact,
        OutputLayout::kContiguous);
    add("arange empty", {0}, ctl_arange_attrs{CTL_ARANGE_ATTRS_STRUCT_SIZE, 0, 1}, Tol::kExact,
        OutputLayout::kContiguous);
  } else {
    const Tol tol = op == CTL_OP_RANDOM_NORMAL ? Tol::kNormal : Tol::kExact;
    for (uint64_t seed : {uint64_t{1234}, uint64_t{0}, ~uint64_t{0}}) {
      add("seed " + std::to_string(seed) + ", 1000 numbers", {1000},
          ctl_random_attrs{CTL_RANDOM_ATTRS_STRUCT_SIZE, seed, 77, -2.0, 3.0}, tol, OutputLayout::kContiguous);
    }
    add("[7,9] transposed output, counter offset 2^40", {7, 9},
        ctl_random_attrs{CTL_RANDOM_ATTRS_STRUCT_SIZE, 42, uint64_t{1} << 40, 0.0, 1.0}, tol,
        OutputLayout::kTransposed);
    add("counter offset 2^32 - 3 (the counter carries into its high word)", {16},
        ctl_random_attrs{CTL_RANDOM_ATTRS_STRUCT_SIZE, 7, (uint64_t{1} << 32) - 3, 0.0, 1.0}, tol,
        OutputLayout::kContiguous);
  }
}

// ---- large cases: one of >= 2^24 elements per op family, f32 --------------------------

void large_cases(Catalog& cat) {
  const ctl_dtype f = CTL_DTYPE_F32;
  const std::string big = "large: " + shape_label({kLarge, kLarge});
  cat.add_large(CTL_OP_EXP, f, big + " transposed input", [=](Harness& h) {
    Operand x = h.input(f, {kLarge, kLarge}, Layout::kPermuted, Values::kGeneral);
    h.run(CTL_OP_EXP, {&x}, nullptr, 1, {Tol::kTranscendental});
  });
  cat.add_large(CTL_OP_ADD, f, big + " + [4096] broadcast", [=](Harness& h) {
    Operand a = h.input(f, {kLarge, kLarge}, Layout::kContiguous, Values::kGeneral);
    Operand b = h.input(f, {kLarge}, Layout::kContiguous, Values::kGeneral);
    h.run(CTL_OP_ADD, {&a, &b}, nullptr, 1, {Tol::kArith});
  });
  cat.add_large(CTL_OP_LT, f, "large: [16777216] < [16777216]", [=](Harness& h) {
    Operand a = h.input(f, {kLarge * kLarge}, Layout::kContiguous, Values::kGeneral);
    Operand b = h.input(f, {kLarge * kLarge}, Layout::kContiguous, Values::kGeneral);
    h.run(CTL_OP_LT, {&a, &b}, nullptr, 1, {Tol::kExact});
  });
  cat.add_large(CTL_OP_WHERE, {f, CTL_DTYPE_BOOL}, big + " with broadcast branches", [=](Harness& h) {
    Operand c = h.input(CTL_DTYPE_BOOL, {kLarge, kLarge}, Layout::kContiguous, Values::kGeneral);
    Operand a = h.input(f, {kLarge, 1}, Layout::kContiguous, Values::kGeneral);
    Operand b = h.input(f, {kLarge}, Layout::kContiguous, Values::kGeneral);
    h.run(CTL_OP_WHERE, {&c, &a, &b}, nullptr, 1, {Tol::kExact});
  });
  cat.add_large(CTL_OP_SUM, f, big + " over axis 0", [=](Harness& h) {
    Operand x = h.input(f, {kLarge, kLarge}, Layout::kContiguous, Values::kFinite);
    run_reduce(h, CTL_OP_SUM, f, x, {kLarge, kLarge}, {0}, false);
  });
  cat.add_large(CTL_OP_MEAN, f, big + " over every axis", [=](Harness& h) {
    Operand x = h.input(f, {kLarge, kLarge}, Layout::kPermuted, Values::kFinite);
    run_reduce(h, CTL_OP_MEAN, f, x, {kLarge, kLarge}, {}, false);
  });
  cat.add_large(CTL_OP_ARGMAX, f, big + " along the last axis", [=](Harness& h) {
    Operand x = h.input(f, {kLarge, kLarge}, Layout::kContiguous, Values::kGeneral);
    run_reduce(h, CTL_OP_ARGMAX, f, x, {kLarge, kLarge}, {1}, false);
  });
  cat.add_large(CTL_OP_MATMUL, f, "large: [4096,16] @ [16,4096] + bias", [=](Harness& h) {
    MatmulVariant c{{{kLarge, 16}, Layout::kContiguous},
                    {{16, kLarge}, Layout::kContiguous},
                    true,
                    false,
                    false,
                    1,
                    CTL_ACTIVATION_NONE};
    run_matmul(h, f, c, OutputLayout::kContiguous);
  });
  cat.add_large(CTL_OP_SOFTMAX, f, big + " along the last axis", [=](Harness& h) {
    Operand x = h.input(f, {kLarge, kLarge}, Layout::kContiguous, Values::kFinite);
    Tolerance tol(Tol::kRowNorm);
    tol.n = kLarge;
    h.run(CTL_OP_SOFTMAX, {&x}, nullptr, 1, {tol});
  });
  cat.add_large(CTL_OP_LAYER_NORM, f, big + " with weight and bias", [=](Harness& h) {
    Operand x = h.input(f, {kLarge, kLarge}, Layout::kContiguous, Values::kFinite);
    Operand w = h.input(f, {kLarge}, Layout::kContiguous, Values::kFinite);
    Operand b = h.input(f, {kLarge}, Layout::kContiguous, Values::kFinite);
    ctl_norm_attrs attrs{CTL_NORM_ATTRS_STRUCT_SIZE, 0.0};
    Tolerance tol(Tol::kRowNorm);
    tol.n = kLarge;
    h.run(CTL_OP_LAYER_NORM, {&x, &w, &b}, &attrs, 1, {tol});
  });
  cat.add_large(CTL_OP_COPY, f, big + " transposed into contiguous", [=](Harness& h) {
    Operand x = h.input(f, {kLarge, kLarge}, Layout::kPermuted, Values::kGeneral);
    h.run(CTL_OP_COPY, {&x}, nullptr, 1, {Tol::kExact});
  });
  cat.add_large(CTL_OP_CAST, {f, CTL_DTYPE_I32}, big + " to i32", [=](Harness& h) {
    Operand x = h.input(f, {kLarge, kLarge}, Layout::kContiguous, Values::kGeneral);
    ctl_cast_attrs attrs{CTL_CAST_ATTRS_STRUCT_SIZE, CTL_DTYPE_I32};
    h.run(CTL_OP_CAST, {&x}, &attrs, 1, {Tol::kExact});
  });
  cat.add_large(CTL_OP_GATHER, {f, CTL_DTYPE_I64}, big + " rows by a [4096] index", [=](Harness& h) {
    Operand x = h.input(f, {kLarge, kLarge}, Layout::kContiguous, Values::kGeneral);
    Operand i = h.input(CTL_DTYPE_I64, {kLarge}, Layout::kContiguous, Values::kIndex);
    ctl_axis_attrs axis{CTL_AXIS_ATTRS_STRUCT_SIZE, 0};
    h.run(CTL_OP_GATHER, {&x, &i}, &axis, 1, {Tol::kExact});
  });
  cat.add_large(CTL_OP_FILL, f, big, [=](Harness& h) {
    ctl_fill_attrs attrs{CTL_FILL_ATTRS_STRUCT_SIZE, -1.5};
    h.run_creation(CTL_OP_FILL, f, {kLarge, kLarge}, &attrs, Tol::kExact, OutputLayout::kContiguous);
  });
  cat.add_large(CTL_OP_RANDOM_UNIFORM, f, "large: [16777216]", [=](Harness& h) {
    ctl_random_attrs attrs{CTL_RANDOM_ATTRS_STRUCT_SIZE, 99, 5, -1.0, 1.0};
    h.run_creation(CTL_OP_RANDOM_UNIFORM, f, {kLarge * kLarge}, &attrs, Tol::kExact, OutputLayout::kContiguous);
  });
}

// ---- tail cases: large and odd-sized, past every split a plugin might make ---------------
//
// The large cases above are 4096 wide: a multiple of every vector width, tile and thread
// split, so a kernel whose remainder path is wrong, or that drops the last chunk of a
// parallel split, passes them. These have about 10^6 elements in sizes that are multiples
// of nothing useful (1000003 is prime; 1031, 1021, 997, 389 too), with more rows than a
// GEMM's row block (1536), more columns than its column block (1024) and a depth past its
// depth block (256), and more elements than any thread split's grain. One per op, f32, at
// `full`: each costs the reference a second or so.

constexpr int64_t kTail = 1000003;                      // elements of a rank-1 case
const std::vector<int64_t> kTailRows = {1031, 1021};    // rank-2 cases
const std::vector<int64_t> kTailBlock = {7, 149, 977};  // rank-3, 1019641 elements
constexpr Level kTailLevel = Level::kFull;

void tail_cases(Catalog& cat) {
  const ctl_dtype f = CTL_DTYPE_F32;
  const auto add = [&](ctl_op_id op, const std::vector<ctl_dtype>& dtypes, const std::string& label, Body body) {
    cat.add_named(op, dtypes, "large_tail", "large, odd sizes: " + label, std::move(body), kTailLevel);
  };
  for (ctl_op_id op :
       {CTL_OP_NEG, CTL_OP_ABS, CTL_OP_EXP, CTL_OP_LOG, CTL_OP_SQRT, CTL_OP_RSQRT, CTL_OP_TANH, CTL_OP_SIGMOID,
        CTL_OP_RELU, CTL_OP_GELU, CTL_OP_GELU_TANH, CTL_OP_SILU, CTL_OP_SIN, CTL_OP_COS, CTL_OP_RECIPROCAL}) {
    const Values kind =
        (op == CTL_OP_LOG || op == CTL_OP_SQRT || op == CTL_OP_RSQRT) ? Values::kPositive : Values::kGeneral;
    add(op, {f}, shape_label({kTail}) + " contiguous", [=](Harness& h) {
      Operand x = h.input(f, {kTail}, Layout::kContiguous, kind);
      h.run(op, {&x}, nullptr, 1, {unary_tol(op)});
    });
  }
  for (ctl_op_id op : {CTL_OP_ADD, CTL_OP_SUB, CTL_OP_MUL, CTL_OP_DIV, CTL_OP_POW, CTL_OP_MAXIMUM, CTL_OP_MINIMUM,
                       CTL_OP_EQ, CTL_OP_NE, CTL_OP_LT, CTL_OP_LE, CTL_OP_GT, CTL_OP_GE}) {
    Tol tol = Tol::kExact;
    if (op == CTL_OP_ADD || op == CTL_OP_SUB || op == CTL_OP_MUL || op == CTL_OP_DIV) tol = Tol::kArith;
    if (op == CTL_OP_POW) tol = Tol::kTranscendental;
    const Values kind = op == CTL_OP_POW ? Values::kSmallInt : Values::kGeneral;
    // Same shapes (the flat fast path), then a row broadcast over a transposed operand.
    add(op, {f}, shape_label({kTail}) + " & " + shape_label({kTail}), [=](Harness& h) {
      Operand a = h.input(f, {kTail}, Layout::kContiguous, kind);
      Operand b = h.input(f, {kTail}, Layout::kContiguous, kind);
      h.run(op, {&a, &b}, nullptr, 1, {tol});
    });
    cat.add_named(
        op, {f}, "large_tail_broadcast",
        "large, odd sizes: " + shape_label(kTailRows) + " permuted & " + shape_label({kTailRows[1]}) + " broadcast",
        [=](Harness& h) {
          Operand a = h.input(f, kTailRows, Layout::kPermuted, kind);
          Operand b = h.input(f, {kTailRows[1]}, Layout::kContiguous, kind);
          h.run(op, {&a, &b}, nullptr, 1, {tol});
        },
        kTailLevel);
  }
  add(CTL_OP_WHERE, {f, CTL_DTYPE_BOOL}, shape_label(kTailRows) + " with a [1031,1] branch", [=](Harness& h) {
    Operand c = h.input(CTL_DTYPE_BOOL, kTailRows, Layout::kContiguous, Values::kGeneral);
    Operand a = h.input(f, {kTailRows[0], 1}, Layout::kContiguous, Values::kGeneral);
    Operand b = h.input(f, kTailRows, Layout::kContiguous, Values::kGeneral);
    h.run(CTL_OP_WHERE, {&c, &a, &b}, nullptr, 1, {Tol::kExact});
  });
  // Reductions: over the last axis (rows), over the first (columns), and over every axis.
  for (ctl_op_id op :
       {CTL_OP_SUM, CTL_OP_MEAN, CTL_OP_MAX, CTL_OP_MIN, CTL_OP_ARGMAX, CTL_OP_ARGMIN, CTL_OP_LOGSUMEXP}) {
    const bool values = op == CTL_OP_MAX || op == CTL_OP_MIN || op == CTL_OP_ARGMAX || op == CTL_OP_ARGMIN;
    const Values kind = values ? Values::kGeneral : Values::kFinite;
    add(op, {f}, shape_label(kTailBlock) + " over axis 2", [=](Harness& h) {
      Operand x = h.input(f, kTailBlock, Layout::kContiguous, kind);
      run_reduce(h, op, f, x, kTailBlock, {2}, false);
    });
    cat.add_named(
        op, {f}, "large_tail_columns", "large, odd sizes: " + shape_label(kTailBlock) + " over axis 1, keepdims",
        [=](Harness& h) {
          Operand x = h.input(f, kTailBlock, Layout::kContiguous, kind);
          run_reduce(h, op, f, x, kTailBlock, {1}, true);
        },
        kTailLevel);
  }
  // GEMM: past the row, column and depth blocks, with a ragged edge on each, transposed b,
  // a bias and alpha; and beta with out's old contents, which must then be read.
  add(CTL_OP_MATMUL, {f}, "[1543,389] @ [1031,389]^T + bias, alpha 0.75", [=](Harness& h) {
    MatmulVariant c{{{1543, 389}, Layout::kContiguous},
                    {{1031, 389}, Layout::kContiguous},
                    true,
                    false,
                    true,
                    0.75,
                    CTL_ACTIVATION_NONE};
    run_matmul(h, f, c, OutputLayout::kContiguous);
  });
  cat.add_named(
      CTL_OP_MATMUL, {f}, "large_tail_beta",
      "large, odd sizes: [263,1543]^T @ [263,1031] + 0.5 * out (transpose_a, beta)",
      [=](Harness& h) {
        Operand a = h.input(f, {263, 1543}, Layout::kContiguous, Values::kFinite);
        Operand b = h.input(f, {263, 1031}, Layout::kContiguous, Values::kFinite);
        Operand out = h.input(f, {1543, 1031}, Layout::kContiguous, Values::kFinite);
        ctl_matmul_attrs attrs{};
        attrs.struct_size = CTL_MATMUL_ATTRS_STRUCT_SIZE;
        attrs.transpose_a = true;
        attrs.beta = 0.5;
        Tolerance tol;
        tol.kind = Tol::kSum;
        tol.n = 263 + 4;
        tol.scale.assign(1543 * 1031, 263 * 4.0 + 1);  // |a||b| <= 263 * 2 * 2, |beta out| <= 1
        h.run(CTL_OP_MATMUL, {&a, &b}, &attrs, 1, {tol}, OutputLayout::kContiguous, &out);
      },
      kTailLevel);
  for (ctl_op_id op : {CTL_OP_SOFTMAX, CTL_OP_LOG_SOFTMAX}) {
    add(op, {f}, shape_label(kTailRows) + " along the last axis", [=](Harness& h) {
      Operand x = h.input(f, kTailRows, Layout::kContiguous, Values::kFinite);
      ctl_softmax_attrs attrs{CTL_AXIS_ATTRS_STRUCT_SIZE, -1};
      Tolerance tol(Tol::kRowNorm);
      tol.n = static_cast<double>(kTailRows[1]);
      h.run(op, {&x}, &attrs, 1, {tol});
    });
  }
  for (ctl_op_id op : {CTL_OP_LAYER_NORM, CTL_OP_RMS_NORM}) {
    const bool layer = op == CTL_OP_LAYER_NORM;
    add(op, {f}, shape_label(kTailRows) + " with weight, every output", [=](Harness& h) {
      Operand x = h.input(f, kTailRows, Layout::kContiguous, Values::kFinite);
      Operand w = h.input(f, {kTailRows[1]}, Layout::kContiguous, Values::kFinite);
      Operand b = h.input(f, {kTailRows[1]}, Layout::kContiguous, Values::kFinite);
      std::vector<const Operand*> ins = {&x, &w};
      if (layer) ins.push_back(&b);
      ctl_norm_attrs attrs{CTL_NORM_ATTRS_STRUCT_SIZE, 1e-5};
      Tolerance tol(Tol::kRowNorm);
      tol.n = static_cast<double>(kTailRows[1]);
      h.run(op, ins, &attrs, layer ? 3 : 2, {tol});
    });
  }
  add(CTL_OP_COPY, {f}, shape_label(kTailBlock) + " permuted", [=](Harness& h) {
    Operand x = h.input(f, kTailBlock, Layout::kPermuted, Values::kGeneral);
    h.run(CTL_OP_COPY, {&x}, nullptr, 1, {Tol::kExact});
  });
  add(CTL_OP_CAST, {f, CTL_DTYPE_F16}, shape_label({kTail}) + " to f16", [=](Harness& h) {
    Operand x = h.input(f, {kTail}, Layout::kContiguous, Values::kGeneral);
    ctl_cast_attrs attrs{CTL_CAST_ATTRS_STRUCT_SIZE, CTL_DTYPE_F16};
    h.run(CTL_OP_CAST, {&x}, &attrs, 1, {Tol::kExact});
  });
  add(CTL_OP_CONCAT, {f}, "[517,1021] & [514,1021] sliced along 0", [=](Harness& h) {
    Operand a = h.input(f, {517, kTailRows[1]}, Layout::kContiguous, Values::kGeneral);
    Operand b = h.input(f, {514, kTailRows[1]}, Layout::kSliced, Values::kGeneral);
    ctl_axis_attrs axis{CTL_AXIS_ATTRS_STRUCT_SIZE, 0};
    h.run(CTL_OP_CONCAT, {&a, &b}, &axis, 1, {Tol::kExact});
  });
  add(CTL_OP_GATHER, {f, CTL_DTYPE_I64}, "[977,1021] by a [1031] index along axis 1", [=](Harness& h) {
    Operand x = h.input(f, {977, kTailRows[1]}, Layout::kContiguous, Values::kGeneral);
    Operand i = h.input(CTL_DTYPE_I64, {kTailRows[0]}, Layout::kContiguous, Values::kIndex);
    ctl_axis_attrs axis{CTL_AXIS_ATTRS_STRUCT_SIZE, 1};
    h.run(CTL_OP_GATHER, {&x, &i}, &axis, 1, {Tol::kExact});
  });
  add(CTL_OP_SCATTER_ADD, {f, CTL_DTYPE_I64}, "[1031,1021] target, 997 positions along 1", [=](Harness& h) {
    Operand target = h.input(f, kTailRows, Layout::kContiguous, Values::kFinite);
    Operand i = h.input(CTL_DTYPE_I64, {997}, Layout::kContiguous, Values::kIndex);
    Operand src = h.input(f, {kTailRows[0], 997}, Layout::kContiguous, Values::kFinite);
    ctl_axis_attrs attrs{CTL_AXIS_ATTRS_STRUCT_SIZE, 1};
    Tolerance tol(Tol::kSum);
    tol.n = 997 + 1;
    tol.scale.assign(static_cast<size_t>(kTailRows[0] * kTailRows[1]), 2.0 * (997 + 1));
    h.run(CTL_OP_SCATTER_ADD, {&target, &i, &src}, &attrs, 1, {tol});
  });
  add(CTL_OP_FILL, {f}, shape_label(kTailBlock) + " gapped", [=](Harness& h) {
    ctl_fill_attrs attrs{CTL_FILL_ATTRS_STRUCT_SIZE, 0.25};
    h.run_creation(CTL_OP_FILL, f, kTailBlock, &attrs, Tol::kExact, OutputLayout::kGapped);
  });
  add(CTL_OP_ARANGE, {f}, shape_label({kTail}) + ", -5 + 0.5 i", [=](Harness& h) {
    ctl_arange_attrs attrs{CTL_ARANGE_ATTRS_STRUCT_SIZE, -5, 0.5};
    h.run_creation(CTL_OP_ARANGE, f, {kTail}, &attrs, Tol::kExact, OutputLayout::kContiguous);
  });
  for (ctl_op_id op : {CTL_OP_RANDOM_UNIFORM, CTL_OP_RANDOM_NORMAL}) {
    add(op, {f}, shape_label({kTail}) + ", counter offset 2^32 - 5", [=](Harness& h) {
      ctl_random_attrs attrs{CTL_RANDOM_ATTRS_STRUCT_SIZE, 11, (uint64_t{1} << 32) - 5, -1.0, 2.0};
      h.run_creation(op, f, {kTail}, &attrs, op == CTL_OP_RANDOM_NORMAL ? Tol::kNormal : Tol::kExact,
                     OutputLayout::kContiguous);
    });
  }
}

}  // namespace

void add_numeric_cases(std::vector<Case>& out) {
  Catalog cat(out, Level::kCore);
  struct OpSpec {
    ctl_op_id op;
    const std::vector<ctl_dtype>* dtypes;
    std::function<void(Catalog&, ctl_op_id, ctl_dtype)> cases;
  };
  auto unary = [](Catalog& c, ctl_op_id op, ctl_dtype d) { unary_cases(c, op, d); };
  auto binary = [](Catalog& c, ctl_op_id op, ctl_dtype d) { binary_cases(c, op, d); };
  auto reduce = [](Catalog& c, ctl_op_id op, ctl_dtype d) { reduce_cases(c, op, d); };
  auto softmax = [](Catalog& c, ctl_op_id op, ctl_dtype d) { softmax_cases(c, op, d); };
  auto norm = [](Catalog& c, ctl_op_id op, ctl_dtype d) { norm_cases(c, op, d); };
  auto creation = [](Catalog& c, ctl_op_id op, ctl_dtype d) { creation_cases(c, op, d); };
  const std::vector<OpSpec> ops = {
      {CTL_OP_NEG, &kNumeric, unary},
      {CTL_OP_ABS, &kNumeric, unary},
      {CTL_OP_EXP, &kFloat, unary},
      {CTL_OP_LOG, &kFloat, unary},
      {CTL_OP_SQRT, &kFloat, unary},
      {CTL_OP_RSQRT, &kFloat, unary},
      {CTL_OP_TANH, &kFloat, unary},
      {CTL_OP_SIGMOID, &kFloat, unary},
      {CTL_OP_RELU, &kNumeric, unary},
      {CTL_OP_GELU, &kFloat, unary},
      {CTL_OP_GELU_TANH, &kFloat, unary},
      {CTL_OP_SILU, &kFloat, unary},
      {CTL_OP_SIN, &kFloat, unary},
      {CTL_OP_COS, &kFloat, unary},
      {CTL_OP_RECIPROCAL, &kFloat, unary},
      {CTL_OP_ADD, &kNumeric, binary},
      {CTL_OP_SUB, &kNumeric, binary},
      {CTL_OP_MUL, &kNumeric, binary},
      {CTL_OP_DIV, &kNumeric, binary},
      {CTL_OP_POW, &kNumeric, binary},
      {CTL_OP_MAXIMUM, &kNumeric, binary},
      {CTL_OP_MINIMUM, &kNumeric, binary},
      {CTL_OP_EQ, &kAll, binary},
      {CTL_OP_NE, &kAll, binary},
      {CTL_OP_LT, &kAll, binary},
      {CTL_OP_LE, &kAll, binary},
      {CTL_OP_GT, &kAll, binary},
      {CTL_OP_GE, &kAll, binary},
      {CTL_OP_WHERE, &kAll, [](Catalog& c, ctl_op_id, ctl_dtype d) { where_cases(c, d); }},
      {CTL_OP_SUM, &kNumeric, reduce},
      {CTL_OP_MEAN, &kFloat, reduce},
      {CTL_OP_MAX, &kNumeric, reduce},
      {CTL_OP_MIN, &kNumeric, reduce},
      {CTL_OP_ARGMAX, &kNumeric, reduce},
      {CTL_OP_ARGMIN, &kNumeric, reduce},
      {CTL_OP_LOGSUMEXP, &kFloat, reduce},
      {CTL_OP_MATMUL, &kMatmul, [](Catalog& c, ctl_op_id, ctl_dtype d) { matmul_cases(c, d); }},
      {CTL_OP_SOFTMAX, &kFloat, softmax},
      {CTL_OP_LOG_SOFTMAX, &kFloat, softmax},
      {CTL_OP_LAYER_NORM, &kFloat, norm},
      {CTL_OP_RMS_NORM, &kFloat, norm},
      {CTL_OP_COPY, &kAll, [](Catalog& c, ctl_op_id, ctl_dtype d) { copy_cases(c, d); }},
      {CTL_OP_CAST, &kAll, [](Catalog& c, ctl_op_id, ctl_dtype d) { cast_cases(c, d); }},
      {CTL_OP_CONCAT, &kAll, [](Catalog& c, ctl_op_id, ctl_dtype d) { concat_cases(c, d); }},
      {CTL_OP_GATHER, &kAll, [](Catalog& c, ctl_op_id, ctl_dtype d) { gather_cases(c, d); }},
      {CTL_OP_SCATTER_ADD, &kNumeric, [](Catalog& c, ctl_op_id, ctl_dtype d) { scatter_add_cases(c, d); }},
      {CTL_OP_FILL, &kAll, creation},
      {CTL_OP_ARANGE, &kNumeric, creation},
      {CTL_OP_RANDOM_UNIFORM, &kFloat, creation},
      {CTL_OP_RANDOM_NORMAL, &kFloat, creation},
  };
  for (const auto& spec : ops) {
    for (ctl_dtype d : *spec.dtypes) spec.cases(cat, spec.op, d);
  }
  large_cases(cat);
  tail_cases(cat);
  threshold_cases(cat);
}

}  // namespace catalyst::conformance
