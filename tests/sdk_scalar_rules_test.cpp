// sdk_scalar_rules_test.cpp — the SDK's scalar rules of docs/ops.md (sdk/scalar_rules.hpp) on
// their own, at the values where a plain C++ expression goes wrong: signed zeros and NaN in
// maximum / minimum, wrapping integer division and power, argmax's NaN rule, the gelus far
// left of 0, and casts that must round once or saturate.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "catalyst/sdk/scalar_rules.hpp"

namespace {

namespace sdk = catalyst::sdk;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(ScalarRules, MaximumMinimumOrderSignedZerosAndPropagateNaN) {
  EXPECT_FALSE(std::signbit(sdk::ieee_maximum(-0.0, 0.0)));
  EXPECT_FALSE(std::signbit(sdk::ieee_maximum(0.0, -0.0)));
  EXPECT_TRUE(std::signbit(sdk::ieee_minimum(-0.0, 0.0)));
  EXPECT_TRUE(std::signbit(sdk::ieee_minimum(0.0, -0.0)));
  EXPECT_TRUE(std::isnan(sdk::ieee_maximum(kNaN, 1.0)));
  EXPECT_TRUE(std::isnan(sdk::ieee_maximum(1.0, kNaN)));
  EXPECT_TRUE(std::isnan(sdk::ieee_minimum(-INFINITY, kNaN)));
  EXPECT_EQ(sdk::ieee_maximum(-2.0, 3.0), 3.0);
  EXPECT_EQ(sdk::ieee_minimum(-2.0, 3.0), -2.0);
  EXPECT_FALSE(std::signbit(sdk::binary_op<float>(CTL_OP_MAXIMUM, -0.0f, 0.0f)));
  EXPECT_TRUE(std::signbit(sdk::binary_op<float>(CTL_OP_MINIMUM, 0.0f, -0.0f)));
  EXPECT_EQ(sdk::binary_op<int32_t>(CTL_OP_MAXIMUM, -5, 4), 4);
  EXPECT_EQ(sdk::binary_op<int64_t>(CTL_OP_MINIMUM, -5, 4), -5);
}

TEST(ScalarRules, IntegerArithmeticWraps) {
  constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min(), kMax32 = std::numeric_limits<int32_t>::max();
  constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(sdk::binary_op<int32_t>(CTL_OP_ADD, kMax32, 1), kMin32);
  EXPECT_EQ(sdk::binary_op<int32_t>(CTL_OP_SUB, kMin32, 1), kMax32);
  EXPECT_EQ(sdk::binary_op<int32_t>(CTL_OP_MUL, 65536, 65536), 0);
  EXPECT_EQ(sdk::binary_op<int64_t>(CTL_OP_MUL, kMin64, -1), kMin64);
  EXPECT_EQ(sdk::binary_op<uint8_t>(CTL_OP_MUL, 200, 2), 144);
  EXPECT_EQ(sdk::binary_op<int8_t>(CTL_OP_ADD, 127, 1), -128);
  EXPECT_EQ(sdk::unary_op<int32_t>(CTL_OP_NEG, kMin32), kMin32);
  EXPECT_EQ(sdk::unary_op<int32_t>(CTL_OP_ABS, kMin32), kMin32);
  EXPECT_EQ(sdk::unary_op<int64_t>(CTL_OP_ABS, -7), 7);
  EXPECT_EQ(sdk::unary_op<uint8_t>(CTL_OP_NEG, 1), 255);
  EXPECT_EQ(sdk::unary_op<uint8_t>(CTL_OP_ABS, 200), 200);
  EXPECT_EQ(sdk::unary_op<int32_t>(CTL_OP_RELU, -3), 0);
  EXPECT_EQ(sdk::unary_op<int32_t>(CTL_OP_RELU, 3), 3);
}

TEST(ScalarRules, IntegerDivisionTruncatesAndNeverTraps) {
  constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();
  constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(sdk::binary_op<int32_t>(CTL_OP_DIV, 7, -2), -3);
  EXPECT_EQ(sdk::binary_op<int32_t>(CTL_OP_DIV, -7, 2), -3);
  EXPECT_EQ(sdk::binary_op<int32_t>(CTL_OP_DIV, 7, 0), 0);
  EXPECT_EQ(sdk::binary_op<int32_t>(CTL_OP_DIV, kMin32, -1), kMin32);
  EXPECT_EQ(sdk::binary_op<int64_t>(CTL_OP_DIV, kMin64, -1), kMin64);
  EXPECT_EQ(sdk::binary_op<int64_t>(CTL_OP_DIV, 9, -1), -9);
  EXPECT_EQ(sdk::binary_op<uint8_t>(CTL_OP_DIV, 255, 0), 0);
  EXPECT_EQ(sdk::binary_op<uint8_t>(CTL_OP_DIV, 255, 2), 127);
}

TEST(ScalarRules, IntegerPowerWrapsAndHandlesNegativeExponents) {
  EXPECT_EQ(sdk::binary_op<int32_t>(CTL_OP_POW, 2, 10), 1024);
  EXPECT_EQ(sdk::binary_op<int32_t>(CTL_OP_POW, 0, 0), 1);
  EXPECT_EQ(sdk::binary_op<int32_t>(CTL_OP_POW, -3, 3), -27);
  uint32_t wrapped = 1;  // 3^40 mod 2^32, by repeated multiplication
  for (int i = 0; i < 40; ++i) wrapped *= 3u;
  EXPECT_EQ(sdk::binary_op<int32_t>(CTL_OP_POW, 3, 40), static_cast<int32_t>(wrapped));
  EXPECT_EQ(sdk::binary_op<int8_t>(CTL_OP_POW, 3, 5), -13);  // 243 wraps
  EXPECT_EQ(sdk::binary_op<int64_t>(CTL_OP_POW, 2, 64), 0);
  EXPECT_EQ(sdk::binary_op<int32_t>(CTL_OP_POW, 1, -3), 1);
  EXPECT_EQ(sdk::binary_op<int32_t>(CTL_OP_POW, -1, -3), -1);
  EXPECT_EQ(sdk::binary_op<int32_t>(CTL_OP_POW, -1, -2), 1);
  EXPECT_EQ(sdk::binary_op<int64_t>(CTL_OP_POW, 2, -1), 0);
  EXPECT_EQ(sdk::binary_op<int64_t>(CTL_OP_POW, 0, -1), 0);
  EXPECT_EQ(sdk::binary_op<uint8_t>(CTL_OP_POW, 2, 9), 0);
}

TEST(ScalarRules, FloatUnaryOps) {
  EXPECT_NEAR(sdk::unary_op<double>(CTL_OP_GELU, 1.0), 0.8413447460685429, 1e-15);
  EXPECT_NEAR(sdk::unary_op<double>(CTL_OP_GELU_TANH, 1.0), 0.8411919906082768, 1e-15);
  EXPECT_NEAR(sdk::unary_op<double>(CTL_OP_SILU, 1.0), 0.7310585786300049, 1e-15);
  EXPECT_EQ(sdk::unary_op<float>(CTL_OP_SIGMOID, 0.0f), 0.5f);
  EXPECT_EQ(sdk::unary_op<float>(CTL_OP_RSQRT, 4.0f), 0.5f);
  EXPECT_EQ(sdk::unary_op<float>(CTL_OP_RECIPROCAL, -0.0f), -INFINITY);
  EXPECT_EQ(sdk::unary_op<float>(CTL_OP_EXP, 100.0f), INFINITY);  // rounds to f32 once
  // Far left of 0 the gelus are tiny, not 0: 1 + erf and 1 + tanh would cancel to 0 there.
  const double gelu = sdk::unary_op<double>(CTL_OP_GELU, -10.0);
  EXPECT_NEAR(gelu / -7.619853024160526e-23, 1.0, 1e-12);
  const double z = 0.79788456080286535588 * (-10.0 + 0.044715 * -1000.0);
  const double gelu_tanh = sdk::unary_op<double>(CTL_OP_GELU_TANH, -10.0);
  EXPECT_LT(gelu_tanh, 0.0);
  EXPECT_NEAR(gelu_tanh / (-10.0 * std::exp(2.0 * z)), 1.0, 1e-12);
  EXPECT_LT(sdk::unary_op<float>(CTL_OP_GELU, -10.0f), 0.0f);
  // relu: NaN stays NaN, -0 becomes +0.
  EXPECT_TRUE(std::isnan(sdk::unary_op<float>(CTL_OP_RELU, NAN)));
  EXPECT_FALSE(std::signbit(sdk::unary_op<float>(CTL_OP_RELU, -0.0f)));
  EXPECT_EQ(sdk::unary_op<float>(CTL_OP_NEG, 2.5f), -2.5f);
  EXPECT_FALSE(std::signbit(sdk::activation_op(CTL_ACTIVATION_RELU, -0.0)));
  EXPECT_EQ(sdk::activation_op(CTL_ACTIVATION_NONE, -3.0), -3.0);
  EXPECT_EQ(sdk::activation_op(CTL_ACTIVATION_GELU, 1.0), sdk::gelu(1.0));
}

TEST(ScalarRules, FloatBinaryOpsAndComparisons) {
  EXPECT_EQ(sdk::binary_op<float>(CTL_OP_DIV, 1.0f, 0.0f), INFINITY);
  EXPECT_EQ(sdk::binary_op<float>(CTL_OP_POW, 2.0f, 10.0f), 1024.0f);
  EXPECT_EQ(sdk::binary_op<float>(CTL_OP_ADD, 0.1f, 0.2f), 0.1f + 0.2f);  // rounded once to f32
  EXPECT_FALSE(sdk::compare_op<double>(CTL_OP_EQ, kNaN, kNaN));
  EXPECT_TRUE(sdk::compare_op<double>(CTL_OP_NE, kNaN, kNaN));
  EXPECT_FALSE(sdk::compare_op<double>(CTL_OP_LT, kNaN, 1.0));
  EXPECT_FALSE(sdk::compare_op<double>(CTL_OP_GE, 1.0, kNaN));
  EXPECT_TRUE(sdk::compare_op<double>(CTL_OP_EQ, -0.0, 0.0));
  EXPECT_TRUE(sdk::compare_op<int64_t>(CTL_OP_LE, -3, -3));
  EXPECT_TRUE(sdk::compare_op<bool>(CTL_OP_GT, true, false));
}

// The index argmax / argmin pick in `values` by arg_replaces, as a reduction walks them.
template <class T>
int64_t arg_of(const std::vector<T>& values, bool is_max) {
  int64_t best = 0;
  for (size_t i = 1; i < values.size(); ++i) {
    if (sdk::arg_replaces(values[i], values[best], is_max)) best = static_cast<int64_t>(i);
  }
  return best;
}

TEST(ScalarRules, ArgmaxTakesTheFirstNaNElseTheFirstExtreme) {
  EXPECT_EQ(arg_of<double>({1.0, kNaN, 3.0, kNaN}, true), 1);
  EXPECT_EQ(arg_of<double>({1.0, kNaN, -3.0, kNaN}, false), 1);
  EXPECT_EQ(arg_of<double>({kNaN, 5.0}, true), 0);
  EXPECT_EQ(arg_of<double>({2.0, 5.0, 5.0}, true), 1);
  EXPECT_EQ(arg_of<double>({3.0, 1.0, 1.0}, false), 1);
  EXPECT_EQ(arg_of<double>({0.0, -0.0}, false), 0);  // equal values: the first
  EXPECT_EQ(arg_of<int32_t>({4, 9, 2, 9}, true), 1);
  EXPECT_EQ(arg_of<int64_t>({4, 9, 2, 2}, false), 2);
}

TEST(ScalarRules, CastsTruncateSaturateAndRoundOnce) {
  constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min(), kMax32 = std::numeric_limits<int32_t>::max();
  EXPECT_EQ(sdk::cast_value<int32_t>(2.9f), 2);
  EXPECT_EQ(sdk::cast_value<int32_t>(-2.9f), -2);
  EXPECT_EQ(sdk::cast_value<int32_t>(NAN), 0);
  EXPECT_EQ(sdk::cast_value<int32_t>(1e10f), kMax32);
  EXPECT_EQ(sdk::cast_value<int32_t>(-1e10f), kMin32);
  EXPECT_EQ(sdk::cast_value<int64_t>(INFINITY), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(sdk::cast_value<uint8_t>(-5.0f), 0);
  EXPECT_TRUE(sdk::cast_value<bool>(NAN));
  EXPECT_FALSE(sdk::cast_value<bool>(-0.0f));
  EXPECT_TRUE(sdk::cast_value<bool>(int64_t{1} << 40));  // not truncated to a byte first
  EXPECT_EQ(sdk::cast_value<float>(true), 1.0f);
  EXPECT_EQ(sdk::cast_value<int32_t>((int64_t{1} << 32) + 5), 5);  // integers wrap
  EXPECT_EQ(sdk::cast_value<uint8_t>(int32_t{300}), 44);
  EXPECT_EQ(sdk::cast_value<int8_t>(int32_t{200}), -56);
  // 2^60 + 2^36 + 1 is just above the midpoint of two floats: one rounding gives the upper,
  // rounding through double first (to 2^60 + 2^36, a tie) gives the lower.
  const int64_t above_midpoint = (int64_t{1} << 60) + (int64_t{1} << 36) + 1;
  EXPECT_EQ(sdk::cast_value<float>(above_midpoint), std::ldexp(1.0f, 60) + std::ldexp(1.0f, 37));
}

TEST(ScalarRules, IndexPositionCountsFromTheEndAndRefusesOutOfRange) {
  EXPECT_EQ(sdk::index_position(0, 4), 0);
  EXPECT_EQ(sdk::index_position(3, 4), 3);
  EXPECT_EQ(sdk::index_position(-1, 4), 3);
  EXPECT_EQ(sdk::index_position(-4, 4), 0);
  EXPECT_EQ(sdk::index_position(4, 4), -1);
  EXPECT_EQ(sdk::index_position(-5, 4), -1);
  EXPECT_EQ(sdk::index_position(0, 0), -1);  // an empty axis has no position
  EXPECT_EQ(sdk::index_position(std::numeric_limits<int64_t>::min(), 4), -1);
}

}  // namespace
