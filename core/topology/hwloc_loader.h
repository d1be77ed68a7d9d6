// hwloc_loader.h — the host's topology read by hwloc, with I/O discovery on so that PCI
// devices appear, turned into the plain model of topology_model.h.
#pragma once

#include <string>

#include "topology/topology_model.h"

namespace catalyst::topology {

// Reads the topology with hwloc: from `xml_path` when it is not empty (an hwloc XML file,
// as lstopo --of xml writes it), else from the machine — where hwloc itself honours
// HWLOC_XMLFILE and HWLOC_SYNTHETIC as its documentation says. Never throws for a bad file
// or a failing hwloc: the result then has `error` set and nothing else.
TopologyModel load_hwloc_topology(const std::string& xml_path);

}  // namespace catalyst::topology
