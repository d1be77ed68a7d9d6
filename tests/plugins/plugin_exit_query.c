/* A plugin that ends the whole process from ctl_plugin_query (a driver calling exit() when
 * it finds no hardware). `catalyst devices` must report it with the exit status. */
#include <stdlib.h>

#include "catalyst_plugin.h"

CTL_EXPORT const ctl_plugin_api* ctl_plugin_query(uint32_t core_abi_major, uint32_t core_abi_minor,
                                                  const ctl_host_api* host) {
  (void)core_abi_major;
  (void)core_abi_minor;
  (void)host;
  exit(7);
}
