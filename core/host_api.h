// host_api.h — the ctl_host_api table the core hands each plugin: an allocator that counts
// what is live (so leaks can be found), a logger that tags lines with the plugin's name,
// and the status constructor.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "catalyst_plugin.h"
#include "log.h"

namespace catalyst {

class HostApi {
 public:
  HostApi(const Logger* logger, std::string plugin_label);
  HostApi(const HostApi&) = delete;
  HostApi& operator=(const HostApi&) = delete;

  const ctl_host_api* table() const { return &table_; }
  void set_label(std::string label) { label_ = std::move(label); }
  // Allocations made through this table and not yet freed.
  int64_t live_allocations() const { return live_allocations_.load(); }
  int64_t total_allocations() const { return total_allocations_.load(); }
  // While set, log lines are also appended here (one per line): the loader keeps what a
  // plugin said while refusing to load, to quote it in the rejection reason.
  void capture_log(std::string* sink) { capture_ = sink; }

 private:
  static void* alloc(void* context, size_t size, size_t alignment);
  static void free(void* context, void* pointer);
  static void log(void* context, ctl_log_level level, const char* message);
  static ctl_status* status_create(void* context, ctl_status_code code, const char* message);

  ctl_host_api table_{};
  const Logger* logger_;
  std::string label_;
  std::string* capture_ = nullptr;
  std::atomic<int64_t> live_allocations_{0};
  std::atomic<int64_t> total_allocations_{0};
};

}  // namespace catalyst
