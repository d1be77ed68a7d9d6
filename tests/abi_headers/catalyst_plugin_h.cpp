/* Checks that abi/catalyst_plugin.h compiles on its own, as the first and only include, as C++20
 * with -pedantic -Wall -Wextra -Werror; including it twice checks its include guard. */
#include "catalyst_plugin.h"

/* Use a few of its names so the translation unit is not empty and the types are complete. */
size_t catalyst_plugin_h_check(void);
size_t catalyst_plugin_h_check(void) {
  ctl_plugin_api api;
  api.struct_size = CTL_PLUGIN_API_MIN_STRUCT_SIZE;
  return api.struct_size + sizeof(ctl_op_call) + CTL_PLUGIN_API_STRUCT_SIZE + sizeof(ctl_host_api);
}
