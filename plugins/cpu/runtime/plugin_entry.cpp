// plugin_entry.cpp — the one exported symbol: ABI negotiation and the function table.
#include <algorithm>
#include <mutex>
#include <vector>

#include "catalyst/sdk/status.hpp"
#include "plugin.h"

namespace catalyst::cpu {
namespace {

// Designated initialisers: an entry can never land in the wrong slot. The table's layout
// is the same in 1.0 to 1.3 (1.1 added ops, 1.2 an op and a device property, 1.3 nothing
// for plugins); 1.4 appends buffer_copy_peer, which a table for an older core leaves out
// (its struct_size ends before it).
constexpr ctl_plugin_api make_api(uint32_t abi_minor) {
  return {
      .struct_size = abi_minor >= 4 ? CTL_PLUGIN_API_STRUCT_SIZE : CTL_PLUGIN_API_1_2_STRUCT_SIZE,
      .abi_major = 1,
      .abi_minor = abi_minor,
      .name = "cpu",
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
      .buffer_host_pointer = buffer_host_pointer,
      .buffer_wrap_host = buffer_wrap_host,
      .event_create = event_create,
      .event_destroy = event_destroy,
      .event_record = event_record,
      .stream_wait_event = stream_wait_event,
      .event_synchronize = event_synchronize,
      .buffer_copy_peer = abi_minor >= 4 ? buffer_copy_peer : nullptr,
  };
}
constexpr ctl_plugin_api kApi10 = make_api(0);
constexpr ctl_plugin_api kApi11 = make_api(1);  // adds the training ops (192-194, 224-229)
constexpr ctl_plugin_api kApi12 = make_api(2);  // adds sgd_step (195) and max_work_group_size
constexpr ctl_plugin_api kApi14 = make_api(4);  // adds buffer_copy_peer between this plugin's devices
constexpr ctl_plugin_api kApi15 = make_api(5);  // adds fused_elementwise (288); the table is 1.4's
static_assert(CTL_ABI_VERSION_MINOR >= 5, "kApi15 describes ABI 1.5");
static_assert(CTL_ABI_VERSION_MAJOR == 1, "this table implements ABI 1.x; review it for a new major");

// The host may be older than this header: use log only when its table reaches that far.
bool host_can_log(const ctl_host_api* host) {
  return host && host->struct_size >= offsetof(ctl_host_api, log) + sizeof(host->log) && host->log;
}

std::mutex g_hosts_mutex;
std::vector<const ctl_host_api*> g_live_hosts;

}  // namespace

void register_host(const ctl_host_api* host) {
  std::lock_guard lock(g_hosts_mutex);
  g_live_hosts.push_back(host);
}

void unregister_host(const ctl_host_api* host) {
  std::lock_guard lock(g_hosts_mutex);
  std::erase(g_live_hosts, host);
}

ctl_status* null_handle(const char* function, const char* argument) {
  std::lock_guard lock(g_hosts_mutex);
  // The core never passes NULL handles (catalyst_plugin.h); this guards other callers.
  if (g_live_hosts.empty()) return nullptr;
  return sdk::make_status(g_live_hosts.back(), CTL_STATUS_INVALID_ARGUMENT, "%s%s: %s is NULL", kLogPrefix, function,
                          argument);
}

}  // namespace catalyst::cpu

extern "C" CTL_EXPORT const ctl_plugin_api* ctl_plugin_query(uint32_t core_abi_major, uint32_t core_abi_minor,
                                                             const ctl_host_api* host) {
  using namespace catalyst::cpu;
  if (core_abi_major != CTL_ABI_VERSION_MAJOR) {
    if (host_can_log(host)) {
      catalyst::sdk::log(host, CTL_LOG_WARNING, "%sincompatible ABI major: core %u, plugin %u", kLogPrefix,
                         core_abi_major, static_cast<unsigned>(CTL_ABI_VERSION_MAJOR));
    }
    return nullptr;
  }
  // Same major is all we need: an older core gets the table of the version it knows (it
  // never sends the newer ops, nor reads past that table's struct_size); a 1.3 core (1.3
  // added nothing for plugins) the 1.2 table; a core from 1.4 on what we implement.
  if (core_abi_minor >= 5) return &kApi15;
  if (core_abi_minor >= 4) return &kApi14;
  return core_abi_minor >= 2 ? &kApi12 : core_abi_minor == 1 ? &kApi11 : &kApi10;
}
