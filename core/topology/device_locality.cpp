// device_locality.cpp — the join rules of device_locality.h.
#include "topology/device_locality.h"

#include "topology/pci_bus_id.h"

namespace catalyst::topology {
namespace {

// Fills cores and processing units from the node, or from the package when there is no node.
void add_cpus(const TopologyModel& model, Locality* out) {
  if (const NumaNode* node = model.find_numa_node(out->numa_node)) {
    out->cores = node->cores;
    out->pus = node->pus;
    out->cpuset = node->cpuset;
    if (out->package < 0) out->package = node->package;
  } else if (out->package >= 0 && static_cast<size_t>(out->package) < model.packages.size()) {
    const Package& package = model.packages[static_cast<size_t>(out->package)];
    out->cores = package.cores;
    out->pus = package.pus;
    out->cpuset = package.cpuset;
  }
  out->known = out->numa_node >= 0 || out->package >= 0;
}

}  // namespace

Locality join_device(const TopologyModel& model, const DeviceFacts& reported) {
  Locality out;
  if (!model.loaded()) {
    out.reason = "unknown locality: the topology could not be loaded (" + model.error + ")";
    return out;
  }
  DeviceFacts facts = reported;
  for (const auto& assignment : model.assignments) {
    if (assignment.device != facts.name) continue;
    if (assignment.has_pci_bus_id) facts.pci_bus_id = assignment.pci_bus_id;
    if (assignment.has_numa_node) {
      facts.numa_node = assignment.numa_node;
      if (!assignment.has_pci_bus_id) facts.pci_bus_id.clear();  // the file places it by node alone
    }
    out.from_override = true;
  }
  const std::string by_whom = out.from_override ? "the override file" : "the plugin";

  if (!facts.pci_bus_id.empty()) {
    out.joined_by = JoinMethod::kPciBusId;
    out.pci_bus_id = normalize_pci_bus_id(facts.pci_bus_id);
    if (out.pci_bus_id.empty()) {
      out.joined_by = JoinMethod::kNone;
      out.reason = "unknown locality: " + by_whom + " reports PCI bus id \"" + facts.pci_bus_id +
                   "\", which is not of the form dddd:bb:dd.f";
      return out;
    }
    const PciDevice* pci = model.find_pci_device(out.pci_bus_id);
    if (!pci) {
      out.joined_by = JoinMethod::kNone;
      out.reason = "unknown locality: PCI bus id " + out.pci_bus_id + " (reported by " + by_whom +
                   ") is not in the topology (" + model.source + ")";
      return out;
    }
    out.numa_node = pci->numa_node;
    out.package = pci->package;
    // With one node or one package on the machine, that is where every PCI device sits.
    if (out.numa_node < 0 && model.numa_nodes.size() == 1) out.numa_node = model.numa_nodes[0].os_index;
    if (out.package < 0 && model.packages.size() == 1) out.package = 0;
    add_cpus(model, &out);
    if (!out.known) {
      out.reason = "PCI device " + out.pci_bus_id +
                   " found, but it hangs above every package: no package or NUMA "
                   "node is nearer to it than another (unknown locality)";
      return out;
    }
    out.reason = "joined by PCI bus id " + out.pci_bus_id + " (reported by " + by_whom + ")";
    return out;
  }

  if (facts.numa_node >= 0) {
    const NumaNode* node = model.find_numa_node(facts.numa_node);
    if (!node) {
      out.reason = "unknown locality: NUMA node " + std::to_string(facts.numa_node) + " (reported by " + by_whom +
                   ") is not in the topology (" + model.source + ")";
      return out;
    }
    out.joined_by = JoinMethod::kNumaNode;
    out.numa_node = node->os_index;
    out.package = node->package;
    add_cpus(model, &out);
    out.reason = "joined by NUMA node " + std::to_string(node->os_index) + " (reported by " + by_whom + ")";
    return out;
  }

  if (model.numa_nodes.size() == 1) {
    out.joined_by = JoinMethod::kSoleNumaNode;
    out.numa_node = model.numa_nodes[0].os_index;
    out.package = model.numa_nodes[0].package;
    add_cpus(model, &out);
    out.reason = "joined to the machine's sole NUMA node " + std::to_string(out.numa_node) +
                 ": the plugin reports neither a PCI bus id nor a NUMA node";
    return out;
  }
  out.reason = "unknown locality: the plugin reports neither a PCI bus id nor a NUMA node, and the machine has " +
               std::to_string(model.numa_nodes.size()) + " NUMA nodes";
  return out;
}

const char* join_method_name(JoinMethod method) {
  switch (method) {
    case JoinMethod::kPciBusId:
      return "pci_bus_id";
    case JoinMethod::kNumaNode:
      return "numa_node";
    case JoinMethod::kSoleNumaNode:
      return "sole_numa_node";
    case JoinMethod::kNone:
      break;
  }
  return "none";
}

std::string locality_summary(const Locality& locality) {
  if (!locality.known) return "unknown locality";
  std::string out;
  if (locality.numa_node >= 0) out = "NUMA node " + std::to_string(locality.numa_node);
  if (locality.package >= 0)
    out += (out.empty() ? "" : ", ") + std::string("package ") + std::to_string(locality.package);
  return out;
}

}  // namespace catalyst::topology
