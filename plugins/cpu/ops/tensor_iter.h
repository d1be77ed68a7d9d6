// tensor_iter.h — walking several strided operands of one shape together.
//
// make_layout() drops size-1 axes and merges neighbouring axes that are contiguous in
// every operand, so a contiguous tensor becomes one long axis and the kernels' tight
// inner loops see the longest possible runs. for_each_segment() then visits a range of
// row-major element indices as runs along the innermost axis, which is how both the
// contiguous fast paths and the general strided path are driven.
#pragma once

#include <array>
#include <cstdint>

#include "catalyst/sdk/view.hpp"

namespace catalyst::cpu {

template <size_t N>
struct Layout {
  uint32_t rank = 0;
  int64_t numel = 0;
  int64_t shape[CTL_MAX_RANK] = {};
  int64_t strides[N][CTL_MAX_RANK] = {};
  // Stride of operand s along the innermost axis.
  int64_t inner_stride(size_t s) const { return strides[s][rank - 1]; }
  int64_t inner_size() const { return shape[rank - 1]; }
};

// `strides[s]` is operand s's stride array over `shape`.
template <size_t N>
Layout<N> make_layout(uint32_t rank, const int64_t* shape, const std::array<const int64_t*, N>& strides) {
  Layout<N> layout;
  layout.numel = 1;
  for (uint32_t i = 0; i < rank; ++i) layout.numel *= shape[i];
  uint32_t r = 0;
  for (uint32_t i = 0; i < rank; ++i) {
    if (shape[i] == 1) continue;
    if (r > 0) {
      bool mergeable = true;
      for (size_t s = 0; s < N; ++s) {
        // A product that overflows cannot be the outer stride: the axes stay apart.
        int64_t outer = 0;
        if (__builtin_mul_overflow(strides[s][i], shape[i], &outer) || layout.strides[s][r - 1] != outer) {
          mergeable = false;
        }
      }
      if (mergeable) {
        layout.shape[r - 1] *= shape[i];
        for (size_t s = 0; s < N; ++s) layout.strides[s][r - 1] = strides[s][i];
        continue;
      }
    }
    layout.shape[r] = shape[i];
    for (size_t s = 0; s < N; ++s) layout.strides[s][r] = strides[s][i];
    ++r;
  }
  if (r == 0) {  // a scalar, or every axis of size 1: one element
    layout.shape[0] = 1;
    for (size_t s = 0; s < N; ++s) layout.strides[s][0] = 1;
    r = 1;
  }
  layout.rank = r;
  return layout;
}

// Calls seg(offsets, count, linear) for the runs that cover row-major indices
// [begin, end): offsets[s] is operand s's element offset of the run's first element, the
// run continues with stride layout.inner_stride(s), and `linear` is that element's index.
template <size_t N, class Seg>
void for_each_segment(const Layout<N>& layout, int64_t begin, int64_t end, Seg&& seg) {
  if (begin >= end) return;
  const int64_t inner = layout.inner_size();
  sdk::StridedWalker<N> outer(layout.rank - 1, layout.shape);
  for (size_t s = 0; s < N; ++s) outer.add(layout.strides[s]);
  outer.seek(begin / inner);
  int64_t position = begin % inner;
  int64_t linear = begin;
  std::array<int64_t, N> offsets;
  while (linear < end) {
    const int64_t count = (inner - position < end - linear) ? inner - position : end - linear;
    for (size_t s = 0; s < N; ++s) offsets[s] = outer.offset(s) + position * layout.strides[s][layout.rank - 1];
    seg(offsets, count, linear);
    linear += count;
    position = 0;
    outer.next();
  }
}

// Calls f(offsets) for every element in [begin, end) of `layout`, one at a time: the walk
// of row kernels, whose layout spans the rows and whose f processes one whole row.
template <size_t N, class F>
void for_each_row(const Layout<N>& layout, int64_t begin, int64_t end, F&& f) {
  for_each_segment(layout, begin, end, [&](const std::array<int64_t, N>& first, int64_t count, int64_t) {
    std::array<int64_t, N> offsets = first;
    for (int64_t r = 0; r < count; ++r) {
      f(offsets);
      for (size_t s = 0; s < N; ++s) offsets[s] += layout.inner_stride(s);
    }
  });
}

}  // namespace catalyst::cpu
