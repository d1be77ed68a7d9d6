// load_topology.h — where the topology comes from: the override file CATALYST_TOPOLOGY
// names (hwloc XML or Catalyst's JSON, told apart by their first character), else hwloc's
// detection (which honours HWLOC_XMLFILE and HWLOC_SYNTHETIC itself).
#pragma once

#include "topology/topology_model.h"

namespace catalyst::topology {

// Never fails: a file that cannot be read or parsed gives a model whose `error` says which
// file, and why, and which has no nodes and no devices (so every device has unknown locality;
// a broken override never falls back to detection silently).
TopologyModel load_topology();

}  // namespace catalyst::topology
