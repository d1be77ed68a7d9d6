// host_api.cpp — see host_api.h.
#include "host_api.h"
#include "enum_value.h"

#include <cstdlib>

#include "status.h"

namespace catalyst {

HostApi::HostApi(const Logger* logger, std::string plugin_label) : logger_(logger), label_(std::move(plugin_label)) {
  table_.struct_size = CTL_HOST_API_STRUCT_SIZE;
  table_.abi_major = CTL_ABI_VERSION_MAJOR;
  table_.abi_minor = CTL_ABI_VERSION_MINOR;
  table_.context = this;
  table_.alloc = &HostApi::alloc;
  table_.free = &HostApi::free;
  table_.log = &HostApi::log;
  table_.status_create = &HostApi::status_create;
}

void* HostApi::alloc(void* context, size_t size, size_t alignment) {
  auto* self = static_cast<HostApi*>(context);
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  if ((alignment & (alignment - 1)) != 0) return nullptr;  // not a power of two
  void* pointer = nullptr;
  if (posix_memalign(&pointer, alignment, size ? size : 1) != 0) return nullptr;
  self->live_allocations_.fetch_add(1, std::memory_order_relaxed);
  self->total_allocations_.fetch_add(1, std::memory_order_relaxed);
  return pointer;
}

void HostApi::free(void* context, void* pointer) {
  if (!pointer) return;
  static_cast<HostApi*>(context)->live_allocations_.fetch_sub(1, std::memory_order_relaxed);
  std::free(pointer);
}

void HostApi::log(void* context, ctl_log_level level, const char* message) {
  auto* self = static_cast<HostApi*>(context);
  if (enum_value(level) < CTL_LOG_DEBUG || enum_value(level) > CTL_LOG_ERROR) level = CTL_LOG_ERROR;
  const char* text = message ? message : "(null)";
  if (self->capture_) {
    if (!self->capture_->empty()) *self->capture_ += "; ";
    *self->capture_ += text;
  }
  self->logger_->write(level, self->label_ + ": " + text);
}

ctl_status* HostApi::status_create(void*, ctl_status_code code, const char* message) {
  // A plugin bug: OK is not an error, and an unknown code means nothing to the caller.
  const int raw = enum_value(code);
  if (raw <= CTL_STATUS_OK || raw > CTL_STATUS_FAILED_PRECONDITION) code = CTL_STATUS_INTERNAL;
  return make_status_string(code, message ? message : "(no message)");
}

}  // namespace catalyst
