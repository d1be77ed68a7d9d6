// options.cpp — see options.h.
#include "options.h"

#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <sstream>
#include <thread>
#include <vector>

namespace catalyst::conformance {
namespace {

bool parse_u64(const std::string& text, uint64_t* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 0);
  if (errno || *end || text[0] == '-') return false;
  *out = v;
  return true;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, separator)) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

bool is_file(const std::string& path) {
  return access(path.c_str(), R_OK) == 0;
}

}  // namespace

void print_usage(FILE* out) {
  std::fprintf(out,
               "usage: catalyst conformance --plugin PATH|NAME [options]\n"
               "\n"
               "Runs every op, dtype and layout the plugin claims against Catalyst's reference kernels,\n"
               "and checks the plugin contract (bad calls, leaks, streams, events, threads, copies).\n"
               "Each test group runs in a child process, so a crash or a hang is reported, not fatal.\n"
               "\n"
               "options:\n"
               "  --plugin PATH|NAME     the plugin file, or a name (cpu -> libcatalyst-cpu.so) found in\n"
               "                         CATALYST_PLUGIN_PATH or the installed plugin directory\n"
               "  --device N             which of the plugin's devices (default 0)\n"
               "  --level core|training|full\n"
               "                         core: what inference needs (f32, i32, i64, bool and the contract);\n"
               "                         training: core + backward and fused training ops;\n"
               "                         full: everything the plugin claims (default)\n"
               "  --filter PATTERN       only cases whose id matches a shell glob (comma separated list),\n"
               "                         e.g. 'add.*', 'matmul.f16.*', 'contract.events.*'\n"
               "  --exclude PATTERN      leave out cases whose id matches (same globs), e.g. '*.large' for the\n"
               "                         2^24-element cases on a slow emulator; like --filter, it makes the run\n"
               "                         a subset that reaches no level\n"
               "  --list                 print the selected case ids and levels, run nothing\n"
               "  --seed S               seed of the random inputs (default 1); a report's rerun line has it\n"
               "  --jobs J               groups run in parallel (default: half the CPUs, at least 1)\n"
               "  --timeout SECONDS      per case; a case past it is reported as a hang (default 120)\n"
               "  --report FILE.json     every case with its result\n"
               "  --markdown FILE.md     the op x dtype coverage table and the failures\n"
               "\n"
               "exit status: 0 every claimed case passed and the level was reached; 1 something failed\n"
               "(wrong result, contract broken, crash, timeout); 2 nothing failed but the level was not\n"
               "reached (required ops or dtypes unclaimed); 3 usage error or the plugin did not load.\n");
}

bool parse_options(int argc, char** argv, Options* o, std::string* error) {
  const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  o->jobs = std::max(1u, cpus / 2);
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) {
        *error = "option " + arg + " needs a value";
        return false;
      }
      *out = argv[++i];
      return true;
    };
    std::string v;
    uint64_t n = 0;
    if (arg == "--help" || arg == "-h") {
      o->help = true;
    } else if (arg == "--plugin") {
      if (!value(&o->plugin)) return false;
    } else if (arg == "--device") {
      if (!value(&v)) return false;
      if (!parse_u64(v, &n) || n > UINT32_MAX) return *error = "--device needs a device index, got '" + v + "'", false;
      o->device = static_cast<uint32_t>(n);
    } else if (arg == "--level") {
      if (!value(&v)) return false;
      if (!parse_level(v, &o->level)) return *error = "--level is core, training or full, not '" + v + "'", false;
    } else if (arg == "--filter") {
      if (!value(&o->filter)) return false;
    } else if (arg == "--exclude") {
      if (!value(&o->exclude)) return false;
    } else if (arg == "--list") {
      o->list = true;
    } else if (arg == "--seed") {
      if (!value(&v)) return false;
      if (!parse_u64(v, &n)) return *error = "--seed needs a non-negative integer, got '" + v + "'", false;
      o->seed = n;
    } else if (arg == "--jobs" || arg == "-j") {
      if (!value(&v)) return false;
      if (!parse_u64(v, &n) || n == 0 || n > 256) return *error = "--jobs needs 1..256, got '" + v + "'", false;
      o->jobs = static_cast<unsigned>(n);
    } else if (arg == "--timeout") {
      if (!value(&v)) return false;
      char* end = nullptr;
      const double t = std::strtod(v.c_str(), &end);
      if (*end || !(t > 0)) return *error = "--timeout needs a positive number of seconds, got '" + v + "'", false;
      o->timeout_seconds = t;
    } else if (arg == "--report") {
      if (!value(&o->report_path)) return false;
    } else if (arg == "--markdown") {
      if (!value(&o->markdown_path)) return false;
    } else if (arg == "--worker") {
      o->worker = true;
    } else if (arg == "--probe") {
      o->probe = true;
    } else if (arg == "--group") {
      if (!value(&o->group)) return false;
    } else if (arg == "--resume-after") {
      if (!value(&o->resume_after)) return false;
    } else if (arg == "--result-fd") {
      if (!value(&v)) return false;
      if (!parse_u64(v, &n) || n > 1024) return *error = "--result-fd needs a descriptor", false;
      o->result_fd = static_cast<int>(n);
    } else {
      *error = "unknown option '" + arg + "'";
      return false;
    }
  }
  if (!o->help && !o->list && o->plugin.empty()) {
    *error = "--plugin is required (a plugin file, or a name such as cpu)";
    return false;
  }
  return true;
}

bool resolve_plugin(const std::string& given, std::string* path, std::string* error) {
  std::vector<std::string> candidates;
  if (given.find('/') != std::string::npos || (given.size() > 3 && given.substr(given.size() - 3) == ".so")) {
    candidates.push_back(given);
  } else {
    const std::string file = "libcatalyst-" + given + ".so";
    if (const char* env = std::getenv("CATALYST_PLUGIN_PATH")) {
      for (const auto& dir : split(env, ':')) candidates.push_back(dir + "/" + file);
    }
    char self[PATH_MAX];
    const ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
    if (length > 0) {
      self[length] = '\0';
      std::string dir(self);
      dir.resize(dir.rfind('/'));
      candidates.push_back(dir + "/../lib/catalyst/plugins/" + file);
      candidates.push_back(dir + "/../lib64/catalyst/plugins/" + file);
    }
  }
  for (const auto& c : candidates) {
    if (!is_file(c)) continue;
    char real[PATH_MAX];
    if (!realpath(c.c_str(), real)) continue;
    *path = real;
    return true;
  }
  std::string tried;
  for (const auto& c : candidates) tried += "\n  " + c;
  *error = "cannot find plugin '" + given + "'; tried:" + tried;
  return false;
}

bool filter_matches(const std::string& filter, const std::string& id) {
  if (filter.empty()) return true;
  for (const auto& pattern : split(filter, ',')) {
    if (fnmatch(pattern.c_str(), id.c_str(), 0) == 0) return true;
  }
  return false;
}

bool case_selected(const Options& o, const std::string& id) {
  return filter_matches(o.filter, id) && (o.exclude.empty() || !filter_matches(o.exclude, id));
}

}  // namespace catalyst::conformance
