// options.h — the command line of `catalyst conformance` (and of its worker processes).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "case.h"

namespace catalyst::conformance {

struct Options {
  std::string plugin;       // as given: a path, or a name found by discovery
  std::string plugin_path;  // resolved absolute path
  uint32_t device = 0;      // index among the plugin's devices
  Level level = Level::kFull;
  std::string filter;   // glob over case ids ("" = every case); ',' separates several
  std::string exclude;  // glob over case ids left out ("" = none), as filter
  bool list = false;
  uint64_t seed = 1;
  unsigned jobs = 1;
  double timeout_seconds = 120;  // per case
  std::string report_path;       // JSON
  std::string markdown_path;
  bool help = false;
  // Worker mode (internal): run one group and talk to the supervisor on result_fd.
  bool worker = false;
  bool probe = false;  // worker that only loads the plugin and describes the device
  std::string group;
  std::string resume_after;
  int result_fd = -1;
};

// Parses argv (without the program name). On error returns false with a message.
bool parse_options(int argc, char** argv, Options* out, std::string* error);
void print_usage(FILE* out);

// A plugin given by name ("cpu") becomes the path of libcatalyst-cpu.so, searched in
// CATALYST_PLUGIN_PATH, then beside the installed runtime (<exe>/../lib/catalyst/plugins).
bool resolve_plugin(const std::string& given, std::string* path, std::string* error);

// True when `id` matches the filter (shell globs, comma separated; "" matches everything).
bool filter_matches(const std::string& filter, const std::string& id);
// True when case `id` is selected: it matches --filter and not --exclude.
bool case_selected(const Options& o, const std::string& id);

}  // namespace catalyst::conformance
