/* A plugin whose table leaves a required entry (buffer_read) NULL: the core must reject it
 * with "required table entry buffer_read is NULL" and never call into it. */
#include <string.h>

#include "refusing_entries.h"

static ctl_plugin_api g_table;

CTL_EXPORT const ctl_plugin_api* ctl_plugin_query(uint32_t core_abi_major, uint32_t core_abi_minor,
                                                  const ctl_host_api* host) {
  (void)core_abi_major;
  (void)core_abi_minor;
  (void)host;
  g_table = refusing_table("test-null-entry");
  g_table.buffer_read = NULL;
  return &g_table;
}
