// plugin_rejection_test.cpp — broken plugins passed in ctl_runtime_options.plugin_paths
// beside the real CPU plugin are each rejected with a reason in words (through
// ctl_runtime_plugin_info and the log callback), are never called into after rejection,
// and do not stop the runtime from working: the CPU device still runs an op correctly.
#include "test_support.hpp"

using namespace ctltest;

namespace {

struct Expected {
  const char* path;
  std::vector<std::string> reason_parts;  // every one must appear in the reason
};

class PluginRejection : public ::testing::Test {
 protected:
  void SetUp() override {
    paths_ = {CTL_TEST_NO_ENTRY_PLUGIN,   CTL_TEST_QUERY_NULL_PLUGIN, CTL_TEST_ABI_MAJOR2_PLUGIN,
              CTL_TEST_NULL_ENTRY_PLUGIN, CTL_TEST_GARBAGE_PLUGIN,    CTL_TEST_CPU_PLUGIN};
    ctl_runtime_options o = options(&paths_, &log_);
    ctl_runtime* r = nullptr;
    CTL_ASSERT_OK(ctl_runtime_create(&o, &r));
    runtime_.reset(r);
  }

  ctl_plugin_info info(size_t index) {
    ctl_plugin_info i{};
    i.struct_size = CTL_PLUGIN_INFO_STRUCT_SIZE;
    Status s(ctl_runtime_plugin_info(runtime_.get(), index, &i));
    EXPECT_EQ(s, nullptr) << describe(s.get());
    return i;
  }

  std::vector<const char*> paths_;
  LogSink log_;
  Runtime runtime_;
};

TEST_F(PluginRejection, EachBrokenPluginIsRejectedWithAClearReason) {
  const std::vector<Expected> expected = {
      {CTL_TEST_NO_ENTRY_PLUGIN, {"missing entry symbol", "ctl_plugin_query"}},
      {CTL_TEST_QUERY_NULL_PLUGIN,
       {"returned NULL", "test-query-null: no supported accelerator is present on this host"}},
      {CTL_TEST_ABI_MAJOR2_PLUGIN, {"incompatible ABI major: plugin 2, core 1"}},
      {CTL_TEST_NULL_ENTRY_PLUGIN, {"required table entry buffer_read is NULL"}},
      {CTL_TEST_GARBAGE_PLUGIN, {"dlopen failed", "libcatalyst-test-garbage.so"}},
  };
  ASSERT_EQ(ctl_runtime_plugin_count(runtime_.get()), paths_.size()) << log_.all();
  for (size_t i = 0; i < expected.size(); ++i) {
    const ctl_plugin_info p = info(i);
    SCOPED_TRACE(p.path);
    EXPECT_STREQ(p.path, expected[i].path);
    EXPECT_FALSE(p.accepted);
    EXPECT_STREQ(p.source, "options");
    EXPECT_EQ(p.abi_major, 0u);
    EXPECT_EQ(p.abi_minor, 0u);
    EXPECT_EQ(p.device_count, 0u);
    ASSERT_NE(p.reason, nullptr);
    for (const auto& part : expected[i].reason_parts) {
      EXPECT_NE(std::string(p.reason).find(part), std::string::npos)
          << "reason \"" << p.reason << "\" lacks \"" << part << "\"";
      // A plugin given explicitly in the options and rejected is a warning in the log.
      EXPECT_TRUE(log_.contains(part)) << "log lacks \"" << part << "\"; log:\n" << log_.all();
    }
  }
  // The plugin's own words reach the log as it says them, too.
  EXPECT_TRUE(log_.contains("no supported accelerator is present on this host"));
}

TEST_F(PluginRejection, TheCpuPluginIsStillAcceptedAndWorks) {
  const ctl_plugin_info p = info(paths_.size() - 1);
  EXPECT_TRUE(p.accepted) << p.reason;
  EXPECT_STREQ(p.name, "cpu");
  EXPECT_EQ(p.abi_major, 1u);
  EXPECT_EQ(p.abi_minor, 5u);  // the CPU plugin runs the ABI 1.5 op fused_elementwise
  EXPECT_GE(p.device_count, 1u);
  ASSERT_EQ(ctl_runtime_device_count(runtime_.get()), p.device_count);

  ctl_device* device = nullptr;
  CTL_ASSERT_OK(ctl_runtime_default_device(runtime_.get(), &device));
  auto a = from_vector(device, CTL_DTYPE_F32, {2, 2}, std::vector<float>{1, 2, 3, 4});
  auto b = from_vector(device, CTL_DTYPE_F32, {2, 2}, std::vector<float>{5, 6, 7, 8});
  ctl_tensor* c = nullptr;
  CTL_ASSERT_OK(ctl_op_matmul(a.get(), b.get(), &c));
  Tensor product(c);
  EXPECT_EQ(to_vector<float>(c), (std::vector<float>{19, 22, 43, 50}));
}

TEST_F(PluginRejection, OutOfRangeInfoIndexIsRefused) {
  ctl_plugin_info i{};
  i.struct_size = CTL_PLUGIN_INFO_STRUCT_SIZE;
  Status s(ctl_runtime_plugin_info(runtime_.get(), paths_.size(), &i));
  EXPECT_EQ(ctl_status_get_code(s.get()), CTL_STATUS_OUT_OF_RANGE);
}

// With discovery on and only broken plugins in a CATALYST_PLUGIN_PATH-like directory, the
// runtime still comes up (with the reference device) — rejection is never fatal.
TEST(PluginRejectionAlone, OnlyBrokenPluginsGiveARuntimeWithNoPluginDevices) {
  std::vector<const char*> paths = {CTL_TEST_NO_ENTRY_PLUGIN, CTL_TEST_ABI_MAJOR2_PLUGIN, CTL_TEST_GARBAGE_PLUGIN};
  LogSink log;
  ctl_runtime_options o = options(&paths, &log);
  ctl_runtime* r = nullptr;
  CTL_ASSERT_OK(ctl_runtime_create(&o, &r));
  Runtime runtime(r);
  EXPECT_EQ(ctl_runtime_device_count(r), 0u);
  ctl_device* device = reinterpret_cast<ctl_device*>(0x42);
  Status s(ctl_runtime_default_device(r, &device));
  EXPECT_EQ(ctl_status_get_code(s.get()), CTL_STATUS_NOT_FOUND);
  EXPECT_EQ(device, reinterpret_cast<ctl_device*>(0x42));
}

}  // namespace
