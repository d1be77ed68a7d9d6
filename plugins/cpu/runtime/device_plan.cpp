// device_plan.cpp — see device_plan.h. hwloc gives the cores and NUMA nodes in topology
// order; the process's affinity mask says which CPUs are ours.
#include "device_plan.h"

#include <dirent.h>
#include <hwloc.h>
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "catalyst/sdk/status.hpp"
#include "plugin.h"

namespace catalyst::cpu {
namespace {

// An hwloc bitmap that frees itself.
class Bitmap {
 public:
  Bitmap() : bitmap_(hwloc_bitmap_alloc()) {}
  ~Bitmap() { hwloc_bitmap_free(bitmap_); }
  Bitmap(const Bitmap&) = delete;
  Bitmap& operator=(const Bitmap&) = delete;
  hwloc_bitmap_t get() const { return bitmap_; }

 private:
  hwloc_bitmap_t bitmap_;
};

std::vector<int> to_list(hwloc_const_bitmap_t set) {
  std::vector<int> list;
  int index;
  hwloc_bitmap_foreach_begin(index, set) list.push_back(index);
  hwloc_bitmap_foreach_end();
  return list;
}

// 0 for "numa" (or unset), else the device count asked for. A bad value is a warning and
// the default: the plugin must load whatever the environment says.
unsigned requested_devices(const ctl_host_api* host) {
  const char* env = std::getenv("CATALYST_CPU_DEVICES");
  if (!env || !*env || std::strcmp(env, "numa") == 0) return 0;
  char* end = nullptr;
  const long value = std::strtol(env, &end, 10);
  if (end != env && *end == '\0' && value >= 1 && value <= static_cast<long>(kMaxDevices)) {
    return static_cast<unsigned>(value);
  }
  sdk::log(host, CTL_LOG_WARNING,
           "%sCATALYST_CPU_DEVICES=\"%s\" is not \"numa\" or a device count from 1 to %u; using numa (one device "
           "per NUMA node)",
           kLogPrefix, env, kMaxDevices);
  return 0;
}

// The sysfs answer the plugin gave before it read hwloc: node 0 on a one-node machine,
// else -1 (the device spans nodes, or the topology is unknown).
int32_t sysfs_single_node() {
  DIR* dir = opendir("/sys/devices/system/node");
  if (!dir) return -1;
  int nodes = 0;
  while (const dirent* entry = readdir(dir)) {
    if (std::strncmp(entry->d_name, "node", 4) == 0 && entry->d_name[4] >= '0' && entry->d_name[4] <= '9') {
      ++nodes;
    }
  }
  closedir(dir);
  return nodes == 1 ? 0 : -1;
}

// The first NUMA node (topology order) whose CPUs include all of `set`, or nullptr.
hwloc_obj_t node_holding(hwloc_topology_t topology, hwloc_const_bitmap_t set) {
  for (hwloc_obj_t node = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, nullptr); node;
       node = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, node)) {
    if (node->cpuset && !hwloc_bitmap_iszero(node->cpuset) && hwloc_bitmap_isincluded(set, node->cpuset)) return node;
  }
  return nullptr;
}

// A device of the CPUs in `cpus`, with the node that holds them.
DeviceSpan span_of(hwloc_topology_t topology, const std::vector<int>& cpus, bool several_nodes) {
  DeviceSpan span;
  span.cpus = cpus;
  Bitmap set;
  for (const int cpu : cpus) hwloc_bitmap_set(set.get(), static_cast<unsigned>(cpu));
  if (const hwloc_obj_t node = node_holding(topology, set.get())) {
    span.numa_node = static_cast<int32_t>(node->os_index);
    if (several_nodes) span.node_memory = node->attr ? node->attr->numanode.local_memory : 0;
  }
  return span;
}

// One device per NUMA node with CPUs of ours. A node whose CPUs an earlier node already
// gave a device (memory-only tiers such as HBM or CXL that hwloc attaches beside DRAM)
// gets none.
std::vector<DeviceSpan> spans_per_node(hwloc_topology_t topology, hwloc_const_bitmap_t allowed, bool several_nodes) {
  std::vector<DeviceSpan> spans;
  Bitmap taken, set;
  for (hwloc_obj_t node = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, nullptr); node;
       node = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_NUMANODE, node)) {
    if (!node->cpuset) continue;
    hwloc_bitmap_and(set.get(), node->cpuset, allowed);
    if (hwloc_bitmap_iszero(set.get()) || hwloc_bitmap_intersects(set.get(), taken.get())) continue;
    hwloc_bitmap_or(taken.get(), taken.get(), set.get());
    DeviceSpan span;
    span.cpus = to_list(set.get());
    span.numa_node = static_cast<int32_t>(node->os_index);
    if (several_nodes) span.node_memory = node->attr ? node->attr->numanode.local_memory : 0;
    spans.push_back(std::move(span));
  }
  return spans;
}

// `count` devices of as equal core counts as the machine allows (see device_plan.h).
std::vector<DeviceSpan> split_spans(const ctl_host_api* host, hwloc_topology_t topology, hwloc_const_bitmap_t allowed,
                                    unsigned count, bool several_nodes) {
  std::vector<std::vector<int>> units;  // cores, each with its hardware threads of ours
  Bitmap set;
  for (hwloc_obj_t core = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_CORE, nullptr); core;
       core = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_CORE, core)) {
    hwloc_bitmap_and(set.get(), core->cpuset, allowed);
    if (!hwloc_bitmap_iszero(set.get())) units.push_back(to_list(set.get()));
  }
  if (units.empty() || count > units.size()) {  // no cores in the topology, or too few
    units.clear();
    for (const int cpu : to_list(allowed)) units.push_back({cpu});
  }
  const size_t n = units.size();
  std::vector<DeviceSpan> spans;
  for (size_t k = 0; k < count; ++k) {
    std::vector<int> cpus;
    if (count <= n) {
      for (size_t u = k * n / count; u < (k + 1) * n / count; ++u)
        cpus.insert(cpus.end(), units[u].begin(), units[u].end());
      std::sort(cpus.begin(), cpus.end());
    } else {
      cpus = units[k % n];
    }
    spans.push_back(span_of(topology, cpus, several_nodes));
    if (k >= n) spans.back().shares_with = static_cast<int>(k % n);
  }
  if (count > n) {
    sdk::log(host, CTL_LOG_WARNING,
             "%sCATALYST_CPU_DEVICES=%u asks for more devices than the %zu CPUs this process may use: the devices "
             "from cpu:%zu on share CPUs with cpu:0 onwards, round robin",
             kLogPrefix, count, n, n);
  }
  return spans;
}

// The whole machine as one device: the process's CPUs, as the plugin always had.
DeviceSpan whole_machine(hwloc_topology_t topology, bool this_system) {
  DeviceSpan span;
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof mask, &mask) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &mask)) span.cpus.push_back(cpu);
    }
  }
  if (topology && this_system && !span.cpus.empty()) {
    span = span_of(topology, span.cpus, /*several_nodes=*/false);
  } else {
    span.numa_node = sysfs_single_node();
  }
  return span;
}

}  // namespace

DevicePlan plan_devices(const ctl_host_api* host) {
  DevicePlan plan;
  const unsigned requested = requested_devices(host);
  hwloc_topology_t topology = nullptr;
  // Only packages, NUMA nodes, cores and PUs matter here: no caches, no I/O (PCI discovery
  // is the core's business and costs time).
  if (hwloc_topology_init(&topology) != 0) {
    topology = nullptr;
  } else {
    hwloc_topology_set_io_types_filter(topology, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_cache_types_filter(topology, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_icache_types_filter(topology, HWLOC_TYPE_FILTER_KEEP_NONE);
    if (hwloc_topology_load(topology) != 0) {
      hwloc_topology_destroy(topology);
      topology = nullptr;
    }
  }
  plan.topology = topology;
  if (!topology) {
    if (requested != 1) {
      sdk::log(host, CTL_LOG_WARNING,
               "%shwloc could not read this machine's topology; one device for the whole machine", kLogPrefix);
    }
    plan.devices.push_back(whole_machine(nullptr, false));
    return plan;
  }
  const bool this_system = hwloc_topology_is_thissystem(topology) != 0;
  Bitmap allowed;
  hwloc_bitmap_copy(allowed.get(), hwloc_topology_get_allowed_cpuset(topology));
  if (this_system) {
    Bitmap bound;
    if (hwloc_get_cpubind(topology, bound.get(), HWLOC_CPUBIND_THREAD) == 0) {
      hwloc_bitmap_and(allowed.get(), allowed.get(), bound.get());
    }
  }
  const bool several_nodes = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE) > 1;
  std::vector<DeviceSpan> spans;
  if (!hwloc_bitmap_iszero(allowed.get())) {
    if (requested == 0) {
      spans = spans_per_node(topology, allowed.get(), several_nodes);
    } else if (requested > 1) {
      spans = split_spans(host, topology, allowed.get(), requested, several_nodes);
    }
  }
  if (spans.size() < 2) {
    plan.devices.push_back(whole_machine(topology, this_system));
    return plan;
  }
  plan.devices = std::move(spans);
  plan.whole_machine = false;
  plan.bind = this_system;
  return plan;
}

void destroy_topology(hwloc_topology* topology) {
  if (topology) hwloc_topology_destroy(topology);
}

bool bind_memory(hwloc_topology* topology, void* block, size_t bytes, int32_t numa_node) {
  if (!topology || numa_node < 0) return false;
  const hwloc_obj_t node = hwloc_get_numanode_obj_by_os_index(topology, static_cast<unsigned>(numa_node));
  if (!node) return false;
  // No HWLOC_MEMBIND_STRICT: hwloc then asks Linux for the node as preferred, not required.
  return hwloc_set_area_membind(topology, block, bytes, node->nodeset, HWLOC_MEMBIND_BIND, HWLOC_MEMBIND_BYNODESET) ==
         0;
}

std::string cpu_list(const std::vector<int>& cpus) {
  std::string text;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!text.empty()) text += ',';
    text += std::to_string(cpus[i]);
    if (j > i) text += '-' + std::to_string(cpus[j]);
    i = j + 1;
  }
  return text;
}

}  // namespace catalyst::cpu
