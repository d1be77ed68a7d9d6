// device_ranking.h — which device should run a piece of work: candidates in, the same
// devices out, best first, each with the facts that placed it and the rule that put it
// ahead of the next one. Pure (no runtime, no hwloc): the placement policy fills the
// candidates, `catalyst topology` shows a ranking, and tests build candidates by hand.
//
// Rules, in order:
//  1. Eligibility. A device that cannot run the work (the caller says so, with a reason,
//     e.g. "does not support matmul on f16") or whose known free memory is below
//     bytes_needed is not eligible. Ineligible devices come after every eligible one, in
//     index order, and are never chosen. Unknown free memory (0) does not make a device
//     ineligible: only the plugin can refuse an allocation it cannot make.
//  2. Link to the anchor (only when the request names one: the device where the inputs
//     live): faster link first, by bytes per second (measured where known, else the
//     default of the link class). The anchor itself is "same device", the fastest, so
//     work stays where its data is unless the anchor is not eligible; when it is not (a
//     fallback), the device nearest to it wins.
//  3. Kind: a GPU or accelerator before a CPU (as the default device rule of catalyst.h).
//  4. Free memory, in powers of two (so that small differences do not reorder devices):
//     more first; unknown free memory after any known amount.
//  5. Locality: a device of known locality before one of unknown locality.
//  6. Index: the lower runtime index first, so the order is total and repeatable.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "topology/device_link.h"

namespace catalyst::topology {

struct RankingCandidate {
  uint32_t index = 0;        // the device's index in the runtime
  std::string name;          // "cpu:0"
  bool supported = true;     // the device can run the work (op, dtypes, layout)
  std::string unsupported;   // why not, when !supported: "does not support matmul on f16"
  bool accelerator = false;  // a GPU or accelerator rather than a CPU
  uint64_t memory_free = 0;  // bytes; 0 when unknown
  bool locality_known = false;
  std::string locality;   // "NUMA node 0, package 0" or "unknown locality", for the reason
  bool has_link = false;  // link_to_anchor is set (the request has an anchor)
  Link link_to_anchor;    // from the anchor to this device
};

struct RankingRequest {
  std::vector<RankingCandidate> candidates;
  uint64_t bytes_needed = 0;  // memory the work needs on the chosen device; 0 when unknown
  std::string anchor;         // the anchor's name, "" for none (only used in reasons)
};

struct RankedDevice {
  uint32_t index = 0;
  std::string name;
  bool eligible = false;
  std::string reason;      // the facts: "GPU; 12.0 GiB free; NUMA node 1, package 1; link from cpu:0: ..."
  std::string decided_by;  // why it is ahead of the next device ("" for the last eligible one),
                           // or why it is not eligible
};

// The candidates best first (eligible ones first). Stable and total: the same request gives
// the same order.
std::vector<RankedDevice> rank_devices(const RankingRequest& request);

// "12.0 GiB", "512.0 MiB"; "unknown" for 0.
std::string format_bytes(uint64_t bytes);
// "20.0 GB/s".
std::string format_bandwidth(uint64_t bytes_per_second);

}  // namespace catalyst::topology
