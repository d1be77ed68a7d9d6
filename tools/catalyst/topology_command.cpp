// topology_command.cpp — `catalyst topology`: the machine (packages, NUMA nodes, cores,
// caches, PCI devices), where each Catalyst device sits on it, the link class and copy
// bandwidth between every two devices, and the order automatic placement prefers, so that
// a user can see why work went where it went. The core renders it
// (ctl_runtime_topology_describe), so bindings print the same; this file adds options.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "catalyst.h"
#include "commands.h"

namespace catalyst::cli {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitInternal = 1;
constexpr int kExitUsage = 2;

void print_usage(FILE* out) {
  std::fprintf(out,
               "usage: catalyst topology [--json] [--measure] [--plugin PATH]...\n"
               "\n"
               "Shows the machine as hwloc sees it (packages, NUMA nodes, cores, caches, PCI devices),\n"
               "which package and NUMA node each device is near and how that was found (or why its\n"
               "locality is unknown), the link class and copy bandwidth between every two devices, and\n"
               "the order automatic placement prefers, with the reason for each step.\n"
               "\n"
               "options:\n"
               "  --json          machine-readable output on standard output (docs/topology.md)\n"
               "  --measure       time an 8 MiB copy between every two devices first (a few ms each;\n"
               "                  kept in the cache directory, so later runs show the figures too)\n"
               "  --plugin PATH   a plugin file to load before the discovered ones (repeatable)\n"
               "\n"
               "environment:\n"
               "  CATALYST_TOPOLOGY=FILE   replaces detection: an hwloc XML file or Catalyst's JSON topology\n"
               "  HWLOC_XMLFILE, HWLOC_SYNTHETIC   as hwloc defines them\n"
               "  CATALYST_CACHE_DIR=DIR|off   where measurements are kept (default ~/.cache/catalyst)\n"
               "  CATALYST_PLUGINS, CATALYST_PLUGIN_PATH, CATALYST_LOG (catalyst help describes them)\n"
               "\n"
               "exit status: 0 shown; 1 the runtime could not be created or a copy failed; 2 usage error\n");
}

int fail(ctl_status* status, const char* what) {
  std::fprintf(stderr, "catalyst topology: %s: %s: %s\n", what, ctl_status_code_name(ctl_status_get_code(status)),
               ctl_status_get_message(status));
  ctl_status_free(status);
  return kExitInternal;
}

// Times every ordered pair of distinct devices (ctl_runtime_measure_device_link).
int measure_all(ctl_runtime* runtime) {
  const size_t count = ctl_runtime_device_count(runtime);
  for (size_t a = 0; a < count; ++a) {
    for (size_t b = 0; b < count; ++b) {
      if (a == b) continue;
      ctl_device* from = nullptr;
      ctl_device* to = nullptr;
      if (ctl_status* status = ctl_runtime_device(runtime, a, &from)) return fail(status, "device");
      if (ctl_status* status = ctl_runtime_device(runtime, b, &to)) return fail(status, "device");
      ctl_device_link link{};
      link.struct_size = CTL_DEVICE_LINK_STRUCT_SIZE;
      if (ctl_status* status = ctl_runtime_measure_device_link(runtime, from, to, &link)) {
        return fail(status, "measuring a link");
      }
    }
  }
  return kExitOk;
}

}  // namespace

int topology_command(int argc, char** argv) {
  bool as_json = false;
  bool measure = false;
  std::vector<const char*> paths;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      as_json = true;
    } else if (std::strcmp(argv[i], "--measure") == 0) {
      measure = true;
    } else if (std::strcmp(argv[i], "--plugin") == 0 && i + 1 < argc) {
      paths.push_back(argv[++i]);
    } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      print_usage(stdout);
      return kExitOk;
    } else {
      std::fprintf(stderr, "catalyst topology: unknown option or missing value '%s'\n\n", argv[i]);
      print_usage(stderr);
      return kExitUsage;
    }
  }
  ctl_runtime_options options{};
  options.struct_size = CTL_RUNTIME_OPTIONS_STRUCT_SIZE;
  options.plugin_paths = paths.data();
  options.plugin_path_count = paths.size();
  ctl_runtime* runtime = nullptr;
  if (ctl_status* status = ctl_runtime_create(&options, &runtime)) return fail(status, "creating the runtime");
  int exit_status = measure ? measure_all(runtime) : kExitOk;
  if (exit_status == kExitOk) {
    const ctl_topology_format format = as_json ? CTL_TOPOLOGY_FORMAT_JSON : CTL_TOPOLOGY_FORMAT_TEXT;
    size_t length = 0;
    std::string text;
    ctl_status* status = ctl_runtime_topology_describe(runtime, format, nullptr, 0, &length);
    if (!status) {
      text.resize(length + 1);
      status = ctl_runtime_topology_describe(runtime, format, text.data(), text.size(), &length);
    }
    if (status) {
      exit_status = fail(status, "describing the topology");
    } else {
      text.resize(std::min(length, text.size() - 1));
      std::fputs(text.c_str(), stdout);
      std::fflush(stdout);
    }
  }
  ctl_runtime_release(runtime);
  return exit_status;
}

}  // namespace catalyst::cli
