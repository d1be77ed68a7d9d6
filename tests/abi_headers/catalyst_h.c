/* Checks that abi/catalyst.h compiles on its own, as the first and only include, as C99
 * with -pedantic -Wall -Wextra -Werror; including it twice checks its include guard. */
#include "catalyst.h"

/* Use a few of its names so the translation unit is not empty and the types are complete. */
size_t catalyst_h_check(void);
size_t catalyst_h_check(void) {
  ctl_runtime_options options = {
      CTL_RUNTIME_OPTIONS_STRUCT_SIZE, NULL, NULL, 0, false, NULL, NULL, CTL_LOG_WARNING, false, false, false};
  return options.struct_size + sizeof(ctl_tensor_info) + CTL_MAX_RANK + (size_t)CTL_OP_MATMUL;
}
