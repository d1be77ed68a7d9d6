// test_support.hpp — small C++ helpers shared by the GoogleTest tests: RAII owners for
// runtimes, tensors and statuses, a log collector, and host <-> tensor conversions.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "catalyst.h"

namespace ctltest {

struct StatusDeleter {
  void operator()(ctl_status* s) const { ctl_status_free(s); }
};
using Status = std::unique_ptr<ctl_status, StatusDeleter>;

struct TensorDeleter {
  void operator()(ctl_tensor* t) const { ctl_tensor_release(t); }
};
using Tensor = std::unique_ptr<ctl_tensor, TensorDeleter>;

struct RuntimeDeleter {
  void operator()(ctl_runtime* r) const { ctl_runtime_release(r); }
};
using Runtime = std::unique_ptr<ctl_runtime, RuntimeDeleter>;

// "CODE: message" for a failed call, "" for success.
inline std::string describe(ctl_status* status) {
  if (!status) return "";
  return std::string(ctl_status_code_name(ctl_status_get_code(status))) + ": " + ctl_status_get_message(status);
}

// Asserts success and frees the status.
#define CTL_ASSERT_OK(expr)                                                                                      \
  do {                                                                                                           \
    ::ctltest::Status ctl_test_status_(expr);                                                                    \
    ASSERT_EQ(ctl_test_status_, nullptr) << #expr << " failed: " << ::ctltest::describe(ctl_test_status_.get()); \
  } while (0)
#define CTL_EXPECT_OK(expr)                                                                                      \
  do {                                                                                                           \
    ::ctltest::Status ctl_test_status_(expr);                                                                    \
    EXPECT_EQ(ctl_test_status_, nullptr) << #expr << " failed: " << ::ctltest::describe(ctl_test_status_.get()); \
  } while (0)

// Collects every log line a runtime writes.
struct LogSink {
  std::mutex mutex;
  std::vector<std::string> lines;
  static void callback(void* user, ctl_log_level, const char* message) {
    auto* self = static_cast<LogSink*>(user);
    std::lock_guard lock(self->mutex);
    self->lines.emplace_back(message);
  }
  bool contains(const std::string& needle) {
    std::lock_guard lock(mutex);
    for (const auto& line : lines) {
      if (line.find(needle) != std::string::npos) return true;
    }
    return false;
  }
  std::string all() {
    std::lock_guard lock(mutex);
    std::string text;
    for (const auto& line : lines) text += "  " + line + "\n";
    return text;
  }
};

inline ctl_runtime_options options(const std::vector<const char*>* paths = nullptr, LogSink* sink = nullptr,
                                   bool reference = false) {
  ctl_runtime_options o{};
  o.struct_size = CTL_RUNTIME_OPTIONS_STRUCT_SIZE;
  o.plugin_paths = paths && !paths->empty() ? paths->data() : nullptr;
  o.plugin_path_count = paths ? paths->size() : 0;
  o.disable_discovery = true;  // tests never depend on CATALYST_* or installed plugins
  if (sink) {
    o.log_fn = &LogSink::callback;
    o.log_user_data = sink;
    o.log_level = CTL_LOG_DEBUG;
    o.log_level_set = true;
  }
  o.enable_reference_device = reference;
  return o;
}

// The device whose plugin is `plugin_name` ("cpu", "reference", ...), or nullptr.
inline ctl_device* find_device(ctl_runtime* runtime, const std::string& plugin_name) {
  for (size_t i = 0; i < ctl_runtime_device_count(runtime); ++i) {
    ctl_device* device = nullptr;
    Status s(ctl_runtime_device(runtime, i, &device));
    if (s) continue;
    ctl_device_info info{};
    info.struct_size = CTL_DEVICE_INFO_STRUCT_SIZE;
    Status s2(ctl_device_get_info(device, &info));
    if (!s2 && plugin_name == info.plugin_name) return device;
  }
  return nullptr;
}

template <typename T>
Tensor from_vector(ctl_device* device, ctl_dtype dtype, const std::vector<int64_t>& shape, const std::vector<T>& data) {
  ctl_tensor* t = nullptr;
  Status s(ctl_tensor_from_host(device, dtype, shape.size(), shape.data(), data.data(), data.size() * sizeof(T), &t));
  EXPECT_EQ(s, nullptr) << describe(s.get());
  return Tensor(t);
}

template <typename T>
std::vector<T> to_vector(const ctl_tensor* tensor) {
  std::vector<T> out(static_cast<size_t>(ctl_tensor_numel(tensor)));
  Status s(ctl_tensor_to_host(tensor, out.data(), out.size() * sizeof(T)));
  EXPECT_EQ(s, nullptr) << describe(s.get());
  return out;
}

inline ctl_tensor_info info_of(const ctl_tensor* tensor) {
  ctl_tensor_info info{};
  info.struct_size = CTL_TENSOR_INFO_STRUCT_SIZE;
  Status s(ctl_tensor_get_info(tensor, &info));
  EXPECT_EQ(s, nullptr) << describe(s.get());
  return info;
}

}  // namespace ctltest
