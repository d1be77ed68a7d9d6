// cast_rounding_test.cpp — conversions to f16 and bf16 round once, from the exact value
// (docs/ops.md, "cast"), on the CPU plugin and on the reference device alike. Each input
// sits just above a tie of the 16-bit format but rounds to that tie in f32, so a
// conversion that goes through f32 first rounds twice and lands one ulp low.
#include <cmath>
#include <cstdint>

#include "catalyst/sdk/half.hpp"
#include "test_support.hpp"

using namespace ctltest;

namespace {

struct Case {
  const char* name;
  ctl_dtype from;
  double value;  // exactly representable in `from`
  ctl_dtype to;
  uint16_t expected_bits;
};

const Case kCases[] = {
    // 1 + 2^-11 is halfway between f16 neighbours 1 and 1 + 2^-10; 2^-40 breaks the tie up.
    {"f64 -> f16", CTL_DTYPE_F64, 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40), CTL_DTYPE_F16, 0x3C01},
    // 1 + 2^-8 is halfway between bf16 neighbours 1 and 1 + 2^-7.
    {"f64 -> bf16", CTL_DTYPE_F64, 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40), CTL_DTYPE_BF16, 0x3F81},
    // 2^25 + 2^17 is halfway between bf16 neighbours 2^25 and 2^25 + 2^18; +1 breaks the
    // tie up, but f32 (24 bits) drops the 1.
    {"i32 -> bf16", CTL_DTYPE_I32, 33554432.0 + 131072.0 + 1.0, CTL_DTYPE_BF16, 0x4C01},
    {"i64 -> bf16", CTL_DTYPE_I64, 33554432.0 + 131072.0 + 1.0, CTL_DTYPE_BF16, 0x4C01},
};

class CastRounding : public ::testing::TestWithParam<const char*> {};

TEST_P(CastRounding, RoundsOnceToNearestEven) {
  std::vector<const char*> paths = {CTL_TEST_CPU_PLUGIN};
  const ctl_runtime_options opts = options(&paths, nullptr, true);
  ctl_runtime* raw = nullptr;
  CTL_ASSERT_OK(ctl_runtime_create(&opts, &raw));
  Runtime runtime(raw);
  ctl_device* device = find_device(runtime.get(), GetParam());
  ASSERT_NE(device, nullptr) << "no " << GetParam() << " device";
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    // The source tensor holds the value exactly: it is built from its own dtype's bytes.
    ctl_tensor* source = nullptr;
    if (c.from == CTL_DTYPE_F64) {
      CTL_ASSERT_OK(ctl_tensor_from_host(device, c.from, 0, nullptr, &c.value, sizeof c.value, &source));
    } else if (c.from == CTL_DTYPE_I32) {
      const int32_t v = static_cast<int32_t>(c.value);
      CTL_ASSERT_OK(ctl_tensor_from_host(device, c.from, 0, nullptr, &v, sizeof v, &source));
    } else {
      const int64_t v = static_cast<int64_t>(c.value);
      CTL_ASSERT_OK(ctl_tensor_from_host(device, c.from, 0, nullptr, &v, sizeof v, &source));
    }
    Tensor source_owner(source);
    ctl_tensor* cast = nullptr;
    CTL_ASSERT_OK(ctl_op_cast(source, c.to, &cast));
    Tensor cast_owner(cast);
    uint16_t bits = 0;
    CTL_ASSERT_OK(ctl_tensor_to_host(cast, &bits, sizeof bits));
    EXPECT_EQ(bits, c.expected_bits) << "cast gave 0x" << std::hex << bits;

    if (c.from == CTL_DTYPE_F64) {  // fill takes its value as a double: the same rule
      ctl_tensor* filled = nullptr;
      CTL_ASSERT_OK(ctl_tensor_create_full(device, c.to, 0, nullptr, c.value, &filled));
      Tensor filled_owner(filled);
      CTL_ASSERT_OK(ctl_tensor_to_host(filled, &bits, sizeof bits));
      EXPECT_EQ(bits, c.expected_bits) << "fill gave 0x" << std::hex << bits;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, CastRounding, ::testing::Values("cpu", "reference"));

// The SDK conversions themselves, which both devices use.
TEST(SdkHalf, SingleRoundingFromDoubleAndInt64) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    const uint16_t bits = c.to == CTL_DTYPE_F16
                              ? (c.from == CTL_DTYPE_F64 ? catalyst::sdk::double_to_half(c.value)
                                                         : catalyst::sdk::int64_to_half(static_cast<int64_t>(c.value)))
                              : (c.from == CTL_DTYPE_F64 ? catalyst::sdk::double_to_bf16(c.value)
                                                         : catalyst::sdk::int64_to_bf16(static_cast<int64_t>(c.value)));
    EXPECT_EQ(bits, c.expected_bits);
    // Rounding through f32 really is wrong here, or the case would prove nothing.
    const uint16_t twice = c.to == CTL_DTYPE_F16 ? catalyst::sdk::float_to_half(static_cast<float>(c.value))
                                                 : catalyst::sdk::float_to_bf16(static_cast<float>(c.value));
    EXPECT_NE(twice, c.expected_bits);
  }
}

}  // namespace
