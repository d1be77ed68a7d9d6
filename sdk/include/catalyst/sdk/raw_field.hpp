// raw_field.hpp — reading bool and enum fields of a caller's struct. A malformed call may hold
// any bits there, and loading a bool that is not 0 or 1, or a C enum outside its enumerators,
// is undefined in C++: read the bits instead, then compare.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace catalyst::sdk {

// True when the field's byte is not zero.
inline bool raw_bool(const bool& field) {
  unsigned char byte;
  std::memcpy(&byte, &field, 1);
  return byte != 0;
}

// The integer stored in an enum field.
template <class E>
inline int64_t raw_enum(const E& field) {
  std::underlying_type_t<E> value;
  std::memcpy(&value, &field, sizeof value);
  return static_cast<int64_t>(value);
}

}  // namespace catalyst::sdk
