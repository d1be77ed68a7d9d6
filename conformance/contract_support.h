// contract_support.h — what the contract cases (contract_*.cpp) share: messages about
// statuses, values and bytes, and Resources, the holder of every plugin object and host array
// a case uses. See contract_cases.cpp for what the contract checks and why every case calls
// the plugin's table directly.
#pragma once

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "case.h"
#include "catalyst.h"
#include "catalyst_plugin.h"
#include "host_api.h"
#include "plugin_loader.h"
#include "runtime.h"

namespace catalyst::conformance::contract {

// ---- Text ------------------------------------------------------------------------------

[[gnu::format(printf, 1, 2)]] inline std::string format(const char* text, ...) {
  va_list args;
  va_start(args, text);
  va_list copy;
  va_copy(copy, args);
  const int length = std::vsnprintf(nullptr, 0, text, copy);
  va_end(copy);
  std::string out(length > 0 ? static_cast<size_t>(length) : 0u, '\0');
  if (length > 0) std::vsnprintf(out.data(), out.size() + 1, text, args);
  va_end(args);
  return out;
}

// "CODE (message)" for a status; "success" for NULL. Does not free it.
inline std::string describe(const ctl_status* status) {
  if (!status) return "success";
  return format("%s (\"%s\")", ctl_status_code_name(ctl_status_get_code(status)), ctl_status_get_message(status));
}

// Throws CaseFailure "<what> failed: CODE (message)" when `status` is an error; frees it.
inline void require_ok(ctl_status* status, const std::string& what) {
  if (!status) return;
  std::string message = what + " failed: " + describe(status);
  ctl_status_free(status);
  throw CaseFailure(message);
}

// Owns one status.
class Status {
 public:
  explicit Status(ctl_status* status = nullptr) : status_(status) {}
  ~Status() { ctl_status_free(status_); }
  Status(const Status&) = delete;
  Status& operator=(const Status&) = delete;
  Status& operator=(ctl_status* status) {
    ctl_status_free(status_);
    status_ = status;
    return *this;
  }
  bool ok() const { return status_ == nullptr; }
  ctl_status_code code() const { return ctl_status_get_code(status_); }
  std::string message() const { return ctl_status_get_message(status_); }
  std::string text() const { return describe(status_); }

 private:
  ctl_status* status_;
};

// The integer stored in an enum field written by a plugin. Loading a C enum that holds a
// value outside its enumerators is undefined in C++; read the bits instead.
template <class E>
int64_t raw_enum(const E& field) {
  std::underlying_type_t<E> value;
  std::memcpy(&value, &field, sizeof value);
  return static_cast<int64_t>(value);
}

// Stores any integer in an enum field (e.g. an op id that ctl_op_id does not have).
template <class E>
void set_raw_enum(E* field, int64_t value) {
  const auto raw = static_cast<std::underlying_type_t<E>>(value);
  std::memcpy(field, &raw, sizeof raw);
}

// A C string for a message, escaped and cut at `limit` bytes.
inline std::string quote(const char* text, size_t limit = 80) {
  if (!text) return "NULL";
  std::string out = "\"";
  size_t i = 0;
  for (; text[i] && i < limit; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      out += format("\\x%02x", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  out += text[i] ? "\"..." : "\"";
  return out;
}

// Empty when `text` is a NUL-terminated string of printable UTF-8 (no control characters,
// no malformed or overlong sequences, no surrogates); otherwise what is wrong with it.
inline std::string check_printable_utf8(const char* text) {
  constexpr size_t kLimit = 4096;
  const size_t length = strnlen(text, kLimit);
  if (length == kLimit) return format("has no terminating NUL within %zu bytes", kLimit);
  const auto* s = reinterpret_cast<const unsigned char*>(text);
  size_t i = 0;
  while (i < length) {
    const unsigned char c = s[i];
    if (c < 0x20 || c == 0x7f) return format("has control character 0x%02x at byte %zu", c, i);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t extra = 0;
    unsigned char low = 0x80, high = 0xbf;  // allowed range of the first continuation byte
    if (c >= 0xc2 && c <= 0xdf) {
      extra = 1;
      if (c == 0xc2) low = 0xa0;  // U+0080..U+009F are C1 control characters
    } else if (c >= 0xe0 && c <= 0xef) {
      extra = 2;
      if (c == 0xe0) low = 0xa0;   // overlong
      if (c == 0xed) high = 0x9f;  // surrogates
    } else if (c >= 0xf0 && c <= 0xf4) {
      extra = 3;
      if (c == 0xf0) low = 0x90;   // overlong
      if (c == 0xf4) high = 0x8f;  // past U+10FFFF
    } else {
      return format("is not valid UTF-8: byte 0x%02x at byte %zu cannot start a character", c, i);
    }
    if (i + extra >= length) {
      return format("is not valid UTF-8: the sequence at byte %zu is cut short", i);
    }
    for (size_t k = 1; k <= extra; ++k) {
      const unsigned char d = s[i + k];
      const unsigned char lo = k == 1 ? low : 0x80, hi = k == 1 ? high : 0xbf;
      if (d < lo || d > hi) {
        return format("is not valid printable UTF-8: byte 0x%02x at byte %zu after 0x%02x at byte %zu", d, i + k, c, i);
      }
    }
    i += extra + 1;
  }
  return "";
}

inline std::string shape_text(const int64_t* shape, uint32_t rank) {
  std::string out = "[";
  for (uint32_t i = 0; i < rank; ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

template <class T>
std::string value_text(T value) {
  if constexpr (std::is_floating_point_v<T>) {
    return format("%.9g", static_cast<double>(value));
  } else {
    return format("%lld", static_cast<long long>(value));
  }
}

// Exact (bitwise) comparison of n elements; the failure names the first wrong element
// and how many are wrong. `hint`, when given, may explain a wrong value in words.
template <class T>
void expect_values(const T* got, const T* expected, size_t n, const std::string& what,
                   const std::function<std::string(size_t, T)>& hint = nullptr) {
  size_t wrong = 0, first = 0;
  for (size_t i = 0; i < n; ++i) {
    if (std::memcmp(&got[i], &expected[i], sizeof(T)) != 0) {
      if (wrong++ == 0) first = i;
    }
  }
  if (wrong == 0) return;
  std::string message = format("%s: element %zu is %s, expected %s (%zu of %zu elements wrong)", what.c_str(), first,
                               value_text(got[first]).c_str(), value_text(expected[first]).c_str(), wrong, n);
  if (hint) {
    const std::string extra = hint(first, got[first]);
    if (!extra.empty()) message += "; " + extra;
  }
  throw CaseFailure(message);
}

// Exact comparison of bytes; `describe_byte` may add where a byte came from.
inline void expect_bytes(const uint8_t* got, const uint8_t* expected, size_t n, const std::string& what,
                         const std::function<std::string(size_t)>& describe_byte = nullptr) {
  size_t wrong = 0, first = 0;
  for (size_t i = 0; i < n; ++i) {
    if (got[i] != expected[i]) {
      if (wrong++ == 0) first = i;
    }
  }
  if (wrong == 0) return;
  std::string message = format("%s: byte %zu is 0x%02x, expected 0x%02x (%zu of %zu bytes wrong)", what.c_str(), first,
                               got[first], expected[first], wrong, n);
  if (describe_byte) {
    const std::string extra = describe_byte(first);
    if (!extra.empty()) message += "; " + extra;
  }
  throw CaseFailure(message);
}

// ---- Objects -----------------------------------------------------------------------------

// Every plugin object and every host array a case uses. The destructor synchronizes each
// stream (so no transfer is still reading or writing host memory), destroys events and
// streams, frees buffers, and only then drops the host arrays.
class Resources {
 public:
  explicit Resources(CaseContext& ctx) : api_(ctx.plugin->api), device_(ctx.device->handle) {}
  ~Resources() { release(); }
  Resources(const Resources&) = delete;
  Resources& operator=(const Resources&) = delete;

  const ctl_plugin_api& api() const { return api_; }
  ctl_plugin_device* device() const { return device_; }

  // Synchronizes and destroys everything now (idempotent); host arrays stay.
  void release() {
    for (ctl_plugin_stream* stream : streams_) ctl_status_free(api_.stream_synchronize(stream));
    for (ctl_plugin_event* event : events_) api_.event_destroy(event);
    events_.clear();
    for (ctl_plugin_stream* stream : streams_) api_.stream_destroy(stream);
    streams_.clear();
    for (ctl_plugin_buffer* buffer : buffers_) api_.buffer_free(device_, buffer);
    buffers_.clear();
  }

  ctl_plugin_buffer* buffer(uint64_t size, const std::string& what) {
    ctl_plugin_buffer* buffer = nullptr;
    require_ok(api_.buffer_allocate(device_, size, &buffer),
               format("buffer_allocate(%llu bytes) for %s", static_cast<unsigned long long>(size), what.c_str()));
    if (!buffer) {
      throw CaseFailure(format("buffer_allocate(%llu bytes) for %s returned success but left *out_buffer NULL",
                               static_cast<unsigned long long>(size), what.c_str()));
    }
    buffers_.push_back(buffer);
    return buffer;
  }

  // Frees one buffer now (after the caller has synchronized every stream that uses it).
  void free_buffer(ctl_plugin_buffer* buffer) {
    auto it = std::find(buffers_.begin(), buffers_.end(), buffer);
    if (it == buffers_.end()) return;
    buffers_.erase(it);
    api_.buffer_free(device_, buffer);
  }

  ctl_plugin_stream* stream(const std::string& what) {
    ctl_plugin_stream* stream = nullptr;
    require_ok(api_.stream_create(device_, &stream), "stream_create for " + what);
    if (!stream) throw CaseFailure("stream_create for " + what + " returned success but left *out_stream NULL");
    streams_.push_back(stream);
    return stream;
  }

  ctl_plugin_event* event(const std::string& what) {
    ctl_plugin_event* event = nullptr;
    require_ok(api_.event_create(device_, &event), "event_create for " + what);
    if (!event) throw CaseFailure("event_create for " + what + " returned success but left *out_event NULL");
    events_.push_back(event);
    return event;
  }

  // A host array that lives until the holder is gone (after every stream has finished).
  template <class T>
  std::vector<T>& host(size_t n, T value = T{}) {
    auto block = std::make_unique<HostBlock<T>>();
    block->data.assign(n, value);
    std::vector<T>& data = block->data;
    host_.push_back(std::move(block));
    return data;
  }

  void write(ctl_plugin_stream* stream, ctl_plugin_buffer* buffer, uint64_t offset, const void* source, uint64_t size,
             const std::string& what) {
    require_ok(api_.buffer_write(stream, buffer, offset, source, size),
               format("buffer_write(offset %llu, %llu bytes) of %s", static_cast<unsigned long long>(offset),
                      static_cast<unsigned long long>(size), what.c_str()));
  }
  void read(ctl_plugin_stream* stream, ctl_plugin_buffer* buffer, uint64_t offset, void* destination, uint64_t size,
            const std::string& what) {
    require_ok(api_.buffer_read(stream, buffer, offset, destination, size),
               format("buffer_read(offset %llu, %llu bytes) of %s", static_cast<unsigned long long>(offset),
                      static_cast<unsigned long long>(size), what.c_str()));
  }
  void synchronize(ctl_plugin_stream* stream, const std::string& what) {
    require_ok(api_.stream_synchronize(stream), "stream_synchronize " + what);
  }

 private:
  struct HostBlockBase {
    virtual ~HostBlockBase() = default;
  };
  template <class T>
  struct HostBlock : HostBlockBase {
    std::vector<T> data;
  };

  const ctl_plugin_api& api_;
  ctl_plugin_device* device_;
  std::vector<ctl_plugin_buffer*> buffers_;
  std::vector<ctl_plugin_stream*> streams_;
  std::vector<ctl_plugin_event*> events_;
  std::vector<std::unique_ptr<HostBlockBase>> host_;
};

// A contiguous view of `buffer` in the normalised form.
inline ctl_tensor_view make_view(ctl_plugin_buffer* buffer, ctl_dtype dtype, std::initializer_list<int64_t> shape,
                                 uint64_t byte_offset = 0) {
  ctl_tensor_view view{};
  view.struct_size = CTL_TENSOR_VIEW_STRUCT_SIZE;
  view.buffer = buffer;
  view.byte_offset = byte_offset;
  view.dtype = dtype;
  view.rank = static_cast<uint32_t>(shape.size());
  std::copy(shape.begin(), shape.end(), view.shape);
  int64_t stride = 1;
  for (uint32_t i = view.rank; i-- > 0;) {
    view.strides[i] = stride;
    stride *= view.shape[i];
  }
  return view;
}

inline ctl_op_call make_call(ctl_op_id op, const ctl_tensor_view* const* inputs, uint32_t input_count,
                             const ctl_tensor_view* const* outputs, uint32_t output_count,
                             const void* attrs = nullptr) {
  ctl_op_call call{};
  call.struct_size = CTL_OP_CALL_STRUCT_SIZE;
  call.next = nullptr;
  call.op = op;
  call.input_count = input_count;
  call.inputs = inputs;
  call.output_count = output_count;
  call.outputs = outputs;
  call.attrs = attrs;
  return call;
}

inline std::string view_text(const ctl_tensor_view& view) {
  return format("%s %s", ctl_dtype_name(view.dtype), shape_text(view.shape, view.rank).c_str());
}

// Enqueues a binary elementwise op out = op(a, b) (or unary when b is NULL); throws on error.
inline void run_op(const Resources& res, ctl_plugin_stream* stream, ctl_op_id op, const ctl_tensor_view& a,
                   const ctl_tensor_view* b, const ctl_tensor_view& out, const std::string& what) {
  const ctl_tensor_view* inputs[2] = {&a, b};
  const ctl_tensor_view* outputs[1] = {&out};
  const ctl_op_call call = make_call(op, inputs, b ? 2u : 1u, outputs, 1);
  ctl_status* status = res.api().op_execute(stream, &call);
  if (status && ctl_status_get_code(status) == CTL_STATUS_UNSUPPORTED) {
    // The check needs an op the plugin does not claim: it cannot be judged on it.
    const std::string text = describe(status);
    ctl_status_free(status);
    throw CaseUnsupported(format("this check runs %s %s, which the plugin does not run (%s)", ctl_op_name(op),
                                 ctl_dtype_name(out.dtype), text.c_str()));
  }
  require_ok(status, format("op_execute(%s %s) for %s", ctl_op_name(op), view_text(out).c_str(), what.c_str()));
}

inline int64_t live_allocations(const CaseContext& ctx) {
  return ctx.plugin->host->live_allocations();
}

// Fails when the plugin's host allocations are not back to `before`.
inline void expect_no_leak(const CaseContext& ctx, int64_t before, const std::string& after_what) {
  const int64_t after = live_allocations(ctx);
  if (after != before) {
    throw CaseFailure(format("%lld host allocation(s) %s after %s (live allocations before: %lld, after: %lld)",
                             static_cast<long long>(after > before ? after - before : before - after),
                             after > before ? "leaked" : "freed too many", after_what.c_str(),
                             static_cast<long long>(before), static_cast<long long>(after)));
  }
}

inline ctl_plugin_device_properties full_properties(const CaseContext& ctx) {
  ctl_plugin_device_properties properties{};
  properties.struct_size = CTL_PLUGIN_DEVICE_PROPERTIES_STRUCT_SIZE;
  require_ok(ctx.plugin->api.device_properties(ctx.device->handle, &properties),
             "device_properties with a full struct");
  return properties;
}

// A byte of pattern `seed` at position i: different for different seeds at most positions.
inline uint8_t pattern_byte(uint32_t seed, uint64_t i) {
  uint64_t x = (static_cast<uint64_t>(seed) << 32) ^ i;
  x *= 0x9e3779b97f4a7c15ull;
  x ^= x >> 29;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 32;
  return static_cast<uint8_t>(x);
}

inline uint64_t random_in(CaseContext& ctx, uint64_t low, uint64_t high) {
  return std::uniform_int_distribution<uint64_t>(low, high)(ctx.rng);
}

// Registers case contract.<area>.<name> (level core) running `run`.
inline void add_case(std::vector<Case>& out, const std::string& area, const std::string& name, const std::string& dtype,
                     const std::string& label, std::function<void(CaseContext&)> run) {
  Case c;
  c.id = "contract." + area + "." + name;
  c.group = "contract." + area;
  c.op = "contract";
  c.dtype = dtype;
  c.level = Level::kCore;
  c.label = label;
  c.run = std::move(run);
  out.push_back(std::move(c));
}

// Each area's cases, in contract_<area>.cpp.
void add_device_cases(std::vector<Case>& out);
void add_buffer_cases(std::vector<Case>& out);
void add_copy_cases(std::vector<Case>& out);
void add_stream_cases(std::vector<Case>& out);  // streams and events
void add_thread_cases(std::vector<Case>& out);
void add_bad_call_cases(std::vector<Case>& out);

}  // namespace catalyst::conformance::contract
