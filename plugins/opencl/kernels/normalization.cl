// normalization.cl — softmax and log_softmax along any axis, layer_norm and rms_norm over the
// last axis, and their backward forms. Built per dtype (-DTA=<tag>, and -DTS=<tag> for the
// mean / rstd statistics: f32 for f16 / bf16, else x's dtype).
//
// One work-group per row (a grid-stride loop over rows when there are more rows than
// groups): each work-item strides over the row's elements, and the row's max or sums meet
// in a tree in local memory, so a row is read from memory two or three times and never
// written in between. Rows are indexed by every axis but the normalised one, merged and
// innermost first (`int rank, long8 shape` and one long8 of strides per view); `n`
// elements per row lie `step` elements apart in each view.
// Everything is computed in MATH_T (double where the device has it, as the reference does)
// and rounded once on the store. The local size is a power of two.

#if defined(CTL_HAVE_FP64)
#define MATH_T double
#else
#define MATH_T float
#endif

#define M(v) ((MATH_T)(v))

// The sum over the work-group of every item's v, in every item.
inline MATH_T group_sum(__local MATH_T* s, MATH_T v) {
  const int lid = get_local_id(0);
  s[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int span = get_local_size(0) / 2; span > 0; span >>= 1) {
    if (lid < span) s[lid] += s[lid + span];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const MATH_T total = s[0];
  barrier(CLK_LOCAL_MEM_FENCE);  // s is reused by the next call
  return total;
}

// The max over the work-group; NaN sticks.
inline MATH_T group_max(__local MATH_T* s, MATH_T v) {
  const int lid = get_local_id(0);
  s[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int span = get_local_size(0) / 2; span > 0; span >>= 1) {
    if (lid < span) {
      const MATH_T other = s[lid + span];
      if (isnan(other) || other > s[lid]) s[lid] = other;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const MATH_T total = s[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return total;
}

#define ROW_LOOP(r, rows) for (long r = get_group_id(0); r < (rows); r += get_num_groups(0))
#define ELEMENT_LOOP(i, n) for (long i = get_local_id(0); i < (n); i += get_local_size(0))

// y = softmax(x) or log_softmax(x) along the row.
__kernel void softmax_rows(__global const T_(TA)* x, long x_offset, long8 x_rows, long x_step, __global T_(TA)* y,
                           long y_offset, long8 y_rows, long y_step, int rank, long8 shape, long rows, long n,
                           int log_form, __local MATH_T* scratch) {
  ROW_LOOP(r, rows) {
    const long8 index = ctl_unravel(r, rank, shape);
    const long xb = x_offset + ctl_dot(index, x_rows), yb = y_offset + ctl_dot(index, y_rows);
    MATH_T m = -INFINITY;
    ELEMENT_LOOP(i, n) {
      const MATH_T v = M(LOAD(TA, x, xb + i * x_step));
      if (isnan(v) || v > m) m = v;
    }
    m = group_max(scratch, m);
    MATH_T sum = 0;
    ELEMENT_LOOP(i, n) sum += exp(M(LOAD(TA, x, xb + i * x_step)) - m);
    // A row of all -inf gives (-inf) - (-inf) = NaN, as the reference does.
    sum = group_sum(scratch, sum);
    if (log_form) {
      const MATH_T lse = log(sum);
      ELEMENT_LOOP(i, n) STORE(TA, y, yb + i * y_step, (M(LOAD(TA, x, xb + i * x_step)) - m) - lse);
    } else {
      ELEMENT_LOOP(i, n) STORE(TA, y, yb + i * y_step, exp(M(LOAD(TA, x, xb + i * x_step)) - m) / sum);
    }
  }
}

// dx = y * (dy - sum(dy * y)) for softmax, dx = dy - exp(y) * sum(dy) for log_softmax.
__kernel void softmax_backward_rows(__global const T_(TA)* y, long y_offset, long8 y_rows, long y_step,
                                    __global const T_(TA)* dy, long dy_offset, long8 dy_rows, long dy_step,
                                    __global T_(TA)* dx, long dx_offset, long8 dx_rows, long dx_step, int rank,
                                    long8 shape, long rows, long n, int log_form, __local MATH_T* scratch) {
  ROW_LOOP(r, rows) {
    const long8 index = ctl_unravel(r, rank, shape);
    const long yb = y_offset + ctl_dot(index, y_rows), db = dy_offset + ctl_dot(index, dy_rows);
    const long xb = dx_offset + ctl_dot(index, dx_rows);
    MATH_T s = 0;
    ELEMENT_LOOP(i, n) {
      const MATH_T d = M(LOAD(TA, dy, db + i * dy_step));
      s += log_form ? d : d * M(LOAD(TA, y, yb + i * y_step));
    }
    s = group_sum(scratch, s);
    ELEMENT_LOOP(i, n) {
      const MATH_T yi = M(LOAD(TA, y, yb + i * y_step)), di = M(LOAD(TA, dy, db + i * dy_step));
      STORE(TA, dx, xb + i * dx_step, log_form ? di - exp(yi) * s : yi * (di - s));
    }
  }
}

// layer_norm (layer = 1) and rms_norm (layer = 0) over the row; weight, bias, mean and rstd
// are used only where their has_* flag is set; otherwise the host passes x's buffer there,
// because every kernel argument needs a value.
__kernel void norm_rows(__global const T_(TA)* x, long x_offset, long8 x_rows, long x_step, __global T_(TA)* y,
                        long y_offset, long8 y_rows, long y_step, __global const T_(TA)* w, long w_offset,
                        long w_step, __global const T_(TA)* b, long b_offset, long b_step, __global T_(TS)* mean_out,
                        long mean_offset, long8 mean_rows, __global T_(TS)* rstd_out, long rstd_offset,
                        long8 rstd_rows, int rank, long8 shape, long rows, long n, int layer, int has_w, int has_b,
                        int has_mean, int has_rstd, MATH_T eps, __local MATH_T* scratch) {
  const MATH_T dn = (MATH_T)n;
  ROW_LOOP(r, rows) {
    const long8 index = ctl_unravel(r, rank, shape);
    const long xb = x_offset + ctl_dot(index, x_rows), yb = y_offset + ctl_dot(index, y_rows);
    MATH_T mean = 0;
    if (layer) {
      MATH_T sum = 0;
      ELEMENT_LOOP(i, n) sum += M(LOAD(TA, x, xb + i * x_step));
      mean = group_sum(scratch, sum) / dn;  // n == 0 gives NaN statistics, as the formula does
    }
    MATH_T sq = 0;
    ELEMENT_LOOP(i, n) {
      const MATH_T d = M(LOAD(TA, x, xb + i * x_step)) - mean;
      sq += d * d;
    }
    const MATH_T rstd = (MATH_T)1 / sqrt(group_sum(scratch, sq) / dn + eps);
    ELEMENT_LOOP(i, n) {
      MATH_T v = (M(LOAD(TA, x, xb + i * x_step)) - mean) * rstd;
      if (has_w) v *= M(LOAD(TA, w, w_offset + i * w_step));
      if (has_b) v += M(LOAD(TA, b, b_offset + i * b_step));
      STORE(TA, y, yb + i * y_step, v);
    }
    if (get_local_id(0) == 0) {
      if (has_mean) STORE(TS, mean_out, mean_offset + ctl_dot(index, mean_rows), mean);
      if (has_rstd) STORE(TS, rstd_out, rstd_offset + ctl_dot(index, rstd_rows), rstd);
    }
  }
}

// dx = rstd * (g - mean(g) - xh * mean(g * xh)) with g = dy * weight and xh = (x - mean) * rstd;
// rms_norm (layer = 0) has no mean and drops mean(g).
__kernel void norm_backward_rows(__global const T_(TA)* dy, long dy_offset, long8 dy_rows, long dy_step,
                                 __global const T_(TA)* x, long x_offset, long8 x_rows, long x_step,
                                 __global T_(TA)* dx, long dx_offset, long8 dx_rows, long dx_step,
                                 __global const T_(TS)* mean_in, long mean_offset, long8 mean_rows,
                                 __global const T_(TS)* rstd_in, long rstd_offset, long8 rstd_rows,
                                 __global const T_(TA)* w, long w_offset, long w_step, int rank, long8 shape,
                                 long rows, long n, int layer, int has_w, __local MATH_T* scratch) {
  const MATH_T dn = (MATH_T)n;
  ROW_LOOP(r, rows) {
    const long8 index = ctl_unravel(r, rank, shape);
    const long db = dy_offset + ctl_dot(index, dy_rows), xb = x_offset + ctl_dot(index, x_rows);
    const long ob = dx_offset + ctl_dot(index, dx_rows);
    const MATH_T mean = layer ? M(LOAD(TS, mean_in, mean_offset + ctl_dot(index, mean_rows))) : (MATH_T)0;
    const MATH_T rstd = M(LOAD(TS, rstd_in, rstd_offset + ctl_dot(index, rstd_rows)));
    MATH_T sum_g = 0, sum_gx = 0;
    ELEMENT_LOOP(i, n) {
      MATH_T g = M(LOAD(TA, dy, db + i * dy_step));
      if (has_w) g *= M(LOAD(TA, w, w_offset + i * w_step));
      const MATH_T xh = (M(LOAD(TA, x, xb + i * x_step)) - mean) * rstd;
      sum_g += g;
      sum_gx += g * xh;
    }
    const MATH_T mean_g = layer ? group_sum(scratch, sum_g) / dn : (MATH_T)0;
    const MATH_T mean_gx = group_sum(scratch, sum_gx) / dn;
    ELEMENT_LOOP(i, n) {
      MATH_T g = M(LOAD(TA, dy, db + i * dy_step));
      if (has_w) g *= M(LOAD(TA, w, w_offset + i * w_step));
      const MATH_T xh = (M(LOAD(TA, x, xb + i * x_step)) - mean) * rstd;
      STORE(TA, dx, ob + i * dx_step, rstd * (g - mean_g - xh * mean_gx));
    }
  }
}

// dweight and dbias, first pass: item (block, j) sums dy * xh and dy over the rows of its
// block of `block_rows` rows for column j into partial[block * n + j] and
// partial[(blocks + block) * n + j].
__kernel void norm_params_partial(__global const T_(TA)* dy, long dy_offset, long8 dy_rows, long dy_step,
                                  __global const T_(TA)* x, long x_offset, long8 x_rows, long x_step,
                                  __global const T_(TS)* mean_in, long mean_offset, long8 mean_rows,
                                  __global const T_(TS)* rstd_in, long rstd_offset, long8 rstd_rows, int rank,
                                  long8 shape, long rows, long n, int layer, long block_rows, long blocks,
                                  __global MATH_T* partial) {
  FOR_EACH_ITEM(item, blocks * n) {
    const long block = item / n, j = item - block * n;
    const long end = min(rows, (block + 1) * block_rows);
    MATH_T w = 0, s = 0;
    for (long r = block * block_rows; r < end; ++r) {
      const long8 index = ctl_unravel(r, rank, shape);
      const MATH_T mean = layer ? M(LOAD(TS, mean_in, mean_offset + ctl_dot(index, mean_rows))) : (MATH_T)0;
      const MATH_T rstd = M(LOAD(TS, rstd_in, rstd_offset + ctl_dot(index, rstd_rows)));
      const MATH_T d = M(LOAD(TA, dy, dy_offset + ctl_dot(index, dy_rows) + j * dy_step));
      w += d * ((M(LOAD(TA, x, x_offset + ctl_dot(index, x_rows) + j * x_step)) - mean) * rstd);
      s += d;
    }
    partial[item] = w;
    partial[blocks * n + item] = s;
  }
}

// Second pass: the blocks' partials added in block order, stored where has_* says.
__kernel void norm_params_combine(__global const MATH_T* partial, long blocks, long n, __global T_(TA)* dw,
                                  long dw_offset, long dw_step, __global T_(TA)* dbias, long db_offset, long db_step,
                                  int has_dw, int has_db) {
  FOR_EACH_ITEM(j, n) {
    MATH_T w = 0, s = 0;  // no rows: sums of nothing, 0
    for (long block = 0; block < blocks; ++block) {
      w += partial[block * n + j];
      s += partial[(blocks + block) * n + j];
    }
    if (has_dw) STORE(TA, dw, dw_offset + j * dw_step, w);
    if (has_db) STORE(TA, dbias, db_offset + j * db_step, s);
  }
}
