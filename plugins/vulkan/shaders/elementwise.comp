#version 450
// elementwise.comp — every elementwise op from one template. KIND_* picks the shape of the
// call (unary, binary, compare, where); the op is specialisation constant 1, its CTL_OP id,
// so each (op, dtype) pipeline keeps only its own branch. Floats compute in C_(TA); with
// MATH_F64 (devices with shaderFloat64) division and square roots go through double and
// round once to f32, as the reference's do. Integers wrap like the reference.
#include "common.glsl"

layout(constant_id = 1) const int OP = 0;

#if defined(MATH_F64)
#define M double
#else
#define M C_(TA)
#endif

#if TA_FLOAT
// IEEE 754-2019 maximum / minimum: NaN wins, and -0 < +0.
C_(TA) ctl_maximum(C_(TA) a, C_(TA) b) {
  if (isnan(a)) return a;
  if (isnan(b)) return b;
  if (a == b) return ctl_signbit(a) ? b : a;
  return a > b ? a : b;
}
C_(TA) ctl_minimum(C_(TA) a, C_(TA) b) {
  if (isnan(a)) return a;
  if (isnan(b)) return b;
  if (a == b) return ctl_signbit(a) ? a : b;
  return a < b ? a : b;
}
#if !TA_WIDE
#include "activation.glsl"
#endif
#if defined(MATH_F64) || TA_WIDE
#define DOUBLE_MATH 1
#include "math_f64.glsl"
#if TA_WIDE
#include "special_f64.glsl"
#endif
#else
#define DOUBLE_MATH 0
#endif
#endif

#if defined(KIND_UNARY)
layout(std430, binding = 1) readonly buffer X { S_(TA) x[]; };
layout(std430, binding = 2) writeonly buffer Y { S_(TA) y[]; };

C_(TA) apply(C_(TA) v) {
#if TA_FLOAT
  switch (OP) {
    case 1: return ctl_neg(v);
    case 2: return ctl_fabs(v);
    case 5: return C_(TA)(sqrt(M(v)));
    case 6: return C_(TA)(M(1) / sqrt(M(v)));
    case 9: return isnan(v) ? v : (v > C_(TA)(0) ? v : C_(TA)(0));
    case 15: return C_(TA)(M(1) / M(v));
#if DOUBLE_MATH
    case 3: return C_(TA)(ctl_exp_d(double(v)));
    case 4: return C_(TA)(ctl_log_d(double(v)));
    case 7: return C_(TA)(ctl_tanh_d(double(v)));
    case 8: return C_(TA)(ctl_x_sigmoid_d(1.0, double(v)));
#if TA_WIDE
    case 10: return ctl_gelu_f64(v);
#else
    case 10: return C_(TA)(ctl_gelu_d(double(v)));
#endif
    case 11: return C_(TA)(ctl_gelu_tanh_d(double(v)));
    case 12: return C_(TA)(ctl_x_sigmoid_d(double(v), double(v)));
#else
    case 3: return exp(v);
    case 4: return log(v);
    case 7: return ctl_tanh(v);
    case 8: return 1.0 / (1.0 + exp(-v));
    case 10: return ctl_gelu(v);
    case 11: return ctl_gelu_tanh(v);
    case 12: return ctl_x_sigmoid(v, v);
#endif
#if DOUBLE_MATH && !TA_WIDE
    case 13: return C_(TA)(ctl_sincos_f(float(v), true));
    case 14: return C_(TA)(ctl_sincos_f(float(v), false));
#elif TA_WIDE
    case 13: return ctl_sincos_d(v, true);
    case 14: return ctl_sincos_d(v, false);
#else
    case 13: return sin(v);
    case 14: return cos(v);
#endif
  }
  return v;
#else
  switch (OP) {
    case 1: return -v;
    case 2: return v < C_(TA)(0) ? -v : v;
    case 9: return v > C_(TA)(0) ? v : C_(TA)(0);
  }
  return v;
#endif
}

void main() {
  uint n = P[0];
  FOR_EACH_ITEM(i, n) {
    Index idx = ctl_unravel(0u, i);
    y[ctl_offset(0u, idx, 1u)] = ST(TA, apply(LD(TA, x[ctl_offset(0u, idx, 0u)])));
  }
}
#endif

#if defined(KIND_BINARY) || defined(KIND_COMPARE)
layout(std430, binding = 1) readonly buffer A { S_(TA) a[]; };
layout(std430, binding = 2) readonly buffer B { S_(TA) b[]; };
#if defined(KIND_COMPARE)
layout(std430, binding = 3) writeonly buffer Y { uint8_t y[]; };
#else
layout(std430, binding = 3) writeonly buffer Y { S_(TA) y[]; };
#endif

#if defined(KIND_COMPARE)
bool apply(C_(TA) p, C_(TA) q) {
  switch (OP) {
    case 39: return p == q;
    case 40: return p != q;
    case 41: return p < q;
    case 42: return p <= q;
    case 43: return p > q;
    case 44: return p >= q;
  }
  return false;
}
#elif TA_FLOAT
C_(TA) apply(C_(TA) p, C_(TA) q) {
  switch (OP) {
    case 32: return C_(TA)(M(p) + M(q));
    case 33: return C_(TA)(M(p) - M(q));
    case 34: return C_(TA)(M(p) * M(q));
    case 35: return C_(TA)(M(p) / M(q));
    case 37: return ctl_maximum(p, q);
    case 38: return ctl_minimum(p, q);
#if DOUBLE_MATH
    case 36: return C_(TA)(ctl_pow_d(double(p), double(q)));
#if TA_WIDE
    case 228: return p * ctl_gelu_grad_f64(q);
#else
    case 228: return C_(TA)(double(p) * ctl_gelu_grad_d(double(q)));
#endif
    case 229: return C_(TA)(double(p) * ctl_gelu_tanh_grad_d(double(q)));
#else
    case 36: return pow(p, q);
    case 228: return p * ctl_gelu_grad(q);
    case 229: return p * ctl_gelu_tanh_grad(q);
#endif
  }
  return p;
}
#else
C_(TA) ctl_idiv(C_(TA) p, C_(TA) q) {
  if (q == C_(TA)(0)) return C_(TA)(0);
  if (q == C_(TA)(-1)) return -p;  // wraps for the most negative value instead of trapping
  return p / q;
}
C_(TA) ctl_ipow(C_(TA) base, C_(TA) e) {
  if (e < C_(TA)(0)) {
    if (base == C_(TA)(1)) return C_(TA)(1);
    if (base == C_(TA)(-1)) return (e & C_(TA)(1)) != C_(TA)(0) ? C_(TA)(-1) : C_(TA)(1);
    return C_(TA)(0);
  }
  C_(TA) result = C_(TA)(1);
  while (e > C_(TA)(0)) {
    if ((e & C_(TA)(1)) != C_(TA)(0)) result *= base;
    base *= base;
    e >>= 1;
  }
  return result;
}
C_(TA) apply(C_(TA) p, C_(TA) q) {
  switch (OP) {
    case 32: return p + q;
    case 33: return p - q;
    case 34: return p * q;
    case 35: return ctl_idiv(p, q);
    case 36: return ctl_ipow(p, q);
    case 37: return p > q ? p : q;
    case 38: return p < q ? p : q;
  }
  return p;
}
#endif

void main() {
  uint n = P[0];
  FOR_EACH_ITEM(i, n) {
    Index idx = ctl_unravel(0u, i);
    C_(TA) p = LD(TA, a[ctl_offset(0u, idx, 0u)]);
    C_(TA) q = LD(TA, b[ctl_offset(0u, idx, 1u)]);
#if defined(KIND_COMPARE)
    y[ctl_offset(0u, idx, 2u)] = uint8_t(apply(p, q) ? 1u : 0u);
#else
    y[ctl_offset(0u, idx, 2u)] = ST(TA, apply(p, q));
#endif
  }
}
#endif

#if defined(KIND_WHERE)
// Moves bits, so NaN payloads and signed zeros survive.
layout(std430, binding = 1) readonly buffer C { uint8_t c[]; };
layout(std430, binding = 2) readonly buffer A { R_(TA) a[]; };
layout(std430, binding = 3) readonly buffer B { R_(TA) b[]; };
layout(std430, binding = 4) writeonly buffer Y { R_(TA) y[]; };
void main() {
  uint n = P[0];
  FOR_EACH_ITEM(i, n) {
    Index idx = ctl_unravel(0u, i);
    bool pick = uint(c[ctl_offset(0u, idx, 0u)]) != 0u;
    y[ctl_offset(0u, idx, 3u)] = pick ? a[ctl_offset(0u, idx, 1u)] : b[ctl_offset(0u, idx, 2u)];
  }
}
#endif
