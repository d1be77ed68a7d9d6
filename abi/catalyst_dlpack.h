/* catalyst_dlpack.h — DLPack 1.x's versioned managed tensor, for programs that call
 * ctl_tensor_to_dlpack_versioned and ctl_tensor_from_dlpack_versioned (catalyst.h) with a
 * <dlpack/dlpack.h> older than DLPack 1.0, which lacks it: Debian 12 ships 0.6. catalyst.h
 * names `struct DLManagedTensorVersioned` but no header a user has declared it, so each
 * binding had to write its own copy. Since ABI 1.4.
 *
 * Include it instead of (or after) <dlpack/dlpack.h>. With a dlpack.h of 1.0 or newer it
 * adds nothing but the 1.1 flag names that header may lack; with an older one it declares
 * DLPackVersion, DLManagedTensorVersioned and the DLPack 1.x flag bits exactly as the DLPack
 * 1.0 specification lays them out. Standalone C99 apart from <dlpack/dlpack.h>. */
#ifndef CATALYST_DLPACK_H_
#define CATALYST_DLPACK_H_

#include <stdint.h>

#include <dlpack/dlpack.h>

#if !defined(DLPACK_MAJOR_VERSION) || DLPACK_MAJOR_VERSION < 1
#ifdef __cplusplus
extern "C" {
#endif

/* The DLPack version a capsule follows; Catalyst exports 1.0 and imports any 1.x. */
typedef struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

/* A DLTensor with its owner: the consumer calls `deleter` exactly once (it may be NULL
 * when there is nothing to free). */
typedef struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags; /* DLPACK_FLAG_BITMASK_* */
  DLTensor dl_tensor;
} DLManagedTensorVersioned;

#ifdef __cplusplus
} /* extern "C" */
#endif

#define DLPACK_FLAG_BITMASK_READ_ONLY (1ULL << 0)
#endif

/* Added by DLPack 1.0 and 1.1; Catalyst's import refuses every other bit. */
#ifndef DLPACK_FLAG_BITMASK_IS_COPIED
#define DLPACK_FLAG_BITMASK_IS_COPIED (1ULL << 1)
#endif
#ifndef DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED
#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1ULL << 2)
#endif

#endif /* CATALYST_DLPACK_H_ */
