// status.h — the core's side of ctl_status: the struct behind the opaque handle, and the
// helpers that keep error paths in the core short.
#pragma once

#include <string>

#include "catalyst.h"

struct ctl_status {
  ctl_status_code code;
  std::string message;
};

namespace catalyst {

// A new status with a printf-formatted message. Never returns NULL for a non-OK code
// (falls back to a static out-of-memory status if even that allocation fails).
[[gnu::format(printf, 2, 3)]] ctl_status* make_status(ctl_status_code code, const char* format, ...);
ctl_status* make_status_string(ctl_status_code code, std::string message);

// Prefixes the message of `status` with `context` ("while copying to host: ...").
ctl_status* annotate(ctl_status* status, const std::string& context);
// Appends `text` to the message (a hint after the error itself). Returns `status`.
ctl_status* append_to_message(ctl_status* status, const std::string& text);

// True for the preallocated out-of-memory status, which is never freed.
bool is_static_status(const ctl_status* status);

}  // namespace catalyst

// Returns the status of `expr` from the enclosing function when it is an error.
#define CTL_RETURN_IF_ERROR(expr)                \
  do {                                           \
    ctl_status* ctl_status_tmp_ = (expr);        \
    if (ctl_status_tmp_) return ctl_status_tmp_; \
  } while (0)

// Fails the enclosing function with INVALID_ARGUMENT when `cond` is false.
#define CTL_CHECK_ARG(cond, ...)                                                           \
  do {                                                                                     \
    if (!(cond)) return ::catalyst::make_status(CTL_STATUS_INVALID_ARGUMENT, __VA_ARGS__); \
  } while (0)
