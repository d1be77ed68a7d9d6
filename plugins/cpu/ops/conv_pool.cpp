// conv_pool.cpp — the ABI 1.1 convolution and pooling kernels over NCHW tensors: conv2d,
// conv2d_backward_input, conv2d_backward_weight, max_pool2d, max_pool2d_backward,
// avg_pool2d and avg_pool2d_backward.
//
// Direct loops over any strides, every value computed in double and rounded once when
// stored. Each output element is owned by one task and its terms are added in a fixed
// order, so results never depend on the thread count: conv2d and conv2d_backward_input
// spread (n, channel) rows over the pool and gather their terms; conv2d_backward_weight
// spreads the weight's elements (o, c', kh, kw) and sums over n, i, j in that order; the
// pooling backward forms spread (n, c) planes, each scattering into a per-thread plane of
// doubles in row-major window order before storing it once.
#include <algorithm>
#include <limits>

#include "catalyst/sdk/bind_conv_pool.hpp"
#include "dtype_dispatch.h"
#include "kernels.h"

namespace catalyst::cpu {
namespace {

constexpr int64_t kElementsPerPart = 8192;  // a parallel part's least work (multiply-adds)

int64_t grain_for(int64_t work_per_item) {
  return std::max<int64_t>(1, kElementsPerPart / std::max<int64_t>(work_per_item, 1));
}

// work_a * work_b, saturated (only used to size parallel parts).
int64_t work(int64_t a, int64_t b) {
  int64_t out;
  return checked_mul(a, b, &out) ? out : std::numeric_limits<int64_t>::max();
}

inline int64_t offset4(const int64_t* s, int64_t a, int64_t b, int64_t c, int64_t d) {
  return a * s[0] + b * s[1] + c * s[2] + d * s[3];
}

// ---- conv2d and its backward forms --------------------------------------------------

// The views of a conv2d call and their sizes (sdk/bind_conv_pool.hpp).
using Conv = sdk::ConvProblem<View>;

// y[n,o,i,j] = bias[o] + sum over c', kh, kw of x[n, g Cg + c', i sh - ph + kh dh, j sw - pw + kw dw]
// * w[o, c', kh, kw]; one task per (n, o) row.
template <class T>
void conv2d_rows(const OpContext& ctx, const Conv& v) {
  const T* const px = v.x.as<T>();
  const T* const pw = v.w.as<T>();
  const T* const pb = v.has_bias ? v.bias.as<T>() : nullptr;
  T* const py = v.out.as<T>();
  const int64_t* xs = v.x.strides;
  const int64_t* ws = v.w.strides;
  const int64_t* ys = v.out.strides;
  const int64_t bs = v.has_bias ? v.bias.strides[0] : 0;
  const int64_t row_work = work(work(v.OH * v.OW, v.Cg), work(v.KH, v.KW));
  parallel_for(ctx.pool, v.N * v.O, grain_for(row_work), [&](int64_t begin, int64_t end, unsigned) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t n = r / v.O, o = r % v.O, g = o / v.Og;
      const double bias = pb ? load_double(pb, o * bs) : 0.0;
      const T* const xg = px + n * xs[0] + g * v.Cg * xs[1];
      const T* const wo = pw + o * ws[0];
      T* const yr = py + n * ys[0] + o * ys[1];
      for (int64_t i = 0; i < v.OH; ++i) {
        for (int64_t j = 0; j < v.OW; ++j) {
          double acc = 0;
          for (int64_t c = 0; c < v.Cg; ++c) {
            for (int64_t kh = 0; kh < v.KH; ++kh) {
              const int64_t h = i * v.sh - v.ph + kh * v.dh;
              if (h < 0 || h >= v.H) continue;
              for (int64_t kw = 0; kw < v.KW; ++kw) {
                const int64_t w = j * v.sw - v.pw + kw * v.dw;
                if (w < 0 || w >= v.W) continue;
                acc += load_double(xg, c * xs[1] + h * xs[2] + w * xs[3]) *
                       load_double(wo, c * ws[1] + kh * ws[2] + kw * ws[3]);
              }
            }
          }
          yr[i * ys[2] + j * ys[3]] = store_double<T>(bias + acc);
        }
      }
    }
  });
}

// dx[n,c,h,w] = sum over o in c's group, kh, kw and the (i, j) that reach (h, w) of
// dy[n,o,i,j] * w[o, c', kh, kw]; one task per (n, c) row, gathering.
template <class T>
void conv2d_backward_input_rows(const OpContext& ctx, const Conv& v) {
  const T* const pd = v.dy.as<T>();
  const T* const pw = v.w.as<T>();
  T* const px = v.out.as<T>();
  const int64_t* ds = v.dy.strides;
  const int64_t* ws = v.w.strides;
  const int64_t* xs = v.out.strides;
  const int64_t row_work = work(work(v.H * v.W, v.Og), work(v.KH, v.KW));
  parallel_for(ctx.pool, v.N * v.C, grain_for(row_work), [&](int64_t begin, int64_t end, unsigned) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t n = r / v.C, c = r % v.C, g = c / v.Cg, cp = c % v.Cg;
      const T* const dn = pd + n * ds[0];
      T* const xr = px + n * xs[0] + c * xs[1];
      for (int64_t h = 0; h < v.H; ++h) {
        for (int64_t w = 0; w < v.W; ++w) {
          double acc = 0;
          for (int64_t m = 0; m < v.Og; ++m) {
            const int64_t o = g * v.Og + m;
            const T* const dno = dn + o * ds[1];
            const T* const wo = pw + o * ws[0] + cp * ws[1];
            // kh and kw descending: the terms come in ascending (i, j) order, as the
            // definition's scatter over dy adds them.
            for (int64_t kh = v.KH - 1; kh >= 0; --kh) {
              const int64_t t = h + v.ph - kh * v.dh;  // i * sh
              if (t < 0 || t % v.sh != 0) continue;
              const int64_t i = t / v.sh;
              if (i >= v.OH) break;
              for (int64_t kw = v.KW - 1; kw >= 0; --kw) {
                const int64_t u = w + v.pw - kw * v.dw;  // j * sw
                if (u < 0 || u % v.sw != 0) continue;
                const int64_t j = u / v.sw;
                if (j >= v.OW) break;
                acc += load_double(dno, i * ds[2] + j * ds[3]) * load_double(wo, kh * ws[2] + kw * ws[3]);
              }
            }
          }
          xr[h * xs[2] + w * xs[3]] = store_double<T>(acc);
        }
      }
    }
  });
}

// dw[o,c',kh,kw] = sum over n, i, j (in that order) of dy[n,o,i,j] * x[n, g Cg + c', ...];
// one task per weight element.
template <class T>
void conv2d_backward_weight_elements(const OpContext& ctx, const Conv& v) {
  const T* const pd = v.dy.as<T>();
  const T* const px = v.x.as<T>();
  T* const pw = v.out.as<T>();
  const int64_t* ds = v.dy.strides;
  const int64_t* xs = v.x.strides;
  const int64_t* ws = v.out.strides;
  const int64_t count = v.O * v.Cg * v.KH * v.KW;
  parallel_for(ctx.pool, count, grain_for(work(v.N, work(v.OH, v.OW))), [&](int64_t begin, int64_t end, unsigned) {
    for (int64_t e = begin; e < end; ++e) {
      int64_t rest = e;
      const int64_t kw = rest % v.KW;
      rest /= v.KW;
      const int64_t kh = rest % v.KH;
      rest /= v.KH;
      const int64_t cp = rest % v.Cg;
      const int64_t o = rest / v.Cg;
      const int64_t c = (o / v.Og) * v.Cg + cp;
      double acc = 0;
      for (int64_t n = 0; n < v.N; ++n) {
        const T* const dno = pd + n * ds[0] + o * ds[1];
        const T* const xnc = px + n * xs[0] + c * xs[1];
        for (int64_t i = 0; i < v.OH; ++i) {
          const int64_t h = i * v.sh - v.ph + kh * v.dh;
          if (h < 0 || h >= v.H) continue;
          for (int64_t j = 0; j < v.OW; ++j) {
            const int64_t w = j * v.sw - v.pw + kw * v.dw;
            if (w < 0 || w >= v.W) continue;
            acc += load_double(dno, i * ds[2] + j * ds[3]) * load_double(xnc, h * xs[2] + w * xs[3]);
          }
        }
      }
      pw[offset4(ws, o, cp, kh, kw)] = store_double<T>(acc);
    }
  });
}

ctl_status* run_conv(const OpContext& ctx, ctl_op_id op) {
  Conv v;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_conv(ctx, op, &v));
  if (v.out.numel() == 0) return nullptr;
  const bool known = dispatch_float(v.x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (op == CTL_OP_CONV2D)
      conv2d_rows<T>(ctx, v);
    else if (op == CTL_OP_CONV2D_BACKWARD_INPUT)
      conv2d_backward_input_rows<T>(ctx, v);
    else
      conv2d_backward_weight_elements<T>(ctx, v);
  });
  if (!known) return ctx.fail(CTL_STATUS_UNSUPPORTED, "dtype %s is not supported", dtype_name(v.x.dtype));
  return nullptr;
}

// ---- pooling ------------------------------------------------------------------------

// The views of a pooling call and their sizes (sdk/bind_conv_pool.hpp).
using Pool = sdk::PoolProblem<View>;

// max_pool2d (max) and avg_pool2d; one task per (n, c) plane.
template <class T>
void pool_forward_planes(const OpContext& ctx, const Pool& v, bool max) {
  const T* const px = v.x.as<T>();
  T* const py = v.out.as<T>();
  const int64_t* xs = v.x.strides;
  const int64_t* ys = v.out.strides;
  const int64_t plane_work = work(v.OH * v.OW, work(std::min(v.kh, v.H), std::min(v.kw, v.W)));
  parallel_for(ctx.pool, v.N * v.C, grain_for(plane_work), [&](int64_t begin, int64_t end, unsigned) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t n = p / v.C, c = p % v.C;
      const T* const xp = px + n * xs[0] + c * xs[1];
      T* const yp = py + n * ys[0] + c * ys[1];
      for (int64_t i = 0; i < v.OH; ++i) {
        for (int64_t j = 0; j < v.OW; ++j) {
          int64_t h0, h1, w0, w1;
          v.window(i, j, &h0, &h1, &w0, &w1);
          double result;
          if (max) {
            // Padding is -inf; the first NaN is the maximum.
            double m = -std::numeric_limits<double>::infinity();
            bool nan = false;
            for (int64_t h = h0; h < h1 && !nan && w0 < w1; ++h) {
              for (int64_t w = w0; w < w1; ++w) {
                const double value = load_double(xp, h * xs[2] + w * xs[3]);
                if (value != value) {
                  m = value;
                  nan = true;
                  break;
                }
                if (value > m) m = value;
              }
            }
            result = m;
          } else {
            double sum = 0;
            for (int64_t h = h0; h < h1 && w0 < w1; ++h) {
              for (int64_t w = w0; w < w1; ++w) sum += load_double(xp, h * xs[2] + w * xs[3]);
            }
            result = sum / v.divisor(h0, h1, w0, w1);
          }
          yp[i * ys[2] + j * ys[3]] = store_double<T>(result);
        }
      }
    }
  });
}

// max_pool2d_backward (max) and avg_pool2d_backward: one task per (n, c) plane, scattering
// into its part's plane of doubles in row-major window order, stored once at the end.
template <class T>
void pool_backward_planes(const OpContext& ctx, const Pool& v, bool max, double* scratch) {
  const T* const pd = v.dy.as<T>();
  const T* const px = v.x.as<T>();
  T* const pdx = v.out.as<T>();
  const int64_t* ds = v.dy.strides;
  const int64_t* xs = v.x.strides;
  const int64_t* os = v.out.strides;
  const int64_t plane = v.H * v.W;
  const int64_t plane_work = std::max(plane, work(v.OH * v.OW, work(std::min(v.kh, v.H), std::min(v.kw, v.W))));
  parallel_for(ctx.pool, v.N * v.C, grain_for(plane_work), [&](int64_t begin, int64_t end, unsigned part) {
    double* const acc = scratch + static_cast<int64_t>(part) * plane;
    for (int64_t p = begin; p < end; ++p) {
      const int64_t n = p / v.C, c = p % v.C;
      const T* const dp = pd + n * ds[0] + c * ds[1];
      const T* const xp = px + n * xs[0] + c * xs[1];
      T* const op = pdx + n * os[0] + c * os[1];
      std::fill(acc, acc + plane, 0.0);
      for (int64_t i = 0; i < v.OH; ++i) {
        for (int64_t j = 0; j < v.OW; ++j) {
          int64_t h0, h1, w0, w1;
          v.window(i, j, &h0, &h1, &w0, &w1);
          if (h0 >= h1 || w0 >= w1) continue;  // all padding: no element receives it
          const double g = load_double(dp, i * ds[2] + j * ds[3]);
          if (max) {
            // The first maximum in row-major order; the first NaN when there is one.
            int64_t at = -1;
            double m = 0;
            for (int64_t h = h0; h < h1; ++h) {
              for (int64_t w = w0; w < w1; ++w) {
                const double value = load_double(xp, h * xs[2] + w * xs[3]);
                if (value != value) {
                  at = h * v.W + w;
                  h = h1;
                  break;
                }
                if (at < 0 || value > m) {
                  m = value;
                  at = h * v.W + w;
                }
              }
            }
            acc[at] += g;
          } else {
            const double share = g / v.divisor(h0, h1, w0, w1);
            for (int64_t h = h0; h < h1; ++h) {
              for (int64_t w = w0; w < w1; ++w) acc[h * v.W + w] += share;
            }
          }
        }
      }
      for (int64_t h = 0; h < v.H; ++h) {
        for (int64_t w = 0; w < v.W; ++w) op[h * os[2] + w * os[3]] = store_double<T>(acc[h * v.W + w]);
      }
    }
  });
}

ctl_status* run_pool(const OpContext& ctx, bool backward, bool max) {
  Pool v;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_pool(ctx, backward, &v));
  if (v.out.numel() == 0) return nullptr;
  Scratch scratch(ctx);
  if (backward) {
    // Non-empty dx: H * W is bounded by its buffer.
    int64_t doubles;
    if (!checked_mul(v.H * v.W, static_cast<int64_t>(ctx.threads()), &doubles) ||
        !checked_mul(doubles, static_cast<int64_t>(sizeof(double)), &doubles)) {
      return ctx.fail(CTL_STATUS_OUT_OF_MEMORY, "scratch planes of %lldx%lld overflow", static_cast<long long>(v.H),
                      static_cast<long long>(v.W));
    }
    CTL_SDK_RETURN_IF_ERROR(scratch.allocate(ctx, static_cast<size_t>(doubles)));
  }
  const bool known = dispatch_float(v.x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (backward)
      pool_backward_planes<T>(ctx, v, max, scratch.as<double>());
    else
      pool_forward_planes<T>(ctx, v, max);
  });
  if (!known) return ctx.fail(CTL_STATUS_UNSUPPORTED, "dtype %s is not supported", dtype_name(v.x.dtype));
  return nullptr;
}

}  // namespace

ctl_status* run_conv2d(const OpContext& ctx) {
  return run_conv(ctx, CTL_OP_CONV2D);
}

ctl_status* run_conv2d_backward_input(const OpContext& ctx) {
  return run_conv(ctx, CTL_OP_CONV2D_BACKWARD_INPUT);
}

ctl_status* run_conv2d_backward_weight(const OpContext& ctx) {
  return run_conv(ctx, CTL_OP_CONV2D_BACKWARD_WEIGHT);
}

ctl_status* run_max_pool2d(const OpContext& ctx) {
  return run_pool(ctx, false, true);
}

ctl_status* run_max_pool2d_backward(const OpContext& ctx) {
  return run_pool(ctx, true, true);
}

ctl_status* run_avg_pool2d(const OpContext& ctx) {
  return run_pool(ctx, false, false);
}

ctl_status* run_avg_pool2d_backward(const OpContext& ctx) {
  return run_pool(ctx, true, false);
}

}  // namespace catalyst::cpu
