// vec_kernels.h — hand-vectorised f32 kernels over contiguous spans and rows, one table
// per instruction set (AVX-512, AVX2+FMA, baseline SSE), picked by active_isa().
//
// The op files keep their general strided, every-dtype code and call these only for f32
// runs with unit stride (a stride-0 scalar operand where said); everything the vector code
// cannot do exactly as the reference asks (a row whose statistics leave the f32 range) is
// refused with `false`, and the caller then runs its scalar code on that row.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "isa.h"

namespace catalyst::cpu {

enum class VecBinary { kAdd, kSub, kMul, kDiv };
enum class VecUnary { kExp, kTanh, kSigmoid, kSilu, kGeluTanh };

struct VecKernels {
  const char* name;
  // out[i] = a[i * sa] op b[i * sb] with sa, sb each 0 or 1. `stream` writes out with
  // non-temporal stores (for outputs far bigger than the caches: no read for ownership),
  // which the caller orders with stream_fence().
  void (*binary)(VecBinary op, float* out, const float* a, int64_t sa, const float* b, int64_t sb, int64_t n,
                 bool stream);
  void (*unary)(VecUnary op, float* out, const float* x, int64_t n);
  // dx[i] = dy[i] * gelu_tanh'(x[i]).
  void (*gelu_tanh_backward)(float* dx, const float* dy, const float* x, int64_t n);

  // The row kernels take `stream` as binary does. Their rows are n > 0 elements.
  // softmax (log: log_softmax) of one row; `e` is n floats of scratch.
  void (*softmax_row)(float* y, const float* x, int64_t n, bool log, float* e, bool stream);
  // softmax (not log) of `rows` rows of n, row r at x + r * xs and y + r * ys; `e2` is 2n
  // floats of scratch. The same results as softmax_row, faster when streaming.
  void (*softmax_rows)(float* y, int64_t ys, const float* x, int64_t xs, int64_t rows, int64_t n, float* e2,
                       bool stream);
  // layer_norm (layer) or rms_norm of one row; weight / bias may be NULL. Writes the row's
  // mean (0 for rms_norm) and rstd. False, with nothing written, when rstd does not fit f32.
  bool (*norm_row)(float* y, const float* x, const float* weight, const float* bias, int64_t n, double eps, bool layer,
                   float* mean, float* rstd, bool stream);
  // dx = y * (dy - sum(dy * y)), or for log_softmax dx = dy - exp(y) * sum(dy).
  void (*softmax_backward_row)(float* dx, const float* y, const float* dy, int64_t n, bool log, bool stream);
  // dx = rstd * (g - mean(g) - xh * mean(g * xh)), g = dy * weight, xh = (x - mean) * rstd;
  // rms_norm (layer false) drops mean(g). weight may be NULL.
  void (*norm_backward_row)(float* dx, const float* dy, const float* x, const float* weight, int64_t n, float mean,
                            float rstd, bool layer, bool stream);
  // dweight[j] += dy[j] * (x[j] - mean) * rstd and dbias[j] += dy[j] over one row, in double.
  void (*norm_param_row)(double* dweight, double* dbias, const float* dy, const float* x, int64_t n, float mean,
                         float rstd);

  // max and log(sum(exp(z - max))) of a row: logsumexp is max + the second, in double.
  void (*row_max_logsum)(const float* z, int64_t n, float* max, double* log_sum);
  // e[i] = exp(z[i] - max); returns the sum of e.
  float (*row_exp_sum)(float* e, const float* z, int64_t n, float max);

  // The AdamW update of n parameters, computed in double per element.
  void (*adamw)(float* param, float* exp_avg, float* exp_avg_sq, const float* grad, int64_t n, double lr, double decay,
                double beta1, double beta2, double eps, double inv_correction1, double inv_correction2);

  // The SGD update of n parameters (ctl_sgd_attrs' formula), computed in f32;
  // momentum_buf is NULL when momentum is 0.
  void (*sgd)(float* param, float* momentum_buf, const float* grad, int64_t n, double lr, double momentum,
              double dampening, double weight_decay, bool nesterov);

  // sum (in double), max and min of a row of n > 0: NaN anywhere wins, -0 < +0 (the
  // max and min reductions' rules).
  double (*row_sum)(const float* x, int64_t n);
  float (*row_max)(const float* x, int64_t n);
  float (*row_min)(const float* x, int64_t n);
  // acc[j] += x[j] for j < n, in double: the column sums over leading axes.
  void (*accumulate)(double* acc, const float* x, int64_t n);
};

// The table for active_isa(), fixed for the life of the process.
const VecKernels& vec_kernels();
// The table of one instruction set, or NULL when this CPU and OS cannot run it: lets a
// test compare every path in one process.
const VecKernels* vec_kernels_for(Isa isa);

// Orders the calling thread's non-temporal stores before its later stores. Kernels given
// `stream` leave it to their caller, which calls this once at the end of each parallel
// part: once per row would stall every row on the write-combining buffers.
inline void stream_fence() {
  _mm_sfence();
}

// Output bytes from which the elementwise ops stream their stores past the caches: far
// more than the L2 of a core, where a later op would no longer find the result in cache.
inline constexpr int64_t kStreamBytes = int64_t{32} << 20;

}  // namespace catalyst::cpu
