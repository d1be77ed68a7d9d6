// movement.cl — cast, gather, scatter_add and the creation ops (fill, arange, random).
// Slots: TA is the element dtype (cast: the source), TB the cast's target, TI the index
// dtype of gather / scatter_add (i32 / i64). Conversions follow ops.md's cast rules exactly as sdk/half.hpp and
// the reference do: floats convert from their exact double value, integers from int64;
// float -> integer truncates and saturates (NaN -> 0); -> bool is x != 0 (NaN is true);
// -> f16/bf16 rounds once to nearest even, by way of a float rounded to odd.

// The reference computes a + i * step and a + u * (b - a) as two roundings; OpenCL C
// would otherwise be free to fuse them into one fma and differ in the last bit.
#pragma OPENCL FP_CONTRACT OFF

#if defined(CTL_HAVE_FP64)
#define WIDE_T double  // every f32/f16/bf16 value, and every f64, is exact here
#else
#define WIDE_T float
#endif

// ---- conversions to the 16-bit formats (bits), as sdk/half.hpp ----

// float -> binary16 bits, round to nearest even, overflow to Inf, NaN stays a quiet NaN.
inline ushort ctl_float_to_half_bits(float f) {
  const uint bits = as_uint(f);
  const ushort sign = (ushort)((bits >> 16) & 0x8000u);
  const uint mag = bits & 0x7fffffffu;
  if (mag > 0x7f800000u) return (ushort)(sign | 0x7e00u | ((mag >> 13) & 0x3ffu));
  if (mag >= 0x477ff000u) return (ushort)(sign | 0x7c00u);  // rounds past 65504
  if (mag < 0x38800000u) {                                    // subnormal or zero: one ulp is 2^-24
    if (mag < 0x33000000u) return sign;                       // below half the smallest subnormal
    const uint mantissa = (mag & 0x7fffffu) | 0x800000u;
    const uint shift = 126u - (mag >> 23);  // 14..24
    uint result = mantissa >> shift;
    const uint rest = mantissa & ((1u << shift) - 1u);
    const uint half_ulp = 1u << (shift - 1u);
    if (rest > half_ulp || (rest == half_ulp && (result & 1u))) ++result;
    return (ushort)(sign | result);
  }
  uint result = (mag >> 13) - (112u << 10);
  const uint rest = mag & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (result & 1u))) ++result;
  return (ushort)(sign | result);
}

// int64 -> float rounded to odd: keep 24 significant bits and fold the dropped ones into
// the last, so that one more rounding to f16/bf16 equals rounding the integer directly.
inline float ctl_long_to_float_odd(long v) {
  ulong magnitude = v < 0 ? (ulong)0 - (ulong)v : (ulong)v;
  const int significant = 64 - (int)clz(magnitude);
  int shift = significant > 24 ? significant - 24 : 0;
  if (shift > 0) {
    const ulong sticky = (magnitude & ((1ul << shift) - 1ul)) != 0 ? 1ul : 0ul;
    magnitude = (magnitude >> shift) | sticky;
  }
  const float f = ldexp((float)(uint)magnitude, shift);  // exact: at most 24 bits
  return v < 0 ? -f : f;
}

#if defined(CTL_HAVE_FP64)
// double -> float rounded to odd (sdk::round_to_odd_float): truncate, and make the last
// bit 1 when inexact. Stepping the bits moves one float towards d.
inline float ctl_double_to_float_odd(double d) {
  float f = convert_float_rte(d);
  if (isnan(d) || (double)f == d) return f;
  if ((as_uint(f) & 1u) == 0u) {
    if (f == 0.0f) {
      f = as_float(d > 0.0 ? 0x00000001u : 0x80000001u);
    } else {
      // Towards d: away from zero when |f| < |d|, else towards zero.
      const bool away = (f > 0.0f) == ((double)f < d);
      f = as_float(away ? as_uint(f) + 1u : as_uint(f) - 1u);
    }
  }
  return f;
}
#define CTL_TO_FLOAT_ODD(v) ctl_double_to_float_odd(v)
#else
#define CTL_TO_FLOAT_ODD(v) (v)  // WIDE_T is float: nothing to round
#endif

// ---- a value of the target dtype D as raw bits R_(D), from WIDE_T or from long ----

#define FROM_WIDE(D, v) CTL_CAT(ctl_wide_to_, D)(v)
#define FROM_LONG(D, v) CTL_CAT(ctl_long_to_, D)(v)

inline uint ctl_wide_to_f32(WIDE_T v) { return as_uint(convert_float_rte(v)); }
inline ushort ctl_wide_to_f16(WIDE_T v) { return ctl_float_to_half_bits(CTL_TO_FLOAT_ODD(v)); }
inline ushort ctl_wide_to_bf16(WIDE_T v) { return ctl_float_to_bf16(CTL_TO_FLOAT_ODD(v)); }
inline uchar ctl_wide_to_bool(WIDE_T v) { return v != (WIDE_T)0 ? 1 : 0; }  // NaN != 0

// Truncate toward zero and saturate; NaN -> 0. `lo` (the minimum) and `hi1` (max + 1) are
// powers of two: exact as float literals, so exact in WIDE_T.
#define CTL_SATURATE(v, type, lo, hi1, min_v, max_v) \
  (isnan(v) ? (type)0 : (v) <= (lo) ? (type)(min_v) : (v) >= (hi1) ? (type)(max_v) : (type)trunc(v))
inline uchar ctl_wide_to_i8(WIDE_T v) { return (uchar)CTL_SATURATE(v, char, -128.0f, 128.0f, -128, 127); }
inline uchar ctl_wide_to_u8(WIDE_T v) { return CTL_SATURATE(v, uchar, 0.0f, 256.0f, 0, 255); }
inline uint ctl_wide_to_i32(WIDE_T v) {
  return (uint)CTL_SATURATE(v, int, -2147483648.0f, 2147483648.0f, INT_MIN, INT_MAX);
}
inline ulong ctl_wide_to_i64(WIDE_T v) {
  return (ulong)CTL_SATURATE(v, long, -9223372036854775808.0f, 9223372036854775808.0f, LONG_MIN, LONG_MAX);
}

inline uint ctl_long_to_f32(long v) { return as_uint(convert_float_rte(v)); }
inline ushort ctl_long_to_f16(long v) { return ctl_float_to_half_bits(ctl_long_to_float_odd(v)); }
inline ushort ctl_long_to_bf16(long v) { return ctl_float_to_bf16(ctl_long_to_float_odd(v)); }
inline uchar ctl_long_to_bool(long v) { return v != 0 ? 1 : 0; }
// Narrower integers wrap: keep the low bits.
inline uchar ctl_long_to_i8(long v) { return (uchar)((ulong)v & 0xfful); }
inline uchar ctl_long_to_u8(long v) { return (uchar)((ulong)v & 0xfful); }
inline uint ctl_long_to_i32(long v) { return (uint)((ulong)v & 0xfffffffful); }
inline ulong ctl_long_to_i64(long v) { return (ulong)v; }

#if defined(CTL_HAVE_FP64)
inline ulong ctl_wide_to_f64(double v) { return as_ulong(v); }
inline ulong ctl_long_to_f64(long v) { return as_ulong(convert_double_rte(v)); }
#endif

#if defined(TB)
// ---- cast: y = TB(x), x of dtype TA ----
__kernel void cast_strided(__global const T_(TA)* x, long x_offset, long8 x_strides, __global R_(TB)* y, long y_offset,
                           long8 y_strides, int rank, long8 shape, long n) {
  FOR_EACH_ITEM(i, n) {
    long8 index = ctl_unravel(i, rank, shape);
    const long xi = x_offset + ctl_dot(index, x_strides);
#if IS_FLOAT(TA)
    const R_(TB) bits = FROM_WIDE(TB, (WIDE_T)LOAD(TA, x, xi));
#else
    const R_(TB) bits = FROM_LONG(TB, (long)LOAD(TA, x, xi));
#endif
    y[y_offset + ctl_dot(index, y_strides)] = bits;
  }
}
#endif  // TB

// scatter_add's sums: WIDE_T for floats, wrapping 64-bit for integers.
#if IS_FLOAT(TA)
#define ACC_T WIDE_T
#else
#define ACC_T long
#endif

#if defined(TI)

// ---- gather: out[pre, j, post] = x[pre, index[j], post], 0 where index[j] is out of range ----
// The walk is over out's shape; x's strides are 0 on the index axes, index's are 0 on the
// others, and x_axis_stride steps along the gathered axis. TI is the index dtype.
__kernel void gather_strided(__global R_(TA)* out, long out_offset, long8 out_strides, __global const R_(TA)* x,
                             long x_offset, long8 x_strides, __global const T_(TI)* index, long index_offset,
                             long8 index_strides, int rank, long8 shape, long n, long axis_size, long x_axis_stride) {
  FOR_EACH_ITEM(i, n) {
    long8 at = ctl_unravel(i, rank, shape);
    long p = (long)LOAD(TI, index, index_offset + ctl_dot(at, index_strides));
    if (p < 0) p += axis_size;
    R_(TA) v = (R_(TA))0;  // zero bits are 0 in every dtype
    if (p >= 0 && p < axis_size) v = x[x_offset + ctl_dot(at, x_strides) + p * x_axis_stride];
    out[out_offset + ctl_dot(at, out_strides)] = v;
  }
}

// ---- scatter_add, deterministically: each work-item owns one column (a position of the
// target's axes other than `axis`) and adds the src elements of its column in index order,
// so no two work-items touch one sum and the order is the reference's. Sums live in a
// contiguous accumulator (acc, of the target's shape): WIDE_T for floats, which rounds
// once at the end as the reference does, wrapping 64-bit for integers.

__kernel void scatter_init(__global const T_(TA)* target, long target_offset, long8 target_strides,
                           __global ACC_T* acc, long acc_offset, long8 acc_strides, int rank, long8 shape, long n) {
  FOR_EACH_ITEM(i, n) {
    long8 at = ctl_unravel(i, rank, shape);
    acc[acc_offset + ctl_dot(at, acc_strides)] = (ACC_T)LOAD(TA, target, target_offset + ctl_dot(at, target_strides));
  }
}

// Columns: (col_rank, col_shape) over the target's axes but `axis`, with src's strides and
// acc's strides there. Index positions: (j_rank, j_shape) over index's shape, with index's
// strides and src's strides on the index axes.
__kernel void scatter_columns(__global const T_(TA)* src, long src_offset, long8 src_col_strides,
                              __global ACC_T* acc, long acc_offset, long8 acc_col_strides,
                              __global const T_(TI)* index, long index_offset, long8 index_strides,
                              long8 src_j_strides, int col_rank, long8 col_shape, long columns, int j_rank,
                              long8 j_shape, long positions, long axis_size, long acc_axis_stride) {
  FOR_EACH_ITEM(c, columns) {
    const long8 col = ctl_unravel(c, col_rank, col_shape);
    const long s0 = src_offset + ctl_dot(col, src_col_strides);
    const long a0 = acc_offset + ctl_dot(col, acc_col_strides);
    for (long j = 0; j < positions; ++j) {
      const long8 at = ctl_unravel(j, j_rank, j_shape);
      long p = (long)LOAD(TI, index, index_offset + ctl_dot(at, index_strides));
      if (p < 0) p += axis_size;
      if (p < 0 || p >= axis_size) continue;  // skipped, as in the reference
      const C_(TA) v = LOAD(TA, src, s0 + ctl_dot(at, src_j_strides));
      __global ACC_T* sum = acc + a0 + p * acc_axis_stride;
#if IS_FLOAT(TA)
      *sum += (ACC_T)v;
#else
      *sum = (long)((ulong)*sum + (ulong)(long)v);
#endif
    }
  }
}

#endif  // TI

// The accumulator back into out (dtype TA), by the cast rules.
__kernel void scatter_finish(__global const ACC_T* acc, long acc_offset, long8 acc_strides, __global R_(TA)* out,
                             long out_offset, long8 out_strides, int rank, long8 shape, long n) {
  FOR_EACH_ITEM(i, n) {
    long8 at = ctl_unravel(i, rank, shape);
    const long ai = acc_offset + ctl_dot(at, acc_strides);
#if IS_FLOAT(TA)
    out[out_offset + ctl_dot(at, out_strides)] = FROM_WIDE(TA, acc[ai]);
#else
    out[out_offset + ctl_dot(at, out_strides)] = FROM_LONG(TA, acc[ai]);
#endif
  }
}

// ---- fill: every element gets the same bits (the host converted the value) ----
__kernel void fill_strided(__global R_(TA)* out, long out_offset, long8 out_strides, int rank, long8 shape, long n,
                           ulong bits) {
  const R_(TA) v = (R_(TA))bits;
  FOR_EACH_ITEM(i, n) {
    out[out_offset + ctl_dot(ctl_unravel(i, rank, shape), out_strides)] = v;
  }
}

// ---- arange: element i is start + i * step, in WIDE_T, converted once ----
__kernel void arange_strided(__global R_(TA)* out, long out_offset, long8 out_strides, int rank, long8 shape, long n,
                             WIDE_T start, WIDE_T step) {
  FOR_EACH_ITEM(i, n) {
    const WIDE_T v = start + (WIDE_T)i * step;
    out[out_offset + ctl_dot(ctl_unravel(i, rank, shape), out_strides)] = FROM_WIDE(TA, v);
  }
}

// ---- random: Philox-4x32-10 (sdk/philox.hpp), element i (row-major) uses counter offset + i ----
inline uint4 ctl_philox(ulong counter, ulong key) {
  uint4 c = (uint4)((uint)counter, (uint)(counter >> 32), 0u, 0u);
  uint k0 = (uint)key, k1 = (uint)(key >> 32);
  for (int round = 0; round < 10; ++round) {
    const uint hi0 = mul_hi(0xD2511F53u, c.x), lo0 = 0xD2511F53u * c.x;
    const uint hi1 = mul_hi(0xCD9E8D57u, c.z), lo1 = 0xCD9E8D57u * c.z;
    c = (uint4)(hi1 ^ c.y ^ k0, lo1, hi0 ^ c.w ^ k1, lo0);
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return c;
}

// 53 random bits in [0, 1); exact in double. Without doubles, the top 24 bits as a float.
inline WIDE_T ctl_unit(uint high, uint low) {
#if defined(CTL_HAVE_FP64)
  return (double)((((ulong)high << 32) | low) >> 11) * 0x1.0p-53;
#else
  return (float)(high >> 8) * 0x1.0p-24f;
#endif
}

__kernel void random_uniform(__global R_(TA)* out, long out_offset, long8 out_strides, int rank, long8 shape, long n,
                             ulong seed, ulong offset, WIDE_T a, WIDE_T b) {
  FOR_EACH_ITEM(i, n) {
    const uint4 r = ctl_philox(offset + (ulong)i, seed);  // the counter wraps, as the generator's does
    const WIDE_T v = a + ctl_unit(r.x, r.y) * (b - a);
    out[out_offset + ctl_dot(ctl_unravel(i, rank, shape), out_strides)] = FROM_WIDE(TA, v);
  }
}

// Box-Muller, cosine arm; u1 in (0, 1] keeps the log finite.
__kernel void random_normal(__global R_(TA)* out, long out_offset, long8 out_strides, int rank, long8 shape, long n,
                            ulong seed, ulong offset, WIDE_T a, WIDE_T b) {
  FOR_EACH_ITEM(i, n) {
    const uint4 r = ctl_philox(offset + (ulong)i, seed);
    const WIDE_T u1 = (WIDE_T)1 - ctl_unit(r.x, r.y);
    const WIDE_T u2 = ctl_unit(r.z, r.w);
#if defined(CTL_HAVE_FP64)
    const double two_pi = 6.283185307179586476925286766559;
#else
    const float two_pi = 6.283185307179586476925286766559f;
#endif
    const WIDE_T v = a + b * sqrt((WIDE_T)-2 * log(u1)) * cos(two_pi * u2);
    out[out_offset + ctl_dot(ctl_unravel(i, rank, shape), out_strides)] = FROM_WIDE(TA, v);
  }
}
