// json_writer.h — a small streaming JSON writer for the tool's --json output (escaping,
// commas and nesting handled in one place).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace catalyst::cli {

class JsonWriter {
 public:
  void begin_object(const char* key = nullptr);
  void end_object();
  void begin_array(const char* key = nullptr);
  void end_array();
  void value(const char* key, const std::string& text);
  void value(const char* key, const char* text) { value(key, std::string(text ? text : "")); }
  void value(const char* key, int64_t number);
  void value(const char* key, uint64_t number);
  void value(const char* key, uint32_t number) { value(key, static_cast<uint64_t>(number)); }
  void value(const char* key, int32_t number) { value(key, static_cast<int64_t>(number)); }
  void value(const char* key, double number);  // shortest exact form; NaN and inf become null
  void value(const char* key, bool flag);
  void null_value(const char* key);  // "unknown" or "none"
  const std::string& text() const { return out_; }

 private:
  void key_prefix(const char* key);
  void indent();
  std::string out_;
  std::vector<bool> first_;  // per nesting level: nothing written yet
};

std::string json_escape(const std::string& text);

}  // namespace catalyst::cli
