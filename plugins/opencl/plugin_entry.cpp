// plugin_entry.cpp — the one exported symbol: ABI negotiation and the function table.
#include "catalyst/sdk/status.hpp"
#include "plugin.h"

namespace catalyst::opencl {
namespace {

// Designated initialisers: an entry can never land in the wrong slot. The table's layout
// is the same in 1.0 to 1.2 (1.1 added ops, 1.2 a device property), so abi_minor is the
// one difference.
constexpr ctl_plugin_api make_api(uint32_t abi_minor) {
  return {
      .struct_size = CTL_PLUGIN_API_STRUCT_SIZE,
      .abi_major = 1,
      .abi_minor = abi_minor,
      .name = "opencl",
      .version = "1.1.0",
      .instance_create = instance_create,
      .instance_destroy = instance_destroy,
      .device_count = device_count,
      .device_get = device_get,
      .device_properties = device_properties,
      .buffer_allocate = buffer_allocate,
      .buffer_free = buffer_free,
      .buffer_write = buffer_write,
      .buffer_read = buffer_read,
      .stream_create = stream_create,
      .stream_destroy = stream_destroy,
      .stream_synchronize = stream_synchronize,
      .op_execute = op_execute,
      .op_supports = op_supports,
      .buffer_copy = buffer_copy,
      .buffer_fill = buffer_fill,
      .buffer_host_pointer = nullptr,  // device memory is not host memory
      .buffer_wrap_host = nullptr,
      .event_create = event_create,
      .event_destroy = event_destroy,
      .event_record = event_record,
      .stream_wait_event = stream_wait_event,
      .event_synchronize = event_synchronize,
      .buffer_copy_peer = nullptr,  // 1.4; every OpenCL device here is its own context
  };
}
constexpr ctl_plugin_api kApi10 = make_api(0);
constexpr ctl_plugin_api kApi11 = make_api(1);  // adds the training, conv and pool ops
constexpr ctl_plugin_api kApi12 = make_api(2);  // reports max_work_group_size
constexpr ctl_plugin_api kApi15 = make_api(5);  // adds fused_elementwise (288)
static_assert(CTL_ABI_VERSION_MINOR >= 5, "kApi15 describes ABI 1.5");
static_assert(CTL_ABI_VERSION_MAJOR == 1, "this table implements ABI 1.x; review it for a new major");

bool host_can_log(const ctl_host_api* host) {
  return host && host->struct_size >= offsetof(ctl_host_api, log) + sizeof(host->log) && host->log;
}

}  // namespace
}  // namespace catalyst::opencl

extern "C" CTL_EXPORT const ctl_plugin_api* ctl_plugin_query(uint32_t core_abi_major, uint32_t core_abi_minor,
                                                             const ctl_host_api* host) {
  using namespace catalyst::opencl;
  if (core_abi_major != CTL_ABI_VERSION_MAJOR) {
    if (host_can_log(host)) {
      catalyst::sdk::log(host, CTL_LOG_WARNING, "%sincompatible ABI major: core %u, plugin %u", kLogPrefix,
                         core_abi_major, static_cast<unsigned>(CTL_ABI_VERSION_MAJOR));
    }
    return nullptr;
  }
  if (core_abi_minor >= 5) return &kApi15;
  return core_abi_minor >= 2 ? &kApi12 : core_abi_minor == 1 ? &kApi11 : &kApi10;
}
