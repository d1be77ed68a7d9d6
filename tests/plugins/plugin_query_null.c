/* A plugin whose ctl_plugin_query logs a reason through host->log and returns NULL: the core
 * must reject it, quoting the plugin's own words. */
#include "catalyst_plugin.h"

#define QUERY_NULL_REASON "test-query-null: no supported accelerator is present on this host"

CTL_EXPORT const ctl_plugin_api* ctl_plugin_query(uint32_t core_abi_major, uint32_t core_abi_minor,
                                                  const ctl_host_api* host) {
  (void)core_abi_major;
  (void)core_abi_minor;
  if (host && host->log) host->log(host->context, CTL_LOG_WARNING, QUERY_NULL_REASON);
  return NULL;
}
