// runtime_topology.h — one runtime's view of the host: the topology (loaded on first use,
// never at ctl_runtime_create), every device joined to it, and the links between devices
// with their estimated or measured bandwidth. Everything it hands out by pointer lives as
// long as the runtime, which is what lets the C ABI return borrowed strings.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "catalyst.h"
#include "topology/device_link.h"
#include "topology/link_cache_file.h"
#include "topology/topology_model.h"

namespace catalyst {

class RuntimeTopology {
 public:
  // Loads the topology (load_topology.h) and joins every device of `runtime`. Never fails:
  // problems are logged and leave devices with unknown locality.
  explicit RuntimeTopology(const ctl_runtime& runtime);

  const topology::TopologyModel& model() const { return model_; }
  // Device `index` as a link end: its name, plugin, host visibility and locality.
  const topology::LinkEnd& end(uint32_t index) const { return ends_[index]; }
  size_t device_count() const { return ends_.size(); }

  // The link from device `from` to device `to`: measured in this runtime or found in the
  // disk cache, else the default of its class. Valid as long as this object.
  const topology::Link& link(uint32_t from, uint32_t to);
  // Times copies from `from` to `to` now, unless this runtime or the disk cache already has
  // a measurement, and keeps the result. *out_link is valid as long as this object.
  ctl_status* measure(ctl_device* from, ctl_device* to, const topology::Link** out_link);

 private:
  std::string identity(uint32_t index) const;

  topology::TopologyModel model_;
  std::vector<topology::LinkEnd> ends_;
  std::vector<std::string> identities_;
  topology::LinkCacheFile disk_;
  std::mutex mutex_;
  // Never erased, so that pointers handed out stay valid; a measurement lives beside the
  // estimate it replaces.
  std::map<std::pair<uint32_t, uint32_t>, std::unique_ptr<topology::Link>> estimated_;
  std::map<std::pair<uint32_t, uint32_t>, std::unique_ptr<topology::Link>> measured_;
  const ctl_runtime& runtime_;
};

// The runtime's topology, created on the first call (thread-safe).
RuntimeTopology& runtime_topology(const ctl_runtime& runtime);

}  // namespace catalyst
