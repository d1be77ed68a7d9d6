// host_memory.hpp — plugin objects in host memory: allocated through the host table, so the
// core counts every live allocation and the conformance suite can report leaks.
#pragma once

#include <new>
#include <utility>

#include "catalyst_plugin.h"

namespace catalyst::sdk {

// Allocates a T with the host allocator and constructs it from `args`; NULL when the host
// is out of memory.
template <class T, class... Args>
T* host_new(const ctl_host_api* host, Args&&... args) {
  void* memory = host->alloc(host->context, sizeof(T), alignof(T) < 16 ? 16 : alignof(T));
  return memory ? new (memory) T{std::forward<Args>(args)...} : nullptr;
}

// Destroys and frees what host_new made; NULL is a no-op.
template <class T>
void host_delete(const ctl_host_api* host, T* object) {
  if (!object) return;
  object->~T();
  host->free(host->context, object);
}

}  // namespace catalyst::sdk
