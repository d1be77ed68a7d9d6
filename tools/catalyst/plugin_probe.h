// plugin_probe.h — loads one plugin file in a child process and reports what happened, so
// that `catalyst devices` survives a plugin that crashes or hangs while loading.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "catalyst.h"

namespace catalyst::cli {

struct ProbeLogLine {
  ctl_log_level level;
  std::string text;
};

struct ProbeResult {
  enum class Outcome {
    kLoaded,    // the child loaded it (accepted or rejected) and came back: info is valid
    kCrashed,   // the child died of a signal (signal set)
    kExited,    // the child ended itself while loading (exit() in the plugin; exit_code set)
    kTimedOut,  // no answer within the timeout; the child was killed
    kNotRun,    // the probe itself could not start (reason says why)
  };
  Outcome outcome = Outcome::kNotRun;
  // kLoaded: what the child's runtime made of the file.
  bool accepted = false;
  std::string name, version, reason;
  uint32_t abi_major = 0, abi_minor = 0;
  uint64_t device_count = 0;
  bool unloading = false;  // the child got as far as unloading the plugin when it crashed
  int signal = 0;
  int exit_code = 0;
  std::vector<ProbeLogLine> log;  // what the core and the plugin logged in the child
};

// Loads `path` alone (no discovery) in a forked child: runtime creation, every device's
// info, and release. Waits at most `timeout_seconds`.
ProbeResult probe_plugin(const std::string& path, double timeout_seconds);

// "signal 11 (Segmentation fault)".
std::string signal_text(int signal);

}  // namespace catalyst::cli
