// topology_json.cpp — reading Catalyst's topology file (format in topology_json.h) into
// the model, strictly: the file replaces detection, so anything doubtful is an error.
#include "topology/topology_json.h"

#include <cmath>
#include <cstdlib>
#include <set>

#include "topology/json_value.h"
#include "topology/pci_bus_id.h"

namespace catalyst::topology {
namespace {

// Error messages carry the path of the member inside the file: "packages[0].numa_nodes[1].os_index".
class Reader {
 public:
  std::string error;

  bool fail(const std::string& where, const std::string& what) {
    if (error.empty()) error = where + ": " + what;
    return false;
  }

  bool only_members(const JsonValue& object, const std::string& where, std::initializer_list<const char*> allowed) {
    if (!object.is_object()) return fail(where, "must be an object");
    for (const auto& [name, value] : object.members) {
      bool known = false;
      for (const char* key : allowed) known = known || name == key;
      if (!known) return fail(where + "." + name, "unknown member");
    }
    return true;
  }

  bool integer(const JsonValue* value, const std::string& where, double low, double high, int64_t* out) {
    if (!value->is_number() || value->number != std::floor(value->number) || value->number < low ||
        value->number > high) {
      return fail(where, "must be a whole number from " + std::to_string(static_cast<int64_t>(low)) + " to " +
                             std::to_string(static_cast<int64_t>(high)));
    }
    *out = static_cast<int64_t>(value->number);
    return true;
  }

  bool text(const JsonValue* value, const std::string& where, std::string* out) {
    if (!value->is_string()) return fail(where, "must be a string");
    *out = value->text;
    return true;
  }
};

constexpr double kMaxIndex = 1 << 20;

}  // namespace

bool count_cpu_list(const std::string& list, uint32_t* out_count) {
  uint64_t count = 0;
  size_t pos = 0;
  if (list.empty()) {
    *out_count = 0;
    return true;
  }
  while (pos <= list.size()) {
    const size_t comma = list.find(',', pos);
    const std::string part = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char* end = nullptr;
    if (part.empty() || part[0] < '0' || part[0] > '9') return false;
    const unsigned long first = std::strtoul(part.c_str(), &end, 10);
    unsigned long last = first;
    if (*end == '-') {
      const char* second = end + 1;
      if (*second < '0' || *second > '9') return false;
      last = std::strtoul(second, &end, 10);
    }
    if (*end || last < first || last >= kMaxIndex) return false;
    count += last - first + 1;
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  *out_count = static_cast<uint32_t>(count);
  return true;
}

TopologyModel parse_topology_json(const std::string& text, const std::string& path) {
  TopologyModel model;
  model.source = "JSON " + path + " (CATALYST_TOPOLOGY)";
  JsonValue root;
  std::string json_error;
  if (!parse_json(text, &root, &json_error)) {
    TopologyModel failed;
    failed.source = model.source;
    failed.error = path + " is not valid JSON: " + json_error;
    return failed;
  }
  Reader r;
  auto failed = [&]() {
    TopologyModel out;
    out.source = model.source;
    out.error = path + ": " + r.error;
    return out;
  };
  if (!r.only_members(root, "(top level)", {"catalyst_topology", "packages", "pci_devices", "devices"}))
    return failed();
  const JsonValue* version = root.find("catalyst_topology");
  int64_t version_number = 0;
  if (!version) {
    r.fail("catalyst_topology", "missing; the first format is \"catalyst_topology\": 1");
    return failed();
  }
  if (!r.integer(version, "catalyst_topology", 1, 1, &version_number)) return failed();

  const JsonValue* packages = root.find("packages");
  if (!packages || !packages->is_array() || packages->items.empty()) {
    r.fail("packages", "must be a non-empty array of packages");
    return failed();
  }
  std::set<int64_t> node_indexes;
  for (size_t p = 0; p < packages->items.size(); ++p) {
    const std::string where = "packages[" + std::to_string(p) + "]";
    const JsonValue& object = packages->items[p];
    if (!r.only_members(object, where, {"name", "numa_nodes"})) return failed();
    Package package;
    if (const JsonValue* name = object.find("name"); name && !r.text(name, where + ".name", &package.name)) {
      return failed();
    }
    const JsonValue* nodes = object.find("numa_nodes");
    if (!nodes || !nodes->is_array() || nodes->items.empty()) {
      r.fail(where + ".numa_nodes", "must be a non-empty array of NUMA nodes");
      return failed();
    }
    for (size_t n = 0; n < nodes->items.size(); ++n) {
      const std::string at = where + ".numa_nodes[" + std::to_string(n) + "]";
      const JsonValue& item = nodes->items[n];
      if (!r.only_members(item, at, {"os_index", "memory_bytes", "cpus", "cores"})) return failed();
      NumaNode node;
      node.package = static_cast<int>(p);
      int64_t number = 0;
      const JsonValue* os_index = item.find("os_index");
      if (!os_index) {
        r.fail(at + ".os_index", "missing");
        return failed();
      }
      if (!r.integer(os_index, at + ".os_index", 0, kMaxIndex, &number)) return failed();
      if (!node_indexes.insert(number).second) {
        r.fail(at + ".os_index", "NUMA node " + std::to_string(number) + " is listed twice");
        return failed();
      }
      node.os_index = static_cast<int>(number);
      if (const JsonValue* memory = item.find("memory_bytes")) {
        if (!r.integer(memory, at + ".memory_bytes", 0, 9.0e18, &number)) return failed();
        node.memory = static_cast<uint64_t>(number);
      }
      if (const JsonValue* cpus = item.find("cpus")) {
        if (!r.text(cpus, at + ".cpus", &node.cpuset)) return failed();
        if (!count_cpu_list(node.cpuset, &node.pus)) {
          r.fail(at + ".cpus", "\"" + node.cpuset + "\" is not a list of CPU numbers such as \"0-3,8\"");
          return failed();
        }
      }
      node.cores = node.pus;
      if (const JsonValue* cores = item.find("cores")) {
        if (!r.integer(cores, at + ".cores", 0, kMaxIndex, &number)) return failed();
        node.cores = static_cast<uint32_t>(number);
      }
      if (node.pus == 0) node.pus = node.cores;
      package.cores += node.cores;
      package.pus += node.pus;
      package.cpuset += (package.cpuset.empty() || node.cpuset.empty() ? "" : ",") + node.cpuset;
      model.numa_nodes.push_back(node);
    }
    model.cores += package.cores;
    model.pus += package.pus;
    model.packages.push_back(package);
  }

  if (const JsonValue* pcis = root.find("pci_devices")) {
    if (!pcis->is_array()) {
      r.fail("pci_devices", "must be an array");
      return failed();
    }
    for (size_t i = 0; i < pcis->items.size(); ++i) {
      const std::string at = "pci_devices[" + std::to_string(i) + "]";
      const JsonValue& item = pcis->items[i];
      if (!r.only_members(item, at, {"bus_id", "numa_node", "name"})) return failed();
      PciDevice pci;
      std::string bus_id;
      const JsonValue* bus = item.find("bus_id");
      if (!bus) {
        r.fail(at + ".bus_id", "missing");
        return failed();
      }
      if (!r.text(bus, at + ".bus_id", &bus_id)) return failed();
      pci.bus_id = normalize_pci_bus_id(bus_id);
      if (pci.bus_id.empty()) {
        r.fail(at + ".bus_id", "\"" + bus_id + "\" is not a PCI bus id such as \"0000:17:00.0\"");
        return failed();
      }
      if (const JsonValue* name = item.find("name"); name && !r.text(name, at + ".name", &pci.name)) return failed();
      if (const JsonValue* node = item.find("numa_node")) {
        int64_t number = 0;
        if (!r.integer(node, at + ".numa_node", 0, kMaxIndex, &number)) return failed();
        const NumaNode* found = model.find_numa_node(static_cast<int>(number));
        if (!found) {
          r.fail(at + ".numa_node", "NUMA node " + std::to_string(number) + " is not among the packages' nodes");
          return failed();
        }
        pci.numa_node = found->os_index;
        pci.package = found->package;
      }
      model.pci_devices.push_back(pci);
    }
  }

  if (const JsonValue* devices = root.find("devices")) {
    if (!devices->is_array()) {
      r.fail("devices", "must be an array");
      return failed();
    }
    for (size_t i = 0; i < devices->items.size(); ++i) {
      const std::string at = "devices[" + std::to_string(i) + "]";
      const JsonValue& item = devices->items[i];
      if (!r.only_members(item, at, {"device", "numa_node", "pci_bus_id"})) return failed();
      DeviceAssignment assignment;
      const JsonValue* name = item.find("device");
      if (!name) {
        r.fail(at + ".device", "missing (a device name such as \"opencl:0\")");
        return failed();
      }
      if (!r.text(name, at + ".device", &assignment.device)) return failed();
      if (const JsonValue* node = item.find("numa_node")) {
        int64_t number = 0;
        if (!r.integer(node, at + ".numa_node", 0, kMaxIndex, &number)) return failed();
        assignment.numa_node = static_cast<int>(number);
        assignment.has_numa_node = true;
      }
      if (const JsonValue* bus = item.find("pci_bus_id")) {
        std::string bus_id;
        if (!r.text(bus, at + ".pci_bus_id", &bus_id)) return failed();
        assignment.pci_bus_id = normalize_pci_bus_id(bus_id);
        if (assignment.pci_bus_id.empty()) {
          r.fail(at + ".pci_bus_id", "\"" + bus_id + "\" is not a PCI bus id such as \"0000:17:00.0\"");
          return failed();
        }
        assignment.has_pci_bus_id = true;
      }
      if (!assignment.has_numa_node && !assignment.has_pci_bus_id) {
        r.fail(at, "gives neither numa_node nor pci_bus_id");
        return failed();
      }
      model.assignments.push_back(assignment);
    }
  }
  return model;
}

}  // namespace catalyst::topology
