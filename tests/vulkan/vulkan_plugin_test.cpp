// vulkan_plugin_test.cpp — the Vulkan plugin's own promises, beyond the conformance suite:
// its pipeline cache survives a corrupt file, a long loop of small dispatches keeps memory
// flat, an allocation past the device's limits is a status naming the limit, and injected
// driver errors (CATALYST_VULKAN_FAULT, plugins/vulkan/faults.h) become statuses, not aborts.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "catalyst.h"

namespace {

namespace fs = std::filesystem;

struct LogLines {
  std::mutex mutex;
  std::vector<std::string> lines;
  static void sink(void* user, ctl_log_level, const char* message) {
    auto* self = static_cast<LogLines*>(user);
    std::lock_guard lock(self->mutex);
    self->lines.emplace_back(message);
  }
  bool any_contains(const std::string& text) {
    std::lock_guard lock(mutex);
    for (const auto& line : lines) {
      if (line.find(text) != std::string::npos) return true;
    }
    return false;
  }
  std::string all() {
    std::lock_guard lock(mutex);
    std::string text;
    for (const auto& line : lines) text += line + "\n";
    return text;
  }
};

// One runtime with only the Vulkan plugin, logging at info into `log`.
class Runtime {
 public:
  explicit Runtime(LogLines* log) {
    const char* paths[] = {CTL_TEST_VULKAN_PLUGIN};
    ctl_runtime_options options{};
    options.struct_size = CTL_RUNTIME_OPTIONS_STRUCT_SIZE;
    options.plugin_paths = paths;
    options.plugin_path_count = 1;
    options.disable_discovery = true;
    options.log_fn = LogLines::sink;
    options.log_user_data = log;
    options.log_level = CTL_LOG_INFO;
    options.log_level_set = true;
    ctl_status* s = ctl_runtime_create(&options, &runtime_);
    EXPECT_EQ(s, nullptr) << ctl_status_get_message(s);
    ctl_status_free(s);
    if (runtime_ && ctl_runtime_device_count(runtime_) > 0) ctl_runtime_device(runtime_, 0, &device_);
  }
  ~Runtime() { ctl_runtime_release(runtime_); }
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;
  ctl_device* device() const { return device_; }

 private:
  ctl_runtime* runtime_ = nullptr;
  ctl_device* device_ = nullptr;
};

// a + b on the device for a few floats; the status of the first call that failed, if any.
ctl_status* add_on(ctl_device* device, std::vector<float>* out) {
  const float a[4] = {1.0f, 2.0f, -3.0f, 0.5f}, b[4] = {10.0f, 20.0f, 30.0f, 40.0f};
  const int64_t shape[1] = {4};
  ctl_tensor *x = nullptr, *y = nullptr, *z = nullptr;
  ctl_status* s = ctl_tensor_from_host(device, CTL_DTYPE_F32, 1, shape, a, sizeof a, &x);
  if (!s) s = ctl_tensor_from_host(device, CTL_DTYPE_F32, 1, shape, b, sizeof b, &y);
  if (!s) s = ctl_op_binary(CTL_OP_ADD, x, y, &z);
  out->assign(4, 0.0f);
  if (!s) s = ctl_tensor_to_host(z, out->data(), 4 * sizeof(float));
  ctl_tensor_release(z);
  ctl_tensor_release(y);
  ctl_tensor_release(x);
  return s;
}

void expect_sums(const std::vector<float>& got) {
  const std::vector<float> want = {11.0f, 22.0f, 27.0f, 40.5f};
  EXPECT_EQ(got, want);
}

// Host memory resident now, in bytes (lavapipe's device memory is host memory too).
uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

class VulkanPluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = fs::temp_directory_path() / ("catalyst-vulkan-test-" + std::to_string(::getpid()) + "-" +
                                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(directory_);
    fs::create_directories(directory_);
    ::setenv("CATALYST_CACHE_DIR", directory_.c_str(), 1);
    ::unsetenv("CATALYST_VULKAN_FAULT");
  }
  void TearDown() override {
    ::unsetenv("CATALYST_VULKAN_FAULT");
    fs::remove_all(directory_);
  }
  std::vector<fs::path> cache_files() const {
    std::vector<fs::path> files;
    if (!fs::exists(directory_ / "vulkan")) return files;
    for (const auto& entry : fs::directory_iterator(directory_ / "vulkan")) {
      if (entry.path().extension() == ".vkpc") files.push_back(entry.path());
    }
    return files;
  }
  fs::path directory_;
};

#define SKIP_WITHOUT_DEVICE(runtime) \
  if (!(runtime).device()) GTEST_SKIP() << "no Vulkan device (mesa-vulkan-drivers?)"

TEST_F(VulkanPluginTest, CorruptPipelineCacheIsDetectedAndRebuilt) {
  {
    LogLines log;
    Runtime first(&log);
    SKIP_WITHOUT_DEVICE(first);
    std::vector<float> got;
    ASSERT_EQ(add_on(first.device(), &got), nullptr);
    expect_sums(got);
  }
  ASSERT_EQ(cache_files().size(), 1u) << "the first runtime writes the device's pipeline cache";
  const fs::path file = cache_files()[0];
  std::vector<char> bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  // 24 bytes of our header, then the driver's data: at least Vulkan's 32-byte cache header
  // (lavapipe keeps nothing more; other drivers keep their compiled shaders there).
  ASSERT_GE(bytes.size(), 24u + 32u);
  bytes.back() ^= 0x5a;  // one flipped byte inside the driver's data
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  LogLines second_log;
  {
    Runtime second(&second_log);
    std::vector<float> got;
    ASSERT_EQ(add_on(second.device(), &got), nullptr);  // still right
    expect_sums(got);
  }
  EXPECT_TRUE(second_log.any_contains("is corrupt (checksum mismatch); deleted and rebuilt")) << second_log.all();
  EXPECT_TRUE(second_log.any_contains("disk cache rejected and rebuilt")) << second_log.all();
  // Rewritten whole: the third runtime loads it.
  ASSERT_EQ(cache_files().size(), 1u);
  LogLines third_log;
  {
    Runtime third(&third_log);
    std::vector<float> got;
    ASSERT_EQ(add_on(third.device(), &got), nullptr);
  }
  EXPECT_TRUE(third_log.any_contains("(disk cache loaded)")) << third_log.all();
}

TEST_F(VulkanPluginTest, TruncatedPipelineCacheIsDetected) {
  {
    LogLines log;
    Runtime first(&log);
    SKIP_WITHOUT_DEVICE(first);
    std::vector<float> got;
    ASSERT_EQ(add_on(first.device(), &got), nullptr);
  }
  ASSERT_EQ(cache_files().size(), 1u);
  fs::resize_file(cache_files()[0], fs::file_size(cache_files()[0]) / 2);
  LogLines log;
  {
    Runtime second(&log);
    std::vector<float> got;
    ASSERT_EQ(add_on(second.device(), &got), nullptr);
    expect_sums(got);
  }
  EXPECT_TRUE(log.any_contains("is corrupt (truncated)")) << log.all();
}

// 100,000 small ops (each allocates its output and frees its inputs' predecessors) keep the
// process's resident memory within a bound once the batches and pools have warmed up.
TEST_F(VulkanPluginTest, ManySmallDispatchesKeepMemoryFlat) {
  LogLines log;
  Runtime runtime(&log);
  SKIP_WITHOUT_DEVICE(runtime);
  const int64_t shape[1] = {1024};
  std::vector<float> ones(1024, 1.0f);
  ctl_tensor* one = nullptr;
  ctl_tensor* acc = nullptr;
  ASSERT_EQ(ctl_tensor_from_host(runtime.device(), CTL_DTYPE_F32, 1, shape, ones.data(), 4096, &one), nullptr);
  ASSERT_EQ(ctl_tensor_create_zeros(runtime.device(), CTL_DTYPE_F32, 1, shape, &acc), nullptr);
  constexpr int kDispatches = 100000, kWarmup = 10000;
  uint64_t after_warmup = 0;
  for (int i = 0; i < kDispatches; ++i) {
    ctl_tensor* next = nullptr;
    ctl_status* s = ctl_op_binary(CTL_OP_ADD, acc, one, &next);
    ASSERT_EQ(s, nullptr) << ctl_status_get_message(s);
    ctl_tensor_release(acc);
    acc = next;
    if (i + 1 == kWarmup) after_warmup = resident_bytes();
  }
  std::vector<float> got(1024);
  ASSERT_EQ(ctl_tensor_to_host(acc, got.data(), 4096), nullptr);
  const uint64_t at_end = resident_bytes();
  EXPECT_EQ(got[0], static_cast<float>(kDispatches));
  EXPECT_EQ(got[1023], static_cast<float>(kDispatches));
  // 90,000 more dispatches may not grow the process by more than 16 MiB; one 4 KiB output
  // per dispatch that leaked would be 350 MiB, and batches recorded anew instead of reused
  // some 90 MiB of parameters alone.
  const int64_t growth = static_cast<int64_t>(at_end) - static_cast<int64_t>(after_warmup);
  EXPECT_LT(growth, 16ll << 20) << "resident memory grew by " << growth << " bytes";
  ctl_tensor_release(acc);
  ctl_tensor_release(one);
}

TEST_F(VulkanPluginTest, OverLargeAllocationIsOutOfMemoryNamingTheLimit) {
  LogLines log;
  Runtime runtime(&log);
  SKIP_WITHOUT_DEVICE(runtime);
  // 2^40 bytes of f32: past every device's maxStorageBufferRange (at most 4 GiB).
  const int64_t shape[1] = {int64_t{1} << 38};
  ctl_tensor* t = nullptr;
  ctl_status* s = ctl_tensor_create(runtime.device(), CTL_DTYPE_F32, 1, shape, &t);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(ctl_status_get_code(s), CTL_STATUS_OUT_OF_MEMORY) << ctl_status_get_message(s);
  const std::string message = ctl_status_get_message(s);
  EXPECT_NE(message.find("largest buffer"), std::string::npos) << message;
  EXPECT_TRUE(message.find("maxStorageBufferRange") != std::string::npos ||
              message.find("maxMemoryAllocationSize") != std::string::npos ||
              message.find("device-local heap") != std::string::npos)
      << message;
  ctl_status_free(s);
  EXPECT_EQ(t, nullptr);
  std::vector<float> got;
  ASSERT_EQ(add_on(runtime.device(), &got), nullptr);  // the device still works
  expect_sums(got);
}

TEST_F(VulkanPluginTest, InjectedOutOfDeviceMemoryIsAStatus) {
  ::setenv("CATALYST_VULKAN_FAULT", "allocate:out_of_device_memory:1", 1);
  LogLines log;
  Runtime runtime(&log);
  SKIP_WITHOUT_DEVICE(runtime);
  const int64_t shape[1] = {4};
  ctl_tensor* t = nullptr;
  ctl_status* s = ctl_tensor_create(runtime.device(), CTL_DTYPE_F32, 1, shape, &t);
  ASSERT_NE(s, nullptr) << "the first block allocation should fail";
  EXPECT_EQ(ctl_status_get_code(s), CTL_STATUS_OUT_OF_MEMORY) << ctl_status_get_message(s);
  EXPECT_NE(std::string(ctl_status_get_message(s)).find("VK_ERROR_OUT_OF_DEVICE_MEMORY"), std::string::npos)
      << ctl_status_get_message(s);
  ctl_status_free(s);
  // Only the first allocation was failed: the next ones succeed and compute.
  std::vector<float> got;
  ASSERT_EQ(add_on(runtime.device(), &got), nullptr);
  expect_sums(got);
}

TEST_F(VulkanPluginTest, InjectedDeviceLossIsAStatusOnEveryLaterCall) {
  ::setenv("CATALYST_VULKAN_FAULT", "submit:device_lost:1", 1);
  LogLines log;
  Runtime runtime(&log);
  SKIP_WITHOUT_DEVICE(runtime);
  std::vector<float> got;
  ctl_status* s = add_on(runtime.device(), &got);
  ASSERT_NE(s, nullptr) << "the first submission should report the loss";
  EXPECT_EQ(ctl_status_get_code(s), CTL_STATUS_DEVICE_LOST) << ctl_status_get_message(s);
  ctl_status_free(s);
  // Every later call on the device answers DEVICE_LOST; the process goes on.
  s = add_on(runtime.device(), &got);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(ctl_status_get_code(s), CTL_STATUS_DEVICE_LOST) << ctl_status_get_message(s);
  ctl_status_free(s);
  EXPECT_TRUE(log.any_contains("device lost")) << log.all();
}

}  // namespace
