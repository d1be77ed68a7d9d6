// json_value.h — a small JSON reader for the topology override file: enough JSON for a
// hand-written file of a few kilobytes (objects, arrays, strings with the usual escapes,
// numbers, true, false, null), with error messages that give the line and column.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace catalyst::topology {

struct JsonMember;

struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string text;
  std::vector<JsonValue> items;  // an array's elements
  // An object's members, in file order. A struct rather than std::pair: a pair of the
  // still-incomplete JsonValue is ill-formed, which Clang with libstdc++ 12 rejects.
  std::vector<JsonMember> members;

  bool is_object() const { return kind == Kind::kObject; }
  bool is_array() const { return kind == Kind::kArray; }
  bool is_string() const { return kind == Kind::kString; }
  bool is_number() const { return kind == Kind::kNumber; }
  // The member called `key`, or nullptr.
  const JsonValue* find(const std::string& key) const;
};

struct JsonMember {
  std::string name;
  JsonValue value;
};

// Parses `text` as one JSON value. False, with *out_error saying where and what, when it is
// not JSON (trailing data included).
bool parse_json(const std::string& text, JsonValue* out_value, std::string* out_error);

}  // namespace catalyst::topology
