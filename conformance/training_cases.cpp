// training_cases.cpp — the numeric cases of the training ops: cross_entropy and its backward,
// adamw_step and the backward forms softmax_backward, log_softmax_backward,
// layer_norm_backward, rms_norm_backward, gelu_backward and gelu_tanh_backward (ABI 1.1),
// and sgd_step (ABI 1.2).
//
// They work like numeric_cases.cpp (one case is one op call, compared with the reference
// kernels; fixed variants, then random ones, then large f32 ones), with three differences:
//  - Level: a case is at `training` when every dtype it involves is required (f32 data,
//    i32 or i64 class ids), else at `full`.
//  - Inputs that are another op's result are that op's real result: the y of the softmax
//    backward ops is softmax / log_softmax of random x, and the mean and rstd of the norm
//    backward ops are layer_norm's / rms_norm's statistics of the x given, computed on the
//    reference and given to both devices as the same bytes. The backward formulas rely on
//    identities (sum(y) = 1, mean(xh) = 0, ...) that only such inputs satisfy.
//  - Tolerances are mostly `kSum` with a per-element S computed on the host from the inputs:
//    the bound of the op's actual arithmetic (see the comment above each op's cases), so a
//    device is judged relative to the magnitudes its result is made of, cancellation
//    included, and entries that must be exactly 0 (ignored rows) get no slack.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numbers>
#include <numeric>
#include <sstream>

#include "case.h"
#include "catalog.h"
#include "numeric_harness.h"

namespace catalyst::conformance {

// A tensor's elements in row-major order, widened to double.
std::vector<double> host_values(const ctl_tensor* t) {
  const ctl_dtype d = ctl_tensor_dtype(t);
  const size_t size = ctl_dtype_size(d);
  std::vector<unsigned char> bytes(static_cast<size_t>(ctl_tensor_numel(t)) * size);
  check_ok(ctl_tensor_to_host(t, bytes.data(), bytes.size()), "internal: reading values from the reference");
  std::vector<double> v(bytes.size() / size);
  for (size_t i = 0; i < v.size(); ++i) v[i] = load(bytes.data() + i * size, d);
  return v;
}

// Runs a forward op on the reference (ctl_op_run) and returns its outputs.
std::vector<TensorPtr> reference_run(ctl_op_id op, const std::vector<ctl_tensor*>& inputs, const void* attrs,
                                     size_t output_count) {
  std::vector<ctl_tensor*> outs(output_count, nullptr);
  check_ok(ctl_op_run(op, inputs.size(), inputs.data(), attrs, output_count, outs.data()),
           std::string("internal: ") + ctl_op_name(op) + " on the reference");
  std::vector<TensorPtr> owned;
  for (ctl_tensor* t : outs) owned.emplace_back(t);
  return owned;
}

std::vector<Tolerance> norm_backward_tolerances(bool layer, int64_t rows, int64_t n, const std::vector<double>& xv,
                                                const std::vector<double>& gv, const std::vector<double>& wv,
                                                const std::vector<double>& rstd, const std::vector<double>& mean) {
  std::vector<double> s_dx(static_cast<size_t>(rows * n)), s_dw(static_cast<size_t>(n), 0),
      s_db(static_cast<size_t>(n), 0);
  for (int64_t r = 0; r < rows; ++r) {
    const double rs = rstd[static_cast<size_t>(r)], mu = std::fabs(mean[static_cast<size_t>(r)]);
    double mean_g = 0, mean_gx = 0;
    for (int64_t i = 0; i < n; ++i) {
      const size_t e = static_cast<size_t>(r * n + i);
      const double g = std::fabs(gv[e] * wv[static_cast<size_t>(i)]), xh = rs * (std::fabs(xv[e]) + mu);
      mean_g += g / static_cast<double>(n);
      mean_gx += g * xh / static_cast<double>(n);
      s_dw[static_cast<size_t>(i)] += std::fabs(gv[e]) * xh;
      s_db[static_cast<size_t>(i)] += std::fabs(gv[e]);
    }
    for (int64_t i = 0; i < n; ++i) {
      const size_t e = static_cast<size_t>(r * n + i);
      const double g = std::fabs(gv[e] * wv[static_cast<size_t>(i)]), xh = rs * (std::fabs(xv[e]) + mu);
      s_dx[e] = rs * (g + (layer ? mean_g : 0) + xh * mean_gx);
    }
  }
  return {sum_tolerance(static_cast<double>(n) + 12, s_dx), sum_tolerance(static_cast<double>(rows) + 4, s_dw),
          sum_tolerance(static_cast<double>(rows), s_db)};
}

namespace {

constexpr int64_t kLarge = 4096;  // kLarge^2 = 2^24 elements

// ---- helpers ------------------------------------------------------------------------------

const char* reduction_word(ctl_reduction r) {
  switch (r) {
    case CTL_REDUCTION_MEAN:
      return "mean";
    case CTL_REDUCTION_SUM:
      return "sum";
    case CTL_REDUCTION_NONE:
      return "none";
  }
  return "?";
}

double uniform(std::mt19937_64& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}

std::vector<double> uniform_values(std::mt19937_64& rng, int64_t n, double lo, double hi) {
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = uniform(rng, lo, hi);
  return v;
}

// A contiguous tensor on the reference device only (the input of a forward op whose result
// a case uses as its own input).
TensorPtr reference_tensor(Harness& h, ctl_dtype d, const std::vector<int64_t>& shape,
                           const std::vector<double>& values) {
  std::vector<unsigned char> bytes(values.size() * ctl_dtype_size(d));
  for (size_t i = 0; i < values.size(); ++i) store(bytes.data() + i * ctl_dtype_size(d), d, values[i]);
  ctl_tensor* t = nullptr;
  check_ok(ctl_tensor_from_host(h.context().reference, d, shape.size(), shape.data(), bytes.data(), bytes.size(), &t),
           "internal: creating a tensor on the reference");
  return TensorPtr(t);
}


// An input holding exactly `values` (row-major in `shape`) in `layout`, on both devices:
// contiguous, permuted (a random permutation other than the identity of a contiguous base)
// or sliced (a random axis taken with step 2 or 3 from a longer base). Base elements outside
// the view hold NaN (integers: 1000003), so a device that reads past the view's strides
// shows it. kExpanded cannot hold arbitrary values and is made contiguous; kRandom picks one
// of the three.
Operand exact_input(Harness& h, ctl_dtype d, const std::vector<int64_t>& shape, Layout layout,
                    const std::vector<double>& values) {
  std::mt19937_64& rng = h.context().rng;
  const size_t rank = shape.size();
  if (layout == Layout::kRandom) {
    const Layout choices[] = {Layout::kContiguous, Layout::kPermuted, Layout::kSliced};
    layout = choices[rng() % 3];
  }
  if (layout == Layout::kExpanded || (layout == Layout::kPermuted && rank < 2) ||
      (layout == Layout::kSliced && rank < 1)) {
    layout = Layout::kContiguous;
  }
  std::vector<int64_t> base = shape;
  std::vector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  size_t axis = 0;
  int64_t start = 0, step = 1;
  if (layout == Layout::kPermuted) {
    do std::shuffle(perm.begin(), perm.end(), rng);
    while (std::is_sorted(perm.begin(), perm.end()));
    for (size_t i = 0; i < rank; ++i) base[static_cast<size_t>(perm[i])] = shape[i];
  } else if (layout == Layout::kSliced) {
    axis = rng() % rank;
    step = 2 + static_cast<int64_t>(rng() % 2);
    start = static_cast<int64_t>(rng() % 2);
    base[axis] = start + step * shape[axis] + static_cast<int64_t>(rng() % 2);
  }
  // Row-major strides of the base, and the view's strides and offset inside it.
  std::vector<int64_t> base_strides(rank, 1), view_strides(rank);
  for (size_t k = rank; k-- > 1;) base_strides[k - 1] = base_strides[k] * base[k];
  int64_t offset = 0;
  for (size_t i = 0; i < rank; ++i) view_strides[i] = base_strides[static_cast<size_t>(perm[i])];
  if (layout == Layout::kSliced) {
    view_strides[axis] *= step;
    offset = start * base_strides[axis];
  }
  std::vector<double> base_values(static_cast<size_t>(numel_of(base)), is_float(d) ? NAN : 1000003.0);
  std::vector<int64_t> index(rank, 0);
  for (size_t e = 0; e < values.size(); ++e) {
    int64_t at = offset;
    for (size_t k = 0; k < rank; ++k) at += index[k] * view_strides[k];
    base_values[static_cast<size_t>(at)] = values[e];
    for (size_t k = rank; k-- > 0;) {
      if (++index[k] < shape[k]) break;
      index[k] = 0;
    }
  }
  Operand op = h.input_from(d, base, base_values);
  if (layout == Layout::kContiguous) {
    op.layout = "contiguous";
    return op;
  }
  for (auto [side, base_of] : {std::pair{&op.device, &op.device_base}, std::pair{&op.reference, &op.reference_base}}) {
    ctl_tensor* view = nullptr;
    if (layout == Layout::kPermuted) {
      check_ok(ctl_tensor_permute(side->get(), rank, perm.data(), &view), "permuting an input");
    } else {
      check_ok(
          ctl_tensor_slice(side->get(), static_cast<int64_t>(axis), start, start + step * shape[axis], step, &view),
          "slicing an input");
    }
    *base_of = std::move(*side);  // kept, so that a write into the gaps is seen
    side->reset(view);
  }
  op.layout = layout == Layout::kPermuted ? "permuted" : "sliced with a step";
  return op;
}

// The lines of a row-major shape along `axis`: element (o, k, i) is at (o * n + k) * inner + i.
struct Lines {
  int64_t outer = 1, n = 1, inner = 1;
  size_t at(int64_t o, int64_t k, int64_t i) const { return static_cast<size_t>((o * n + k) * inner + i); }
};
Lines lines_of(const std::vector<int64_t>& shape, size_t axis) {
  Lines l;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (k < axis) l.outer *= shape[k];
    if (k == axis) l.n = shape[k];
    if (k > axis) l.inner *= shape[k];
  }
  return l;
}

// NumPy broadcasting of two shapes, and a row-major array of one of them spread to the result.
std::vector<int64_t> broadcast_shape(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out(std::max(a.size(), b.size()));
  for (size_t k = 0; k < out.size(); ++k) {
    const size_t from_end = out.size() - 1 - k;
    const int64_t x = from_end < a.size() ? a[a.size() - 1 - from_end] : 1;
    const int64_t y = from_end < b.size() ? b[b.size() - 1 - from_end] : 1;
    out[k] = x == 1 ? y : x;
  }
  return out;
}
std::vector<double> broadcast_values(const std::vector<double>& v, const std::vector<int64_t>& shape,
                                     const std::vector<int64_t>& to) {
  const size_t lead = to.size() - shape.size();
  std::vector<int64_t> strides(to.size(), 0);
  int64_t s = 1;
  for (size_t k = shape.size(); k-- > 0;) {
    strides[lead + k] = shape[k] == 1 ? 0 : s;
    s *= shape[k];
  }
  std::vector<double> out(static_cast<size_t>(numel_of(to)));
  std::vector<int64_t> index(to.size(), 0);
  for (size_t e = 0; e < out.size(); ++e) {
    int64_t at = 0;
    for (size_t k = 0; k < to.size(); ++k) at += index[k] * strides[k];
    out[e] = v[static_cast<size_t>(at)];
    for (size_t k = to.size(); k-- > 0;) {
      if (++index[k] < to[k]) break;
      index[k] = 0;
    }
  }
  return out;
}

// A random shape of `rank` with dims 1-5 (0 once in a while), as numeric_cases.cpp draws them.
std::vector<int64_t> random_shape(std::mt19937_64& rng, size_t rank) {
  std::vector<int64_t> s(rank);
  for (auto& d : s) d = (rng() % 16 == 0) ? 0 : 1 + static_cast<int64_t>(rng() % 5);
  return s;
}

// ---- cross_entropy and cross_entropy_backward ---------------------------------------------
//
// Tolerances, with R rows of C classes, g_r the gradient a row gets, p = softmax(z_r):
//  - cross_entropy, NONE: loss_r = lse_r - z_t, lse_r = m + log(sum exp(z - m)). The sum of C
//    exponentials is off by (C + 2) u relative, which the log turns into an absolute error;
//    each exp of a rounded z - m (|z - m| <= 4 for the values used here) and the log add a
//    few u; the final subtraction rounds |lse| + |z_t|. kSum with n = C + 16 and
//    S_r = 1 + |lse_r| + |z_t| (relative to the terms the loss is made of, not to the loss:
//    a loss near 0 from a large lse is as exact as lse). Ignored rows: S = 0, they must be 0.
//  - MEAN / SUM: each row's error as above, plus the sum of R losses, (R + 2) u sum|loss_r|:
//    kSum with n = R + C + 16 and S = sum of S_r over the rows counted (divided by the count
//    for MEAN).
//  - cross_entropy_backward: g_r (p_i - [i == t]). p_i is off, relative, by the sum of C
//    exponentials, the exp, the division, and the rounding of its argument: z - m, or, in
//    the log-domain form exp(z - lse) that PyTorch uses, z - lse with lse itself rounded,
//    u (|z_i| + |lse_r|) absolute (this dominates for logits far from 0). Then the
//    subtraction, the products and g / count: kSum with n = C + 24 and
//    S = |g_r| (p_i (1 + 2 (|z_i| + |lse_r|) / (C + 26)) + [i == t]), which gives p_i a
//    relative budget of (C + 26 + 2 |z_i| + 2 |lse_r|) u. Ignored rows must be exactly 0.
// NaN rows (an out-of-range target, NaN or all -inf logits) are compared by position only.

enum class Targets {
  kValid,            // class ids in [0, C)
  kSomeIgnored,      // every third row (from row 1) is the ignore_index
  kAllIgnored,       // every row is the ignore_index
  kOutOfRange,       // row 0 is C and the middle row -1, neither ignored: NaN
  kNegativeIgnored,  // ignore_index -1, every other row -1: ignored, not NaN
};

struct CeVariant {
  std::vector<int64_t> shape;  // logits; the last axis is C
  Layout logits = Layout::kContiguous;
  Layout target = Layout::kContiguous;
  ctl_dtype target_dtype = CTL_DTYPE_I64;
  ctl_reduction reduction = CTL_REDUCTION_MEAN;
  Targets targets = Targets::kValid;
  bool ignore_set = false;
  int64_t ignore_index = -100;
  OutputLayout out = OutputLayout::kContiguous;
  Layout grad = Layout::kContiguous;  // backward with NONE: grad_loss's layout
  double offset = 0;                  // added to every logit (needs the max subtracted)
  bool specials = false;              // fixed [6,5] logits with -inf and NaN
};

std::string ce_label(const CeVariant& v) {
  std::ostringstream o;
  o << shape_label(v.shape) << " " << layout_word(v.logits) << " logits, " << ctl_dtype_name(v.target_dtype) << " "
    << layout_word(v.target) << " target, " << reduction_word(v.reduction);
  if (v.ignore_set) o << ", ignore_index " << v.ignore_index;
  switch (v.targets) {
    case Targets::kValid:
      break;
    case Targets::kSomeIgnored:
      o << " (every third row ignored)";
      break;
    case Targets::kAllIgnored:
      o << " (every row ignored)";
      break;
    case Targets::kOutOfRange:
      o << ", targets C and -1 not ignored (NaN rows)";
      break;
    case Targets::kNegativeIgnored:
      o << " (every other row -1, ignored)";
      break;
  }
  if (v.offset != 0) o << ", logits offset by " << v.offset;
  if (v.specials) o << ", -inf and NaN logits";
  o << ", " << output_word(v.out);
  return o.str();
}

// The fixed logits of the specials variant ([6,5]) and their targets.
const std::vector<double> kCeSpecialLogits = {
    1,         -INFINITY, 0.5,       2,         -1,         // -inf off the target: finite loss
    -INFINITY, 1,         2,         0,         0,          // -inf at the target: loss +inf
    -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY,  // all -inf: NaN
    NAN,       1,         2,         3,         4,          // NaN: NaN
    0.5,       0.25,      -1,        1.5,       0,          // finite
    3,         3,         3,         3,         3};         // equal logits: log 5
const std::vector<double> kCeSpecialTargets = {0, 0, 3, 2, 4, 1};

void run_cross_entropy(Harness& h, ctl_op_id op, ctl_dtype d, const CeVariant& v) {
  auto& rng = h.context().rng;
  const std::vector<int64_t> tshape(v.shape.begin(), v.shape.end() - 1);
  const int64_t rows = numel_of(tshape), classes = v.shape.back();
  // Logits: random finite values in a view, or chosen values.
  Operand logits;
  if (v.specials) {
    logits = exact_input(h, d, v.shape, v.logits, kCeSpecialLogits);
  } else if (v.offset != 0) {
    std::vector<double> z = uniform_values(rng, numel_of(v.shape), -2, 2);
    for (double& x : z) x += v.offset;
    logits = exact_input(h, d, v.shape, v.logits, z);
  } else {
    logits = h.input(d, v.shape, v.logits, Values::kFinite);
  }
  // Targets.
  std::vector<double> t(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    double id = classes > 0 ? static_cast<double>(rng() % static_cast<uint64_t>(classes)) : 0;
    switch (v.targets) {
      case Targets::kValid:
        break;
      case Targets::kSomeIgnored:
        if (r % 3 == 1) id = static_cast<double>(v.ignore_index);
        break;
      case Targets::kAllIgnored:
        id = static_cast<double>(v.ignore_index);
        break;
      case Targets::kOutOfRange:
        if (r == 0) id = static_cast<double>(classes);
        if (r == rows / 2 && r > 0) id = -1;
        break;
      case Targets::kNegativeIgnored:
        if (r % 2 == 0) id = -1;
        break;
    }
    t[static_cast<size_t>(r)] = id;
  }
  if (v.specials) t = kCeSpecialTargets;
  Operand target = exact_input(h, v.target_dtype, tshape, v.target, t);

  ctl_cross_entropy_attrs attrs{};
  attrs.struct_size = CTL_CROSS_ENTROPY_ATTRS_STRUCT_SIZE;
  attrs.reduction = v.reduction;
  attrs.ignore_index = v.ignore_index;
  attrs.ignore_index_set = v.ignore_set;

  // Per row: counted or ignored, in range, lse, and the tolerance's S.
  const std::vector<double> z = host_values(logits.reference.get());
  const auto row = [&](int64_t r, int64_t i) { return z[static_cast<size_t>(r * classes + i)]; };
  std::vector<bool> counted(static_cast<size_t>(rows)), in_range(static_cast<size_t>(rows));
  std::vector<double> lse(static_cast<size_t>(rows), 0);
  double count = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const double id = t[static_cast<size_t>(r)];
    counted[static_cast<size_t>(r)] = !(v.ignore_set && id == static_cast<double>(v.ignore_index));
    in_range[static_cast<size_t>(r)] = id >= 0 && id < static_cast<double>(classes);
    if (counted[static_cast<size_t>(r)]) ++count;
    if (classes == 0) continue;
    double m = -INFINITY;
    for (int64_t i = 0; i < classes; ++i) m = std::isnan(row(r, i)) || std::isnan(m) ? NAN : std::max(m, row(r, i));
    double s = 0;
    for (int64_t i = 0; i < classes; ++i) s += std::exp(row(r, i) - m);
    lse[static_cast<size_t>(r)] = std::isinf(m) ? m : m + std::log(s);
  }
  const auto good = [&](int64_t r) { return counted[static_cast<size_t>(r)] && in_range[static_cast<size_t>(r)]; };

  std::vector<const Operand*> ins = {&logits, &target};
  Tolerance tol;
  Operand grad;
  if (op == CTL_OP_CROSS_ENTROPY) {
    std::vector<double> s(static_cast<size_t>(rows), 0);
    double total = 0;
    for (int64_t r = 0; r < rows; ++r) {
      if (!good(r)) continue;
      const double zt = row(r, static_cast<int64_t>(t[static_cast<size_t>(r)]));
      s[static_cast<size_t>(r)] = 1 + std::fabs(lse[static_cast<size_t>(r)]) + std::fabs(zt);
      total += s[static_cast<size_t>(r)];
    }
    if (v.reduction == CTL_REDUCTION_NONE) {
      tol = sum_tolerance(static_cast<double>(classes) + 16, s);
    } else {
      const double scale = v.reduction == CTL_REDUCTION_MEAN ? (count > 0 ? total / count : 0) : total;
      tol = sum_tolerance(static_cast<double>(rows + classes) + 16, {scale});
    }
  } else {
    const bool per_row = v.reduction == CTL_REDUCTION_NONE;
    grad =
        h.input(d, per_row ? tshape : std::vector<int64_t>{}, per_row ? v.grad : Layout::kContiguous, Values::kFinite);
    ins.push_back(&grad);
    const std::vector<double> g = host_values(grad.reference.get());
    std::vector<double> s(static_cast<size_t>(rows * classes), 0);
    for (int64_t r = 0; r < rows; ++r) {
      if (!good(r)) continue;
      double gr = per_row ? g[static_cast<size_t>(r)] : g[0];
      if (v.reduction == CTL_REDUCTION_MEAN) gr /= count;
      const int64_t target_class = static_cast<int64_t>(t[static_cast<size_t>(r)]);
      for (int64_t i = 0; i < classes; ++i) {
        const double z_i = row(r, i), l = lse[static_cast<size_t>(r)];
        const double p = std::exp(z_i - l);
        // p == 0 (z_i = -inf) has nothing to round; inf * 0 would make the bound NaN.
        const double budget =
            p > 0 ? p * (1 + 2 * (std::fabs(z_i) + std::fabs(l)) / (static_cast<double>(classes) + 26)) : 0;
        s[static_cast<size_t>(r * classes + i)] = std::fabs(gr) * (budget + (i == target_class ? 1 : 0));
      }
    }
    tol = sum_tolerance(static_cast<double>(classes) + 24, s);
  }
  h.run(op, ins, &attrs, 1, {tol}, v.out);
}

std::vector<CeVariant> ce_variants() {
  using L = Layout;
  const ctl_dtype i32 = CTL_DTYPE_I32, i64 = CTL_DTYPE_I64;
  const ctl_reduction mean = CTL_REDUCTION_MEAN, sum = CTL_REDUCTION_SUM, none = CTL_REDUCTION_NONE;
  std::vector<CeVariant> v;
  auto add = [&](CeVariant c) { v.push_back(std::move(c)); };
  add({.shape = {8, 10}, .target_dtype = i64, .reduction = mean});
  add({.shape = {8, 10}, .target_dtype = i32, .reduction = sum});
  add({.shape = {8, 10}, .target_dtype = i64, .reduction = none, .out = OutputLayout::kGapped});
  add({.shape = {6, 7}, .logits = L::kPermuted, .target = L::kSliced, .target_dtype = i32, .reduction = mean});
  add({.shape = {3, 4, 9},
       .logits = L::kSliced,
       .target = L::kPermuted,
       .target_dtype = i64,
       .reduction = none,
       .out = OutputLayout::kTransposed,
       .grad = L::kSliced});
  add({.shape = {10}, .target_dtype = i64, .reduction = mean});
  add({.shape = {10}, .target_dtype = i32, .reduction = none});
  add({.shape = {2, 3, 2, 5},
       .logits = L::kPermuted,
       .target_dtype = i32,
       .reduction = none,
       .out = OutputLayout::kGapped,
       .grad = L::kPermuted});
  add({.shape = {2, 3, 2, 5}, .target = L::kSliced, .target_dtype = i64, .reduction = sum});
  add({.shape = {5, 6}, .logits = L::kExpanded, .target_dtype = i64, .reduction = mean});
  add({.shape = {0, 5}, .target_dtype = i64, .reduction = mean});
  add({.shape = {0, 5}, .target_dtype = i32, .reduction = sum});
  add({.shape = {0, 5}, .target_dtype = i64, .reduction = none});
  add({.shape = {4, 257}, .target_dtype = i64, .reduction = mean});
  add({.shape = {3, 1031}, .target_dtype = i32, .reduction = sum});
  add({.shape = {2, 1031}, .logits = L::kSliced, .target_dtype = i64, .reduction = none});
  add({.shape = {12, 6}, .target_dtype = i64, .reduction = mean, .targets = Targets::kSomeIgnored, .ignore_set = true});
  add({.shape = {12, 6}, .target_dtype = i32, .reduction = sum, .targets = Targets::kSomeIgnored, .ignore_set = true});
  add({.shape = {12, 6},
       .target = L::kSliced,
       .target_dtype = i64,
       .reduction = none,
       .targets = Targets::kSomeIgnored,
       .ignore_set = true,
       .out = OutputLayout::kGapped});
  add({.shape = {12, 6},
       .target_dtype = i32,
       .reduction = mean,
       .targets = Targets::kSomeIgnored,
       .ignore_set = true,
       .ignore_index = 2});
  add({.shape = {5, 4}, .target_dtype = i64, .reduction = mean, .targets = Targets::kAllIgnored, .ignore_set = true});
  add({.shape = {5, 4}, .target_dtype = i32, .reduction = sum, .targets = Targets::kAllIgnored, .ignore_set = true});
  add({.shape = {6, 5}, .target_dtype = i64, .reduction = none, .targets = Targets::kOutOfRange});
  add({.shape = {6, 5}, .target_dtype = i32, .reduction = mean, .targets = Targets::kOutOfRange});
  add({.shape = {6, 5},
       .target_dtype = i64,
       .reduction = mean,
       .targets = Targets::kNegativeIgnored,
       .ignore_set = true,
       .ignore_index = -1});
  add({.shape = {8, 10}, .target_dtype = i64, .reduction = sum, .ignore_set = true});  // set, but nothing ignored
  add({.shape = {5, 1}, .target_dtype = i64, .reduction = mean});                      // one class: loss 0
  add({.shape = {4, 0},
       .target_dtype = i64,
       .reduction = none,
       .targets = Targets::kSomeIgnored,
       .ignore_set = true});  // no classes: NaN unless ignored
  add({.shape = {7, 9}, .logits = L::kPermuted, .target_dtype = i32, .reduction = mean, .offset = 1000});
  add({.shape = {6, 5}, .target_dtype = i64, .reduction = none, .specials = true});
  add({.shape = {6, 5}, .target_dtype = i32, .reduction = mean, .specials = true});
  return v;
}

void cross_entropy_cases(Catalog& cat, ctl_op_id op, ctl_dtype d) {
  for (const CeVariant& v : ce_variants()) {
    cat.add(op, {d, v.target_dtype}, ce_label(v), [=](Harness& h) { run_cross_entropy(h, op, d, v); });
  }
  // Random: rank 1-4 logits (C from 0 to 40, rows now and then 0), views, any reduction,
  // valid, partly or wholly ignored, or out-of-range targets. A case's dtypes are known when
  // it is registered, so the target dtype alternates by variant rather than being drawn.
  for (int k = 0; k < 3; ++k) {
    const ctl_dtype target_dtype = k % 2 ? CTL_DTYPE_I32 : CTL_DTYPE_I64;
    cat.add(op, {d, target_dtype},
            std::string("random rank 1-4 logits, views, reduction and targets, ") + ctl_dtype_name(target_dtype) +
                " target",
            [=](Harness& h) {
              auto& rng = h.context().rng;
              CeVariant v;
              v.shape = random_shape(rng, rng() % 4);
              v.shape.push_back(rng() % 16 == 0 ? 0 : 1 + static_cast<int64_t>(rng() % 40));
              v.logits = Layout::kRandom;
              v.target = Layout::kRandom;
              v.grad = Layout::kRandom;
              v.target_dtype = target_dtype;
              v.reduction = static_cast<ctl_reduction>(rng() % 3);
              v.targets = static_cast<Targets>(rng() % 3 == 0 ? 0 : rng() % 4);
              v.ignore_set = v.targets == Targets::kSomeIgnored || v.targets == Targets::kAllIgnored || rng() % 2;
              v.out = static_cast<OutputLayout>(rng() % 3);
              run_cross_entropy(h, op, d, v);
            });
  }
}

// ---- adamw_step ---------------------------------------------------------------------------
//
// Tolerance: kTranscendental for param, exp_avg and exp_avg_sq. Each is a few roundings of
// O(1) values: exp_avg = beta1 m + (1 - beta1) g may cancel, but its error stays below a few
// u (|m| + |g|) <= 16u with |m|, |g| <= 2 here, inside the 32u absolute term; exp_avg_sq
// adds non-negative terms; param moves by at most about lr * 1.5 (the states satisfy
// exp_avg^2 <= exp_avg_sq, as real ones roughly do), so even a device that computes the
// bias corrections 1 - beta^step in f32 (relative error up to ~1000u for beta2 = 0.999) is
// off by under 1u on param. f16 / bf16: computed in f32 and rounded once (2u|e| + 2u).

struct AdamwVariant {
  std::vector<int64_t> shape;
  Layout grad = Layout::kContiguous;
  OutputLayout out = OutputLayout::kContiguous;
  uint64_t step = 1;
  double weight_decay = 0;
  bool zero_state = false;  // exp_avg = exp_avg_sq = 0, as before the first step
  Values grad_values = Values::kFinite;
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
};

std::string adamw_label(const AdamwVariant& v) {
  std::ostringstream o;
  o << shape_label(v.shape) << " " << layout_word(v.grad) << " grad"
    << (v.grad_values == Values::kGeneral ? " with specials" : "") << ", step " << v.step << ", lr " << v.lr
    << ", betas " << v.beta1 << "/" << v.beta2 << ", eps " << v.eps << ", weight_decay " << v.weight_decay
    << (v.zero_state ? ", zero state" : ", random state") << ", " << output_word(v.out);
  return o.str();
}

void run_adamw(Harness& h, ctl_dtype d, const AdamwVariant& v) {
  auto& rng = h.context().rng;
  const int64_t n = numel_of(v.shape);
  Operand grad = h.input(d, v.shape, v.grad, v.grad_values);
  std::vector<double> p = uniform_values(rng, n, -2, 2);
  std::vector<double> m(static_cast<size_t>(n), 0), s(static_cast<size_t>(n), 0);
  if (!v.zero_state) {
    for (size_t i = 0; i < m.size(); ++i) {
      m[i] = uniform(rng, -2, 2);
      s[i] = m[i] * m[i] + uniform(rng, 0, 1);
    }
  }
  Operand param = h.input_from(d, v.shape, p);
  Operand exp_avg = h.input_from(d, v.shape, m);
  Operand exp_avg_sq = h.input_from(d, v.shape, s);
  ctl_adamw_attrs attrs{};
  attrs.struct_size = CTL_ADAMW_ATTRS_STRUCT_SIZE;
  attrs.lr = v.lr;
  attrs.beta1 = v.beta1;
  attrs.beta2 = v.beta2;
  attrs.eps = v.eps;
  attrs.weight_decay = v.weight_decay;
  attrs.step = v.step;
  h.run(CTL_OP_ADAMW_STEP, {&grad}, &attrs, 3, {Tol::kTranscendental}, v.out, {&param, &exp_avg, &exp_avg_sq});
}

void adamw_cases(Catalog& cat, ctl_dtype d) {
  using L = Layout;
  using O = OutputLayout;
  std::vector<AdamwVariant> fixed = {
      {.shape = {1000}, .step = 1, .weight_decay = 0, .zero_state = true},
      {.shape = {1000}, .out = O::kGapped, .step = 1, .weight_decay = 0.01, .zero_state = true},
      {.shape = {33, 31}, .grad = L::kPermuted, .out = O::kTransposed, .step = 7, .weight_decay = 0.01},
      {.shape = {33, 31}, .grad = L::kSliced, .step = 7, .weight_decay = 0},
      {.shape = {4, 5, 6}, .grad = L::kPermuted, .out = O::kGapped, .step = 1, .weight_decay = 0.01},
      {.shape = {257}, .step = 7, .weight_decay = 0.01},
      {.shape = {1031}, .grad = L::kSliced, .out = O::kGapped, .step = 7, .weight_decay = 0},
      {.shape = {}, .step = 3, .weight_decay = 0.01},
      {.shape = {0, 4}, .step = 1, .weight_decay = 0.01},
      {.shape = {2, 3, 4, 5}, .grad = L::kExpanded, .out = O::kTransposed, .step = 7, .weight_decay = 0.01},
      {.shape = {64}, .step = 7, .weight_decay = 0.01, .grad_values = Values::kGeneral},
      {.shape = {100}, .step = 2, .weight_decay = 0.1, .lr = 1e-2, .beta1 = 0.5, .beta2 = 0.9, .eps = 1e-6},
      {.shape = {3, 7}, .step = 1000000, .weight_decay = 0.01},
      {.shape = {50}, .step = 1, .weight_decay = 0, .zero_state = true, .beta1 = 0, .beta2 = 0},
  };
  for (const AdamwVariant& v : fixed) {
    cat.add(CTL_OP_ADAMW_STEP, d, adamw_label(v), [=](Harness& h) { run_adamw(h, d, v); });
  }
  for (int k = 0; k < 3; ++k) {
    cat.add(CTL_OP_ADAMW_STEP, d, "random rank 0-4 shape, grad view, step 1-10, weight_decay, state", [=](Harness& h) {
      auto& rng = h.context().rng;
      AdamwVariant v;
      v.shape = random_shape(rng, rng() % 5);
      v.grad = Layout::kRandom;
      v.out = static_cast<OutputLayout>(rng() % 3);
      v.step = 1 + rng() % 10;
      v.weight_decay = rng() % 2 ? 0.01 : 0;
      v.zero_state = rng() % 4 == 0;
      run_adamw(h, d, v);
    });
  }
}

// ---- sgd_step -------------------------------------------------------------------------------
//
// Tolerance: kTranscendental for param and momentum_buf, as for adamw_step. Each is a few
// roundings of O(1) values (param, buffer and grad in [-2, 2]): the buffer's
// momentum * buf + (1 - dampening) * g may cancel, but its error stays below a few
// u (|buf| + |g|) <= 16u, inside the 32u absolute term; param moves by lr * (at most about
// 8). f16 / bf16: computed in at least f32 and rounded once (2u|e| + 2u).

struct SgdVariant {
  std::vector<int64_t> shape;
  Layout grad = Layout::kContiguous;
  OutputLayout out = OutputLayout::kContiguous;
  double lr = 0.01, momentum = 0.9, dampening = 0, weight_decay = 0;
  bool nesterov = false;
  bool zero_buffer = false;  // as before the first step
  Values grad_values = Values::kFinite;
};

std::string sgd_label(const SgdVariant& v) {
  std::ostringstream o;
  o << shape_label(v.shape) << " " << layout_word(v.grad) << " grad"
    << (v.grad_values == Values::kGeneral ? " with specials" : "") << ", lr " << v.lr << ", momentum " << v.momentum
    << ", dampening " << v.dampening << ", weight_decay " << v.weight_decay << (v.nesterov ? ", nesterov" : "")
    << (v.momentum == 0 ? ", no buffer"
        : v.zero_buffer ? ", zero buffer"
                        : ", random buffer")
    << ", " << output_word(v.out);
  return o.str();
}

void run_sgd(Harness& h, ctl_dtype d, const SgdVariant& v) {
  auto& rng = h.context().rng;
  const int64_t n = numel_of(v.shape);
  Operand grad = h.input(d, v.shape, v.grad, v.grad_values);
  Operand param = h.input_from(d, v.shape, uniform_values(rng, n, -2, 2));
  const bool buffer = v.momentum != 0;
  Operand momentum_buf = h.input_from(
      d, v.shape, v.zero_buffer ? std::vector<double>(static_cast<size_t>(n), 0) : uniform_values(rng, n, -2, 2));
  ctl_sgd_attrs attrs{};
  attrs.struct_size = CTL_SGD_ATTRS_STRUCT_SIZE;
  attrs.lr = v.lr;
  attrs.momentum = v.momentum;
  attrs.dampening = v.dampening;
  attrs.weight_decay = v.weight_decay;
  attrs.nesterov = v.nesterov;
  h.run(CTL_OP_SGD_STEP, {&grad}, &attrs, 2, {Tol::kTranscendental}, v.out, {&param, buffer ? &momentum_buf : nullptr},
        {true, buffer});
}

void sgd_cases(Catalog& cat, ctl_dtype d) {
  using L = Layout;
  using O = OutputLayout;
  std::vector<SgdVariant> fixed = {
      {.shape = {1000}, .zero_buffer = true},
      {.shape = {1000}, .momentum = 0},
      {.shape = {1000}, .out = O::kGapped, .momentum = 0, .weight_decay = 0.01},
      {.shape = {33, 31}, .grad = L::kPermuted, .out = O::kTransposed, .weight_decay = 1e-4},
      {.shape = {33, 31}, .grad = L::kSliced, .nesterov = true},
      {.shape = {4, 5, 6}, .grad = L::kPermuted, .out = O::kGapped, .dampening = 0.1},
      {.shape = {257}, .lr = 0.1, .momentum = 0.5, .weight_decay = 0.01, .nesterov = true},
      {.shape = {1031}, .grad = L::kSliced, .out = O::kGapped, .dampening = 1},
      {.shape = {}, .weight_decay = 0.01},
      {.shape = {0, 4}},
      {.shape = {2, 3, 4, 5}, .grad = L::kExpanded, .out = O::kTransposed, .weight_decay = 0.01},
      {.shape = {64}, .weight_decay = 0.01, .grad_values = Values::kGeneral},
      {.shape = {64}, .momentum = 0, .grad_values = Values::kGeneral},
  };
  for (const SgdVariant& v : fixed) {
    cat.add(CTL_OP_SGD_STEP, d, sgd_label(v), [=](Harness& h) { run_sgd(h, d, v); });
  }
  for (int k = 0; k < 3; ++k) {
    cat.add(CTL_OP_SGD_STEP, d, "random rank 0-4 shape, grad view, momentum, dampening, nesterov, weight_decay",
            [=](Harness& h) {
              auto& rng = h.context().rng;
              SgdVariant v;
              v.shape = random_shape(rng, rng() % 5);
              v.grad = Layout::kRandom;
              v.out = static_cast<OutputLayout>(rng() % 3);
              v.momentum = rng() % 4 == 0 ? 0 : 0.9;
              v.nesterov = v.momentum != 0 && rng() % 2;
              v.dampening = v.nesterov || rng() % 2 ? 0 : 0.5;
              v.weight_decay = rng() % 2 ? 0.01 : 0;
              v.zero_buffer = rng() % 4 == 0;
              run_sgd(h, d, v);
            });
  }
}

// ---- softmax_backward and log_softmax_backward ----------------------------------------------
//
// y is softmax / log_softmax of random x on the reference. Tolerances, per line along the
// axis (N elements), kSum with S per element, computed on the host:
//  - softmax_backward: dx_i = y_i (dy_i - s), s = sum_j dy_j y_j: s is a sum of N products,
//    then a subtraction and a product: n = N + 4 and S_i = y_i (|dy_i| + sum_j |dy_j y_j|).
//  - log_softmax_backward: dx_i = dy_i - exp(y_i) s, s = sum_j dy_j: s is a sum of N terms,
//    exp(y_i) a few ulp, then a product and a subtraction: n = N + 10 and
//    S_i = |dy_i| + exp(y_i) sum_j |dy_j|.

struct SoftmaxVariant {
  std::vector<int64_t> shape;
  Layout y = Layout::kContiguous;
  int32_t axis = -1;
  bool null_attrs = false;  // attrs NULL: the last axis
  Layout dy = Layout::kContiguous;
  OutputLayout out = OutputLayout::kContiguous;
  bool specials = false;  // x rows with -inf, a NaN in dy
};

void run_softmax_backward(Harness& h, ctl_op_id op, ctl_dtype d, const SoftmaxVariant& v) {
  auto& rng = h.context().rng;
  const bool log = op == CTL_OP_LOG_SOFTMAX_BACKWARD;
  const size_t rank = v.shape.size();
  const size_t axis = static_cast<size_t>(v.axis < 0 ? v.axis + static_cast<int32_t>(rank) : v.axis);
  const int64_t n = numel_of(v.shape);
  // y: the forward op's result on the reference, the same bytes on both devices.
  std::vector<double> x = uniform_values(rng, n, -2, 2);
  if (v.specials) {
    for (int64_t i = 0; i < v.shape.back(); i += 2) x[static_cast<size_t>(i)] = -INFINITY;  // row 0: -inf mixed in
  }
  TensorPtr x_ref = reference_tensor(h, d, v.shape, x);
  ctl_axis_attrs attrs{CTL_AXIS_ATTRS_STRUCT_SIZE, v.axis};
  const std::vector<TensorPtr> fwd = reference_run(log ? CTL_OP_LOG_SOFTMAX : CTL_OP_SOFTMAX, {x_ref.get()}, &attrs, 1);
  const std::vector<double> yv = host_values(fwd[0].get());
  Operand y = exact_input(h, d, v.shape, v.y, yv);
  Operand dy;
  std::vector<double> g;
  if (v.specials) {
    g = uniform_values(rng, n, -2, 2);
    g[g.size() - 2] = NAN;  // the last line along the last axis becomes NaN
    dy = exact_input(h, d, v.shape, v.dy, g);
  } else {
    dy = h.input(d, v.shape, v.dy, Values::kFinite);
  }
  g = host_values(dy.reference.get());
  const Lines l = lines_of(v.shape, axis);
  std::vector<double> s(static_cast<size_t>(n), 0);
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t i = 0; i < l.inner; ++i) {
      double line = 0;
      for (int64_t k = 0; k < l.n; ++k) {
        const size_t e = l.at(o, k, i);
        line += log ? std::fabs(g[e]) : std::fabs(g[e] * yv[e]);
      }
      for (int64_t k = 0; k < l.n; ++k) {
        const size_t e = l.at(o, k, i);
        s[e] = log ? std::fabs(g[e]) + std::exp(yv[e]) * line : yv[e] * (std::fabs(g[e]) + line);
      }
    }
  }
  const Tolerance tol = sum_tolerance(static_cast<double>(l.n) + (log ? 10 : 4), s);
  h.run(op, {&y, &dy}, v.null_attrs ? nullptr : &attrs, 1, {tol}, v.out);
}

void softmax_backward_cases(Catalog& cat, ctl_op_id op, ctl_dtype d) {
  using L = Layout;
  using O = OutputLayout;
  const std::vector<SoftmaxVariant> fixed = {
      {.shape = {4, 7}, .axis = -1},
      {.shape = {6, 5}, .y = L::kPermuted, .axis = 0, .dy = L::kSliced, .out = O::kTransposed},
      {.shape = {3, 4, 5}, .y = L::kSliced, .axis = 1, .dy = L::kPermuted, .out = O::kGapped},
      {.shape = {0, 4}, .axis = -1},
      {.shape = {2, 1031}, .axis = 1},
      {.shape = {3, 257}, .axis = -1, .dy = L::kPermuted, .out = O::kGapped},
      {.shape = {5}, .axis = 0},
      {.shape = {2, 3, 4, 5}, .axis = 2, .dy = L::kSliced, .out = O::kTransposed},
      {.shape = {2, 2, 2, 2, 3}, .y = L::kPermuted, .axis = 3},
      {.shape = {4, 6}, .null_attrs = true, .dy = L::kExpanded},
      {.shape = {6, 1}, .axis = -1},
      {.shape = {4, 5}, .axis = -1, .specials = true},
      {.shape = {3, 0}, .axis = -1},
  };
  for (const SoftmaxVariant& v : fixed) {
    std::string label = shape_label(v.shape) + " " + layout_word(v.y) + " y, " + layout_word(v.dy) + " dy, " +
                        (v.null_attrs ? "attrs NULL (last axis)" : "axis " + std::to_string(v.axis)) + ", " +
                        output_word(v.out);
    if (v.specials) label += ", -inf in x's first row, NaN in dy's last row";
    cat.add(op, d, label, [=](Harness& h) { run_softmax_backward(h, op, d, v); });
  }
  for (int k = 0; k < 3; ++k) {
    cat.add(op, d, "random rank 1-4 shape, axis and views", [=](Harness& h) {
      auto& rng = h.context().rng;
      SoftmaxVariant v;
      v.shape = random_shape(rng, 1 + rng() % 4);
      v.axis = static_cast<int32_t>(rng() % v.shape.size());
      v.y = Layout::kRandom;
      v.dy = Layout::kRandom;
      v.out = static_cast<OutputLayout>(rng() % 3);
      run_softmax_backward(h, op, d, v);
    });
  }
}

// ---- layer_norm_backward and rms_norm_backward -------------------------------------------
//
// mean and rstd are the forward op's statistics of x (f32 for f16 / bf16 x), from the
// reference. With g = dy * weight, xh = (x - mean) rstd (rms: x rstd) and, to allow a
// device to compute xh as x * rstd - mean * rstd, |xh|' = rstd (|x| + |mean|) (rms: rstd |x|):
//  - dx = rstd (g - mean_N(g) - xh mean_N(g xh)) (rms: without mean_N(g)): two sums of N
//    terms, each term a few roundings, then three roundings per element: kSum with
//    n = N + 12 and S_i = rstd (|g_i| + mean_N|g| + |xh_i|' mean_N(|g| |xh|')) (rms: without
//    mean_N|g|). Relative to the terms, not to dx: dx cancels to nearly 0 when N is small.
//  - dweight = sum over R rows of dy xh: kSum with n = R + 4 (the roundings of xh and of the
//    product) and S = sum over rows of |dy| |xh|'.
//  - dbias = sum over rows of dy: kSum with n = R and S = sum over rows of |dy|.

struct NormBackwardVariant {
  std::vector<int64_t> shape;
  Layout x = Layout::kContiguous;
  Layout dy = Layout::kContiguous;
  Layout stats = Layout::kContiguous;
  bool weight = true;
  bool dweight = true;
  bool dbias = true;  // layer_norm_backward only
  double eps = 1e-5;
  OutputLayout out = OutputLayout::kContiguous;
  bool near_constant = false;  // rows of nearly equal values: large rstd
  double large_mean = 0;       // nonzero: rows of this mean and a spread of 1 (large_rows)
  bool layer_only = false;     // differs from another variant only in dbias
};

std::string norm_backward_label(ctl_op_id op, const NormBackwardVariant& v) {
  const bool layer = op == CTL_OP_LAYER_NORM_BACKWARD;
  std::ostringstream o;
  o << shape_label(v.shape) << " " << layout_word(v.x) << " x, " << layout_word(v.dy) << " dy, " << layout_word(v.stats)
    << " statistics (eps " << v.eps << ")" << (v.weight ? ", weight" : ", no weight") << ", outputs dx"
    << (v.dweight ? " dweight" : "") << (layer && v.dbias ? " dbias" : "");
  if (v.near_constant) o << ", rows of nearly equal values";
  if (v.large_mean != 0) o << ", rows of mean " << v.large_mean << " and spread 1";
  o << ", " << output_word(v.out);
  return o.str();
}

void run_norm_backward(Harness& h, ctl_op_id op, ctl_dtype d, const NormBackwardVariant& v) {
  auto& rng = h.context().rng;
  const bool layer = op == CTL_OP_LAYER_NORM_BACKWARD;
  const std::vector<int64_t> stat_shape(v.shape.begin(), v.shape.end() - 1);
  const int64_t rows = numel_of(stat_shape), n = v.shape.back();
  const ctl_dtype stat_dtype = (d == CTL_DTYPE_F16 || d == CTL_DTYPE_BF16) ? CTL_DTYPE_F32 : d;
  Operand x;
  if (v.near_constant || v.large_mean != 0) {
    std::vector<double> xv(static_cast<size_t>(rows * n));
    for (int64_t r = 0; r < rows; ++r) {
      const double c = v.large_mean != 0 ? v.large_mean * (r % 2 ? -1 : 1) : uniform(rng, -2, 2);
      const double spread = v.large_mean != 0 ? std::sqrt(3.0) : 1e-3;
      for (int64_t i = 0; i < n; ++i) xv[static_cast<size_t>(r * n + i)] = c + spread * uniform(rng, -1, 1);
    }
    x = exact_input(h, d, v.shape, v.x, xv);
  } else {
    x = h.input(d, v.shape, v.x, Values::kFinite);
  }
  // The forward op's statistics of this x, on the reference.
  ctl_norm_attrs norm{CTL_NORM_ATTRS_STRUCT_SIZE, v.eps};
  std::vector<ctl_tensor*> fwd_in = {x.reference.get(), nullptr};
  if (layer) fwd_in.push_back(nullptr);
  const std::vector<TensorPtr> fwd =
      reference_run(layer ? CTL_OP_LAYER_NORM : CTL_OP_RMS_NORM, fwd_in, &norm, layer ? 3 : 2);
  const std::vector<double> rstd = host_values(fwd.back().get());
  const std::vector<double> mean = layer ? host_values(fwd[1].get()) : std::vector<double>(rstd.size(), 0.0);
  Operand mean_in, rstd_in;
  if (layer) mean_in = exact_input(h, stat_dtype, stat_shape, v.stats, mean);
  rstd_in = exact_input(h, stat_dtype, stat_shape, v.stats, rstd);
  Operand dy = h.input(d, v.shape, v.dy, Values::kFinite);
  Operand w = h.input(d, {n}, Layout::kSliced, Values::kFinite);
  std::vector<const Operand*> ins = {&dy, &x};
  if (layer) ins.push_back(&mean_in);
  ins.push_back(&rstd_in);
  ins.push_back(v.weight ? &w : nullptr);

  // The tolerances' S, from the inputs' values.
  const std::vector<double> xv = host_values(x.reference.get()), gv = host_values(dy.reference.get());
  const std::vector<double> wv =
      v.weight ? host_values(w.reference.get()) : std::vector<double>(static_cast<size_t>(n), 1.0);
  const std::vector<Tolerance> tols = norm_backward_tolerances(layer, rows, n, xv, gv, wv, rstd, mean);
  std::vector<bool> requested = {true, v.dweight};
  if (layer) requested.push_back(v.dbias);
  h.run(op, ins, &norm, requested.size(), tols, v.out, {}, requested);
}

void norm_backward_cases(Catalog& cat, ctl_op_id op, ctl_dtype d) {
  using L = Layout;
  using O = OutputLayout;
  const bool layer = op == CTL_OP_LAYER_NORM_BACKWARD;
  const std::vector<NormBackwardVariant> fixed = {
      {.shape = {5, 8}},
      {.shape = {5, 8}, .weight = false, .dweight = false, .dbias = false, .out = O::kGapped},
      {.shape = {5, 8}, .dbias = false, .layer_only = true},
      {.shape = {5, 8}, .weight = false, .dweight = false, .dbias = true, .layer_only = true},
      {.shape = {5, 8}, .dweight = false, .dbias = false, .out = O::kTransposed},
      {.shape = {4, 6}, .x = L::kPermuted, .dy = L::kSliced, .out = O::kTransposed},
      {.shape = {2, 3, 16},
       .x = L::kSliced,
       .dy = L::kPermuted,
       .stats = L::kSliced,
       .weight = false,
       .out = O::kGapped},
      {.shape = {7}},
      {.shape = {0, 4}},
      {.shape = {2, 700}, .eps = 1e-3},
      {.shape = {3, 257}, .dy = L::kExpanded, .out = O::kGapped},
      {.shape = {2, 1031}, .x = L::kSliced, .weight = false},
      {.shape = {2, 2, 3, 5}, .x = L::kPermuted, .stats = L::kPermuted, .out = O::kTransposed},
      {.shape = {6, 16}, .eps = 1e-6, .near_constant = true},
      {.shape = {4, 2}, .weight = false},
      {.shape = {64, 33}, .x = L::kPermuted, .dy = L::kPermuted},
  };
  for (const NormBackwardVariant& v : fixed) {
    if (v.layer_only && !layer) continue;
    cat.add(op, d, norm_backward_label(op, v), [=](Harness& h) { run_norm_backward(h, op, d, v); });
  }
  for (int k = 0; k < 3; ++k) {
    cat.add(op, d, "random rank 1-4 shape, views, weight and outputs", [=](Harness& h) {
      auto& rng = h.context().rng;
      NormBackwardVariant v;
      v.shape = random_shape(rng, rng() % 4);
      v.shape.push_back(1 + static_cast<int64_t>(rng() % 40));
      v.x = Layout::kRandom;
      v.dy = Layout::kRandom;
      v.stats = static_cast<Layout>(rng() % 3);
      v.weight = rng() % 2;
      v.dweight = rng() % 2;
      v.dbias = rng() % 2;
      v.out = static_cast<OutputLayout>(rng() % 3);
      run_norm_backward(h, op, d, v);
    });
  }
  // Rows of a large mean (the forward op's large_rows, numeric_cases.cpp): x - mean is
  // exact for a device that subtracts first, and the bound above already allows
  // x * rstd - mean * rstd; what fails is a device that loses the row's statistics.
  // The largest mean whose ulp in the dtype still leaves the spread a few distinct values.
  const double large_mean = d == CTL_DTYPE_F64 ? 1e8 : d == CTL_DTYPE_F16 ? 1e3 : d == CTL_DTYPE_BF16 ? 1e2 : 1e4;
  const NormBackwardVariant large{.shape = {6, 16}, .large_mean = large_mean};
  cat.add_named(op, {d}, "large_rows", norm_backward_label(op, large),
                [=](Harness& h) { run_norm_backward(h, op, d, large); });
}

// ---- gelu_backward and gelu_tanh_backward --------------------------------------------------
//
// kSum with S per element, from the inputs (a scale that follows the derivative's own
// sensitivity, where kTranscendental's fixed absolute term would not):
//  - gelu_backward: dx = dy (Phi(x) + x phi(x)). erf and exp are a few ulp; x^2 / 2 rounded
//    in exp's argument moves phi by (x^2 / 2) u relative: n = 10 and
//    S = |dy| (1 + |x| phi(x) (1 + x^2)).
//  - gelu_tanh_backward: dx = dy (0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3c x^2)). A few ulp in
//    t = tanh(...) are multiplied by up to 0.5 |x| k (1 + 3c x^2) through 1 - t^2 (where t is
//    near ±1, this is the cancellation that matters): n = 8 and
//    S = |dy| (1 + |x| (1 + 3c x^2)).

double gelu_scale(ctl_op_id op, double dy, double x) {
  if (op == CTL_OP_GELU_BACKWARD) {
    const double phi = std::exp(-0.5 * x * x) / std::sqrt(2 * std::numbers::pi);
    return std::fabs(dy) * (1 + std::fabs(x) * phi * (1 + x * x));
  }
  return std::fabs(dy) * (1 + std::fabs(x) * (1 + 3 * 0.044715 * x * x));
}

void run_gelu_backward(Harness& h, ctl_op_id op, const Operand& dy, const Operand& x, OutputLayout out) {
  const auto shape_of = [](const ctl_tensor* t) {
    std::vector<int64_t> s(ctl_tensor_rank(t));
    for (size_t i = 0; i < s.size(); ++i) s[i] = ctl_tensor_dim(t, static_cast<int64_t>(i));
    return s;
  };
  const std::vector<int64_t> dy_shape = shape_of(dy.reference.get()), x_shape = shape_of(x.reference.get());
  const std::vector<int64_t> shape = broadcast_shape(dy_shape, x_shape);
  const std::vector<double> g = broadcast_values(host_values(dy.reference.get()), dy_shape, shape);
  const std::vector<double> xv = broadcast_values(host_values(x.reference.get()), x_shape, shape);
  std::vector<double> s(g.size());
  for (size_t i = 0; i < s.size(); ++i) s[i] = gelu_scale(op, g[i], xv[i]);
  h.run(op, {&dy, &x}, nullptr, 1, {sum_tolerance(op == CTL_OP_GELU_BACKWARD ? 10 : 8, s)}, out);
}

void gelu_backward_cases(Catalog& cat, ctl_op_id op, ctl_dtype d) {
  using L = Layout;
  const std::vector<std::pair<Shaped, Shaped>> fixed = {
      {{{3, 4}, L::kContiguous}, {{3, 4}, L::kContiguous}},
      {{{3, 4}, L::kPermuted}, {{4}, L::kContiguous}},
      {{{2, 1, 4}, L::kSliced}, {{3, 1}, L::kContiguous}},
      {{{3, 4}, L::kExpanded}, {{3, 4}, L::kPermuted}},
      {{{}, L::kContiguous}, {{5}, L::kSliced}},
      {{{0, 4}, L::kContiguous}, {{4}, L::kContiguous}},
      {{{2, 3}, L::kContiguous}, {{}, L::kContiguous}},
      {{{257}, L::kContiguous}, {{257}, L::kContiguous}},
      {{{1031}, L::kContiguous}, {{1031}, L::kSliced}},
      {{{2, 3, 4, 5}, L::kPermuted}, {{3, 1, 5}, L::kSliced}},
  };
  int variant = 0;
  for (const auto& [sdy, sx] : fixed) {
    const OutputLayout out = static_cast<OutputLayout>(variant++ % 3);
    const std::string label = shape_label(sdy.shape) + " " + layout_word(sdy.layout) + " dy & " +
                              shape_label(sx.shape) + " " + layout_word(sx.layout) + " x, " + output_word(out);
    // Structured bindings are copied by name: Clang 14 cannot capture them implicitly.
    cat.add(op, d, label, [=, sdy = sdy, sx = sx](Harness& h) {
      Operand dy = h.input(d, sdy.shape, sdy.layout, Values::kGeneral);
      Operand x = h.input(d, sx.shape, sx.layout, Values::kGeneral);
      run_gelu_backward(h, op, dy, x, out);
    });
  }
  cat.add(op, d, "specials: x in NaN, ±inf, ±0, subnormal, near gelu's minimum, ±5, ±10 against dy in 1, ±0, inf, NaN",
          [=](Harness& h) {
            const double sub = smallest_subnormal(d);
            const std::vector<double> xs = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1.0, -2.5,
                                            sub, -0.7518,  5,         -5,  10,   -10};
            const std::vector<double> dys = {1.0, -0.5, 0.0, -0.0, INFINITY, NAN, 3.0};
            std::vector<double> a, b;
            for (double g : dys) {
              for (double x : xs) a.push_back(g), b.push_back(x);
            }
            const int64_t rows = static_cast<int64_t>(dys.size()), cols = static_cast<int64_t>(xs.size());
            Operand dy = h.input_from(d, {rows, cols}, a);
            Operand x = h.input_from(d, {rows, cols}, b);
            run_gelu_backward(h, op, dy, x, OutputLayout::kContiguous);
          });
  for (int k = 0; k < 3; ++k) {
    cat.add(op, d, "random rank 0-6 shapes with broadcasting and views", [=](Harness& h) {
      auto& rng = h.context().rng;
      auto sa = random_shape(rng, rng() % 7);
      const size_t drop = sa.empty() ? 0 : rng() % (sa.size() + 1);
      std::vector<int64_t> sb(sa.begin() + static_cast<std::ptrdiff_t>(drop), sa.end());
      for (auto& dim : sb) {
        if (rng() % 3 == 0) dim = 1;
      }
      if (rng() % 2) std::swap(sa, sb);
      Operand dy = h.input(d, sa, Layout::kRandom, Values::kGeneral);
      Operand x = h.input(d, sb, Layout::kRandom, Values::kGeneral);
      run_gelu_backward(h, op, dy, x, static_cast<OutputLayout>(rng() % 3));
    });
  }
}

// ---- large cases: >= 2^24 elements, f32 ----------------------------------------------------

void large_cases(Catalog& cat) {
  const ctl_dtype f = CTL_DTYPE_F32;
  const std::string big = "large: " + shape_label({kLarge, kLarge}) + " logits, i64 target, mean";
  for (ctl_op_id op : {CTL_OP_CROSS_ENTROPY, CTL_OP_CROSS_ENTROPY_BACKWARD}) {
    cat.add_large(op, {f, CTL_DTYPE_I64}, big, [=](Harness& h) {
      CeVariant v;
      v.shape = {kLarge, kLarge};
      run_cross_entropy(h, op, f, v);
    });
  }
  cat.add_large(CTL_OP_ADAMW_STEP, f, "large: [16777216], step 7, weight_decay 0.01", [=](Harness& h) {
    AdamwVariant v;
    v.shape = {kLarge * kLarge};
    v.step = 7;
    v.weight_decay = 0.01;
    run_adamw(h, f, v);
  });
  cat.add_large(CTL_OP_SGD_STEP, f, "large: [16777216], momentum 0.9, weight_decay 0.01", [=](Harness& h) {
    SgdVariant v;
    v.shape = {kLarge * kLarge};
    v.weight_decay = 0.01;
    run_sgd(h, f, v);
  });
}

// ---- tail cases: about 10^6 elements in sizes that are multiples of nothing --------------
//
// As numeric_cases.cpp's: rows of 1021 (prime), 1031 of them, or 1000003 elements (prime),
// past every vector width, block and thread split, so a remainder path or a dropped last
// chunk shows. At `full`.

void tail_cases(Catalog& cat) {
  const ctl_dtype f = CTL_DTYPE_F32;
  const std::vector<int64_t> rows = {1031, 1021};
  constexpr int64_t kTail = 1000003;
  const auto add = [&](ctl_op_id op, const std::vector<ctl_dtype>& dtypes, const std::string& label, Body body) {
    cat.add_named(op, dtypes, "large_tail", "large, odd sizes: " + label, std::move(body), Level::kFull);
  };
  for (ctl_op_id op : {CTL_OP_CROSS_ENTROPY, CTL_OP_CROSS_ENTROPY_BACKWARD}) {
    add(op, {f, CTL_DTYPE_I64}, shape_label(rows) + " logits, i64 target, no reduction", [=](Harness& h) {
      CeVariant v;
      v.shape = rows;
      v.reduction = CTL_REDUCTION_NONE;
      run_cross_entropy(h, op, f, v);
    });
  }
  add(CTL_OP_ADAMW_STEP, {f}, shape_label({kTail}) + ", step 3", [=](Harness& h) {
    AdamwVariant v;
    v.shape = {kTail};
    v.step = 3;
    run_adamw(h, f, v);
  });
  add(CTL_OP_SGD_STEP, {f}, shape_label({kTail}) + ", momentum 0.9", [=](Harness& h) {
    SgdVariant v;
    v.shape = {kTail};
    run_sgd(h, f, v);
  });
  for (ctl_op_id op : {CTL_OP_SOFTMAX_BACKWARD, CTL_OP_LOG_SOFTMAX_BACKWARD}) {
    add(op, {f}, shape_label(rows) + " along the last axis", [=](Harness& h) {
      SoftmaxVariant v;
      v.shape = rows;
      run_softmax_backward(h, op, f, v);
    });
  }
  for (ctl_op_id op : {CTL_OP_LAYER_NORM_BACKWARD, CTL_OP_RMS_NORM_BACKWARD}) {
    add(op, {f}, shape_label(rows) + " with weight, dx and dweight", [=](Harness& h) {
      NormBackwardVariant v;
      v.shape = rows;
      run_norm_backward(h, op, f, v);
    });
  }
  for (ctl_op_id op : {CTL_OP_GELU_BACKWARD, CTL_OP_GELU_TANH_BACKWARD}) {
    add(op, {f}, shape_label({kTail}) + " dy & x", [=](Harness& h) {
      Operand dy = h.input(f, {kTail}, Layout::kContiguous, Values::kGeneral);
      Operand x = h.input(f, {kTail}, Layout::kContiguous, Values::kGeneral);
      run_gelu_backward(h, op, dy, x, OutputLayout::kContiguous);
    });
  }
}

}  // namespace

void add_training_cases(std::vector<Case>& out) {
  Catalog cat(out, Level::kTraining);
  for (ctl_op_id op : {CTL_OP_CROSS_ENTROPY, CTL_OP_CROSS_ENTROPY_BACKWARD}) {
    for (ctl_dtype d : kFloat) cross_entropy_cases(cat, op, d);
  }
  for (ctl_dtype d : kFloat) adamw_cases(cat, d);
  for (ctl_dtype d : kFloat) sgd_cases(cat, d);
  for (ctl_op_id op : {CTL_OP_SOFTMAX_BACKWARD, CTL_OP_LOG_SOFTMAX_BACKWARD}) {
    for (ctl_dtype d : kFloat) softmax_backward_cases(cat, op, d);
  }
  for (ctl_op_id op : {CTL_OP_LAYER_NORM_BACKWARD, CTL_OP_RMS_NORM_BACKWARD}) {
    for (ctl_dtype d : kFloat) norm_backward_cases(cat, op, d);
  }
  for (ctl_op_id op : {CTL_OP_GELU_BACKWARD, CTL_OP_GELU_TANH_BACKWARD}) {
    for (ctl_dtype d : kFloat) gelu_backward_cases(cat, op, d);
  }
  large_cases(cat);
  tail_cases(cat);
}

}  // namespace catalyst::conformance
