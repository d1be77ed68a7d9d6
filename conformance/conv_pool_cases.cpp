// conv_pool_cases.cpp — the numeric cases of the convolution and pooling ops of ABI 1.1:
// conv2d, conv2d_backward_input, conv2d_backward_weight, max_pool2d, max_pool2d_backward,
// avg_pool2d and avg_pool2d_backward (NCHW, docs/ops.md).
//
// They work like training_cases.cpp: one case is one op call, compared with the reference
// kernels; fixed variants, then two random ones, then large f32 ones. f32 cases are at the
// `training` level, f64, f16 and bf16 at `full`. The backward ops get random dy and random
// x (x is only a shape for conv2d_backward_input and avg_pool2d_backward, but its values
// are given anyway, so a device that reads them by mistake is not helped).
//
// Tolerances (the scale S is always the same op run on the reference on |inputs|, as
// matmul does it, so cancellation is judged against the magnitudes the result is made of):
//  - conv2d: a sum of C/G * KH * KW products plus the bias: kSum with n = C/G * KH * KW + 1
//    and S = conv2d(|x|, |w|, |bias|).
//  - conv2d_backward_input: each dx element is a sum over the O/G output channels of its
//    group and the KH * KW taps: kSum with n = O/G * KH * KW and
//    S = conv2d_backward_input(|dy|, x, |w|).
//  - conv2d_backward_weight: a sum over N * OH * OW positions: kSum with n = N * OH * OW and
//    S = conv2d_backward_weight(|dy|, |x|, w).
//  - max_pool2d: a selection, no rounding: kExact (NaN positions must match).
//  - max_pool2d_backward: without overlap each dx element is 0 or one dy, exactly; with
//    overlapping windows (stride < kernel) several dy add up: kSum with n = the most
//    windows an element lies in, ceil(kh / sh) * ceil(kw / sw), and
//    S = max_pool2d_backward(|dy|, x) (the same positions, as they depend on x only).
//  - avg_pool2d: a sum of up to kh * kw elements and one division: kSum with n = kh * kw
//    and S = avg_pool2d(|x|).
//  - avg_pool2d_backward: a sum over at most kh * kw windows of dy / divisor: kSum with
//    n = kh * kw and S = avg_pool2d_backward(|dy|, x).
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <sstream>

#include "case.h"
#include "catalog.h"
#include "numeric_harness.h"

namespace catalyst::conformance {
namespace {

// ---- helpers ------------------------------------------------------------------------------

std::string pair_label(const int64_t (&p)[2]) {
  return std::to_string(p[0]) + "x" + std::to_string(p[1]);
}

// The output length of one spatial axis (the schema's formula).
int64_t out_size(int64_t size, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation) {
  return (size + 2 * padding - dilation * (kernel - 1) - 1) / stride + 1;
}

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// ---- conv2d, conv2d_backward_input, conv2d_backward_weight --------------------------------

struct ConvVariant {
  int64_t n = 2, c = 3, h = 8, w = 8;  // x (N, C, H, W)
  int64_t o = 4, kh = 3, kw = 3;       // weight (O, C / G, KH, KW)
  int64_t stride[2] = {0, 0};          // 0 means 1 (the zero rule)
  int64_t padding[2] = {0, 0};
  int64_t dilation[2] = {0, 0};  // 0 means 1
  int64_t groups = 0;            // 0 means 1
  bool null_attrs = false;       // attrs NULL (only with every attr at its default)
  bool bias = false;             // conv2d only
  bool forward_only = false;     // differs from another variant only in the bias
  Layout x = Layout::kContiguous;
  Layout wl = Layout::kContiguous;
  Layout dy = Layout::kContiguous;
  OutputLayout out = OutputLayout::kContiguous;
};

int64_t or_one(int64_t v) {
  return v == 0 ? 1 : v;
}

std::string conv_label(ctl_op_id op, const ConvVariant& v) {
  std::ostringstream o;
  const int64_t g = or_one(v.groups);
  o << "x " << shape_label({v.n, v.c, v.h, v.w}) << " " << layout_word(v.x) << ", weight "
    << shape_label({v.o, v.c / g, v.kh, v.kw}) << " " << layout_word(v.wl);
  if (op != CTL_OP_CONV2D) o << ", " << layout_word(v.dy) << " dy";
  if (v.null_attrs) {
    o << ", attrs NULL";
  } else {
    o << ", stride " << pair_label(v.stride) << " padding " << pair_label(v.padding) << " dilation "
      << pair_label(v.dilation) << " groups " << v.groups;
  }
  if (op == CTL_OP_CONV2D) o << (v.bias ? ", bias" : ", no bias");
  o << ", " << output_word(v.out);
  return o.str();
}

void run_conv(Harness& h, ctl_op_id op, ctl_dtype d, const ConvVariant& v) {
  const int64_t g = or_one(v.groups);
  ctl_conv2d_attrs attrs{};
  attrs.struct_size = CTL_CONV2D_ATTRS_STRUCT_SIZE;
  for (int k = 0; k < 2; ++k) {
    attrs.stride[k] = v.stride[k];
    attrs.padding[k] = v.padding[k];
    attrs.dilation[k] = v.dilation[k];
  }
  attrs.groups = v.groups;
  const void* attrs_ptr = v.null_attrs ? nullptr : &attrs;
  const int64_t oh = out_size(v.h, v.kh, or_one(v.stride[0]), v.padding[0], or_one(v.dilation[0]));
  const int64_t ow = out_size(v.w, v.kw, or_one(v.stride[1]), v.padding[1], or_one(v.dilation[1]));

  Operand x = h.input(d, {v.n, v.c, v.h, v.w}, v.x, Values::kFinite);
  Operand w = h.input(d, {v.o, v.c / g, v.kh, v.kw}, v.wl, Values::kFinite);
  std::vector<const Operand*> ins;
  Operand bias, dy;
  // abs_of[k]: whether input k enters S as |input| (else as itself: it is only a shape).
  std::vector<bool> abs_of;
  double n_terms = 0;
  if (op == CTL_OP_CONV2D) {
    ins = {&x, &w};
    abs_of = {true, true};
    if (v.bias) {
      bias = h.input(d, {v.o}, Layout::kSliced, Values::kFinite);
      ins.push_back(&bias);
      abs_of.push_back(true);
    }
    n_terms = static_cast<double>(v.c / g * v.kh * v.kw + 1);
  } else {
    dy = h.input(d, {v.n, v.o, oh, ow}, v.dy, Values::kFinite);
    ins = {&dy, &x, &w};
    if (op == CTL_OP_CONV2D_BACKWARD_INPUT) {
      abs_of = {true, false, true};
      n_terms = static_cast<double>(v.o / g * v.kh * v.kw);
    } else {
      abs_of = {true, true, false};
      n_terms = static_cast<double>(v.n * oh * ow);
    }
  }
  const Tolerance tol = sum_tolerance(n_terms, h.reference_abs_values(op, ins, abs_of, attrs_ptr));
  h.run(op, ins, attrs_ptr, 1, {tol}, v.out);
}

std::vector<ConvVariant> conv_fixed() {
  using L = Layout;
  using O = OutputLayout;
  std::vector<ConvVariant> f;
  f.push_back({});                                                         // plain 3x3, zeroed attrs
  f.push_back({.bias = true, .forward_only = true});                       // plain 3x3 with bias
  f.push_back({.null_attrs = true, .bias = true, .forward_only = false});  // attrs NULL
  f.push_back({.h = 9, .w = 10, .stride = {2, 2}, .bias = true});          // stride 2
  f.push_back({.h = 7, .w = 7, .padding = {1, 1}});                        // padding 1
  f.push_back({.h = 7, .w = 8, .stride = {2, 1}, .padding = {1, 0}, .bias = true});
  f.push_back({.h = 11, .w = 9, .padding = {2, 2}, .dilation = {2, 2}});  // dilation 2
  f.push_back({.h = 12, .w = 10, .stride = {1, 2}, .dilation = {2, 3}});
  f.push_back({.c = 4, .o = 6, .padding = {1, 1}, .groups = 2});                               // groups 2
  f.push_back({.c = 6, .h = 7, .w = 9, .o = 4, .stride = {2, 2}, .groups = 2, .bias = true});  // groups 2
  f.push_back({.c = 4, .o = 4, .padding = {1, 1}, .groups = 4, .bias = true});                 // depthwise
  f.push_back({.c = 5, .h = 6, .w = 5, .o = 7, .kh = 1, .kw = 1});                             // 1x1
  f.push_back({.c = 5, .h = 6, .w = 5, .o = 7, .kh = 1, .kw = 1, .stride = {2, 2}, .bias = true});
  f.push_back({.x = L::kPermuted, .dy = L::kPermuted});  // non-contiguous x
  f.push_back({.padding = {1, 1}, .x = L::kSliced, .wl = L::kPermuted, .dy = L::kSliced});
  f.push_back({.bias = true, .x = L::kExpanded, .wl = L::kSliced, .dy = L::kExpanded});
  f.push_back({.n = 1, .h = 13, .w = 7, .kh = 5, .kw = 3, .padding = {2, 1}, .bias = true});     // batch 1, odd
  f.push_back({.n = 3, .c = 3, .h = 11, .w = 13, .o = 5, .stride = {3, 2}, .padding = {2, 1}});  // batch 3, odd
  f.push_back({.n = 3, .c = 1, .h = 5, .w = 5, .o = 1, .kh = 5, .kw = 5});                 // kernel = input: one output
  f.push_back({.n = 1, .c = 2, .h = 2, .w = 3, .o = 3, .padding = {1, 1}, .bias = true});  // kernel > input
  f.push_back({.padding = {1, 1}, .out = O::kTransposed});
  f.push_back({.stride = {2, 2}, .padding = {1, 1}, .bias = true, .out = O::kGapped});
  f.push_back({.n = 2,
               .c = 4,
               .h = 10,
               .w = 11,
               .o = 6,
               .stride = {2, 2},
               .padding = {1, 2},
               .dilation = {2, 1},
               .groups = 2,
               .bias = true,
               .x = L::kSliced,
               .wl = L::kPermuted,
               .dy = L::kPermuted,
               .out = O::kGapped});
  f.push_back({.n = 2, .c = 16, .h = 9, .w = 9, .o = 8, .padding = {1, 1}, .bias = true});  // longer sums
  return f;
}

void conv_cases(Catalog& cat, ctl_op_id op, ctl_dtype d) {
  for (const ConvVariant& v : conv_fixed()) {
    if (v.forward_only && op != CTL_OP_CONV2D) continue;
    cat.add(op, d, conv_label(op, v), [=](Harness& h) { run_conv(h, op, d, v); });
  }
  for (int k = 0; k < 2; ++k) {
    cat.add(op, d, "random shapes, attrs, views and output", [=](Harness& h) {
      auto& rng = h.context().rng;
      ConvVariant v;
      const int64_t g = 1 + static_cast<int64_t>(rng() % 2);
      v.groups = rng() % 2 ? g : (g == 1 ? 0 : g);
      v.n = 1 + static_cast<int64_t>(rng() % 3);
      v.c = g * (1 + static_cast<int64_t>(rng() % 3));
      v.o = g * (1 + static_cast<int64_t>(rng() % 3));
      v.kh = 1 + static_cast<int64_t>(rng() % 3);
      v.kw = 1 + static_cast<int64_t>(rng() % 3);
      for (int a = 0; a < 2; ++a) {
        v.stride[a] = static_cast<int64_t>(rng() % 4);
        v.dilation[a] = static_cast<int64_t>(rng() % 3);
        v.padding[a] = static_cast<int64_t>(rng() % 3);
      }
      const int64_t span_h = or_one(v.dilation[0]) * (v.kh - 1) + 1, span_w = or_one(v.dilation[1]) * (v.kw - 1) + 1;
      v.h = std::max<int64_t>(1, span_h - 2 * v.padding[0]) + static_cast<int64_t>(rng() % 7);
      v.w = std::max<int64_t>(1, span_w - 2 * v.padding[1]) + static_cast<int64_t>(rng() % 7);
      v.bias = rng() % 2;
      v.x = Layout::kRandom;
      v.wl = Layout::kRandom;
      v.dy = Layout::kRandom;
      v.out = static_cast<OutputLayout>(rng() % 3);
      run_conv(h, op, d, v);
    });
  }
}

// ---- max_pool2d, max_pool2d_backward, avg_pool2d, avg_pool2d_backward ----------------------

enum class PoolValues {
  kRandom,    // finite values in [-2, 2]
  kTies,      // small integers: many equal maxima (the first-maximum rule)
  kSpecials,  // NaN (twice in some windows), ±inf, and a corner of -inf
};

struct PoolVariant {
  int64_t n = 2, c = 3, h = 8, w = 8;
  int64_t kernel[2] = {2, 2};
  int64_t stride[2] = {0, 0};  // 0 means the kernel
  int64_t padding[2] = {0, 0};
  bool exclude_padding = false;
  Layout x = Layout::kContiguous;
  Layout dy = Layout::kContiguous;
  OutputLayout out = OutputLayout::kContiguous;
  PoolValues values = PoolValues::kRandom;
  bool avg_only = false;  // differs from another variant only in exclude_padding
};

bool is_backward_pool(ctl_op_id op) {
  return op == CTL_OP_MAX_POOL2D_BACKWARD || op == CTL_OP_AVG_POOL2D_BACKWARD;
}
bool is_max_pool(ctl_op_id op) {
  return op == CTL_OP_MAX_POOL2D || op == CTL_OP_MAX_POOL2D_BACKWARD;
}

std::string pool_label(ctl_op_id op, const PoolVariant& v) {
  std::ostringstream o;
  o << "x " << shape_label({v.n, v.c, v.h, v.w}) << " " << layout_word(v.x);
  if (is_backward_pool(op)) o << ", " << layout_word(v.dy) << " dy";
  o << ", kernel " << pair_label(v.kernel) << " stride " << pair_label(v.stride) << " padding " << pair_label(v.padding)
    << (v.exclude_padding ? ", exclude_padding" : "");
  if (v.values == PoolValues::kTies) o << ", small integers (ties)";
  if (v.values == PoolValues::kSpecials) o << ", NaN (twice in some windows), ±inf and a corner of -inf in x";
  o << ", " << output_word(v.out);
  return o.str();
}

// x's values for the tie and special variants, row-major (N, C, H, W).
std::vector<double> pool_values(std::mt19937_64& rng, const PoolVariant& v) {
  const int64_t plane = v.h * v.w, count = v.n * v.c * plane;
  std::vector<double> x(static_cast<size_t>(count));
  for (double& e : x) e = static_cast<double>(static_cast<int64_t>(rng() % 4) - 1);  // -1, 0, 1, 2
  if (v.values == PoolValues::kTies) return x;
  for (double& e : x) e = e == 0 ? 3 : e;  // no zeros: max(-0, +0) is left undefined
  for (int64_t p = 0; p < v.n * v.c; ++p) {
    double* s = x.data() + p * plane;
    // Plane 0: NaN at (1, 1) and (1, 2), one window apart or in the same one; +inf at (h-2, 0).
    // Plane 1: the top-left 2x2 corner all -inf (a padded corner window holds only -inf), a
    // NaN at (h-1, w-1). Other planes: random specials.
    switch (p % 3) {
      case 0:
        s[1 * v.w + 1] = NAN;
        if (v.w > 2) s[1 * v.w + 2] = NAN;
        s[(v.h - 2) * v.w] = INFINITY;
        break;
      case 1:
        s[0] = s[1] = s[v.w] = s[v.w + 1] = -INFINITY;
        s[plane - 1] = NAN;
        break;
      default:
        s[rng() % plane] = -INFINITY;
        s[rng() % plane] = INFINITY;
        s[rng() % plane] = NAN;
        break;
    }
  }
  return x;
}

void run_pool(Harness& h, ctl_op_id op, ctl_dtype d, const PoolVariant& v) {
  ctl_pool2d_attrs attrs{};
  attrs.struct_size = CTL_POOL2D_ATTRS_STRUCT_SIZE;
  int64_t s[2];
  for (int k = 0; k < 2; ++k) {
    attrs.kernel[k] = v.kernel[k];
    attrs.stride[k] = v.stride[k];
    attrs.padding[k] = v.padding[k];
    s[k] = v.stride[k] == 0 ? v.kernel[k] : v.stride[k];
  }
  attrs.exclude_padding = v.exclude_padding;
  const int64_t oh = out_size(v.h, v.kernel[0], s[0], v.padding[0], 1);
  const int64_t ow = out_size(v.w, v.kernel[1], s[1], v.padding[1], 1);
  const std::vector<int64_t> x_shape = {v.n, v.c, v.h, v.w};
  Operand x = v.values == PoolValues::kRandom ? h.input(d, x_shape, v.x, Values::kFinite)
                                              : h.input_from(d, x_shape, pool_values(h.context().rng, v));
  if (op == CTL_OP_MAX_POOL2D) {
    h.run(op, {&x}, &attrs, 1, {Tolerance(Tol::kExact)}, v.out);
    return;
  }
  const double window = static_cast<double>(v.kernel[0] * v.kernel[1]);
  if (op == CTL_OP_AVG_POOL2D) {
    TensorPtr ax = h.reference_abs(x);
    h.run(op, {&x}, &attrs, 1, {sum_tolerance(window, h.reference_values(op, {ax.get()}, &attrs))}, v.out);
    return;
  }
  Operand dy = h.input(d, {v.n, v.c, oh, ow}, v.dy, Values::kFinite);
  TensorPtr ady = h.reference_abs(dy);
  const std::vector<double> scale = h.reference_values(op, {ady.get(), x.reference.get()}, &attrs);
  const double n = op == CTL_OP_MAX_POOL2D_BACKWARD
                       ? static_cast<double>(ceil_div(v.kernel[0], s[0]) * ceil_div(v.kernel[1], s[1]))
                       : window;
  h.run(op, {&dy, &x}, &attrs, 1, {sum_tolerance(n, scale)}, v.out);
}

std::vector<PoolVariant> pool_fixed() {
  using L = Layout;
  using O = OutputLayout;
  using P = PoolValues;
  std::vector<PoolVariant> f;
  f.push_back({});                                                                        // kernel 2, stride 0
  f.push_back({.h = 9, .w = 9, .kernel = {3, 3}});                                        // kernel 3, stride 0
  f.push_back({.h = 7, .w = 8, .kernel = {3, 3}, .stride = {1, 1}});                      // overlapping
  f.push_back({.h = 9, .w = 10, .kernel = {3, 3}, .stride = {2, 2}, .padding = {1, 1}});  // overlapping, padded
  f.push_back({.h = 9, .w = 10, .kernel = {3, 3}, .stride = {2, 2}, .padding = {1, 1}, .exclude_padding = true});
  f.push_back({.n = 1, .c = 2, .h = 6, .w = 5, .kernel = {2, 2}, .stride = {1, 1}, .padding = {1, 1}});
  f.push_back({.h = 7, .w = 7, .kernel = {3, 3}, .stride = {1, 1}, .padding = {1, 1}});
  f.push_back({.h = 7,
               .w = 7,
               .kernel = {3, 3},
               .stride = {1, 1},
               .padding = {1, 1},
               .exclude_padding = true,
               .avg_only = true});
  f.push_back({.h = 8, .w = 8, .kernel = {2, 2}, .stride = {2, 2}, .padding = {1, 1}, .exclude_padding = true});
  f.push_back({.n = 3, .c = 2, .h = 7, .w = 11, .kernel = {2, 3}, .stride = {1, 2}, .padding = {1, 1}});
  f.push_back({.h = 9, .w = 8, .kernel = {3, 2}, .stride = {2, 3}, .padding = {0, 1}, .exclude_padding = true});
  f.push_back({.kernel = {3, 3}, .stride = {2, 2}, .padding = {1, 1}, .x = L::kPermuted, .dy = L::kPermuted});
  f.push_back({.h = 9, .w = 7, .kernel = {3, 3}, .stride = {1, 1}, .x = L::kSliced, .dy = L::kSliced});
  f.push_back({.kernel = {2, 2}, .stride = {1, 1}, .x = L::kExpanded, .dy = L::kExpanded});
  f.push_back({.kernel = {3, 3}, .stride = {2, 2}, .padding = {1, 1}, .out = O::kTransposed});
  f.push_back({.h = 9, .w = 9, .kernel = {3, 3}, .stride = {1, 1}, .padding = {1, 1}, .out = O::kGapped});
  f.push_back({.n = 1, .c = 4, .h = 5, .w = 3, .kernel = {1, 1}});  // batch 1, identity window
  f.push_back({.h = 5, .w = 7, .kernel = {5, 7}});                  // one window: global pooling
  f.push_back({.n = 3,
               .c = 1,
               .h = 13,
               .w = 11,
               .kernel = {4, 4},
               .stride = {3, 3},
               .padding = {2, 2},
               .exclude_padding = true});
  f.push_back({.h = 7, .w = 9, .kernel = {3, 3}, .stride = {1, 1}, .values = P::kTies});
  f.push_back({.h = 8, .w = 8, .kernel = {2, 2}, .stride = {2, 2}, .padding = {1, 1}, .values = P::kTies});
  f.push_back({.h = 7, .w = 8, .kernel = {3, 3}, .stride = {1, 1}, .padding = {1, 1}, .values = P::kSpecials});
  f.push_back({.h = 8, .w = 7, .kernel = {2, 2}, .padding = {1, 1}, .values = P::kSpecials});
  f.push_back({.h = 9, .w = 9, .kernel = {3, 3}, .stride = {2, 2}, .padding = {1, 1}, .values = P::kSpecials});
  return f;
}

void pool_cases(Catalog& cat, ctl_op_id op, ctl_dtype d) {
  for (const PoolVariant& v : pool_fixed()) {
    if (v.avg_only && is_max_pool(op)) continue;
    cat.add(op, d, pool_label(op, v), [=](Harness& h) { run_pool(h, op, d, v); });
  }
  for (int k = 0; k < 2; ++k) {
    cat.add(op, d, "random shapes, window, views and output", [=](Harness& h) {
      auto& rng = h.context().rng;
      PoolVariant v;
      v.n = 1 + static_cast<int64_t>(rng() % 3);
      v.c = 1 + static_cast<int64_t>(rng() % 4);
      for (int a = 0; a < 2; ++a) {
        v.kernel[a] = 1 + static_cast<int64_t>(rng() % 4);
        v.stride[a] = static_cast<int64_t>(rng() % 4);
        v.padding[a] = static_cast<int64_t>(rng() % static_cast<uint64_t>(v.kernel[a] / 2 + 1));
      }
      v.h = std::max<int64_t>(1, v.kernel[0] - 2 * v.padding[0]) + static_cast<int64_t>(rng() % 8);
      v.w = std::max<int64_t>(1, v.kernel[1] - 2 * v.padding[1]) + static_cast<int64_t>(rng() % 8);
      v.exclude_padding = rng() % 2;
      v.x = Layout::kRandom;
      v.dy = Layout::kRandom;
      v.out = static_cast<OutputLayout>(rng() % 3);
      run_pool(h, op, d, v);
    });
  }
}

// ---- large cases: >= 2^24 output elements, f32 ---------------------------------------------
//
// Few input channels keep the reference (plain loops in double, run twice: the result and
// S) at about 2^24 * 18 multiply-adds.

void large_cases(Catalog& cat) {
  const ctl_dtype f = CTL_DTYPE_F32;
  ConvVariant conv;
  conv.n = 16;
  conv.c = 2;
  conv.h = 128;
  conv.w = 128;
  conv.o = 64;
  conv.padding[0] = conv.padding[1] = 1;
  conv.bias = true;
  cat.add_large(CTL_OP_CONV2D, f, "large: " + conv_label(CTL_OP_CONV2D, conv) + " (output [16,64,128,128])",
                [=](Harness& h) { run_conv(h, CTL_OP_CONV2D, f, conv); });
  PoolVariant pool;
  pool.n = 16;
  pool.c = 64;
  pool.h = 128;
  pool.w = 128;
  pool.kernel[0] = pool.kernel[1] = 3;
  pool.stride[0] = pool.stride[1] = 1;
  pool.padding[0] = pool.padding[1] = 1;
  cat.add_large(CTL_OP_MAX_POOL2D, f, "large: " + pool_label(CTL_OP_MAX_POOL2D, pool) + " (output [16,64,128,128])",
                [=](Harness& h) { run_pool(h, CTL_OP_MAX_POOL2D, f, pool); });
}

// ---- tail cases: about 10^6 elements in odd sizes, every op ----------------------------
//
// Odd batch, channel and spatial sizes (67 x 131 planes, 5 and 37 channels), so that no
// split of a plugin's (batch, channel, row) work divides them evenly. At `full`.

void tail_cases(Catalog& cat) {
  const ctl_dtype f = CTL_DTYPE_F32;
  ConvVariant conv;  // x [3,5,67,131], weight [37,5,3,3]: output [3,37,67,131], 974k elements
  conv.n = 3;
  conv.c = 5;
  conv.h = 67;
  conv.w = 131;
  conv.o = 37;
  conv.padding[0] = conv.padding[1] = 1;
  conv.bias = true;
  for (ctl_op_id op : {CTL_OP_CONV2D, CTL_OP_CONV2D_BACKWARD_INPUT, CTL_OP_CONV2D_BACKWARD_WEIGHT}) {
    cat.add_named(
        op, {f}, "large_tail", "large, odd sizes: " + conv_label(op, conv),
        [=](Harness& h) { run_conv(h, op, f, conv); }, Level::kFull);
  }
  PoolVariant pool;  // x [3,37,97,131], 3x3 windows, stride 2, padding 1
  pool.n = 3;
  pool.c = 37;
  pool.h = 97;
  pool.w = 131;
  pool.kernel[0] = pool.kernel[1] = 3;
  pool.stride[0] = pool.stride[1] = 2;
  pool.padding[0] = pool.padding[1] = 1;
  for (ctl_op_id op : {CTL_OP_MAX_POOL2D, CTL_OP_MAX_POOL2D_BACKWARD, CTL_OP_AVG_POOL2D, CTL_OP_AVG_POOL2D_BACKWARD}) {
    cat.add_named(
        op, {f}, "large_tail", "large, odd sizes: " + pool_label(op, pool),
        [=](Harness& h) { run_pool(h, op, f, pool); }, Level::kFull);
  }
}

}  // namespace

void add_conv_pool_cases(std::vector<Case>& out) {
  Catalog cat(out, Level::kTraining);
  for (ctl_op_id op : {CTL_OP_CONV2D, CTL_OP_CONV2D_BACKWARD_INPUT, CTL_OP_CONV2D_BACKWARD_WEIGHT}) {
    for (ctl_dtype d : kFloat) conv_cases(cat, op, d);
  }
  for (ctl_op_id op : {CTL_OP_MAX_POOL2D, CTL_OP_MAX_POOL2D_BACKWARD, CTL_OP_AVG_POOL2D, CTL_OP_AVG_POOL2D_BACKWARD}) {
    for (ctl_dtype d : kFloat) pool_cases(cat, op, d);
  }
  large_cases(cat);
  tail_cases(cat);
}

}  // namespace catalyst::conformance
