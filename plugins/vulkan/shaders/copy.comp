#version 450
// copy.comp — a strided view into another of the same shape and dtype, bits to bits (NaN
// payloads and subnormals survive): the copy op, and every family's contiguous operands.
#include "common.glsl"

layout(std430, binding = 1) readonly buffer X { R_(TA) x[]; };
layout(std430, binding = 2) writeonly buffer Y { R_(TA) y[]; };

void main() {
  uint n = P[0];
  FOR_EACH_ITEM(i, n) {
    Index idx = ctl_unravel(0u, i);
    y[ctl_offset(0u, idx, 1u)] = x[ctl_offset(0u, idx, 0u)];
  }
}
