// training.cl — cross_entropy, its backward, adamw_step and sgd_step. Built per logits/grad dtype
// (TA) and, for the losses, target dtype (TB: i32 or i64).
//
// Every value is computed in MATH_T (double where the device has it) and rounded once when
// stored: the cancellations in lse - z[t] and beta1 * m + (1 - beta1) * g stay within one
// rounding of the reference that way. Loss rows are one work-group each, reduced in local
// memory in a fixed tree order (the host picks a power-of-two group size from the kernel
// alone), so no result depends on how many groups run; MEAN and SUM add the per-row losses
// in a second single-group kernel, again in a fixed order.

#if defined(CTL_HAVE_FP64)
#define MATH_T double
#else
#define MATH_T float
#endif

// The larger of two row values, NaN winning (then everything derived from the row is NaN).
inline MATH_T ctl_max_nan(MATH_T a, MATH_T b) {
  if (isnan(a)) return a;
  if (isnan(b)) return b;
  return a > b ? a : b;
}

// Tree reductions over the group's `scratch` (one slot per work-item, size a power of two);
// every work-item gets the result.
inline MATH_T ctl_group_max(__local MATH_T* scratch, MATH_T v) {
  const int lid = get_local_id(0);
  scratch[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (lid < s) scratch[lid] = ctl_max_nan(scratch[lid], scratch[lid + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const MATH_T result = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);  // scratch is reused by the next reduction
  return result;
}

inline MATH_T ctl_group_sum(__local MATH_T* scratch, MATH_T v) {
  const int lid = get_local_id(0);
  scratch[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (lid < s) scratch[lid] += scratch[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const MATH_T result = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return result;
}

inline long ctl_group_count(__local long* scratch, long v) {
  const int lid = get_local_id(0);
  scratch[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (lid < s) scratch[lid] += scratch[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const long result = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return result;
}

#if defined(TB)

// The row's max, read by the whole group.
inline MATH_T ctl_row_max(__global const T_(TA)* z, long zr, long c, long zs, __local MATH_T* scratch) {
  MATH_T m = -INFINITY;
  for (long k = get_local_id(0); k < c; k += get_local_size(0)) m = ctl_max_nan(m, (MATH_T)LOAD(TA, z, zr + k * zs));
  return ctl_group_max(scratch, m);
}

// sum over the row of exp(z - m).
inline MATH_T ctl_row_expsum(__global const T_(TA)* z, long zr, long c, long zs, MATH_T m,
                             __local MATH_T* scratch) {
  MATH_T sum = 0;
  for (long k = get_local_id(0); k < c; k += get_local_size(0)) sum += exp((MATH_T)LOAD(TA, z, zr + k * zs) - m);
  return ctl_group_sum(scratch, sum);
}

// One group per row (rows spread over the groups). The row's loss goes to `loss` at the
// strided position of the row (reduction NONE: the output view; otherwise a contiguous
// temporary of MATH_T with its counted flag in `counted`).
// The leading iteration walks rows: strides of logits, target and the per-row loss.
__kernel void cross_entropy_rows(__global const T_(TA)* z, long z_offset, long8 z_strides, long zs,
                                 __global const T_(TB)* t, long t_offset, long8 t_strides, __global T_(TA)* out,
                                 long out_offset, long8 out_strides, __global MATH_T* partial, __global long* counted,
                                 int per_row, int rank, long8 shape, long rows, long c, long ignore_index,
                                 int ignore_set, __local MATH_T* scratch) {
  for (long row = get_group_id(0); row < rows; row += get_num_groups(0)) {
    const long8 index = ctl_unravel(row, rank, shape);
    const long zr = z_offset + ctl_dot(index, z_strides);
    const long target = (long)LOAD(TB, t, t_offset + ctl_dot(index, t_strides));
    const int ignored = ignore_set && target == ignore_index;
    // The reductions run for every row, outside any branch: the barriers in them must be
    // reached alike by the whole group (PoCL corrupted memory when a row loop could skip
    // them with continue, even where no row did).
    const MATH_T m = ctl_row_max(z, zr, c, zs, scratch);
    const MATH_T sum = ctl_row_expsum(z, zr, c, zs, m, scratch);
    // logsumexp as the logsumexp op defines it: an infinite (or NaN) max is the result.
    const MATH_T lse = isfinite(m) ? m + log(sum) : m;
    MATH_T loss = 0;
    if (!ignored) loss = (target < 0 || target >= c) ? (MATH_T)NAN : lse - (MATH_T)LOAD(TA, z, zr + target * zs);
    if (get_local_id(0) == 0) {
      if (per_row) {
        STORE(TA, out, out_offset + ctl_dot(index, out_strides), loss);
      } else {
        partial[row] = loss;
        counted[row] = ignored ? 0 : 1;
      }
    }
  }
}

// MEAN / SUM: one group adds the per-row losses, each work-item a fixed stripe, then the
// tree; MEAN divides by the counted rows (0 / 0 is NaN when every row is ignored).
__kernel void cross_entropy_total(__global const MATH_T* partial, __global const long* counted, long rows, int mean,
                                  __global T_(TA)* out, long out_offset, __local MATH_T* scratch,
                                  __local long* count_scratch) {
  MATH_T sum = 0;
  long count = 0;
  for (long r = get_local_id(0); r < rows; r += get_local_size(0)) {
    sum += partial[r];
    count += counted[r];
  }
  sum = ctl_group_sum(scratch, sum);
  count = ctl_group_count(count_scratch, count);
  if (get_local_id(0) == 0) STORE(TA, out, out_offset, mean ? sum / (MATH_T)count : sum);
}

// The rows whose target is not ignored, into count[0] (MEAN's divisor); one group.
__kernel void cross_entropy_count(__global const T_(TB)* t, long t_offset, long8 t_strides, int rank, long8 shape,
                                  long rows, long ignore_index, int ignore_set, __global long* count_out,
                                  __local long* scratch) {
  long count = 0;
  for (long r = get_local_id(0); r < rows; r += get_local_size(0)) {
    const long target = (long)LOAD(TB, t, t_offset + ctl_dot(ctl_unravel(r, rank, shape), t_strides));
    count += (ignore_set && target == ignore_index) ? 0 : 1;
  }
  count = ctl_group_count(scratch, count);
  if (get_local_id(0) == 0) count_out[0] = count;
}

// grad_logits = g * (softmax(z) - onehot(t)), one group per row. g is grad_loss at the
// row (per_row) or grad_loss[0], divided by count[0] for MEAN. An ignored row is zeros, an
// out-of-range target a row of NaN.
__kernel void cross_entropy_backward_rows(__global const T_(TA)* z, long z_offset, long8 z_strides, long zs,
                                          __global const T_(TB)* t, long t_offset, long8 t_strides,
                                          __global T_(TA)* dz, long dz_offset, long8 dz_strides, long dzs,
                                          __global const T_(TA)* g, long g_offset, long8 g_strides,
                                          __global const long* count, int per_row, int mean, int rank, long8 shape,
                                          long rows, long c, long ignore_index, int ignore_set,
                                          __local MATH_T* scratch) {
  MATH_T scale = 0;
  if (!per_row) {
    scale = (MATH_T)LOAD(TA, g, g_offset);
    if (mean) scale /= (MATH_T)count[0];
  }
  for (long row = get_group_id(0); row < rows; row += get_num_groups(0)) {
    const long8 index = ctl_unravel(row, rank, shape);
    const long zr = z_offset + ctl_dot(index, z_strides);
    const long dr = dz_offset + ctl_dot(index, dz_strides);
    const long target = (long)LOAD(TB, t, t_offset + ctl_dot(index, t_strides));
    const int ignored = ignore_set && target == ignore_index;
    const int valid = !ignored && target >= 0 && target < c;
    // The reductions run for every row, outside any branch (see cross_entropy_rows); an
    // ignored row is zeros and an out-of-range target a row of NaN.
    const MATH_T gr = per_row ? (MATH_T)LOAD(TA, g, g_offset + ctl_dot(index, g_strides)) : scale;
    // softmax as the softmax op computes it: a row of -inf, or holding +inf, is NaN.
    const MATH_T m = ctl_row_max(z, zr, c, zs, scratch);
    const MATH_T sum = ctl_row_expsum(z, zr, c, zs, m, scratch);
    for (long k = get_local_id(0); k < c; k += get_local_size(0)) {
      MATH_T d = ignored ? (MATH_T)0 : (MATH_T)NAN;
      if (valid) {
        const MATH_T p = exp((MATH_T)LOAD(TA, z, zr + k * zs) - m) / sum;
        d = gr * (k == target ? p - (MATH_T)1 : p);
      }
      STORE(TA, dz, dr + k * dzs, d);
    }
  }
}

#endif  // TB

// One AdamW update per element (see ctl_adamw_attrs); decay = lr * weight_decay and the
// bias corrections 1 - beta^step come from the host in double.
__kernel void adamw_step(__global const T_(TA)* g, long g_offset, long8 g_strides, __global T_(TA)* p, long p_offset,
                         long8 p_strides, __global T_(TA)* m, long m_offset, long8 m_strides, __global T_(TA)* v,
                         long v_offset, long8 v_strides, int rank, long8 shape, long n, MATH_T lr, MATH_T decay,
                         MATH_T beta1, MATH_T beta2, MATH_T eps, MATH_T correction1, MATH_T correction2) {
  FOR_EACH_ITEM(i, n) {
    const long8 index = ctl_unravel(i, rank, shape);
    const long gi = g_offset + ctl_dot(index, g_strides);
    const long pi = p_offset + ctl_dot(index, p_strides);
    const long mi = m_offset + ctl_dot(index, m_strides);
    const long vi = v_offset + ctl_dot(index, v_strides);
    const MATH_T grad = LOAD(TA, g, gi);
    MATH_T param = LOAD(TA, p, pi);
    param = param - decay * param;
    const MATH_T avg = beta1 * (MATH_T)LOAD(TA, m, mi) + ((MATH_T)1 - beta1) * grad;
    const MATH_T avg_sq = beta2 * (MATH_T)LOAD(TA, v, vi) + ((MATH_T)1 - beta2) * grad * grad;
    param = param - lr * (avg / correction1) / (sqrt(avg_sq / correction2) + eps);
    STORE(TA, p, pi, param);
    STORE(TA, m, mi, avg);
    STORE(TA, v, vi, avg_sq);
  }
}

// One SGD update per element (see ctl_sgd_attrs); keep = 1 - dampening. Without a momentum
// buffer (has_buffer 0) b is param's buffer again and is not touched.
__kernel void sgd_step(__global const T_(TA)* g, long g_offset, long8 g_strides, __global T_(TA)* p, long p_offset,
                       long8 p_strides, __global T_(TA)* b, long b_offset, long8 b_strides, int rank, long8 shape,
                       long n, MATH_T lr, MATH_T momentum, MATH_T keep, MATH_T weight_decay, int has_buffer,
                       int nesterov) {
  FOR_EACH_ITEM(i, n) {
    const long8 index = ctl_unravel(i, rank, shape);
    const long gi = g_offset + ctl_dot(index, g_strides);
    const long pi = p_offset + ctl_dot(index, p_strides);
    const MATH_T param = LOAD(TA, p, pi);
    const MATH_T grad = (MATH_T)LOAD(TA, g, gi) + weight_decay * param;
    MATH_T step = grad;
    if (has_buffer) {
      const long bi = b_offset + ctl_dot(index, b_strides);
      const MATH_T buf = momentum * (MATH_T)LOAD(TA, b, bi) + keep * grad;
      STORE(TA, b, bi, buf);
      step = nesterov ? grad + momentum * buf : buf;
    }
    STORE(TA, p, pi, param - lr * step);
  }
}
