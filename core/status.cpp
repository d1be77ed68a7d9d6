// status.cpp — creating, reading and freeing ctl_status values.
#include "status.h"
#include "enum_value.h"

#include <cstdarg>
#include <cstdio>
#include <new>

namespace catalyst {
namespace {
// Returned when allocating a status fails; ctl_status_free recognises and keeps it.
ctl_status g_out_of_memory{CTL_STATUS_OUT_OF_MEMORY, "out of memory while reporting an error"};
}  // namespace

ctl_status* make_status_string(ctl_status_code code, std::string message) {
  if (code == CTL_STATUS_OK) return nullptr;
  auto* status = new (std::nothrow) ctl_status{code, {}};
  if (!status) return &g_out_of_memory;
  try {
    status->message = std::move(message);
  } catch (...) {
    delete status;
    return &g_out_of_memory;
  }
  return status;
}

ctl_status* make_status(ctl_status_code code, const char* format, ...) {
  char buffer[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buffer, sizeof buffer, format, args);
  va_end(args);
  return make_status_string(code, buffer);
}

ctl_status* annotate(ctl_status* status, const std::string& context) {
  if (!status || status == &g_out_of_memory) return status;
  try {
    status->message = context + ": " + status->message;
  } catch (...) {
  }
  return status;
}

ctl_status* append_to_message(ctl_status* status, const std::string& text) {
  if (!status || status == &g_out_of_memory) return status;
  try {
    status->message += text;
  } catch (...) {
  }
  return status;
}

bool is_static_status(const ctl_status* status) {
  return status == &g_out_of_memory;
}

}  // namespace catalyst

extern "C" {

CTL_EXPORT ctl_status_code ctl_status_get_code(const ctl_status* status) {
  return status ? status->code : CTL_STATUS_OK;
}

CTL_EXPORT const char* ctl_status_get_message(const ctl_status* status) {
  return status ? status->message.c_str() : "";
}

CTL_EXPORT void ctl_status_free(ctl_status* status) {
  if (status && !catalyst::is_static_status(status)) delete status;
}

CTL_EXPORT const char* ctl_status_code_name(ctl_status_code code) {
  switch (catalyst::enum_value(code)) {
    case CTL_STATUS_OK:
      return "OK";
    case CTL_STATUS_INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case CTL_STATUS_OUT_OF_MEMORY:
      return "OUT_OF_MEMORY";
    case CTL_STATUS_UNSUPPORTED:
      return "UNSUPPORTED";
    case CTL_STATUS_NOT_FOUND:
      return "NOT_FOUND";
    case CTL_STATUS_DEVICE_LOST:
      return "DEVICE_LOST";
    case CTL_STATUS_INTERNAL:
      return "INTERNAL";
    case CTL_STATUS_OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case CTL_STATUS_FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
  }
  return "UNKNOWN";
}

}  // extern "C"
