// topology_api.cpp — the C functions of catalyst.h's "Topology and device locality" section.
#include <cstring>

#include "c_guard.h"
#include "enum_value.h"
#include "runtime.h"
#include "status.h"
#include "topology/device_link.h"
#include "topology/runtime_topology.h"
#include "topology/topology_describe.h"

using namespace catalyst;

namespace {

// A device argument must be live and belong to `runtime`.
ctl_status* check_device_of(const ctl_runtime* runtime, const ctl_device* device, const char* argument) {
  CTL_RETURN_IF_ERROR(check_device(device, argument));
  if (device->runtime != runtime) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT,
                       "argument '%s' (device %s) belongs to another runtime than argument 'runtime'", argument,
                       device->label.c_str());
  }
  return nullptr;
}

void fill_link(const topology::Link& link, ctl_device_link* out) {
  ctl_device_link full{};
  full.struct_size = sizeof full;
  full.next = out->next;
  full.link_class = static_cast<ctl_device_link_class>(link.link_class);
  full.path = static_cast<ctl_device_copy_path>(link.path);
  full.bytes_per_second = link.bytes_per_second;
  full.measured = link.measured;
  full.description = link.description.c_str();
  copy_out(&full, out);
}

ctl_status* check_link_out(const ctl_device_link* out_link) {
  CTL_CHECK_ARG(out_link, "argument 'out_link' is NULL");
  CTL_CHECK_ARG(out_link->struct_size >= offsetof(ctl_device_link, next),
                "out_link->struct_size is %zu; set it to CTL_DEVICE_LINK_STRUCT_SIZE", out_link->struct_size);
  return nullptr;
}

}  // namespace

// The C++ enums mirror the C ones value for value; a reordering would break the casts above.
static_assert(static_cast<int>(topology::LinkClass::kUnknownLocality) == CTL_DEVICE_LINK_UNKNOWN_LOCALITY);
static_assert(static_cast<int>(topology::LinkClass::kHostStaged) == CTL_DEVICE_LINK_HOST_STAGED);
static_assert(static_cast<int>(topology::LinkClass::kCrossPackage) == CTL_DEVICE_LINK_CROSS_PACKAGE);
static_assert(static_cast<int>(topology::LinkClass::kSameNumaNode) == CTL_DEVICE_LINK_SAME_NUMA_NODE);
static_assert(static_cast<int>(topology::CopyPath::kHostStaged) == CTL_DEVICE_COPY_HOST_STAGED);
static_assert(static_cast<int>(topology::CopyPath::kHostMemory) == CTL_DEVICE_COPY_HOST_MEMORY);
static_assert(static_cast<int>(topology::CopyPath::kPeerCopy) == CTL_DEVICE_COPY_PEER);
static_assert(static_cast<int>(topology::JoinMethod::kSoleNumaNode) == CTL_LOCALITY_JOIN_SOLE_NUMA_NODE);
static_assert(static_cast<int>(topology::JoinMethod::kNumaNode) == CTL_LOCALITY_JOIN_NUMA_NODE);
static_assert(static_cast<int>(topology::JoinMethod::kPciBusId) == CTL_LOCALITY_JOIN_PCI_BUS_ID);

extern "C" {

CTL_EXPORT ctl_status* ctl_device_get_locality(const ctl_device* device, ctl_device_locality* out_locality) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_device(device, "device"));
    CTL_CHECK_ARG(out_locality, "argument 'out_locality' is NULL");
    CTL_CHECK_ARG(out_locality->struct_size >= offsetof(ctl_device_locality, next),
                  "out_locality->struct_size is %zu; set it to CTL_DEVICE_LOCALITY_STRUCT_SIZE",
                  out_locality->struct_size);
    RuntimeTopology& topo = runtime_topology(*device->runtime);
    const topology::Locality& l = topo.end(device->index).locality;
    ctl_device_locality full{};
    full.struct_size = sizeof full;
    full.next = out_locality->next;
    full.known = l.known;
    full.joined_by = static_cast<ctl_locality_join>(l.joined_by);
    full.from_override = l.from_override;
    full.package = l.package;
    full.numa_node = l.numa_node;
    full.pci_bus_id = l.pci_bus_id.c_str();
    full.core_count = l.cores;
    full.pu_count = l.pus;
    full.cpuset = l.cpuset.c_str();
    full.reason = l.reason.c_str();
    full.topology_source = topo.model().source.c_str();
    copy_out(&full, out_locality);
    return nullptr;
  });
}

CTL_EXPORT ctl_status* ctl_runtime_device_link(const ctl_runtime* runtime, const ctl_device* from, const ctl_device* to,
                                               ctl_device_link* out_link) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_runtime(runtime, "runtime"));
    CTL_RETURN_IF_ERROR(check_device_of(runtime, from, "from"));
    CTL_RETURN_IF_ERROR(check_device_of(runtime, to, "to"));
    CTL_RETURN_IF_ERROR(check_link_out(out_link));
    fill_link(runtime_topology(*runtime).link(from->index, to->index), out_link);
    return nullptr;
  });
}

CTL_EXPORT ctl_status* ctl_runtime_measure_device_link(ctl_runtime* runtime, ctl_device* from, ctl_device* to,
                                                       ctl_device_link* out_link) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_runtime(runtime, "runtime"));
    CTL_RETURN_IF_ERROR(check_device_of(runtime, from, "from"));
    CTL_RETURN_IF_ERROR(check_device_of(runtime, to, "to"));
    CTL_RETURN_IF_ERROR(check_link_out(out_link));
    const topology::Link* link = nullptr;
    CTL_RETURN_IF_ERROR(runtime_topology(*runtime).measure(from, to, &link));
    fill_link(*link, out_link);
    return nullptr;
  });
}

CTL_EXPORT const char* ctl_device_link_class_name(ctl_device_link_class link_class) {
  const int value = enum_value(link_class);
  if (value < CTL_DEVICE_LINK_SAME_DEVICE || value > CTL_DEVICE_LINK_UNKNOWN_LOCALITY) return nullptr;
  return topology::link_class_name(static_cast<topology::LinkClass>(value));
}

CTL_EXPORT ctl_status* ctl_runtime_topology_describe(const ctl_runtime* runtime, ctl_topology_format format,
                                                     char* buffer, size_t capacity, size_t* out_length) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_runtime(runtime, "runtime"));
    const int value = enum_value(format);
    CTL_CHECK_ARG(value == CTL_TOPOLOGY_FORMAT_TEXT || value == CTL_TOPOLOGY_FORMAT_JSON,
                  "argument 'format' is %d, not a ctl_topology_format (0 text, 1 JSON)", value);
    CTL_CHECK_ARG(buffer || capacity == 0, "argument 'buffer' is NULL but capacity is %zu", capacity);
    CTL_CHECK_ARG(out_length, "argument 'out_length' is NULL");
    const std::string text =
        value == CTL_TOPOLOGY_FORMAT_JSON ? describe_topology_json(*runtime) : describe_topology_text(*runtime);
    if (capacity > 0) {
      const size_t n = std::min(text.size(), capacity - 1);
      std::memcpy(buffer, text.data(), n);
      buffer[n] = '\0';
    }
    *out_length = text.size();
    return nullptr;
  });
}

}  // extern "C"
