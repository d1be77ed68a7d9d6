#version 450
// fill.comp — one value, already in the output's bits (the host applies the cast rules),
// into every element of a strided view. P[ITER_WORDS(1)..] holds the bits, low word first.
#include "common.glsl"

layout(std430, binding = 1) writeonly buffer Y { R_(TA) y[]; };

void main() {
  uint n = P[0];
  uint at = ITER_WORDS(1u);
#if defined(USES_f64) || defined(USES_i64)
  R_(TA) v = R_(TA)(packUint2x32(uvec2(P[at], P[at + 1u])));
#else
  R_(TA) v = R_(TA)(P[at]);
#endif
  FOR_EACH_ITEM(i, n) {
    Index idx = ctl_unravel(0u, i);
    y[ctl_offset(0u, idx, 0u)] = v;
  }
}
