#version 450
// training.comp — cross_entropy (rows, total, count), its backward, adamw_step and
// sgd_step. TA is the logits / grad dtype, TB the target dtype (i32 or i64). Everything is
// computed in double (these variants need shaderFloat64) and rounded once when stored. Loss
// rows are one work-group each, reduced in shared memory in a fixed tree order; MEAN and
// SUM add the per-row losses in a second single-group dispatch, again in a fixed order.
#include "common.glsl"
#include "math_f64.glsl"

shared double s_sum[gl_WorkGroupSize.x];
shared int64_t s_count[gl_WorkGroupSize.x];

double ctl_max_nan(double a, double b) {
  if (isnan(a)) return a;
  if (isnan(b)) return b;
  return a > b ? a : b;
}
double group_max(double v) {
  uint lid = gl_LocalInvocationID.x;
  s_sum[lid] = v;
  barrier();
  for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s /= 2u) {
    if (lid < s) s_sum[lid] = ctl_max_nan(s_sum[lid], s_sum[lid + s]);
    barrier();
  }
  double r = s_sum[0];
  barrier();
  return r;
}
double group_sum(double v) {
  uint lid = gl_LocalInvocationID.x;
  s_sum[lid] = v;
  barrier();
  for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s /= 2u) {
    if (lid < s) s_sum[lid] += s_sum[lid + s];
    barrier();
  }
  double r = s_sum[0];
  barrier();
  return r;
}
int64_t group_count(int64_t v) {
  uint lid = gl_LocalInvocationID.x;
  s_count[lid] = v;
  barrier();
  for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s /= 2u) {
    if (lid < s) s_count[lid] += s_count[lid + s];
    barrier();
  }
  int64_t r = s_count[0];
  barrier();
  return r;
}
#if defined(KIND_CE_ROWS) || defined(KIND_CE_BACKWARD) || defined(KIND_CE_COUNT)
// Class ids compare in their own type: lavapipe widened negative i32 ids to i64 wrongly.
bool ctl_is_ignored(C_(TB) t, bool ignore_set, int64_t ignore_index) {
  if (!ignore_set) return false;
#if defined(TB_IS_i32)
  if (ignore_index < -2147483648l || ignore_index > 2147483647l) return false;
  return t == int(ignore_index);
#else
  return t == ignore_index;
#endif
}
#endif
double scalar_at(uint at) { return packDouble2x32(uvec2(P[at], P[at + 1u])); }
int64_t int_at(uint at) { return int64_t(packUint2x32(uvec2(P[at], P[at + 1u]))); }

#if defined(KIND_CE_ROWS) || defined(KIND_CE_BACKWARD)
layout(std430, binding = 1) readonly buffer Z { S_(TA) z[]; };
layout(std430, binding = 2) readonly buffer T { S_(TB) t[]; };

double row_max(uint zr, uint c, uint zs) {
  double m = -ctl_inf_d();
  for (uint k = gl_LocalInvocationID.x; k < c; k += gl_WorkGroupSize.x) m = ctl_max_nan(m, double(LD(TA, z[zr + k * zs])));
  return group_max(m);
}
double row_expsum(uint zr, uint c, uint zs, double m) {
  double sum = 0.0lf;
  for (uint k = gl_LocalInvocationID.x; k < c; k += gl_WorkGroupSize.x) sum += ctl_exp_d(double(LD(TA, z[zr + k * zs])) - m);
  return group_sum(sum);
}
#endif

#if defined(KIND_CE_ROWS)
// Views z, t, out (P[0..36]); P[37] z's class step, P[38] classes, P[39..40] ignore_index,
// P[41] ignore_set, P[42] per_row. The row's loss goes to out (NONE) or to partial and
// counted at the row's index.
layout(std430, binding = 3) writeonly buffer O { S_(TA) o[]; };
layout(std430, binding = 4) writeonly buffer PART { double partial[]; };
layout(std430, binding = 5) writeonly buffer CNT { int64_t counted[]; };
void main() {
  uint rows = P[0], zs = P[37], c = P[38];
  int64_t ignore_index = int_at(39u);
  bool ignore_set = P[41] != 0u, per_row = P[42] != 0u;
  for (uint row = gl_WorkGroupID.x; row < rows; row += gl_NumWorkGroups.x) {
    Index idx = ctl_unravel(0u, row);
    uint zr = ctl_offset(0u, idx, 0u);
    C_(TB) target = LD(TB, t[ctl_offset(0u, idx, 1u)]);
    bool ignored = ctl_is_ignored(target, ignore_set, ignore_index);
    // The reductions run for every row, outside any branch: the whole group reaches them.
    double m = row_max(zr, c, zs);
    double sum = row_expsum(zr, c, zs, m);
    double lse = (isinf(m) || isnan(m)) ? m : m + ctl_log_d(sum);
    double loss = 0.0lf;
    if (!ignored) {
      loss = (target < C_(TB)(0) || target >= C_(TB)(c)) ? ctl_nan_d() : lse - double(LD(TA, z[zr + uint(target) * zs]));
    }
    if (gl_LocalInvocationID.x == 0u) {
      if (per_row) {
        o[ctl_offset(0u, idx, 2u)] = ST(TA, C_(TA)(loss));
      } else {
        partial[row] = loss;
        counted[row] = ignored ? 0 : 1;
      }
    }
  }
}
#endif

#if defined(KIND_CE_TOTAL)
// P[0] rows, P[1] mean, P[2] out's offset: the per-row losses added in a fixed order.
layout(std430, binding = 1) readonly buffer PART { double partial[]; };
layout(std430, binding = 2) readonly buffer CNT { int64_t counted[]; };
layout(std430, binding = 3) writeonly buffer O { S_(TA) o[]; };
void main() {
  uint rows = P[0];
  double sum = 0.0lf;
  int64_t count = 0;
  for (uint r = gl_LocalInvocationID.x; r < rows; r += gl_WorkGroupSize.x) {
    sum += partial[r];
    count += counted[r];
  }
  sum = group_sum(sum);
  count = group_count(count);
  if (gl_LocalInvocationID.x == 0u) o[P[2]] = ST(TA, C_(TA)(P[1] != 0u ? sum / double(count) : sum));
}
#endif

#if defined(KIND_CE_COUNT)
// The rows whose target is not ignored (MEAN's divisor). View t (P[0..18]); P[19..20]
// ignore_index, P[21] ignore_set.
layout(std430, binding = 1) readonly buffer T { S_(TB) t[]; };
layout(std430, binding = 2) writeonly buffer CNT { int64_t count_out[]; };
void main() {
  uint rows = P[0];
  int64_t ignore_index = int_at(19u);
  bool ignore_set = P[21] != 0u;
  int64_t count = 0;
  for (uint r = gl_LocalInvocationID.x; r < rows; r += gl_WorkGroupSize.x) {
    C_(TB) target = LD(TB, t[ctl_offset(0u, ctl_unravel(0u, r), 0u)]);
    count += ctl_is_ignored(target, ignore_set, ignore_index) ? 0 : 1;
  }
  count = group_count(count);
  if (gl_LocalInvocationID.x == 0u) count_out[0] = count;
}
#endif

#if defined(KIND_CE_BACKWARD)
// grad_logits = g (softmax(z) - onehot(t)). Views z, t, dz, g (P[0..45]); P[46] z's class
// step, P[47] dz's, P[48] classes, P[49..50] ignore_index, P[51] ignore_set, P[52] per_row,
// P[53] mean, P[54] g's offset when it is a scalar.
layout(std430, binding = 3) writeonly buffer DZ { S_(TA) dz[]; };
layout(std430, binding = 4) readonly buffer G { S_(TA) g[]; };
layout(std430, binding = 5) readonly buffer CNT { int64_t count[]; };
void main() {
  uint rows = P[0], zs = P[46], dzs = P[47], c = P[48];
  int64_t ignore_index = int_at(49u);
  bool ignore_set = P[51] != 0u, per_row = P[52] != 0u, mean = P[53] != 0u;
  double scale = 0.0lf;
  if (!per_row) {
    scale = double(LD(TA, g[P[54]]));
    if (mean) scale /= double(count[0]);
  }
  for (uint row = gl_WorkGroupID.x; row < rows; row += gl_NumWorkGroups.x) {
    Index idx = ctl_unravel(0u, row);
    uint zr = ctl_offset(0u, idx, 0u), dr = ctl_offset(0u, idx, 2u);
    C_(TB) target = LD(TB, t[ctl_offset(0u, idx, 1u)]);
    bool ignored = ctl_is_ignored(target, ignore_set, ignore_index);
    bool valid = !ignored && target >= C_(TB)(0) && target < C_(TB)(c);
    double gr = per_row ? double(LD(TA, g[ctl_offset(0u, idx, 3u)])) : scale;
    double m = row_max(zr, c, zs);
    double sum = row_expsum(zr, c, zs, m);
    for (uint k = gl_LocalInvocationID.x; k < c; k += gl_WorkGroupSize.x) {
      double d = ignored ? 0.0lf : ctl_nan_d();
      if (valid) {
        double p = ctl_exp_d(double(LD(TA, z[zr + k * zs])) - m) / sum;
        d = gr * (C_(TB)(k) == target ? p - 1.0lf : p);
      }
      dz[dr + k * dzs] = ST(TA, C_(TA)(d));
    }
  }
}
#endif

#if defined(KIND_ADAMW)
// Views grad, param, exp_avg, exp_avg_sq (P[0..45]); P[46..59]: lr, lr * weight_decay,
// beta1, beta2, eps and the bias corrections 1 - beta^step, as doubles.
layout(std430, binding = 1) readonly buffer G { S_(TA) g[]; };
layout(std430, binding = 2) buffer PP { S_(TA) p[]; };
layout(std430, binding = 3) buffer MM { S_(TA) m[]; };
layout(std430, binding = 4) buffer VV { S_(TA) v[]; };
void main() {
  uint n = P[0];
  double lr = scalar_at(46u), decay = scalar_at(48u), beta1 = scalar_at(50u), beta2 = scalar_at(52u);
  double eps = scalar_at(54u), correction1 = scalar_at(56u), correction2 = scalar_at(58u);
  FOR_EACH_ITEM(i, n) {
    Index idx = ctl_unravel(0u, i);
    uint gi = ctl_offset(0u, idx, 0u), pi = ctl_offset(0u, idx, 1u), mi = ctl_offset(0u, idx, 2u),
         vi = ctl_offset(0u, idx, 3u);
    double grad = double(LD(TA, g[gi]));
    double param = double(LD(TA, p[pi]));
    param = param - decay * param;
    double avg = beta1 * double(LD(TA, m[mi])) + (1.0lf - beta1) * grad;
    double avg_sq = beta2 * double(LD(TA, v[vi])) + (1.0lf - beta2) * grad * grad;
    param = param - lr * (avg / correction1) / (sqrt(avg_sq / correction2) + eps);
    p[pi] = ST(TA, C_(TA)(param));
    m[mi] = ST(TA, C_(TA)(avg));
    v[vi] = ST(TA, C_(TA)(avg_sq));
  }
}
#endif

#if defined(KIND_SGD)
// Views grad, param, momentum_buf (P[0..36]); P[37..44]: lr, momentum, 1 - dampening,
// weight_decay as doubles; P[45] has a buffer, P[46] nesterov.
layout(std430, binding = 1) readonly buffer G { S_(TA) g[]; };
layout(std430, binding = 2) buffer PP { S_(TA) p[]; };
layout(std430, binding = 3) buffer BB { S_(TA) b[]; };
void main() {
  uint n = P[0];
  double lr = scalar_at(37u), momentum = scalar_at(39u), keep = scalar_at(41u), weight_decay = scalar_at(43u);
  bool has_buffer = P[45] != 0u, nesterov = P[46] != 0u;
  FOR_EACH_ITEM(i, n) {
    Index idx = ctl_unravel(0u, i);
    uint gi = ctl_offset(0u, idx, 0u), pi = ctl_offset(0u, idx, 1u);
    double param = double(LD(TA, p[pi]));
    double grad = double(LD(TA, g[gi])) + weight_decay * param;
    double step = grad;
    if (has_buffer) {
      uint bi = ctl_offset(0u, idx, 2u);
      double buf = momentum * double(LD(TA, b[bi])) + keep * grad;
      b[bi] = ST(TA, C_(TA)(buf));
      step = nesterov ? grad + momentum * buf : buf;
    }
    p[pi] = ST(TA, C_(TA)(param - lr * step));
  }
}
#endif
