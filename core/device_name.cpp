// device_name.cpp — see device_name.h. Names are the plugin's own name and the device's
// position among that plugin's devices, so they stay the same whatever other plugins a
// machine has, unlike indices.
#include "device_name.h"

#include <charconv>

#include "runtime.h"
#include "status.h"

namespace catalyst {
namespace {

// A non-empty run of decimal digits that fits `out`.
bool parse_count(std::string_view text, size_t* out) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos) return false;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return error == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::string next_device_name(const ctl_runtime& runtime, const std::string& plugin_name) {
  size_t same_plugin = 0;
  for (const auto& device : runtime.devices) same_plugin += device->plugin->name == plugin_name;
  return plugin_name + ":" + std::to_string(same_plugin);
}

std::string device_name_list(const ctl_runtime& runtime) {
  if (runtime.devices.empty()) return "none (the runtime has no devices)";
  std::string list;
  for (const auto& device : runtime.devices) {
    if (!list.empty()) list += ", ";
    list += std::to_string(device->index) + " = " + device->label;
  }
  return list;
}

ctl_status* find_device_by_name(const ctl_runtime& runtime, std::string_view name, const std::string& what,
                                ctl_device** out_device) {
  const auto not_found = [&](const char* why) {
    return make_status_string(CTL_STATUS_NOT_FOUND, what + " " + why + "; the devices are: " +
                                                        device_name_list(runtime) + " (`catalyst devices` lists them)");
  };
  size_t index = 0;
  if (parse_count(name, &index)) {
    if (index < runtime.devices.size()) {
      *out_device = runtime.devices[index].get();
      return nullptr;
    }
    return not_found("is past the last device index");
  }
  const size_t colon = name.find(':');
  const std::string_view plugin = name.substr(0, colon);
  size_t nth = 0;
  if (plugin.empty() || (colon != std::string_view::npos && !parse_count(name.substr(colon + 1), &nth))) {
    return make_status_string(CTL_STATUS_INVALID_ARGUMENT,
                              what +
                                  " is not a device name: write <plugin>:<n> (\"opencl:0\"), a plugin name "
                                  "alone (\"cpu\") or a device index (\"0\"); the devices are: " +
                                  device_name_list(runtime));
  }
  for (const auto& device : runtime.devices) {
    if (device->plugin->name == plugin && nth-- == 0) {
      *out_device = device.get();
      return nullptr;
    }
  }
  return not_found("names no device");
}

}  // namespace catalyst
