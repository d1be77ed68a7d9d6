// device_link.cpp — the path, class and default bandwidth rules of device_link.h.
#include "topology/device_link.h"

namespace catalyst::topology {
namespace {

constexpr uint64_t kGB = 1000ull * 1000 * 1000;

LinkClass class_by_locality(const Locality& a, const Locality& b) {
  if (!a.known || !b.known) return LinkClass::kUnknownLocality;
  if (a.numa_node >= 0 && a.numa_node == b.numa_node) return LinkClass::kSameNumaNode;
  if (a.package >= 0 && b.package >= 0) {
    return a.package == b.package ? LinkClass::kSamePackage : LinkClass::kCrossPackage;
  }
  return LinkClass::kUnknownLocality;
}

std::string where(const LinkEnd& end) {
  return end.name + " on " + locality_summary(end.locality);
}

}  // namespace

uint64_t default_bandwidth(LinkClass link_class, CopyPath path) {
  const bool peer = path == CopyPath::kPeerCopy;
  switch (link_class) {
    case LinkClass::kSameDevice:
      return 100 * kGB;
    case LinkClass::kSameNumaNode:
      return (peer ? 12 : 20) * kGB;
    case LinkClass::kSamePackage:
      return (peer ? 12 : 15) * kGB;
    case LinkClass::kCrossPackage:
      return (peer ? 6 : 10) * kGB;
    case LinkClass::kUnknownLocality:
      return (peer ? 6 : 10) * kGB;
    case LinkClass::kHostStaged:
      return 6 * kGB;
  }
  return 6 * kGB;
}

Link classify_link(const LinkEnd& from, const LinkEnd& to) {
  Link link;
  if (from.index == to.index && from.plugin_id == to.plugin_id) {
    link.link_class = LinkClass::kSameDevice;
    link.path = CopyPath::kNone;
    link.description = "the same device";
  } else {
    const bool same_plugin = from.plugin_id == to.plugin_id;
    std::string why;
    if (same_plugin && from.plugin_has_peer_copy) {
      link.path = CopyPath::kPeerCopy;
      why = "copied by plugin " + from.plugin + "'s buffer_copy_peer";
    } else if (from.host_visible && to.host_visible) {
      link.path = CopyPath::kHostMemory;
      why = "one copy in host memory (both devices are host-visible)";
    } else {
      link.path = CopyPath::kHostStaged;
      const LinkEnd& hidden = from.host_visible ? to : from;
      why = "staged through host memory: " + hidden.name + " is not host-visible and " +
            (same_plugin ? "plugin " + from.plugin + " has no buffer_copy_peer" : std::string("the plugins differ"));
    }
    link.link_class =
        link.path == CopyPath::kHostStaged ? LinkClass::kHostStaged : class_by_locality(from.locality, to.locality);
    link.description = why + "; " + where(from) + ", " + where(to);
  }
  // A peer copy between host-visible devices (a CPU split into several) is a copy in host
  // memory, whichever entry makes it: it gets host memory's figure.
  const bool in_host_memory = from.host_visible && to.host_visible;
  link.bytes_per_second = default_bandwidth(
      link.link_class, in_host_memory && link.path == CopyPath::kPeerCopy ? CopyPath::kHostMemory : link.path);
  return link;
}

const char* link_class_name(LinkClass link_class) {
  switch (link_class) {
    case LinkClass::kSameDevice:
      return "same_device";
    case LinkClass::kSameNumaNode:
      return "same_numa_node";
    case LinkClass::kSamePackage:
      return "same_package";
    case LinkClass::kCrossPackage:
      return "cross_package";
    case LinkClass::kHostStaged:
      return "host_staged";
    case LinkClass::kUnknownLocality:
      return "unknown_locality";
  }
  return "unknown_locality";
}

const char* copy_path_name(CopyPath path) {
  switch (path) {
    case CopyPath::kNone:
      return "none";
    case CopyPath::kPeerCopy:
      return "peer_copy";
    case CopyPath::kHostMemory:
      return "host_memory";
    case CopyPath::kHostStaged:
      return "host_staged";
  }
  return "host_staged";
}

}  // namespace catalyst::topology
