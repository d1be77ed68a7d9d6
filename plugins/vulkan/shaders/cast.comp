#version 450
// cast.comp — a strided view of dtype TA into one of dtype TB (convert.glsl's rules).
#include "common.glsl"
#include "convert.glsl"

layout(std430, binding = 1) readonly buffer X { S_(TA) x[]; };
layout(std430, binding = 2) writeonly buffer Y { S_(TB) y[]; };

void main() {
  uint n = P[0];
  FOR_EACH_ITEM(i, n) {
    Index idx = ctl_unravel(0u, i);
    y[ctl_offset(0u, idx, 1u)] = ST(TB, ctl_convert(LD(TA, x[ctl_offset(0u, idx, 0u)])));
  }
}
