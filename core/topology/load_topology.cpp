// load_topology.cpp — choosing between the override file and detection.
#include "topology/load_topology.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "topology/hwloc_loader.h"
#include "topology/topology_json.h"

namespace catalyst::topology {

TopologyModel load_topology() {
  const char* path = std::getenv("CATALYST_TOPOLOGY");
  if (!path || !*path) return load_hwloc_topology("");
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    TopologyModel model;
    model.source = std::string(path) + " (CATALYST_TOPOLOGY)";
    model.error = std::string("cannot read CATALYST_TOPOLOGY=") + path + ": " + std::strerror(errno);
    return model;
  }
  std::ostringstream text;
  text << file.rdbuf();
  const std::string content = text.str();
  const size_t first = content.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && content[first] == '{') return parse_topology_json(content, path);
  if (first != std::string::npos && content[first] == '<') {
    TopologyModel model = load_hwloc_topology(path);
    model.source += " (CATALYST_TOPOLOGY)";
    return model;
  }
  TopologyModel model;
  model.source = std::string(path) + " (CATALYST_TOPOLOGY)";
  model.error = std::string("CATALYST_TOPOLOGY=") + path +
                " is neither an hwloc XML file (starting with '<') nor a Catalyst topology JSON file (starting "
                "with '{')";
  return model;
}

}  // namespace catalyst::topology
