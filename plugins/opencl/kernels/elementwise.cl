// elementwise.cl — every elementwise op from one template. The program is built per dtype
// (-DTA=<tag>); each op is one line below that the macros turn into a strided kernel
// named unary_<op>, binary_<op> or compare_<op>. Floats compute in C_(TA), except the
// transcendental functions, division and square roots, which use MATH_T (double where the
// device has it): OpenCL's f32 division and sqrt may be 2.5-3 ulp off, while a double
// result rounded to f32 is the correctly rounded one, as the reference's is.
// Integers compute in 64-bit two's complement and wrap when stored, like the reference.

#if defined(CTL_HAVE_FP64)
#define MATH_T double
#else
#define MATH_T float
#endif

#if defined(CTL_FUSED_PROGRAM)
// A fused elementwise program (fused_elementwise.cpp) needs the helpers and OP_ expressions
// below, not the separate kernels: leaving them out makes its build a fraction of the time.
#define UNARY_KERNEL(op, expr)
#define BINARY_KERNEL(name, out_t, expr)
#else
#define UNARY_KERNEL(op, expr)                                                                          \
  __kernel void unary_##op(__global const T_(TA)* x, long x_offset, long8 x_strides, __global T_(TA)* y, \
                           long y_offset, long8 y_strides, int rank, long8 shape, long n) {           \
    FOR_EACH_ITEM(i, n) {                                                                             \
      long8 index = ctl_unravel(i, rank, shape);                                                      \
      C_(TA) v = LOAD(TA, x, x_offset + ctl_dot(index, x_strides));                                   \
      STORE(TA, y, y_offset + ctl_dot(index, y_strides), (expr));                                     \
    }                                                                                                 \
  }

#define BINARY_KERNEL(name, out_t, expr)                                                                   \
  __kernel void name(__global const T_(TA)* a, long a_offset, long8 a_strides, __global const T_(TA)* b,   \
                     long b_offset, long8 b_strides, __global T_(out_t)* y, long y_offset, long8 y_strides, \
                     int rank, long8 shape, long n) {                                                      \
    FOR_EACH_ITEM(i, n) {                                                                                  \
      long8 index = ctl_unravel(i, rank, shape);                                                           \
      C_(TA) p = LOAD(TA, a, a_offset + ctl_dot(index, a_strides));                                        \
      C_(TA) q = LOAD(TA, b, b_offset + ctl_dot(index, b_strides));                                        \
      STORE(out_t, y, y_offset + ctl_dot(index, y_strides), (expr));                                       \
    }                                                                                                      \
  }

#endif

// Comparisons exist for every dtype; integers compare exactly in their own type.
BINARY_KERNEL(compare_eq, bool, p == q)
BINARY_KERNEL(compare_ne, bool, p != q)
BINARY_KERNEL(compare_lt, bool, p < q)
BINARY_KERNEL(compare_le, bool, p <= q)
BINARY_KERNEL(compare_gt, bool, p > q)
BINARY_KERNEL(compare_ge, bool, p >= q)

#if !defined(CTL_FUSED_PROGRAM)
// where(cond, a, b) moves bits, so NaN payloads and signed zeros survive.
__kernel void where_select(__global const uchar* cond, long c_offset, long8 c_strides, __global const R_(TA)* a,
                           long a_offset, long8 a_strides, __global const R_(TA)* b, long b_offset, long8 b_strides,
                           __global R_(TA)* y, long y_offset, long8 y_strides, int rank, long8 shape, long n) {
  FOR_EACH_ITEM(i, n) {
    long8 index = ctl_unravel(i, rank, shape);
    y[y_offset + ctl_dot(index, y_strides)] = cond[c_offset + ctl_dot(index, c_strides)] != 0
                                                  ? a[a_offset + ctl_dot(index, a_strides)]
                                                  : b[b_offset + ctl_dot(index, b_strides)];
  }
}
#endif

#if IS_FLOAT(TA)

#define M(v) ((MATH_T)(v))
#define SQRT_HALF_PI_INV 0.79788456080286535587989211986876  /* sqrt(2 / pi) */
// PoCL 3's f64 exp returns inf for x in (709.08, 709.78], where e^x is still finite (8406
// ulp off at 709.7827, the ulp sweep found it). There e^x = e^(x - ln2_hi) 2 (1 - ln2_lo):
// ln2_hi is ln 2 to 43 bits, so x - ln2_hi is exact in [512, 1024); the doubling comes last.
inline MATH_T ctl_exp(MATH_T x) {
  if (x > (MATH_T)709 && x < (MATH_T)710) {
    return exp(x - (MATH_T)0.6931471805598903) * ((MATH_T)1 - (MATH_T)5.497923018708371e-14) * (MATH_T)2;
  }
  return exp(x);
}
#define EXP_MINUS_32 1.2664165549094175723e-14 /* e^-32 */
// x / (1 + exp(-y)), also where exp(-y) overflows although the result is a normal number
// (y below -88.7 in f32, -709.8 in f64): there 1 + e^y is 1 to the last bit and the result
// is x e^(y + 32) e^-32, whose factors stay normal. y + 32 is exact for an argument y
// (silu) and one extra rounding for gelu_tanh's computed one.
inline MATH_T ctl_x_sigmoid(MATH_T x, MATH_T y) {
  if (y < (MATH_T)-64) return x * exp(y + (MATH_T)32) * (MATH_T)EXP_MINUS_32;
  return x / ((MATH_T)1 + exp(-y));
}
// 0.5 x (1 + erf(x / sqrt(2))) as 0.5 x erfc(-x / sqrt(2)): 1 + erf cancels for x < 0.
inline MATH_T ctl_gelu(MATH_T x) { return (MATH_T)0.5 * x * erfc(x * (MATH_T)-0.70710678118654752440); }
// 0.5 x (1 + tanh(z)) as x / (1 + exp(-2z)): 1 + tanh cancels as tanh(z) nears -1.
inline MATH_T ctl_gelu_tanh(MATH_T x) {
  return ctl_x_sigmoid(x, (MATH_T)(2 * SQRT_HALF_PI_INV) * (x + (MATH_T)0.044715 * x * x * x));
}
// d/dx of the two gelu forms, in docs/ops.md's forms without cancellation: Phi(x) with
// erfc, not 1 + erf (0 from x = -8.3 in double, -5.5 in float, where gelu'(x) is still a
// normal float).
inline MATH_T ctl_gelu_grad(MATH_T x) {
  const MATH_T cdf = (MATH_T)0.5 * erfc(x * (MATH_T)-0.70710678118654752440);
  const MATH_T pdf = exp((MATH_T)-0.5 * x * x) * (MATH_T)0.39894228040143267793994605993438;
  return cdf + x * pdf;
}
// s + 2 k x (1 + 3c x^2) s (1 - s), s = sigmoid(2z) = 0.5 (1 + tanh z), with
// s (1 - s) = e / (1 + e)^2 and e = exp(-2|z|): 1 + tanh(z) and 1 - tanh(z)^2 cancel as
// tanh(z) nears -1 (0 from x = -10, where the derivative is -2.8e-36). For z < -32 e
// nears the float subnormals while the result (e times about -265) is still normal: e is
// taken there as exp(-2|z| + 64) times e^-64, whose factors stay normal. Where e is 0,
// x^3 may have overflowed: the second term is x - x (NaN for x = +-inf, as ops.md says).
inline MATH_T ctl_gelu_tanh_grad(MATH_T x) {
  const MATH_T k = (MATH_T)SQRT_HALF_PI_INV;
  const MATH_T z = k * (x + (MATH_T)0.044715 * x * x * x);
  const MATH_T a = (MATH_T)-2 * fabs(z);
  if (z < (MATH_T)-32) {
    // s + term = e r (1 + g r), r = 1 / (1 + e) = 1 to the precision here, g = 2k x (1 + 3c x^2)
    const MATH_T g = (MATH_T)2 * k * x * ((MATH_T)1 + (MATH_T)(3 * 0.044715) * x * x);
    const MATH_T scaled = exp(a + (MATH_T)64);
    if (scaled == (MATH_T)0) return x - x;  // g may be inf * inf where x^3 overflowed a float
    return scaled * ((MATH_T)1 + g) * (MATH_T)EXP_MINUS_32 * (MATH_T)EXP_MINUS_32;
  }
  const MATH_T e = exp(a);
  const MATH_T r = (MATH_T)1 / ((MATH_T)1 + e);
  const MATH_T s = z >= (MATH_T)0 ? r : e * r;
  if (e == (MATH_T)0) return s + (x - x);
  return s + (MATH_T)2 * k * x * ((MATH_T)1 + (MATH_T)(3 * 0.044715) * x * x) * (e * r * r);
}
// IEEE 754-2019 maximum / minimum: NaN wins, and -0 < +0.
inline C_(TA) ctl_maximum(C_(TA) a, C_(TA) b) {
  if (isnan(a)) return a;
  if (isnan(b)) return b;
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}
inline C_(TA) ctl_minimum(C_(TA) a, C_(TA) b) {
  if (isnan(a)) return a;
  if (isnan(b)) return b;
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}

// Each float op's expression, on v (unary) or p and q (binary) in C_(TA): the separate
// kernels below and the fused elementwise kernels (fused_elementwise.cpp generates them
// after this file) both use these, so a fused program computes what the separate ops do.
#define OP_neg(v) (-(v))
#define OP_abs(v) fabs(v)
#define OP_exp(v) ctl_exp(M(v))
#define OP_log(v) log(M(v))
#define OP_sqrt(v) sqrt(M(v))
#define OP_rsqrt(v) ((MATH_T)1 / sqrt(M(v)))
#define OP_tanh(v) tanh(M(v))
#define OP_sigmoid(v) ((MATH_T)1 / ((MATH_T)1 + exp(-M(v))))
#define OP_relu(v) (isnan(v) ? (v) : ((v) > 0 ? (v) : (C_(TA))0))
#define OP_gelu(v) ctl_gelu(M(v))
#define OP_gelu_tanh(v) ctl_gelu_tanh(M(v))
#define OP_silu(v) ctl_x_sigmoid(M(v), M(v))
#define OP_sin(v) sin(M(v))
#define OP_cos(v) cos(M(v))
#define OP_reciprocal(v) ((MATH_T)1 / M(v))
#define OP_add(p, q) ((p) + (q))
#define OP_sub(p, q) ((p) - (q))
#define OP_mul(p, q) ((p) * (q))
#define OP_div(p, q) (M(p) / M(q))
#define OP_pow(p, q) pow(M(p), M(q))
#define OP_maximum(p, q) ctl_maximum(p, q)
#define OP_minimum(p, q) ctl_minimum(p, q)
// dx = dy * gelu'(x): p = dy, q = x.
#define OP_gelu_backward(p, q) (M(p) * ctl_gelu_grad(M(q)))
#define OP_gelu_tanh_backward(p, q) (M(p) * ctl_gelu_tanh_grad(M(q)))

UNARY_KERNEL(neg, OP_neg(v))
UNARY_KERNEL(abs, OP_abs(v))
UNARY_KERNEL(exp, OP_exp(v))
UNARY_KERNEL(log, OP_log(v))
UNARY_KERNEL(sqrt, OP_sqrt(v))
UNARY_KERNEL(rsqrt, OP_rsqrt(v))
UNARY_KERNEL(tanh, OP_tanh(v))
UNARY_KERNEL(sigmoid, OP_sigmoid(v))
UNARY_KERNEL(relu, OP_relu(v))
UNARY_KERNEL(gelu, OP_gelu(v))
UNARY_KERNEL(gelu_tanh, OP_gelu_tanh(v))
UNARY_KERNEL(silu, OP_silu(v))
UNARY_KERNEL(sin, OP_sin(v))
UNARY_KERNEL(cos, OP_cos(v))
UNARY_KERNEL(reciprocal, OP_reciprocal(v))

BINARY_KERNEL(binary_add, TA, OP_add(p, q))
BINARY_KERNEL(binary_sub, TA, OP_sub(p, q))
BINARY_KERNEL(binary_mul, TA, OP_mul(p, q))
BINARY_KERNEL(binary_div, TA, OP_div(p, q))
BINARY_KERNEL(binary_pow, TA, OP_pow(p, q))
BINARY_KERNEL(binary_maximum, TA, OP_maximum(p, q))
BINARY_KERNEL(binary_minimum, TA, OP_minimum(p, q))

BINARY_KERNEL(gelu_backward, TA, OP_gelu_backward(p, q))
BINARY_KERNEL(gelu_tanh_backward, TA, OP_gelu_tanh_backward(p, q))

#else  // integers (bool never reaches the arithmetic kernels)

// Wrapping arithmetic: unsigned 64-bit, truncated by the store.
#define W(v) ((ulong)(long)(v))
inline long ctl_int_div(long a, long b) {
  if (b == 0) return 0;
  if (b == -1) return (long)(W(0) - W(a));  // INT_MIN / -1 wraps instead of trapping
  return a / b;
}
inline long ctl_int_pow(long base, long exponent) {
  if (exponent < 0) {
    if (base == 1) return 1;
    if (base == -1) return (exponent & 1) ? -1 : 1;
    return 0;
  }
  ulong result = 1, b = W(base);
  while (exponent > 0) {
    if (exponent & 1) result *= b;
    b *= b;
    exponent >>= 1;
  }
  return (long)result;
}

UNARY_KERNEL(neg, (long)(W(0) - W(v)))
UNARY_KERNEL(abs, v < 0 ? (long)(W(0) - W(v)) : (long)v)
UNARY_KERNEL(relu, v > 0 ? v : 0)

BINARY_KERNEL(binary_add, TA, (long)(W(p) + W(q)))
BINARY_KERNEL(binary_sub, TA, (long)(W(p) - W(q)))
BINARY_KERNEL(binary_mul, TA, (long)(W(p) * W(q)))
BINARY_KERNEL(binary_div, TA, ctl_int_div(p, q))
BINARY_KERNEL(binary_pow, TA, ctl_int_pow(p, q))
BINARY_KERNEL(binary_maximum, TA, p > q ? p : q)
BINARY_KERNEL(binary_minimum, TA, p < q ? p : q)

#endif
