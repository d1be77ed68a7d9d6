// device_choice_test.cpp — device names ("cpu:0", "reference", "1") through
// ctl_runtime_find_device, the default device and CATALYST_DEVICE, and discover_only.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "test_support.hpp"

using namespace ctltest;

namespace {

class DeviceChoice : public ::testing::Test {
 protected:
  void TearDown() override { unsetenv("CATALYST_DEVICE"); }

  // A runtime with the CPU plugin (devices first) and the reference device after it.
  Runtime make_runtime() {
    paths_ = {CTL_TEST_CPU_PLUGIN};
    const ctl_runtime_options o = options(&paths_, &log_, /*reference=*/true);
    ctl_runtime* r = nullptr;
    Status s(ctl_runtime_create(&o, &r));
    EXPECT_EQ(s, nullptr) << describe(s.get());
    return Runtime(r);
  }

  static std::string plugin_of(ctl_device* device) {
    ctl_device_info info{};
    info.struct_size = CTL_DEVICE_INFO_STRUCT_SIZE;
    Status s(ctl_device_get_info(device, &info));
    return s ? "?" : info.plugin_name;
  }

  std::vector<const char*> paths_;
  LogSink log_;
};

TEST_F(DeviceChoice, NamesFindTheirDevice) {
  Runtime runtime = make_runtime();
  ctl_device* cpu = find_device(runtime.get(), "cpu");
  ctl_device* reference = find_device(runtime.get(), "reference");
  ASSERT_NE(cpu, nullptr);
  ASSERT_NE(reference, nullptr);
  const std::string reference_index = std::to_string(ctl_runtime_device_count(runtime.get()) - 1);
  const std::vector<std::pair<std::string, ctl_device*>> cases = {{"cpu", cpu},
                                                                  {"cpu:0", cpu},
                                                                  {"0", cpu},
                                                                  {"reference", reference},
                                                                  {"reference:0", reference},
                                                                  {reference_index, reference}};
  for (const auto& [name, want] : cases) {
    ctl_device* got = nullptr;
    Status s(ctl_runtime_find_device(runtime.get(), name.c_str(), &got));
    EXPECT_EQ(s, nullptr) << name << ": " << describe(s.get());
    EXPECT_EQ(got, want) << name;
  }
}

TEST_F(DeviceChoice, UnknownNamesSayWhichNamesExist) {
  Runtime runtime = make_runtime();
  const std::vector<std::pair<std::string, ctl_status_code>> cases = {
      {"cpu:7", CTL_STATUS_NOT_FOUND},       {"opencl", CTL_STATUS_NOT_FOUND},
      {"99", CTL_STATUS_NOT_FOUND},          {"cpu:x", CTL_STATUS_INVALID_ARGUMENT},
      {"cpu:", CTL_STATUS_INVALID_ARGUMENT}, {":0", CTL_STATUS_INVALID_ARGUMENT},
      {"", CTL_STATUS_INVALID_ARGUMENT},     {"cpu:99999999999999999999999", CTL_STATUS_INVALID_ARGUMENT}};
  for (const auto& [name, code] : cases) {
    ctl_device* got = nullptr;
    Status s(ctl_runtime_find_device(runtime.get(), name.c_str(), &got));
    ASSERT_NE(s, nullptr) << name;
    EXPECT_EQ(ctl_status_get_code(s.get()), code) << name << ": " << describe(s.get());
    const std::string message = ctl_status_get_message(s.get());
    EXPECT_NE(message.find("\"" + name + "\""), std::string::npos) << message;
    EXPECT_NE(message.find("0 = cpu:0"), std::string::npos) << message;
    EXPECT_EQ(got, nullptr) << name;
  }
  ctl_device* got = nullptr;
  Status s(ctl_runtime_find_device(runtime.get(), nullptr, &got));
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(ctl_status_get_code(s.get()), CTL_STATUS_INVALID_ARGUMENT);
}

TEST_F(DeviceChoice, DefaultIsTheCpuWithoutCatalystDevice) {
  unsetenv("CATALYST_DEVICE");
  Runtime runtime = make_runtime();
  ctl_device* device = nullptr;
  CTL_ASSERT_OK(ctl_runtime_default_device(runtime.get(), &device));
  EXPECT_EQ(plugin_of(device), "cpu");  // the reference device is never chosen by itself
  EXPECT_TRUE(log_.contains("default device: cpu:0 (the first device")) << log_.all();
}

TEST_F(DeviceChoice, CatalystDeviceChoosesTheDefault) {
  setenv("CATALYST_DEVICE", "reference", 1);
  Runtime runtime = make_runtime();
  ctl_device* device = nullptr;
  CTL_ASSERT_OK(ctl_runtime_default_device(runtime.get(), &device));
  EXPECT_EQ(plugin_of(device), "reference");
  EXPECT_TRUE(log_.contains("default device: reference:0 (chosen by CATALYST_DEVICE=\"reference\")")) << log_.all();
}

TEST_F(DeviceChoice, CatalystDeviceNamingNoDeviceIsAnError) {
  setenv("CATALYST_DEVICE", "opencl:3", 1);
  Runtime runtime = make_runtime();
  ctl_device* device = nullptr;
  Status s(ctl_runtime_default_device(runtime.get(), &device));
  ASSERT_NE(s, nullptr) << "no silent fallback";
  EXPECT_EQ(ctl_status_get_code(s.get()), CTL_STATUS_NOT_FOUND);
  const std::string message = ctl_status_get_message(s.get());
  EXPECT_NE(message.find("CATALYST_DEVICE=\"opencl:3\""), std::string::npos) << message;
  EXPECT_NE(message.find("0 = cpu:0"), std::string::npos) << message;
  EXPECT_NE(message.find("= reference:0"), std::string::npos) << message;
  EXPECT_EQ(device, nullptr);
}

TEST_F(DeviceChoice, DiscoverOnlyLoadsNothing) {
  std::vector<const char*> paths = {CTL_TEST_CPU_PLUGIN, CTL_TEST_NO_ENTRY_PLUGIN};
  ctl_runtime_options o = options(&paths, &log_, /*reference=*/true);
  o.discover_only = true;
  ctl_runtime* r = nullptr;
  CTL_ASSERT_OK(ctl_runtime_create(&o, &r));
  Runtime runtime(r);
  EXPECT_EQ(ctl_runtime_device_count(r), 0u);
  ASSERT_EQ(ctl_runtime_plugin_count(r), 2u);  // the files only: the reference is not a file
  for (size_t i = 0; i < 2; ++i) {
    ctl_plugin_info info{};
    info.struct_size = CTL_PLUGIN_INFO_STRUCT_SIZE;
    CTL_ASSERT_OK(ctl_runtime_plugin_info(r, i, &info));
    EXPECT_STREQ(info.path, paths[i]);
    EXPECT_STREQ(info.source, "options");
    EXPECT_FALSE(info.accepted);
    EXPECT_STREQ(info.reason, "not loaded: discover_only");
    EXPECT_STREQ(info.name, "");  // its query function never ran
  }
  EXPECT_FALSE(log_.contains("accepted:")) << "a plugin was loaded:\n" << log_.all();
}

}  // namespace
