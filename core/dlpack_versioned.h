// dlpack_versioned.h — DLPack 1.x's versioned managed tensor, for dlpack.h headers that
// predate it (Debian 12 ships 0.6). Declared from the DLPack 1.0 specification; when the
// system header is new enough, its own declaration is used instead.
#pragma once

#include <dlpack/dlpack.h>

#if !defined(DLPACK_MAJOR_VERSION) || DLPACK_MAJOR_VERSION < 1
extern "C" {
typedef struct {
  uint32_t major;
  uint32_t minor;
} DLPackVersion;

struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};
}
#define DLPACK_FLAG_BITMASK_READ_ONLY (1ULL << 0)
#endif
// Flags added by DLPack 1.0 and 1.1, for headers (or the struct above) without them.
#ifndef DLPACK_FLAG_BITMASK_IS_COPIED
#define DLPACK_FLAG_BITMASK_IS_COPIED (1ULL << 1)
#endif
#ifndef DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED
#define DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED (1ULL << 2)
#endif
