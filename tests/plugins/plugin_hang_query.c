/* A plugin whose ctl_plugin_query never returns (a driver waiting on a device that never
 * answers). `catalyst devices` must give up on it after --probe-timeout and go on. */
#include <unistd.h>

#include "catalyst_plugin.h"

CTL_EXPORT const ctl_plugin_api* ctl_plugin_query(uint32_t core_abi_major, uint32_t core_abi_minor,
                                                  const ctl_host_api* host) {
  (void)core_abi_major;
  (void)core_abi_minor;
  (void)host;
  for (;;) pause();
}
