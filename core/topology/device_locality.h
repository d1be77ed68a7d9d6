// device_locality.h — joining a runtime device to the topology: where it sits (package,
// NUMA node, nearby cores), how that was found, or why it could not be.
//
// The rules, in order (docs/topology.md repeats them for users):
//  0. No topology (the override file or hwloc failed): unknown locality, with that error.
//  1. An entry of the override file's "devices" for this device name replaces what the
//     plugin reported (bus id, node or both); the rules below then apply to those values.
//  2. A device with a PCI bus id is joined by it and by it only: the PCI device of that id
//     gives its NUMA node and package. When the id is not in the topology the locality is
//     unknown, even if the plugin also reports a NUMA node: the topology does not describe
//     this device (an override file of another machine, a VM that invents ids), so a node
//     number read next to it cannot be trusted either. A PCI device that hangs above every
//     package (attached to the machine) is joined, but its locality is unknown: no package or
//     node is nearer to it than another.
//  3. A device without a PCI bus id that reports a NUMA node (CPU devices, host memory) is
//     joined to the node of that OS index; a node the topology lacks means unknown locality.
//  4. A device that reports neither is joined to the machine's NUMA node when there is
//     exactly one (the whole machine is then that node; the join says "sole NUMA node" so
//     it is never silent); with several nodes its locality is unknown.
#pragma once

#include <cstdint>
#include <string>

#include "topology/topology_model.h"

namespace catalyst::topology {

// What a plugin reports about a device, the join's input.
struct DeviceFacts {
  std::string name;        // the runtime's name for it, "opencl:0"
  std::string pci_bus_id;  // as reported; "" when none
  int numa_node = -1;      // as reported; -1 when unknown
};

enum class JoinMethod { kNone, kPciBusId, kNumaNode, kSoleNumaNode };

struct Locality {
  bool known = false;  // a package or NUMA node is known to be nearest
  JoinMethod joined_by = JoinMethod::kNone;
  bool from_override = false;  // an override file's "devices" entry supplied the values joined
  int package = -1;            // index into TopologyModel::packages
  int numa_node = -1;          // OS index
  std::string pci_bus_id;      // normalised bus id joined by; "" when none
  uint32_t cores = 0;          // cores of the nearest NUMA node (else package); 0 when unknown
  uint32_t pus = 0;
  std::string cpuset;  // their processing units, "0-7"
  std::string reason;  // one sentence: how it was joined, or why it could not be
};

Locality join_device(const TopologyModel& model, const DeviceFacts& facts);

// "pci", "numa_node", "sole_numa_node" or "none", as in the JSON description.
const char* join_method_name(JoinMethod method);

// "NUMA node 0, package 0" or "unknown locality".
std::string locality_summary(const Locality& locality);

}  // namespace catalyst::topology
