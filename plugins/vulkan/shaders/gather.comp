#version 450
// gather.comp — out[pre, j, post] = x[pre, index[j], post], 0 where index[j] is out of range
// (negative indices count from the end). One walk over out's shape: x's strides are 0 on
// the index axes, index's are 0 on the others (P[0..36], views out, x, index), and P[37],
// P[38] are the gathered axis's size and x's stride along it. TI is the index dtype.
#include "common.glsl"

// An index value as a position in [0, axis_size), or -1 when out of range (negative
// values count from the end), in the index's own type.
int ctl_position(C_(TI) v, uint axis_size) {
  C_(TI) a = C_(TI)(axis_size);
  if (v < -a || v >= a) return -1;
  if (v < C_(TI)(0)) v += a;
  return int(v);
}

layout(std430, binding = 1) writeonly buffer O { R_(TA) o[]; };
layout(std430, binding = 2) readonly buffer X { R_(TA) x[]; };
layout(std430, binding = 3) readonly buffer I { S_(TI) index[]; };

void main() {
  uint n = P[0];
  uint axis_size = P[37];
  uint axis_stride = P[38];
  FOR_EACH_ITEM(i, n) {
    Index at = ctl_unravel(0u, i);
    int p = ctl_position(LD(TI, index[ctl_offset(0u, at, 2u)]), axis_size);
    R_(TA) v = R_(TA)(0);  // zero bits are 0 in every dtype
    if (p >= 0) v = x[ctl_offset(0u, at, 1u) + uint(p) * axis_stride];
    o[ctl_offset(0u, at, 0u)] = v;
  }
}
