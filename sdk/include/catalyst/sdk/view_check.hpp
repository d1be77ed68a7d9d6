// view_check.hpp — checking a caller's ctl_tensor_view before a kernel touches its buffer:
// struct_size, buffer, dtype, rank, shapes and strides, and that every element lies inside the
// buffer. The core promises all of it; checking costs a few multiplications and turns a
// malformed call into an error instead of a wild write (on a GPU, a lost device).
#pragma once

#include <cstddef>
#include <cstdint>

#include "catalyst/sdk/check.hpp"
#include "catalyst/sdk/raw_field.hpp"
#include "catalyst/sdk/view.hpp"
#include "catalyst_plugin.h"

namespace catalyst::sdk {

// What a passed check learned about the view.
struct ViewFacts {
  size_t element_size = 0;
  int64_t numel = 0;
};

// Checks `v`, the `index`th of the call's `kind` ("input" or "output"), called `what` in
// messages ("input 0 (x): ..."); a NULL view fails. ctl_plugin_buffer is the plugin's own type:
// `buffer_size(v->buffer)` returns its size in bytes, and is called only for a non-NULL buffer.
template <class BufferSize>
Check check_view(const ctl_tensor_view* v, const char* kind, uint32_t index, const char* what, BufferSize&& buffer_size,
                 ViewFacts* facts) {
  if (!v) return check_failed(CTL_STATUS_INVALID_ARGUMENT, "%s %u (%s) is NULL", kind, index, what);
  if (v->struct_size < CTL_TENSOR_VIEW_STRUCT_SIZE) {
    return check_failed(CTL_STATUS_INVALID_ARGUMENT, "%s %u (%s): struct_size %zu is smaller than %zu", kind, index,
                        what, v->struct_size, static_cast<size_t>(CTL_TENSOR_VIEW_STRUCT_SIZE));
  }
  if (!v->buffer) return check_failed(CTL_STATUS_INVALID_ARGUMENT, "%s %u (%s): buffer is NULL", kind, index, what);
  const int64_t dtype = raw_enum(v->dtype);
  if (dtype < 0 || dtype >= CTL_DTYPE_COUNT_) {
    return check_failed(CTL_STATUS_INVALID_ARGUMENT, "%s %u (%s): unknown dtype %lld", kind, index, what,
                        static_cast<long long>(dtype));
  }
  const size_t element_size = dtype_size(v->dtype);
  if (v->rank > CTL_MAX_RANK) {
    return check_failed(CTL_STATUS_INVALID_ARGUMENT, "%s %u (%s): rank %u exceeds %d", kind, index, what, v->rank,
                        CTL_MAX_RANK);
  }
  int64_t numel = 1;
  for (uint32_t i = 0; i < v->rank; ++i) {
    if (v->shape[i] < 0) {
      return check_failed(CTL_STATUS_INVALID_ARGUMENT, "%s %u (%s): shape[%u] is negative (%lld)", kind, index, what, i,
                          static_cast<long long>(v->shape[i]));
    }
    if (v->strides[i] < 0) {
      return check_failed(CTL_STATUS_INVALID_ARGUMENT, "%s %u (%s): strides[%u] is negative (%lld)", kind, index, what,
                          i, static_cast<long long>(v->strides[i]));
    }
    if (__builtin_mul_overflow(numel, v->shape[i], &numel)) {
      return check_failed(CTL_STATUS_INVALID_ARGUMENT, "%s %u (%s): element count overflows", kind, index, what);
    }
  }
  if (numel > 0) {
    unsigned __int128 last = 0;  // element offset of the last element
    for (uint32_t i = 0; i < v->rank; ++i) {
      last += static_cast<unsigned __int128>(v->shape[i] - 1) * static_cast<uint64_t>(v->strides[i]);
    }
    const unsigned __int128 end = static_cast<unsigned __int128>(v->byte_offset) + (last + 1) * element_size;
    const uint64_t size = buffer_size(v->buffer);
    if (end > size) {
      return check_failed(CTL_STATUS_OUT_OF_RANGE, "%s %u (%s): the view reaches byte %llu of a %llu-byte buffer", kind,
                          index, what, static_cast<unsigned long long>(end), static_cast<unsigned long long>(size));
    }
  }
  facts->element_size = element_size;
  facts->numel = numel;
  return Check();
}

// Outputs are written one element per thread (and in-place outputs read, then written): a
// broadcast axis would make threads race on one element. `why` ends the message.
template <class View>
Check check_distinct(const View& v, const char* what, const char* why = "outputs need distinct elements") {
  for (uint32_t d = 0; d < v.rank; ++d) {
    if (v.strides[d] == 0 && v.shape[d] > 1) {
      return check_failed(CTL_STATUS_INVALID_ARGUMENT, "%s is broadcast (stride 0) along axis %u; %s", what, d, why);
    }
  }
  return Check();
}

}  // namespace catalyst::sdk
