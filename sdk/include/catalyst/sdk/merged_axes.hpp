// merged_axes.hpp — the loop a strided kernel runs over views that share one shape, with
// as few axes as the views allow: size-1 axes dropped, and an axis merged into the next
// inner one wherever every view steps through the two as one. A contiguous elementwise op
// becomes one axis; a transposed one keeps two. Axes come out innermost first, as a kernel
// that unravels a linear index wants them; a plugin converts them to its launch format
// (cl_long8, 32-bit shader words, loop bounds).
#pragma once

#include <cstddef>
#include <cstdint>

#include "catalyst_plugin.h"

namespace catalyst::sdk {

template <size_t Views>
struct MergedAxes {
  uint32_t rank = 0;
  int64_t shape[CTL_MAX_RANK] = {};           // innermost first; 1 from `rank` on
  int64_t strides[Views][CTL_MAX_RANK] = {};  // each view's, innermost first; 0 from `rank` on
  int64_t numel = 1;                          // elements walked: the product of the axes kept
};

// The axes of `shape` (rank axes) but `skip` (CTL_MAX_RANK or more: none), merged for the
// `count` views whose strides over all `rank` axes are strides[v]; a NULL strides[v] is a
// view broadcast along every axis (all strides 0). A normalisation walks its rows by
// skipping the normalised axis.
template <size_t Views>
MergedAxes<Views> merge_axes(uint32_t rank, const int64_t* shape, const int64_t* const* strides, size_t count,
                             uint32_t skip = CTL_MAX_RANK) {
  MergedAxes<Views> m;
  uint32_t r = 0;
  for (uint32_t axis = rank; axis-- > 0;) {
    if (axis == skip) continue;
    const int64_t size = shape[axis];
    m.numel *= size;
    if (size == 1) continue;
    bool merge = r > 0;
    for (size_t v = 0; merge && v < count; ++v) {
      const int64_t stride = strides[v] ? strides[v][axis] : 0;
      merge = stride == m.strides[v][r - 1] * m.shape[r - 1];
    }
    if (merge) {
      m.shape[r - 1] *= size;
      continue;
    }
    m.shape[r] = size;
    for (size_t v = 0; v < count; ++v) m.strides[v][r] = strides[v] ? strides[v][axis] : 0;
    ++r;
  }
  m.rank = r;
  for (uint32_t i = r; i < CTL_MAX_RANK; ++i) m.shape[i] = 1;
  return m;
}

// The same for `count` views (anything with rank, shape and strides, such as ViewShape) that
// all have views[0]'s shape.
template <size_t Views, class View>
MergedAxes<Views> merge_views(const View* const* views, size_t count) {
  const int64_t* strides[Views];
  for (size_t v = 0; v < count; ++v) strides[v] = views[v]->strides;
  return merge_axes<Views>(views[0]->rank, views[0]->shape, strides, count);
}

}  // namespace catalyst::sdk
