// runtime_topology.cpp — loading and joining on first use, and the link table with its
// measurements.
#include "topology/runtime_topology.h"

#include <unistd.h>

#include "runtime.h"
#include "status.h"
#include "topology/link_measurement.h"
#include "topology/load_topology.h"

namespace catalyst {
namespace {

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "unknown-host";
  return name;
}

}  // namespace

RuntimeTopology::RuntimeTopology(const ctl_runtime& runtime) : runtime_(runtime) {
  model_ = topology::load_topology();
  if (!model_.loaded()) {
    runtime.logger.printf(CTL_LOG_WARNING, "topology: %s; every device has unknown locality", model_.error.c_str());
  } else {
    runtime.logger.printf(CTL_LOG_DEBUG,
                          "topology: %s: %zu package(s), %zu NUMA node(s), %u core(s), %zu PCI device(s)",
                          model_.source.c_str(), model_.packages.size(), model_.numa_nodes.size(), model_.cores,
                          model_.pci_devices.size());
  }
  for (const auto& assignment : model_.assignments) {
    bool found = false;
    for (const auto& device : runtime.devices) found = found || device->label == assignment.device;
    if (!found) {
      runtime.logger.printf(CTL_LOG_WARNING, "topology: %s places device \"%s\", which this runtime does not have",
                            model_.source.c_str(), assignment.device.c_str());
    }
  }
  const std::string host = host_name();
  for (const auto& device : runtime.devices) {
    topology::LinkEnd end;
    end.index = device->index;
    end.name = device->label;
    end.plugin = device->plugin->name;
    end.plugin_id = device->plugin;
    end.host_visible = device->host_visible;
    end.plugin_has_peer_copy = device->api().buffer_copy_peer != nullptr;
    topology::DeviceFacts facts;
    facts.name = device->label;
    std::string identity = host + "|" + device->plugin->name + "|" + device->label;
    ctl_plugin_device_properties properties;
    if (ctl_status* status = device->properties(&properties)) {
      end.locality.reason =
          std::string("unknown locality: the plugin's device_properties failed: ") + ctl_status_get_message(status);
      ctl_status_free(status);
    } else {
      facts.pci_bus_id = properties.pci_bus_id ? properties.pci_bus_id : "";
      facts.numa_node = properties.numa_node;
      end.locality = topology::join_device(model_, facts);
      identity += std::string("|") + properties.name + "|" + facts.pci_bus_id + "|" + std::to_string(facts.numa_node);
      if (properties.has_uuid) {
        char hex[3];
        identity += "|";
        for (uint8_t byte : properties.uuid) {
          std::snprintf(hex, sizeof hex, "%02x", byte);
          identity += hex;
        }
      }
    }
    runtime.logger.printf(CTL_LOG_DEBUG, "topology: %s: %s", end.name.c_str(), end.locality.reason.c_str());
    ends_.push_back(std::move(end));
    identities_.push_back(topology::cache_identity(identity));
  }
}

std::string RuntimeTopology::identity(uint32_t index) const {
  return identities_[index];
}

const topology::Link& RuntimeTopology::link(uint32_t from, uint32_t to) {
  std::lock_guard lock(mutex_);
  const auto key = std::make_pair(from, to);
  if (auto found = measured_.find(key); found != measured_.end()) return *found->second;
  uint64_t cached = 0;
  if (from != to && disk_.lookup(identity(from), identity(to), &cached)) {
    auto link = std::make_unique<topology::Link>(topology::classify_link(ends_[from], ends_[to]));
    link->bytes_per_second = cached;
    link->measured = true;
    link->description += "; measured earlier (" + disk_.path() + ")";
    return *measured_.emplace(key, std::move(link)).first->second;
  }
  auto& slot = estimated_[key];
  if (!slot) slot = std::make_unique<topology::Link>(topology::classify_link(ends_[from], ends_[to]));
  return *slot;
}

ctl_status* RuntimeTopology::measure(ctl_device* from, ctl_device* to, const topology::Link** out_link) {
  const topology::Link& known = link(from->index, to->index);
  if (known.measured) {
    *out_link = &known;
    return nullptr;
  }
  uint64_t bytes_per_second = 0;
  CTL_RETURN_IF_ERROR(annotate(topology::time_copy(from, to, &bytes_per_second),
                               "while timing a copy from " + from->label + " to " + to->label));
  auto link = std::make_unique<topology::Link>(topology::classify_link(ends_[from->index], ends_[to->index]));
  link->bytes_per_second = bytes_per_second;
  link->measured = true;
  link->description += "; measured now (" + std::to_string(topology::kMeasureBytes >> 20) + " MiB copies)";
  std::string error;
  if (from != to && !disk_.store(identity(from->index), identity(to->index), bytes_per_second, &error)) {
    runtime_.logger.printf(CTL_LOG_WARNING, "topology: the measurement stays in memory: %s", error.c_str());
  }
  std::lock_guard lock(mutex_);
  auto& slot = measured_[{from->index, to->index}];
  if (!slot) slot = std::move(link);  // a measurement made meanwhile by another thread stands
  *out_link = slot.get();
  return nullptr;
}

RuntimeTopology& runtime_topology(const ctl_runtime& runtime) {
  std::call_once(runtime.topology_once,
                 [&runtime]() { runtime.topology = std::make_shared<RuntimeTopology>(runtime); });
  return *runtime.topology;
}

}  // namespace catalyst
