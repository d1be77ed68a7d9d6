#version 450
// reduce.comp — sum, mean, max, min, argmax, argmin and logsumexp over any set of axes: one
// work-group per output element, each invocation folding a strided share of the reduced
// elements (lane l takes elements l, l + local, l + 2 local, ...), then a tree in shared
// memory. The op is specialisation constant 1 (its CTL_OP id). P[0..27] is the iteration
// over kept axes (views x, out), P[28..46] the one over reduced axes (view x, offset 0).
//
// Sums accumulate in A_: double where the device has it (the ".d" variants, as the reference
// and the OpenCL plugin do), else the compute type with Neumaier's compensation, so a sum of
// large values that cancel keeps the small ones (one lane's running sum of 1e4-sized terms
// in plain f32 lost 2% of a 43-sized result).
//
// Long reductions are split over several dispatches (reduce.cpp): lavapipe ends every
// invocation's loops after 65,535 iterations in all (README, "Loop budget"). P[47..50]:
// the part of the reduced elements this dispatch folds, [r_begin, r_end) (r_begin a multiple
// of the local size, so each lane keeps its elements), the carry flags (1: lanes resume from
// `carry`, 2: lanes leave their state there and no output is written), and logsumexp's
// sweep (0: its maximum, kept in carry for the sums that follow; 1: the sum of exp(x - max);
// 2: both in this one dispatch). A lane's state crosses dispatches whole, so a split
// reduction has the bits of an unsplit one.
#include "common.glsl"
#if TA_WIDE || defined(MATH_F64)
#include "math_f64.glsl"
#endif
#if TA_WIDE
#define EXP_(v) ctl_exp_d(v)
#define LOG_(v) ctl_log_d(v)
#define NEG_INF_ (-ctl_inf_d())
#else
#define EXP_(v) exp(v)
#define LOG_(v) log(v)
#define NEG_INF_ uintBitsToFloat(0xff800000u)
#endif

#if TA_FLOAT && !TA_WIDE && defined(MATH_F64)
#define A_ double
#define COMPENSATED 0
#elif TA_FLOAT
#define A_ C_(TA)
#define COMPENSATED 1
#else
#define A_ C_(TA)
#define COMPENSATED 0
#endif

layout(constant_id = 1) const int OP = 0;
#define RED 28u
#define SPLIT 47u
#define NONE 0xffffffffu

layout(std430, binding = 1) readonly buffer X { S_(TA) x[]; };
#if defined(KIND_ARG)
layout(std430, binding = 2) writeonly buffer Y { int64_t y[]; };
#else
layout(std430, binding = 2) writeonly buffer Y { S_(TA) y[]; };
#endif
// Lane l of output o: its value at [2 (o local + l)], its compensation next to it, its best
// index at c_index[o local + l]; logsumexp's maximum of output o at [2 outputs local + o].
layout(std430, binding = 3) buffer CarryValue { A_ c_value[]; };
layout(std430, binding = 4) buffer CarryIndex { uint c_index[]; };

shared A_ s_value[gl_WorkGroupSize.x];
shared uint s_index[gl_WorkGroupSize.x];

bool is_max() { return OP == 66 || OP == 68 || OP == 70; }

#if TA_FLOAT
bool nan_of(A_ v) { return isnan(v); }
#else
bool nan_of(A_ v) { return false; }
#endif

// True when (a, ia) should win over (b, ib) for max/min/argmax/argmin: NaN wins, then the
// larger (smaller) value, -0 below +0 for max and min, then the first index.
bool wins(A_ a, uint ia, A_ b, uint ib) {
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

A_ load(uint base, uint r) {
  Index k = ctl_unravel(RED, r);
  return A_(LD(TA, x[base + ctl_offset(RED, k, 0u)]));
}

// sum += v, with the rounding error of the addition kept in comp (Neumaier: the larger of
// the two addends loses the low bits, whichever it is). `precise` keeps the compiler from
// folding (s - t) + v to 0.
void add_to(inout A_ sum, inout A_ comp, A_ v) {
#if COMPENSATED
  precise A_ t = sum + v;
  precise A_ lost = abs(sum) >= abs(v) ? (sum - t) + v : (v - t) + sum;
  if (!isinf(t)) comp += lost;  // past overflow the error terms are NaN, and the sum is inf anyway
  sum = t;
#else
  sum += v;
#endif
}

// The tree over the group's lanes of s_value (and s_index): the extreme, or the sum.
void combine_lanes(bool extreme, uint lid, uint local_size) {
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
}

void main() {
  uint outputs = P[0];
  uint count = P[RED];
  uint r_begin = P[SPLIT], r_end = P[SPLIT + 1u], flags = P[SPLIT + 2u], sweep = P[SPLIT + 3u];
  bool from_carry = (flags & 1u) != 0u, to_carry = (flags & 2u) != 0u;
  uint lid = gl_LocalInvocationID.x;
  uint local_size = gl_WorkGroupSize.x;
  uint max_at = 2u * outputs * local_size;  // logsumexp's maxima in c_value
  for (uint o = gl_WorkGroupID.x; o < outputs; o += gl_NumWorkGroups.x) {
    Index ko = ctl_unravel(0u, o);
    uint xbase = ctl_offset(0u, ko, 0u);
    uint ybase = ctl_offset(0u, ko, 1u);
    uint slot = o * local_size + lid;
    // The extremes (max, min, argmax, argmin, and logsumexp's maximum) or a sum (sum, mean,
    // and logsumexp's sum of exp(x - max)).
    bool extreme = (OP >= 66 && OP <= 69) || (OP == 70 && sweep != 1u);
    A_ acc = A_(0), comp = A_(0);
    uint best = NONE;
    if (from_carry) {
      acc = c_value[2u * slot];
      comp = c_value[2u * slot + 1u];
      best = c_index[slot];
    }
    if (extreme) {
      for (uint r = r_begin + lid; r < r_end; r += local_size) {
        A_ v = load(xbase, r);
        if (wins(v, r, acc, best)) {
          acc = v;
          best = r;
        }
      }
    } else {
#if TA_FLOAT && !defined(KIND_ARG)
      A_ m = OP == 70 ? c_value[max_at + o] : A_(0);
      bool skip = OP == 70 && (isinf(m) || isnan(m));
#else
      bool skip = false;
#endif
      if (!skip) {
        for (uint r = r_begin + lid; r < r_end; r += local_size) {
          A_ v = load(xbase, r);
#if TA_FLOAT && !defined(KIND_ARG)
          if (OP == 70) v = A_(EXP_(C_(TA)(v - m)));
#endif
          add_to(acc, comp, v);
        }
      }
    }
    if (to_carry) {
      c_value[2u * slot] = acc;
      c_value[2u * slot + 1u] = comp;
      c_index[slot] = best;
      continue;  // every lane of the group takes this branch: no barrier is left waiting
    }
    s_value[lid] = extreme ? acc : acc + comp;
    s_index[lid] = best;
    combine_lanes(extreme, lid, local_size);
#if TA_FLOAT && !defined(KIND_ARG)
    if (OP == 70) {
      A_ m = count == 0u ? A_(NEG_INF_) : s_value[0];
      barrier();
      if (sweep == 0u) {  // the sums follow in later dispatches
        if (lid == 0u) c_value[max_at + o] = m;
        continue;
      }
      if (sweep == 2u) {  // the sums follow here, over every element
        A_ sum = A_(0), sum_comp = A_(0);
        if (!isinf(m) && !isnan(m)) {
          for (uint r = lid; r < count; r += local_size) add_to(sum, sum_comp, A_(EXP_(C_(TA)(load(xbase, r) - m))));
        }
        s_value[lid] = sum + sum_comp;
        combine_lanes(false, lid, local_size);
      } else {
        m = c_value[max_at + o];
      }
      if (lid == 0u) y[ybase] = ST(TA, C_(TA)((isinf(m) || isnan(m)) ? m : m + A_(LOG_(C_(TA)(s_value[0])))));
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
        y[ybase] = ST(TA, C_(TA)(s_value[0] / A_(count)));
      } else {
        y[ybase] = ST(TA, C_(TA)(s_value[0]));
      }
#else
      y[ybase] = ST(TA, s_value[0]);
#endif
#endif
    }
    barrier();
  }
}
