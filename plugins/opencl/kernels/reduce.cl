// reduce.cl — sum, mean, max, min, argmax, argmin and the two passes of logsumexp, built per
// dtype (-DTA=<tag>) and per operation (-DOP=<one of the REDUCE_* codes below>).
//
// A reduction is split into tasks: task t reduces chunk t % chunks of output t / chunks. Kept
// axes (the output's positions) and reduced axes each come merged, innermost first. Three
// kernels share one accumulator:
//  - reduce_groups: one work-group per task, each work-item striding over the chunk, then a
//    tree in local memory; with one chunk per output it writes the result, else a partial;
//  - reduce_combine: one work-group per output, folding its partials in order;
//  - reduce_items: one work-item per output walking its whole reduction, for many outputs
//    whose kept axis is the inner one in memory (neighbouring items read neighbours).
// The accumulator is a value and (for argmax/argmin) the index of that value.
// Float sums accumulate in MATH_T (double where the device has it, as the reference does);
// integer sums in wrapping 64-bit.

#if defined(CTL_HAVE_FP64)
#define MATH_T double
#else
#define MATH_T float
#endif

#define REDUCE_SUM 0
#define REDUCE_MEAN 1
#define REDUCE_MAX 2
#define REDUCE_MIN 3
#define REDUCE_ARGMAX 4
#define REDUCE_ARGMIN 5
#define REDUCE_SUMEXP 6  // logsumexp's second pass: sum of exp(x - m), m from the first (a max)

#if OP == REDUCE_SUM || OP == REDUCE_MEAN
#if IS_FLOAT(TA)
#define ACC_T MATH_T
#define ACC_ADD(a, b) ((a) + (b))
#else
#define ACC_T long
#define ACC_ADD(a, b) ((long)((ulong)(a) + (ulong)(b)))  // wraps, as the reference's sum does
#endif
#define ACC_INIT ((ACC_T)0)
#elif OP == REDUCE_SUMEXP
#define ACC_T MATH_T
#define ACC_ADD(a, b) ((a) + (b))
#define ACC_INIT ((ACC_T)0)
#else
#define ACC_T C_(TA)
#endif

#if OP == REDUCE_ARGMAX || OP == REDUCE_ARGMIN
#define OUT_T long
#define HAS_INDEX 1
#else
#define HAS_INDEX 0
#define OUT_T T_(TA)
#endif

#if OP == REDUCE_MAX || OP == REDUCE_ARGMAX
#define GREATER(a, b) ((a) > (b))
#else
#define GREATER(a, b) ((a) < (b))  // "more extreme" for min and argmin
#endif

#if IS_FLOAT(TA)
#define IS_NAN(v) isnan(v)
#else
#define IS_NAN(v) 0
#endif

// The starting value of max/min: nothing loses to it except the extreme itself, which ties.
#if OP == REDUCE_MAX || OP == REDUCE_MIN
#if IS_FLOAT(TA)
#define ACC_INIT ((ACC_T)(OP == REDUCE_MAX ? -INFINITY : INFINITY))
#elif defined(TA_IS_I64)  // set by the host: C_(i64) is long, the others' int
#define ACC_INIT ((ACC_T)(OP == REDUCE_MAX ? LONG_MIN : LONG_MAX))
#else
#define ACC_INIT ((ACC_T)(OP == REDUCE_MAX ? INT_MIN : INT_MAX))
#endif
#endif
#if OP == REDUCE_ARGMAX || OP == REDUCE_ARGMIN
#define ACC_INIT ((ACC_T)0)
#endif

// Folds (v, vi) into (*a, *ai). max/min: NaN is sticky and -0 < +0 (IEEE 754-2019).
// argmax/argmin: an index of -1 is "nothing yet"; a NaN beats every number, and among
// equals (or NaNs) the lower index wins, so the order items are folded in does not matter.
inline void acc_take(ACC_T* a, long* ai, ACC_T v, long vi) {
#if OP == REDUCE_SUM || OP == REDUCE_MEAN || OP == REDUCE_SUMEXP
  *a = ACC_ADD(*a, v);
#elif OP == REDUCE_MAX || OP == REDUCE_MIN
  const ACC_T b = *a;
  if (IS_NAN(b)) return;
  if (IS_NAN(v) || GREATER(v, b)) {
    *a = v;
  }
#if IS_FLOAT(TA)
  else if (v == b && signbit(v) != signbit(b)) {
    *a = (OP == REDUCE_MAX) == (signbit(v) == 0) ? v : b;
  }
#endif
#else
  if (vi < 0) return;
  const ACC_T b = *a;
  bool take;
  if (*ai < 0) {
    take = true;
  } else if (IS_NAN(b) || IS_NAN(v)) {
    take = IS_NAN(v) && (!IS_NAN(b) || vi < *ai);
  } else {
    take = GREATER(v, b) || (v == b && vi < *ai);
  }
  if (take) {
    *a = v;
    *ai = vi;
  }
#endif
}

// The element offset of reduced element k from the output's first element.
inline long reduced_offset(long k, int rank, long8 shape, long8 strides) {
  return rank <= 1 ? k * strides.s0 : ctl_dot(ctl_unravel(k, rank, shape), strides);
}

// One element as it enters the accumulator.
inline ACC_T acc_load(__global const T_(TA)* x, long at, MATH_T shift) {
#if OP == REDUCE_SUMEXP
  return exp((MATH_T)LOAD(TA, x, at) - shift);
#else
  return (ACC_T)LOAD(TA, x, at);
#endif
}

// logsumexp's shift for output o: the max of its row, or 0 for the other ops.
inline MATH_T acc_shift(__global const T_(TA)* m, long m_offset, long o) {
#if OP == REDUCE_SUMEXP
  return (MATH_T)LOAD(TA, m, m_offset + o);
#else
  return 0;
#endif
}

// Stores the finished accumulator of an output; `count` is the number of reduced elements.
inline void acc_finish(__global OUT_T* out, long at, ACC_T a, long ai, long count, MATH_T shift) {
#if OP == REDUCE_ARGMAX || OP == REDUCE_ARGMIN
  out[at] = ai;
#elif OP == REDUCE_MEAN
  STORE(TA, out, at, a / (ACC_T)count);  // an empty mean is 0 / 0 = NaN
#elif OP == REDUCE_SUMEXP
  // m = ±inf or NaN is the result itself; an empty reduction's m is -inf.
  STORE(TA, out, at, isfinite(shift) ? shift + log(a) : shift);
#else
  STORE(TA, out, at, a);
#endif
}

// Tree reduction of every work-item's accumulator; the local size is a power of two.
// Returns the group's result in every work-item.
inline void group_fold(__local ACC_T* lv, __local long* li, ACC_T* a, long* ai) {
  const int lid = get_local_id(0);
  lv[lid] = *a;
  li[lid] = *ai;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (lid < s) {
      ACC_T v = lv[lid];
      long vi = li[lid];
      acc_take(&v, &vi, lv[lid + s], li[lid + s]);
      lv[lid] = v;
      li[lid] = vi;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  *a = lv[0];
  *ai = li[0];
  barrier(CLK_LOCAL_MEM_FENCE);  // lv is reused by the next task
}

__kernel void reduce_groups(__global const T_(TA)* x, long x_offset, int kept_rank, long8 kept_shape,
                            long8 kept_x, long8 kept_out, int red_rank, long8 red_shape, long8 red_x, long count,
                            long chunk, long chunks, long tasks, __global const T_(TA)* m, long m_offset,
                            __global ACC_T* part, __global long* part_index, __global OUT_T* out, long out_offset,
                            __local ACC_T* lv, __local long* li) {
  for (long t = get_group_id(0); t < tasks; t += get_num_groups(0)) {
    const long o = t / chunks, c = t - o * chunks;
    const long8 index = ctl_unravel(o, kept_rank, kept_shape);
    const long base = x_offset + ctl_dot(index, kept_x);
    const MATH_T shift = acc_shift(m, m_offset, o);
    const long begin = c * chunk, end = min(count, begin + chunk);
    ACC_T a = ACC_INIT;
    long ai = -1;
    for (long k = begin + get_local_id(0); k < end; k += get_local_size(0)) {
      acc_take(&a, &ai, acc_load(x, base + reduced_offset(k, red_rank, red_shape, red_x), shift), k);
    }
    group_fold(lv, li, &a, &ai);
    if (get_local_id(0) == 0) {
      if (chunks == 1) {
        acc_finish(out, out_offset + ctl_dot(index, kept_out), a, ai, count, shift);
      } else {
        part[t] = a;
#if HAS_INDEX
        part_index[t] = ai;  // only argmax/argmin get a real buffer here
#endif
      }
    }
  }
}

// Folds the `chunks` partials of every output (reduce_groups' part, part_index) in order.
__kernel void reduce_combine(__global const ACC_T* part, __global const long* part_index, long chunks, long outputs,
                             int kept_rank, long8 kept_shape, long8 kept_out, long count, __global const T_(TA)* m,
                             long m_offset, __global OUT_T* out, long out_offset, __local ACC_T* lv,
                             __local long* li) {
  for (long o = get_group_id(0); o < outputs; o += get_num_groups(0)) {
    ACC_T a = ACC_INIT;
    long ai = -1;
    for (long c = get_local_id(0); c < chunks; c += get_local_size(0)) {
#if HAS_INDEX
      acc_take(&a, &ai, part[o * chunks + c], part_index[o * chunks + c]);
#else
      acc_take(&a, &ai, part[o * chunks + c], 0);
#endif
    }
    group_fold(lv, li, &a, &ai);
    if (get_local_id(0) == 0) {
      const long at = out_offset + ctl_dot(ctl_unravel(o, kept_rank, kept_shape), kept_out);
      acc_finish(out, at, a, ai, count, acc_shift(m, m_offset, o));
    }
  }
}

__kernel void reduce_items(__global const T_(TA)* x, long x_offset, int kept_rank, long8 kept_shape, long8 kept_x,
                           long8 kept_out, int red_rank, long8 red_shape, long8 red_x, long count, long outputs,
                           __global const T_(TA)* m, long m_offset, __global OUT_T* out, long out_offset) {
  FOR_EACH_ITEM(o, outputs) {
    const long8 index = ctl_unravel(o, kept_rank, kept_shape);
    const long base = x_offset + ctl_dot(index, kept_x);
    const MATH_T shift = acc_shift(m, m_offset, o);
    ACC_T a = ACC_INIT;
    long ai = -1;
    for (long k = 0; k < count; ++k) {
      acc_take(&a, &ai, acc_load(x, base + reduced_offset(k, red_rank, red_shape, red_x), shift), k);
    }
    acc_finish(out, out_offset + ctl_dot(index, kept_out), a, ai, count, shift);
  }
}
