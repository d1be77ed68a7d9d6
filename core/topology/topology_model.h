// topology_model.h — the host as Catalyst sees it: packages, NUMA nodes, cores, caches and
// PCI devices as plain data. Both sources fill the same model (hwloc_loader.h from hwloc or
// an hwloc XML file, topology_json.h from our own JSON override), so joins, links and the
// description never touch hwloc and are tested the same way whatever the source.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace catalyst::topology {

struct NumaNode {
  int os_index = -1;    // the operating system's node number, what plugins report
  int package = -1;     // index into TopologyModel::packages; -1 when it spans several
  uint64_t memory = 0;  // local memory in bytes; 0 when unknown
  uint32_t cores = 0;   // cores whose processing units are all near this node
  uint32_t pus = 0;     // processing units (hardware threads)
  std::string cpuset;   // OS indexes of its processing units, "0-7,16-23"; "" when none
};

struct Package {
  std::string name;  // the CPU model where the source says it; "" otherwise
  uint32_t cores = 0;
  uint32_t pus = 0;
  std::string cpuset;
};

// Caches of one level and kind, summarised: "L3 32 MiB x2".
struct CacheLevel {
  int depth = 0;       // 1, 2, 3, ...
  std::string kind;    // "data", "instruction" or "unified"
  uint64_t size = 0;   // bytes of one cache
  uint32_t count = 0;  // how many there are
};

struct PciDevice {
  std::string bus_id;     // "dddd:bb:dd.f", lower case
  uint32_t class_id = 0;  // PCI class and subclass, 0x0302 for a 3D controller
  uint16_t vendor_id = 0;
  uint16_t device_id = 0;
  std::string name;    // vendor and model where known, else the class in words
  int numa_node = -1;  // OS index of the one NUMA node it is attached near; -1 when none or several
  int package = -1;    // index into packages; -1 when it hangs above several (or none)
};

// A device the JSON override places by hand (VMs that report the wrong node or bus id):
// the runtime device called `device` ("opencl:0") is treated as if its plugin had reported
// these values.
struct DeviceAssignment {
  std::string device;
  std::string pci_bus_id;  // "" keeps the plugin's
  int numa_node = -1;      // -1 keeps the plugin's
  bool has_numa_node = false;
  bool has_pci_bus_id = false;
};

struct TopologyModel {
  // Where it came from, in words: "hwloc (this machine)", "hwloc XML /x.xml (CATALYST_TOPOLOGY)".
  std::string source;
  // Why there is no topology; empty when it loaded. With an error every device has unknown locality.
  std::string error;
  std::vector<Package> packages;
  std::vector<NumaNode> numa_nodes;
  std::vector<CacheLevel> caches;
  std::vector<PciDevice> pci_devices;
  std::vector<DeviceAssignment> assignments;
  uint32_t cores = 0;
  uint32_t pus = 0;

  bool loaded() const { return error.empty(); }
  const NumaNode* find_numa_node(int os_index) const {
    for (const auto& node : numa_nodes)
      if (node.os_index == os_index) return &node;
    return nullptr;
  }
  const PciDevice* find_pci_device(const std::string& bus_id) const {
    for (const auto& pci : pci_devices)
      if (pci.bus_id == bus_id) return &pci;
    return nullptr;
  }
};

}  // namespace catalyst::topology
