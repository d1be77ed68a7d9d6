// vec_kernels_body.h — the bodies of vec_kernels.h's table, written once over GCC vector
// types of kLanes floats. vec_kernels.cpp includes this file once per instruction set,
// each time inside its own namespace and target region (a GCC target pragma, or Clang's
// attribute pragma), after defining
// kLanes, kName, stream_store(), sqrt_d(), to_double() and enter(); so one source becomes
// AVX-512, AVX2 or SSE code.
//
// No include guard: it is included several times on purpose, and only by vec_kernels.cpp.
//
// Accuracy: exp is a degree-7 polynomial on a range reduced to |r| <= ln2 / 2 (under
// 1 ulp); tanh, sigmoid, silu and gelu_tanh are built on it in forms without cancellation
// anywhere in the f32 range (the conformance suite sweeps them in ulps: conformance/
// math_cases.cpp), and keep NaN, +-inf and -0 as the reference does. Row statistics whose cancellation matters (a
// layer_norm mean, the sums of the backward forms, AdamW's moments) are computed in double.

typedef float V __attribute__((vector_size(kLanes * 4)));
typedef int32_t VI __attribute__((vector_size(kLanes * 4)));
typedef float VH __attribute__((vector_size(kLanes * 2)));   // half a V
typedef double VD __attribute__((vector_size(kLanes * 4)));  // kLanes / 2 doubles
constexpr int64_t kHalf = kLanes / 2;

[[gnu::always_inline]] inline V splat(float x) {
  V v;
  for (int i = 0; i < kLanes; ++i) v[i] = x;
  return v;
}
[[gnu::always_inline]] inline VD splat_d(double x) {
  VD v;
  for (int i = 0; i < kHalf; ++i) v[i] = x;
  return v;
}
[[gnu::always_inline]] inline V load(const float* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
[[gnu::always_inline]] inline void store(float* p, V v) {
  std::memcpy(p, &v, sizeof v);
}
// The first `count` lanes from p, the rest `fill`: tails shorter than a vector.
[[gnu::always_inline]] inline V load_part(const float* p, int64_t count, float fill) {
  V v = splat(fill);
  for (int64_t i = 0; i < count; ++i) v[i] = p[i];
  return v;
}
[[gnu::always_inline]] inline void store_part(float* p, V v, int64_t count) {
  for (int64_t i = 0; i < count; ++i) p[i] = v[i];
}
[[gnu::always_inline]] inline V load_n(const float* p, int64_t count, float fill) {
  return count == kLanes ? load(p) : load_part(p, count, fill);
}
[[gnu::always_inline]] inline VD load_d(const float* p) {
  VH h;
  std::memcpy(&h, p, sizeof h);
  return to_double<VD>(h);
}
[[gnu::always_inline]] inline void store_d(float* p, VD v) {
  const VH h = __builtin_convertvector(v, VH);
  std::memcpy(p, &h, sizeof h);
}
[[gnu::always_inline]] inline void widen(V v, VD* lo, VD* hi) {
  VH a, b;
  std::memcpy(&a, &v, sizeof a);
  std::memcpy(&b, reinterpret_cast<const char*>(&v) + sizeof a, sizeof b);
  *lo = to_double<VD>(a);
  *hi = to_double<VD>(b);
}

// Row kernels read their row from memory in a first pass and then work on it in cache;
// while they do, they fetch the same part of the next row (rows of a contiguous tensor
// follow each other), so the next first pass finds it in cache and memory never idles.
// A prefetch past the end of the data is harmless: it never faults.
// Fetches the cache lines of elements [i, i + count) of the row after `row`.
[[gnu::always_inline]] inline void prefetch_next(const float* row, int64_t n, int64_t i, int64_t count) {
  constexpr int64_t kLine = 64 / sizeof(float);
  for (int64_t p = (i + kLine - 1) / kLine * kLine; p < i + count; p += kLine) {
    // Integer arithmetic: the address may lie past the end of the row's array.
    __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(row) + (n + p) * sizeof(float)), 0, 3);
  }
}

[[gnu::always_inline]] inline float hsum(V v) {
  float s = 0;
  for (int i = 0; i < kLanes; ++i) s += v[i];
  return s;
}
[[gnu::always_inline]] inline double hsum_d(VD v) {
  double s = 0;
  for (int i = 0; i < kHalf; ++i) s += v[i];
  return s;
}
// The larger (Max) or smaller of m and v as the reduction ops define it: a NaN anywhere
// wins, and -0 < +0 (of two equal values, the AND of their bits is the larger, the OR the
// smaller: they differ only for a pair of zeros).
template <bool Max>
[[gnu::always_inline]] inline V extreme(V m, V v) {
  const VI mi = reinterpret_cast<VI>(m), vi = reinterpret_cast<VI>(v);
  V r = (Max ? v > m : v < m) ? v : m;
  r = v == m ? reinterpret_cast<V>(Max ? (mi & vi) : (mi | vi)) : r;
  return v != v ? v : r;
}
template <bool Max>
[[gnu::always_inline]] inline float extreme_scalar(float m, float v) {
  if (v != v) return v;
  if (v == m) {
    uint32_t a, b;
    std::memcpy(&a, &m, 4);
    std::memcpy(&b, &v, 4);
    a = Max ? (a & b) : (a | b);
    std::memcpy(&m, &a, 4);
    return m;
  }
  return (Max ? v > m : v < m) ? v : m;
}
template <bool Max>
[[gnu::always_inline]] inline float hextreme(V v) {
  float m = v[0];
  for (int i = 1; i < kLanes; ++i) m = extreme_scalar<Max>(m, v[i]);
  return m;
}
[[gnu::always_inline]] inline V vabs(V x) {
  return reinterpret_cast<V>(reinterpret_cast<VI>(x) & 0x7fffffff);
}
// |magnitude| with the sign bit of `sign`.
[[gnu::always_inline]] inline V copysign_v(V magnitude, V sign) {
  const VI s = reinterpret_cast<VI>(sign) & static_cast<int32_t>(0x80000000u);
  return reinterpret_cast<V>(reinterpret_cast<VI>(magnitude) | s);
}

// e^x. Clamping at 88.8 keeps 2^n finite and still gives +inf past it. Below -104 the
// result rounds to 0: those lanes compute e^0 and are zeroed at the end, because working
// the product down to 2^-150 would go through subnormals, which cost a microcode assist
// each (a causal mask's -inf made softmax 3x slower). NaN fails both comparisons and
// stays NaN.
[[gnu::always_inline]] inline V vexp(V x) {
  const V hi = splat(88.8f), zero = splat(0.0f);
  const auto underflow = x < splat(-104.0f);
  x = x > hi ? hi : x;
  x = underflow ? zero : x;
  // Adding 1.5 * 2^23 rounds x / ln2 to an integer n, which lands in the low mantissa bits.
  const V magic = splat(12582912.0f);
  const V t = x * splat(1.44269504088896341f) + magic;
  const V n = t - magic;
  const VI ni = reinterpret_cast<VI>(t) - reinterpret_cast<VI>(magic);
  // r = x - n ln2 in two steps (Cody and Waite): the first product is exact.
  V r = x - n * splat(0.693359375f);
  r = r + n * splat(2.12194440e-4f);
  V p = splat(1.0f / 5040);
  p = p * r + splat(1.0f / 720);
  p = p * r + splat(1.0f / 120);
  p = p * r + splat(1.0f / 24);
  p = p * r + splat(1.0f / 6);
  p = p * r + splat(0.5f);
  p = p * r + splat(1.0f);
  p = p * r + splat(1.0f);
  // 2^n as two factors: n reaches -150 and 128, which one biased exponent cannot hold.
  const VI n1 = ni >> 1, n2 = ni - n1;
  const V s1 = reinterpret_cast<V>((n1 + 127) << 23), s2 = reinterpret_cast<V>((n2 + 127) << 23);
  const V e = p * s1 * s2;
  return underflow ? zero : e;
}

// tanh|x| = (1 - e) / (1 + e), e = exp(-2|x|) in (0, 1], only from |x| = 0.4 up, where
// e <= e^-0.8 and the subtraction adds at most exp's own error. Below, 1 - e cancels (it
// was 0 for |x| <= 1e-8 and 11% off at 1e-7): there tanh|x| = -m / (2 + m) with
// m = expm1(-2|x|) in [-0.56, 0], summed from its Taylor series to r^13 / 13!, which keeps
// full relative precision down to the subnormals. Both forms are within 2 ulp (measured
// by cpu_vec_kernels_test on every instruction set). The sign comes back from x, so
// tanh(-0) = -0; NaN stays NaN, +-inf gives +-1.
[[gnu::always_inline]] inline V vtanh(V x) {
  const V a = vabs(x), r = splat(-2.0f) * a;
  const V e = vexp(r);
  V m = splat(1.0f / 6227020800.0f);
  for (float f :
       {479001600.0f, 39916800.0f, 3628800.0f, 362880.0f, 40320.0f, 5040.0f, 720.0f, 120.0f, 24.0f, 6.0f, 2.0f, 1.0f})
    m = m * r + splat(1.0f / f);
  m = m * r;
  const V t = a < splat(0.4f) ? -m / (splat(2.0f) + m) : (splat(1.0f) - e) / (splat(1.0f) + e);
  return copysign_v(vabs(t), x);
}

// True when any lane of a comparison's mask is set.
[[gnu::always_inline]] inline bool any(VI mask) {
  const VI none = {};
  return std::memcmp(&mask, &none, sizeof mask) != 0;
}

// x / (1 + exp(-y)) in double, for the lanes where exp(-y) overflows f32 although the result
// is still a normal f32 (silu below x = -88.7 down to -91.5; gelu_tanh near x = -10): the
// vector form returns -0 there. Such lanes are rare, so they go through scalar code.
[[gnu::always_inline]] inline V fix_far_negative(V result, V x, V y, VI far) {
  if (!any(far)) return result;
  for (int i = 0; i < kLanes; ++i) {
    if (far[i]) result[i] = static_cast<float>(x[i] / (1.0 + std::exp(-static_cast<double>(y[i]))));
  }
  return result;
}

// gelu_tanh(x) = 0.5 x (1 + tanh(z)) = x / (1 + exp(-2z)), z = k (x + c x^3): the second
// form has no cancellation where tanh(z) nears -1.
constexpr float kGeluK = 0.79788456080286535588f, kGeluC = 0.044715f;
[[gnu::always_inline]] inline V gelu_z(V x) {
  return splat(kGeluK) * (x + splat(kGeluC) * x * x * x);
}

template <VecUnary Op>
[[gnu::always_inline]] inline V unary_op(V x) {
  if constexpr (Op == VecUnary::kExp) {
    return vexp(x);
  } else if constexpr (Op == VecUnary::kTanh) {
    return vtanh(x);
  } else if constexpr (Op == VecUnary::kSigmoid) {
    // Where exp(-x) overflows the result is below FLT_MIN: 0 is within the suite's bound.
    return splat(1.0f) / (splat(1.0f) + vexp(-x));
  } else if constexpr (Op == VecUnary::kSilu) {
    return fix_far_negative(x / (splat(1.0f) + vexp(-x)), x, x, x < splat(-80.0f));
  } else {
    const V z2 = splat(2.0f) * gelu_z(x);
    return fix_far_negative(x / (splat(1.0f) + vexp(-z2)), x, z2, z2 < splat(-80.0f));
  }
}

template <VecBinary Op, class T>
[[gnu::always_inline]] inline T binary_op(T a, T b) {
  if constexpr (Op == VecBinary::kAdd)
    return a + b;
  else if constexpr (Op == VecBinary::kSub)
    return a - b;
  else if constexpr (Op == VecBinary::kMul)
    return a * b;
  else
    return a / b;
}

// Writes y[0, n) from f(i, count), which returns the vector for elements [i, i + count).
// With `stream`, the aligned middle goes out through non-temporal stores (the caller
// fences them: stream_fence()).
template <class F>
[[gnu::always_inline]] inline void write_span(float* y, int64_t n, bool stream, F&& f) {
  int64_t i = 0;
  constexpr uintptr_t kAlign = sizeof(V);
  const uintptr_t address = reinterpret_cast<uintptr_t>(y);
  if (stream && address % sizeof(float) == 0 && n >= 4 * kLanes) {
    const int64_t head = static_cast<int64_t>((kAlign - address % kAlign) % kAlign / sizeof(float));
    if (head > 0) store_part(y, f(int64_t{0}, head), head);
    for (i = head; i + kLanes <= n; i += kLanes) stream_store(y + i, f(i, int64_t{kLanes}));
  } else {
    for (; i + kLanes <= n; i += kLanes) store(y + i, f(i, int64_t{kLanes}));
  }
  if (i < n) store_part(y + i, f(i, n - i), n - i);
}

template <VecBinary Op>
void binary_span(float* out, const float* a, int64_t sa, const float* b, int64_t sb, int64_t n, bool stream) {
  if (sa == 0) {
    const V va = splat(a[0]);
    write_span(out, n, stream, [&](int64_t i, int64_t c) { return binary_op<Op>(va, load_n(b + i, c, 1.0f)); });
  } else if (sb == 0) {
    const V vb = splat(b[0]);
    write_span(out, n, stream, [&](int64_t i, int64_t c) { return binary_op<Op>(load_n(a + i, c, 1.0f), vb); });
  } else {
    write_span(out, n, stream,
               [&](int64_t i, int64_t c) { return binary_op<Op>(load_n(a + i, c, 1.0f), load_n(b + i, c, 1.0f)); });
  }
}

void binary(VecBinary op, float* out, const float* a, int64_t sa, const float* b, int64_t sb, int64_t n, bool stream) {
  enter();
  switch (op) {
    case VecBinary::kAdd:
      return binary_span<VecBinary::kAdd>(out, a, sa, b, sb, n, stream);
    case VecBinary::kSub:
      return binary_span<VecBinary::kSub>(out, a, sa, b, sb, n, stream);
    case VecBinary::kMul:
      return binary_span<VecBinary::kMul>(out, a, sa, b, sb, n, stream);
    case VecBinary::kDiv:
      return binary_span<VecBinary::kDiv>(out, a, sa, b, sb, n, stream);
  }
}

template <VecUnary Op>
void unary_span(float* out, const float* x, int64_t n) {
  write_span(out, n, false, [&](int64_t i, int64_t c) { return unary_op<Op>(load_n(x + i, c, 0.0f)); });
}

void unary(VecUnary op, float* out, const float* x, int64_t n) {
  enter();
  switch (op) {
    case VecUnary::kExp:
      return unary_span<VecUnary::kExp>(out, x, n);
    case VecUnary::kTanh:
      return unary_span<VecUnary::kTanh>(out, x, n);
    case VecUnary::kSigmoid:
      return unary_span<VecUnary::kSigmoid>(out, x, n);
    case VecUnary::kSilu:
      return unary_span<VecUnary::kSilu>(out, x, n);
    case VecUnary::kGeluTanh:
      return unary_span<VecUnary::kGeluTanh>(out, x, n);
  }
}

// gelu_tanh'(x) = s + 2 k x (1 + 3c x^2) s (1 - s), s = sigmoid(2z) (docs/ops.md), with
// e = exp(-2|z|) in (0, 1]: s = 1 / (1 + e) for z >= 0, e / (1 + e) below, and
// s (1 - s) = e / (1 + e)^2. Nothing overflows or cancels (apart from the two terms near
// the zero at x = -0.75, which any form has), so the result follows the exact one until it
// leaves the normal f32 range at x = -10.1. The old form, which saturated at |z| = 19.1 as
// the reference's tanh did, returned 0 from x = -10, where the exact value is -2.8e-36.
// Below z = -40 (x < -9.8) e nears the subnormals, where it loses bits although the result,
// e times about -265, is still normal: those rare lanes go through double. Where e is 0,
// x^3 may have overflowed: the second term is x - x (0, or NaN for x = +-inf, as
// docs/ops.md says).
[[gnu::always_inline]] inline float gelu_tanh_grad_far_negative(float xf) {
  const double x = xf, k = 0.79788456080286535588, c = 0.044715;
  const double e = std::exp(2 * k * (x + c * x * x * x)), r = 1 / (1 + e);
  return static_cast<float>(e * r * (1 + 2 * k * x * (1 + 3 * c * x * x) * r));
}
void gelu_tanh_backward(float* dx, const float* dy, const float* x, int64_t n) {
  enter();
  write_span(dx, n, false, [&](int64_t i, int64_t c) {
    const V v = load_n(x + i, c, 0.0f);
    const V z = gelu_z(v);
    const V e = vexp(splat(-2.0f) * vabs(z));
    const V r = splat(1.0f) / (splat(1.0f) + e);
    const V s = z >= splat(0.0f) ? r : e * r;
    V term = splat(2.0f * kGeluK) * v * (splat(1.0f) + splat(3.0f * kGeluC) * v * v) * (e * r * r);
    term = e == splat(0.0f) ? v - v : term;
    V g = s + term;
    const VI far = z < splat(-40.0f);
    if (any(far)) {
      for (int j = 0; j < kLanes; ++j) {
        if (far[j]) g[j] = gelu_tanh_grad_far_negative(v[j]);
      }
    }
    return load_n(dy + i, c, 0.0f) * g;
  });
}

template <bool Max>
float row_extreme_t(const float* x, int64_t n) {
  const float fill = Max ? -__builtin_inff() : __builtin_inff();
  V m0 = splat(fill), m1 = m0;
  int64_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    m0 = extreme<Max>(m0, load(x + i));
    m1 = extreme<Max>(m1, load(x + i + kLanes));
  }
  for (; i < n; i += kLanes) m0 = extreme<Max>(m0, load_n(x + i, std::min<int64_t>(kLanes, n - i), fill));
  return hextreme<Max>(extreme<Max>(m0, m1));
}

float row_max(const float* x, int64_t n) {
  enter();
  return row_extreme_t<true>(x, n);
}

float row_min(const float* x, int64_t n) {
  enter();
  return row_extreme_t<false>(x, n);
}

// sum(exp(x - m)), also stored to e when e is not NULL.
[[gnu::always_inline]] inline float exp_sum(float* e, const float* x, int64_t n, float m) {
  const V vm = splat(m);
  V s0 = splat(0.0f), s1 = s0;
  int64_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    prefetch_next(x, n, i, 2 * kLanes);
    const V e0 = vexp(load(x + i) - vm), e1 = vexp(load(x + i + kLanes) - vm);
    if (e) {
      store(e + i, e0);
      store(e + i + kLanes, e1);
    }
    s0 += e0;
    s1 += e1;
  }
  for (; i < n; i += kLanes) {
    const int64_t c = std::min<int64_t>(kLanes, n - i);
    // Padding lanes hold -inf, whose exp adds 0 (unless m is -inf or NaN: then the row is NaN anyway).
    const V ev = vexp(load_part(x + i, c, -__builtin_inff()) - vm);
    if (e) store_part(e + i, ev, c);
    s0 += ev;
  }
  return hsum(s0 + s1);
}

float row_exp_sum(float* e, const float* z, int64_t n, float max) {
  enter();
  return exp_sum(e, z, n, max);
}

void row_max_logsum(const float* z, int64_t n, float* max, double* log_sum) {
  const float m = row_max(z, n);
  *max = m;
  *log_sum = std::log(static_cast<double>(exp_sum(nullptr, z, n, m)));
}

// softmax: max, then e = exp(x - max) and its sum, then y = e / sum. log_softmax:
// y = (x - max) - log(sum). An all -inf row, or one holding +inf or NaN, gives NaN
// throughout, as the reference's arithmetic does.
void softmax_row(float* y, const float* x, int64_t n, bool log, float* e, bool stream) {
  enter();
  const float m = row_max(x, n);
  const V vm = splat(m);
  if (log) {
    const float sum = exp_sum(nullptr, x, n, m);
    const V lse = splat(static_cast<float>(std::log(static_cast<double>(sum))));
    write_span(y, n, stream, [&](int64_t i, int64_t c) { return (load_n(x + i, c, 0.0f) - vm) - lse; });
    return;
  }
  const float sum = exp_sum(e, x, n, m);
  const V inv = splat(static_cast<float>(1.0 / static_cast<double>(sum)));
  write_span(y, n, stream, [&](int64_t i, int64_t c) { return load_n(e + i, c, 0.0f) * inv; });
}

// softmax of `rows` rows (row r at x + r * xs, y + r * ys), software-pipelined: the streamed
// stores of row r - 1's result go out while row r's exponentials are computed, so the
// stores, which one core can only issue so fast, overlap the arithmetic instead of
// following it. The sums add in softmax_row's order, so each row's result is the same.
// `e2` holds 2n floats (two rows of exponentials). Only for streamed rows whose length is
// a multiple of two vectors and whose starts are vector-aligned; else row by row.
void softmax_rows(float* y, int64_t ys, const float* x, int64_t xs, int64_t rows, int64_t n, float* e2, bool stream) {
  enter();
  const bool aligned = reinterpret_cast<uintptr_t>(y) % sizeof(V) == 0 && (ys * sizeof(float)) % sizeof(V) == 0;
  if (!stream || !aligned || n % (2 * kLanes) != 0) {
    for (int64_t r = 0; r < rows; ++r) softmax_row(y + r * ys, x + r * xs, n, false, e2, stream);
    return;
  }
  float* prev_y = nullptr;
  const float* prev_e = nullptr;
  V prev_inv = splat(0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * xs;
    float* const er = e2 + (r & 1) * n;
    const V vm = splat(row_extreme_t<true>(xr, n));
    V s0 = splat(0.0f), s1 = s0;
    for (int64_t i = 0; i < n; i += 2 * kLanes) {
      prefetch_next(xr, xs, i, 2 * kLanes);
      const V e0 = vexp(load(xr + i) - vm), e1 = vexp(load(xr + i + kLanes) - vm);
      store(er + i, e0);
      store(er + i + kLanes, e1);
      s0 += e0;
      s1 += e1;
      if (prev_y) {
        stream_store(prev_y + i, load(prev_e + i) * prev_inv);
        stream_store(prev_y + i + kLanes, load(prev_e + i + kLanes) * prev_inv);
      }
    }
    prev_inv = splat(static_cast<float>(1.0 / static_cast<double>(hsum(s0 + s1))));
    prev_y = y + r * ys;
    prev_e = er;
  }
  for (int64_t i = 0; i < n; i += kLanes) stream_store(prev_y + i, load(prev_e + i) * prev_inv);
}

// In f32, as PyTorch's SGD is: in double, the conversions (five per element) made the
// update compute-bound at about 0.55 ns an element on one thread even from L2, 8% of an
// MLP training step. The error is a few f32 roundings of O(1) values, within the
// conformance bound (kTranscendental), as for devices without f64.
void sgd(float* param, float* momentum_buf, const float* grad, int64_t n, double lr, double momentum, double dampening,
         double weight_decay, bool nesterov) {
  enter();
  const float lr_f = static_cast<float>(lr), m_f = static_cast<float>(momentum);
  const float keep_f = static_cast<float>(1 - dampening), wd_f = static_cast<float>(weight_decay);
  const V vlr = splat(lr_f), vm = splat(m_f), vkeep = splat(keep_f), vwd = splat(wd_f);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const V p = load(param + i);
    const V g = load(grad + i) + vwd * p;
    V d = g;
    if (momentum_buf) {
      const V b = vm * load(momentum_buf + i) + vkeep * g;
      store(momentum_buf + i, b);
      d = nesterov ? g + vm * b : b;
    }
    store(param + i, p - vlr * d);
  }
  for (; i < n; ++i) {
    const float p = param[i];
    const float g = grad[i] + wd_f * p;
    float d = g;
    if (momentum_buf) {
      const float b = m_f * momentum_buf[i] + keep_f * g;
      momentum_buf[i] = b;
      d = nesterov ? g + m_f * b : b;
    }
    param[i] = p - lr_f * d;
  }
}

double row_sum(const float* x, int64_t n) {
  enter();
  VD s0 = splat_d(0.0), s1 = s0;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    s0 += load_d(x + i);
    s1 += load_d(x + i + kHalf);
  }
  double s = hsum_d(s0 + s1);
  for (; i < n; ++i) s += static_cast<double>(x[i]);
  return s;
}

void accumulate(double* acc, const float* x, int64_t n) {
  enter();
  int64_t i = 0;
  for (; i + kHalf <= n; i += kHalf) {
    VD a;
    std::memcpy(&a, acc + i, sizeof a);
    a += load_d(x + i);
    std::memcpy(acc + i, &a, sizeof a);
  }
  for (; i < n; ++i) acc[i] += static_cast<double>(x[i]);
}

// layer_norm / rms_norm of one row. The mean is summed in double and kept as a float pair
// (hi + lo), so x - mean loses nothing to a mean far bigger than the spread; the variance
// is summed in double, so x^2 cannot overflow.
bool norm_row(float* y, const float* x, const float* weight, const float* bias, int64_t n, double eps, bool layer,
              float* mean_out, float* rstd_out, bool stream) {
  const double mean = layer ? row_sum(x, n) / static_cast<double>(n) : 0.0;
  const float mhi = static_cast<float>(mean), mlo = static_cast<float>(mean - static_cast<double>(mhi));
  const V vhi = splat(mhi), vlo = splat(mlo);
  VD q0 = splat_d(0.0), q1 = q0;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    prefetch_next(x, n, i, kLanes);
    const V d = (load(x + i) - vhi) - vlo;
    VD lo, hi;
    widen(d, &lo, &hi);
    q0 += lo * lo;
    q1 += hi * hi;
  }
  double sq = hsum_d(q0 + q1);
  for (; i < n; ++i) {
    const double d = static_cast<double>((x[i] - mhi) - mlo);
    sq += d * d;
  }
  const double rstd = 1.0 / std::sqrt(sq / static_cast<double>(n) + eps);
  // A finite rstd that f32 cannot hold to full precision: leave the row to double code.
  constexpr double kFloatMax = 3.4028234663852886e38, kFloatMin = 1.1754943508222875e-38;
  if (std::isfinite(rstd) && (rstd > kFloatMax || (rstd > 0 && rstd < kFloatMin))) return false;
  const float r = static_cast<float>(rstd);
  const V vr = splat(r);
  *mean_out = mhi;
  *rstd_out = r;
  if (weight && bias) {
    write_span(y, n, stream, [&](int64_t j, int64_t c) {
      return ((load_n(x + j, c, 0.0f) - vhi) - vlo) * vr * load_n(weight + j, c, 0.0f) + load_n(bias + j, c, 0.0f);
    });
  } else if (weight) {
    write_span(y, n, stream, [&](int64_t j, int64_t c) {
      return ((load_n(x + j, c, 0.0f) - vhi) - vlo) * vr * load_n(weight + j, c, 0.0f);
    });
  } else if (bias) {
    write_span(y, n, stream, [&](int64_t j, int64_t c) {
      return ((load_n(x + j, c, 0.0f) - vhi) - vlo) * vr + load_n(bias + j, c, 0.0f);
    });
  } else {
    write_span(y, n, stream, [&](int64_t j, int64_t c) { return ((load_n(x + j, c, 0.0f) - vhi) - vlo) * vr; });
  }
  return true;
}

// sum(a * b) in double: products of two floats are exact in double.
[[gnu::always_inline]] inline double dot_d(const float* a, const float* b, int64_t n) {
  VD s0 = splat_d(0.0), s1 = s0;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    s0 += load_d(a + i) * load_d(b + i);
    s1 += load_d(a + i + kHalf) * load_d(b + i + kHalf);
  }
  double s = hsum_d(s0 + s1);
  for (; i < n; ++i) s += static_cast<double>(a[i]) * static_cast<double>(b[i]);
  return s;
}

void softmax_backward_row(float* dx, const float* y, const float* dy, int64_t n, bool log, bool stream) {
  enter();
  auto prefetch = [&](int64_t i, int64_t c) {
    prefetch_next(y, n, i, c);
    prefetch_next(dy, n, i, c);
  };
  if (log) {
    const V s = splat(static_cast<float>(row_sum(dy, n)));
    write_span(dx, n, stream, [&](int64_t i, int64_t c) {
      prefetch(i, c);
      return load_n(dy + i, c, 0.0f) - vexp(load_n(y + i, c, 0.0f)) * s;
    });
    return;
  }
  const V s = splat(static_cast<float>(dot_d(dy, y, n)));
  write_span(dx, n, stream, [&](int64_t i, int64_t c) {
    prefetch(i, c);
    return load_n(y + i, c, 0.0f) * (load_n(dy + i, c, 0.0f) - s);
  });
}

void norm_backward_row(float* dx, const float* dy, const float* x, const float* weight, int64_t n, float mean,
                       float rstd, bool layer, bool stream) {
  enter();
  const V vm = splat(mean), vr = splat(rstd);
  // g and xh for elements [i, i + c).
  auto g_at = [&](int64_t i, int64_t c) {
    const V d = load_n(dy + i, c, 0.0f);
    return weight ? d * load_n(weight + i, c, 0.0f) : d;
  };
  auto xh_at = [&](int64_t i, int64_t c) { return (load_n(x + i, c, 0.0f) - vm) * vr; };
  VD sg0 = splat_d(0.0), sg1 = sg0, sx0 = sg0, sx1 = sg0;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const V g = g_at(i, kLanes), gx = g * xh_at(i, kLanes);
    VD lo, hi;
    widen(g, &lo, &hi);
    sg0 += lo;
    sg1 += hi;
    widen(gx, &lo, &hi);
    sx0 += lo;
    sx1 += hi;
  }
  double sum_g = hsum_d(sg0 + sg1), sum_gx = hsum_d(sx0 + sx1);
  if (i < n) {
    const V g = g_at(i, n - i), gx = g * xh_at(i, n - i);  // padding lanes are 0
    for (int64_t k = 0; k < n - i; ++k) {
      sum_g += static_cast<double>(g[k]);
      sum_gx += static_cast<double>(gx[k]);
    }
  }
  const double dn = static_cast<double>(n);
  const V mean_g = splat(layer ? static_cast<float>(sum_g / dn) : 0.0f);
  const V mean_gx = splat(static_cast<float>(sum_gx / dn));
  write_span(dx, n, stream, [&](int64_t j, int64_t c) {
    prefetch_next(dy, n, j, c);
    prefetch_next(x, n, j, c);
    return vr * ((g_at(j, c) - mean_g) - xh_at(j, c) * mean_gx);
  });
}

void norm_param_row(double* dweight, double* dbias, const float* dy, const float* x, int64_t n, float mean,
                    float rstd) {
  enter();
  const V vm = splat(mean), vr = splat(rstd);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const V d = load(dy + i);
    const V dxh = d * ((load(x + i) - vm) * vr);
    VD lo, hi, w0, w1, b0, b1;
    std::memcpy(&w0, dweight + i, sizeof w0);
    std::memcpy(&w1, dweight + i + kHalf, sizeof w1);
    std::memcpy(&b0, dbias + i, sizeof b0);
    std::memcpy(&b1, dbias + i + kHalf, sizeof b1);
    widen(dxh, &lo, &hi);
    w0 += lo;
    w1 += hi;
    widen(d, &lo, &hi);
    b0 += lo;
    b1 += hi;
    std::memcpy(dweight + i, &w0, sizeof w0);
    std::memcpy(dweight + i + kHalf, &w1, sizeof w1);
    std::memcpy(dbias + i, &b0, sizeof b0);
    std::memcpy(dbias + i + kHalf, &b1, sizeof b1);
  }
  for (; i < n; ++i) {
    const float d = dy[i];
    dweight[i] += static_cast<double>(d * ((x[i] - mean) * rstd));
    dbias[i] += static_cast<double>(d);
  }
}

void adamw(float* param, float* exp_avg, float* exp_avg_sq, const float* grad, int64_t n, double lr, double decay,
           double beta1, double beta2, double eps, double inv_correction1, double inv_correction2) {
  enter();
  const VD b1 = splat_d(beta1), b2 = splat_d(beta2), c1 = splat_d(1 - beta1), c2 = splat_d(1 - beta2);
  const VD vlr = splat_d(lr), vdecay = splat_d(decay), veps = splat_d(eps);
  const VD ic1 = splat_d(inv_correction1), ic2 = splat_d(inv_correction2);
  int64_t i = 0;
  for (; i + kHalf <= n; i += kHalf) {
    const VD g = load_d(grad + i);
    VD p = load_d(param + i);
    p = p - vdecay * p;
    const VD m = b1 * load_d(exp_avg + i) + c1 * g;
    const VD v = b2 * load_d(exp_avg_sq + i) + c2 * g * g;
    p = p - vlr * (m * ic1) / (sqrt_d(v * ic2) + veps);
    store_d(param + i, p);
    store_d(exp_avg + i, m);
    store_d(exp_avg_sq + i, v);
  }
  for (; i < n; ++i) {
    const double g = grad[i];
    double p = param[i];
    p = p - decay * p;
    const double m = beta1 * exp_avg[i] + (1 - beta1) * g;
    const double v = beta2 * exp_avg_sq[i] + (1 - beta2) * g * g;
    p = p - lr * (m * inv_correction1) / (std::sqrt(v * inv_correction2) + eps);
    param[i] = static_cast<float>(p);
    exp_avg[i] = static_cast<float>(m);
    exp_avg_sq[i] = static_cast<float>(v);
  }
}

constexpr VecKernels kTable = {kName,
                               binary,
                               unary,
                               gelu_tanh_backward,
                               softmax_row,
                               softmax_rows,
                               norm_row,
                               softmax_backward_row,
                               norm_backward_row,
                               norm_param_row,
                               row_max_logsum,
                               row_exp_sum,
                               adamw,
                               sgd,
                               row_sum,
                               row_max,
                               row_min,
                               accumulate};
