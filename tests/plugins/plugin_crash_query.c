/* A plugin that crashes inside ctl_plugin_query, before the core sees a table: what a
 * vendor's plugin does when its driver faults at initialisation. `catalyst devices` must
 * report it (file name and signal) and go on listing the others. */
#include <signal.h>

#include "catalyst_plugin.h"

CTL_EXPORT const ctl_plugin_api* ctl_plugin_query(uint32_t core_abi_major, uint32_t core_abi_minor,
                                                  const ctl_host_api* host) {
  (void)core_abi_major;
  (void)core_abi_minor;
  (void)host;
  raise(SIGSEGV); /* what a wild pointer does, without undefined behaviour in the test */
  return NULL;
}
