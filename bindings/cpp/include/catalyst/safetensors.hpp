// safetensors.hpp — checkpoints in the safetensors format, header-only, over catalyst.hpp.
//
// The format: an 8-byte little-endian unsigned header size N, then N bytes of UTF-8 JSON (an
// object mapping each tensor name to {"dtype", "shape", "data_offsets": [begin, end]}, plus an
// optional "__metadata__" object of string -> string; trailing spaces pad it), then the data:
// little-endian, row-major, packed in offset order with no gaps. Offsets count from the first
// byte after the header.
//
//   catalyst::save_safetensors("model.safetensors", {{"wte", wte}, {"wpe", wpe}}, {{"step", "100"}});
//   auto file = catalyst::load_safetensors("model.safetensors");
//   catalyst::Tensor wte = file.tensor("wte", device);
//
// Saving is atomic: the bytes go to `path.tmp-<pid>`, which is fsynced and renamed over
// `path`, and then the directory is fsynced, so a crash leaves either the old checkpoint or
// the new one, never half of one. (There is one temporary name per process: two threads must
// not save to the same path at once.) Loading checks every fact of the header against the
// file and throws catalyst::Error(INVALID_ARGUMENT) naming the file and what is wrong; a file
// written by something else is input, not trusted.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "catalyst/catalyst.hpp"

namespace catalyst {

static_assert(std::endian::native == std::endian::little,
              "safetensors.hpp copies tensor bytes as they are: it needs a little-endian host");

namespace detail {

// ---- a small strict JSON parser, enough for a safetensors header ----------------------------
// Objects (keys kept in file order, duplicates refused), arrays, strings (escapes, \u with
// surrogate pairs, UTF-8 checked), integers that fit int64, true/false/null. Numbers with a
// fraction or exponent are refused: nothing in a valid header has one.

struct Json {
  enum class Kind { kNull, kBool, kInteger, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  int64_t integer = 0;
  std::string string;
  std::vector<Json> items;        // an array's elements or an object's values
  std::vector<std::string> keys;  // an object's keys, in file order: keys[i] names items[i]
};

inline const char* json_kind_name(Json::Kind kind) {
  static const char* const kNames[] = {"null", "a boolean", "an integer", "a string", "an array", "an object"};
  return kNames[static_cast<int>(kind)];
}

// The length of the valid UTF-8 sequence at p (1..4), or 0 if it is not one: overlong forms,
// surrogates and code points past U+10FFFF are invalid.
inline size_t utf8_sequence_length(const unsigned char* p, size_t available) {
  const unsigned char c = p[0];
  if (c < 0x80) return 1;
  size_t length = 0;
  uint32_t code = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    length = 2, code = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    length = 3, code = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    length = 4, code = c & 0x07;
  } else {
    return 0;
  }
  if (available < length) return 0;
  for (size_t i = 1; i < length; ++i) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    code = (code << 6) | (p[i] & 0x3F);
  }
  if ((length == 3 && code < 0x800) || (length == 4 && code < 0x10000)) return 0;
  if ((code >= 0xD800 && code <= 0xDFFF) || code > 0x10FFFF) return 0;
  return length;
}

inline bool valid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_sequence_length(p + i, s.size() - i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

class JsonParser {
 public:
  // `where` prefixes every error message (the file and the part being parsed).
  JsonParser(std::string_view text, std::string where) : text_(text), where_(std::move(where)) {}

  // The whole text: one value with only whitespace around it.
  Json parse_document() {
    skip_whitespace();
    Json value = parse_value(0);
    skip_whitespace();
    if (pos_ != text_.size()) fail("unexpected text after the JSON value");
    return value;
  }

 private:
  static constexpr int kMaxDepth = 32;

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(CTL_STATUS_INVALID_ARGUMENT, where_ + ": invalid JSON at byte " + std::to_string(pos_) + ": " + what);
  }
  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }
  void skip_whitespace() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) ++pos_;
  }
  void expect(char c) {
    if (at_end() || peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  void expect_word(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) fail("unexpected character");
    pos_ += word.size();
  }

  Json parse_value(int depth) {
    if (depth > kMaxDepth) fail("nested deeper than " + std::to_string(kMaxDepth) + " levels");
    if (at_end()) fail("unexpected end of the header");
    Json value;
    const char c = peek();
    if (c == '{') {
      value.kind = Json::Kind::kObject;
      ++pos_;
      skip_whitespace();
      if (peek() == '}') {
        ++pos_;
        return value;
      }
      std::set<std::string> keys;
      for (;;) {
        skip_whitespace();
        if (peek() != '"') fail("expected a string key");
        std::string key = parse_string();
        if (!keys.insert(key).second) fail("the key \"" + key + "\" appears twice");
        skip_whitespace();
        expect(':');
        skip_whitespace();
        value.keys.push_back(std::move(key));
        value.items.push_back(parse_value(depth + 1));
        skip_whitespace();
        if (peek() == ',') {
          ++pos_;
          continue;
        }
        expect('}');
        return value;
      }
    }
    if (c == '[') {
      value.kind = Json::Kind::kArray;
      ++pos_;
      skip_whitespace();
      if (peek() == ']') {
        ++pos_;
        return value;
      }
      for (;;) {
        skip_whitespace();
        value.items.push_back(parse_value(depth + 1));
        skip_whitespace();
        if (peek() == ',') {
          ++pos_;
          continue;
        }
        expect(']');
        return value;
      }
    }
    if (c == '"') {
      value.kind = Json::Kind::kString;
      value.string = parse_string();
      return value;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      value.kind = Json::Kind::kInteger;
      value.integer = parse_integer();
      return value;
    }
    if (c == 't' || c == 'f') {
      value.kind = Json::Kind::kBool;
      value.boolean = c == 't';
      expect_word(c == 't' ? "true" : "false");
      return value;
    }
    if (c == 'n') {
      expect_word("null");
      return value;
    }
    fail(std::string("unexpected character '") + c + "'");
  }

  int64_t parse_integer() {
    const bool negative = peek() == '-';
    if (negative) ++pos_;
    if (at_end() || peek() < '0' || peek() > '9') fail("expected a digit");
    if (peek() == '0' && pos_ + 1 < text_.size() && text_[pos_ + 1] >= '0' && text_[pos_ + 1] <= '9') {
      fail("a number with a leading zero");
    }
    uint64_t magnitude = 0;
    const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
    while (!at_end() && peek() >= '0' && peek() <= '9') {
      const uint64_t digit = static_cast<uint64_t>(peek() - '0');
      if (magnitude > (limit - digit) / 10) fail("an integer too large for 64 bits");
      magnitude = magnitude * 10 + digit;
      ++pos_;
    }
    if (peek() == '.' || peek() == 'e' || peek() == 'E') fail("a number with a fraction or exponent");
    if (!negative) return static_cast<int64_t>(magnitude);
    return magnitude == uint64_t{1} << 63 ? INT64_MIN : -static_cast<int64_t>(magnitude);
  }

  uint32_t parse_hex4() {
    if (text_.size() - pos_ < 4) fail("a \\u escape needs four hex digits");
    uint32_t code = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = text_[pos_++];
      code <<= 4;
      if (h >= '0' && h <= '9') {
        code |= static_cast<uint32_t>(h - '0');
      } else if (h >= 'a' && h <= 'f') {
        code |= static_cast<uint32_t>(h - 'a' + 10);
      } else if (h >= 'A' && h <= 'F') {
        code |= static_cast<uint32_t>(h - 'A' + 10);
      } else {
        --pos_;
        fail("a \\u escape needs four hex digits");
      }
    }
    return code;
  }

  static void append_utf8(std::string& out, uint32_t code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  std::string parse_string() {
    expect('"');
    std::string out;
    for (;;) {
      if (at_end()) fail("unterminated string");
      const auto c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (c < 0x20) fail("a control character inside a string");
      if (c == '\\') {
        ++pos_;
        if (at_end()) fail("unterminated string");
        const char e = text_[pos_++];
        // (escape letter, the character it stands for); \u is handled below.
        static constexpr char kSimple[][2] = {{'"', '"'},  {'\\', '\\'}, {'/', '/'},  {'b', '\b'},
                                              {'f', '\f'}, {'n', '\n'},  {'r', '\r'}, {'t', '\t'}};
        const auto* simple =
            std::find_if(std::begin(kSimple), std::end(kSimple), [e](const char* p) { return p[0] == e; });
        if (simple != std::end(kSimple)) {
          out += (*simple)[1];
          continue;
        }
        if (e != 'u') {
          --pos_;
          fail(std::string("unknown escape '\\") + e + "'");
        }
        uint32_t code = parse_hex4();
        if (code >= 0xDC00 && code <= 0xDFFF) fail("a lone low surrogate in a \\u escape");
        if (code >= 0xD800 && code <= 0xDBFF) {
          if (text_.substr(pos_, 2) != "\\u") fail("a high surrogate without its low surrogate");
          pos_ += 2;
          const uint32_t low = parse_hex4();
          if (low < 0xDC00 || low > 0xDFFF) fail("a high surrogate without its low surrogate");
          code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
        }
        append_utf8(out, code);
        continue;
      }
      const size_t n =
          utf8_sequence_length(reinterpret_cast<const unsigned char*>(text_.data()) + pos_, text_.size() - pos_);
      if (n == 0) fail("invalid UTF-8 inside a string");
      out.append(text_.substr(pos_, n));
      pos_ += n;
    }
  }

  std::string_view text_;
  std::string where_;
  size_t pos_ = 0;
};

inline void append_json_string(std::string& out, std::string_view s) {
  static const char kHex[] = "0123456789abcdef";
  out += '"';
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    } else {
      out += ch;
    }
  }
  out += '"';
}

// ---- dtypes -----------------------------------------------------------------------------------

struct SafetensorsDtype {
  const char* name;
  ctl_dtype dtype;
  size_t size;
};
inline constexpr SafetensorsDtype kSafetensorsDtypes[] = {
    {"F32", CTL_DTYPE_F32, 4},   {"F64", CTL_DTYPE_F64, 8}, {"F16", CTL_DTYPE_F16, 2},
    {"BF16", CTL_DTYPE_BF16, 2}, {"I8", CTL_DTYPE_I8, 1},   {"U8", CTL_DTYPE_U8, 1},
    {"I32", CTL_DTYPE_I32, 4},   {"I64", CTL_DTYPE_I64, 8}, {"BOOL", CTL_DTYPE_BOOL, 1},
};

inline const SafetensorsDtype* find_safetensors_dtype(ctl_dtype dtype) {
  for (const auto& d : kSafetensorsDtypes) {
    if (d.dtype == dtype) return &d;
  }
  return nullptr;
}
inline const SafetensorsDtype* find_safetensors_dtype(std::string_view name) {
  for (const auto& d : kSafetensorsDtypes) {
    if (name == d.name) return &d;
  }
  return nullptr;
}

// ---- files ------------------------------------------------------------------------------------

inline std::string errno_text(int error) {
  return std::strerror(error);
}

// NOT_FOUND where the path (or a folder on it) does not exist, INTERNAL otherwise.
[[noreturn]] inline void throw_io_error(const std::string& what, const std::string& path, int error) {
  const ctl_status_code code = error == ENOENT || error == ENOTDIR ? CTL_STATUS_NOT_FOUND : CTL_STATUS_INTERNAL;
  throw Error(code, what + " " + path + ": " + errno_text(error));
}

inline void write_all(int fd, const void* data, size_t size, const std::string& path) {
  const auto* p = static_cast<const unsigned char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw_io_error("save_safetensors: cannot write", path, n < 0 ? errno : ENOSPC);
    p += n;
    size -= static_cast<size_t>(n);
  }
}

// Removes the temporary file unless released: every failure after it was created.
class TempFileGuard {
 public:
  explicit TempFileGuard(std::string path) : path_(std::move(path)) {}
  ~TempFileGuard() {
    if (fd_ >= 0) ::close(fd_);
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  TempFileGuard(const TempFileGuard&) = delete;
  TempFileGuard& operator=(const TempFileGuard&) = delete;
  void set_fd(int fd) { fd_ = fd; }
  // Closes the file, reporting an error a delayed write may have left for close().
  void close_file() {
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) throw_io_error("save_safetensors: cannot close", path_, errno);
  }
  void release() { path_.clear(); }

 private:
  std::string path_;
  int fd_ = -1;
};

inline std::string parent_directory(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace detail

// Writes `tensors` (in this order) and `metadata` to `path` atomically. Tensors may live on
// any device and have any strides: each is written as its logical row-major values.
inline void save_safetensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors,
                             const std::map<std::string, std::string>& metadata = {}) {
  const std::string where = "save_safetensors: " + path;
  // Everything about the arguments is checked before a file is touched.
  std::string header = "{";
  if (!metadata.empty()) {
    header += "\"__metadata__\":{";
    bool first = true;
    for (const auto& [key, value] : metadata) {
      if (!detail::valid_utf8(key) || !detail::valid_utf8(value)) {
        throw Error(CTL_STATUS_INVALID_ARGUMENT, where + ": metadata key '" + key + "' or its value is not UTF-8");
      }
      if (!first) header += ',';
      first = false;
      detail::append_json_string(header, key);
      header += ':';
      detail::append_json_string(header, value);
    }
    header += '}';
  }
  std::vector<size_t> sizes;
  std::set<std::string> seen;
  uint64_t offset = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const auto& [name, tensor] = tensors[i];
    if (name == "__metadata__" || !detail::valid_utf8(name)) {
      throw Error(CTL_STATUS_INVALID_ARGUMENT, where + ": '" + name + "' cannot name a tensor");
    }
    if (!seen.insert(name).second) {
      throw Error(CTL_STATUS_INVALID_ARGUMENT, where + ": the name '" + name + "' is given twice");
    }
    if (!tensor) throw Error(CTL_STATUS_INVALID_ARGUMENT, where + ": tensor '" + name + "' is an empty handle");
    const auto* dtype = detail::find_safetensors_dtype(tensor.dtype());
    if (!dtype) throw Error(CTL_STATUS_INVALID_ARGUMENT, where + ": tensor '" + name + "' has an unknown dtype");
    const Shape shape = tensor.shape();
    const size_t bytes = static_cast<size_t>(tensor.numel()) * dtype->size;
    sizes.push_back(bytes);
    if (header.size() > 1) header += ',';
    detail::append_json_string(header, name);
    header += ":{\"dtype\":\"";
    header += dtype->name;
    header += "\",\"shape\":[";
    for (size_t d = 0; d < shape.size(); ++d) header += (d ? "," : "") + std::to_string(shape[d]);
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + bytes) + "]}";
    offset += bytes;
  }
  header += '}';
  // Spaces pad the header so that the data starts 8-byte aligned.
  header.append((8 - header.size() % 8) % 8, ' ');

  const std::string temp = path + ".tmp-" + std::to_string(::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) detail::throw_io_error("save_safetensors: cannot create", temp, errno);
  detail::TempFileGuard guard(temp);
  guard.set_fd(fd);

  unsigned char prefix[8];
  for (int i = 0; i < 8; ++i) prefix[i] = static_cast<unsigned char>(static_cast<uint64_t>(header.size()) >> (8 * i));
  detail::write_all(fd, prefix, sizeof prefix, temp);
  detail::write_all(fd, header.data(), header.size(), temp);
  std::vector<unsigned char> staging;
  for (size_t i = 0; i < tensors.size(); ++i) {
    staging.resize(sizes[i]);
    tensors[i].second.to_host(staging.data(), staging.size());
    detail::write_all(fd, staging.data(), staging.size(), temp);
  }
  if (::fsync(fd) != 0) detail::throw_io_error("save_safetensors: cannot fsync", temp, errno);
  guard.close_file();
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    throw Error(error == ENOENT || error == ENOTDIR ? CTL_STATUS_NOT_FOUND : CTL_STATUS_INTERNAL,
                "save_safetensors: cannot rename " + temp + " to " + path + ": " + detail::errno_text(error));
  }
  guard.release();
  // The rename is durable only once the directory entry is on disk.
  const std::string directory = detail::parent_directory(path);
  const int dir_fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) detail::throw_io_error("save_safetensors: cannot open the directory", directory, errno);
  const int synced = ::fsync(dir_fd);
  const int error = errno;
  ::close(dir_fd);
  // EINVAL: the file system cannot sync directories; there is nothing more to do.
  if (synced != 0 && error != EINVAL) detail::throw_io_error("save_safetensors: cannot fsync", directory, error);
}

// One tensor of a loaded file.
struct SafetensorsEntry {
  std::string name;
  ctl_dtype dtype = CTL_DTYPE_F32;
  Shape shape;
  uint64_t begin = 0;  // byte offsets in the data section
  uint64_t end = 0;
};

// A checked safetensors file, held in host memory.
struct SafetensorsFile {
  std::string path;
  std::map<std::string, std::string> metadata;
  std::vector<SafetensorsEntry> entries;  // in the header's order
  std::vector<unsigned char> data;        // the data section

  // Names in the header's order.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : entries) out.push_back(e.name);
    return out;
  }
  bool contains(const std::string& name) const { return find(name) != nullptr; }
  // NOT_FOUND for a name the file does not have.
  const SafetensorsEntry& entry(const std::string& name) const {
    if (const SafetensorsEntry* e = find(name)) return *e;
    std::string known;
    for (size_t i = 0; i < entries.size() && i < 5; ++i) known += (i ? ", " : "") + entries[i].name;
    if (entries.size() > 5) known += ", ... (" + std::to_string(entries.size()) + " in all)";
    if (entries.empty()) known = "none";
    throw Error(CTL_STATUS_NOT_FOUND, path + ": no tensor '" + name + "' (it has: " + known + ")");
  }
  ctl_dtype dtype(const std::string& name) const { return entry(name).dtype; }
  Shape shape(const std::string& name) const { return entry(name).shape; }

  // A new tensor on `device` holding the bytes of `name`.
  Tensor tensor(const std::string& name, Device device) const {
    const SafetensorsEntry& e = entry(name);
    const unsigned char* bytes = data.data() + e.begin;
    const size_t size = static_cast<size_t>(e.end - e.begin);
    if (e.dtype == CTL_DTYPE_BOOL) {
      for (size_t i = 0; i < size; ++i) {
        if (bytes[i] > 1) {
          throw Error(CTL_STATUS_INVALID_ARGUMENT, path + ": BOOL tensor '" + name + "' holds the byte " +
                                                       std::to_string(bytes[i]) + " at element " + std::to_string(i) +
                                                       " (only 0 and 1 are booleans)");
        }
      }
    }
    return Tensor::from_host(device, e.dtype, e.shape, size ? bytes : nullptr, size);
  }

 private:
  const SafetensorsEntry* find(const std::string& name) const {
    for (const auto& e : entries) {
      if (e.name == name) return &e;
    }
    return nullptr;
  }
};

namespace detail {

inline SafetensorsEntry parse_safetensors_entry(const std::string& where, const std::string& name, const Json& value,
                                                uint64_t data_size) {
  const std::string what = where + ": tensor '" + name + "'";
  auto bad = [&](const std::string& message) { return Error(CTL_STATUS_INVALID_ARGUMENT, what + ": " + message); };
  if (value.kind != Json::Kind::kObject) throw bad(std::string("is ") + json_kind_name(value.kind) + ", not an object");
  const Json* dtype = nullptr;
  const Json* shape = nullptr;
  const Json* offsets = nullptr;
  for (size_t i = 0; i < value.keys.size(); ++i) {
    const std::string& key = value.keys[i];
    const Json& field = value.items[i];
    if (key == "dtype") {
      dtype = &field;
    } else if (key == "shape") {
      shape = &field;
    } else if (key == "data_offsets") {
      offsets = &field;
    } else {
      throw bad("unknown field \"" + key + "\"");
    }
  }
  if (!dtype || !shape || !offsets) {
    throw bad(std::string("lacks the field \"") + (!dtype ? "dtype" : !shape ? "shape" : "data_offsets") + "\"");
  }
  if (dtype->kind != Json::Kind::kString) throw bad("\"dtype\" is not a string");
  const SafetensorsDtype* type = find_safetensors_dtype(dtype->string);
  if (!type) throw bad("unknown dtype \"" + dtype->string + "\" (known: F32 F64 F16 BF16 I8 U8 I32 I64 BOOL)");

  SafetensorsEntry entry;
  entry.name = name;
  entry.dtype = type->dtype;
  if (shape->kind != Json::Kind::kArray) throw bad("\"shape\" is not an array");
  for (const Json& dim : shape->items) {
    if (dim.kind != Json::Kind::kInteger || dim.integer < 0) throw bad("\"shape\" holds something not a size");
    entry.shape.push_back(dim.integer);
  }
  // The byte count, overflow checked (any zero dimension makes it 0, however large the rest).
  uint64_t bytes = type->size;
  if (std::find(entry.shape.begin(), entry.shape.end(), 0) != entry.shape.end()) bytes = 0;
  for (const int64_t d : entry.shape) {
    if (bytes == 0) break;
    if (bytes > UINT64_MAX / static_cast<uint64_t>(d)) throw bad("the shape is too large");
    bytes *= static_cast<uint64_t>(d);
  }

  if (offsets->kind != Json::Kind::kArray || offsets->items.size() != 2 ||
      offsets->items[0].kind != Json::Kind::kInteger || offsets->items[1].kind != Json::Kind::kInteger ||
      offsets->items[0].integer < 0 || offsets->items[1].integer < 0) {
    throw bad("\"data_offsets\" is not [begin, end]");
  }
  entry.begin = static_cast<uint64_t>(offsets->items[0].integer);
  entry.end = static_cast<uint64_t>(offsets->items[1].integer);
  if (entry.end < entry.begin) {
    throw bad("data_offsets [" + std::to_string(entry.begin) + ", " + std::to_string(entry.end) + "] end before begin");
  }
  if (entry.end > data_size) {
    throw bad("data_offsets [" + std::to_string(entry.begin) + ", " + std::to_string(entry.end) +
              "] run past the end of the data (" + std::to_string(data_size) + " bytes)");
  }
  if (entry.end - entry.begin != bytes) {
    throw bad("data_offsets [" + std::to_string(entry.begin) + ", " + std::to_string(entry.end) + "] hold " +
              std::to_string(entry.end - entry.begin) + " bytes but a " + type->name + " tensor of that shape has " +
              std::to_string(bytes));
  }
  return entry;
}

}  // namespace detail

// The reference implementation refuses larger headers too; parsing one costs memory.
inline constexpr uint64_t kSafetensorsMaxHeaderBytes = 100'000'000;

// Reads and checks the whole file. INVALID_ARGUMENT for anything the format does not allow,
// NOT_FOUND for a missing file.
inline SafetensorsFile load_safetensors(const std::string& path) {
  const std::string where = "load_safetensors: " + path;
  auto bad = [&](const std::string& message) { return Error(CTL_STATUS_INVALID_ARGUMENT, where + ": " + message); };

  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) detail::throw_io_error("load_safetensors: cannot open", path, errno);
  std::vector<unsigned char> file;
  {
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      const int error = errno;
      ::close(fd);
      detail::throw_io_error("load_safetensors: cannot stat", path, error);
    }
    if (!S_ISREG(st.st_mode)) {
      ::close(fd);
      throw bad("not a regular file");
    }
    file.resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (done < file.size()) {
      const ssize_t n = ::read(fd, file.data() + done, file.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const int error = errno;
        ::close(fd);
        detail::throw_io_error("load_safetensors: cannot read", path, error);
      }
      if (n == 0) break;  // the file shrank while we read it
      done += static_cast<size_t>(n);
    }
    file.resize(done);
    ::close(fd);
  }

  if (file.size() < 8) {
    throw bad("the file is " + std::to_string(file.size()) + " bytes, shorter than the 8-byte header size");
  }
  uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | file[static_cast<size_t>(i)];
  if (header_size > file.size() - 8) {
    throw bad("the header size " + std::to_string(header_size) + " runs past the end of the file (" +
              std::to_string(file.size() - 8) + " bytes after the 8-byte header size)");
  }
  if (header_size > kSafetensorsMaxHeaderBytes) {
    throw bad("the header size " + std::to_string(header_size) + " is over the limit of " +
              std::to_string(kSafetensorsMaxHeaderBytes) + " bytes");
  }
  const std::string_view header(reinterpret_cast<const char*>(file.data()) + 8, static_cast<size_t>(header_size));
  const detail::Json root = detail::JsonParser(header, where + ": header").parse_document();
  if (root.kind != detail::Json::Kind::kObject) {
    throw bad(std::string("the header is ") + detail::json_kind_name(root.kind) + ", not an object");
  }

  SafetensorsFile out;
  out.path = path;
  const uint64_t data_size = file.size() - 8 - header_size;
  for (size_t i = 0; i < root.keys.size(); ++i) {
    const std::string& name = root.keys[i];
    const detail::Json& value = root.items[i];
    if (name == "__metadata__") {
      if (value.kind != detail::Json::Kind::kObject) throw bad("\"__metadata__\" is not an object");
      for (size_t j = 0; j < value.keys.size(); ++j) {
        const std::string& key = value.keys[j];
        const detail::Json& text = value.items[j];
        if (text.kind != detail::Json::Kind::kString) {
          throw bad("\"__metadata__\" value of \"" + key + "\" is " + detail::json_kind_name(text.kind) +
                    ", not a string");
        }
        out.metadata[key] = text.string;
      }
      continue;
    }
    out.entries.push_back(detail::parse_safetensors_entry(where, name, value, data_size));
  }

  // Packed in offset order from 0 to the end of the file: no overlaps, no gaps.
  std::vector<const SafetensorsEntry*> order;
  for (const auto& e : out.entries) order.push_back(&e);
  std::stable_sort(order.begin(), order.end(), [](const SafetensorsEntry* a, const SafetensorsEntry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t expected = 0;
  const SafetensorsEntry* previous = nullptr;
  for (const SafetensorsEntry* e : order) {
    if (e->begin < expected) {
      throw bad("tensors '" + previous->name + "' and '" + e->name + "' overlap (bytes " + std::to_string(e->begin) +
                " to " + std::to_string(expected) + ")");
    }
    if (e->begin > expected) {
      throw bad("a gap of " + std::to_string(e->begin - expected) + " bytes before tensor '" + e->name + "'");
    }
    expected = e->end;
    previous = e;
  }
  if (expected != data_size) {
    throw bad("the tensors cover " + std::to_string(expected) + " bytes of data but the file has " +
              std::to_string(data_size) + " after the header");
  }
  // The data section moves down in place: a checkpoint is never held twice.
  file.erase(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(8 + header_size));
  out.data = std::move(file);
  return out;
}

}  // namespace catalyst
