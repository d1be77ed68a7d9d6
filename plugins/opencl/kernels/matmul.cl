// matmul.cl — out = act(alpha * a @ b + beta * out + bias), tiled GEMM for every dtype.
//
// Built per dtype and tile configuration (chosen on the host from the device's limits):
//   -DTA=<tag>  the dtype of a, b, out and bias
//   -DTM -DTN   the output tile of one work-group (rows x columns)
//   -DTK        the depth of one step through K: a TM x TK tile of a and a TK x TN tile of
//               b are staged in local memory per step
//   -DWM -DVW   register blocking: WM rows of VW adjacent columns, held as WM vectors of
//               VW lanes (VW is 2, 4, 8 or 16)
//   -DLPAD      padding of each local-memory row of the a tile (staggers GPU banks)
//   -DPACKED=1  the CPU form (below); then -DNV is the vectors per micro-tile row
// Two kernels share the tile staging:
//   matmul_tiled   (GPUs) a work-group of (TN / VW) x (TM / WM) work-items, each owning a
//                  WM x VW block of the tile in registers; tiles are double-buffered.
//   matmul_packed  (CPUs) a work-group of one work-item that walks the tile in WM x
//                  (NV * VW) micro-tiles, keeping the tile's partial sums in local memory
//                  between steps, like a BLIS packed GEMM. CPU drivers run a work-group's
//                  items as a loop and spill every value that lives across a barrier to
//                  per-item memory; one item needs no barriers, and its micro-kernel
//                  compiles to register-blocked vector FMAs.
// The columns are explicit vectors so every multiply-add is a VW-wide vector operation.
//
// a and b are read through their strides. A step whose tiles lie inside the matrices and
// whose operand has a unit stride along a tile axis loads VW elements at a time; other
// steps (edges, gapped strides) load element by element with bounds checks, padding with
// zeros that add nothing. Floats accumulate in float (double for f64); i32 and i64
// accumulate in uint / ulong, which wraps exactly like the reference's 64-bit arithmetic
// truncated to the output's width.

#if defined(PACKED)
#define LX 1
#define LY 1
#else
#define LX (TN / VW)
#define LY (TM / WM)
#endif
#define NT (LX * LY)

#if IS_FLOAT(TA)
#define ACC_T C_(TA)
#define SCALAR_T C_(TA)
#if defined(CTL_HAVE_FP64)
#define MATH_T double
#else
#define MATH_T float
#endif
#else
#define ACC_T CTL_CAT(ACC_, TA)
#define ACC_i32 uint
#define ACC_i64 ulong
#define SCALAR_T long
#endif
#define VEC_T CTL_CAT(ACC_T, VW)
#define VLOADN CTL_CAT(vload, VW)
#define VSTOREN CTL_CAT(vstore, VW)

// VW consecutive elements p[i .. i + VW) as a VEC_T.
#define VLOAD_f32(p, i) VLOADN(0, (p) + (i))
#define VLOAD_f64(p, i) VLOADN(0, (p) + (i))
#define VLOAD_f16(p, i) CTL_CAT(vload_half, VW)(0, (p) + (i))
#define VLOAD_bf16(p, i) CTL_CAT(as_float, VW)(CTL_CAT(convert_uint, VW)(VLOADN(0, (p) + (i))) << 16)
#define VLOAD_i32(p, i) CTL_CAT(as_uint, VW)(VLOADN(0, (p) + (i)))
#define VLOAD_i64(p, i) CTL_CAT(as_ulong, VW)(VLOADN(0, (p) + (i)))
#define VLOAD(p, i) CTL_CAT(VLOAD_, TA)(p, i)

#if IS_FLOAT(TA)
#define MAC(acc, s, v) ((acc) = fma((VEC_T)(s), (v), (acc)))
#else
#define MAC(acc, s, v) ((acc) += (VEC_T)(s) * (v))
#endif

// flags bits (see matmul.cpp)
#define F_BIAS 1
#define F_BETA 2
#define F_A_K_UNIT 4   /* a_cs == 1: rows of a are contiguous along K */
#define F_A_M_UNIT 8   /* a_rs == 1: columns of a are contiguous along M */
#define F_B_N_UNIT 16  /* b_cs == 1 */
#define F_B_K_UNIT 32  /* b_rs == 1 */
#define F_ACT_SHIFT 6  /* two bits: 0 none, 1 relu, 2 gelu (erf), 3 gelu (tanh) */

#if IS_FLOAT(TA)
inline ACC_T ctl_activate(ACC_T v, int act) {
  if (act == 1) return isnan(v) ? v : (v > (ACC_T)0 ? v : (ACC_T)0);
  if (act == 2) {
    const MATH_T x = (MATH_T)v;
    return (ACC_T)(x * (MATH_T)0.5 * ((MATH_T)1 + erf(x * (MATH_T)0.70710678118654752440)));
  }
  if (act == 3) {
    const MATH_T x = (MATH_T)v;
    return (ACC_T)((MATH_T)0.5 * x *
                   ((MATH_T)1 + tanh((MATH_T)0.79788456080286535588 * (x + (MATH_T)0.044715 * x * x * x))));
  }
  return v;
}
#endif

// Stages step k0's tiles into one buffer: As[m][k] = a[row0 + m, k0 + k] and, viewing Bs
// as scalars, Bs[k][n] = b[k0 + k, col0 + n], for k < kd (the rest of the buffer is left
// alone: matmul_tiled passes kd = TK, matmul_packed stops its sums at kd).
inline void stage(__local ACC_T (*As)[TK + LPAD], __local ACC_T* Bs, __global const T_(TA)* a, long a_base,
                  long a_rs, long a_cs, __global const T_(TA)* b, long b_base, long b_rs, long b_cs, long row0,
                  long col0, long k0, int kd, long M, long N, long K, int flags, int tid) {
  const bool rows_inside = row0 + TM <= M, cols_inside = col0 + TN <= N, depth_inside = k0 + TK <= K;
  if (rows_inside && depth_inside && (flags & F_A_K_UNIT)) {
    for (int e = tid; e < TM * (TK / VW); e += NT) {
      const int m = e / (TK / VW), k = (e % (TK / VW)) * VW;
      VSTOREN(VLOAD(a, a_base + m * a_rs + k0 + k), 0, &As[m][k]);
    }
  } else if (rows_inside && depth_inside && (flags & F_A_M_UNIT)) {
    for (int e = tid; e < (TM / VW) * TK; e += NT) {
      const int k = e / (TM / VW), m = (e % (TM / VW)) * VW;
      ACC_T v[VW];
      VSTOREN(VLOAD(a, a_base + m + (k0 + k) * a_cs), 0, v);
#pragma unroll
      for (int j = 0; j < VW; ++j) As[m + j][k] = v[j];
    }
  } else {
    for (int e = tid; e < TM * kd; e += NT) {
      const int m = e / kd, k = e % kd;
      ACC_T v = (ACC_T)0;
      if (row0 + m < M && k0 + k < K) v = (ACC_T)LOAD(TA, a, a_base + m * a_rs + (k0 + k) * a_cs);
      As[m][k] = v;
    }
  }
  if (cols_inside && depth_inside && (flags & F_B_N_UNIT)) {
    for (int e = tid; e < TK * (TN / VW); e += NT) {
      const int k = e / (TN / VW), n = (e % (TN / VW)) * VW;
      VSTOREN(VLOAD(b, b_base + (k0 + k) * b_rs + n), 0, Bs + k * TN + n);
    }
  } else if (cols_inside && depth_inside && (flags & F_B_K_UNIT)) {
    for (int e = tid; e < TN * (TK / VW); e += NT) {
      const int n = e / (TK / VW), k = (e % (TK / VW)) * VW;
      ACC_T v[VW];
      VSTOREN(VLOAD(b, b_base + n * b_cs + k0 + k), 0, v);
#pragma unroll
      for (int j = 0; j < VW; ++j) Bs[(k + j) * TN + n] = v[j];
    }
  } else {
    for (int e = tid; e < kd * TN; e += NT) {
      const int k = e / TN, n = e % TN;
      ACC_T v = (ACC_T)0;
      if (col0 + n < N && k0 + k < K) v = (ACC_T)LOAD(TA, b, b_base + n * b_cs + (k0 + k) * b_rs);
      Bs[k * TN + n] = v;
    }
  }
}

// Writes output element (row, col) from its accumulated sum `s`: alpha, beta, the bias
// and the activation; nothing outside the matrix.
inline void finish(__global T_(TA)* out, long o, __global const T_(TA)* bias, long c, long K, int flags,
                   SCALAR_T alpha, SCALAR_T beta, ACC_T s) {
#if IS_FLOAT(TA)
  // K == 0 leaves beta * out + bias (alpha times an empty sum is 0, even for alpha inf).
  ACC_T v = K > 0 ? alpha * s : (ACC_T)0;
  if (flags & F_BETA) v += beta * LOAD(TA, out, o);  // beta == 0: out is never read
  if (flags & F_BIAS) v += LOAD(TA, bias, c);
  STORE(TA, out, o, ctl_activate(v, (flags >> F_ACT_SHIFT) & 3));
#else
  ACC_T v = (ACC_T)alpha * s;
  if (flags & F_BETA) v += (ACC_T)beta * (ACC_T)LOAD(TA, out, o);
  if (flags & F_BIAS) v += (ACC_T)LOAD(TA, bias, c);
  STORE(TA, out, o, v);
#endif
}

#define MATMUL_ARGS                                                                                                \
  __global const T_(TA)* a, long a_offset, __global const T_(TA)* b, long b_offset, __global T_(TA)* out,           \
      long out_offset, __global const T_(TA)* bias, long bias_offset, long M, long N, long K, long a_rs, long a_cs, \
      long b_rs, long b_cs, long o_rs, long o_cs, long c_rs, long c_cs, int batch_rank, long8 batch_shape,        \
      long8 a_bs, long8 b_bs, long8 o_bs, long8 c_bs, long m_tile0, long batch0, int flags, SCALAR_T alpha,       \
      SCALAR_T beta

// Group (g0, g1 + m_tile0, g2 + batch0) computes output tile (row tile g1 + m_tile0,
// column tile g0) of batch element g2 + batch0; the host splits launches so that no grid
// axis exceeds what every driver accepts.
#define TILE_ORIGIN                                                                        \
  const long row0 = ((long)get_group_id(1) + m_tile0) * TM;                                \
  const long col0 = (long)get_group_id(0) * TN;                                            \
  const long8 bidx = ctl_unravel((long)get_group_id(2) + batch0, batch_rank, batch_shape); \
  const long a_base = a_offset + ctl_dot(bidx, a_bs) + row0 * a_rs;                        \
  const long b_base = b_offset + ctl_dot(bidx, b_bs) + col0 * b_cs;                        \
  const long o_base = out_offset + ctl_dot(bidx, o_bs) + row0 * o_rs + col0 * o_cs;        \
  const long c_base = bias_offset + ctl_dot(bidx, c_bs) + row0 * c_rs + col0 * c_cs;       \
  const long steps = (K + TK - 1) / TK;

#if !defined(PACKED)

__kernel __attribute__((reqd_work_group_size(LX, LY, 1))) void matmul_tiled(MATMUL_ARGS) {
  // Two buffers: step t + 1 is staged into one while step t is computed from the other,
  // so each step needs one barrier.
  __local ACC_T As[2][TM][TK + LPAD];
  __local VEC_T Bs[2][TK][TN / VW];

  const int tx = (int)get_local_id(0), ty = (int)get_local_id(1);
  const int tid = ty * LX + tx;
  TILE_ORIGIN

  VEC_T acc[WM];
#pragma unroll
  for (int i = 0; i < WM; ++i) acc[i] = (VEC_T)0;

  if (steps > 0) {
    stage(As[0], (__local ACC_T*)Bs[0], a, a_base, a_rs, a_cs, b, b_base, b_rs, b_cs, row0, col0, 0, TK, M, N, K,
          flags, tid);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (long t = 0; t < steps; ++t) {
    const int buf = (int)(t & 1);
    if (t + 1 < steps) {
      stage(As[buf ^ 1], (__local ACC_T*)Bs[buf ^ 1], a, a_base, a_rs, a_cs, b, b_base, b_rs, b_cs, row0, col0,
            (t + 1) * TK, TK, M, N, K, flags, tid);
    }
#pragma unroll
    for (int k = 0; k < TK; ++k) {
      const VEC_T bv = Bs[buf][k][tx];
#pragma unroll
      for (int i = 0; i < WM; ++i) MAC(acc[i], As[buf][ty * WM + i][k], bv);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }

#pragma unroll
  for (int i = 0; i < WM; ++i) {
    const int r = ty * WM + i;
    if (row0 + r >= M) break;
    ACC_T s[VW];
    VSTOREN(acc[i], 0, s);
#pragma unroll
    for (int j = 0; j < VW; ++j) {
      const int n = tx * VW + j;
      if (col0 + n >= N) break;
      finish(out, o_base + r * o_rs + n * o_cs, bias, c_base + r * c_rs + n * c_cs, K, flags, alpha, beta, s[j]);
    }
  }
}

#else  // PACKED

__kernel __attribute__((reqd_work_group_size(1, 1, 1))) void matmul_packed(MATMUL_ARGS) {
  __local ACC_T As[TM][TK + LPAD];
  __local VEC_T Bs[TK][TN / VW];
  __local VEC_T Cs[TM][TN / VW];  // the tile's partial sums between steps
  TILE_ORIGIN

  // Only the micro-tiles and the depth that hold matrix elements are computed, so that
  // small products cost little.
  const int rows = (int)min((long)TM, M - row0), cols = (int)min((long)TN, N - col0);
  const int mt = (rows + WM - 1) / WM * WM, nt = ((cols + VW - 1) / VW + NV - 1) / NV * NV;
  for (long t = 0; t < steps; ++t) {
    const int kd = (int)min((long)TK, K - t * TK);
    stage(As, (__local ACC_T*)Bs, a, a_base, a_rs, a_cs, b, b_base, b_rs, b_cs, row0, col0, t * TK, kd, M, N, K,
          flags, 0);
    for (int mi = 0; mi < mt; mi += WM) {
      for (int nj = 0; nj < nt; nj += NV) {
        VEC_T acc[WM][NV];
#pragma unroll
        for (int i = 0; i < WM; ++i) {
#pragma unroll
          for (int v = 0; v < NV; ++v) acc[i][v] = t == 0 ? (VEC_T)0 : Cs[mi + i][nj + v];
        }
        for (int k = 0; k < kd; ++k) {
          VEC_T bv[NV];
#pragma unroll
          for (int v = 0; v < NV; ++v) bv[v] = Bs[k][nj + v];
#pragma unroll
          for (int i = 0; i < WM; ++i) {
            const ACC_T av = As[mi + i][k];
#pragma unroll
            for (int v = 0; v < NV; ++v) MAC(acc[i][v], av, bv[v]);
          }
        }
#pragma unroll
        for (int i = 0; i < WM; ++i) {
#pragma unroll
          for (int v = 0; v < NV; ++v) Cs[mi + i][nj + v] = acc[i][v];
        }
      }
    }
  }

  __local const ACC_T* sums = (__local const ACC_T*)Cs;
  for (int r = 0; r < TM && row0 + r < M; ++r) {
    for (int n = 0; n < TN && col0 + n < N; ++n) {
      const ACC_T s = steps > 0 ? sums[r * TN + n] : (ACC_T)0;
      finish(out, o_base + r * o_rs + n * o_cs, bias, c_base + r * c_rs + n * c_cs, K, flags, alpha, beta, s);
    }
  }
}

#endif  // PACKED
