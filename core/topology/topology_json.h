// topology_json.h — Catalyst's own topology file, for machines whose detection is wrong
// (VMs and containers that hide or invent NUMA nodes, GPUs passed through with made-up
// bus ids). Selected with CATALYST_TOPOLOGY=<file> when the file starts with '{'.
//
//   {
//     "catalyst_topology": 1,
//     "packages": [
//       { "name": "Xeon Gold 6330",                       (optional)
//         "numa_nodes": [
//           { "os_index": 0, "memory_bytes": 137438953472, "cpus": "0-27", "cores": 28 } ] } ],
//     "pci_devices": [                                     (optional)
//       { "bus_id": "0000:17:00.0", "numa_node": 0, "name": "GPU 0" } ],
//     "devices": [                                         (optional)
//       { "device": "opencl:0", "pci_bus_id": "0000:17:00.0" },
//       { "device": "cpu:1", "numa_node": 1 } ]
//   }
//
// Per NUMA node, os_index is required and unique; memory_bytes, cpus (a list of processing
// unit numbers, "0-3,8") and cores are optional (cores defaults to the number of cpus). A
// PCI device's numa_node must be one of the nodes; it gives the device's package. "devices"
// entries replace what a plugin reports for the device of that name (the names `catalyst
// devices` prints): its PCI bus id, its NUMA node or both; the ordinary join rules then
// apply (docs/topology.md). Unknown members are errors, so that a typo is not ignored.
#pragma once

#include <string>

#include "topology/topology_model.h"

namespace catalyst::topology {

// Parses the text of a topology file. On any error the model has only `error` set, naming
// the member and what is wrong with it.
TopologyModel parse_topology_json(const std::string& text, const std::string& path);

// Counts the processing units of a list such as "0-3,8"; false when it is malformed.
bool count_cpu_list(const std::string& list, uint32_t* out_count);

}  // namespace catalyst::topology
