// conv_pool.cl — direct convolution and pooling over NCHW views (dtype TA), one work-item
// per output element. Each element's terms are added in MATH_T (double where the device
// has it) in the reference's order, so results never depend on the launch size; the
// backward forms gather (each dx element walks the dy positions that reach it) instead of
// scattering, so no two work-items ever write one element.
//
// Views arrive with their four strides in N, C, H, W order (long4 s0..s3); shapes as
// long4 (N, C, H, W) and long2 (OH, OW).

#if defined(CTL_HAVE_FP64)
#define MATH_T double
#else
#define MATH_T float
#endif

inline long ctl_at4(long4 s, long a, long b, long c, long d) { return a * s.s0 + b * s.s1 + c * s.s2 + d * s.s3; }

// ceil(a / b) for b > 0 and any a.
inline long ctl_ceil_div(long a, long b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

// ---- convolution: geometry long8 (sh, sw, ph, pw, dh, dw, Og, 0), w_shape (O, Cg, KH, KW)

// y[n,o,i,j] = bias[o] + sum over c', kh, kw of x[n, g Cg + c', i sh - ph + kh dh, j sw - pw + kw dw]
// * w[o, c', kh, kw].
__kernel void conv2d(__global const T_(TA)* x, long x_offset, long4 xs, __global const T_(TA)* w, long w_offset,
                     long4 ws, __global const T_(TA)* bias, long bias_offset, long bias_stride, int has_bias,
                     __global T_(TA)* y, long y_offset, long4 ys, long4 x_shape, long4 w_shape, long2 out_hw,
                     long8 geo, long n) {
  const long H = x_shape.s2, W = x_shape.s3, O = w_shape.s0, Cg = w_shape.s1, KH = w_shape.s2, KW = w_shape.s3;
  const long OH = out_hw.s0, OW = out_hw.s1, Og = geo.s6;
  FOR_EACH_ITEM(e, n) {
    long rest = e;
    const long j = rest % OW;
    rest /= OW;
    const long i = rest % OH;
    rest /= OH;
    const long o = rest % O;
    const long b = rest / O;
    const long g = o / Og;
    MATH_T acc = 0;
    for (long c = 0; c < Cg; ++c) {
      const long xc = x_offset + ctl_at4(xs, b, g * Cg + c, 0, 0);
      const long wc = w_offset + ctl_at4(ws, o, c, 0, 0);
      for (long kh = 0; kh < KH; ++kh) {
        const long h = i * geo.s0 - geo.s2 + kh * geo.s4;
        if (h < 0 || h >= H) continue;
        for (long kw = 0; kw < KW; ++kw) {
          const long v = j * geo.s1 - geo.s3 + kw * geo.s5;
          if (v < 0 || v >= W) continue;
          acc += (MATH_T)LOAD(TA, x, xc + h * xs.s2 + v * xs.s3) * (MATH_T)LOAD(TA, w, wc + kh * ws.s2 + kw * ws.s3);
        }
      }
    }
    const MATH_T bias_value = has_bias ? (MATH_T)LOAD(TA, bias, bias_offset + o * bias_stride) : (MATH_T)0;
    STORE(TA, y, y_offset + ctl_at4(ys, b, o, i, j), bias_value + acc);
  }
}

// dx[n,c,h,w] = sum over o in c's group, kh, kw and the (i, j) that reach (h, w) of
// dy[n,o,i,j] * w[o, c', kh, kw].
__kernel void conv2d_backward_input(__global const T_(TA)* dy, long dy_offset, long4 ds, __global const T_(TA)* w,
                                    long w_offset, long4 ws, __global T_(TA)* dx, long dx_offset, long4 xs,
                                    long4 x_shape, long4 w_shape, long2 out_hw, long8 geo, long n) {
  const long C = x_shape.s1, H = x_shape.s2, W = x_shape.s3, Cg = w_shape.s1, KH = w_shape.s2, KW = w_shape.s3;
  const long OH = out_hw.s0, OW = out_hw.s1, Og = geo.s6;
  const long sh = geo.s0, sw = geo.s1, ph = geo.s2, pw = geo.s3, dh = geo.s4, dw = geo.s5;
  FOR_EACH_ITEM(e, n) {
    long rest = e;
    const long v = rest % W;
    rest /= W;
    const long h = rest % H;
    rest /= H;
    const long c = rest % C;
    const long b = rest / C;
    const long g = c / Cg, cp = c % Cg;
    MATH_T acc = 0;
    for (long m = 0; m < Og; ++m) {
      const long o = g * Og + m;
      const long dno = dy_offset + ctl_at4(ds, b, o, 0, 0);
      const long wo = w_offset + ctl_at4(ws, o, cp, 0, 0);
      // kh and kw descending: the terms come in ascending (i, j) order, as the
      // definition's scatter over dy adds them.
      for (long kh = KH - 1; kh >= 0; --kh) {
        const long t = h + ph - kh * dh;  // i * sh
        if (t < 0 || t % sh != 0) continue;
        const long i = t / sh;
        if (i >= OH) break;
        for (long kw = KW - 1; kw >= 0; --kw) {
          const long u = v + pw - kw * dw;  // j * sw
          if (u < 0 || u % sw != 0) continue;
          const long j = u / sw;
          if (j >= OW) break;
          acc += (MATH_T)LOAD(TA, dy, dno + i * ds.s2 + j * ds.s3) * (MATH_T)LOAD(TA, w, wo + kh * ws.s2 + kw * ws.s3);
        }
      }
    }
    STORE(TA, dx, dx_offset + ctl_at4(xs, b, c, h, v), acc);
  }
}

// dw[o,c',kh,kw] = sum over n, i, j (in that order) of dy[n,o,i,j] * x[n, g Cg + c', ...].
__kernel void conv2d_backward_weight(__global const T_(TA)* dy, long dy_offset, long4 ds, __global const T_(TA)* x,
                                     long x_offset, long4 xs, __global T_(TA)* dw_out, long dw_offset, long4 ws,
                                     long4 x_shape, long4 w_shape, long2 out_hw, long8 geo, long n) {
  const long N = x_shape.s0, H = x_shape.s2, W = x_shape.s3, Cg = w_shape.s1, KH = w_shape.s2, KW = w_shape.s3;
  const long OH = out_hw.s0, OW = out_hw.s1, Og = geo.s6;
  const long sh = geo.s0, sw = geo.s1, ph = geo.s2, pw = geo.s3, dh = geo.s4, dw = geo.s5;
  FOR_EACH_ITEM(e, n) {
    long rest = e;
    const long kw = rest % KW;
    rest /= KW;
    const long kh = rest % KH;
    rest /= KH;
    const long cp = rest % Cg;
    const long o = rest / Cg;
    const long c = (o / Og) * Cg + cp;
    MATH_T acc = 0;
    for (long b = 0; b < N; ++b) {
      const long dno = dy_offset + ctl_at4(ds, b, o, 0, 0);
      const long xnc = x_offset + ctl_at4(xs, b, c, 0, 0);
      for (long i = 0; i < OH; ++i) {
        const long h = i * sh - ph + kh * dh;
        if (h < 0 || h >= H) continue;
        for (long j = 0; j < OW; ++j) {
          const long v = j * sw - pw + kw * dw;
          if (v < 0 || v >= W) continue;
          acc += (MATH_T)LOAD(TA, dy, dno + i * ds.s2 + j * ds.s3) * (MATH_T)LOAD(TA, x, xnc + h * xs.s2 + v * xs.s3);
        }
      }
    }
    STORE(TA, dw_out, dw_offset + ctl_at4(ws, o, cp, kh, kw), acc);
  }
}

// ---- pooling: geometry long8 (kh, kw, sh, sw, ph, pw, exclude_padding, 0) --------------

// Window (i, j) clipped to the input: rows [h0, h1), columns [w0, w1) (maybe empty).
inline long4 ctl_window(long i, long j, long8 geo, long H, long W) {
  const long hs = i * geo.s2 - geo.s4, ws = j * geo.s3 - geo.s5;
  return (long4)(max(hs, 0L), min(H, hs + geo.s0), max(ws, 0L), min(W, ws + geo.s1));
}

inline MATH_T ctl_divisor(long4 win, long8 geo) {
  if (geo.s6) return (MATH_T)(max(win.s1 - win.s0, 0L) * max(win.s3 - win.s2, 0L));
  return (MATH_T)geo.s0 * (MATH_T)geo.s1;
}

// Row-major (h * W + w) of the window's first maximum, the first NaN when it holds one;
// -1 for an empty window.
inline long ctl_window_argmax(__global const T_(TA)* x, long xp, long4 xs, long4 win, long W) {
  long at = -1;
  MATH_T m = 0;
  for (long h = win.s0; h < win.s1; ++h) {
    for (long v = win.s2; v < win.s3; ++v) {
      const MATH_T value = LOAD(TA, x, xp + h * xs.s2 + v * xs.s3);
      if (isnan(value)) return h * W + v;
      if (at < 0 || value > m) {
        m = value;
        at = h * W + v;
      }
    }
  }
  return at;
}

// max_pool2d (is_max) and avg_pool2d, one work-item per y element. Padding never wins the
// max (it is -inf); the first NaN is the maximum.
__kernel void pool2d(__global const T_(TA)* x, long x_offset, long4 xs, __global T_(TA)* y, long y_offset, long4 ys,
                     long4 x_shape, long2 out_hw, long8 geo, int is_max, long n) {
  const long C = x_shape.s1, H = x_shape.s2, W = x_shape.s3, OH = out_hw.s0, OW = out_hw.s1;
  FOR_EACH_ITEM(e, n) {
    long rest = e;
    const long j = rest % OW;
    rest /= OW;
    const long i = rest % OH;
    rest /= OH;
    const long c = rest % C;
    const long b = rest / C;
    const long xp = x_offset + ctl_at4(xs, b, c, 0, 0);
    const long4 win = ctl_window(i, j, geo, H, W);
    MATH_T result;
    if (is_max) {
      MATH_T m = -INFINITY;
      bool nan = false;
      for (long h = win.s0; h < win.s1 && !nan; ++h) {
        for (long v = win.s2; v < win.s3; ++v) {
          const MATH_T value = LOAD(TA, x, xp + h * xs.s2 + v * xs.s3);
          if (isnan(value)) {
            m = value;
            nan = true;
            break;
          }
          if (value > m) m = value;
        }
      }
      result = m;
    } else {
      MATH_T sum = 0;
      for (long h = win.s0; h < win.s1; ++h) {
        for (long v = win.s2; v < win.s3; ++v) sum += LOAD(TA, x, xp + h * xs.s2 + v * xs.s3);
      }
      result = sum / ctl_divisor(win, geo);
    }
    STORE(TA, y, y_offset + ctl_at4(ys, b, c, i, j), result);
  }
}

// max_pool2d_backward (is_max) and avg_pool2d_backward, one work-item per dx element: it
// walks the windows (i, j) that hold it in row-major order, the order in which the
// definition's scatter over dy adds them, taking dy[i, j] where its element is the
// window's first maximum (max) or dy[i, j] / divisor (avg).
__kernel void pool2d_backward(__global const T_(TA)* dy, long dy_offset, long4 ds, __global const T_(TA)* x,
                              long x_offset, long4 xs, __global T_(TA)* dx, long dx_offset, long4 os, long4 x_shape,
                              long2 out_hw, long8 geo, int is_max, long n) {
  const long C = x_shape.s1, H = x_shape.s2, W = x_shape.s3, OH = out_hw.s0, OW = out_hw.s1;
  const long kh = geo.s0, kw = geo.s1, sh = geo.s2, sw = geo.s3, ph = geo.s4, pw = geo.s5;
  FOR_EACH_ITEM(e, n) {
    long rest = e;
    const long v = rest % W;
    rest /= W;
    const long h = rest % H;
    rest /= H;
    const long c = rest % C;
    const long b = rest / C;
    const long xp = x_offset + ctl_at4(xs, b, c, 0, 0);
    const long dp = dy_offset + ctl_at4(ds, b, c, 0, 0);
    // Window i covers rows [i sh - ph, i sh - ph + kh): it holds h for i in [i0, i1].
    const long i0 = max(ctl_ceil_div(h + ph - kh + 1, sh), 0L), i1 = min((h + ph) / sh, OH - 1);
    const long j0 = max(ctl_ceil_div(v + pw - kw + 1, sw), 0L), j1 = min((v + pw) / sw, OW - 1);
    MATH_T acc = 0;
    for (long i = i0; i <= i1; ++i) {
      for (long j = j0; j <= j1; ++j) {
        const long4 win = ctl_window(i, j, geo, H, W);
        const MATH_T g = LOAD(TA, dy, dp + i * ds.s2 + j * ds.s3);
        if (is_max) {
          if (ctl_window_argmax(x, xp, xs, win, W) == h * W + v) acc += g;
        } else {
          acc += g / ctl_divisor(win, geo);
        }
      }
    }
    STORE(TA, dx, dx_offset + ctl_at4(os, b, c, h, v), acc);
  }
}
