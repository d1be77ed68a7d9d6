#version 450
// arange.comp — element i is start + i * step computed in f64, then cast to TB by the
// cast rules (TA is f64 in every variant). P[ITER_WORDS(1)..]: start, step as doubles.
#include "common.glsl"
#include "convert.glsl"

layout(std430, binding = 1) writeonly buffer Y { S_(TB) y[]; };

void main() {
  uint n = P[0];
  uint at = ITER_WORDS(1u);
  double start = packDouble2x32(uvec2(P[at], P[at + 1u]));
  double step = packDouble2x32(uvec2(P[at + 2u], P[at + 3u]));
  FOR_EACH_ITEM(i, n) {
    Index idx = ctl_unravel(0u, i);
    precise double v = start + double(i) * step;  // no fused multiply-add: the reference rounds twice
    y[ctl_offset(0u, idx, 0u)] = ST(TB, ctl_convert(v));
  }
}
