// status.hpp — making ctl_status values from inside a plugin. Statuses are created by the
// host table so that the core owns and frees every one of them.
#pragma once

#include <cstdarg>
#include <cstdio>

#include "catalyst_plugin.h"

namespace catalyst::sdk {

// A status with a printf-formatted message; never NULL unless the host table is broken.
[[gnu::format(printf, 3, 4)]] inline ctl_status* make_status(const ctl_host_api* host, ctl_status_code code,
                                                             const char* format, ...) {
  char message[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof message, format, args);
  va_end(args);
  return host->status_create(host->context, code, message);
}

// Logs one printf-formatted line through the host.
[[gnu::format(printf, 3, 4)]] inline void log(const ctl_host_api* host, ctl_log_level level, const char* format, ...) {
  char message[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof message, format, args);
  va_end(args);
  host->log(host->context, level, message);
}

}  // namespace catalyst::sdk

// Returns early from the enclosing function with the status of `expr` when it is an error.
#define CTL_SDK_RETURN_IF_ERROR(expr)            \
  do {                                           \
    ctl_status* ctl_sdk_status_ = (expr);        \
    if (ctl_sdk_status_) return ctl_sdk_status_; \
  } while (0)
