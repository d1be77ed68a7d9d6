// device_link.h — what lies between two devices: the path a copy takes, the link class
// that follows from the path and the two localities, and a default copy bandwidth for it.
//
// Path (how the core moves bytes from `from` to `to`):
//  - none:        the same device;
//  - peer copy:   both devices belong to one plugin that provides buffer_copy_peer;
//  - host memory: otherwise, when both devices are host-visible (their buffers are host
//                 memory, so a copy is one memcpy);
//  - host staged: otherwise: read to a host buffer, then written to the other device
//                 (devices of different plugins where one is not host-visible, or a plugin
//                 without peer copies whose devices are not host-visible).
// Class: same device; host staged for the staged path (whatever the localities); else by
// locality: same NUMA node when both know their node and it is one node; same package when
// both know their package and it is one; across packages when they know different
// packages; unknown locality when either side's is unknown.
//
// Default bandwidths (bytes per second, decimal GB; conservative figures of a current
// server, meant to order links, not to predict times; docs/topology.md explains them):
//                    host memory   peer copy
//   same NUMA node        20            12
//   same package          15            12
//   across packages       10             6
//   unknown locality      10             6
//   same device 100; host staged 6.
// A peer copy between two host-visible devices (a CPU split into several devices) gets the
// host memory figure: it is a copy in host memory, whichever entry makes it. A measured
// figure replaces the default (link_measurement.h).
#pragma once

#include <cstdint>
#include <string>

#include "topology/device_locality.h"

namespace catalyst::topology {

enum class LinkClass { kSameDevice, kSameNumaNode, kSamePackage, kCrossPackage, kHostStaged, kUnknownLocality };
enum class CopyPath { kNone, kPeerCopy, kHostMemory, kHostStaged };

// One side of a link, as the runtime knows it.
struct LinkEnd {
  uint32_t index = 0;               // the device's index in its runtime
  std::string name;                 // "cpu:0"
  std::string plugin;               // the plugin's name, for messages
  const void* plugin_id = nullptr;  // the loaded plugin: peer copies need one plugin object
  bool host_visible = false;
  bool plugin_has_peer_copy = false;
  Locality locality;
};

struct Link {
  LinkClass link_class = LinkClass::kUnknownLocality;
  CopyPath path = CopyPath::kHostStaged;
  uint64_t bytes_per_second = 0;
  bool measured = false;
  std::string description;  // "host staged: opencl:0 is not host-visible and the plugins differ; ..."
};

// The link from `from` to `to` with its default bandwidth (measured false).
Link classify_link(const LinkEnd& from, const LinkEnd& to);

uint64_t default_bandwidth(LinkClass link_class, CopyPath path);

// "same_device", "same_numa_node", "same_package", "cross_package", "host_staged", "unknown_locality".
const char* link_class_name(LinkClass link_class);
// "none", "peer_copy", "host_memory", "host_staged".
const char* copy_path_name(CopyPath path);

}  // namespace catalyst::topology
