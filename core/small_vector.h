// small_vector.h — a vector of trivially copyable items that keeps its first N items
// inside the object, so that an op call of a few inputs and outputs is prepared without
// touching the heap (the per-op overhead rule of docs and issue 6). More than N items
// (concat takes up to 4096 inputs) move to one heap block.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <type_traits>

namespace catalyst {

template <class T, size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVector copies its items as bytes");

 public:
  SmallVector() {}  // NOLINT: the inline items stay uninitialised until assigned
  SmallVector(const SmallVector& other) { copy_from(other); }
  SmallVector& operator=(const SmallVector& other) {
    if (this != &other) copy_from(other);
    return *this;
  }
  SmallVector& operator=(std::initializer_list<T> items) {
    reserve_exact(items.size());
    std::copy(items.begin(), items.end(), data());
    size_ = items.size();
    return *this;
  }

  // Replaces the contents with `count` copies of `value`.
  void assign(size_t count, const T& value) {
    reserve_exact(count);
    std::fill_n(data(), count, value);
    size_ = count;
  }
  void push_back(const T& value) {
    if (size_ == capacity()) grow(size_ * 2);
    data()[size_++] = value;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return heap_ ? heap_.get() : items_; }
  const T* data() const { return heap_ ? heap_.get() : items_; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }

 private:
  size_t capacity() const { return heap_ ? heap_capacity_ : N; }
  // Makes room for `count` items; the old contents may be dropped.
  void reserve_exact(size_t count) {
    if (count > capacity()) {
      heap_.reset(new T[count]);
      heap_capacity_ = count;
    }
  }
  // Makes room for `count` items, keeping the contents.
  void grow(size_t count) {
    count = std::max(count, N + 1);
    std::unique_ptr<T[]> bigger(new T[count]);
    std::memcpy(static_cast<void*>(bigger.get()), data(), size_ * sizeof(T));
    heap_ = std::move(bigger);
    heap_capacity_ = count;
  }
  void copy_from(const SmallVector& other) {
    reserve_exact(other.size_);
    std::memcpy(static_cast<void*>(data()), other.data(), other.size_ * sizeof(T));
    size_ = other.size_;
  }

  size_t size_ = 0;
  union {
    T items_[N];  // a union member: no item is constructed until assigned
  };
  std::unique_ptr<T[]> heap_;
  size_t heap_capacity_ = 0;
};

}  // namespace catalyst
