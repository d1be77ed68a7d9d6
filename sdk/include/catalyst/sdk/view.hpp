// view.hpp — small helpers over ctl_tensor_view: sizes, contiguity, and walking the
// elements of a strided view in row-major order.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "catalyst_plugin.h"

namespace catalyst::sdk {

inline size_t dtype_size(ctl_dtype dtype) {
  switch (dtype) {
    case CTL_DTYPE_F64:
    case CTL_DTYPE_I64:
      return 8;
    case CTL_DTYPE_F32:
    case CTL_DTYPE_I32:
      return 4;
    case CTL_DTYPE_F16:
    case CTL_DTYPE_BF16:
      return 2;
    case CTL_DTYPE_I8:
    case CTL_DTYPE_U8:
    case CTL_DTYPE_BOOL:
      return 1;
    default:
      return 0;
  }
}

inline int64_t numel(const ctl_tensor_view& view) {
  int64_t n = 1;
  for (uint32_t i = 0; i < view.rank; ++i) n *= view.shape[i];
  return n;
}

// True when the view is row-major with no gaps (size-1 axes may have any stride).
inline bool is_contiguous(const ctl_tensor_view& view) {
  int64_t expected = 1;
  for (uint32_t i = view.rank; i-- > 0;) {
    if (view.shape[i] != 1 && view.strides[i] != expected) return false;
    expected *= view.shape[i];
  }
  return true;
}

// Walks a row-major multi-index over `shape` and keeps the element offsets of up to
// kMax views in step, so a kernel can visit every element of strided operands together.
template <size_t kMax>
class StridedWalker {
 public:
  StridedWalker(uint32_t rank, const int64_t* shape) : rank_(rank) {
    for (uint32_t i = 0; i < rank; ++i) shape_[i] = shape[i];
  }
  // Registers a view's strides; returns its slot.
  size_t add(const int64_t* strides) {
    for (uint32_t i = 0; i < rank_; ++i) strides_[count_][i] = strides[i];
    return count_++;
  }
  int64_t offset(size_t slot) const { return offsets_[slot]; }
  // Moves to the next element in row-major order.
  void next() {
    for (uint32_t axis = rank_; axis-- > 0;) {
      if (++index_[axis] < shape_[axis]) {
        for (size_t s = 0; s < count_; ++s) offsets_[s] += strides_[s][axis];
        return;
      }
      index_[axis] = 0;
      for (size_t s = 0; s < count_; ++s) offsets_[s] -= strides_[s][axis] * (shape_[axis] - 1);
    }
  }
  // Jumps to the element with row-major linear index `linear`.
  void seek(int64_t linear) {
    for (size_t s = 0; s < count_; ++s) offsets_[s] = 0;
    for (uint32_t axis = rank_; axis-- > 0;) {
      index_[axis] = shape_[axis] ? linear % shape_[axis] : 0;
      linear = shape_[axis] ? linear / shape_[axis] : 0;
      for (size_t s = 0; s < count_; ++s) offsets_[s] += index_[axis] * strides_[s][axis];
    }
  }

 private:
  uint32_t rank_;
  size_t count_ = 0;
  std::array<int64_t, CTL_MAX_RANK> shape_{};
  std::array<int64_t, CTL_MAX_RANK> index_{};
  std::array<std::array<int64_t, CTL_MAX_RANK>, kMax> strides_{};
  std::array<int64_t, kMax> offsets_{};
};

}  // namespace catalyst::sdk
