// device_name.h — the one parser of device names ("cpu:0", "opencl", "2"; see "Device
// names" in catalyst.h), behind ctl_runtime_find_device and CATALYST_DEVICE alike.
#pragma once

#include <string>
#include <string_view>

#include "catalyst.h"

struct ctl_runtime;
struct ctl_device;

namespace catalyst {

// The name "<plugin>:<n>" of the device about to be added to `runtime` for `plugin_name`.
std::string next_device_name(const ctl_runtime& runtime, const std::string& plugin_name);

// The device `name` means. On failure returns NOT_FOUND or INVALID_ARGUMENT with a message
// that starts with `what` (e.g. "CATALYST_DEVICE=\"x\"") and lists every valid name.
ctl_status* find_device_by_name(const ctl_runtime& runtime, std::string_view name, const std::string& what,
                                ctl_device** out_device);

// "0 = cpu:0, 1 = opencl:0" for messages; "none (the runtime has no devices)" when empty.
std::string device_name_list(const ctl_runtime& runtime);

}  // namespace catalyst
