// elementwise_unary.cpp — neg, abs, relu (numeric) and the float functions exp ... reciprocal.
// Values are loaded into their compute type (f32 for f16/bf16) and stored back rounded.
#include <cmath>
#include <type_traits>

#include "dtype_dispatch.h"
#include "elementwise.h"
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
  else if constexpr (Op == CTL_OP_SIGMOID)
    return C(1) / (C(1) + std::exp(-x));
  else if constexpr (Op == CTL_OP_GELU)
    return x * C(0.5) * (C(1) + std::erf(x / C(1.4142135623730950488)));
  else if constexpr (Op == CTL_OP_GELU_TANH) {
    return C(0.5) * x * (C(1) + std::tanh(C(0.79788456080286535588) * (x + C(0.044715) * x * x * x)));
  } else if constexpr (Op == CTL_OP_SILU)
    return x * (C(1) / (C(1) + std::exp(-x)));
  else if constexpr (Op == CTL_OP_SIN)
    return std::sin(x);
  else if constexpr (Op == CTL_OP_COS)
    return std::cos(x);
  else if constexpr (Op == CTL_OP_RECIPROCAL)
    return C(1) / x;
}

template <ctl_op_id Op>
constexpr bool kNumericOp = Op == CTL_OP_NEG || Op == CTL_OP_ABS || Op == CTL_OP_RELU;

// The float functions with a vector form in vec_kernels.h (f32 only).
template <ctl_op_id Op>
constexpr bool kVectorOp =
    Op == CTL_OP_EXP || Op == CTL_OP_TANH || Op == CTL_OP_SIGMOID || Op == CTL_OP_SILU || Op == CTL_OP_GELU_TANH;

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

template <ctl_op_id Op>
bool run_op(const OpContext& ctx, const View& y, const View& x) {
  constexpr int64_t grain =
      kNumericOp<Op> || Op == CTL_OP_SQRT || Op == CTL_OP_RSQRT || Op == CTL_OP_RECIPROCAL ? kCheapGrain : kCostlyGrain;
  auto body = [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto f = [](T v) { return store<T>(apply<Op>(load(v))); };
    if constexpr (std::is_same_v<T, float> && kVectorOp<Op>) {
      const VecKernels& k = vec_kernels();
      map_unary_spans<float>(ctx, y, x, grain, f,
                             [&](float* o, const float* v, int64_t n) { k.unary(vec_unary<Op>(), o, v, n); });
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
