// enum_value.h — reading an enum that came from a C caller. C lets a caller pass any int
// where the ABI says ctl_dtype or ctl_op_id, but in C++ loading an out-of-range value as
// the enum type is undefined, so validation reads the bits as an int first.
#pragma once

#include <cstring>
#include <type_traits>

namespace catalyst {

template <typename Enum>
int enum_value(const Enum& value) {
  static_assert(std::is_enum_v<Enum> && sizeof(Enum) == sizeof(int));
  int raw;
  std::memcpy(&raw, &value, sizeof raw);
  return raw;
}

}  // namespace catalyst
