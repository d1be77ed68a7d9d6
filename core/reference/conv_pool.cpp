// conv_pool.cpp — reference kernels of the ABI 1.1 convolution and pooling ops over NCHW:
// conv2d and its backward forms for the input and the weight, max_pool2d, avg_pool2d and
// their backward forms (semantics: abi/catalyst.h at each op id). Plain loops that follow
// the definitions: every sum is accumulated in double and each result rounded once on the
// store; every operand may have any strides.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "reference_kernels.h"

namespace catalyst::reference {
namespace {

constexpr int64_t kAttrLimit = int64_t{1} << 30;  // the bound the core puts on stride, padding, dilation

// Element offset of [a, b, c, d] in a rank-4 operand.
int64_t offset4(const Operand& t, int64_t a, int64_t b, int64_t c, int64_t d) {
  return a * t.strides[0] + b * t.strides[1] + c * t.strides[2] + d * t.strides[3];
}

// The number of window positions along an axis, or -1 when the window does not fit (or the
// sizes overflow): (size + 2 padding - dilation (kernel - 1) - 1) / stride + 1.
int64_t sweep(int64_t size, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation) {
  int64_t span = 0, padded = 0;
  if (kernel < 1 || __builtin_mul_overflow(dilation, kernel - 1, &span) ||
      __builtin_add_overflow(size, 2 * padding, &padded))
    return -1;
  const int64_t room = padded - span - 1;
  return room < 0 ? -1 : room / stride + 1;
}

ctl_status* require_rank4(const Call& call, const char* role, const Operand& t) {
  if (t.rank == 4) return nullptr;
  return call.invalid("%s has rank %u, expected 4 (NCHW)", role, t.rank);
}

ctl_status* require_shape(const Call& call, const char* role, const Operand& t, const int64_t (&want)[4]) {
  CTL_SDK_RETURN_IF_ERROR(require_rank4(call, role, t));
  for (int d = 0; d < 4; ++d) {
    if (t.shape[d] != want[d])
      return call.invalid("%s has shape %s, expected [%lld, %lld, %lld, %lld]", role, shape_string(t).c_str(),
                          static_cast<long long>(want[0]), static_cast<long long>(want[1]),
                          static_cast<long long>(want[2]), static_cast<long long>(want[3]));
  }
  return nullptr;
}

// A convolution's attributes with the zero rules applied, and its output size.
struct ConvGeometry {
  int64_t sh, sw, ph, pw, dh, dw, groups;
  int64_t N, C, H, W, O, KH, KW, OH, OW;
};

// Reads the attrs (NULL: all defaults), checks x's and weight's shapes against each other
// and computes the output size.
ctl_status* conv_geometry(const Call& call, const Operand& x, const Operand& w, ConvGeometry* g) {
  ctl_conv2d_attrs a;
  bool present = false;
  CTL_SDK_RETURN_IF_ERROR(read_attrs(call, CTL_CONV2D_ATTRS_STRUCT_SIZE, &a, &present));
  for (int k = 0; k < 2; ++k) {
    if (a.stride[k] == 0) a.stride[k] = 1;
    if (a.dilation[k] == 0) a.dilation[k] = 1;
    if (a.stride[k] < 1 || a.dilation[k] < 1 || a.padding[k] < 0 || a.stride[k] > kAttrLimit ||
        a.dilation[k] > kAttrLimit || a.padding[k] > kAttrLimit)
      return call.invalid("attrs hold stride %lld, padding %lld, dilation %lld on axis %d",
                          static_cast<long long>(a.stride[k]), static_cast<long long>(a.padding[k]),
                          static_cast<long long>(a.dilation[k]), k);
  }
  if (a.groups == 0) a.groups = 1;
  CTL_SDK_RETURN_IF_ERROR(require_rank4(call, "x", x));
  CTL_SDK_RETURN_IF_ERROR(require_rank4(call, "weight", w));
  *g = ConvGeometry{};
  g->sh = a.stride[0];
  g->sw = a.stride[1];
  g->ph = a.padding[0];
  g->pw = a.padding[1];
  g->dh = a.dilation[0];
  g->dw = a.dilation[1];
  g->groups = a.groups;
  g->N = x.shape[0];
  g->C = x.shape[1];
  g->H = x.shape[2];
  g->W = x.shape[3];
  g->O = w.shape[0];
  g->KH = w.shape[2];
  g->KW = w.shape[3];
  if (g->groups < 1 || g->C % g->groups != 0 || g->O % g->groups != 0 || w.shape[1] != g->C / g->groups)
    return call.invalid(
        "x has %lld channels and weight has shape %s with groups %lld; weight must be (O, C / groups, "
        "KH, KW) with C and O multiples of groups",
        static_cast<long long>(g->C), shape_string(w).c_str(), static_cast<long long>(g->groups));
  g->OH = sweep(g->H, g->KH, g->sh, g->ph, g->dh);
  g->OW = sweep(g->W, g->KW, g->sw, g->pw, g->dw);
  if (g->OH < 1 || g->OW < 1)
    return call.invalid(
        "a %lldx%lld kernel (dilation %lld, %lld) does not fit the %lldx%lld input (padding %lld, %lld)",
        static_cast<long long>(g->KH), static_cast<long long>(g->KW), static_cast<long long>(g->dh),
        static_cast<long long>(g->dw), static_cast<long long>(g->H), static_cast<long long>(g->W),
        static_cast<long long>(g->ph), static_cast<long long>(g->pw));
  return nullptr;
}

// A pooling's attributes with the zero rule applied, and its output size.
struct PoolGeometry {
  int64_t kh, kw, sh, sw, ph, pw;
  bool exclude_padding;
  int64_t N, C, H, W, OH, OW;

  // The window of output (i, j) clipped to the input: rows [h0, h1), columns [w0, w1).
  void window(int64_t i, int64_t j, int64_t* h0, int64_t* h1, int64_t* w0, int64_t* w1) const {
    const int64_t top = i * sh - ph, left = j * sw - pw;
    *h0 = top < 0 ? 0 : top;
    *h1 = top + kh < H ? top + kh : H;
    *w0 = left < 0 ? 0 : left;
    *w1 = left + kw < W ? left + kw : W;
  }
  double divisor(int64_t h0, int64_t h1, int64_t w0, int64_t w1) const {
    return exclude_padding ? static_cast<double>((h1 - h0) * (w1 - w0)) : static_cast<double>(kh * kw);
  }
};

ctl_status* pool_geometry(const Call& call, const Operand& x, PoolGeometry* g) {
  ctl_pool2d_attrs a;
  bool present = false;
  CTL_SDK_RETURN_IF_ERROR(read_attrs(call, CTL_POOL2D_ATTRS_STRUCT_SIZE, &a, &present));
  if (!present) return call.invalid("attrs are NULL; pooling needs a ctl_pool2d_attrs");
  for (int k = 0; k < 2; ++k) {
    if (a.stride[k] == 0) a.stride[k] = a.kernel[k];
    if (a.kernel[k] < 1 || a.stride[k] < 1 || a.padding[k] < 0 || a.padding[k] > a.kernel[k] / 2 ||
        a.kernel[k] > kAttrLimit || a.stride[k] > kAttrLimit)
      return call.invalid(
          "attrs hold kernel %lld, stride %lld, padding %lld on axis %d; kernel and stride must be >= 1 "
          "and padding in [0, kernel / 2]",
          static_cast<long long>(a.kernel[k]), static_cast<long long>(a.stride[k]),
          static_cast<long long>(a.padding[k]), k);
  }
  CTL_SDK_RETURN_IF_ERROR(require_rank4(call, "x", x));
  *g = PoolGeometry{};
  g->kh = a.kernel[0];
  g->kw = a.kernel[1];
  g->sh = a.stride[0];
  g->sw = a.stride[1];
  g->ph = a.padding[0];
  g->pw = a.padding[1];
  unsigned char exclude = 0;  // read the byte: a malformed call may hold any value in a bool
  std::memcpy(&exclude, &a.exclude_padding, 1);
  g->exclude_padding = exclude != 0;
  g->N = x.shape[0];
  g->C = x.shape[1];
  g->H = x.shape[2];
  g->W = x.shape[3];
  g->OH = sweep(g->H, g->kh, g->sh, g->ph, 1);
  g->OW = sweep(g->W, g->kw, g->sw, g->pw, 1);
  if (g->OH < 1 || g->OW < 1)
    return call.invalid("a %lldx%lld window (padding %lld, %lld) does not fit the %lldx%lld input",
                        static_cast<long long>(g->kh), static_cast<long long>(g->kw), static_cast<long long>(g->ph),
                        static_cast<long long>(g->pw), static_cast<long long>(g->H), static_cast<long long>(g->W));
  return nullptr;
}

// Row-major index of [n, c, h, w] in a dense (N, C, H, W) accumulator.
size_t dense_index(int64_t n, int64_t c, int64_t h, int64_t w, int64_t C, int64_t H, int64_t W) {
  return static_cast<size_t>(((n * C + c) * H + h) * W + w);
}

// Stores a dense (N, C, H, W) accumulator into `out`.
void store_dense(const Operand& out, const std::vector<double>& acc) {
  const int64_t N = out.shape[0], C = out.shape[1], H = out.shape[2], W = out.shape[3];
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w) out.store(offset4(out, n, c, h, w), acc[dense_index(n, c, h, w, C, H, W)]);
}

}  // namespace

// conv2d (x, weight, bias|NULL) -> y; conv2d_backward_input (dy, x, weight) -> dx;
// conv2d_backward_weight (dy, x, weight) -> dweight.
ctl_status* run_conv2d(const Call& call) {
  const bool forward = call.op == CTL_OP_CONV2D;
  if (call.in.size() < (forward ? 2u : 3u) || call.out.size() != 1)
    return call.invalid("%zu inputs and %zu outputs given", call.in.size(), call.out.size());
  const Operand& x = call.in[forward ? 0 : 1];
  const Operand& w = call.in[forward ? 1 : 2];
  const Operand& out = call.out[0];
  ConvGeometry g{};
  CTL_SDK_RETURN_IF_ERROR(conv_geometry(call, x, w, &g));
  const int64_t y_shape[4] = {g.N, g.O, g.OH, g.OW};
  const int64_t cpg = g.C / g.groups, opg = g.O / g.groups;  // channels and outputs per group

  if (forward) {
    const Operand* bias = call.in.size() > 2 && call.in[2].present() ? &call.in[2] : nullptr;
    if (bias && (bias->rank != 1 || bias->shape[0] != g.O))
      return call.invalid("bias has shape %s, expected [%lld]", shape_string(*bias).c_str(),
                          static_cast<long long>(g.O));
    CTL_SDK_RETURN_IF_ERROR(require_shape(call, "output", out, y_shape));
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t o = 0; o < g.O; ++o) {
        const int64_t c0 = (o / opg) * cpg;
        const double b = bias ? bias->load(o * bias->strides[0]) : 0.0;
        for (int64_t i = 0; i < g.OH; ++i)
          for (int64_t j = 0; j < g.OW; ++j) {
            double sum = 0.0;
            for (int64_t cc = 0; cc < cpg; ++cc)
              for (int64_t kh = 0; kh < g.KH; ++kh) {
                const int64_t h = i * g.sh - g.ph + kh * g.dh;
                if (h < 0 || h >= g.H) continue;
                for (int64_t kw = 0; kw < g.KW; ++kw) {
                  const int64_t ww = j * g.sw - g.pw + kw * g.dw;
                  if (ww < 0 || ww >= g.W) continue;
                  sum += x.load(offset4(x, n, c0 + cc, h, ww)) * w.load(offset4(w, o, cc, kh, kw));
                }
              }
            out.store(offset4(out, n, o, i, j), b + sum);
          }
      }
    return nullptr;
  }

  const Operand& dy = call.in[0];
  CTL_SDK_RETURN_IF_ERROR(require_shape(call, "dy", dy, y_shape));
  if (call.op == CTL_OP_CONV2D_BACKWARD_INPUT) {
    const int64_t x_shape[4] = {g.N, g.C, g.H, g.W};
    CTL_SDK_RETURN_IF_ERROR(require_shape(call, "output", out, x_shape));
    // Scatter each dy[n, o, i, j] * w[o, c', kh, kw] onto the x position it multiplied.
    std::vector<double> acc(static_cast<size_t>(g.N * g.C * g.H * g.W), 0.0);
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t o = 0; o < g.O; ++o) {
        const int64_t c0 = (o / opg) * cpg;
        for (int64_t i = 0; i < g.OH; ++i)
          for (int64_t j = 0; j < g.OW; ++j) {
            const double d = dy.load(offset4(dy, n, o, i, j));
            for (int64_t cc = 0; cc < cpg; ++cc)
              for (int64_t kh = 0; kh < g.KH; ++kh) {
                const int64_t h = i * g.sh - g.ph + kh * g.dh;
                if (h < 0 || h >= g.H) continue;
                for (int64_t kw = 0; kw < g.KW; ++kw) {
                  const int64_t ww = j * g.sw - g.pw + kw * g.dw;
                  if (ww < 0 || ww >= g.W) continue;
                  acc[dense_index(n, c0 + cc, h, ww, g.C, g.H, g.W)] += d * w.load(offset4(w, o, cc, kh, kw));
                }
              }
          }
      }
    store_dense(out, acc);
    return nullptr;
  }

  const int64_t w_shape[4] = {g.O, cpg, g.KH, g.KW};
  CTL_SDK_RETURN_IF_ERROR(require_shape(call, "output", out, w_shape));
  for (int64_t o = 0; o < g.O; ++o) {
    const int64_t c0 = (o / opg) * cpg;
    for (int64_t cc = 0; cc < cpg; ++cc)
      for (int64_t kh = 0; kh < g.KH; ++kh)
        for (int64_t kw = 0; kw < g.KW; ++kw) {
          double sum = 0.0;
          for (int64_t n = 0; n < g.N; ++n)
            for (int64_t i = 0; i < g.OH; ++i) {
              const int64_t h = i * g.sh - g.ph + kh * g.dh;
              if (h < 0 || h >= g.H) continue;
              for (int64_t j = 0; j < g.OW; ++j) {
                const int64_t ww = j * g.sw - g.pw + kw * g.dw;
                if (ww < 0 || ww >= g.W) continue;
                sum += dy.load(offset4(dy, n, o, i, j)) * x.load(offset4(x, n, c0 + cc, h, ww));
              }
            }
          out.store(offset4(out, o, cc, kh, kw), sum);
        }
  }
  return nullptr;
}

// max_pool2d / avg_pool2d (x) -> y; max_pool2d_backward / avg_pool2d_backward (dy, x) -> dx.
ctl_status* run_pool2d(const Call& call) {
  const bool backward = call.op == CTL_OP_MAX_POOL2D_BACKWARD || call.op == CTL_OP_AVG_POOL2D_BACKWARD;
  const bool max = call.op == CTL_OP_MAX_POOL2D || call.op == CTL_OP_MAX_POOL2D_BACKWARD;
  if (call.in.size() != (backward ? 2u : 1u) || call.out.size() != 1)
    return call.invalid("%zu inputs and %zu outputs given", call.in.size(), call.out.size());
  const Operand& x = call.in[backward ? 1 : 0];
  const Operand& out = call.out[0];
  PoolGeometry g{};
  CTL_SDK_RETURN_IF_ERROR(pool_geometry(call, x, &g));
  const int64_t y_shape[4] = {g.N, g.C, g.OH, g.OW};
  const int64_t x_shape[4] = {g.N, g.C, g.H, g.W};
  const Operand* dy = backward ? &call.in[0] : nullptr;
  if (dy) CTL_SDK_RETURN_IF_ERROR(require_shape(call, "dy", *dy, y_shape));
  CTL_SDK_RETURN_IF_ERROR(require_shape(call, "output", out, backward ? x_shape : y_shape));
  std::vector<double> acc;
  if (backward) acc.assign(static_cast<size_t>(g.N * g.C * g.H * g.W), 0.0);

  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t c = 0; c < g.C; ++c)
      for (int64_t i = 0; i < g.OH; ++i)
        for (int64_t j = 0; j < g.OW; ++j) {
          int64_t h0, h1, w0, w1;
          g.window(i, j, &h0, &h1, &w0, &w1);
          if (max) {
            // The first maximum in row-major order within the window; the first NaN wins.
            double best = 0.0;
            int64_t best_h = -1, best_w = -1;
            for (int64_t h = h0; h < h1 && !std::isnan(best); ++h)
              for (int64_t w = w0; w < w1; ++w) {
                const double v = x.load(offset4(x, n, c, h, w));
                if (best_h < 0 || std::isnan(v) || v > best) {
                  best = v;
                  best_h = h;
                  best_w = w;
                  if (std::isnan(v)) break;
                }
              }
            if (best_h < 0) {
              // A window entirely in the padding (only when H or W is 0): padding is -inf.
              if (call.op == CTL_OP_MAX_POOL2D) out.store(offset4(out, n, c, i, j), -INFINITY);
              continue;
            }
            if (backward)
              acc[dense_index(n, c, best_h, best_w, g.C, g.H, g.W)] += dy->load(offset4(*dy, n, c, i, j));
            else
              out.store(offset4(out, n, c, i, j), best);
            continue;
          }
          const double divisor = g.divisor(h0, h1, w0, w1);
          if (backward) {
            const double share = dy->load(offset4(*dy, n, c, i, j)) / divisor;
            for (int64_t h = h0; h < h1; ++h)
              for (int64_t w = w0; w < w1; ++w) acc[dense_index(n, c, h, w, g.C, g.H, g.W)] += share;
            continue;
          }
          double sum = 0.0;
          for (int64_t h = h0; h < h1; ++h)
            for (int64_t w = w0; w < w1; ++w) sum += x.load(offset4(x, n, c, h, w));
          out.store(offset4(out, n, c, i, j), sum / divisor);
        }
  if (backward) store_dense(out, acc);
  return nullptr;
}

}  // namespace catalyst::reference
