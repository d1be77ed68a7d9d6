// matmul_problem.h — one matmul call after validation, shared by the f32/f64 GEMM
// (matmul.cpp) and the reduced-precision GEMM paths.
#pragma once

#include <cmath>
#include <cstdint>

#include "op_context.h"

namespace catalyst::cpu {

// One operand's 2-D matrix inside one batch element: element (i, j) is at data[i*rs + j*cs].
struct Matrix {
  const char* data;
  int64_t rs, cs;
};

// Everything about one matmul call, independent of the batch element.
struct Problem {
  int64_t M, N, K;
  ctl_dtype dtype;
  double alpha, beta;
  ctl_activation activation;
  bool has_bias;
  // Batch geometry: out's batch axes, and each operand's stride on them (0 = broadcast).
  uint32_t batch_rank;
  int64_t batch_shape[CTL_MAX_RANK];
  int64_t batch_strides[4][CTL_MAX_RANK];  // a, b, out, bias
  int64_t batches;
  View a, b, out, bias;
};

template <class C>
inline C activate(C v, ctl_activation activation) {
  switch (activation) {
    case CTL_ACTIVATION_RELU:
      return v != v ? v : (v > 0 ? v : C(0));
    case CTL_ACTIVATION_GELU:
      return v * C(0.5) * (C(1) + std::erf(v / C(1.4142135623730950488)));
    case CTL_ACTIVATION_GELU_TANH:
      return C(0.5) * v * (C(1) + std::tanh(C(0.79788456080286535588) * (v + C(0.044715) * v * v * v)));
    default:
      return v;
  }
}

// Multiply-adds of one product, in double so that no shape overflows.
inline double product_work(const Problem& p) {
  return static_cast<double>(p.M) * static_cast<double>(p.N) * static_cast<double>(p.K);
}

// Many small products run one per thread; otherwise all threads share each product.
inline bool one_product_per_thread(const Problem& p, int64_t threads) {
  return p.batches >= 2 * threads || (p.batches >= threads && product_work(p) <= 128.0 * 128 * 128);
}

// Element offsets (a, b, out, bias) of batch element `index`.
inline void batch_offsets(const Problem& p, int64_t index, int64_t offsets[4]) {
  for (int s = 0; s < 4; ++s) offsets[s] = 0;
  for (uint32_t axis = p.batch_rank; axis-- > 0;) {
    const int64_t i = index % p.batch_shape[axis];
    index /= p.batch_shape[axis];
    for (int s = 0; s < 4; ++s) offsets[s] += i * p.batch_strides[s][axis];
  }
}

}  // namespace catalyst::cpu
