// devices_command.cpp — `catalyst devices`: like clinfo or vulkaninfo, every plugin file
// discovery saw (accepted or rejected, and why) and every device with its properties.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "catalyst.h"
#include "commands.h"
#include "json_writer.h"

namespace catalyst::cli {
namespace {

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

std::string dtype_list(uint32_t mask) {
  std::string out;
  for (int d = 0; d < CTL_DTYPE_COUNT_; ++d) {
    if (!(mask & CTL_DTYPE_BIT(d))) continue;
    if (!out.empty()) out += " ";
    out += ctl_dtype_name(static_cast<ctl_dtype>(d));
  }
  return out;
}

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

int fail(ctl_status* status, const char* what) {
  std::fprintf(stderr, "catalyst devices: %s: %s: %s\n", what, ctl_status_code_name(ctl_status_get_code(status)),
               ctl_status_get_message(status));
  ctl_status_free(status);
  return 1;
}

void print_text(const ctl_runtime* runtime, const std::vector<ctl_plugin_info>& plugins,
                const std::vector<ctl_device_info>& devices) {
  std::printf("Plugins (%zu found)\n", plugins.size());
  for (const auto& p : plugins) {
    std::printf("  %s %s\n", p.accepted ? "[accepted]" : "[rejected]", p.path);
    if (*p.name) std::printf("      name            %s %s\n", p.name, p.version);
    std::printf("      found via       %s\n", p.source);
    if (p.accepted) std::printf("      ABI             %u.%u\n", p.abi_major, p.abi_minor);
    std::printf("      %-15s %s\n", p.accepted ? "status" : "reason", p.reason);
  }
  std::printf("\nDevices (%zu)\n", devices.size());
  ctl_device* default_device = nullptr;
  if (ctl_status* status = ctl_runtime_default_device(runtime, &default_device)) ctl_status_free(status);
  for (const auto& d : devices) {
    ctl_device* handle = nullptr;
    if (ctl_status* status = ctl_runtime_device(runtime, d.index, &handle)) ctl_status_free(status);
    std::printf("  [%u] %s%s\n", d.index, d.name, handle == default_device ? "  (default)" : "");
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
  if (devices.empty()) {
    std::printf("  none. Set CATALYST_LOG=debug to see every candidate plugin file and why it was rejected.\n");
  }
}

void print_json(const std::vector<ctl_plugin_info>& plugins, const std::vector<ctl_device_info>& devices) {
  JsonWriter json;
  json.begin_object();
  uint32_t major = 0, minor = 0;
  ctl_abi_version(&major, &minor);
  json.value("abi_version", std::to_string(major) + "." + std::to_string(minor));
  json.begin_array("plugins");
  for (const auto& p : plugins) {
    json.begin_object();
    json.value("path", p.path);
    json.value("name", p.name);
    json.value("version", p.version);
    json.value("accepted", p.accepted);
    json.value("reason", p.reason);
    json.value("source", p.source);
    json.value("abi_version", p.accepted ? std::to_string(p.abi_major) + "." + std::to_string(p.abi_minor) : "");
    json.value("device_count", static_cast<uint64_t>(p.device_count));
    json.end_object();
  }
  json.end_array();
  json.begin_array("devices");
  for (const auto& d : devices) {
    json.begin_object();
    json.value("index", d.index);
    json.value("name", d.name);
    json.value("plugin", d.plugin_name);
    json.value("vendor", d.vendor);
    json.value("driver_version", d.driver_version);
    json.value("kind", kind_name(d.kind));
    json.value("memory_total", d.memory_total);
    json.value("memory_free", d.memory_free);
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
  json.end_object();
  std::fputs(json.text().c_str(), stdout);
}

}  // namespace

int devices_command(int argc, char** argv) {
  bool as_json = false;
  std::vector<const char*> paths;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      as_json = true;
    } else if (std::strcmp(argv[i], "--plugin") == 0 && i + 1 < argc) {
      paths.push_back(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "catalyst devices: unknown option '%s'\nusage: catalyst devices [--json] [--plugin PATH]...\n",
                   argv[i]);
      return 2;
    }
  }
  ctl_runtime_options options{};
  options.struct_size = CTL_RUNTIME_OPTIONS_STRUCT_SIZE;
  options.plugin_paths = paths.data();
  options.plugin_path_count = paths.size();
  ctl_runtime* runtime = nullptr;
  if (ctl_status* status = ctl_runtime_create(&options, &runtime)) return fail(status, "creating the runtime");
  std::vector<ctl_plugin_info> plugins(ctl_runtime_plugin_count(runtime));
  for (size_t i = 0; i < plugins.size(); ++i) {
    plugins[i].struct_size = CTL_PLUGIN_INFO_STRUCT_SIZE;
    if (ctl_status* status = ctl_runtime_plugin_info(runtime, i, &plugins[i])) return fail(status, "plugin info");
  }
  std::vector<ctl_device_info> devices(ctl_runtime_device_count(runtime));
  for (size_t i = 0; i < devices.size(); ++i) {
    ctl_device* device = nullptr;
    if (ctl_status* status = ctl_runtime_device(runtime, i, &device)) return fail(status, "device");
    devices[i].struct_size = CTL_DEVICE_INFO_STRUCT_SIZE;
    if (ctl_status* status = ctl_device_get_info(device, &devices[i])) return fail(status, "device info");
  }
  if (as_json) {
    print_json(plugins, devices);
  } else {
    print_text(runtime, plugins, devices);
  }
  ctl_runtime_release(runtime);
  return 0;
}

}  // namespace catalyst::cli
