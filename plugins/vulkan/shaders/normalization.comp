#version 450
// normalization.comp — softmax and log_softmax along any axis, layer_norm and rms_norm
// over the last axis, and their backward forms: one work-group per row, its max and sums
// meeting in a tree in shared memory. Rows are an iteration over every axis but the
// normalised one (P[0..], with the views below); each row's n elements lie `step` apart.
// With MATH_F64 (or for f64) everything is computed in double and rounded once; TS is the
// dtype of the mean / rstd statistics (f32 for f16 / bf16, else TA).
#include "common.glsl"
#if TA_WIDE || defined(MATH_F64)
#include "math_f64.glsl"
#define M double
#define EXP_(v) ctl_exp_d(v)
#define LOG_(v) ctl_log_d(v)
#define ONE 1.0lf
#else
#define M float
#define EXP_(v) exp(v)
#define LOG_(v) log(v)
#define ONE 1.0
#endif

layout(constant_id = 1) const int OP = 0;
shared M s_scratch[gl_WorkGroupSize.x];

M group_sum(M v) {
  uint lid = gl_LocalInvocationID.x;
  s_scratch[lid] = v;
  barrier();
  for (uint span = gl_WorkGroupSize.x / 2u; span > 0u; span /= 2u) {
    if (lid < span) s_scratch[lid] += s_scratch[lid + span];
    barrier();
  }
  M total = s_scratch[0];
  barrier();
  return total;
}

M group_max(M v) {
  uint lid = gl_LocalInvocationID.x;
  s_scratch[lid] = v;
  barrier();
  for (uint span = gl_WorkGroupSize.x / 2u; span > 0u; span /= 2u) {
    if (lid < span) {
      M other = s_scratch[lid + span];
      if (isnan(other) || other > s_scratch[lid]) s_scratch[lid] = other;
    }
    barrier();
  }
  M total = s_scratch[0];
  barrier();
  return total;
}

M scalar_at(uint at) {
#if TA_WIDE || defined(MATH_F64)
  return packDouble2x32(uvec2(P[at], P[at + 1u]));
#else
  return uintBitsToFloat(P[at]);
#endif
}

#define ROW_LOOP(r, rows) for (uint r = gl_WorkGroupID.x; r < (rows); r += gl_NumWorkGroups.x)
#define ELEMENT_LOOP(i, n) for (uint i = gl_LocalInvocationID.x; i < (n); i += gl_WorkGroupSize.x)

#if defined(KIND_SOFTMAX)
// Views x, y; P[28..30]: n, x's step, y's step. OP 128 softmax, 129 log_softmax.
layout(std430, binding = 1) readonly buffer X { S_(TA) x[]; };
layout(std430, binding = 2) writeonly buffer Y { S_(TA) y[]; };
void main() {
  uint rows = P[0], n = P[28], xs = P[29], ys = P[30];
  ROW_LOOP(r, rows) {
    Index idx = ctl_unravel(0u, r);
    uint xb = ctl_offset(0u, idx, 0u), yb = ctl_offset(0u, idx, 1u);
    M m = M(uintBitsToFloat(0xff800000u));
    ELEMENT_LOOP(i, n) {
      M v = M(LD(TA, x[xb + i * xs]));
      if (isnan(v) || v > m) m = v;
    }
    m = group_max(m);
    M sum = M(0);
    ELEMENT_LOOP(i, n) sum += EXP_(M(LD(TA, x[xb + i * xs])) - m);
    sum = group_sum(sum);  // a row of all -inf gives (-inf) - (-inf) = NaN, as the reference
    if (OP == 129) {
      M lse = LOG_(sum);
      ELEMENT_LOOP(i, n) y[yb + i * ys] = ST(TA, C_(TA)((M(LD(TA, x[xb + i * xs])) - m) - lse));
    } else {
      ELEMENT_LOOP(i, n) y[yb + i * ys] = ST(TA, C_(TA)(EXP_(M(LD(TA, x[xb + i * xs])) - m) / sum));
    }
  }
}
#endif

#if defined(KIND_SOFTMAX_BACKWARD)
// Views y, dy, dx; P[37..40]: n, steps of y, dy, dx. OP 224 softmax, 225 log_softmax:
// dx = y (dy - sum(dy y)), or dx = dy - exp(y) sum(dy).
layout(std430, binding = 1) readonly buffer Yb { S_(TA) y[]; };
layout(std430, binding = 2) readonly buffer DY { S_(TA) dy[]; };
layout(std430, binding = 3) writeonly buffer DX { S_(TA) dx[]; };
void main() {
  uint rows = P[0], n = P[37], ys = P[38], ds = P[39], xs = P[40];
  ROW_LOOP(r, rows) {
    Index idx = ctl_unravel(0u, r);
    uint yb = ctl_offset(0u, idx, 0u), db = ctl_offset(0u, idx, 1u), xb = ctl_offset(0u, idx, 2u);
    M s = M(0);
    ELEMENT_LOOP(i, n) {
      M d = M(LD(TA, dy[db + i * ds]));
      s += OP == 225 ? d : d * M(LD(TA, y[yb + i * ys]));
    }
    s = group_sum(s);
    ELEMENT_LOOP(i, n) {
      M yi = M(LD(TA, y[yb + i * ys])), di = M(LD(TA, dy[db + i * ds]));
      dx[xb + i * xs] = ST(TA, C_(TA)(OP == 225 ? di - EXP_(yi) * s : yi * (di - s)));
    }
  }
}
#endif

#if defined(KIND_NORM)
// Views x, y, mean, rstd; P[46..]: n, x step, y step, weight offset and step, bias offset
// and step, flags (1 weight, 2 bias, 4 mean, 8 rstd), eps. OP 130 layer_norm, 131 rms_norm.
layout(std430, binding = 1) readonly buffer X { S_(TA) x[]; };
layout(std430, binding = 2) writeonly buffer Y { S_(TA) y[]; };
layout(std430, binding = 3) readonly buffer W { S_(TA) w[]; };
layout(std430, binding = 4) readonly buffer B { S_(TA) b[]; };
layout(std430, binding = 5) writeonly buffer MEAN { S_(TS) mean_out[]; };
layout(std430, binding = 6) writeonly buffer RSTD { S_(TS) rstd_out[]; };
void main() {
  uint rows = P[0], n = P[46], xs = P[47], ys = P[48], wo = P[49], ws = P[50], bo = P[51], bs = P[52], flags = P[53];
  M eps = scalar_at(54u);
  M dn = M(n);
  ROW_LOOP(r, rows) {
    Index idx = ctl_unravel(0u, r);
    uint xb = ctl_offset(0u, idx, 0u), yb = ctl_offset(0u, idx, 1u);
    M mean = M(0);
    if (OP == 130) {
      M sum = M(0);
      ELEMENT_LOOP(i, n) sum += M(LD(TA, x[xb + i * xs]));
      mean = group_sum(sum) / dn;
    }
    M sq = M(0);
    ELEMENT_LOOP(i, n) {
      M d = M(LD(TA, x[xb + i * xs])) - mean;
      sq += d * d;
    }
    M rstd = ONE / sqrt(group_sum(sq) / dn + eps);
    ELEMENT_LOOP(i, n) {
      M v = (M(LD(TA, x[xb + i * xs])) - mean) * rstd;
      if ((flags & 1u) != 0u) v *= M(LD(TA, w[wo + i * ws]));
      if ((flags & 2u) != 0u) v += M(LD(TA, b[bo + i * bs]));
      y[yb + i * ys] = ST(TA, C_(TA)(v));
    }
    if (gl_LocalInvocationID.x == 0u) {
      if ((flags & 4u) != 0u) mean_out[ctl_offset(0u, idx, 2u)] = ST(TS, C_(TS)(mean));
      if ((flags & 8u) != 0u) rstd_out[ctl_offset(0u, idx, 3u)] = ST(TS, C_(TS)(rstd));
    }
  }
}
#endif

#if defined(KIND_NORM_BACKWARD)
// Views dy, x, dx, mean, rstd; P[55..]: n, steps of dy, x, dx, weight offset and step,
// flags (1 weight). OP 226 layer_norm, 227 rms_norm. xh = (x - mean) rstd (rms: x rstd),
// g = dy w; dx = rstd (g - mean(g) - xh mean(g xh)) (rms: no mean(g) term).
layout(std430, binding = 1) readonly buffer DY { S_(TA) dy[]; };
layout(std430, binding = 2) readonly buffer X { S_(TA) x[]; };
layout(std430, binding = 3) writeonly buffer DX { S_(TA) dx[]; };
layout(std430, binding = 4) readonly buffer MEAN { S_(TS) mean_in[]; };
layout(std430, binding = 5) readonly buffer RSTD { S_(TS) rstd_in[]; };
layout(std430, binding = 6) readonly buffer W { S_(TA) w[]; };
void main() {
  uint rows = P[0], n = P[55], ds = P[56], xs = P[57], os = P[58], wo = P[59], ws = P[60], flags = P[61];
  M dn = M(n);
  ROW_LOOP(r, rows) {
    Index idx = ctl_unravel(0u, r);
    uint db = ctl_offset(0u, idx, 0u), xb = ctl_offset(0u, idx, 1u), ob = ctl_offset(0u, idx, 2u);
    M mean = OP == 226 ? M(LD(TS, mean_in[ctl_offset(0u, idx, 3u)])) : M(0);
    M rstd = M(LD(TS, rstd_in[ctl_offset(0u, idx, 4u)]));
    M sg = M(0), sgx = M(0);
    ELEMENT_LOOP(i, n) {
      M g = M(LD(TA, dy[db + i * ds]));
      if ((flags & 1u) != 0u) g *= M(LD(TA, w[wo + i * ws]));
      M xh = (M(LD(TA, x[xb + i * xs])) - mean) * rstd;
      sg += g;
      sgx += g * xh;
    }
    sg = group_sum(sg) / dn;
    sgx = group_sum(sgx) / dn;
    ELEMENT_LOOP(i, n) {
      M g = M(LD(TA, dy[db + i * ds]));
      if ((flags & 1u) != 0u) g *= M(LD(TA, w[wo + i * ws]));
      M xh = (M(LD(TA, x[xb + i * xs])) - mean) * rstd;
      M v = OP == 226 ? rstd * (g - sg - xh * sgx) : rstd * (g - xh * sgx);
      dx[ob + i * os] = ST(TA, C_(TA)(v));
    }
  }
}
#endif

#if defined(KIND_NORM_PARAMS)
// dweight[j] = sum over rows of dy xh, dbias[j] = sum of dy: one invocation per column j,
// rows in order, so the result does not depend on the launch. Views dy, x, mean, rstd;
// P[46..]: n, steps of dy and x, dweight offset and step, dbias offset and step, flags
// (1 dweight, 2 dbias), then the rows this dispatch adds, [r_begin, r_end), and its carry
// flags (1: the sums start from `carry`, 2: they stay there, nothing is written): the host
// splits the rows so that no invocation's loops pass lavapipe's 65,535 iterations (README,
// "Loop budget"), and the sums cross dispatches whole, so the bits do not change. OP as
// KIND_NORM_BACKWARD.
layout(std430, binding = 1) readonly buffer DY { S_(TA) dy[]; };
layout(std430, binding = 2) readonly buffer X { S_(TA) x[]; };
layout(std430, binding = 3) readonly buffer MEAN { S_(TS) mean_in[]; };
layout(std430, binding = 4) readonly buffer RSTD { S_(TS) rstd_in[]; };
layout(std430, binding = 5) writeonly buffer DW { S_(TA) dw[]; };
layout(std430, binding = 6) writeonly buffer DB { S_(TA) dbias[]; };
layout(std430, binding = 7) buffer Carry { M carry[]; };  // [2 j]: sw, [2 j + 1]: sb
void main() {
  uint n = P[46], ds = P[47], xs = P[48], wo = P[49], ws = P[50], bo = P[51], bs = P[52], flags = P[53];
  uint r_begin = P[54], r_end = P[55], carry_flags = P[56];
  FOR_EACH_ITEM(j, n) {
    M sw = M(0), sb = M(0);
    if ((carry_flags & 1u) != 0u) {
      sw = carry[2u * j];
      sb = carry[2u * j + 1u];
    }
    for (uint r = r_begin; r < r_end; ++r) {
      Index idx = ctl_unravel(0u, r);
      M d = M(LD(TA, dy[ctl_offset(0u, idx, 0u) + j * ds]));
      M mean = OP == 226 ? M(LD(TS, mean_in[ctl_offset(0u, idx, 2u)])) : M(0);
      M rstd = M(LD(TS, rstd_in[ctl_offset(0u, idx, 3u)]));
      sw += d * (M(LD(TA, x[ctl_offset(0u, idx, 1u) + j * xs])) - mean) * rstd;
      sb += d;
    }
    if ((carry_flags & 2u) != 0u) {
      carry[2u * j] = sw;
      carry[2u * j + 1u] = sb;
      continue;
    }
    if ((flags & 1u) != 0u) dw[wo + j * ws] = ST(TA, C_(TA)(sw));
    if ((flags & 2u) != 0u) dbias[bo + j * bs] = ST(TA, C_(TA)(sb));
  }
}
#endif
