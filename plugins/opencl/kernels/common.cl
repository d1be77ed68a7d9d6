// common.cl — prepended to every kernel family. It gives kernels one way to name dtypes,
// load and store them, and walk strided views.
//
// Dtype tags: f32 f64 f16 bf16 i8 u8 i32 i64 bool. A family's program is built with
// -D defines that bind slots to tags (-DTA=f32 -DTB=i64); kernels then write
//   T_(TA)       the storage type of the slot's elements      (ushort for bf16)
//   C_(TA)       the type arithmetic happens in               (float for f16/bf16)
//   LOAD(TA, p, i), STORE(TA, p, i, v)   element i of p, converted from/to C_(TA)
//   R_(TA)       an unsigned type of the element's size, for moving bits unchanged
//   IS_FLOAT(TA), IS_SIGNED(TA)          0 or 1, usable in #if
// f16 is stored as `half` and reached through vload_half / vstore_half_rte, which are
// core OpenCL; bf16 is the upper half of an f32 and rounds to nearest even.

#if defined(CTL_HAVE_FP64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#define CTL_CAT_(a, b) a##b
#define CTL_CAT(a, b) CTL_CAT_(a, b)

#define T_(t) CTL_CAT(STORAGE_, t)
#define C_(t) CTL_CAT(COMPUTE_, t)
#define LOAD(t, p, i) CTL_CAT(LOAD_, t)(p, i)
#define STORE(t, p, i, v) CTL_CAT(STORE_, t)(p, i, v)
#define R_(t) CTL_CAT(RAW_, t)  /* an unsigned integer of the element's size: bits only */
#define IS_FLOAT(t) CTL_CAT(ISFLOAT_, t)
#define IS_SIGNED(t) CTL_CAT(ISSIGNED_, t)

// float -> bfloat16 bits, round to nearest even; NaN stays a quiet NaN.
inline ushort ctl_float_to_bf16(float f) {
  uint bits = as_uint(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return (ushort)((bits >> 16) | 0x40u);
  return (ushort)((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

#define RAW_f32 uint
#define STORAGE_f32 float
#define COMPUTE_f32 float
#define LOAD_f32(p, i) ((p)[i])
#define STORE_f32(p, i, v) ((p)[i] = (float)(v))
#define ISFLOAT_f32 1
#define ISSIGNED_f32 1

#define RAW_f64 ulong
#define STORAGE_f64 double
#define COMPUTE_f64 double
#define LOAD_f64(p, i) ((p)[i])
#define STORE_f64(p, i, v) ((p)[i] = (double)(v))
#define ISFLOAT_f64 1
#define ISSIGNED_f64 1

#define RAW_f16 ushort
#define STORAGE_f16 half
#define COMPUTE_f16 float
#define LOAD_f16(p, i) vload_half((size_t)(i), (p))
#define STORE_f16(p, i, v) vstore_half_rte((float)(v), (size_t)(i), (p))
#define ISFLOAT_f16 1
#define ISSIGNED_f16 1

#define RAW_bf16 ushort
#define STORAGE_bf16 ushort
#define COMPUTE_bf16 float
#define LOAD_bf16(p, i) as_float((uint)(p)[i] << 16)
#define STORE_bf16(p, i, v) ((p)[i] = ctl_float_to_bf16((float)(v)))
#define ISFLOAT_bf16 1
#define ISSIGNED_bf16 1

#define RAW_i8 uchar
#define STORAGE_i8 char
#define COMPUTE_i8 int
#define LOAD_i8(p, i) ((int)(p)[i])
#define STORE_i8(p, i, v) ((p)[i] = (char)(v))
#define ISFLOAT_i8 0
#define ISSIGNED_i8 1

#define RAW_u8 uchar
#define STORAGE_u8 uchar
#define COMPUTE_u8 int
#define LOAD_u8(p, i) ((int)(p)[i])
#define STORE_u8(p, i, v) ((p)[i] = (uchar)(v))
#define ISFLOAT_u8 0
#define ISSIGNED_u8 0

#define RAW_i32 uint
#define STORAGE_i32 int
#define COMPUTE_i32 int
#define LOAD_i32(p, i) ((p)[i])
#define STORE_i32(p, i, v) ((p)[i] = (int)(v))
#define ISFLOAT_i32 0
#define ISSIGNED_i32 1

#define RAW_i64 ulong
#define STORAGE_i64 long
#define COMPUTE_i64 long
#define LOAD_i64(p, i) ((p)[i])
#define STORE_i64(p, i, v) ((p)[i] = (long)(v))
#define ISFLOAT_i64 0
#define ISSIGNED_i64 1

#define RAW_bool uchar
#define STORAGE_bool uchar
#define COMPUTE_bool int
#define LOAD_bool(p, i) ((int)((p)[i] != 0))
#define STORE_bool(p, i, v) ((p)[i] = (uchar)((v) != 0))
#define ISFLOAT_bool 0
#define ISSIGNED_bool 0

// The multi-index of row-major element i of a shape given innermost axis first (s0), for
// `rank` axes; the host has merged axes already, so rank is usually 1 or 2. The outermost
// axis needs no division (i is already its index), and a division whose operands fit in 32
// bits is done in 32 bits: 64-bit division is several times slower on CPUs and emulated in
// many instructions on GPUs.
inline long ctl_divide(long a, long b) {
  return ((ulong)a >> 32) == 0 && ((ulong)b >> 32) == 0 ? (long)((uint)a / (uint)b) : a / b;
}
inline long8 ctl_unravel(long i, int rank, long8 shape) {
  long8 index = (long8)(0);
  long q;
#define CTL_AXIS(k)                           \
  if (rank > k + 1) {                         \
    q = ctl_divide(i, shape.s##k);            \
    index.s##k = i - q * shape.s##k;          \
    i = q;                                    \
  } else if (rank == k + 1) {                 \
    index.s##k = i;                           \
  }
  CTL_AXIS(0) CTL_AXIS(1) CTL_AXIS(2) CTL_AXIS(3) CTL_AXIS(4) CTL_AXIS(5) CTL_AXIS(6) CTL_AXIS(7)
#undef CTL_AXIS
  return index;
}

// The element offset of a multi-index in a view with these strides (innermost first).
inline long ctl_dot(long8 index, long8 strides) {
  long8 p = index * strides;
  return p.s0 + p.s1 + p.s2 + p.s3 + p.s4 + p.s5 + p.s6 + p.s7;
}

// The grid-stride loop every 1-D kernel uses (see OpContext::launch).
#define FOR_EACH_ITEM(i, n) for (long i = get_global_id(0); i < (n); i += get_global_size(0))
