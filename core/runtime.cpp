// runtime.cpp — creating a runtime (discovery, loading, device enumeration) and the C
// functions that report plugins and devices.
#include "runtime.h"

#include "enum_value.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

#include "c_guard.h"
#include "device_name.h"
#include "reference/reference_plugin.h"
#include "status.h"

namespace catalyst {

ctl_status* check_runtime(const ctl_runtime* runtime, const char* argument) {
  if (!runtime) return make_status(CTL_STATUS_INVALID_ARGUMENT, "argument '%s' is NULL", argument);
  if (runtime->magic != kRuntimeMagic) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "argument '%s' is not a live ctl_runtime", argument);
  }
  return nullptr;
}

ctl_status* check_device(const ctl_device* device, const char* argument) {
  if (!device) return make_status(CTL_STATUS_INVALID_ARGUMENT, "argument '%s' is NULL", argument);
  if (device->magic != kDeviceMagic) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "argument '%s' is not a live ctl_device", argument);
  }
  return nullptr;
}

ctl_status* synchronize(ctl_device* device) {
  std::lock_guard lock(device->stream_mutex);
  const auto begin = std::chrono::steady_clock::now();
  ctl_status* status = device->api().stream_synchronize(device->stream);
  count_busy(device, begin);
  return status;
}

namespace {

constexpr uint32_t kRequiredDtypes = CTL_DTYPE_BIT(CTL_DTYPE_F32) | CTL_DTYPE_BIT(CTL_DTYPE_I32) |
                                     CTL_DTYPE_BIT(CTL_DTYPE_I64) | CTL_DTYPE_BIT(CTL_DTYPE_BOOL);

// Adds every device of an accepted plugin; a device whose stream cannot be created is
// left out with a warning rather than failing the whole runtime.
void add_devices(ctl_runtime* runtime, LoadedPlugin* plugin) {
  for (uint32_t i = 0; i < plugin->device_count; ++i) {
    auto device = std::make_unique<ctl_device>();
    device->runtime = runtime;
    device->plugin = plugin;
    device->label = plugin->name + ":" + std::to_string(i);  // the plugin's index, until it is added
    if (ctl_status* status = plugin->api.device_get(plugin->instance, i, &device->handle)) {
      runtime->logger.printf(CTL_LOG_WARNING, "device %s left out: device_get failed: %s", device->label.c_str(),
                             ctl_status_get_message(status));
      ctl_status_free(status);
      continue;
    }
    ctl_plugin_device_properties properties;
    if (ctl_status* status = device->properties(&properties)) {
      runtime->logger.printf(CTL_LOG_WARNING, "device %s left out: device_properties failed: %s", device->label.c_str(),
                             ctl_status_get_message(status));
      ctl_status_free(status);
      continue;
    }
    device->host_visible = properties.host_visible && plugin->api.buffer_host_pointer;
    device->dtype_mask = properties.dtype_mask;
    if (ctl_status* status = plugin->api.stream_create(device->handle, &device->stream)) {
      runtime->logger.printf(CTL_LOG_WARNING, "device %s left out: stream_create failed: %s", device->label.c_str(),
                             ctl_status_get_message(status));
      ctl_status_free(status);
      continue;
    }
    device->index = static_cast<uint32_t>(runtime->devices.size());
    device->label = next_device_name(*runtime, plugin->name);
    runtime->logger.printf(CTL_LOG_DEBUG, "device %u: %s (%s)", device->index, properties.name ? properties.name : "?",
                           device->label.c_str());
    runtime->devices.push_back(std::move(device));
  }
}

// The default device by the rule in catalyst.h: CATALYST_DEVICE when set, else the first
// GPU or accelerator, else the first device other than the built-in reference, else the
// reference. Logged at info with the reason, because "why is it running there?" is the
// first question when a program picks a device by itself.
void choose_default_device(ctl_runtime* runtime) {
  const char* requested = std::getenv("CATALYST_DEVICE");
  if (requested && *requested) {
    ctl_device* device = nullptr;
    const std::string what = std::string("CATALYST_DEVICE=\"") + requested + "\"";
    if (ctl_status* status = find_device_by_name(*runtime, requested, what, &device)) {
      runtime->default_device_error = ctl_status_get_message(status);
      ctl_status_free(status);
      runtime->logger.printf(CTL_LOG_INFO, "no default device: %s", runtime->default_device_error.c_str());
      return;
    }
    runtime->default_device = device;
    runtime->logger.printf(CTL_LOG_INFO, "default device: %s (chosen by %s)", device->label.c_str(), what.c_str());
    return;
  }
  ctl_device* first = nullptr;
  const char* why = "the first device; there is no GPU or accelerator";
  for (const auto& device : runtime->devices) {
    if (device->plugin->candidate.source == "builtin") continue;  // the oracle is never chosen by itself
    ctl_plugin_device_properties properties;
    if (ctl_status* status = device->properties(&properties)) {
      ctl_status_free(status);
      continue;
    }
    if (properties.kind != CTL_DEVICE_KIND_CPU) {
      first = device.get();
      why = "the first GPU or accelerator";
      break;
    }
    if (!first) first = device.get();
  }
  if (!first && !runtime->devices.empty()) {
    first = runtime->devices.front().get();
    why = "the built-in reference device is the only device";
  }
  if (!first) {
    runtime->default_device_error =
        "the runtime has no devices: no plugin was accepted (run `catalyst devices` or set CATALYST_LOG=debug to "
        "see why)";
    return;
  }
  runtime->default_device = first;
  runtime->logger.printf(CTL_LOG_INFO, "default device: %s (%s; CATALYST_DEVICE=NAME chooses another)",
                         first->label.c_str(), why);
}

}  // namespace
}  // namespace catalyst

using namespace catalyst;

ctl_status* ctl_device::properties(ctl_plugin_device_properties* out) const {
  std::memset(out, 0, sizeof *out);
  out->struct_size = sizeof *out;
  out->name = "";
  out->vendor = "";
  out->driver_version = "";
  out->numa_node = -1;
  out->dtype_mask = kRequiredDtypes;
  CTL_RETURN_IF_ERROR(plugin->api.device_properties(handle, out));
  out->struct_size = sizeof *out;
  if (!out->name) out->name = "";
  if (!out->vendor) out->vendor = "";
  if (!out->driver_version) out->driver_version = "";
  return nullptr;
}

ctl_runtime::~ctl_runtime() {
  for (auto& device : devices) {
    if (device->stream) device->api().stream_destroy(device->stream);
    device->magic = 0;
  }
  devices.clear();
  for (auto& plugin : plugins) unload_plugin(*plugin);
  for (auto& plugin : plugins) {
    if (plugin->library) dlclose(plugin->library);
  }
  magic = 0;
}

extern "C" {

CTL_EXPORT ctl_status* ctl_runtime_create(const ctl_runtime_options* options, ctl_runtime** out_runtime) {
  return guard([&]() -> ctl_status* {
    CTL_CHECK_ARG(out_runtime, "argument 'out_runtime' is NULL");
    ctl_runtime_options opts{};
    if (options) {
      CTL_CHECK_ARG(options->struct_size >= offsetof(ctl_runtime_options, plugin_paths),
                    "options->struct_size is %zu, too small for ctl_runtime_options", options->struct_size);
      std::memcpy(&opts, options, std::min(options->struct_size, sizeof opts));
      CTL_CHECK_ARG(opts.plugin_path_count == 0 || opts.plugin_paths,
                    "options->plugin_paths is NULL but plugin_path_count is %zu", opts.plugin_path_count);
      const int level = enum_value(opts.log_level);
      CTL_CHECK_ARG(!opts.log_level_set || (level >= CTL_LOG_DEBUG && level <= CTL_LOG_OFF),
                    "options->log_level is %d, not a ctl_log_level", level);
    }
    const ctl_log_level level = opts.log_level_set ? opts.log_level : CTL_LOG_WARNING;
    auto runtime = std::make_unique<ctl_runtime>(Logger(opts.log_fn, opts.log_user_data, level));
    const auto candidates =
        discover_plugins(opts.plugin_paths, opts.plugin_path_count, opts.disable_discovery, runtime->logger);
    for (const auto& candidate : candidates) {
      if (opts.discover_only) {
        runtime->plugins.push_back(unloaded_plugin(candidate, "not loaded: discover_only"));
        continue;
      }
      auto plugin = load_plugin(candidate, runtime->logger);
      if (!plugin->accepted && candidate.source == "options") {
        runtime->logger.printf(CTL_LOG_WARNING, "plugin %s rejected: %s", candidate.path.c_str(),
                               plugin->reason.c_str());
      }
      runtime->plugins.push_back(std::move(plugin));
    }
    if (opts.enable_reference_device && !opts.discover_only) {
      runtime->plugins.push_back(
          load_builtin_plugin("reference kernels", &reference::reference_plugin_query, runtime->logger));
    }
    for (auto& plugin : runtime->plugins) {
      if (plugin->accepted) add_devices(runtime.get(), plugin.get());
    }
    if (runtime->devices.empty() && !opts.discover_only) {
      runtime->logger.write(CTL_LOG_INFO,
                            "no devices: no plugin was accepted (CATALYST_LOG=debug lists every candidate)");
    }
    if (opts.discover_only) {
      runtime->default_device_error =
          "the runtime was created with discover_only: it loads no plugins, so it has "
          "no devices";
    } else {
      choose_default_device(runtime.get());
    }
    *out_runtime = runtime.release();
    return nullptr;
  });
}

CTL_EXPORT void ctl_runtime_retain(ctl_runtime* runtime) {
  if (runtime && runtime->magic == kRuntimeMagic) runtime->references.fetch_add(1);
}

CTL_EXPORT void ctl_runtime_release(ctl_runtime* runtime) {
  if (!runtime || runtime->magic != kRuntimeMagic) return;
  if (runtime->references.fetch_sub(1) == 1) delete runtime;
}

CTL_EXPORT size_t ctl_runtime_plugin_count(const ctl_runtime* runtime) {
  return runtime && runtime->magic == kRuntimeMagic ? runtime->plugins.size() : 0;
}

CTL_EXPORT ctl_status* ctl_runtime_plugin_info(const ctl_runtime* runtime, size_t index, ctl_plugin_info* out_info) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_runtime(runtime, "runtime"));
    CTL_CHECK_ARG(out_info, "argument 'out_info' is NULL");
    CTL_CHECK_ARG(out_info->struct_size >= offsetof(ctl_plugin_info, next),
                  "out_info->struct_size is %zu; set it to CTL_PLUGIN_INFO_STRUCT_SIZE", out_info->struct_size);
    if (index >= runtime->plugins.size()) {
      return make_status(CTL_STATUS_OUT_OF_RANGE, "argument 'index' is %zu but the runtime has %zu plugins", index,
                         runtime->plugins.size());
    }
    const LoadedPlugin& plugin = *runtime->plugins[index];
    ctl_plugin_info info{};
    info.struct_size = sizeof info;
    info.next = out_info->next;
    info.path = plugin.candidate.path.c_str();
    info.name = plugin.name.c_str();
    info.version = plugin.version.c_str();
    info.accepted = plugin.accepted;
    info.reason = plugin.reason.c_str();
    info.source = plugin.candidate.source.c_str();
    info.abi_major = plugin.accepted ? plugin.abi_major : 0;
    info.abi_minor = plugin.accepted ? plugin.abi_minor : 0;
    for (const auto& device : runtime->devices) info.device_count += device->plugin == &plugin;
    copy_out(&info, out_info);
    return nullptr;
  });
}

CTL_EXPORT size_t ctl_runtime_device_count(const ctl_runtime* runtime) {
  return runtime && runtime->magic == kRuntimeMagic ? runtime->devices.size() : 0;
}

CTL_EXPORT ctl_status* ctl_runtime_device(const ctl_runtime* runtime, size_t index, ctl_device** out_device) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_runtime(runtime, "runtime"));
    CTL_CHECK_ARG(out_device, "argument 'out_device' is NULL");
    if (index >= runtime->devices.size()) {
      return make_status(CTL_STATUS_OUT_OF_RANGE, "argument 'index' is %zu but the runtime has %zu devices", index,
                         runtime->devices.size());
    }
    *out_device = runtime->devices[index].get();
    return nullptr;
  });
}

CTL_EXPORT ctl_status* ctl_runtime_find_device(const ctl_runtime* runtime, const char* name, ctl_device** out_device) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_runtime(runtime, "runtime"));
    CTL_CHECK_ARG(name, "argument 'name' is NULL");
    CTL_CHECK_ARG(out_device, "argument 'out_device' is NULL");
    return find_device_by_name(*runtime, name, std::string("argument 'name' (\"") + name + "\")", out_device);
  });
}

CTL_EXPORT ctl_status* ctl_runtime_default_device(const ctl_runtime* runtime, ctl_device** out_device) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_runtime(runtime, "runtime"));
    CTL_CHECK_ARG(out_device, "argument 'out_device' is NULL");
    if (!runtime->default_device) return make_status_string(CTL_STATUS_NOT_FOUND, runtime->default_device_error);
    *out_device = runtime->default_device;
    return nullptr;
  });
}

CTL_EXPORT ctl_status* ctl_device_get_info(const ctl_device* device, ctl_device_info* out_info) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_device(device, "device"));
    CTL_CHECK_ARG(out_info, "argument 'out_info' is NULL");
    CTL_CHECK_ARG(out_info->struct_size >= offsetof(ctl_device_info, next),
                  "out_info->struct_size is %zu; set it to CTL_DEVICE_INFO_STRUCT_SIZE", out_info->struct_size);
    ctl_plugin_device_properties properties;
    CTL_RETURN_IF_ERROR(device->properties(&properties));
    ctl_device_info info{};
    info.struct_size = sizeof info;
    info.next = out_info->next;
    info.name = properties.name;
    info.vendor = properties.vendor;
    info.driver_version = properties.driver_version;
    info.plugin_name = device->plugin->name.c_str();
    info.kind = properties.kind;
    info.memory_total = properties.memory_total;
    info.memory_free = properties.memory_free;
    info.compute_units = properties.compute_units;
    info.pci_bus_id = properties.pci_bus_id ? properties.pci_bus_id : "";
    info.numa_node = properties.numa_node;
    std::memcpy(info.uuid, properties.uuid, sizeof info.uuid);
    info.has_uuid = properties.has_uuid;
    info.dtype_mask = properties.dtype_mask;
    info.host_visible = device->host_visible;
    info.index = device->index;
    info.max_work_group_size = properties.max_work_group_size;
    copy_out(&info, out_info);
    return nullptr;
  });
}

CTL_EXPORT ctl_status* ctl_device_synchronize(ctl_device* device) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_device(device, "device"));
    return synchronize(device);
  });
}

}  // extern "C"
