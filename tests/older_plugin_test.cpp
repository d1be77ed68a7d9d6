// older_plugin_test.cpp — a plugin built against the smallest 1.0 structs (its function
// table ends at op_execute, its device_properties writes only up to compute_units; see
// plugins/plugin_older_abi.c) loads under this core, gets the core's defaults for everything
// it does not know, and works: host round trips, zeros/full through op_execute(FILL), add.
#include <dlpack/dlpack.h>

#include "test_support.hpp"

using namespace ctltest;

namespace {

class OlderPlugin : public ::testing::Test {
 protected:
  void SetUp() override {
    paths_ = {CTL_TEST_OLDER_ABI_PLUGIN};
    ctl_runtime_options o = options(&paths_, &log_, /*reference=*/true);
    ctl_runtime* r = nullptr;
    CTL_ASSERT_OK(ctl_runtime_create(&o, &r));
    runtime_.reset(r);
    device_ = find_device(r, "older");
    ASSERT_NE(device_, nullptr) << "the older plugin has no device; log:\n" << log_.all();
  }

  std::vector<const char*> paths_;
  LogSink log_;
  Runtime runtime_;
  ctl_device* device_ = nullptr;
};

TEST_F(OlderPlugin, IsAcceptedAsAnOlderTable) {
  ASSERT_GE(ctl_runtime_plugin_count(runtime_.get()), 1u);
  ctl_plugin_info info{};
  info.struct_size = CTL_PLUGIN_INFO_STRUCT_SIZE;
  CTL_ASSERT_OK(ctl_runtime_plugin_info(runtime_.get(), 0, &info));
  EXPECT_STREQ(info.path, CTL_TEST_OLDER_ABI_PLUGIN);
  EXPECT_TRUE(info.accepted) << info.reason;
  EXPECT_STREQ(info.name, "older");
  EXPECT_STREQ(info.version, "1.0-min");
  EXPECT_STREQ(info.source, "options");
  EXPECT_EQ(info.abi_major, 1u);
  EXPECT_EQ(info.abi_minor, 0u);
  EXPECT_EQ(info.device_count, 1u);
  EXPECT_NE(std::string(info.reason).find("older table"), std::string::npos) << info.reason;
}

TEST_F(OlderPlugin, DeviceInfoHasTheCoresDefaultsPastWhatThePluginWrote) {
  ctl_device_info info;
  std::memset(&info, 0x5a, sizeof info);  // garbage everywhere: every field must be written
  info.struct_size = CTL_DEVICE_INFO_STRUCT_SIZE;
  info.next = nullptr;
  CTL_ASSERT_OK(ctl_device_get_info(device_, &info));
  // What the plugin wrote.
  EXPECT_STREQ(info.name, "older test device");
  EXPECT_STREQ(info.vendor, "Catalyst tests");
  EXPECT_STREQ(info.driver_version, "1.0-min");
  EXPECT_STREQ(info.plugin_name, "older");
  EXPECT_EQ(info.kind, CTL_DEVICE_KIND_ACCELERATOR);
  EXPECT_EQ(info.memory_total, 1u << 20);
  EXPECT_EQ(info.memory_free, 1u << 19);
  EXPECT_EQ(info.compute_units, 3u);
  // The core's defaults for what it did not.
  ASSERT_NE(info.pci_bus_id, nullptr);
  EXPECT_STREQ(info.pci_bus_id, "");
  EXPECT_EQ(info.numa_node, -1);
  EXPECT_FALSE(info.has_uuid);
  EXPECT_EQ(info.dtype_mask, CTL_DTYPE_BIT(CTL_DTYPE_F32) | CTL_DTYPE_BIT(CTL_DTYPE_I32) |
                                 CTL_DTYPE_BIT(CTL_DTYPE_I64) | CTL_DTYPE_BIT(CTL_DTYPE_BOOL));
  EXPECT_FALSE(info.host_visible);
  EXPECT_EQ(info.struct_size, CTL_DEVICE_INFO_STRUCT_SIZE);
}

TEST_F(OlderPlugin, IsTheDefaultDeviceAsTheOnlyAccelerator) {
  ctl_device* device = nullptr;
  CTL_ASSERT_OK(ctl_runtime_default_device(runtime_.get(), &device));
  EXPECT_EQ(device, device_);
}

TEST_F(OlderPlugin, HostRoundTripsEveryRequiredDtype) {
  const std::vector<float> f = {1.5f, -2.0f, 0.0f, 3.25f, -0.0f, 1e30f};
  auto tf = from_vector(device_, CTL_DTYPE_F32, {2, 3}, f);
  ASSERT_TRUE(tf);
  EXPECT_EQ(std::memcmp(to_vector<float>(tf.get()).data(), f.data(), f.size() * 4), 0);
  const std::vector<int32_t> i = {INT32_MIN, -1, 0, 1, INT32_MAX};
  auto ti = from_vector(device_, CTL_DTYPE_I32, {5}, i);
  EXPECT_EQ(to_vector<int32_t>(ti.get()), i);
  const std::vector<int64_t> l = {INT64_MIN, 42, INT64_MAX};
  auto tl = from_vector(device_, CTL_DTYPE_I64, {3, 1}, l);
  EXPECT_EQ(to_vector<int64_t>(tl.get()), l);
  const std::vector<uint8_t> b = {1, 0, 0, 1};
  auto tb = from_vector(device_, CTL_DTYPE_BOOL, {2, 2}, b);
  EXPECT_EQ(to_vector<uint8_t>(tb.get()), b);
  // Rank 0 and empty.
  auto scalar = from_vector(device_, CTL_DTYPE_F32, {}, std::vector<float>{7.0f});
  EXPECT_EQ(to_vector<float>(scalar.get()), std::vector<float>{7.0f});
  auto empty = from_vector(device_, CTL_DTYPE_F32, {0, 3}, std::vector<float>{});
  EXPECT_EQ(ctl_tensor_numel(empty.get()), 0);
  EXPECT_TRUE(to_vector<float>(empty.get()).empty());
}

TEST_F(OlderPlugin, ZerosAndFullGoThroughOpExecute) {
  const int64_t shape[] = {3, 4};
  ctl_tensor* z = nullptr;
  CTL_ASSERT_OK(ctl_tensor_create_zeros(device_, CTL_DTYPE_F32, 2, shape, &z));
  Tensor zeros(z);
  EXPECT_EQ(to_vector<float>(z), std::vector<float>(12, 0.0f));
  ctl_tensor* f = nullptr;
  CTL_ASSERT_OK(ctl_tensor_create_full(device_, CTL_DTYPE_I64, 2, shape, -9.0, &f));
  Tensor full(f);
  EXPECT_EQ(to_vector<int64_t>(f), std::vector<int64_t>(12, -9));
  ctl_tensor* b = nullptr;
  CTL_ASSERT_OK(ctl_tensor_create_full(device_, CTL_DTYPE_BOOL, 1, shape, 2.0, &b));
  Tensor full_bool(b);
  EXPECT_EQ(to_vector<uint8_t>(b), std::vector<uint8_t>(3, 1));
}

TEST_F(OlderPlugin, AddIsCorrectWithBroadcastAndStridedInputs) {
  auto a = from_vector(device_, CTL_DTYPE_F32, {2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6});
  auto b = from_vector(device_, CTL_DTYPE_F32, {3}, std::vector<float>{10, 20, 30});
  ctl_tensor* c = nullptr;
  CTL_ASSERT_OK(ctl_op_binary(CTL_OP_ADD, a.get(), b.get(), &c));
  Tensor sum(c);
  EXPECT_EQ(to_vector<float>(c), (std::vector<float>{11, 22, 33, 14, 25, 36}));
  // a^T (3x2, strided) + column (3x1).
  ctl_tensor* at = nullptr;
  CTL_ASSERT_OK(ctl_tensor_transpose(a.get(), 0, 1, &at));
  Tensor a_t(at);
  auto col = from_vector(device_, CTL_DTYPE_F32, {3, 1}, std::vector<float>{100, 200, 300});
  ctl_tensor* d = nullptr;
  CTL_ASSERT_OK(ctl_op_binary(CTL_OP_ADD, at, col.get(), &d));
  Tensor sum2(d);
  EXPECT_EQ(to_vector<float>(d), (std::vector<float>{101, 104, 202, 205, 303, 306}));
  // The transposed view itself reads back through COPY.
  EXPECT_EQ(to_vector<float>(at), (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

TEST_F(OlderPlugin, WhatItCannotDoIsReportedNotCrashed) {
  auto a = from_vector(device_, CTL_DTYPE_F32, {2}, std::vector<float>{1, 2});
  ctl_tensor* out = reinterpret_cast<ctl_tensor*>(0x1234);
  Status s(ctl_op_binary(CTL_OP_MUL, a.get(), a.get(), &out));
  EXPECT_EQ(ctl_status_get_code(s.get()), CTL_STATUS_UNSUPPORTED) << describe(s.get());
  EXPECT_EQ(out, reinterpret_cast<ctl_tensor*>(0x1234));
  auto i = from_vector(device_, CTL_DTYPE_I32, {2}, std::vector<int32_t>{1, 2});
  Status s2(ctl_op_binary(CTL_OP_ADD, i.get(), i.get(), &out));
  EXPECT_EQ(ctl_status_get_code(s2.get()), CTL_STATUS_UNSUPPORTED) << describe(s2.get());
  EXPECT_NE(std::string(ctl_status_get_message(s2.get())).find("older: add supports f32 only"), std::string::npos)
      << describe(s2.get());
  // f64 is not in the default dtype mask.
  const int64_t shape[] = {2};
  Status s3(ctl_tensor_create(device_, CTL_DTYPE_F64, 1, shape, &out));
  EXPECT_EQ(ctl_status_get_code(s3.get()), CTL_STATUS_UNSUPPORTED) << describe(s3.get());
  // Not host-visible (no buffer_host_pointer): DLPack export is refused.
  DLManagedTensor* managed = nullptr;
  Status s4(ctl_tensor_to_dlpack(a.get(), &managed));
  EXPECT_EQ(ctl_status_get_code(s4.get()), CTL_STATUS_UNSUPPORTED) << describe(s4.get());
  EXPECT_EQ(managed, nullptr);
  EXPECT_EQ(out, reinterpret_cast<ctl_tensor*>(0x1234));
  CTL_EXPECT_OK(ctl_device_synchronize(device_));
}

TEST_F(OlderPlugin, TensorsMoveToAndFromAnotherPlugin) {
  ctl_device* reference = find_device(runtime_.get(), "reference");
  ASSERT_NE(reference, nullptr);
  auto a = from_vector(device_, CTL_DTYPE_I32, {2, 2}, std::vector<int32_t>{1, 2, 3, 4});
  ctl_tensor* on_ref = nullptr;
  CTL_ASSERT_OK(ctl_tensor_to_device(a.get(), reference, &on_ref));
  Tensor r(on_ref);
  ctl_tensor* back = nullptr;
  CTL_ASSERT_OK(ctl_tensor_to_device(on_ref, device_, &back));
  Tensor b(back);
  EXPECT_EQ(ctl_tensor_device(back), device_);
  EXPECT_EQ(to_vector<int32_t>(back), (std::vector<int32_t>{1, 2, 3, 4}));
  ctl_tensor* same = nullptr;
  CTL_ASSERT_OK(ctl_tensor_to_device(a.get(), device_, &same));  // a copy on the same device
  Tensor s(same);
  EXPECT_EQ(to_vector<int32_t>(same), (std::vector<int32_t>{1, 2, 3, 4}));
}

}  // namespace
