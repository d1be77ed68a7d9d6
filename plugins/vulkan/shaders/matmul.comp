#version 450
// matmul.comp — out = act(alpha * a @ b + beta * out + bias), batched, any strides. A
// work-group of 16 x 16 invocations computes a 64 x 64 tile of one batch's output, each
// invocation 4 x 4 of it, from 64 x 16 slices of a and b staged in shared memory. Floats
// accumulate in C_(TA) (f32 for f16/bf16); the epilogue runs in double on devices that have
// it (MATH_F64), so alpha, beta and bias round once. Integers wrap.
//
// P[0..17]: M, N, K, tiles along M, a's strides (m, k), b's (k, n), out's (m, n), bias's
// (m, n), flags (1: bias, 2: read out), activation, alpha and beta as doubles (or int64 for
// integers), then the element offsets of a, b, out and bias for this batch element (the host
// dispatches once per batch element), then the depth this dispatch covers, [k_begin, k_end),
// and its carry flags: 1 starts the sums from `carry` (the earlier part of K), 2 leaves them
// there instead of running the epilogue. The host splits K into parts of at most 16384
// (matmul.cpp): lavapipe ends every invocation's loops after 65,535 iterations in all
// (README, "Loop budget"), and the carry keeps each sum in its one order, so a split product
// has the bits of an unsplit one.
#define CUSTOM_LOCAL_SIZE
#include "common.glsl"
#if TA_FLOAT && !TA_WIDE
#include "activation.glsl"
#elif TA_FLOAT
#include "math_f64.glsl"
#include "special_f64.glsl"
#endif

#if defined(DIRECT)
// CPU devices (lavapipe): no shared memory and no barriers, which such drivers emulate at
// great cost; a group of 8 x 8 invocations covers a 32 x 32 tile, each 4 x 4 of it read
// straight from a and b (the CPU's caches do the tiling). On lavapipe this measured 2.6x
// the shared-memory kernel, and 2x a one-column-per-invocation form.
layout(local_size_x = 8, local_size_y = 8) in;
#else
layout(local_size_x = 16, local_size_y = 16) in;
#endif
layout(std430, binding = 1) readonly buffer A { S_(TA) a[]; };
layout(std430, binding = 2) readonly buffer B { S_(TA) b[]; };
layout(std430, binding = 3) buffer O { S_(TA) o[]; };
layout(std430, binding = 4) readonly buffer Bias { S_(TA) bias[]; };
layout(std430, binding = 5) buffer Carry { C_(TA) carry[]; };  // [m * N + n], between parts of K

#define TILE 64u
#define TK 16u
#if !defined(DIRECT)
shared C_(TA) sa[TK][TILE + 1u];
shared C_(TA) sb[TK][TILE + 1u];
#endif

#if TA_FLOAT && (defined(MATH_F64) || TA_WIDE)
#define E double
#elif TA_FLOAT
#define E float
#else
#define E C_(TA)
#endif

E scalar(uint at) {
#if TA_FLOAT && (defined(MATH_F64) || TA_WIDE)
  return packDouble2x32(uvec2(P[at], P[at + 1u]));
#elif TA_FLOAT
  return float(uintBitsToFloat(P[at]));
#else
  return C_(TA)(int64_t(packUint2x32(uvec2(P[at], P[at + 1u]))));
#endif
}

void main() {
  uint M = P[0], N = P[1], K = P[2], tiles_m = P[3];
#if defined(DIRECT)
  uint m0 = gl_WorkGroupID.y * 32u + gl_LocalInvocationID.y * 4u;
  uint n0 = gl_WorkGroupID.x * 32u + gl_LocalInvocationID.x * 4u;
  uint a_off = P[18], b_off = P[19], o_off = P[20], bias_off = P[21];
  uint a_sm = P[4], a_sk = P[5], b_sk = P[6], b_sn = P[7], o_sm = P[8], o_sn = P[9], bias_sm = P[10], bias_sn = P[11];
  uint flags = P[12];
  uint k_begin = P[22], k_end = P[23], carry_flags = P[24];
  C_(TA) acc[4][4];
  uint mi[4], nj[4];
  for (uint i = 0u; i < 4u; ++i) {
    mi[i] = min(m0 + i, M - 1u);  // rows and columns past the end repeat the last: never stored
    nj[i] = min(n0 + i, N - 1u);
  }
  for (uint i = 0u; i < 4u; ++i)
    for (uint j = 0u; j < 4u; ++j)
      acc[i][j] = (carry_flags & 1u) != 0u ? carry[mi[i] * N + nj[j]] : C_(TA)(0);
  if (m0 < M && n0 < N) {
    for (uint k = k_begin; k < k_end; ++k) {
      C_(TA) av[4], bv[4];
      for (uint i = 0u; i < 4u; ++i) av[i] = LD(TA, a[a_off + mi[i] * a_sm + k * a_sk]);
      for (uint j = 0u; j < 4u; ++j) bv[j] = LD(TA, b[b_off + k * b_sk + nj[j] * b_sn]);
      for (uint i = 0u; i < 4u; ++i)
        for (uint j = 0u; j < 4u; ++j) acc[i][j] += av[i] * bv[j];
    }
  }
  uint tx = 0u, ty = 0u;
#else
  uint m0 = gl_WorkGroupID.y * TILE;
  uint n0 = gl_WorkGroupID.x * TILE;
  uint a_off = P[18], b_off = P[19], o_off = P[20], bias_off = P[21];
  uint a_sm = P[4], a_sk = P[5], b_sk = P[6], b_sn = P[7], o_sm = P[8], o_sn = P[9], bias_sm = P[10], bias_sn = P[11];
  uint flags = P[12];
  uint k_begin = P[22], k_end = P[23], carry_flags = P[24];
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  uint lin = ty * 16u + tx;

  C_(TA) acc[4][4];
  for (uint i = 0u; i < 4u; ++i)
    for (uint j = 0u; j < 4u; ++j) {
      uint m = min(m0 + ty + 16u * i, M - 1u), n = min(n0 + tx + 16u * j, N - 1u);
      acc[i][j] = (carry_flags & 1u) != 0u ? carry[m * N + n] : C_(TA)(0);
    }

  for (uint k0 = k_begin; k0 < k_end; k0 += TK) {
    for (uint e = lin; e < TILE * TK; e += 256u) {
      uint kk = e / TILE, mm = e % TILE;
      uint gk = k0 + kk, gm = m0 + mm, gn = n0 + mm;
      sa[kk][mm] = (gm < M && gk < k_end) ? LD(TA, a[a_off + gm * a_sm + gk * a_sk]) : C_(TA)(0);
      sb[kk][mm] = (gn < N && gk < k_end) ? LD(TA, b[b_off + gk * b_sk + gn * b_sn]) : C_(TA)(0);
    }
    barrier();
    for (uint kk = 0u; kk < TK; ++kk) {
      C_(TA) av[4], bv[4];
      for (uint i = 0u; i < 4u; ++i) av[i] = sa[kk][ty + 16u * i];
      for (uint j = 0u; j < 4u; ++j) bv[j] = sb[kk][tx + 16u * j];
      for (uint i = 0u; i < 4u; ++i)
        for (uint j = 0u; j < 4u; ++j) acc[i][j] += av[i] * bv[j];
    }
    barrier();
  }

#endif

  E alpha = scalar(14u), beta = scalar(16u);
  int act = int(P[13]);
#if defined(DIRECT)
  for (uint i = 0u; i < 4u; ++i) {
    uint m = m0 + i;
#else
  for (uint i = 0u; i < 4u; ++i) {
    uint m = m0 + ty + 16u * i;
#endif
    if (m >= M) continue;
#if defined(DIRECT)
    for (uint j = 0u; j < 4u; ++j) {
      uint n = n0 + j;
#else
    for (uint j = 0u; j < 4u; ++j) {
      uint n = n0 + tx + 16u * j;
#endif
      if (n >= N) continue;
      if ((carry_flags & 2u) != 0u) {
        carry[m * N + n] = acc[i][j];  // a later part of K goes on from here
        continue;
      }
      uint at = o_off + m * o_sm + n * o_sn;
      E v = alpha * E(acc[i][j]);
      if ((flags & 2u) != 0u) v += beta * E(LD(TA, o[at]));
      if ((flags & 1u) != 0u) v += E(LD(TA, bias[bias_off + m * bias_sm + n * bias_sn]));
#if TA_FLOAT
      if (act == 1) v = isnan(v) ? v : (v > E(0) ? v : E(0));
#if !TA_WIDE
      if (act == 2) v = E(ctl_gelu(float(v)));
      if (act == 3) v = E(ctl_gelu_tanh(float(v)));
#else
      if (act == 2) v = ctl_gelu_f64(v);
      if (act == 3) v = ctl_gelu_tanh_d(v);
#endif
#endif
      o[at] = ST(TA, C_(TA)(v));
    }
  }
}
