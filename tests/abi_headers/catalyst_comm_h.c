/* Checks that abi/catalyst_comm.h compiles on its own, as the first and only include, as C99
 * with -pedantic -Wall -Wextra -Werror; including it twice checks its include guard. */
#include "catalyst_comm.h"
#include "catalyst_comm.h"

/* Use a few of its names so the translation unit is not empty and the types are complete. */
size_t catalyst_comm_h_check(void);
size_t catalyst_comm_h_check(void) {
  ctl_comm_plugin_api api;
  ctl_comm_call call = {CTL_COMM_CALL_STRUCT_SIZE, NULL, CTL_COMM_CALL_ALLREDUCE, CTL_DTYPE_F32, 0, CTL_COMM_SUM,
                        0, 0, NULL, NULL, NULL, 1, 0};
  api.struct_size = CTL_COMM_PLUGIN_API_STRUCT_SIZE;
  return api.struct_size + call.struct_size + CTL_COMM_OPTIONS_STRUCT_SIZE + sizeof(ctl_comm_info);
}
