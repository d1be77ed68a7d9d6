// ranking_candidates.h — the candidates of device_ranking.h for every device of a runtime,
// filled from what the core knows now: kind, free memory, locality, and the link from an
// anchor device. The placement policy then marks what each device cannot run and calls
// rank_devices:
//
//   auto candidates = catalyst::ranking_candidates(*runtime, inputs_device);
//   for (auto& c : candidates) c.supported = ...;  // with c.unsupported saying why not
//   topology::RankingRequest request{candidates, bytes_needed, anchor_name};
//   auto order = topology::rank_devices(request);  // order[0] is the choice, with reasons
#pragma once

#include <vector>

#include "catalyst.h"
#include "topology/device_ranking.h"

namespace catalyst {

// One candidate per device, in runtime order. `anchor` (may be NULL) is the device the
// work's inputs live on; each candidate then carries its link from the anchor. The built-in
// reference device is marked unsupported: it is never chosen automatically (catalyst.h).
std::vector<topology::RankingCandidate> ranking_candidates(const ctl_runtime& runtime, const ctl_device* anchor);

}  // namespace catalyst
