// runtime.h — the structs behind ctl_runtime and ctl_device: loaded plugins, their
// devices, and each device's default stream.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "catalyst_plugin.h"
#include "log.h"
#include "placement/placement_state.h"
#include "plugin_loader.h"

namespace catalyst {
constexpr uint32_t kRuntimeMagic = 0x52544c43;  // "CLTR"
constexpr uint32_t kDeviceMagic = 0x56444c43;   // "CLDV"
class RuntimeTopology;  // core/topology/runtime_topology.h
}  // namespace catalyst

struct ctl_device {
  uint32_t magic = catalyst::kDeviceMagic;
  ctl_runtime* runtime = nullptr;
  catalyst::LoadedPlugin* plugin = nullptr;
  ctl_plugin_device* handle = nullptr;
  uint32_t index = 0;
  ctl_plugin_stream* stream = nullptr;  // the default stream every op of this device uses
  std::mutex stream_mutex;              // serialises submissions from several threads
  bool host_visible = false;
  uint32_t dtype_mask = 0;
  std::string label;  // its name, "cpu:0" (device_name.h): what CATALYST_DEVICE and --device take
  catalyst::DeviceUsage usage;  // ctl_device_get_usage (placement/placement_state.h)

  const ctl_plugin_api& api() const { return plugin->api; }
  // Properties with the core's defaults under whatever an older plugin did not fill.
  ctl_status* properties(ctl_plugin_device_properties* out) const;
};

struct ctl_runtime {
  uint32_t magic = catalyst::kRuntimeMagic;
  std::atomic<int64_t> references{1};
  catalyst::Logger logger;
  std::vector<std::unique_ptr<catalyst::LoadedPlugin>> plugins;
  std::vector<std::unique_ptr<ctl_device>> devices;
  std::atomic<bool> grad_enabled{true};  // autograd records ops (ctl_runtime_set_grad_enabled)
  // The placement policy and its report (placement/): cross-device inputs and fallback.
  std::unique_ptr<catalyst::PlacementState> placement = std::make_unique<catalyst::PlacementState>();
  // Chosen once at creation (CATALYST_DEVICE or the rule in catalyst.h); when there is none,
  // default_device_error says why and ctl_runtime_default_device returns it.
  ctl_device* default_device = nullptr;
  std::string default_device_error;
  // Host topology, device localities and links (core/topology/), made on first use so that
  // creating a runtime never waits for hwloc; see runtime_topology().
  mutable std::once_flag topology_once;
  mutable std::shared_ptr<catalyst::RuntimeTopology> topology;

  explicit ctl_runtime(catalyst::Logger log) : logger(std::move(log)) {}
  ~ctl_runtime();
};

namespace catalyst {

// Status for a NULL or foreign runtime/device handle passed as `argument`.
ctl_status* check_runtime(const ctl_runtime* runtime, const char* argument);
ctl_status* check_device(const ctl_device* device, const char* argument);

// Synchronises the device's default stream.
ctl_status* synchronize(ctl_device* device);

// Adds the time since `begin` to the device's busy time (ctl_device_get_usage).
inline void count_busy(ctl_device* device, std::chrono::steady_clock::time_point begin) {
  const auto spent = std::chrono::steady_clock::now() - begin;
  device->usage.busy_ns.fetch_add(static_cast<uint64_t>(std::chrono::nanoseconds(spent).count()),
                                  std::memory_order_relaxed);
}

}  // namespace catalyst
