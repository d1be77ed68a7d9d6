// kernel_cache_test.cpp — the OpenCL plugin's disk cache of program binaries: a second
// runtime loads what the first built, and a corrupt, truncated or stale entry is detected,
// rebuilt from source and rewritten, with the op still giving the right answer.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "catalyst.h"

namespace {

namespace fs = std::filesystem;

// Every log line of one runtime.
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

void expect_ok(ctl_status* status, const char* what) {
  ASSERT_EQ(status, nullptr) << what << ": " << ctl_status_get_message(status);
}

class KernelCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = fs::temp_directory_path() / ("catalyst-kernel-cache-test-" + std::to_string(::getpid()) + "-" +
                                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(directory_);
    fs::create_directories(directory_);
    ::setenv("CATALYST_CACHE_DIR", directory_.c_str(), 1);
  }
  void TearDown() override { fs::remove_all(directory_); }

  // Runs exp on the OpenCL device in a fresh runtime and checks the result; the log of
  // that runtime (its last line is the kernel cache's summary) goes to *log.
  void run_exp(LogLines* log) {
    const char* paths[] = {CTL_TEST_OPENCL_PLUGIN};
    ctl_runtime_options options{};
    options.struct_size = CTL_RUNTIME_OPTIONS_STRUCT_SIZE;
    options.plugin_paths = paths;
    options.plugin_path_count = 1;
    options.disable_discovery = true;
    options.log_fn = LogLines::sink;
    options.log_user_data = log;
    options.log_level = CTL_LOG_INFO;
    options.log_level_set = true;
    ctl_runtime* runtime = nullptr;
    expect_ok(ctl_runtime_create(&options, &runtime), "ctl_runtime_create");
    if (ctl_runtime_device_count(runtime) == 0) {
      ctl_runtime_release(runtime);
      GTEST_SKIP() << "no OpenCL device (is pocl-opencl-icd installed?)";
    }
    ctl_device* device = nullptr;
    expect_ok(ctl_runtime_device(runtime, 0, &device), "ctl_runtime_device");
    const float input[6] = {-2.0f, -0.5f, 0.0f, 0.25f, 1.0f, 3.0f};
    const int64_t shape[1] = {6};
    ctl_tensor* x = nullptr;
    ctl_tensor* y = nullptr;
    expect_ok(ctl_tensor_from_host(device, CTL_DTYPE_F32, 1, shape, input, sizeof input, &x), "from_host");
    expect_ok(ctl_op_unary(CTL_OP_EXP, x, &y), "exp");
    float output[6] = {};
    expect_ok(ctl_tensor_to_host(y, output, sizeof output), "to_host");
    for (int i = 0; i < 6; ++i) EXPECT_NEAR(output[i], std::exp(input[i]), 1e-6 * std::exp(input[i])) << i;
    ctl_tensor_release(y);
    ctl_tensor_release(x);
    ctl_runtime_release(runtime);  // logs the cache's summary
  }

  std::vector<fs::path> entries() const {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(directory_ / "opencl")) {
      if (entry.path().extension() == ".clbin") files.push_back(entry.path());
    }
    return files;
  }

  static std::vector<char> read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  static void write(const fs::path& path, const std::vector<char>& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }

  fs::path directory_;
};

TEST_F(KernelCacheTest, SecondRuntimeLoadsFromDisk) {
  LogLines first;
  run_exp(&first);
  if (IsSkipped()) return;
  EXPECT_TRUE(first.any_contains("1 program(s) built from source")) << first.all();
  ASSERT_EQ(entries().size(), 1u) << "one program (elementwise f32) should be cached";

  LogLines second;
  run_exp(&second);
  EXPECT_TRUE(second.any_contains("0 program(s) built from source")) << second.all();
  EXPECT_TRUE(second.any_contains("1 loaded from the disk cache")) << second.all();
}

TEST_F(KernelCacheTest, CorruptEntryIsDetectedAndRebuilt) {
  LogLines first;
  run_exp(&first);
  if (IsSkipped()) return;
  ASSERT_EQ(entries().size(), 1u);
  const fs::path entry = entries()[0];
  std::vector<char> bytes = read(entry);
  ASSERT_GT(bytes.size(), 100u);
  bytes[bytes.size() / 2] ^= 0x5a;  // one flipped byte inside the driver's binary
  write(entry, bytes);

  LogLines second;
  run_exp(&second);  // still computes exp correctly
  EXPECT_TRUE(second.any_contains("its checksum does not match; rebuilding it from source")) << second.all();
  EXPECT_TRUE(second.any_contains("1 program(s) built from source")) << second.all();
  EXPECT_TRUE(second.any_contains("1 cache entry rebuilt")) << second.all();
  // The entry was rewritten whole, and the next runtime loads it again.
  ASSERT_EQ(entries().size(), 1u);
  EXPECT_NE(read(entries()[0]), bytes);
  LogLines third;
  run_exp(&third);
  EXPECT_TRUE(third.any_contains("1 loaded from the disk cache")) << third.all();
}

TEST_F(KernelCacheTest, TruncatedEntryIsDetectedAndRebuilt) {
  LogLines first;
  run_exp(&first);
  if (IsSkipped()) return;
  const fs::path entry = entries().at(0);
  std::vector<char> bytes = read(entry);
  bytes.resize(bytes.size() / 3);
  write(entry, bytes);

  LogLines second;
  run_exp(&second);
  EXPECT_TRUE(second.any_contains("it is truncated")) << second.all();
  EXPECT_TRUE(second.any_contains("1 cache entry rebuilt")) << second.all();
}

// A well-formed entry whose payload the driver cannot use (as after a driver update that
// kept its version string): its checksum is right, so only the driver can refuse it.
TEST_F(KernelCacheTest, BinaryTheDriverRefusesIsRebuilt) {
  LogLines first;
  run_exp(&first);
  if (IsSkipped()) return;
  const fs::path entry = entries().at(0);
  std::vector<char> bytes = read(entry);
  constexpr size_t kHeader = 48;  // magic, format, reserved, 2 key hashes, size, checksum
  ASSERT_GT(bytes.size(), kHeader + 64);
  for (size_t i = kHeader; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 131 + 7);
  uint64_t checksum = 0xcbf29ce484222325ull;  // FNV-1a over the payload, as the cache writes it
  for (size_t i = kHeader; i < bytes.size(); ++i) {
    checksum ^= static_cast<unsigned char>(bytes[i]);
    checksum *= 0x100000001b3ull;
  }
  std::memcpy(bytes.data() + 40, &checksum, sizeof checksum);
  write(entry, bytes);

  LogLines second;
  run_exp(&second);
  EXPECT_TRUE(second.any_contains("the driver")) << second.all();
  EXPECT_TRUE(second.any_contains("1 cache entry rebuilt")) << second.all();
}

}  // namespace
