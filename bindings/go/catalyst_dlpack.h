/* catalyst_dlpack.h — DLPack 1.x's versioned managed tensor for cgo. Debian 12's
 * dlpack.h is 0.6 and lacks it, yet catalyst.h's ctl_tensor_to_dlpack_versioned and
 * ctl_tensor_from_dlpack_versioned speak it; declared here from the DLPack 1.0
 * specification, and taken from the system header when that is new enough. */
#ifndef CATALYST_GO_DLPACK_H_
#define CATALYST_GO_DLPACK_H_

#include <dlpack/dlpack.h>

#if !defined(DLPACK_MAJOR_VERSION) || DLPACK_MAJOR_VERSION < 1
typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;
#define DLPACK_FLAG_BITMASK_READ_ONLY (1ULL << 0)
#endif

/* cgo cannot call a C function pointer; these do it for Go. */
static inline void catalyst_go_dlpack_delete(DLManagedTensorVersioned* managed) {
  if (managed && managed->deleter) managed->deleter(managed);
}

#endif
