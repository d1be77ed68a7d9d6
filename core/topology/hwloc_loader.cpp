// hwloc_loader.cpp — hwloc's object tree flattened into packages, NUMA nodes, caches and
// PCI devices. hwloc stays inside this file: the rest of core/topology/ sees the model.
#include "topology/hwloc_loader.h"

#include <hwloc.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace catalyst::topology {
namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology* topology) const { hwloc_topology_destroy(topology); }
};
using TopologyHandle = std::unique_ptr<hwloc_topology, TopologyDeleter>;

std::string cpuset_text(hwloc_const_cpuset_t set) {
  if (!set || hwloc_bitmap_iszero(set)) return "";
  char* text = nullptr;
  if (hwloc_bitmap_list_asprintf(&text, set) < 0 || !text) return "";
  std::string out = text;
  std::free(text);
  return out;
}

uint32_t count_inside(hwloc_topology_t topology, hwloc_const_cpuset_t set, hwloc_obj_type_t type) {
  if (!set || hwloc_bitmap_iszero(set)) return 0;
  const int count = hwloc_get_nbobjs_inside_cpuset_by_type(topology, set, type);
  return count > 0 ? static_cast<uint32_t>(count) : 0;
}

// The PCI classes worth a name of their own; others are "class 0xCCSS".
const char* pci_class_name(uint32_t class_id) {
  switch (class_id) {
    case 0x0100:
      return "SCSI storage";
    case 0x0101:
      return "IDE storage";
    case 0x0104:
      return "RAID controller";
    case 0x0106:
      return "SATA controller";
    case 0x0107:
      return "SAS controller";
    case 0x0108:
      return "NVMe storage";
    case 0x0180:
      return "storage controller";
    case 0x0200:
      return "Ethernet controller";
    case 0x0207:
      return "InfiniBand controller";
    case 0x0280:
      return "network controller";
    case 0x0300:
      return "VGA controller";
    case 0x0302:
      return "3D controller";
    case 0x0380:
      return "display controller";
    case 0x0b40:
      return "co-processor";
    case 0x1200:
      return "processing accelerator";
    default:
      return nullptr;
  }
}

std::string pci_name(hwloc_obj_t pci) {
  const uint32_t class_id = pci->attr->pcidev.class_id;
  std::string name;
  const char* vendor = hwloc_obj_get_info_by_name(pci, "PCIVendor");
  const char* model = hwloc_obj_get_info_by_name(pci, "PCIDevice");
  if (vendor && *vendor) name = vendor;
  if (model && *model) name += (name.empty() ? "" : " ") + std::string(model);
  char ids[48];
  std::snprintf(ids, sizeof ids, "[%04x:%04x]", pci->attr->pcidev.vendor_id, pci->attr->pcidev.device_id);
  if (name.empty()) {
    const char* known = pci_class_name(class_id);
    char fallback[32];
    std::snprintf(fallback, sizeof fallback, "class 0x%04x", class_id);
    name = std::string(known ? known : fallback) + " " + ids;
  }
  // The operating system's names for it (card0, renderD128, eth0, opencl0d0, cuda0) are how
  // users recognise a device.
  std::string os_names;
  for (hwloc_obj_t child = pci->io_first_child; child; child = child->next_sibling) {
    if (child->type != HWLOC_OBJ_OS_DEVICE || !child->name) continue;
    os_names += (os_names.empty() ? "" : ", ") + std::string(child->name);
  }
  if (!os_names.empty()) name += " (" + os_names + ")";
  return name;
}

void add_caches(hwloc_topology_t topology, TopologyModel* model) {
  // hwloc has one object type per level for data and unified caches, and one per level for
  // instruction caches; the cache's own attribute says which of data or unified it is.
  const struct {
    hwloc_obj_type_t type;
    int depth;
  } levels[] = {{HWLOC_OBJ_L1CACHE, 1}, {HWLOC_OBJ_L1ICACHE, 1}, {HWLOC_OBJ_L2CACHE, 2}, {HWLOC_OBJ_L2ICACHE, 2},
                {HWLOC_OBJ_L3CACHE, 3}, {HWLOC_OBJ_L3ICACHE, 3}, {HWLOC_OBJ_L4CACHE, 4}, {HWLOC_OBJ_L5CACHE, 5}};
  for (const auto& level : levels) {
    const int count = hwloc_get_nbobjs_by_type(topology, level.type);
    if (count <= 0) continue;
    hwloc_obj_t first = hwloc_get_obj_by_type(topology, level.type, 0);
    if (!first || !first->attr) continue;
    CacheLevel cache;
    cache.depth = level.depth;
    const hwloc_obj_cache_type_t kind = first->attr->cache.type;
    cache.kind = kind == HWLOC_OBJ_CACHE_DATA          ? "data"
                 : kind == HWLOC_OBJ_CACHE_INSTRUCTION ? "instruction"
                                                       : "unified";
    cache.size = first->attr->cache.size;
    cache.count = static_cast<uint32_t>(count);
    model->caches.push_back(cache);
  }
}

// The package and NUMA node a PCI device sits near: those of its first ancestor that is not
// an I/O object, when that ancestor lies within one package and near one node.
void place_pci(hwloc_topology_t topology, hwloc_obj_t pci, PciDevice* out) {
  hwloc_obj_t parent = hwloc_get_non_io_ancestor_obj(topology, pci);
  if (!parent) return;
  if (parent->nodeset && hwloc_bitmap_weight(parent->nodeset) == 1) {
    out->numa_node = hwloc_bitmap_first(parent->nodeset);
  }
  hwloc_obj_t package =
      parent->type == HWLOC_OBJ_PACKAGE ? parent : hwloc_get_ancestor_obj_by_type(topology, HWLOC_OBJ_PACKAGE, parent);
  if (package) out->package = static_cast<int>(package->logical_index);
}

}  // namespace

TopologyModel load_hwloc_topology(const std::string& xml_path) {
  TopologyModel model;
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) {
    model.error = std::string("hwloc_topology_init failed: ") + std::strerror(errno);
    return model;
  }
  TopologyHandle topology(raw);
  // PCI devices are what GPUs are joined to; "important" keeps GPUs, NICs, storage and the
  // bridges above them, and drops the rest of the bus.
  hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  // Instruction caches are off by default in hwloc; the cache summary lists them too.
  hwloc_topology_set_icache_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_ALL);
  if (!xml_path.empty()) {
    errno = 0;
    if (hwloc_topology_set_xml(raw, xml_path.c_str()) != 0) {
      model.error = "hwloc cannot use " + xml_path +
                    " as an XML topology: " + (errno ? std::strerror(errno) : "unknown reason") +
                    " (lstopo --input FILE shows why)";
      return model;
    }
  }
  errno = 0;
  if (hwloc_topology_load(raw) != 0) {
    model.error = std::string("hwloc could not load the topology") + (xml_path.empty() ? "" : " from " + xml_path) +
                  ": " + (errno ? std::strerror(errno) : "unknown reason") +
                  (xml_path.empty() ? "" : " (lstopo --input FILE shows why)");
    return model;
  }

  hwloc_obj_t root = hwloc_get_root_obj(raw);
  // Where hwloc read it from. The root's "Backend" info cannot tell: an XML file keeps the
  // backend of the machine it was saved on. hwloc prefers HWLOC_SYNTHETIC over HWLOC_XMLFILE
  // when both are set, and so does this.
  const char* synthetic = std::getenv("HWLOC_SYNTHETIC");
  const char* xml_env = std::getenv("HWLOC_XMLFILE");
  if (!xml_path.empty()) {
    model.source = "hwloc XML " + xml_path;
  } else if (synthetic && *synthetic) {
    model.source = std::string("hwloc synthetic \"") + synthetic + "\" (HWLOC_SYNTHETIC)";
  } else if (xml_env && *xml_env) {
    model.source = std::string("hwloc XML ") + xml_env + " (HWLOC_XMLFILE)";
  } else {
    model.source = hwloc_topology_is_thissystem(raw) ? "hwloc (this machine)" : "hwloc";
  }

  model.cores = count_inside(raw, root->cpuset, HWLOC_OBJ_CORE);
  model.pus = count_inside(raw, root->cpuset, HWLOC_OBJ_PU);
  const int package_count = hwloc_get_nbobjs_by_type(raw, HWLOC_OBJ_PACKAGE);
  for (int i = 0; i < package_count; ++i) {
    hwloc_obj_t obj = hwloc_get_obj_by_type(raw, HWLOC_OBJ_PACKAGE, static_cast<unsigned>(i));
    Package package;
    const char* cpu_model = hwloc_obj_get_info_by_name(obj, "CPUModel");
    package.name = cpu_model ? cpu_model : "";
    package.cores = count_inside(raw, obj->cpuset, HWLOC_OBJ_CORE);
    package.pus = count_inside(raw, obj->cpuset, HWLOC_OBJ_PU);
    package.cpuset = cpuset_text(obj->cpuset);
    model.packages.push_back(package);
  }
  const int node_count = hwloc_get_nbobjs_by_type(raw, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < node_count; ++i) {
    hwloc_obj_t obj = hwloc_get_obj_by_type(raw, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
    NumaNode node;
    node.os_index = static_cast<int>(obj->os_index);
    node.memory = obj->attr ? obj->attr->numanode.local_memory : 0;
    node.cores = count_inside(raw, obj->cpuset, HWLOC_OBJ_CORE);
    node.pus = count_inside(raw, obj->cpuset, HWLOC_OBJ_PU);
    node.cpuset = cpuset_text(obj->cpuset);
    if (hwloc_obj_t package = hwloc_get_ancestor_obj_by_type(raw, HWLOC_OBJ_PACKAGE, obj)) {
      node.package = static_cast<int>(package->logical_index);
    }
    model.numa_nodes.push_back(node);
  }
  add_caches(raw, &model);
  for (hwloc_obj_t pci = hwloc_get_next_pcidev(raw, nullptr); pci; pci = hwloc_get_next_pcidev(raw, pci)) {
    char bus_id[32];
    std::snprintf(bus_id, sizeof bus_id, "%04x:%02x:%02x.%01x", pci->attr->pcidev.domain, pci->attr->pcidev.bus,
                  pci->attr->pcidev.dev, pci->attr->pcidev.func);
    PciDevice device;
    device.bus_id = bus_id;
    device.class_id = pci->attr->pcidev.class_id;
    device.vendor_id = pci->attr->pcidev.vendor_id;
    device.device_id = pci->attr->pcidev.device_id;
    device.name = pci_name(pci);
    place_pci(raw, pci, &device);
    model.pci_devices.push_back(device);
  }
  return model;
}

}  // namespace catalyst::topology
