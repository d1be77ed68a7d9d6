// json_writer.cpp — see json_writer.h.
#include "json_writer.h"

#include <cmath>
#include <cstdio>

namespace catalyst::cli {

std::string json_escape(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
          out += buffer;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

void JsonWriter::indent() {
  out_.append(2 * first_.size(), ' ');
}

void JsonWriter::key_prefix(const char* key) {
  if (!first_.empty()) {
    if (!first_.back()) out_ += ",";
    out_ += "\n";
    first_.back() = false;
    indent();
  }
  if (key) out_ += json_escape(key) + ": ";
}

void JsonWriter::begin_object(const char* key) {
  key_prefix(key);
  out_ += "{";
  first_.push_back(true);
}

void JsonWriter::end_object() {
  const bool empty = first_.back();
  first_.pop_back();
  if (!empty) {
    out_ += "\n";
    indent();
  }
  out_ += "}";
  if (first_.empty()) out_ += "\n";
}

void JsonWriter::begin_array(const char* key) {
  key_prefix(key);
  out_ += "[";
  first_.push_back(true);
}

void JsonWriter::end_array() {
  const bool empty = first_.back();
  first_.pop_back();
  if (!empty) {
    out_ += "\n";
    indent();
  }
  out_ += "]";
}

void JsonWriter::value(const char* key, const std::string& text) {
  key_prefix(key);
  out_ += json_escape(text);
}

void JsonWriter::value(const char* key, int64_t number) {
  key_prefix(key);
  out_ += std::to_string(number);
}

void JsonWriter::value(const char* key, uint64_t number) {
  key_prefix(key);
  out_ += std::to_string(number);
}

void JsonWriter::value(const char* key, double number) {
  key_prefix(key);
  if (!std::isfinite(number)) {
    out_ += "null";  // JSON has no NaN or infinity
    return;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", number);
  out_ += buffer;
}

void JsonWriter::value(const char* key, bool flag) {
  key_prefix(key);
  out_ += flag ? "true" : "false";
}

void JsonWriter::null_value(const char* key) {
  key_prefix(key);
  out_ += "null";
}

}  // namespace catalyst::cli
