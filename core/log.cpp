// log.cpp — see log.h.
#include "log.h"

#include <strings.h>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace catalyst {

bool parse_log_level(const char* text, ctl_log_level* out_level) {
  static const struct {
    const char* name;
    ctl_log_level level;
  } kLevels[] = {{"debug", CTL_LOG_DEBUG},  {"info", CTL_LOG_INFO},   {"warning", CTL_LOG_WARNING},
                 {"warn", CTL_LOG_WARNING}, {"error", CTL_LOG_ERROR}, {"off", CTL_LOG_OFF}};
  if (!text) return false;
  for (const auto& entry : kLevels) {
    if (strcasecmp(text, entry.name) == 0) {
      *out_level = entry.level;
      return true;
    }
  }
  return false;
}

Logger::Logger(ctl_log_fn fn, void* user_data, ctl_log_level level) : fn_(fn), user_data_(user_data), level_(level) {
  const char* env = std::getenv("CATALYST_LOG");
  ctl_log_level from_env;
  if (env && *env) {
    if (parse_log_level(env, &from_env)) {
      level_ = from_env;
    } else {
      write(CTL_LOG_WARNING,
            std::string("CATALYST_LOG=") + env + " is not one of debug, info, warning, error, off; ignored");
    }
  }
}

void Logger::write(ctl_log_level level, const std::string& message) const {
  if (!enabled(level)) return;
  if (fn_) {
    fn_(user_data_, level, message.c_str());
    return;
  }
  static const char* const kNames[] = {"debug", "info", "warning", "error"};
  std::fprintf(stderr, "catalyst %s: %s\n", kNames[level], message.c_str());
}

void Logger::printf(ctl_log_level level, const char* format, ...) const {
  if (!enabled(level)) return;
  char buffer[2048];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buffer, sizeof buffer, format, args);
  va_end(args);
  write(level, buffer);
}

}  // namespace catalyst
