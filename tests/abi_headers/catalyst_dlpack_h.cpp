/* Checks that abi/catalyst_dlpack.h compiles on its own (with only the system dlpack.h), as
 * the first include, as C++20 with -pedantic -Wall -Wextra -Werror; including it twice checks
 * its include guard, and catalyst.h after it must agree on the struct's name. */
#include "catalyst_dlpack.h"

#include "catalyst.h"

/* Use its names so the translation unit is not empty and the types are complete. */
size_t catalyst_dlpack_h_check(DLManagedTensorVersioned* managed);
size_t catalyst_dlpack_h_check(DLManagedTensorVersioned* managed) {
  struct DLManagedTensorVersioned* same = managed; /* the name catalyst.h declares */
  ctl_status* (*exporter)(ctl_tensor*, struct DLManagedTensorVersioned**) = ctl_tensor_to_dlpack_versioned;
  return sizeof(*same) + (size_t)managed->version.major + (size_t)(exporter != NULL) +
         (size_t)(managed->flags & (DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED |
                                    DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED)) +
         (size_t)managed->dl_tensor.ndim;
}
