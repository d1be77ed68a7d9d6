#version 450
// scatter.comp — scatter_add's sums, deterministically: each invocation owns one column (a
// position of the target's axes other than `axis`) and adds its column's src elements in
// index order into a contiguous accumulator (double for floats, wrapping int64 for
// integers), so no two invocations touch one sum and the order is the reference's. The host
// casts target into the accumulator before and the accumulator into out after (cast.comp).
// P[0..27]: columns (views src, acc); P[28..55]: index positions (views index, src); P[56]
// the axis size, P[57] acc's stride along it, P[58..59] the positions this dispatch adds,
// [j_begin, j_end): the host splits them so that no invocation's loops pass lavapipe's
// 65,535 iterations (README, "Loop budget"); the sums wait in acc between parts, in order.
// TI is the index dtype.
#include "common.glsl"

// An index value as a position in [0, axis_size), or -1 when out of range (negative
// values count from the end), in the index's own type.
int ctl_position(C_(TI) v, uint axis_size) {
  C_(TI) a = C_(TI)(axis_size);
  if (v < -a || v >= a) return -1;
  if (v < C_(TI)(0)) v += a;
  return int(v);
}

layout(std430, binding = 1) readonly buffer S { S_(TA) src[]; };
#if TA_FLOAT
layout(std430, binding = 2) buffer A { double acc[]; };
#else
layout(std430, binding = 2) buffer A { int64_t acc[]; };
#endif
layout(std430, binding = 3) readonly buffer I { S_(TI) index[]; };

void main() {
  uint columns = P[0];
  uint axis_size = P[56];
  uint acc_axis_stride = P[57];
  uint j_begin = P[58], j_end = P[59];
  FOR_EACH_ITEM(c, columns) {
    Index col = ctl_unravel(0u, c);
    uint s0 = ctl_offset(0u, col, 0u), a0 = ctl_offset(0u, col, 1u);
    for (uint j = j_begin; j < j_end; ++j) {
      Index at = ctl_unravel(28u, j);
      int p = ctl_position(LD(TI, index[ctl_offset(28u, at, 0u)]), axis_size);
      if (p < 0) continue;  // skipped, as in the reference
      uint a = a0 + uint(p) * acc_axis_stride;
#if TA_FLOAT
      acc[a] += double(LD(TA, src[s0 + ctl_offset(28u, at, 1u)]));
#else
      acc[a] = int64_t(uint64_t(acc[a]) + uint64_t(int64_t(LD(TA, src[s0 + ctl_offset(28u, at, 1u)]))));
#endif
    }
  }
}
