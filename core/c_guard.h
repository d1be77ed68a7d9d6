// c_guard.h — what every extern "C" entry point wraps itself in: no C++ exception ever
// crosses the ABI, and versioned out-structs are written only as far as the caller's
// struct_size reaches.
#pragma once

#include <cstring>
#include <new>

#include "status.h"

namespace catalyst {

// Runs `body` (returning ctl_status*) and turns any escaping exception into a status.
template <typename Body>
ctl_status* guard(Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return make_status(CTL_STATUS_OUT_OF_MEMORY, "out of host memory");
  } catch (const std::exception& error) {
    return make_status(CTL_STATUS_INTERNAL, "internal error: %s", error.what());
  } catch (...) {
    return make_status(CTL_STATUS_INTERNAL, "internal error: unknown exception");
  }
}

// Copies a full, current-version struct into the caller's possibly older, smaller one,
// keeping the caller's struct_size.
template <typename T>
void copy_out(const T* full, T* out) {
  const size_t size = std::min(out->struct_size, sizeof(T));
  const size_t caller_size = out->struct_size;
  std::memcpy(out, full, size);
  out->struct_size = caller_size;
}

}  // namespace catalyst
