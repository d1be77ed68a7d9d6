/* A plugin that answers with a table for ABI major 2 whatever the core asks for: the core
 * must reject it with "incompatible ABI major: plugin 2, core 1" and never call into it. */
#include <string.h>

#include "refusing_entries.h"

static ctl_plugin_api g_table;

CTL_EXPORT const ctl_plugin_api* ctl_plugin_query(uint32_t core_abi_major, uint32_t core_abi_minor,
                                                  const ctl_host_api* host) {
  (void)core_abi_major;
  (void)core_abi_minor;
  (void)host;
  g_table = refusing_table("test-abi-major2");
  g_table.abi_major = 2;
  g_table.abi_minor = 0;
  return &g_table;
}
