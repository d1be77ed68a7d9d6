// elementwise.cpp — reference kernels for the elementwise ops: unary (neg ... reciprocal),
// binary arithmetic (add ... minimum), comparisons (eq ... ge) and where. The core has
// already broadcast every input to the output shape, so all views share one shape.
#include <cmath>
#include <cstring>
#include <numbers>

#include "catalyst/sdk/view.hpp"
#include "reference_kernels.h"

namespace catalyst::reference {
namespace {

// x / (1 + exp(-y)). Where exp(-y) overflows (y < -709.8) the result may still be a normal
// number (silu down to x = -715): there 1 + e^y is 1 and the result is x e^(y + 32) e^-32,
// whose factors stay in range. x = -inf gives NaN (-inf * 0), as x * sigmoid(x) does.
double x_sigmoid(double x, double y) {
  if (y < -64) return x * std::exp(y + 32) * 1.2664165549094175723e-14;
  return x / (1 + std::exp(-y));
}

double unary_float(ctl_op_id op, double x) {
  switch (op) {
    case CTL_OP_NEG:
      return -x;
    case CTL_OP_ABS:
      return std::fabs(x);
    case CTL_OP_EXP:
      return std::exp(x);
    case CTL_OP_LOG:
      return std::log(x);
    case CTL_OP_SQRT:
      return std::sqrt(x);
    case CTL_OP_RSQRT:
      return 1.0 / std::sqrt(x);
    case CTL_OP_TANH:
      return std::tanh(x);
    case CTL_OP_SIGMOID:
      return 1.0 / (1.0 + std::exp(-x));
    case CTL_OP_RELU:
      return std::isnan(x) ? x : (x > 0.0 ? x : 0.0);  // -0 becomes +0
    case CTL_OP_GELU:
      return gelu_erf(x);
    case CTL_OP_GELU_TANH:
      return gelu_tanh(x);
    case CTL_OP_SILU:
      return x_sigmoid(x, x);
    case CTL_OP_SIN:
      return std::sin(x);
    case CTL_OP_COS:
      return std::cos(x);
    case CTL_OP_RECIPROCAL:
      return 1.0 / x;
    default:
      return std::nan("");
  }
}

int64_t unary_int(ctl_op_id op, int64_t x) {
  switch (op) {
    case CTL_OP_NEG:
      return wrap_sub(0, x);  // neg(INT_MIN) == INT_MIN after the store wraps
    case CTL_OP_ABS:
      return x < 0 ? wrap_sub(0, x) : x;
    case CTL_OP_RELU:
      return x > 0 ? x : 0;
    default:
      return 0;
  }
}

// Integer pow by squaring in wrapping arithmetic; negative exponents per docs/ops.md.
int64_t int_pow(int64_t base, int64_t exponent) {
  if (exponent < 0) {
    if (base == 1) return 1;
    if (base == -1) return (exponent & 1) ? -1 : 1;
    return 0;
  }
  int64_t result = 1;
  while (exponent > 0) {
    if (exponent & 1) result = wrap_mul(result, base);
    base = wrap_mul(base, base);
    exponent >>= 1;
  }
  return result;
}

double binary_float(ctl_op_id op, double a, double b) {
  switch (op) {
    case CTL_OP_ADD:
      return a + b;
    case CTL_OP_SUB:
      return a - b;
    case CTL_OP_MUL:
      return a * b;
    case CTL_OP_DIV:
      return a / b;
    case CTL_OP_POW:
      return std::pow(a, b);
    case CTL_OP_MAXIMUM:
      return float_maximum(a, b);
    case CTL_OP_MINIMUM:
      return float_minimum(a, b);
    default:
      return std::nan("");
  }
}

int64_t binary_int(ctl_op_id op, int64_t a, int64_t b) {
  switch (op) {
    case CTL_OP_ADD:
      return wrap_add(a, b);
    case CTL_OP_SUB:
      return wrap_sub(a, b);
    case CTL_OP_MUL:
      return wrap_mul(a, b);
    case CTL_OP_DIV:
      if (b == 0) return 0;
      if (b == -1) return wrap_sub(0, a);  // INT_MIN / -1 wraps to INT_MIN, no trap
      return a / b;                        // C++ truncates toward zero
    case CTL_OP_POW:
      return int_pow(a, b);
    case CTL_OP_MAXIMUM:
      return a > b ? a : b;
    case CTL_OP_MINIMUM:
      return a < b ? a : b;
    default:
      return 0;
  }
}

// Comparisons on doubles are false with NaN except ne, as IEEE says.
template <typename T>
bool compare(ctl_op_id op, T a, T b) {
  switch (op) {
    case CTL_OP_EQ:
      return a == b;
    case CTL_OP_NE:
      return a != b;
    case CTL_OP_LT:
      return a < b;
    case CTL_OP_LE:
      return a <= b;
    case CTL_OP_GT:
      return a > b;
    case CTL_OP_GE:
      return a >= b;
    default:
      return false;
  }
}

ctl_status* check_same_shapes(const Call& call) {
  const Operand& out = call.out[0];
  for (size_t i = 0; i < call.in.size(); ++i) {
    if (!same_shape(call.in[i], out))
      return call.invalid(
          "input[%zu] has shape %s but the output has %s (inputs must be "
          "broadcast to the output shape)",
          i, shape_string(call.in[i]).c_str(), shape_string(out).c_str());
  }
  return nullptr;
}

}  // namespace

// The order of the operands does not matter, not even for -0 and +0.
double float_maximum(double a, double b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

double float_minimum(double a, double b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

// ops.md's x * 0.5 * (1 + erf(x / sqrt(2))), as x * 0.5 * erfc(-x / sqrt(2)): the same
// function, but 1 + erf cancels for negative x (in double it was 0 from x = -8.3 on, where
// the f32 result is still a normal number). The suite's ulp sweep (math_cases.cpp) holds
// the reference to the exact function too.
double gelu_erf(double x) {
  return x * 0.5 * std::erfc(-x / std::sqrt(2.0));
}

// ops.md's 0.5 x (1 + tanh(z)), z = k (x + 0.044715 x^3), as x / (1 + exp(-2z)): 1 + tanh(z)
// cancels as tanh(z) nears -1 (0 in double from x = -6.7 on). x = -inf gives NaN in both.
double gelu_tanh(double x) {
  const double k = std::sqrt(2.0 / std::numbers::pi);
  return x_sigmoid(x, 2.0 * k * (x + 0.044715 * x * x * x));
}

ctl_status* run_unary(const Call& call) {
  CTL_SDK_RETURN_IF_ERROR(check_same_shapes(call));
  const Operand& x = call.in[0];
  const Operand& y = call.out[0];
  sdk::StridedWalker<2> walk(y.rank, y.shape);
  const size_t xs = walk.add(x.strides), ys = walk.add(y.strides);
  const bool floats = is_float(x.dtype);
  for (int64_t i = 0, n = y.numel(); i < n; ++i, walk.next()) {
    if (floats) {
      y.store(walk.offset(ys), unary_float(call.op, x.load(walk.offset(xs))));
    } else {
      y.store_i(walk.offset(ys), unary_int(call.op, x.load_i(walk.offset(xs))));
    }
  }
  return nullptr;
}

ctl_status* run_binary(const Call& call) {
  CTL_SDK_RETURN_IF_ERROR(check_same_shapes(call));
  const Operand& a = call.in[0];
  const Operand& b = call.in[1];
  const Operand& y = call.out[0];
  sdk::StridedWalker<3> walk(y.rank, y.shape);
  const size_t as = walk.add(a.strides), bs = walk.add(b.strides), ys = walk.add(y.strides);
  const bool floats = is_float(a.dtype);
  const bool comparison = call.op >= CTL_OP_EQ && call.op <= CTL_OP_GE;
  for (int64_t i = 0, n = y.numel(); i < n; ++i, walk.next()) {
    const int64_t ao = walk.offset(as), bo = walk.offset(bs), yo = walk.offset(ys);
    if (comparison) {
      // Integers compare as int64 so that i64 values beyond 2^53 stay exact.
      const bool r = floats ? compare(call.op, a.load(ao), b.load(bo)) : compare(call.op, a.load_i(ao), b.load_i(bo));
      y.store_i(yo, r ? 1 : 0);
    } else if (floats) {
      y.store(yo, binary_float(call.op, a.load(ao), b.load(bo)));
    } else {
      y.store_i(yo, binary_int(call.op, a.load_i(ao), b.load_i(bo)));
    }
  }
  return nullptr;
}

ctl_status* run_where(const Call& call) {
  CTL_SDK_RETURN_IF_ERROR(check_same_shapes(call));
  const Operand& cond = call.in[0];
  const Operand& a = call.in[1];
  const Operand& b = call.in[2];
  const Operand& y = call.out[0];
  sdk::StridedWalker<4> walk(y.rank, y.shape);
  const size_t cs = walk.add(cond.strides), as = walk.add(a.strides), bs = walk.add(b.strides),
               ys = walk.add(y.strides);
  for (int64_t i = 0, n = y.numel(); i < n; ++i, walk.next()) {
    // Copy the bytes: selection must not change a value (NaN payloads, -0).
    const unsigned char* source = cond.at(walk.offset(cs))[0] != 0 ? a.at(walk.offset(as)) : b.at(walk.offset(bs));
    std::memcpy(y.at(walk.offset(ys)), source, y.element_size);
  }
  return nullptr;
}

}  // namespace catalyst::reference
