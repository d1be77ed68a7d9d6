// check.hpp — the outcome of a device-independent argument check: a status code and a message.
// The sdk's checks return one of these rather than a ctl_status, so they need no host table:
// the plugin makes the status, putting its own "<plugin>: <op>: " prefix before the message.
#pragma once

#include <cstdarg>
#include <cstdio>

#include "catalyst_plugin.h"

namespace catalyst::sdk {

struct Check {
  ctl_status_code code = CTL_STATUS_OK;
  char message[448];  // the text after the plugin's prefix; "" when the check passed

  Check() { message[0] = '\0'; }
  bool ok() const { return code == CTL_STATUS_OK; }
};

// A failed check with a printf-formatted message (cut to fit, as a status's message would be).
[[gnu::format(printf, 2, 3)]] inline Check check_failed(ctl_status_code code, const char* format, ...) {
  Check check;
  check.code = code;
  va_list args;
  va_start(args, format);
  std::vsnprintf(check.message, sizeof check.message, format, args);
  va_end(args);
  return check;
}

}  // namespace catalyst::sdk
