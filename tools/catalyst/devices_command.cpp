// devices_command.cpp — `catalyst devices`: like clinfo or vulkaninfo, every plugin file
// discovery saw (accepted or rejected, and why) and every device with its properties and
// the name --device and CATALYST_DEVICE take.
//
// Finding broken plugins is what this command is for, so it must survive them: each
// candidate file is first loaded in a child process (plugin_probe.h), and only the files
// that loaded there are loaded here. A crash or hang is reported with the file's name and
// the signal or the timeout, and the listing goes on. Embedding programs load in-process
// as before; the probe is this tool's own caution.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "catalyst.h"
#include "catalyst_comm.h"
#include "commands.h"
#include "json_writer.h"
#include "plugin_probe.h"

namespace catalyst::cli {
namespace {

constexpr double kDefaultProbeTimeout = 60;

// Exit statuses, as --help and the README give them.
constexpr int kExitOk = 0;
constexpr int kExitInternal = 1;
constexpr int kExitUsage = 2;
constexpr int kExitNamedPluginUnusable = 3;
constexpr int kExitBadDefaultDevice = 4;

void print_usage(FILE* out) {
  std::fprintf(out,
               "usage: catalyst devices [--json] [--plugin PATH]... [--probe-timeout SECONDS]\n"
               "\n"
               "Lists every plugin file discovery finds (and every --plugin file), whether it was\n"
               "accepted and why, and every device with its name as --device and CATALYST_DEVICE take\n"
               "it (cpu:0, opencl:1, ...); the default device is marked. Each plugin is first loaded\n"
               "in a child process, so one that crashes or hangs while loading is reported with the\n"
               "signal or the timeout, left out, and the listing goes on.\n"
               "\n"
               "options:\n"
               "  --json                   machine-readable output on standard output\n"
               "  --plugin PATH            a plugin file to load before the discovered ones (repeatable)\n"
               "  --probe-timeout SECONDS  how long one plugin may take to load (default %g)\n"
               "\n"
               "exit status:\n"
               "  0  listed, and every --plugin file was accepted\n"
               "  1  internal error: the runtime could not be created\n"
               "  2  usage error\n"
               "  3  a --plugin file was not found, was rejected, or crashed, hung or exited while\n"
               "     loading (the listing is still printed)\n"
               "  4  CATALYST_DEVICE names no device (the listing is printed with no default)\n"
               "\n"
               "environment: CATALYST_PLUGINS, CATALYST_PLUGIN_PATH, CATALYST_DEVICE, CATALYST_LOG\n"
               "(catalyst help describes them)\n",
               kDefaultProbeTimeout);
}

const char* kind_name(ctl_device_kind kind) {
  switch (kind) {
    case CTL_DEVICE_KIND_CPU:
      return "cpu";
    case CTL_DEVICE_KIND_GPU:
      return "gpu";
    case CTL_DEVICE_KIND_ACCELERATOR:
      return "accelerator";
  }
  return "unknown";
}

const char* level_name(ctl_log_level level) {
  switch (level) {
    case CTL_LOG_DEBUG:
      return "debug";
    case CTL_LOG_INFO:
      return "info";
    case CTL_LOG_WARNING:
      return "warning";
    case CTL_LOG_ERROR:
      return "error";
    case CTL_LOG_OFF:
      break;
  }
  return "log";
}

std::string dtype_list(uint32_t mask) {
  std::string out;
  for (int d = 0; d < CTL_DTYPE_COUNT_; ++d) {
    if (!(mask & CTL_DTYPE_BIT(d))) continue;
    if (!out.empty()) out += " ";
    out += ctl_dtype_name(static_cast<ctl_dtype>(d));
  }
  return out;
}

// 0 bytes is how the ABI says "unknown" (catalyst.h, ctl_device_info).
std::string bytes_text(uint64_t bytes) {
  if (bytes == 0) return "unknown";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.1f GiB (%llu bytes)", bytes / 1073741824.0,
                static_cast<unsigned long long>(bytes));
  return buffer;
}

std::string uuid_text(const ctl_device_info& info) {
  if (!info.has_uuid) return "";
  std::string out;
  char buffer[4];
  for (int i = 0; i < 16; ++i) {
    std::snprintf(buffer, sizeof buffer, "%02x", info.uuid[i]);
    out += buffer;
    if (i == 3 || i == 5 || i == 7 || i == 9) out += "-";
  }
  return out;
}

std::string take_message(ctl_status* status) {
  std::string message =
      std::string(ctl_status_code_name(ctl_status_get_code(status))) + ": " + ctl_status_get_message(status);
  ctl_status_free(status);
  return message;
}

int fail(ctl_status* status, const char* what) {
  std::fprintf(stderr, "catalyst devices: %s: %s\n", what, take_message(status).c_str());
  return kExitInternal;
}

// One line of the plugin report: the runtime's ctl_plugin_info, or the probe's verdict for
// a file that never reached this process.
struct PluginRow {
  std::string path, source, name, version, reason;
  std::string state;  // "accepted", "rejected", "crashed", "timed out", "exited"
  uint32_t abi_major = 0, abi_minor = 0;
  uint64_t device_count = 0;
  int signal = 0;
  bool accepted() const { return state == "accepted"; }
};

struct Device {
  ctl_device* handle = nullptr;
  ctl_device_info info{};
  std::string id;  // "opencl:1" (catalyst.h, "Device names")
  bool is_default = false;
};

struct Listing {
  std::vector<PluginRow> plugins;
  std::vector<Device> devices;
  std::string default_id;                     // "" when there is none
  std::string default_error;                  // why there is none
  std::vector<ctl_plugin_info> comm_plugins;  // libcatalyst-comm-*.so (catalyst_comm.h)
};

// Communication plugins on the same search path (loaded in this process: listing one only
// asks its query symbol for a table; no communicator is made).
void list_comm_plugins(ctl_runtime* runtime, Listing* listing) {
  for (size_t i = 0; i < ctl_runtime_comm_plugin_count(runtime); ++i) {
    ctl_plugin_info info{};
    info.struct_size = CTL_PLUGIN_INFO_STRUCT_SIZE;
    if (ctl_status* status = ctl_runtime_comm_plugin_info(runtime, i, &info)) {
      ctl_status_free(status);
      continue;
    }
    listing->comm_plugins.push_back(info);
  }
}

void print_comm_plugins_text(const Listing& listing) {
  std::printf("\nCommunication plugins (%zu found)\n", listing.comm_plugins.size());
  for (const auto& p : listing.comm_plugins) {
    std::printf("  %-11s %s\n", p.accepted ? "[accepted]" : "[rejected]", p.path);
    if (*p.name) std::printf("      name            %s %s\n", p.name, p.version);
    std::printf("      found via       %s\n", p.source);
    std::printf("      %-15s %s\n", p.accepted ? "status" : "reason", p.reason);
  }
}

void print_comm_plugins_json(const Listing& listing, JsonWriter& json) {
  json.begin_array("comm_plugins");
  for (const auto& p : listing.comm_plugins) {
    json.begin_object();
    json.value("path", p.path);
    json.value("name", p.name);
    json.value("version", p.version);
    json.value("accepted", p.accepted);
    json.value("reason", p.reason);
    json.value("source", p.source);
    json.end_object();
  }
  json.end_array();
}

PluginRow row_from_info(const ctl_plugin_info& p) {
  PluginRow row;
  row.path = p.path;
  row.source = p.source;
  row.name = p.name;
  row.version = p.version;
  row.reason = p.reason;
  row.state = p.accepted ? "accepted" : "rejected";
  row.abi_major = p.abi_major;
  row.abi_minor = p.abi_minor;
  row.device_count = p.device_count;
  return row;
}

// The probe's verdict for a file that did not load cleanly in the child. The child's log
// lines go to standard error first: they are all that is known of how far it got.
PluginRow row_from_probe(const PluginRow& candidate, const ProbeResult& probe, double timeout_seconds) {
  for (const auto& line : probe.log) {
    std::fprintf(stderr, "catalyst %s: %s\n", level_name(line.level), line.text.c_str());
  }
  PluginRow row = candidate;
  row.name = probe.name;
  row.version = probe.version;
  const char* when = probe.unloading ? "while unloading" : "while loading";
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%g", timeout_seconds);
  switch (probe.outcome) {
    case ProbeResult::Outcome::kLoaded:
      row.reason = probe.reason;
      row.state = probe.accepted ? "accepted" : "rejected";
      return row;
    case ProbeResult::Outcome::kCrashed:
      row.state = "crashed";
      row.signal = probe.signal;
      row.reason =
          std::string("crashed ") + when + ": " + signal_text(probe.signal) + " in the probe process; left out";
      break;
    case ProbeResult::Outcome::kTimedOut:
      row.state = "timed out";
      row.reason = std::string("no answer within ") + seconds + " s " + when +
                   " (it hangs, or needs a longer --probe-timeout); the probe process was killed; left out";
      break;
    case ProbeResult::Outcome::kExited:
      row.state = "exited";
      row.reason = std::string("ended the probe process ") + when + " with exit status " +
                   std::to_string(probe.exit_code) + "; left out";
      break;
    case ProbeResult::Outcome::kNotRun:
      row.state = "rejected";
      row.reason = "could not be probed (" + probe.reason + "); left out";
      break;
  }
  std::fprintf(stderr, "catalyst devices: plugin %s %s\n", row.path.c_str(), row.reason.c_str());
  return row;
}

void print_text(const Listing& listing) {
  std::printf("Plugins (%zu found)\n", listing.plugins.size());
  for (const auto& p : listing.plugins) {
    const std::string tag = "[" + p.state + "]";
    std::printf("  %-11s %s\n", tag.c_str(), p.path.c_str());
    if (!p.name.empty()) std::printf("      name            %s %s\n", p.name.c_str(), p.version.c_str());
    std::printf("      found via       %s\n", p.source.c_str());
    if (p.accepted()) std::printf("      ABI             %u.%u\n", p.abi_major, p.abi_minor);
    std::printf("      %-15s %s\n", p.accepted() ? "status" : "reason", p.reason.c_str());
  }
  std::printf("\nDevices (%zu)\n", listing.devices.size());
  for (const auto& device : listing.devices) {
    const ctl_device_info& d = device.info;
    std::printf("  [%u] %s  %s%s\n", d.index, device.id.c_str(), d.name, device.is_default ? "  (default)" : "");
    std::printf("      plugin          %s\n", d.plugin_name);
    std::printf("      vendor          %s\n", d.vendor);
    std::printf("      driver          %s\n", d.driver_version);
    std::printf("      kind            %s\n", kind_name(d.kind));
    std::printf("      memory total    %s\n", bytes_text(d.memory_total).c_str());
    std::printf("      memory free     %s\n", bytes_text(d.memory_free).c_str());
    std::printf("      compute units   %u\n", d.compute_units);
    if (d.max_work_group_size) std::printf("      work-group max  %u work-items\n", d.max_work_group_size);
    std::printf("      PCI bus id      %s\n", *d.pci_bus_id ? d.pci_bus_id : "none");
    std::printf("      NUMA node       %s\n", d.numa_node < 0 ? "unknown" : std::to_string(d.numa_node).c_str());
    if (d.has_uuid) std::printf("      UUID            %s\n", uuid_text(d).c_str());
    std::printf("      host visible    %s\n", d.host_visible ? "yes" : "no");
    std::printf("      dtypes          %s\n", dtype_list(d.dtype_mask).c_str());
  }
  if (listing.devices.empty()) {
    std::printf("  none. Set CATALYST_LOG=debug to see every candidate plugin file and why it was rejected.\n");
    return;
  }
  const char* chosen = std::getenv("CATALYST_DEVICE");
  if (!listing.default_id.empty() && chosen && *chosen) {
    std::printf("\nDefault device: %s (CATALYST_DEVICE=%s)\n", listing.default_id.c_str(), chosen);
  } else if (!listing.default_id.empty()) {
    std::printf(
        "\nDefault device: %s (the first GPU or accelerator, else the first device;\n"
        "CATALYST_DEVICE=NAME chooses another)\n",
        listing.default_id.c_str());
  } else {
    std::printf("\nDefault device: none. %s\n", listing.default_error.c_str());
  }
  print_comm_plugins_text(listing);
}

void print_json(const Listing& listing) {
  JsonWriter json;
  json.begin_object();
  uint32_t major = 0, minor = 0;
  ctl_abi_version(&major, &minor);
  json.value("abi_version", std::to_string(major) + "." + std::to_string(minor));
  if (listing.default_id.empty()) {
    json.null_value("default_device");
  } else {
    json.value("default_device", listing.default_id);
  }
  json.value("default_device_error", listing.default_error);
  json.begin_array("plugins");
  for (const auto& p : listing.plugins) {
    json.begin_object();
    json.value("path", p.path);
    json.value("name", p.name);
    json.value("version", p.version);
    json.value("accepted", p.accepted());
    json.value("state", p.state);
    json.value("reason", p.reason);
    json.value("source", p.source);
    json.value("abi_version", p.accepted() ? std::to_string(p.abi_major) + "." + std::to_string(p.abi_minor) : "");
    json.value("device_count", p.device_count);
    if (p.signal) json.value("signal", static_cast<int64_t>(p.signal));
    json.end_object();
  }
  json.end_array();
  json.begin_array("devices");
  for (const auto& device : listing.devices) {
    const ctl_device_info& d = device.info;
    json.begin_object();
    json.value("index", d.index);
    json.value("id", device.id);
    json.value("default", device.is_default);
    json.value("name", d.name);
    json.value("plugin", d.plugin_name);
    json.value("vendor", d.vendor);
    json.value("driver_version", d.driver_version);
    json.value("kind", kind_name(d.kind));
    // 0 is the ABI's "unknown": null here, so that no one reads it as "none free".
    if (d.memory_total)
      json.value("memory_total", d.memory_total);
    else
      json.null_value("memory_total");
    if (d.memory_free)
      json.value("memory_free", d.memory_free);
    else
      json.null_value("memory_free");
    json.value("compute_units", d.compute_units);
    json.value("max_work_group_size", d.max_work_group_size);
    json.value("pci_bus_id", d.pci_bus_id);
    json.value("numa_node", d.numa_node);
    json.value("uuid", uuid_text(d));
    json.value("host_visible", d.host_visible);
    json.begin_array("dtypes");
    for (int t = 0; t < CTL_DTYPE_COUNT_; ++t) {
      if (d.dtype_mask & CTL_DTYPE_BIT(t)) json.value(nullptr, ctl_dtype_name(static_cast<ctl_dtype>(t)));
    }
    json.end_array();
    json.end_object();
  }
  json.end_array();
  print_comm_plugins_json(listing, json);
  json.end_object();
  std::fputs(json.text().c_str(), stdout);
}

// The candidate files, in discovery order, without loading any (discover_only).
ctl_status* discover(const std::vector<const char*>& paths, std::vector<PluginRow>* out) {
  ctl_runtime_options options{};
  options.struct_size = CTL_RUNTIME_OPTIONS_STRUCT_SIZE;
  options.plugin_paths = paths.data();
  options.plugin_path_count = paths.size();
  options.discover_only = true;
  ctl_runtime* runtime = nullptr;
  if (ctl_status* status = ctl_runtime_create(&options, &runtime)) return status;
  for (size_t i = 0; i < ctl_runtime_plugin_count(runtime); ++i) {
    ctl_plugin_info info{};
    info.struct_size = CTL_PLUGIN_INFO_STRUCT_SIZE;
    if (ctl_status* status = ctl_runtime_plugin_info(runtime, i, &info)) {
      ctl_runtime_release(runtime);
      return status;
    }
    out->push_back(row_from_info(info));
  }
  ctl_runtime_release(runtime);
  return nullptr;
}

}  // namespace

int devices_command(int argc, char** argv) {
  bool as_json = false;
  double probe_timeout = kDefaultProbeTimeout;
  std::vector<const char*> paths;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      as_json = true;
    } else if (std::strcmp(argv[i], "--plugin") == 0 && i + 1 < argc) {
      paths.push_back(argv[++i]);
    } else if (std::strcmp(argv[i], "--probe-timeout") == 0 && i + 1 < argc) {
      char* end = nullptr;
      probe_timeout = std::strtod(argv[++i], &end);
      if (*end || !(probe_timeout > 0)) {
        std::fprintf(stderr, "catalyst devices: --probe-timeout needs a positive number of seconds, got '%s'\n",
                     argv[i]);
        return kExitUsage;
      }
    } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      print_usage(stdout);
      return kExitOk;
    } else {
      std::fprintf(stderr, "catalyst devices: unknown option or missing value '%s'\n\n", argv[i]);
      print_usage(stderr);
      return kExitUsage;
    }
  }

  Listing listing;
  if (ctl_status* status = discover(paths, &listing.plugins)) return fail(status, "discovering plugins");
  std::vector<const char*> survivors;
  for (auto& row : listing.plugins) {
    const ProbeResult probe = probe_plugin(row.path, probe_timeout);
    if (probe.outcome == ProbeResult::Outcome::kLoaded && probe.accepted) {
      survivors.push_back(row.path.c_str());  // its report comes from this process's runtime below
    } else {
      row = row_from_probe(row, probe, probe_timeout);
    }
  }

  // Only the files that loaded in a child are loaded here, in discovery order, so devices
  // keep the indices and names an embedding program sees.
  ctl_runtime_options options{};
  options.struct_size = CTL_RUNTIME_OPTIONS_STRUCT_SIZE;
  options.plugin_paths = survivors.data();
  options.plugin_path_count = survivors.size();
  options.disable_discovery = true;
  ctl_runtime* runtime = nullptr;
  if (ctl_status* status = ctl_runtime_create(&options, &runtime)) return fail(status, "creating the runtime");
  std::map<std::string, ctl_plugin_info> loaded;
  for (size_t i = 0; i < ctl_runtime_plugin_count(runtime); ++i) {
    ctl_plugin_info info{};
    info.struct_size = CTL_PLUGIN_INFO_STRUCT_SIZE;
    if (ctl_status* status = ctl_runtime_plugin_info(runtime, i, &info)) return fail(status, "plugin info");
    loaded[info.path] = info;
  }
  for (auto& row : listing.plugins) {
    const auto found = loaded.find(row.path);
    if (found == loaded.end()) continue;
    const std::string source = row.source;  // this runtime saw every file as an explicit path
    row = row_from_info(found->second);
    row.source = source;
  }

  ctl_device* default_device = nullptr;
  if (ctl_status* status = ctl_runtime_default_device(runtime, &default_device)) {
    listing.default_error = ctl_status_get_message(status);
    ctl_status_free(status);
  }
  std::map<std::string, size_t> per_plugin;
  for (size_t i = 0; i < ctl_runtime_device_count(runtime); ++i) {
    Device device;
    if (ctl_status* status = ctl_runtime_device(runtime, i, &device.handle)) return fail(status, "device");
    device.info.struct_size = CTL_DEVICE_INFO_STRUCT_SIZE;
    if (ctl_status* status = ctl_device_get_info(device.handle, &device.info)) return fail(status, "device info");
    // The naming rule of catalyst.h ("Device names"); ctl_runtime_find_device reads it back.
    device.id = std::string(device.info.plugin_name) + ":" + std::to_string(per_plugin[device.info.plugin_name]++);
    device.is_default = device.handle == default_device;
    if (device.is_default) listing.default_id = device.id;
    listing.devices.push_back(device);
  }

  list_comm_plugins(runtime, &listing);
  if (as_json) {
    print_json(listing);
  } else {
    print_text(listing);
  }
  std::fflush(stdout);  // printed before any plugin code runs again at release
  ctl_runtime_release(runtime);

  for (const auto& row : listing.plugins) {
    if (row.source == "options" && !row.accepted()) return kExitNamedPluginUnusable;
  }
  const char* chosen = std::getenv("CATALYST_DEVICE");
  if (!default_device && chosen && *chosen) return kExitBadDefaultDevice;
  return kExitOk;
}

}  // namespace catalyst::cli
