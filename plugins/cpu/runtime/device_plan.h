// device_plan.h — how an instance divides this machine's CPUs into devices, read from hwloc.
//
// CATALYST_CPU_DEVICES chooses (read in instance_create):
//  - "numa" (the default): one device per NUMA node that holds CPUs this process may run
//    on; with only one such node, one device for the whole machine, exactly as before
//    devices were split (so a one-node machine sees no change);
//  - "1": one device for the whole machine, whatever its nodes;
//  - N from 2 to kMaxDevices: the CPUs split into N devices of as equal core counts as
//    possible (counts differ by at most one), in hwloc's order, so that a device never
//    splits a core's hardware threads while there are at least N cores. With more devices
//    than cores the hardware threads are split; with more devices than those, devices
//    share them round robin (a warning names each shared one). For testing multi-device
//    code on a small machine, as XLA's forced host device count is.
//  Anything else is logged as a warning and the default is used.
// Devices that are a part of the machine (every device but the whole-machine one) keep
// their pool's workers on their CPUs, and a device inside one NUMA node of a machine with
// several binds its large buffers to that node, as long as the topology is this
// machine's: a topology from HWLOC_SYNTHETIC or an XML file (unless HWLOC_THISSYSTEM=1)
// only describes the devices.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "catalyst_plugin.h"

struct hwloc_topology;

namespace catalyst::cpu {

inline constexpr unsigned kMaxDevices = 256;

struct DeviceSpan {
  std::vector<int> cpus;     // OS numbers of the device's logical CPUs, ascending
  int32_t numa_node = -1;    // OS index of the NUMA node that holds all of them; -1: none
  uint64_t node_memory = 0;  // that node's bytes when the machine has several nodes, else 0
  int shares_with = -1;      // an earlier device with the same CPUs (more devices than CPUs)
};

struct DevicePlan {
  std::vector<DeviceSpan> devices;     // at least one
  bool whole_machine = true;           // a single device of the process's CPUs, as always
  bool bind = false;                   // bind workers to each device's CPUs (and memory, see above)
  hwloc_topology* topology = nullptr;  // owned by whoever holds the plan; null when hwloc failed
};

// Reads CATALYST_CPU_DEVICES and the topology; logs a bad setting and a failing hwloc
// through `host` and falls back to one device for the whole machine. Never fails.
DevicePlan plan_devices(const ctl_host_api* host);
void destroy_topology(hwloc_topology* topology);

// Binds the pages of [block, block + bytes) to NUMA node `numa_node` (preferred: memory
// comes from elsewhere when the node is full, rather than the process being killed).
// Best effort; false when hwloc refused.
bool bind_memory(hwloc_topology* topology, void* block, size_t bytes, int32_t numa_node);

// "0-3,8,10-11": the form Linux prints in Cpus_allowed_list.
std::string cpu_list(const std::vector<int>& cpus);

}  // namespace catalyst::cpu
