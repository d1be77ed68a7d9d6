// log.h — the runtime's logger: a level, a sink (user callback or stderr), and the
// CATALYST_LOG environment override.
#pragma once

#include <string>

#include "catalyst.h"

namespace catalyst {

class Logger {
 public:
  Logger(ctl_log_fn fn, void* user_data, ctl_log_level level);
  bool enabled(ctl_log_level level) const { return level >= level_ && level < CTL_LOG_OFF; }
  void write(ctl_log_level level, const std::string& message) const;
  [[gnu::format(printf, 3, 4)]] void printf(ctl_log_level level, const char* format, ...) const;

 private:
  ctl_log_fn fn_;
  void* user_data_;
  ctl_log_level level_;
};

// Parses "debug", "info", "warning", "error", "off" (any case); false when unknown.
bool parse_log_level(const char* text, ctl_log_level* out_level);

}  // namespace catalyst
