// common.glsl — included by every shader. A variant is compiled with -D defines that bind
// dtype slots to tags (-DTA=f32 -DTB=i64) and say which tags it uses (-DUSES_f32 ...), so
// only the storage features it needs reach its SPIR-V. The templates write
//   S_(TA)   the storage type of an element   C_(TA)   the type it computes in
//   R_(TA)   an unsigned type of the element's size, to move bits unchanged
//   LD(TA, v) storage -> compute              ST(TA, v) compute -> storage
// and never name a dtype themselves. f16 and bf16 are stored as 16-bit words and converted
// with integer operations (round to nearest even, subnormals and NaN kept), so the result
// does not depend on a driver's float conversions.
#extension GL_EXT_shader_8bit_storage : enable
#extension GL_EXT_shader_16bit_storage : enable
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : enable
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : enable
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : enable

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define S_(t) CAT(S_, t)
#define C_(t) CAT(C_, t)
#define R_(t) CAT(R_, t)
#define LD(t, v) CAT(ld_, t)(v)
#define ST(t, v) CAT(st_, t)(v)

#if !defined(CUSTOM_LOCAL_SIZE)
layout(local_size_x_id = 0) in;
#endif
layout(std430, binding = 0) readonly buffer Params { uint P[]; };

#if defined(USES_f32)
#define S_f32 float
#define C_f32 float
#define R_f32 uint
float ld_f32(float v) { return v; }
float st_f32(float v) { return v; }
#endif

#if defined(USES_f64)
#define S_f64 double
#define C_f64 double
#define R_f64 uint64_t
double ld_f64(double v) { return v; }
double st_f64(double v) { return v; }
#endif

#if defined(USES_f16)
#define S_f16 uint16_t
#define C_f16 float
#define R_f16 uint16_t
float ld_f16(uint16_t h) {
  uint b = uint(h);
  uint s = (b & 0x8000u) << 16;
  uint e = (b >> 10) & 0x1fu;
  uint m = b & 0x3ffu;
  if (e == 0u) {
    // Subnormal: m * 2^-24, a normal float; made from bits so no FP operation can flush it.
    // No loop to normalise m: lavapipe stops an invocation after 65,535 loop iterations in
    // all (vulkan/README.md, "Loop budget"), and a loop here, even one that runs no
    // iteration, spent that budget on every element a kernel loaded.
    if (m == 0u) return uintBitsToFloat(s);
    uint shift = uint(10 - findMSB(m));
    return uintBitsToFloat(s | ((113u - shift) << 23) | (((m << shift) & 0x3ffu) << 13));
  }
  if (e == 31u) return uintBitsToFloat(s | 0x7f800000u | (m << 13));
  return uintBitsToFloat(s | ((e + 112u) << 23) | (m << 13));
}
uint16_t st_f16(float f) {
  uint x = floatBitsToUint(f);
  uint s = (x >> 16) & 0x8000u;
  uint a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return uint16_t(s | 0x7e00u | ((a >> 13) & 0x3ffu));
  if (a >= 0x477ff000u) return uint16_t(s | 0x7c00u);  // rounds past 65504
  if (a >= 0x38800000u) {                              // a normal half
    uint r = a - 0x38000000u;
    return uint16_t(s | ((r + 0xfffu + ((r >> 13) & 1u)) >> 13));
  }
  if (a < 0x33000000u) return uint16_t(s);  // below half the smallest subnormal
  uint e = a >> 23;
  uint m = (a & 0x7fffffu) | 0x800000u;
  uint shift = 126u - e;
  uint q = m >> shift;
  uint rest = m & ((1u << shift) - 1u);
  uint half_ = 1u << (shift - 1u);
  if (rest > half_ || (rest == half_ && (q & 1u) != 0u)) ++q;
  return uint16_t(s | q);
}
#endif

#if defined(USES_bf16)
#define S_bf16 uint16_t
#define C_bf16 float
#define R_bf16 uint16_t
float ld_bf16(uint16_t h) { return uintBitsToFloat(uint(h) << 16); }
uint16_t st_bf16(float f) {
  uint x = floatBitsToUint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);
  return uint16_t((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
#endif

#if defined(USES_i8)
#define S_i8 int8_t
#define C_i8 int
#define R_i8 uint8_t
int ld_i8(int8_t v) { return int(v); }
int8_t st_i8(int v) { return int8_t(bitfieldExtract(v, 0, 8)); }
#endif

#if defined(USES_u8)
#define S_u8 uint8_t
#define C_u8 int
#define R_u8 uint8_t
int ld_u8(uint8_t v) { return int(uint(v)); }
uint8_t st_u8(int v) { return uint8_t(uint(v) & 0xffu); }
#endif

#if defined(USES_bool)
#define S_bool uint8_t
#define C_bool int
#define R_bool uint8_t
int ld_bool(uint8_t v) { return uint(v) != 0u ? 1 : 0; }
uint8_t st_bool(int v) { return uint8_t(v != 0 ? 1u : 0u); }
#endif

#if defined(USES_i32)
#define S_i32 int
#define C_i32 int
#define R_i32 uint
int ld_i32(int v) { return v; }
int st_i32(int v) { return v; }
#endif

#if defined(USES_i64)
#define S_i64 int64_t
#define C_i64 int64_t
#define R_i64 uint64_t
int64_t ld_i64(int64_t v) { return v; }
int64_t st_i64(int64_t v) { return v; }
#endif

// ---- Strided loops (op_context.h's Iteration) ----
// P[0] = n, P[1] = rank, P[2 + k] = shape (innermost axis first), then view v at
// 10 + 9 v: its element offset and strides[8].
#define ITER_WORDS(views) (10u + 9u * (views))

struct Index {
  uint i[8];
};
Index ctl_unravel(uint base, uint i) {
  Index idx;
  uint rank = P[base + 1u];
  for (uint k = 0u; k < 8u; ++k) idx.i[k] = 0u;
  for (uint k = 0u; k < rank; ++k) {
    if (k + 1u == rank) {
      idx.i[k] = i;
    } else {
      uint s = P[base + 2u + k];
      uint q = i / s;
      idx.i[k] = i - q * s;
      i = q;
    }
  }
  return idx;
}
uint ctl_offset(uint base, Index idx, uint view) {
  uint at = base + 10u + 9u * view;
  uint off = P[at];
  uint rank = P[base + 1u];
  for (uint k = 0u; k < rank; ++k) off += idx.i[k] * P[at + 1u + k];
  return off;
}

#define FOR_EACH_ITEM(i, n) for (uint i = gl_GlobalInvocationID.x; i < (n); i += gl_NumWorkGroups.x * gl_WorkGroupSize.x)

// IEEE sign bit of a float or double, from its bits (no FP operation that could flush).
bool ctl_signbit(float v) { return (floatBitsToUint(v) >> 31) != 0u; }
float ctl_neg(float v) { return uintBitsToFloat(floatBitsToUint(v) ^ 0x80000000u); }
float ctl_fabs(float v) { return uintBitsToFloat(floatBitsToUint(v) & 0x7fffffffu); }
#if defined(USES_f64)
bool ctl_signbit(double v) { return (unpackDouble2x32(v).y >> 31) != 0u; }
double ctl_neg(double v) {
  uvec2 w = unpackDouble2x32(v);
  return packDouble2x32(uvec2(w.x, w.y ^ 0x80000000u));
}
double ctl_fabs(double v) {
  uvec2 w = unpackDouble2x32(v);
  return packDouble2x32(uvec2(w.x, w.y & 0x7fffffffu));
}
#endif
