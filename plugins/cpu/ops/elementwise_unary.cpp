// elementwise_unary.cpp — neg, abs, relu (numeric) and the float functions exp ... reciprocal.
// Values are loaded into their compute type (f32 for f16/bf16) and stored back rounded.
#include <cmath>
#include <type_traits>

#include "dtype_dispatch.h"
#include "elementwise.h"
#include "gelu_erf.h"
#include "half_convert.h"
#include "kernels.h"
#include "vec_kernels.h"

namespace catalyst::cpu {
namespace {

// Integer negation and abs wrap (neg(INT_MIN) == INT_MIN): do them in unsigned arithmetic,
// where overflow is defined, and convert back (modular since C++20).
template <class C>
C negate(C x) {
  if constexpr (std::is_integral_v<C>)
    return static_cast<C>(0 - static_cast<std::make_unsigned_t<C>>(x));
  else
    return -x;
}

// x / (1 + exp(-y)). Where exp(-y) overflows (y < -709.8 in double) the result may still be
// a normal number (silu down to x = -715): there 1 + e^y is 1 and the result is
// x e^(y + 32) e^-32, whose factors stay in range. x = -inf gives NaN, as x * sigmoid(x).
template <class C>
C x_sigmoid(C x, C y) {
  if (y < C(-64)) return x * std::exp(y + C(32)) * C(1.2664165549094175723e-14);
  return x / (C(1) + std::exp(-y));
}

// The functions built from exp, erf or tanh by formula, which lose accuracy in f32.
template <ctl_op_id Op>
constexpr bool kComposite = Op == CTL_OP_SIGMOID || Op == CTL_OP_GELU || Op == CTL_OP_GELU_TANH || Op == CTL_OP_SILU;

template <ctl_op_id Op, class C>
inline C apply(C x) {
  if constexpr (Op == CTL_OP_NEG)
    return negate(x);
  else if constexpr (Op == CTL_OP_ABS) {
    if constexpr (std::is_unsigned_v<C>)
      return x;
    else if constexpr (std::is_integral_v<C>)
      return x < 0 ? negate(x) : x;
    else
      return std::fabs(x);
  } else if constexpr (Op == CTL_OP_RELU) {
    // NaN stays NaN and -0 becomes +0 (ops.md).
    if constexpr (std::is_integral_v<C>)
      return x > 0 ? x : C(0);
    else
      return std::isnan(x) ? x : (x > 0 ? x : C(0));
  } else if constexpr (Op == CTL_OP_EXP)
    return std::exp(x);
  else if constexpr (Op == CTL_OP_LOG)
    return std::log(x);
  else if constexpr (Op == CTL_OP_SQRT)
    return std::sqrt(x);
  else if constexpr (Op == CTL_OP_RSQRT)
    return C(1) / std::sqrt(x);
  else if constexpr (Op == CTL_OP_TANH)
    return std::tanh(x);
  else if constexpr (kComposite<Op> && std::is_same_v<C, float>)
    // In f32, exp(-x) overflows where silu(x) is still a normal number (x near -90), and
    // rounding 1 + erf or 1 + tanh costs what the result keeps; double has room for both.
    return static_cast<float>(apply<Op>(static_cast<double>(x)));
  else if constexpr (Op == CTL_OP_SIGMOID)
    return C(1) / (C(1) + std::exp(-x));
  else if constexpr (Op == CTL_OP_GELU)
    // x Phi(x) with Phi(x) = erfc(-x / sqrt(2)) / 2: the same function as ops.md's
    // 0.5 x (1 + erf(x / sqrt(2))), without its cancellation for negative x.
    return C(0.5) * x * std::erfc(x * C(-0.70710678118654752440));
  else if constexpr (Op == CTL_OP_GELU_TANH)
    // 0.5 x (1 + tanh(z)) = x / (1 + exp(-2z)): no cancellation where tanh(z) nears -1.
    return x_sigmoid(x, C(2 * 0.79788456080286535588) * (x + C(0.044715) * x * x * x));
  else if constexpr (Op == CTL_OP_SILU)
    return x_sigmoid(x, x);
  else if constexpr (Op == CTL_OP_SIN)
    return std::sin(x);
  else if constexpr (Op == CTL_OP_COS)
    return std::cos(x);
  else if constexpr (Op == CTL_OP_RECIPROCAL)
    return C(1) / x;
}

template <ctl_op_id Op>
constexpr bool kNumericOp = Op == CTL_OP_NEG || Op == CTL_OP_ABS || Op == CTL_OP_RELU;

// The float functions with a vector form in vec_kernels.h or gelu_erf.h (f32, and
// f16/bf16 through f32).
template <ctl_op_id Op>
constexpr bool kVectorOp = Op == CTL_OP_EXP || Op == CTL_OP_TANH || Op == CTL_OP_SIGMOID || Op == CTL_OP_SILU ||
                           Op == CTL_OP_GELU_TANH || Op == CTL_OP_GELU;

template <ctl_op_id Op>
constexpr VecUnary vec_unary() {
  if constexpr (Op == CTL_OP_EXP)
    return VecUnary::kExp;
  else if constexpr (Op == CTL_OP_TANH)
    return VecUnary::kTanh;
  else if constexpr (Op == CTL_OP_SIGMOID)
    return VecUnary::kSigmoid;
  else if constexpr (Op == CTL_OP_SILU)
    return VecUnary::kSilu;
  else
    return VecUnary::kGeluTanh;
}

// out = Op(x) over a contiguous f32 span, for a kVectorOp.
template <ctl_op_id Op>
void vector_span(float* out, const float* x, int64_t n) {
  if constexpr (Op == CTL_OP_GELU)
    gelu_erf_span(out, x, n);
  else
    vec_kernels().unary(vec_unary<Op>(), out, x, n);
}

template <ctl_op_id Op>
bool run_op(const OpContext& ctx, const View& y, const View& x) {
  constexpr int64_t grain =
      kNumericOp<Op> || Op == CTL_OP_SQRT || Op == CTL_OP_RSQRT || Op == CTL_OP_RECIPROCAL ? kCheapGrain : kCostlyGrain;
  auto body = [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto f = [](T v) { return store<T>(apply<Op>(load(v))); };
    if constexpr (std::is_same_v<T, float> && kVectorOp<Op>) {
      map_unary_spans<float>(ctx, y, x, grain, f,
                             [](float* o, const float* v, int64_t n) { vector_span<Op>(o, v, n); });
    } else if constexpr (is_half_v<T> && kVectorOp<Op>) {
      // f16/bf16: the f32 vector kernel on widened chunks, one rounding (half_convert.h);
      // the runs it takes are f32's, which fused_elementwise.cpp's plan relies on.
      map_unary_spans<T>(ctx, y, x, grain, f, [&](T* o, const T* v, int64_t n) {
        unary_through_f32(x.dtype, reinterpret_cast<uint16_t*>(o), reinterpret_cast<const uint16_t*>(v), n,
                          [](float* fo, const float* fv, int64_t m) { vector_span<Op>(fo, fv, m); });
      });
    } else {
      map_unary<T, T>(ctx, y, x, grain, f);
    }
  };
  if constexpr (kNumericOp<Op>)
    return dispatch_numeric(x.dtype, body);
  else
    return dispatch_float(x.dtype, body);
}

}  // namespace

ctl_status* run_unary(const OpContext& ctx) {
  View x, y;
  CTL_SDK_RETURN_IF_ERROR(ctx.one_to_one(&x, &y));
  if (y.numel() == 0) return nullptr;
  bool done = false;
  switch (ctx.call->op) {
#define CTL_CPU_UNARY(op)         \
  case op:                        \
    done = run_op<op>(ctx, y, x); \
    break;
    CTL_CPU_UNARY(CTL_OP_NEG)
    CTL_CPU_UNARY(CTL_OP_ABS)
    CTL_CPU_UNARY(CTL_OP_EXP)
    CTL_CPU_UNARY(CTL_OP_LOG)
    CTL_CPU_UNARY(CTL_OP_SQRT)
    CTL_CPU_UNARY(CTL_OP_RSQRT)
    CTL_CPU_UNARY(CTL_OP_TANH)
    CTL_CPU_UNARY(CTL_OP_SIGMOID)
    CTL_CPU_UNARY(CTL_OP_RELU)
    CTL_CPU_UNARY(CTL_OP_GELU)
    CTL_CPU_UNARY(CTL_OP_GELU_TANH)
    CTL_CPU_UNARY(CTL_OP_SILU)
    CTL_CPU_UNARY(CTL_OP_SIN)
    CTL_CPU_UNARY(CTL_OP_COS)
    CTL_CPU_UNARY(CTL_OP_RECIPROCAL)
#undef CTL_CPU_UNARY
    default:
      break;
  }
  if (!done) return ctx.fail(CTL_STATUS_UNSUPPORTED, "dtype %s is not supported", dtype_name(x.dtype));
  return nullptr;
}

}  // namespace catalyst::cpu
