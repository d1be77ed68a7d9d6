// matmul.cpp — the reference matmul: out = act(alpha * a @ b + beta * out + bias), batched
// over the leading axes. Floats accumulate in double and round once; i32/i64 are exact with
// wrap. The core normally hands over transposes as strides and batch axes broadcast with
// stride 0; this kernel also accepts the transpose flags and missing or size-1 batch axes.
#include <cmath>
#include <utility>

#include "catalyst/sdk/view.hpp"
#include "reference_kernels.h"

namespace catalyst::reference {
namespace {

// An operand's shape and strides aligned to the output's rank: missing leading axes and
// size-1 axes that the output widens get stride 0.
struct Aligned {
  int64_t shape[CTL_MAX_RANK] = {};
  int64_t strides[CTL_MAX_RANK] = {};
};

// Aligns the batch axes (all of them for the bias when `matrix_too`) of `x` to `y`.
bool align(const Operand& x, const Operand& y, bool matrix_too, bool transpose, Aligned* out) {
  const uint32_t lead = y.rank - x.rank;  // callers ensure x.rank <= y.rank
  for (uint32_t d = 0; d < y.rank; ++d) {
    out->shape[d] = d < lead ? 1 : x.shape[d - lead];
    out->strides[d] = d < lead ? 0 : x.strides[d - lead];
  }
  if (transpose) {  // the last two axes of x hold (K, M) or (N, K)
    std::swap(out->shape[y.rank - 2], out->shape[y.rank - 1]);
    std::swap(out->strides[y.rank - 2], out->strides[y.rank - 1]);
  }
  const uint32_t checked = matrix_too ? y.rank : y.rank - 2;
  for (uint32_t d = 0; d < checked; ++d) {
    if (out->shape[d] == y.shape[d]) continue;
    if (out->shape[d] != 1) return false;
    out->shape[d] = y.shape[d];
    out->strides[d] = 0;
  }
  return true;
}

// alpha and beta for integer matmul must be whole numbers in int64's range.
bool to_integer(double v, int64_t* out) {
  if (!(v == std::trunc(v)) || std::fabs(v) >= 0x1.0p63) return false;
  *out = static_cast<int64_t>(v);
  return true;
}

double activate(ctl_activation activation, double v) {
  switch (activation) {
    case CTL_ACTIVATION_RELU:
      return std::isnan(v) ? v : (v > 0.0 ? v : 0.0);
    case CTL_ACTIVATION_GELU:
      return gelu_erf(v);
    case CTL_ACTIVATION_GELU_TANH:
      return gelu_tanh(v);
    default:
      return v;
  }
}

}  // namespace

ctl_status* run_matmul(const Call& call) {
  ctl_matmul_attrs attrs;
  bool present = false;
  CTL_SDK_RETURN_IF_ERROR(read_attrs(call, CTL_MATMUL_ATTRS_STRUCT_SIZE, &attrs, &present));
  const double alpha = present && attrs.alpha_set ? attrs.alpha : 1.0;
  const double beta = present ? attrs.beta : 0.0;
  const long long activation_id = present ? raw_enum(attrs.activation) : 0;
  if (activation_id < CTL_ACTIVATION_NONE || activation_id > CTL_ACTIVATION_GELU_TANH)
    return call.invalid("unknown activation %lld", activation_id);
  const auto activation = static_cast<ctl_activation>(activation_id);

  const Operand& a = call.in[0];
  const Operand& b = call.in[1];
  const bool has_bias = call.in.size() > 2 && call.in[2].present();
  const Operand& y = call.out[0];
  if (y.rank < 2 || a.rank < 2 || b.rank < 2 || a.rank > y.rank || b.rank > y.rank)
    return call.invalid(
        "a %s, b %s and output %s need rank >= 2, and a and b no more than "
        "the output",
        shape_string(a).c_str(), shape_string(b).c_str(), shape_string(y).c_str());
  Aligned as, bs, cs;
  const bool ok_a = align(a, y, false, present && attrs.transpose_a, &as);
  const bool ok_b = align(b, y, false, present && attrs.transpose_b, &bs);
  const uint32_t r = y.rank;
  const int64_t M = y.shape[r - 2], N = y.shape[r - 1], K = as.shape[r - 1];
  if (!ok_a || !ok_b || as.shape[r - 2] != M || bs.shape[r - 2] != K || bs.shape[r - 1] != N)
    return call.invalid("a %s and b %s do not multiply to the output %s", shape_string(a).c_str(),
                        shape_string(b).c_str(), shape_string(y).c_str());
  if (has_bias && (call.in[2].rank > r || !align(call.in[2], y, true, false, &cs)))
    return call.invalid("bias %s does not broadcast to the output %s", shape_string(call.in[2]).c_str(),
                        shape_string(y).c_str());
  const bool floats = is_float(y.dtype);
  int64_t alpha_i = 1, beta_i = 0;
  if (!floats && (!to_integer(alpha, &alpha_i) || !to_integer(beta, &beta_i)))
    return call.invalid("integer matmul needs whole alpha and beta, got %g and %g", alpha, beta);

  // Walk the batch axes; the two matrix axes are indexed directly below.
  sdk::StridedWalker<4> batch(r - 2, y.shape);
  const size_t ab = batch.add(as.strides), bb = batch.add(bs.strides), cb = batch.add(cs.strides),
               yb = batch.add(y.strides);
  int64_t batches = 1;
  for (uint32_t d = 0; d + 2 < r; ++d) batches *= y.shape[d];
  for (int64_t t = 0; t < batches; ++t, batch.next()) {
    for (int64_t i = 0; i < M; ++i) {
      for (int64_t j = 0; j < N; ++j) {
        const int64_t yo = batch.offset(yb) + i * y.strides[r - 2] + j * y.strides[r - 1];
        const int64_t co = batch.offset(cb) + i * cs.strides[r - 2] + j * cs.strides[r - 1];
        const int64_t a0 = batch.offset(ab) + i * as.strides[r - 2];
        const int64_t b0 = batch.offset(bb) + j * bs.strides[r - 1];
        if (floats) {
          double acc = 0.0;
          for (int64_t k = 0; k < K; ++k) {
            acc += a.load(a0 + k * as.strides[r - 1]) * b.load(b0 + k * bs.strides[r - 2]);
          }
          double v = K > 0 ? alpha * acc : 0.0;     // K == 0: beta * out + bias, per ops.md
          if (beta != 0.0) v += beta * y.load(yo);  // beta == 0: out is never read
          if (has_bias) v += call.in[2].load(co);
          y.store(yo, activate(activation, v));
        } else {
          int64_t acc = 0;
          for (int64_t k = 0; k < K; ++k) {
            acc = wrap_add(acc, wrap_mul(a.load_i(a0 + k * as.strides[r - 1]), b.load_i(b0 + k * bs.strides[r - 2])));
          }
          int64_t v = wrap_mul(alpha_i, acc);
          if (beta_i != 0) v = wrap_add(v, wrap_mul(beta_i, y.load_i(yo)));
          if (has_bias) v = wrap_add(v, call.in[2].load_i(co));
          y.store_i(yo, v);
        }
      }
    }
  }
  return nullptr;
}

}  // namespace catalyst::reference
