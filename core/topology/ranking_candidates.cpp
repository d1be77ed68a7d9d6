// ranking_candidates.cpp — see ranking_candidates.h.
#include "topology/ranking_candidates.h"

#include "runtime.h"
#include "topology/runtime_topology.h"

namespace catalyst {

std::vector<topology::RankingCandidate> ranking_candidates(const ctl_runtime& runtime, const ctl_device* anchor) {
  RuntimeTopology& topo = runtime_topology(runtime);
  std::vector<topology::RankingCandidate> out;
  for (uint32_t i = 0; i < topo.device_count(); ++i) {
    const topology::LinkEnd& end = topo.end(i);
    topology::RankingCandidate candidate;
    candidate.index = i;
    candidate.name = end.name;
    candidate.locality_known = end.locality.known;
    candidate.locality = topology::locality_summary(end.locality);
    ctl_plugin_device_properties properties;
    if (ctl_status* status = runtime.devices[i]->properties(&properties)) {
      candidate.supported = false;
      candidate.unsupported = std::string("its properties cannot be read: ") + ctl_status_get_message(status);
      ctl_status_free(status);
    } else {
      candidate.accelerator = properties.kind != CTL_DEVICE_KIND_CPU;
      candidate.memory_free = properties.memory_free;
    }
    if (runtime.devices[i]->plugin->candidate.source == "builtin") {
      candidate.supported = false;
      candidate.unsupported = "the built-in reference device is never chosen automatically";
    }
    if (anchor) {
      candidate.has_link = true;
      candidate.link_to_anchor = topo.link(anchor->index, i);
    }
    out.push_back(std::move(candidate));
  }
  return out;
}

}  // namespace catalyst
