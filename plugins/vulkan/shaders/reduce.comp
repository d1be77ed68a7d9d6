#version 450
// reduce.comp — sum, mean, max, min, argmax, argmin and logsumexp over any set of axes: one
// work-group per output element, each invocation folding a strided share of the reduced
// elements, then a tree in shared memory. The op is specialisation constant 1 (its CTL_OP
// id). P[0..27] is the iteration over kept axes (views x, out), P[28..46] the one over
// reduced axes (view x, offset 0).
#include "common.glsl"
#if TA_WIDE
#include "math_f64.glsl"
#define EXP_(v) ctl_exp_d(v)
#define LOG_(v) ctl_log_d(v)
#define NEG_INF_ (-ctl_inf_d())
#else
#define EXP_(v) exp(v)
#define LOG_(v) log(v)
#define NEG_INF_ uintBitsToFloat(0xff800000u)
#endif

layout(constant_id = 1) const int OP = 0;
#define RED 28u
#define NONE 0xffffffffu

layout(std430, binding = 1) readonly buffer X { S_(TA) x[]; };
#if defined(KIND_ARG)
layout(std430, binding = 2) writeonly buffer Y { int64_t y[]; };
#else
layout(std430, binding = 2) writeonly buffer Y { S_(TA) y[]; };
#endif

shared C_(TA) s_value[gl_WorkGroupSize.x];
shared uint s_index[gl_WorkGroupSize.x];

bool is_max() { return OP == 66 || OP == 68 || OP == 70; }

#if TA_FLOAT
bool nan_of(C_(TA) v) { return isnan(v); }
#else
bool nan_of(C_(TA) v) { return false; }
#endif

// True when (a, ia) should win over (b, ib) for max/min/argmax/argmin: NaN wins, then the
// larger (smaller) value, -0 below +0 for max and min, then the first index.
bool wins(C_(TA) a, uint ia, C_(TA) b, uint ib) {
  if (ia == NONE) return false;
  if (ib == NONE) return true;
  bool na = nan_of(a), nb = nan_of(b);
  if (na || nb) return na && (!nb || ia < ib);
  if (a == b) {
#if TA_FLOAT
    if (OP == 66 || OP == 67) {
      bool sa = ctl_signbit(a), sb = ctl_signbit(b);
      if (sa != sb) return OP == 66 ? !sa : sa;
    }
#endif
    return ia < ib;
  }
  return is_max() ? a > b : a < b;
}

C_(TA) load(uint base, uint r) {
  Index k = ctl_unravel(RED, r);
  return LD(TA, x[base + ctl_offset(RED, k, 0u)]);
}

void main() {
  uint outputs = P[0];
  uint count = P[RED];
  uint lid = gl_LocalInvocationID.x;
  uint local_size = gl_WorkGroupSize.x;
  for (uint o = gl_WorkGroupID.x; o < outputs; o += gl_NumWorkGroups.x) {
    Index ko = ctl_unravel(0u, o);
    uint xbase = ctl_offset(0u, ko, 0u);
    uint ybase = ctl_offset(0u, ko, 1u);
    bool extreme = OP == 66 || OP == 67 || OP == 68 || OP == 69 || OP == 70;
    C_(TA) acc = C_(TA)(0);
    uint best = NONE;
    if (extreme) {
      for (uint r = lid; r < count; r += local_size) {
        C_(TA) v = load(xbase, r);
        if (wins(v, r, acc, best)) {
          acc = v;
          best = r;
        }
      }
    } else {
      for (uint r = lid; r < count; r += local_size) acc += load(xbase, r);
    }
    s_value[lid] = acc;
    s_index[lid] = best;
    barrier();
    for (uint half_ = local_size / 2u; half_ > 0u; half_ /= 2u) {
      if (lid < half_) {
        if (extreme) {
          if (wins(s_value[lid + half_], s_index[lid + half_], s_value[lid], s_index[lid])) {
            s_value[lid] = s_value[lid + half_];
            s_index[lid] = s_index[lid + half_];
          }
        } else {
          s_value[lid] += s_value[lid + half_];
        }
      }
      barrier();
    }
#if TA_FLOAT && !defined(KIND_ARG)
    if (OP == 70) {
      // logsumexp: the maximum is in s_value[0]; now the sum of exp(x - max).
      C_(TA) m = count == 0u ? NEG_INF_ : s_value[0];
      barrier();
      C_(TA) sum = C_(TA)(0);
      if (!isinf(m) && !isnan(m)) {
        for (uint r = lid; r < count; r += local_size) sum += EXP_(load(xbase, r) - m);
      }
      s_value[lid] = sum;
      barrier();
      for (uint half_ = local_size / 2u; half_ > 0u; half_ /= 2u) {
        if (lid < half_) s_value[lid] += s_value[lid + half_];
        barrier();
      }
      if (lid == 0u) y[ybase] = ST(TA, (isinf(m) || isnan(m)) ? m : m + LOG_(s_value[0]));
      barrier();
      continue;
    }
#endif
    if (lid == 0u) {
#if defined(KIND_ARG)
      y[ybase] = int64_t(s_index[0]);
#else
#if TA_FLOAT
      if (OP == 65) {
        y[ybase] = ST(TA, s_value[0] / C_(TA)(count));
      } else {
        y[ybase] = ST(TA, s_value[0]);
      }
#else
      y[ybase] = ST(TA, s_value[0]);
#endif
#endif
    }
    barrier();
  }
}
