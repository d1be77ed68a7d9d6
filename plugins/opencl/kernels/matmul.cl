// matmul.cl — out = act(alpha * a @ b + beta * out + bias), one tiled GEMM for every dtype.
//
// Built per dtype and tile configuration (chosen on the host from the device's limits):
//   -DTA=<tag>  the dtype of a, b, out and bias
//   -DTM -DTN   the output tile of one work-group (rows x columns)
//   -DTK        the depth of one step through K: a TM x TK tile of a and a TK x TN tile of
//               b are staged in local memory per step
//   -DWM -DWN   the outputs of one work-item (register blocking): work-item (x, y) owns
//               rows y + i * LY and columns x + j * LX of the tile, so neighbouring
//               work-items touch neighbouring columns (coalesced on GPUs, one vector lane
//               each where a CPU driver vectorises across work-items)
//   -DLPAD      padding of each local-memory row (avoids bank conflicts on GPUs)
// a and b are read through their strides: the tile loads pick the index order in which
// the operand's unit-stride axis is fastest, so column-major (transposed) operands load
// as well as row-major ones. Floats accumulate in float (double for f64); i32 and i64
// accumulate in uint / ulong, which wraps exactly like the reference's 64-bit arithmetic
// truncated to the output's width.

#define LX (TN / WN)
#define LY (TM / WM)
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

// flags bits (see matmul.cpp)
#define F_BIAS 1
#define F_BETA 2
#define F_A_K_FAST 4   /* a's unit-stride axis is K (row-major a) */
#define F_B_N_FAST 8   /* b's unit-stride axis is N (row-major b) */
#define F_ACT_SHIFT 4  /* two bits: 0 none, 1 relu, 2 gelu (erf), 3 gelu (tanh) */

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

// Group (g0, g1 + m_tile0, g2 + batch0) computes output tile (row tile, column tile) of
// batch element g2 + batch0; the host splits launches so no grid axis exceeds what every
// driver accepts.
__kernel __attribute__((reqd_work_group_size(LX, LY, 1))) void matmul_tiled(
    __global const T_(TA)* a, long a_offset, __global const T_(TA)* b, long b_offset, __global T_(TA)* out,
    long out_offset, __global const T_(TA)* bias, long bias_offset, long M, long N, long K, long a_rs, long a_cs,
    long b_rs, long b_cs, long o_rs, long o_cs, long c_rs, long c_cs, int batch_rank, long8 batch_shape,
    long8 a_bs, long8 b_bs, long8 o_bs, long8 c_bs, long m_tile0, long batch0, int flags, SCALAR_T alpha,
    SCALAR_T beta) {
  __local ACC_T As[TK][TM + LPAD];
  __local ACC_T Bs[TK][TN + LPAD];

  const int tx = (int)get_local_id(0), ty = (int)get_local_id(1);
  const int tid = ty * LX + tx;
  const long row0 = ((long)get_group_id(1) + m_tile0) * TM;
  const long col0 = (long)get_group_id(0) * TN;
  const long8 bidx = ctl_unravel((long)get_group_id(2) + batch0, batch_rank, batch_shape);
  const long a_base = a_offset + ctl_dot(bidx, a_bs) + row0 * a_rs;
  const long b_base = b_offset + ctl_dot(bidx, b_bs) + col0 * b_cs;
  const bool a_k_fast = (flags & F_A_K_FAST) != 0;
  const bool b_n_fast = (flags & F_B_N_FAST) != 0;

  ACC_T acc[WM][WN];
#pragma unroll
  for (int i = 0; i < WM; ++i) {
#pragma unroll
    for (int j = 0; j < WN; ++j) acc[i][j] = (ACC_T)0;
  }

  for (long k0 = 0; k0 < K; k0 += TK) {
    // Stage a[row0 : row0 + TM, k0 : k0 + TK] as As[k][m] and b[k0 :, col0 :] as Bs[k][n];
    // elements past the matrix edges are zero, so they add nothing.
#pragma unroll
    for (int e = tid; e < TM * TK; e += NT) {
      const int m = a_k_fast ? e / TK : e % TM;
      const int k = a_k_fast ? e % TK : e / TM;
      ACC_T v = (ACC_T)0;
      if (row0 + m < M && k0 + k < K) v = (ACC_T)LOAD(TA, a, a_base + m * a_rs + (k0 + k) * a_cs);
      As[k][m] = v;
    }
#pragma unroll
    for (int e = tid; e < TK * TN; e += NT) {
      const int n = b_n_fast ? e % TN : e / TK;
      const int k = b_n_fast ? e / TN : e % TK;
      ACC_T v = (ACC_T)0;
      if (col0 + n < N && k0 + k < K) v = (ACC_T)LOAD(TA, b, b_base + n * b_cs + (k0 + k) * b_rs);
      Bs[k][n] = v;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int k = 0; k < TK; ++k) {
      ACC_T bv[WN];
#pragma unroll
      for (int j = 0; j < WN; ++j) bv[j] = Bs[k][tx + j * LX];
#pragma unroll
      for (int i = 0; i < WM; ++i) {
        const ACC_T av = As[k][ty + i * LY];
#pragma unroll
        for (int j = 0; j < WN; ++j) acc[i][j] += av * bv[j];
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }

  const long o_base = out_offset + ctl_dot(bidx, o_bs);
  const long c_base = bias_offset + ctl_dot(bidx, c_bs);
  const int act = (flags >> F_ACT_SHIFT) & 3;
#pragma unroll
  for (int i = 0; i < WM; ++i) {
    const long row = row0 + ty + i * LY;
    if (row >= M) continue;
#pragma unroll
    for (int j = 0; j < WN; ++j) {
      const long col = col0 + tx + j * LX;
      if (col >= N) continue;
      const long o = o_base + row * o_rs + col * o_cs;
#if IS_FLOAT(TA)
      // K == 0 leaves beta * out + bias (alpha * an empty sum is 0 even for alpha inf).
      ACC_T v = K > 0 ? alpha * acc[i][j] : (ACC_T)0;
      if (flags & F_BETA) v += beta * LOAD(TA, out, o);  // beta == 0: out is never read
      if (flags & F_BIAS) v += LOAD(TA, bias, c_base + row * c_rs + col * c_cs);
      STORE(TA, out, o, ctl_activate(v, act));
#else
      ACC_T v = (ACC_T)alpha * acc[i][j];
      if (flags & F_BETA) v += (ACC_T)beta * (ACC_T)LOAD(TA, out, o);
      if (flags & F_BIAS) v += (ACC_T)LOAD(TA, bias, c_base + row * c_rs + col * c_cs);
      STORE(TA, out, o, v);
#endif
    }
  }
}
