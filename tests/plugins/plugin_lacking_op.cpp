// plugin_lacking_op.cpp — a TEST plugin, never installed: the real CPU plugin (dlopened
// from CTL_INNER_PLUGIN) under the name "lacking", answering UNSUPPORTED for the op ids
// CATALYST_TEST_LACKING_OP names (numbers separated by commas; default 9, relu) in
// op_execute and op_supports. Everything else is the CPU plugin's. Placement tests use it
// as the device that lacks ops, to check that fallback happens only when allowed, is
// counted and timed, and gives the CPU's results. CATALYST_TEST_LACKING_NO_HOST_POINTERS=1
// takes its host pointers away (see below).
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "catalyst/sdk/status.hpp"
#include "catalyst_plugin.h"

namespace {

ctl_plugin_api g_api{};
const ctl_plugin_api* g_inner = nullptr;
const ctl_host_api* g_host = nullptr;  // the latest instance's, for statuses

// Read at each call: tests change the variable between runtimes of one process.
bool lacks(ctl_op_id op) {
  const char* text = std::getenv("CATALYST_TEST_LACKING_OP");
  if (!text || !*text) return op == CTL_OP_RELU;
  for (const char* p = text; *p;) {
    char* end = nullptr;
    const long id = std::strtol(p, &end, 10);
    if (end == p) return false;  // not a number: lacks nothing more
    if (id == static_cast<long>(op)) return true;
    p = *end == ',' ? end + 1 : end;
  }
  return false;
}

ctl_status* refuse(const ctl_op_call* call) {
  return catalyst::sdk::make_status(g_host, CTL_STATUS_UNSUPPORTED, "lacking: this test plugin lacks op %d",
                                    static_cast<int>(call->op));
}

ctl_status* instance_create(const ctl_host_api* host, ctl_plugin_instance** out) {
  g_host = host;
  return g_inner->instance_create(host, out);
}

ctl_status* op_execute(ctl_plugin_stream* stream, const ctl_op_call* call) {
  if (lacks(call->op)) return refuse(call);
  return g_inner->op_execute(stream, call);
}

ctl_status* op_supports(ctl_plugin_device* device, const ctl_op_call* call) {
  if (lacks(call->op)) return refuse(call);
  return g_inner->op_supports ? g_inner->op_supports(device, call) : nullptr;
}

}  // namespace

extern "C" CTL_EXPORT const ctl_plugin_api* ctl_plugin_query(uint32_t major, uint32_t minor, const ctl_host_api* host) {
  static void* library = dlopen(CTL_INNER_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  if (!library) return nullptr;
  auto query = reinterpret_cast<ctl_plugin_query_fn>(dlsym(library, CTL_PLUGIN_QUERY_SYMBOL));
  const ctl_plugin_api* inner = query ? query(major, minor, host) : nullptr;
  if (!inner) return nullptr;
  if (!g_inner) {
    std::memcpy(&g_api, inner, std::min(inner->struct_size, sizeof g_api));
    g_api.name = "lacking";
    g_api.instance_create = instance_create;
    g_api.op_execute = op_execute;
    g_api.op_supports = op_supports;
    g_api.buffer_copy_peer = nullptr;  // its buffers are not the "cpu" plugin's to the core
    g_inner = inner;
  }
  // CATALYST_TEST_LACKING_NO_HOST_POINTERS=1 (read at each query, as a runtime loads it): a
  // device whose memory the host cannot address, as a GPU's, so fallbacks copy (lazily)
  // instead of sharing host memory.
  const char* no_host = std::getenv("CATALYST_TEST_LACKING_NO_HOST_POINTERS");
  const bool host_pointers = !(no_host && std::strcmp(no_host, "1") == 0);
  g_api.buffer_host_pointer = host_pointers ? inner->buffer_host_pointer : nullptr;
  g_api.buffer_wrap_host = host_pointers ? inner->buffer_wrap_host : nullptr;
  return &g_api;
}
