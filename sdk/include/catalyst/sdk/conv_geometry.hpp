// conv_geometry.hpp — the device-independent checks of conv2d and 2-D pooling calls over NCHW
// views: the attrs' zero rules and limits, how the weight must agree with x's channels and the
// groups, the output size of the window sweep, and the rank, shape and distinctness of the NCHW
// operands. One copy for every plugin, so all of them reject a malformed call in the same words.
#pragma once

#include <algorithm>
#include <cstdint>

#include "catalyst/sdk/check.hpp"
#include "catalyst/sdk/raw_field.hpp"
#include "catalyst/sdk/view_check.hpp"  // check_distinct, used with these checks
#include "catalyst_plugin.h"

namespace catalyst::sdk {

// The largest stride, padding, dilation or kernel size: as the core allows.
constexpr int64_t kConvAttrLimit = int64_t{1} << 30;

// The output size of a window sweep, or -1 when the window does not fit (or overflows).
inline int64_t window_sweep(int64_t size, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation) {
  int64_t span, room;
  if (kernel < 1 || __builtin_mul_overflow(dilation, kernel - 1, &span) || __builtin_add_overflow(span, 1, &span))
    return -1;
  if (__builtin_add_overflow(size, 2 * padding, &room) || __builtin_sub_overflow(room, span, &room)) return -1;
  return room < 0 ? -1 : room / stride + 1;
}

// conv2d's sizes: x (N, C, H, W), weight (O, Cg, KH, KW) in G groups of Og outputs, output
// (N, O, OH, OW); strides sh, sw, padding ph, pw, dilation dh, dw.
struct Conv2dGeometry {
  int64_t N = 0, C = 0, H = 0, W = 0;  // x
  int64_t O = 0, G = 1, Cg = 0, Og = 0, KH = 0, KW = 0;
  int64_t OH = 0, OW = 0;
  int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
};

// Fills *g from the attrs (zeroed when the call has none: the defaults) and the shapes of the
// rank-4 x and weight, or fails naming the attrs or shapes that do not fit.
inline Check conv2d_geometry(ctl_conv2d_attrs a, const int64_t* x_shape, const int64_t* w_shape, Conv2dGeometry* g) {
  for (int k = 0; k < 2; ++k) {
    if (a.stride[k] == 0) a.stride[k] = 1;
    if (a.dilation[k] == 0) a.dilation[k] = 1;
    if (a.stride[k] < 1 || a.stride[k] > kConvAttrLimit || a.dilation[k] < 1 || a.dilation[k] > kConvAttrLimit ||
        a.padding[k] < 0 || a.padding[k] > kConvAttrLimit) {
      return check_failed(CTL_STATUS_INVALID_ARGUMENT,
                          "attrs hold stride %lld, padding %lld, dilation %lld on axis %d; stride and dilation must "
                          "be >= 1 and padding >= 0",
                          static_cast<long long>(a.stride[k]), static_cast<long long>(a.padding[k]),
                          static_cast<long long>(a.dilation[k]), k);
    }
  }
  if (a.groups == 0) a.groups = 1;
  g->sh = a.stride[0], g->sw = a.stride[1];
  g->ph = a.padding[0], g->pw = a.padding[1];
  g->dh = a.dilation[0], g->dw = a.dilation[1];
  g->G = a.groups;
  g->N = x_shape[0], g->C = x_shape[1], g->H = x_shape[2], g->W = x_shape[3];
  g->O = w_shape[0], g->KH = w_shape[2], g->KW = w_shape[3];
  if (g->G < 1 || g->C % g->G != 0 || g->O % g->G != 0 || w_shape[1] != g->C / g->G) {
    return check_failed(CTL_STATUS_INVALID_ARGUMENT,
                        "x has %lld channels, weight has %lld outputs and %lld channels, groups is %lld; weight must "
                        "be (O, C / groups, KH, KW) with C and O multiples of groups",
                        static_cast<long long>(g->C), static_cast<long long>(g->O), static_cast<long long>(w_shape[1]),
                        static_cast<long long>(g->G));
  }
  g->Cg = g->C / g->G;
  g->Og = g->O / g->G;
  g->OH = window_sweep(g->H, g->KH, g->sh, g->ph, g->dh);
  g->OW = window_sweep(g->W, g->KW, g->sw, g->pw, g->dw);
  if (g->OH < 1 || g->OW < 1) {
    return check_failed(
        CTL_STATUS_INVALID_ARGUMENT,
        "a %lldx%lld kernel (dilation %lld, %lld) does not fit the %lldx%lld input with padding %lld, %lld",
        static_cast<long long>(g->KH), static_cast<long long>(g->KW), static_cast<long long>(g->dh),
        static_cast<long long>(g->dw), static_cast<long long>(g->H), static_cast<long long>(g->W),
        static_cast<long long>(g->ph), static_cast<long long>(g->pw));
  }
  return Check();
}

// Pooling's sizes: x (N, C, H, W), output (N, C, OH, OW); window kh x kw, strides sh, sw,
// padding ph, pw.
struct Pool2dGeometry {
  int64_t N = 0, C = 0, H = 0, W = 0, OH = 0, OW = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0;
  bool exclude_padding = false;

  // Window (i, j) clipped to the input: rows [h0, h1), columns [w0, w1) (maybe empty).
  void window(int64_t i, int64_t j, int64_t* h0, int64_t* h1, int64_t* w0, int64_t* w1) const {
    const int64_t hs = i * sh - ph, ws = j * sw - pw;
    *h0 = std::max<int64_t>(hs, 0);
    *h1 = std::min(H, hs + kh);
    *w0 = std::max<int64_t>(ws, 0);
    *w1 = std::min(W, ws + kw);
  }
  // avg_pool2d's divisor for that window: its size inside the input with exclude_padding,
  // else the whole window's.
  double divisor(int64_t h0, int64_t h1, int64_t w0, int64_t w1) const {
    if (exclude_padding) return static_cast<double>(std::max<int64_t>(h1 - h0, 0) * std::max<int64_t>(w1 - w0, 0));
    return static_cast<double>(kh) * static_cast<double>(kw);
  }
};

// Fills *g from the attrs (pooling has no defaults: the caller rejects absent attrs) and the
// shape of the rank-4 x, or fails naming the attrs that do not fit.
inline Check pool2d_geometry(ctl_pool2d_attrs a, const int64_t* x_shape, Pool2dGeometry* g) {
  for (int k = 0; k < 2; ++k) {
    if (a.stride[k] == 0) a.stride[k] = a.kernel[k];
    if (a.kernel[k] < 1 || a.kernel[k] > kConvAttrLimit || a.stride[k] < 1 || a.stride[k] > kConvAttrLimit ||
        a.padding[k] < 0 || a.padding[k] > a.kernel[k] / 2) {
      return check_failed(CTL_STATUS_INVALID_ARGUMENT,
                          "attrs hold kernel %lld, stride %lld, padding %lld on axis %d; kernel and stride must be "
                          ">= 1 and padding in [0, kernel / 2]",
                          static_cast<long long>(a.kernel[k]), static_cast<long long>(a.stride[k]),
                          static_cast<long long>(a.padding[k]), k);
    }
  }
  g->kh = a.kernel[0], g->kw = a.kernel[1];
  g->sh = a.stride[0], g->sw = a.stride[1];
  g->ph = a.padding[0], g->pw = a.padding[1];
  g->exclude_padding = raw_bool(a.exclude_padding);
  g->N = x_shape[0], g->C = x_shape[1], g->H = x_shape[2], g->W = x_shape[3];
  g->OH = window_sweep(g->H, g->kh, g->sh, g->ph, 1);
  g->OW = window_sweep(g->W, g->kw, g->sw, g->pw, 1);
  if (g->OH < 1 || g->OW < 1) {
    return check_failed(CTL_STATUS_INVALID_ARGUMENT,
                        "a %lldx%lld window does not fit the %lldx%lld input with padding %lld, %lld",
                        static_cast<long long>(g->kh), static_cast<long long>(g->kw), static_cast<long long>(g->H),
                        static_cast<long long>(g->W), static_cast<long long>(g->ph), static_cast<long long>(g->pw));
  }
  return Check();
}

// ---- NCHW operands: any view type with `rank`, `shape` and `strides` members ----

template <class View>
Check check_rank4(const View& v, const char* what) {
  if (v.rank == 4) return Check();
  return check_failed(CTL_STATUS_INVALID_ARGUMENT, "%s has rank %u; it must be rank 4 (N, C, H, W)", what, v.rank);
}

template <class View>
Check check_shape4(const View& v, const char* what, const int64_t (&shape)[4]) {
  if (v.rank != 4) return check_rank4(v, what);
  if (std::equal(shape, shape + 4, v.shape)) return Check();
  return check_failed(
      CTL_STATUS_INVALID_ARGUMENT, "%s has shape [%lld, %lld, %lld, %lld], expected [%lld, %lld, %lld, %lld]", what,
      static_cast<long long>(v.shape[0]), static_cast<long long>(v.shape[1]), static_cast<long long>(v.shape[2]),
      static_cast<long long>(v.shape[3]), static_cast<long long>(shape[0]), static_cast<long long>(shape[1]),
      static_cast<long long>(shape[2]), static_cast<long long>(shape[3]));
}

}  // namespace catalyst::sdk
