/* A plugin that is accepted (its table is complete, it has one device) and then crashes
 * while the core enumerates that device, in device_properties. */
#include <signal.h>

#include "refusing_entries.h"

static ctl_plugin_api g_table;
static int g_instance; /* the one instance and device are just addresses */

static ctl_status* instance_create(const ctl_host_api* host, ctl_plugin_instance** out) {
  (void)host;
  *out = (ctl_plugin_instance*)&g_instance;
  return NULL;
}
static void instance_destroy(ctl_plugin_instance* instance) {
  (void)instance;
}
static ctl_status* device_count(ctl_plugin_instance* instance, uint32_t* out) {
  (void)instance;
  *out = 1;
  return NULL;
}
static ctl_status* device_get(ctl_plugin_instance* instance, uint32_t index, ctl_plugin_device** out) {
  (void)instance;
  (void)index;
  *out = (ctl_plugin_device*)&g_instance;
  return NULL;
}
static ctl_status* device_properties(ctl_plugin_device* device, ctl_plugin_device_properties* out) {
  (void)device;
  (void)out;
  raise(SIGSEGV);
  return NULL;
}

CTL_EXPORT const ctl_plugin_api* ctl_plugin_query(uint32_t core_abi_major, uint32_t core_abi_minor,
                                                  const ctl_host_api* host) {
  (void)core_abi_major;
  (void)core_abi_minor;
  (void)host;
  g_table = refusing_table("test-crash-devices");
  g_table.instance_create = instance_create;
  g_table.instance_destroy = instance_destroy;
  g_table.device_count = device_count;
  g_table.device_get = device_get;
  g_table.device_properties = device_properties;
  return &g_table;
}
