#version 450
// conv_pool.comp — direct convolution and pooling over NCHW views (dtype TA), one
// invocation per output element, every element's terms added in double in the reference's
// order (these variants need shaderFloat64): results never depend on the launch, and the
// backward forms gather rather than scatter, so no two invocations write one element.
// KIND_* picks the op. Parameters: P[0] the output's element count, P[1..4] the strides
// (N, C, H, W) of the first input, P[5..8] of the second, P[9] the bias stride, P[10] has a
// bias, P[11..14] the output's strides, P[15..18] x's shape, P[19..22] the weight's shape
// (O, C/groups, KH, KW), P[23..24] (OH, OW), P[25..31] the geometry (conv: sh, sw, ph, pw,
// dh, dw, O/groups; pooling: kh, kw, sh, sw, ph, pw, exclude_padding), P[32..35] the
// element offsets of the first input, second input, bias and output, P[36] max (pooling).
// conv_weight's sums run over N x OH rows of OW terms; P[37..39] give the rows this dispatch
// adds, [row_begin, row_end), and its carry flags (1: the sums start from `carry`, 2: they
// stay there and nothing is written): the host splits the rows so that no invocation's
// loops pass lavapipe's 65,535 iterations (README, "Loop budget"), in the reference's order.
#include "common.glsl"

layout(std430, binding = 1) readonly buffer A { S_(TA) va[]; };
layout(std430, binding = 2) readonly buffer B { S_(TA) vb[]; };
layout(std430, binding = 3) readonly buffer Bias { S_(TA) vbias[]; };
layout(std430, binding = 4) writeonly buffer O { S_(TA) vo[]; };
#if defined(KIND_CONV_WEIGHT)
layout(std430, binding = 5) buffer Carry { double carry[]; };  // [e]: output element e's sum
#endif

int pi(uint k) { return int(P[k]); }
uint at4(uint s, int a, int b, int c, int d) { return uint(a * pi(s) + b * pi(s + 1u) + c * pi(s + 2u) + d * pi(s + 3u)); }
double la(uint i) { return double(LD(TA, va[i])); }
double lb(uint i) { return double(LD(TA, vb[i])); }
int ceil_div(int a, int b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

void main() {
  uint n = P[0];
  int N = pi(15u), C = pi(16u), H = pi(17u), W = pi(18u);
  int O = pi(19u), Cg = pi(20u), KH = pi(21u), KW = pi(22u), OH = pi(23u), OW = pi(24u);
  int g0 = pi(25u), g1 = pi(26u), g2 = pi(27u), g3 = pi(28u), g4 = pi(29u), g5 = pi(30u), g6 = pi(31u);
  uint a_off = P[32], b_off = P[33], bias_off = P[34], o_off = P[35];
  FOR_EACH_ITEM(e, n) {
    int rest = int(e);
    double acc = 0.0lf;
#if defined(KIND_CONV)
    // y[n,o,i,j] = bias[o] + sum over c', kh, kw of x[n, g Cg + c', i sh - ph + kh dh, ...] w[o, c', kh, kw]
    int j = rest % OW; rest /= OW;
    int i = rest % OH; rest /= OH;
    int o = rest % O;
    int b = rest / O;
    int g = o / g6;
    for (int c = 0; c < Cg; ++c) {
      uint xc = a_off + at4(1u, b, g * Cg + c, 0, 0), wc = b_off + at4(5u, o, c, 0, 0);
      for (int kh = 0; kh < KH; ++kh) {
        int h = i * g0 - g2 + kh * g4;
        if (h < 0 || h >= H) continue;
        for (int kw = 0; kw < KW; ++kw) {
          int v = j * g1 - g3 + kw * g5;
          if (v < 0 || v >= W) continue;
          acc += la(xc + uint(h * pi(3u) + v * pi(4u))) * lb(wc + uint(kh * pi(7u) + kw * pi(8u)));
        }
      }
    }
    double bias = P[10] != 0u ? double(LD(TA, vbias[bias_off + uint(o * pi(9u))])) : 0.0lf;
    vo[o_off + at4(11u, b, o, i, j)] = ST(TA, C_(TA)(bias + acc));
#elif defined(KIND_CONV_INPUT)
    // dx[n,c,h,w]: dy (first input) against the weight (second), kh and kw descending so
    // the terms come in ascending (i, j) order, as the definition's scatter adds them.
    int v = rest % W; rest /= W;
    int h = rest % H; rest /= H;
    int c = rest % C;
    int b = rest / C;
    int g = c / Cg, cp = c % Cg;
    for (int m = 0; m < g6; ++m) {
      int o = g * g6 + m;
      uint dno = a_off + at4(1u, b, o, 0, 0), wo = b_off + at4(5u, o, cp, 0, 0);
      for (int kh = KH - 1; kh >= 0; --kh) {
        int t = h + g2 - kh * g4;
        if (t < 0 || t % g0 != 0) continue;
        int i = t / g0;
        if (i >= OH) break;
        for (int kw = KW - 1; kw >= 0; --kw) {
          int u = v + g3 - kw * g5;
          if (u < 0 || u % g1 != 0) continue;
          int j = u / g1;
          if (j >= OW) break;
          acc += la(dno + uint(i * pi(3u) + j * pi(4u))) * lb(wo + uint(kh * pi(7u) + kw * pi(8u)));
        }
      }
    }
    vo[o_off + at4(11u, b, c, h, v)] = ST(TA, C_(TA)(acc));
#elif defined(KIND_CONV_WEIGHT)
    // dw[o,c',kh,kw] = sum over n, i, j of dy[n,o,i,j] (first input) x[n, g Cg + c', ...] (second).
    int kw = rest % KW; rest /= KW;
    int kh = rest % KH; rest /= KH;
    int cp = rest % Cg;
    int o = rest / Cg;
    int c = (o / g6) * Cg + cp;
    uint row_begin = P[37], row_end = P[38], carry_flags = P[39];
    if ((carry_flags & 1u) != 0u) acc = carry[e];
    for (uint row = row_begin; row < row_end; ++row) {  // row = b OH + i
      int b = int(row) / OH, i = int(row) % OH;
      uint dno = a_off + at4(1u, b, o, 0, 0), xnc = b_off + at4(5u, b, c, 0, 0);
      int h = i * g0 - g2 + kh * g4;
      if (h < 0 || h >= H) continue;
      for (int j = 0; j < OW; ++j) {
        int v = j * g1 - g3 + kw * g5;
        if (v < 0 || v >= W) continue;
        acc += la(dno + uint(i * pi(3u) + j * pi(4u))) * lb(xnc + uint(h * pi(7u) + v * pi(8u)));
      }
    }
    if ((carry_flags & 2u) != 0u) {
      carry[e] = acc;
      continue;
    }
    vo[o_off + at4(11u, o, cp, kh, kw)] = ST(TA, C_(TA)(acc));
#elif defined(KIND_POOL)
    // max_pool2d (P[36]) or avg_pool2d of x (first input); padding never wins the max and
    // the first NaN is the maximum.
    int j = rest % OW; rest /= OW;
    int i = rest % OH; rest /= OH;
    int c = rest % C;
    int b = rest / C;
    uint xp = a_off + at4(1u, b, c, 0, 0);
    int hs = i * g2 - g4, ws = j * g3 - g5;
    int h0 = max(hs, 0), h1 = min(H, hs + g0), w0 = max(ws, 0), w1 = min(W, ws + g1);
    double result;
    if (P[36] != 0u) {
      double m = packDouble2x32(uvec2(0u, 0xfff00000u));  // -inf
      bool nan = false;
      for (int h = h0; h < h1 && !nan; ++h) {
        for (int v = w0; v < w1; ++v) {
          double value = la(xp + uint(h * pi(3u) + v * pi(4u)));
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
      for (int h = h0; h < h1; ++h) {
        for (int v = w0; v < w1; ++v) acc += la(xp + uint(h * pi(3u) + v * pi(4u)));
      }
      double divisor = g6 != 0 ? double(max(h1 - h0, 0) * max(w1 - w0, 0)) : double(g0) * double(g1);
      result = acc / divisor;
    }
    vo[o_off + at4(11u, b, c, i, j)] = ST(TA, C_(TA)(result));
#elif defined(KIND_POOL_BACKWARD)
    // dx element (h, w) walks the windows that hold it in row-major order: dy (first input)
    // where it is the window's first maximum of x (second input), or dy / divisor.
    int v = rest % W; rest /= W;
    int h = rest % H; rest /= H;
    int c = rest % C;
    int b = rest / C;
    uint dp = a_off + at4(1u, b, c, 0, 0), xp = b_off + at4(5u, b, c, 0, 0);
    int i0 = max(ceil_div(h + g4 - g0 + 1, g2), 0), i1 = min((h + g4) / g2, OH - 1);
    int j0 = max(ceil_div(v + g5 - g1 + 1, g3), 0), j1 = min((v + g5) / g3, OW - 1);
    for (int i = i0; i <= i1; ++i) {
      for (int j = j0; j <= j1; ++j) {
        int hs = i * g2 - g4, ws = j * g3 - g5;
        int h0 = max(hs, 0), h1 = min(H, hs + g0), w0 = max(ws, 0), w1 = min(W, ws + g1);
        double grad = la(dp + uint(i * pi(3u) + j * pi(4u)));
        if (P[36] != 0u) {
          int at = -1;
          double m = 0.0lf;
          for (int hh = h0; hh < h1; ++hh) {
            for (int vv = w0; vv < w1; ++vv) {
              double value = lb(xp + uint(hh * pi(7u) + vv * pi(8u)));
              if (isnan(value)) {
                at = hh * W + vv;
                hh = h1;  // the first NaN is the maximum
                break;
              }
              if (at < 0 || value > m) {
                m = value;
                at = hh * W + vv;
              }
            }
          }
          if (at == h * W + v) acc += grad;
        } else {
          double divisor = g6 != 0 ? double(max(h1 - h0, 0) * max(w1 - w0, 0)) : double(g0) * double(g1);
          acc += grad / divisor;
        }
      }
    }
    vo[o_off + at4(11u, b, c, h, v)] = ST(TA, C_(TA)(acc));
#endif
  }
}
