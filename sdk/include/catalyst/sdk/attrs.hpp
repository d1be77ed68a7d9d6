// attrs.hpp — copying a call's attribute struct (ctl_op_call::attrs) into the plugin's own copy.
// Structs grow at their end and start with struct_size: an older, smaller struct than the
// fields a plugin needs is an error; a newer, larger one is read only as far as the plugin knows.
#pragma once

#include <cstddef>
#include <cstring>

#include "catalyst/sdk/check.hpp"
#include "catalyst_plugin.h"

namespace catalyst::sdk {

// Copies `attrs` into *out (zeroed first, out_size bytes); fails when its struct_size is
// smaller than `min_size`, naming `struct_name`. Leaves *given false (and *out zeroed) when
// attrs is NULL.
inline Check read_attrs(const void* attrs, void* out, size_t out_size, size_t min_size, const char* struct_name,
                        bool* given) {
  std::memset(out, 0, out_size);
  *given = false;
  if (!attrs) return Check();
  const size_t size = *static_cast<const size_t*>(attrs);
  if (size < min_size) {
    return check_failed(CTL_STATUS_INVALID_ARGUMENT, "attrs: %s struct_size %zu is smaller than %zu", struct_name, size,
                        min_size);
  }
  // A newer, larger struct: read only the fields the plugin knows.
  std::memcpy(out, attrs, size < out_size ? size : out_size);
  *given = true;
  return Check();
}

}  // namespace catalyst::sdk
