// plugin_abi_version_test.cpp — every in-tree plugin reports the ABI version of the newest
// thing it implements. A plugin that runs a 1.2 op (sgd_step) but says 1.1 tells the loader,
// `catalyst devices` and vendors reading it as an example that it predates the op.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "catalyst_plugin.h"

#include "test_support.hpp"

using namespace ctltest;

namespace {

// The newest ABI minor that added anything a plugin implements: 1.5 (the optional
// fused_elementwise op). 1.4 added the optional buffer_copy_peer entry, 1.2 sgd_step and the
// max_work_group_size property; 1.3 added only runtime functions (abi/CHANGELOG.md). A plugin
// may stop at 1.2 (the later ones are optional): each is checked against the newest of these
// it implements.
constexpr uint32_t kNewestPluginMinor = 5;

struct InTreePlugin {
  const char* name;
  const char* path;  // nullptr: the built-in reference device
};

std::vector<InTreePlugin> in_tree_plugins() {
  std::vector<InTreePlugin> plugins = {{"cpu", CTL_TEST_CPU_PLUGIN}, {"reference", nullptr}};
#ifdef CTL_TEST_OPENCL_PLUGIN
  plugins.push_back({"opencl", CTL_TEST_OPENCL_PLUGIN});
#endif
#ifdef CTL_TEST_VULKAN_PLUGIN
  plugins.push_back({"vulkan", CTL_TEST_VULKAN_PLUGIN});
#endif
  return plugins;
}

// Runs one sgd_step with momentum on `device`; true when the device computed it.
bool runs_sgd_step(ctl_device* device) {
  const std::vector<float> one = {1.0f, 2.0f};
  Tensor param = from_vector(device, CTL_DTYPE_F32, {2}, one);
  Tensor grad = from_vector(device, CTL_DTYPE_F32, {2}, one);
  Tensor buf = from_vector(device, CTL_DTYPE_F32, {2}, std::vector<float>{0.0f, 0.0f});
  ctl_sgd_attrs attrs{};
  attrs.struct_size = CTL_SGD_ATTRS_STRUCT_SIZE;
  attrs.lr = 0.5;
  attrs.momentum = 0.9;
  ctl_tensor* inputs[] = {grad.get()};
  ctl_tensor* outputs[] = {param.get(), buf.get()};
  Status s(ctl_op_run_into(CTL_OP_SGD_STEP, 1, inputs, &attrs, 2, outputs));
  if (s) return false;
  std::vector<float> p(2);
  Status s2(ctl_tensor_to_host(param.get(), p.data(), p.size() * sizeof(float)));
  return !s2 && p[0] == 0.5f && p[1] == 1.0f;  // p - lr * g, with buf = g on the first step
}

// True when `device` runs a one-instruction fused_elementwise program (1.5).
bool runs_fused_elementwise(ctl_device* device) {
  Tensor x = from_vector(device, CTL_DTYPE_F32, {2}, std::vector<float>{1.0f, -2.0f});
  ctl_fused_elementwise_attrs attrs{};
  attrs.struct_size = CTL_FUSED_ELEMENTWISE_ATTRS_STRUCT_SIZE;
  attrs.instruction_count = 1;
  attrs.program[0] = {CTL_OP_NEG, 0, 0};
  ctl_tensor* inputs[] = {x.get()};
  ctl_tensor* out = nullptr;
  Status s(ctl_op_run(CTL_OP_FUSED_ELEMENTWISE, 1, inputs, &attrs, 1, &out));
  if (s) return false;
  Tensor owner(out);
  std::vector<float> y(2);
  Status s2(ctl_tensor_to_host(out, y.data(), y.size() * sizeof(float)));
  return !s2 && y[0] == -1.0f && y[1] == 2.0f;
}

// True when the table `path` gives today's core carries buffer_copy_peer (1.4), read from
// the plugin file itself: the core's view of the table is not part of the C ABI.
bool table_has_copy_peer(const char* path) {
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library) return false;
  const auto query = reinterpret_cast<ctl_plugin_query_fn>(dlsym(library, CTL_PLUGIN_QUERY_SYMBOL));
  ctl_host_api host{};
  host.struct_size = CTL_HOST_API_STRUCT_SIZE;
  host.abi_major = CTL_ABI_VERSION_MAJOR;
  host.abi_minor = CTL_ABI_VERSION_MINOR;
  host.log = [](void*, ctl_log_level, const char*) {};
  const ctl_plugin_api* api = query ? query(CTL_ABI_VERSION_MAJOR, CTL_ABI_VERSION_MINOR, &host) : nullptr;
  return api && api->struct_size >= CTL_PLUGIN_API_STRUCT_SIZE && api->buffer_copy_peer;
}

TEST(PluginAbiVersion, EachInTreePluginReportsTheVersionOfItsNewestOp) {
  for (const InTreePlugin& plugin : in_tree_plugins()) {
    SCOPED_TRACE(plugin.name);
    std::vector<const char*> paths;
    if (plugin.path) paths.push_back(plugin.path);
    const ctl_runtime_options o = options(&paths, nullptr, /*reference=*/plugin.path == nullptr);
    ctl_runtime* r = nullptr;
    CTL_ASSERT_OK(ctl_runtime_create(&o, &r));
    Runtime runtime(r);
    ASSERT_EQ(ctl_runtime_plugin_count(r), 1u);
    ctl_plugin_info info{};
    info.struct_size = CTL_PLUGIN_INFO_STRUCT_SIZE;
    CTL_ASSERT_OK(ctl_runtime_plugin_info(r, 0, &info));
    if (!info.accepted && (std::string(plugin.name) == "opencl" || std::string(plugin.name) == "vulkan")) {
      GTEST_LOG_(INFO) << "opencl: " << info.reason << "; skipped";  // no OpenCL driver here
      continue;
    }
    ASSERT_TRUE(info.accepted) << info.reason;
    ctl_device* device = find_device(r, plugin.name);
    ASSERT_NE(device, nullptr);
    ASSERT_TRUE(runs_sgd_step(device)) << "every in-tree plugin implements sgd_step (1.2)";
    const bool copy_peer = plugin.path && table_has_copy_peer(plugin.path);
    const bool fused = runs_fused_elementwise(device);
    const uint32_t newest = fused ? 5u : copy_peer ? 4u : 2u;
    EXPECT_EQ(info.abi_major, 1u);
    EXPECT_EQ(info.abi_minor, newest) << (fused       ? "it implements fused_elementwise (1.5)"
                                          : copy_peer ? "it implements buffer_copy_peer (1.4)"
                                                      : "it implements sgd_step (1.2) and nothing newer");
    // The CPU plugin copies between its devices (CATALYST_CPU_DEVICES splits it).
    if (std::string(plugin.name) == "cpu") {
      EXPECT_TRUE(copy_peer) << "the cpu plugin's table lacks buffer_copy_peer";
      EXPECT_EQ(info.abi_minor, kNewestPluginMinor);
    }
  }
}

}  // namespace
