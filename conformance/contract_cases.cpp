// contract_cases.cpp — the contract part of the conformance suite: what a device plugin
// promises beyond computing the right numbers.
//
//  - device:    device_properties reports sane, well-formed values, and writes nothing past
//               the struct_size an older core passes;
//  - buffers:   zero-size and absurd sizes are handled, many buffers keep their own bytes,
//               and everything allocated through the host table is given back;
//  - copies:    host<->device transfers round-trip exactly at any size and offset and touch
//               nothing outside their range; buffer_copy, buffer_fill and
//               buffer_host_pointer work where the plugin provides them;
//  - streams:   work on one stream runs in submission order with no synchronize in between
//               (a write never overtakes an op that reads the old data), and two streams
//               do not disturb each other;
//  - events:    an event recorded on one stream orders work on another;
//  - threads:   several threads may drive one device at once, each with its own stream;
//  - bad_calls: a malformed op call gets an error status, no crash, no write to its
//               output, and leaves the stream usable.
//
// Every case calls the plugin's function table (ctx.plugin->api) directly, on streams it
// creates itself. Going through ctl_op_run would check the core instead: the core
// validates and normalises every call before a plugin sees it, so a plugin that accepts a
// malformed call, or a stream that does not order its work, would never show. The calls
// built here are in the normalised form described above ctl_op_call in catalyst_plugin.h.
//
// Every object a case creates is owned by a Resources holder that synchronizes its streams
// and frees everything on the way out, failure or not; host memory that a transfer reads
// or writes lives in the same holder, so it outlives the stream that uses it.
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

namespace catalyst::conformance {
namespace {

// ---- Text ------------------------------------------------------------------------------

[[gnu::format(printf, 1, 2)]] std::string format(const char* text, ...) {
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
std::string describe(const ctl_status* status) {
  if (!status) return "success";
  return format("%s (\"%s\")", ctl_status_code_name(ctl_status_get_code(status)), ctl_status_get_message(status));
}

// Throws CaseFailure "<what> failed: CODE (message)" when `status` is an error; frees it.
void require_ok(ctl_status* status, const std::string& what) {
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
std::string quote(const char* text, size_t limit = 80) {
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
std::string check_printable_utf8(const char* text) {
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

std::string shape_text(const int64_t* shape, uint32_t rank) {
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
void expect_bytes(const uint8_t* got, const uint8_t* expected, size_t n, const std::string& what,
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
ctl_tensor_view make_view(ctl_plugin_buffer* buffer, ctl_dtype dtype, std::initializer_list<int64_t> shape,
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

ctl_op_call make_call(ctl_op_id op, const ctl_tensor_view* const* inputs, uint32_t input_count,
                      const ctl_tensor_view* const* outputs, uint32_t output_count, const void* attrs = nullptr) {
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

std::string view_text(const ctl_tensor_view& view) {
  return format("%s %s", ctl_dtype_name(view.dtype), shape_text(view.shape, view.rank).c_str());
}

// Enqueues a binary elementwise op out = op(a, b) (or unary when b is NULL); throws on error.
void run_op(const Resources& res, ctl_plugin_stream* stream, ctl_op_id op, const ctl_tensor_view& a,
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

int64_t live_allocations(const CaseContext& ctx) {
  return ctx.plugin->host->live_allocations();
}

// Fails when the plugin's host allocations are not back to `before`.
void expect_no_leak(const CaseContext& ctx, int64_t before, const std::string& after_what) {
  const int64_t after = live_allocations(ctx);
  if (after != before) {
    throw CaseFailure(format("%lld host allocation(s) %s after %s (live allocations before: %lld, after: %lld)",
                             static_cast<long long>(after > before ? after - before : before - after),
                             after > before ? "leaked" : "freed too many", after_what.c_str(),
                             static_cast<long long>(before), static_cast<long long>(after)));
  }
}

ctl_plugin_device_properties full_properties(const CaseContext& ctx) {
  ctl_plugin_device_properties properties{};
  properties.struct_size = CTL_PLUGIN_DEVICE_PROPERTIES_STRUCT_SIZE;
  require_ok(ctx.plugin->api.device_properties(ctx.device->handle, &properties),
             "device_properties with a full struct");
  return properties;
}

// A byte of pattern `seed` at position i: different for different seeds at most positions.
uint8_t pattern_byte(uint32_t seed, uint64_t i) {
  uint64_t x = (static_cast<uint64_t>(seed) << 32) ^ i;
  x *= 0x9e3779b97f4a7c15ull;
  x ^= x >> 29;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 32;
  return static_cast<uint8_t>(x);
}

uint64_t random_in(CaseContext& ctx, uint64_t low, uint64_t high) {
  return std::uniform_int_distribution<uint64_t>(low, high)(ctx.rng);
}

// ---- device ------------------------------------------------------------------------------

void device_properties_case(CaseContext& ctx) {
  const ctl_plugin_device_properties p = full_properties(ctx);
  if (p.struct_size != CTL_PLUGIN_DEVICE_PROPERTIES_STRUCT_SIZE) {
    throw CaseFailure(format("device_properties changed struct_size from %zu to %zu; it is set by the caller",
                             static_cast<size_t>(CTL_PLUGIN_DEVICE_PROPERTIES_STRUCT_SIZE), p.struct_size));
  }
  if (!p.name) throw CaseFailure("device_properties left name NULL; a device needs a name");
  if (!*p.name) throw CaseFailure("device_properties reported an empty name; a device needs a name");
  const struct {
    const char* field;
    const char* value;
  } strings[] = {{"name", p.name}, {"vendor", p.vendor}, {"driver_version", p.driver_version}};
  for (const auto& s : strings) {
    if (!s.value) {
      throw CaseFailure(
          format("device_properties left %s NULL; it must point to a string (\"\" when unknown)", s.field));
    }
    const std::string problem = check_printable_utf8(s.value);
    if (!problem.empty()) {
      throw CaseFailure(format("device_properties: %s %s %s", s.field, quote(s.value).c_str(), problem.c_str()));
    }
  }
  const int64_t kind = raw_enum(p.kind);
  if (kind != CTL_DEVICE_KIND_CPU && kind != CTL_DEVICE_KIND_GPU && kind != CTL_DEVICE_KIND_ACCELERATOR) {
    throw CaseFailure(format("device_properties: kind is %lld, not a ctl_device_kind (CPU 0, GPU 1, ACCELERATOR 2)",
                             static_cast<long long>(kind)));
  }
  if (p.memory_total != 0 && p.memory_free != 0 && p.memory_free > p.memory_total) {
    throw CaseFailure(format("device_properties: memory_free %llu is larger than memory_total %llu",
                             static_cast<unsigned long long>(p.memory_free),
                             static_cast<unsigned long long>(p.memory_total)));
  }
  std::string missing;
  for (ctl_dtype dtype : {CTL_DTYPE_F32, CTL_DTYPE_I32, CTL_DTYPE_I64, CTL_DTYPE_BOOL}) {
    if (!(p.dtype_mask & CTL_DTYPE_BIT(dtype))) {
      missing += (missing.empty() ? "" : ", ") + std::string(ctl_dtype_name(dtype));
    }
  }
  if (!missing.empty()) {
    throw CaseFailure(
        format("device_properties: dtype_mask 0x%x lacks the required dtype(s) %s (f32, i32, i64 and "
               "bool are required)",
               p.dtype_mask, missing.c_str()));
  }
  const uint32_t unknown_bits = p.dtype_mask & ~((1u << CTL_DTYPE_COUNT_) - 1u);
  if (unknown_bits) {
    throw CaseFailure(
        format("device_properties: dtype_mask 0x%x has bits 0x%x at or past CTL_DTYPE_COUNT_ (%d), "
               "which name no dtype",
               p.dtype_mask, unknown_bits, static_cast<int>(CTL_DTYPE_COUNT_)));
  }
  if (p.pci_bus_id) {
    // "dddd:bb:dd.f", lower-case hex digits.
    const char* id = p.pci_bus_id;
    const char* shape = "xxxx:xx:xx.x";
    bool good = strnlen(id, 16) == 12;
    for (size_t i = 0; good && i < 12; ++i) {
      const char c = id[i];
      good = shape[i] == 'x' ? ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) : c == shape[i];
    }
    if (!good) {
      throw CaseFailure(
          format("device_properties: pci_bus_id %s is not \"dddd:bb:dd.f\" in lower-case hex (or NULL "
                 "when the device has none)",
                 quote(id).c_str()));
    }
  }
  if (p.numa_node < -1) {
    throw CaseFailure(format("device_properties: numa_node is %d; it must be a node number or -1 (unknown)",
                             static_cast<int>(p.numa_node)));
  }
  static const char* const kKinds[] = {"CPU", "GPU", "accelerator"};
  ctx.note = format("%s by %s, %s, dtype_mask 0x%x%s", quote(p.name).c_str(), quote(p.vendor).c_str(), kKinds[kind],
                    p.dtype_mask, p.host_visible ? ", host-visible" : "");
}

// Which field of ctl_plugin_device_properties holds byte `offset`.
const char* properties_field_at(size_t offset) {
  struct Field {
    size_t offset;
    const char* name;
  };
  static const Field kFields[] = {
      {offsetof(ctl_plugin_device_properties, struct_size), "struct_size"},
      {offsetof(ctl_plugin_device_properties, next), "next"},
      {offsetof(ctl_plugin_device_properties, name), "name"},
      {offsetof(ctl_plugin_device_properties, vendor), "vendor"},
      {offsetof(ctl_plugin_device_properties, driver_version), "driver_version"},
      {offsetof(ctl_plugin_device_properties, kind), "kind"},
      {offsetof(ctl_plugin_device_properties, memory_total), "memory_total"},
      {offsetof(ctl_plugin_device_properties, memory_free), "memory_free"},
      {offsetof(ctl_plugin_device_properties, compute_units), "compute_units"},
      {offsetof(ctl_plugin_device_properties, pci_bus_id), "pci_bus_id"},
      {offsetof(ctl_plugin_device_properties, numa_node), "numa_node"},
      {offsetof(ctl_plugin_device_properties, uuid), "uuid"},
      {offsetof(ctl_plugin_device_properties, has_uuid), "has_uuid"},
      {offsetof(ctl_plugin_device_properties, dtype_mask), "dtype_mask"},
      {offsetof(ctl_plugin_device_properties, host_visible), "host_visible"},
  };
  if (offset >= CTL_PLUGIN_DEVICE_PROPERTIES_STRUCT_SIZE) return "(past the end of the struct)";
  const char* name = "struct_size";
  for (const Field& field : kFields) {
    if (field.offset <= offset) name = field.name;
  }
  return name;
}

void device_older_struct_case(CaseContext& ctx) {
  constexpr unsigned char kFill = 0xCD;
  constexpr size_t kSlack = 64;
  const size_t sizes[] = {offsetof(ctl_plugin_device_properties, kind),
                          offsetof(ctl_plugin_device_properties, pci_bus_id),
                          offsetof(ctl_plugin_device_properties, host_visible)};
  for (const size_t size : sizes) {
    alignas(ctl_plugin_device_properties) unsigned char raw[sizeof(ctl_plugin_device_properties) + kSlack];
    std::memset(raw, kFill, sizeof raw);
    const void* const no_next = nullptr;
    std::memcpy(raw + offsetof(ctl_plugin_device_properties, struct_size), &size, sizeof size);
    std::memcpy(raw + offsetof(ctl_plugin_device_properties, next), &no_next, sizeof no_next);
    auto* properties = reinterpret_cast<ctl_plugin_device_properties*>(raw);
    require_ok(ctx.plugin->api.device_properties(ctx.device->handle, properties),
               format("device_properties with struct_size %zu (an older core's struct, ending before %s)", size,
                      properties_field_at(size)));
    for (size_t i = size; i < sizeof raw; ++i) {
      if (raw[i] != kFill) {
        size_t changed = 0;
        for (size_t k = size; k < sizeof raw; ++k) changed += raw[k] != kFill;
        throw CaseFailure(
            format("device_properties with struct_size %zu wrote past it: byte %zu (field %s) is 0x%02x, "
                   "was 0x%02x (%zu bytes past struct_size changed); a plugin must write only fields "
                   "that fit in struct_size",
                   size, i, properties_field_at(i), raw[i], kFill, changed));
      }
    }
    size_t size_after;
    const void* next_after;
    std::memcpy(&size_after, raw + offsetof(ctl_plugin_device_properties, struct_size), sizeof size_after);
    std::memcpy(&next_after, raw + offsetof(ctl_plugin_device_properties, next), sizeof next_after);
    if (size_after != size) {
      throw CaseFailure(
          format("device_properties changed struct_size from %zu to %zu; it is set by the caller", size, size_after));
    }
    if (next_after != nullptr) {
      throw CaseFailure(
          format("device_properties with struct_size %zu changed next from NULL to %p; next is the "
                 "caller's extension chain",
                 size, next_after));
    }
    const char* name;
    std::memcpy(&name, raw + offsetof(ctl_plugin_device_properties, name), sizeof name);
    uintptr_t untouched;
    std::memset(&untouched, kFill, sizeof untouched);
    if (reinterpret_cast<uintptr_t>(name) == untouched) {
      throw CaseFailure(format("device_properties with struct_size %zu did not write name, which fits in it", size));
    }
    if (!name || !*name) {
      throw CaseFailure(
          format("device_properties with struct_size %zu reported a %s name", size, name ? "empty" : "NULL"));
    }
  }
}

// ---- buffers -----------------------------------------------------------------------------

void buffers_zero_size_case(CaseContext& ctx) {
  const int64_t before = live_allocations(ctx);
  {
    Resources res(ctx);
    ctl_plugin_stream* stream = res.stream("a zero-size buffer");
    ctl_plugin_buffer* buffer = res.buffer(0, "a zero-size buffer");
    uint8_t byte = 0x11;
    // Zero-byte transfers at offset 0 of an empty buffer are in range.
    res.write(stream, buffer, 0, &byte, 0, "a zero-size buffer");
    res.read(stream, buffer, 0, &byte, 0, "a zero-size buffer");
    res.synchronize(stream, "after zero-byte transfers");
    if (byte != 0x11) throw CaseFailure(format("a zero-byte buffer_read wrote 0x%02x to its destination", byte));
    res.release();
  }
  expect_no_leak(ctx, before, "allocating and freeing a zero-size buffer");
}

void buffers_oversize_case(CaseContext& ctx) {
  const int64_t before = live_allocations(ctx);
  const ctl_plugin_api& api = ctx.plugin->api;
  const struct {
    uint64_t size;
    const char* text;
  } sizes[] = {{1ull << 62, "2^62"}, {(1ull << 63) + 1, "2^63 + 1"}};
  std::string notes;
  for (const auto& s : sizes) {
    ctl_plugin_buffer* buffer = nullptr;
    Status status(api.buffer_allocate(ctx.device->handle, s.size, &buffer));
    if (status.ok()) {
      if (buffer) api.buffer_free(ctx.device->handle, buffer);
      throw CaseFailure(
          format("buffer_allocate(%s = %llu bytes) returned success; no device has that much memory, it "
                 "must return OUT_OF_MEMORY, INVALID_ARGUMENT or OUT_OF_RANGE",
                 s.text, static_cast<unsigned long long>(s.size)));
    }
    const ctl_status_code code = status.code();
    if (code != CTL_STATUS_OUT_OF_MEMORY && code != CTL_STATUS_INVALID_ARGUMENT && code != CTL_STATUS_OUT_OF_RANGE) {
      throw CaseFailure(
          format("buffer_allocate(%s bytes) returned %s; expected OUT_OF_MEMORY, INVALID_ARGUMENT or "
                 "OUT_OF_RANGE",
                 s.text, status.text().c_str()));
    }
    notes += format("%s%s: %s", notes.empty() ? "" : "; ", s.text, ctl_status_code_name(code));
  }
  expect_no_leak(ctx, before, "two refused allocations");
  ctx.note = notes;
}

void buffers_many_case(CaseContext& ctx) {
  constexpr size_t kCount = 200;
  const int64_t before = live_allocations(ctx);
  {
    Resources res(ctx);
    ctl_plugin_stream* stream = res.stream("200 buffers");
    std::vector<uint64_t> sizes = {1, 2, 3, 63, 64, 65, 4096, 100000};
    while (sizes.size() < kCount) sizes.push_back(random_in(ctx, 1, 100000));
    std::vector<ctl_plugin_buffer*> buffers;
    std::vector<std::vector<uint8_t>*> sources, results;
    for (size_t i = 0; i < kCount; ++i) {
      buffers.push_back(res.buffer(sizes[i], format("buffer %zu of %zu", i, kCount)));
      std::vector<uint8_t>& source = res.host<uint8_t>(sizes[i]);
      for (uint64_t j = 0; j < sizes[i]; ++j) source[j] = pattern_byte(static_cast<uint32_t>(i + 1), j);
      sources.push_back(&source);
      results.push_back(&res.host<uint8_t>(sizes[i], 0));
    }
    for (size_t i = 0; i < kCount; ++i) {
      res.write(stream, buffers[i], 0, sources[i]->data(), sizes[i], format("buffer %zu", i));
    }
    for (size_t i = 0; i < kCount; ++i) {
      res.read(stream, buffers[i], 0, results[i]->data(), sizes[i], format("buffer %zu", i));
    }
    res.synchronize(stream, "after writing and reading 200 buffers");
    for (size_t i = 0; i < kCount; ++i) {
      expect_bytes(
          results[i]->data(), sources[i]->data(), sizes[i],
          format("buffer %zu of %zu (%llu bytes) read back", i, kCount, static_cast<unsigned long long>(sizes[i])),
          [&](size_t byte) {
            // A byte of another buffer's pattern means buffers share memory.
            for (size_t k = 0; k < kCount; ++k) {
              if (k != i && byte < sizes[k] && (*results[i])[byte] == (*sources[k])[byte] && byte + 1 < sizes[i] &&
                  byte + 1 < sizes[k] && (*results[i])[byte + 1] == (*sources[k])[byte + 1]) {
                return format("it holds buffer %zu's data there: buffers overlap", k);
              }
            }
            return std::string();
          });
    }
    res.release();
  }
  expect_no_leak(ctx, before, "freeing 200 buffers and destroying their stream");
}

// ---- copies ------------------------------------------------------------------------------

// A host mirror of one device buffer that remembers which transfer last wrote each byte.
struct Mirror {
  std::vector<uint8_t> bytes;
  std::vector<int> writer;          // index into `writes`, -1 for the initial contents
  std::vector<std::string> writes;  // what each transfer was, for messages

  explicit Mirror(size_t size) : bytes(size), writer(size, -1) {}
  void record(uint64_t offset, const uint8_t* data, uint64_t size, std::string what) {
    const int index = static_cast<int>(writes.size());
    writes.push_back(std::move(what));
    for (uint64_t i = 0; i < size; ++i) {
      bytes[offset + i] = data[i];
      writer[offset + i] = index;
    }
  }
  std::string origin(size_t byte) const {
    return writer[byte] < 0 ? std::string("it was last written by the initial write of the whole buffer")
                            : "it was last written by " + writes[writer[byte]];
  }
};

// Reads [offset, offset + size) into host memory with guard bytes on both sides, so a read
// that writes past its destination shows.
struct GuardedRead {
  static constexpr size_t kGuard = 32;
  static constexpr uint8_t kGuardByte = 0x5A;
  uint64_t offset, size;
  std::vector<uint8_t>* host;
  uint8_t* data() { return host->data() + kGuard; }
};

GuardedRead guarded_read(Resources& res, ctl_plugin_stream* stream, ctl_plugin_buffer* buffer, uint64_t offset,
                         uint64_t size, const std::string& what) {
  GuardedRead read{offset, size, &res.host<uint8_t>(size + 2 * GuardedRead::kGuard, GuardedRead::kGuardByte)};
  res.read(stream, buffer, offset, read.data(), size, what);
  return read;
}

void check_guarded_read(GuardedRead& read, const Mirror& mirror, const std::string& what) {
  const std::vector<uint8_t>& host = *read.host;
  for (size_t i = 0; i < host.size(); ++i) {
    const bool guard = i < GuardedRead::kGuard || i >= GuardedRead::kGuard + read.size;
    if (guard && host[i] != GuardedRead::kGuardByte) {
      const long long at = static_cast<long long>(i) - static_cast<long long>(GuardedRead::kGuard);
      throw CaseFailure(
          format("buffer_read(offset %llu, %llu bytes) of %s wrote outside its destination: host byte "
                 "%lld relative to the destination changed from 0x%02x to 0x%02x",
                 static_cast<unsigned long long>(read.offset), static_cast<unsigned long long>(read.size), what.c_str(),
                 at, GuardedRead::kGuardByte, host[i]));
    }
  }
  expect_bytes(read.data(), mirror.bytes.data() + read.offset, read.size,
               format("buffer_read(offset %llu, %llu bytes) of %s", static_cast<unsigned long long>(read.offset),
                      static_cast<unsigned long long>(read.size), what.c_str()),
               [&](size_t byte) {
                 return format("buffer byte %llu: ", static_cast<unsigned long long>(read.offset + byte)) +
                        mirror.origin(read.offset + byte);
               });
}

void copies_write_read_case(CaseContext& ctx) {
  constexpr uint64_t kSize = 65536 + 37;
  Resources res(ctx);
  ctl_plugin_stream* stream = res.stream("write/read round trips");
  ctl_plugin_buffer* buffer = res.buffer(kSize, "write/read round trips");
  Mirror mirror(kSize);

  std::vector<uint8_t>& initial = res.host<uint8_t>(kSize);
  for (uint64_t i = 0; i < kSize; ++i) initial[i] = pattern_byte(1000, i);
  res.write(stream, buffer, 0, initial.data(), kSize, "the whole buffer");
  mirror.bytes = initial;

  // Writes of assorted sizes at unaligned offsets, some overlapping earlier ones: the
  // stream runs them in order, so the last write of a byte wins.
  std::vector<uint64_t> lengths = {0, 1, 1, 2, 3, 5, 7, 8, 15, 63, 64, 65, 255, 1000, 4095, 4097, 12345};
  while (lengths.size() < 40) lengths.push_back(random_in(ctx, 0, 20000));
  std::shuffle(lengths.begin(), lengths.end(), ctx.rng);
  for (size_t w = 0; w < lengths.size(); ++w) {
    const uint64_t length = lengths[w];
    uint64_t offset = random_in(ctx, 0, kSize - length);
    if (offset % 2 == 0 && offset + 1 <= kSize - length) offset += 1;  // mostly unaligned
    if (w == 0) offset = kSize - length;                               // one write ends at the buffer's end
    std::vector<uint8_t>& source = res.host<uint8_t>(length);
    for (uint64_t i = 0; i < length; ++i) source[i] = pattern_byte(static_cast<uint32_t>(2000 + w), i);
    const std::string what = format("write #%zu (offset %llu, %llu bytes)", w, static_cast<unsigned long long>(offset),
                                    static_cast<unsigned long long>(length));
    res.write(stream, buffer, offset, source.data(), length, what);
    mirror.record(offset, source.data(), length, what);
  }

  // Reads, enqueued right behind the writes: no synchronize until every read is queued.
  std::vector<GuardedRead> reads;
  reads.push_back(guarded_read(res, stream, buffer, 0, kSize, "the whole buffer"));
  reads.push_back(guarded_read(res, stream, buffer, 5, 0, "an empty range"));
  reads.push_back(guarded_read(res, stream, buffer, 1, 1, "one byte"));
  reads.push_back(guarded_read(res, stream, buffer, kSize - 1, 1, "the last byte"));
  for (int r = 0; r < 12; ++r) {
    const uint64_t length = random_in(ctx, 0, 9000);
    const uint64_t offset = random_in(ctx, 0, kSize - length);
    reads.push_back(guarded_read(res, stream, buffer, offset, length, "a range"));
  }
  res.synchronize(stream, "after the writes and reads");
  for (GuardedRead& read : reads) check_guarded_read(read, mirror, "the buffer");
  ctx.note = format("%zu writes, %zu reads, one synchronize", lengths.size() + 1, reads.size());
}

void copies_device_to_device_case(CaseContext& ctx) {
  const ctl_plugin_api& api = ctx.plugin->api;
  if (!api.buffer_copy)
    throw CaseUnsupported("buffer_copy is optional and not provided (the core copies through the host)");
  constexpr uint64_t kSize = 20000 + 3;
  Resources res(ctx);
  ctl_plugin_stream* stream = res.stream("device-to-device copies");
  ctl_plugin_buffer* source = res.buffer(kSize, "the copy source");
  ctl_plugin_buffer* target = res.buffer(kSize, "the copy target");
  ctl_plugin_buffer* third = res.buffer(kSize, "a second copy target");
  Mirror m_source(kSize), m_target(kSize), m_third(kSize);
  std::vector<uint8_t>& init_source = res.host<uint8_t>(kSize);
  std::vector<uint8_t>& init_target = res.host<uint8_t>(kSize);
  std::vector<uint8_t>& init_third = res.host<uint8_t>(kSize);
  for (uint64_t i = 0; i < kSize; ++i) {
    init_source[i] = pattern_byte(11, i);
    init_target[i] = pattern_byte(12, i);
    init_third[i] = pattern_byte(13, i);
  }
  res.write(stream, source, 0, init_source.data(), kSize, "the copy source");
  res.write(stream, target, 0, init_target.data(), kSize, "the copy target");
  res.write(stream, third, 0, init_third.data(), kSize, "the second copy target");
  m_source.bytes = init_source;
  m_target.bytes = init_target;
  m_third.bytes = init_third;

  struct Copy {
    ctl_plugin_buffer* from;
    Mirror* m_from;
    const char* from_name;
    uint64_t from_offset;
    ctl_plugin_buffer* to;
    Mirror* m_to;
    const char* to_name;
    uint64_t to_offset;
    uint64_t size;
  };
  const Copy copies[] = {
      {source, &m_source, "source", 0, target, &m_target, "target", 0, 4096},
      {source, &m_source, "source", 1, target, &m_target, "target", 5000, 1},
      {source, &m_source, "source", 7, target, &m_target, "target", 6001, 0},
      {source, &m_source, "source", 333, target, &m_target, "target", 7777, 9999},
      {source, &m_source, "source", kSize - 17, target, &m_target, "target", kSize - 17, 17},
      // Within one buffer, regions that do not overlap.
      {source, &m_source, "source", 100, source, &m_source, "source", 15001, 3001},
      // A chain: the second copy reads what the first wrote, so it must run after it.
      {target, &m_target, "target", 7000, third, &m_third, "third", 3, 5000},
  };
  for (size_t c = 0; c < sizeof copies / sizeof copies[0]; ++c) {
    const Copy& copy = copies[c];
    const std::string what =
        format("buffer_copy #%zu (%s offset %llu -> %s offset %llu, %llu bytes)", c, copy.from_name,
               static_cast<unsigned long long>(copy.from_offset), copy.to_name,
               static_cast<unsigned long long>(copy.to_offset), static_cast<unsigned long long>(copy.size));
    require_ok(api.buffer_copy(stream, copy.from, copy.from_offset, copy.to, copy.to_offset, copy.size), what);
    // The mirror copies from its own current state, as the stream's order does.
    std::vector<uint8_t> data(copy.m_from->bytes.begin() + static_cast<std::ptrdiff_t>(copy.from_offset),
                              copy.m_from->bytes.begin() + static_cast<std::ptrdiff_t>(copy.from_offset + copy.size));
    copy.m_to->record(copy.to_offset, data.data(), copy.size, what);
  }
  GuardedRead r_source = guarded_read(res, stream, source, 0, kSize, "the copy source");
  GuardedRead r_target = guarded_read(res, stream, target, 0, kSize, "the copy target");
  GuardedRead r_third = guarded_read(res, stream, third, 0, kSize, "the second copy target");
  res.synchronize(stream, "after the copies and reads");
  check_guarded_read(r_source, m_source, "the copy source");
  check_guarded_read(r_target, m_target, "the copy target");
  check_guarded_read(r_third, m_third, "the second copy target");
}

void copies_fill_case(CaseContext& ctx) {
  const ctl_plugin_api& api = ctx.plugin->api;
  if (!api.buffer_fill) throw CaseUnsupported("buffer_fill is optional and not provided (the core writes a host copy)");
  constexpr uint64_t kSize = 8192 + 5;
  Resources res(ctx);
  ctl_plugin_stream* stream = res.stream("buffer fills");
  ctl_plugin_buffer* buffer = res.buffer(kSize, "buffer fills");
  Mirror mirror(kSize);
  std::vector<uint8_t>& initial = res.host<uint8_t>(kSize);
  for (uint64_t i = 0; i < kSize; ++i) initial[i] = pattern_byte(21, i);
  res.write(stream, buffer, 0, initial.data(), kSize, "the buffer");
  mirror.bytes = initial;

  struct Fill {
    uint32_t pattern_size;
    uint64_t offset, size;
  };
  const Fill fills[] = {
      {1, 3, 13},   {1, 20, 1},        {2, 100, 34},       {2, 200, 0},       {4, 256, 4 * 37},
      {4, 1000, 4}, {8, 1024, 8 * 65}, {8, 4096, 8 * 500}, {1, kSize - 5, 5}, {4, 2048, 4 * 100},
  };
  // Patterns whose bytes differ, so a pattern written in the wrong byte order shows.
  const uint8_t pattern_bytes[4][8] = {{0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88},
                                       {0x9A, 0xBC, 0xDE, 0xF0, 0x12, 0x34, 0x56, 0x78},
                                       {0x01, 0x80, 0x7F, 0xFE, 0x00, 0xFF, 0x10, 0x20},
                                       {0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0xF6, 0x07, 0x18}};
  std::vector<uint8_t> bytes;
  for (size_t f = 0; f < sizeof fills / sizeof fills[0]; ++f) {
    const Fill& fill = fills[f];
    // The pattern lives in host memory owned by the holder, in case the plugin reads it late.
    std::vector<uint8_t>& pattern = res.host<uint8_t>(8);
    std::copy(pattern_bytes[f % 4], pattern_bytes[f % 4] + 8, pattern.begin());
    pattern[0] = static_cast<uint8_t>(pattern[0] + f);
    const std::string what =
        format("buffer_fill #%zu (%u-byte pattern at offset %llu, %llu bytes)", f, fill.pattern_size,
               static_cast<unsigned long long>(fill.offset), static_cast<unsigned long long>(fill.size));
    require_ok(api.buffer_fill(stream, buffer, fill.offset, fill.size, pattern.data(), fill.pattern_size), what);
    bytes.resize(fill.size);
    for (uint64_t i = 0; i < fill.size; ++i) bytes[i] = pattern[i % fill.pattern_size];
    mirror.record(fill.offset, bytes.data(), fill.size, what);
  }
  GuardedRead read = guarded_read(res, stream, buffer, 0, kSize, "the filled buffer");
  res.synchronize(stream, "after the fills and the read");
  check_guarded_read(read, mirror, "the filled buffer");
}

void copies_host_pointer_case(CaseContext& ctx) {
  const ctl_plugin_api& api = ctx.plugin->api;
  const ctl_plugin_device_properties properties = full_properties(ctx);
  if (!properties.host_visible) {
    throw CaseUnsupported(api.buffer_host_pointer
                              ? "the device does not report host_visible (buffer_host_pointer is provided but not "
                                "promised for every buffer)"
                              : "the device does not report host_visible and buffer_host_pointer is not provided");
  }
  if (!api.buffer_host_pointer) {
    throw CaseFailure(
        "the device reports host_visible but buffer_host_pointer is NULL; host_visible promises that "
        "buffer_host_pointer works for every buffer");
  }
  constexpr uint64_t kSize = 4096 + 7;
  Resources res(ctx);
  ctl_plugin_stream* stream = res.stream("host pointers");
  ctl_plugin_buffer* buffer = res.buffer(kSize, "host pointers");
  ctl_plugin_buffer* empty = res.buffer(0, "a zero-size buffer's host pointer");
  std::vector<uint8_t>& source = res.host<uint8_t>(kSize);
  for (uint64_t i = 0; i < kSize; ++i) source[i] = pattern_byte(31, i);
  res.write(stream, buffer, 0, source.data(), kSize, "the buffer");
  res.synchronize(stream, "after the write");

  void* pointer = nullptr;
  require_ok(api.buffer_host_pointer(ctx.device->handle, buffer, &pointer), "buffer_host_pointer");
  if (!pointer) throw CaseFailure("buffer_host_pointer returned success but a NULL pointer");
  if (reinterpret_cast<uintptr_t>(pointer) % 64 != 0) {
    throw CaseFailure(
        format("buffer_host_pointer returned %p, which is not 64-byte aligned (buffers are at least "
               "64-byte aligned)",
               pointer));
  }
  expect_bytes(static_cast<const uint8_t*>(pointer), source.data(), kSize,
               "the bytes at buffer_host_pointer after buffer_write and stream_synchronize");

  // Zero-copy works both ways: what the host writes there is what buffer_read returns.
  auto* bytes = static_cast<uint8_t*>(pointer);
  std::vector<uint8_t>& expected = res.host<uint8_t>(kSize);
  for (uint64_t i = 0; i < kSize; ++i) expected[i] = bytes[i] = pattern_byte(32, i);
  std::vector<uint8_t>& result = res.host<uint8_t>(kSize, 0);
  res.read(stream, buffer, 0, result.data(), kSize, "the buffer after host writes through its host pointer");
  res.synchronize(stream, "after the read");
  expect_bytes(result.data(), expected.data(), kSize, "buffer_read after the host wrote through buffer_host_pointer");

  void* empty_pointer = nullptr;
  require_ok(api.buffer_host_pointer(ctx.device->handle, empty, &empty_pointer),
             "buffer_host_pointer of a zero-size buffer (host_visible promises every buffer)");
}

// ---- streams -----------------------------------------------------------------------------

void streams_ordered_ops_case(CaseContext& ctx) {
  constexpr int64_t kN = 4096;
  constexpr uint64_t kBytes = kN * sizeof(float);
  Resources res(ctx);
  ctl_plugin_stream* stream = res.stream("ordered ops");
  ctl_plugin_buffer* a = res.buffer(kBytes, "A");
  ctl_plugin_buffer* b = res.buffer(kBytes, "B");
  ctl_plugin_buffer* c = res.buffer(kBytes, "C");
  ctl_plugin_buffer* d = res.buffer(kBytes, "D");
  std::vector<float>& a0 = res.host<float>(kN);
  std::vector<float>& a1 = res.host<float>(kN);
  for (int64_t i = 0; i < kN; ++i) {
    a0[i] = static_cast<float>(i % 61 - 30);
    a1[i] = static_cast<float>((i * 7) % 53 - 26);
  }
  std::vector<float> want_b(kN), want_c(kN), want_d(kN), stale_b(kN), stale_d(kN);
  for (int64_t i = 0; i < kN; ++i) {
    want_b[i] = a0[i] + a0[i];
    want_c[i] = want_b[i] * want_b[i];
    want_d[i] = a1[i] + want_c[i];
    stale_b[i] = a1[i] + a1[i];      // B if the second write of A overtook the first ADD
    stale_d[i] = a0[i] + want_c[i];  // D if the last ADD overtook the second write of A
  }
  const ctl_tensor_view va = make_view(a, CTL_DTYPE_F32, {kN});
  const ctl_tensor_view vb = make_view(b, CTL_DTYPE_F32, {kN});
  const ctl_tensor_view vc = make_view(c, CTL_DTYPE_F32, {kN});
  const ctl_tensor_view vd = make_view(d, CTL_DTYPE_F32, {kN});

  res.write(stream, a, 0, a0.data(), kBytes, "A (first data)");
  run_op(res, stream, CTL_OP_ADD, va, &va, vb, "B = A + A");
  run_op(res, stream, CTL_OP_MUL, vb, &vb, vc, "C = B * B");
  res.write(stream, a, 0, a1.data(), kBytes, "A (second data, queued behind the ADD that reads A)");
  run_op(res, stream, CTL_OP_ADD, va, &vc, vd, "D = A + C");
  std::vector<float>& got_b = res.host<float>(kN);
  std::vector<float>& got_c = res.host<float>(kN);
  std::vector<float>& got_d = res.host<float>(kN);
  res.read(stream, b, 0, got_b.data(), kBytes, "B");
  res.read(stream, c, 0, got_c.data(), kBytes, "C");
  res.read(stream, d, 0, got_d.data(), kBytes, "D");
  res.synchronize(stream, "after write A, B = A + A, C = B * B, write A, D = A + C, reads");

  expect_values<float>(got_b.data(), want_b.data(), kN, "B = A + A (f32, first data of A)", [&](size_t i, float v) {
    return v == stale_b[i] ? std::string(
                                 "that is A + A with the second data: the second write "
                                 "of A overtook the ADD queued before it")
                           : std::string();
  });
  expect_values<float>(got_c.data(), want_c.data(), kN, "C = B * B (f32)");
  expect_values<float>(got_d.data(), want_d.data(), kN, "D = A + C (f32, second data of A)", [&](size_t i, float v) {
    return v == stale_d[i] ? std::string(
                                 "that is A + C with the first data of A: the ADD ran "
                                 "before the second write of A queued ahead of it")
                           : std::string();
  });
}

// Enqueues `count` ops x = x + one, ping-ponging between x[0] and x[1]; the result ends in
// x[count % 2].
void enqueue_increment_chain(const Resources& res, ctl_plugin_stream* stream, const ctl_tensor_view (&x)[2],
                             const ctl_tensor_view& one, int count, const std::string& what) {
  for (int k = 0; k < count; ++k) {
    run_op(res, stream, CTL_OP_ADD, x[k % 2], &one, x[(k + 1) % 2],
           format("op %d of %d of %s", k + 1, count, what.c_str()));
  }
}

std::function<std::string(size_t, int32_t)> chain_hint(const std::vector<int32_t>& initial, int count) {
  return [&initial, count](size_t i, int32_t v) {
    const int64_t steps = static_cast<int64_t>(v) - initial[i];
    if (steps >= 0 && steps < count) {
      return format(
          "that is the initial value + %lld: only %lld of the %d queued ops took effect before the read "
          "(work ran out of order or the read overtook it)",
          static_cast<long long>(steps), static_cast<long long>(steps), count);
    }
    return std::string();
  };
}

void streams_long_chain_case(CaseContext& ctx) {
  constexpr int64_t kN = 4096;
  constexpr int kOps = 256;
  constexpr uint64_t kBytes = kN * sizeof(int32_t);
  Resources res(ctx);
  ctl_plugin_stream* stream = res.stream("a long chain");
  ctl_plugin_buffer* x0 = res.buffer(kBytes, "x (even)");
  ctl_plugin_buffer* x1 = res.buffer(kBytes, "x (odd)");
  ctl_plugin_buffer* ones = res.buffer(kBytes, "ones");
  std::vector<int32_t>& initial = res.host<int32_t>(kN);
  std::vector<int32_t>& one = res.host<int32_t>(kN, 1);
  for (int64_t i = 0; i < kN; ++i) initial[i] = static_cast<int32_t>(i * 3 - 5000);
  const ctl_tensor_view x[2] = {make_view(x0, CTL_DTYPE_I32, {kN}), make_view(x1, CTL_DTYPE_I32, {kN})};
  const ctl_tensor_view vone = make_view(ones, CTL_DTYPE_I32, {kN});
  res.write(stream, x0, 0, initial.data(), kBytes, "x");
  res.write(stream, ones, 0, one.data(), kBytes, "ones");
  enqueue_increment_chain(res, stream, x, vone, kOps, "x = x + 1");
  std::vector<int32_t>& got = res.host<int32_t>(kN);
  res.read(stream, kOps % 2 ? x1 : x0, 0, got.data(), kBytes, "x after the chain");
  res.synchronize(stream, "after 256 queued ops and a read");
  std::vector<int32_t> want(kN);
  for (int64_t i = 0; i < kN; ++i) want[i] = initial[i] + kOps;
  expect_values<int32_t>(got.data(), want.data(), kN, "x after 256 ops x = x + 1 (i32) on one stream",
                         chain_hint(initial, kOps));
}

void streams_two_streams_case(CaseContext& ctx) {
  constexpr int64_t kN = 4096;
  constexpr int kOps = 64;
  constexpr uint64_t kBytes = kN * sizeof(int32_t);
  Resources res(ctx);
  struct Lane {
    ctl_plugin_stream* stream;
    ctl_tensor_view x[2];
    ctl_tensor_view step;
    std::vector<int32_t>* initial;
    std::vector<int32_t>* got;
    int32_t increment;
  };
  Lane lanes[2];
  for (int s = 0; s < 2; ++s) {
    Lane& lane = lanes[s];
    const std::string name = format("stream %d", s + 1);
    lane.stream = res.stream(name);
    lane.x[0] = make_view(res.buffer(kBytes, name + " x (even)"), CTL_DTYPE_I32, {kN});
    lane.x[1] = make_view(res.buffer(kBytes, name + " x (odd)"), CTL_DTYPE_I32, {kN});
    lane.step = make_view(res.buffer(kBytes, name + " increment"), CTL_DTYPE_I32, {kN});
    lane.increment = s == 0 ? 1 : -3;
    lane.initial = &res.host<int32_t>(kN);
    for (int64_t i = 0; i < kN; ++i) (*lane.initial)[i] = static_cast<int32_t>(s == 0 ? i : 100000 - 7 * i);
    std::vector<int32_t>& step = res.host<int32_t>(kN, lane.increment);
    lane.got = &res.host<int32_t>(kN);
    res.write(lane.stream, lane.x[0].buffer, 0, lane.initial->data(), kBytes, name + " x");
    res.write(lane.stream, lane.step.buffer, 0, step.data(), kBytes, name + " increment");
  }
  // Interleaved submission: op k of stream 1, then op k of stream 2.
  for (int k = 0; k < kOps; ++k) {
    for (int s = 0; s < 2; ++s) {
      Lane& lane = lanes[s];
      run_op(res, lane.stream, CTL_OP_ADD, lane.x[k % 2], &lane.step, lane.x[(k + 1) % 2],
             format("op %d of %d on stream %d", k + 1, kOps, s + 1));
    }
  }
  for (int s = 0; s < 2; ++s) {
    res.read(lanes[s].stream, lanes[s].x[kOps % 2].buffer, 0, lanes[s].got->data(), kBytes,
             format("stream %d's result", s + 1));
  }
  for (int s = 0; s < 2; ++s) res.synchronize(lanes[s].stream, format("stream %d", s + 1));
  for (int s = 0; s < 2; ++s) {
    const Lane& lane = lanes[s];
    std::vector<int32_t> want(kN);
    for (int64_t i = 0; i < kN; ++i) want[i] = (*lane.initial)[i] + kOps * lane.increment;
    expect_values<int32_t>(lane.got->data(), want.data(), kN,
                           format("stream %d: x after %d ops x = x + (%d) (i32), interleaved with stream %d's chain",
                                  s + 1, kOps, lane.increment, 2 - s));
  }
}

// ---- events ------------------------------------------------------------------------------

// Throws CaseUnsupported when no event entry is provided, CaseFailure when only some are.
void require_events(const ctl_plugin_api& api) {
  const struct {
    const char* name;
    bool present;
  } entries[] = {{"event_create", api.event_create != nullptr},
                 {"event_destroy", api.event_destroy != nullptr},
                 {"event_record", api.event_record != nullptr},
                 {"stream_wait_event", api.stream_wait_event != nullptr},
                 {"event_synchronize", api.event_synchronize != nullptr}};
  std::string have, lack;
  for (const auto& e : entries) {
    std::string& list = e.present ? have : lack;
    list += (list.empty() ? "" : ", ") + std::string(e.name);
  }
  if (have.empty()) {
    throw CaseUnsupported(
        "events are optional and not provided (the core default synchronizes the recording stream "
        "instead)");
  }
  if (!lack.empty()) {
    throw CaseFailure("the plugin provides " + have + " but not " + lack +
                      "; the event entries come as a set of five (all NULL selects the core default)");
  }
}

void events_cross_stream_case(CaseContext& ctx) {
  const ctl_plugin_api& api = ctx.plugin->api;
  require_events(api);
  constexpr int64_t kN = 4096;
  constexpr int kOps = 64;
  constexpr uint64_t kBytes = kN * sizeof(int32_t);
  Resources res(ctx);
  ctl_plugin_stream* s1 = res.stream("S1 (producer)");
  ctl_plugin_stream* s2 = res.stream("S2 (consumer)");
  ctl_plugin_event* event = res.event("S1 -> S2");
  const ctl_tensor_view x[2] = {make_view(res.buffer(kBytes, "X"), CTL_DTYPE_I32, {kN}),
                                make_view(res.buffer(kBytes, "X'"), CTL_DTYPE_I32, {kN})};
  const ctl_tensor_view one = make_view(res.buffer(kBytes, "ones"), CTL_DTYPE_I32, {kN});
  const ctl_tensor_view z = make_view(res.buffer(kBytes, "Z"), CTL_DTYPE_I32, {kN});
  std::vector<int32_t>& initial = res.host<int32_t>(kN);
  std::vector<int32_t>& ones = res.host<int32_t>(kN, 1);
  for (int64_t i = 0; i < kN; ++i) initial[i] = static_cast<int32_t>(7 * i - 9000);
  res.write(s1, x[0].buffer, 0, initial.data(), kBytes, "X on S1");
  res.write(s1, one.buffer, 0, ones.data(), kBytes, "ones on S1");
  enqueue_increment_chain(res, s1, x, one, kOps, "Y = X + 64 on S1");
  require_ok(api.event_record(event, s1), "event_record(E, S1) after the chain");
  require_ok(api.stream_wait_event(s2, event), "stream_wait_event(S2, E)");
  const ctl_tensor_view& y = x[kOps % 2];
  run_op(res, s2, CTL_OP_COPY, y, nullptr, z, "Z = copy(Y) on S2, behind the wait");
  std::vector<int32_t>& got = res.host<int32_t>(kN);
  res.read(s2, z.buffer, 0, got.data(), kBytes, "Z on S2");
  res.synchronize(s2, "S2 (only S2: the wait must make S2 run after S1's chain)");
  std::vector<int32_t> want(kN);
  for (int64_t i = 0; i < kN; ++i) want[i] = initial[i] + kOps;
  std::string failure;
  try {
    expect_values<int32_t>(got.data(), want.data(), kN,
                           "Z = copy(Y) on S2 after stream_wait_event on an event recorded behind S1's 64-op chain",
                           chain_hint(initial, kOps));
  } catch (const CaseFailure& e) {
    failure = e.what();
  }
  res.synchronize(s1, "S1 before freeing");
  if (!failure.empty()) throw CaseFailure(failure);
}

void events_synchronize_case(CaseContext& ctx) {
  const ctl_plugin_api& api = ctx.plugin->api;
  require_events(api);
  constexpr int64_t kN = 4096;
  constexpr int kOps = 16;
  constexpr uint64_t kBytes = kN * sizeof(int32_t);
  Resources res(ctx);
  ctl_plugin_stream* s1 = res.stream("S1 (producer)");
  ctl_plugin_stream* s2 = res.stream("S2 (reader)");
  ctl_plugin_event* event = res.event("after S1's work");
  const ctl_tensor_view x[2] = {make_view(res.buffer(kBytes, "X"), CTL_DTYPE_I32, {kN}),
                                make_view(res.buffer(kBytes, "X'"), CTL_DTYPE_I32, {kN})};
  const ctl_tensor_view one = make_view(res.buffer(kBytes, "ones"), CTL_DTYPE_I32, {kN});
  std::vector<int32_t>& initial = res.host<int32_t>(kN);
  std::vector<int32_t>& ones = res.host<int32_t>(kN, 1);
  for (int64_t i = 0; i < kN; ++i) initial[i] = static_cast<int32_t>(i * i % 10007);
  res.write(s1, x[0].buffer, 0, initial.data(), kBytes, "X on S1");
  res.write(s1, one.buffer, 0, ones.data(), kBytes, "ones on S1");
  enqueue_increment_chain(res, s1, x, one, kOps, "Y = X + 16 on S1");
  require_ok(api.event_record(event, s1), "event_record(E, S1) after the chain");
  require_ok(api.event_synchronize(event), "event_synchronize(E)");
  std::vector<int32_t>& got = res.host<int32_t>(kN);
  res.read(s2, x[kOps % 2].buffer, 0, got.data(), kBytes, "Y on S2");
  res.synchronize(s2, "S2");
  std::vector<int32_t> want(kN);
  for (int64_t i = 0; i < kN; ++i) want[i] = initial[i] + kOps;
  expect_values<int32_t>(got.data(), want.data(), kN,
                         "Y read on S2 after event_synchronize on an event recorded behind S1's 16-op chain",
                         chain_hint(initial, kOps));
}

// ---- threads -----------------------------------------------------------------------------

// One thread's work: 100 iterations of e = (a + b) * b - a on its own stream and buffers.
// The threads start their iterations together; one that fails before then still counts
// down the latch, so the others never wait for it.
// Marks a thread's error text as "the check needs an op the plugin does not run".
constexpr const char* kUnsupportedMark = "unsupported: ";

void thread_body(CaseContext& ctx, int thread, std::latch& start, std::string* error) {
  bool arrived = false;
  constexpr int64_t kN = 1024;
  constexpr int kIterations = 100;
  constexpr uint64_t kBytes = kN * sizeof(int32_t);
  try {
    Resources res(ctx);
    const std::string name = format("thread %d", thread);
    ctl_plugin_stream* stream = res.stream(name);
    const ctl_tensor_view a = make_view(res.buffer(kBytes, name + " a"), CTL_DTYPE_I32, {kN});
    const ctl_tensor_view b = make_view(res.buffer(kBytes, name + " b"), CTL_DTYPE_I32, {kN});
    const ctl_tensor_view c = make_view(res.buffer(kBytes, name + " c"), CTL_DTYPE_I32, {kN});
    const ctl_tensor_view d = make_view(res.buffer(kBytes, name + " d"), CTL_DTYPE_I32, {kN});
    const ctl_tensor_view e = make_view(res.buffer(kBytes, name + " e"), CTL_DTYPE_I32, {kN});
    std::vector<int32_t>& ha = res.host<int32_t>(kN);
    std::vector<int32_t>& hb = res.host<int32_t>(kN);
    std::vector<int32_t>& got = res.host<int32_t>(kN);
    std::vector<int32_t> want(kN);
    arrived = true;
    start.arrive_and_wait();
    for (int iteration = 0; iteration < kIterations; ++iteration) {
      for (int64_t i = 0; i < kN; ++i) {
        ha[i] = static_cast<int32_t>((thread + 1) * 1000 + i + iteration);
        hb[i] = static_cast<int32_t>((i + iteration) % 17 - 8 + thread);
        want[i] = (ha[i] + hb[i]) * hb[i] - ha[i];
      }
      std::fill(got.begin(), got.end(), 0);
      const std::string where = format("%s iteration %d", name.c_str(), iteration);
      res.write(stream, a.buffer, 0, ha.data(), kBytes, where + " a");
      res.write(stream, b.buffer, 0, hb.data(), kBytes, where + " b");
      run_op(res, stream, CTL_OP_ADD, a, &b, c, where + " c = a + b");
      run_op(res, stream, CTL_OP_MUL, c, &b, d, where + " d = c * b");
      run_op(res, stream, CTL_OP_SUB, d, &a, e, where + " e = d - a");
      res.read(stream, e.buffer, 0, got.data(), kBytes, where + " e");
      res.synchronize(stream, where);
      expect_values<int32_t>(got.data(), want.data(), kN, where + ": e = (a + b) * b - a (i32)");
    }
  } catch (const CaseUnsupported& e) {
    *error = std::string(kUnsupportedMark) + e.what();
  } catch (const std::exception& e) {
    *error = e.what();
  } catch (...) {
    *error = format("thread %d: unknown exception", thread);
  }
  if (!arrived) start.count_down();
}

void threads_concurrent_case(CaseContext& ctx) {
  constexpr int kThreads = 4;
  std::latch start(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  std::string spawn_error;
  for (int t = 0; t < kThreads && spawn_error.empty(); ++t) {
    try {
      threads.emplace_back(thread_body, std::ref(ctx), t, std::ref(start), &errors[t]);
    } catch (const std::exception& e) {
      spawn_error = format("could not start thread %d: %s", t, e.what());
      start.count_down(kThreads - t);  // release the threads already waiting
    }
  }
  for (std::thread& thread : threads) thread.join();
  if (!spawn_error.empty()) throw CaseFailure(spawn_error);
  std::string message;
  int failed = 0;
  for (const std::string& error : errors) {
    if (error.rfind(kUnsupportedMark, 0) == 0) throw CaseUnsupported(error.substr(std::strlen(kUnsupportedMark)));
  }
  for (const std::string& error : errors) {
    if (error.empty()) continue;
    ++failed;
    message += (message.empty() ? "" : "; ") + error;
  }
  if (failed) {
    throw CaseFailure(format("%d of %d threads (each with its own stream and buffers on one device) failed: %s", failed,
                             kThreads, message.c_str()));
  }
  ctx.note = "4 threads x 100 iterations";
}

// ---- bad calls ---------------------------------------------------------------------------

// What a malformed call may be answered with.
bool acceptable_refusal(ctl_status_code code) {
  return code == CTL_STATUS_INVALID_ARGUMENT || code == CTL_STATUS_UNSUPPORTED || code == CTL_STATUS_OUT_OF_RANGE;
}

// The buffers every bad call is built over; each holds 64 elements of 8 bytes at most.
struct BadCallBuffers {
  static constexpr int64_t kElements = 64;
  static constexpr uint64_t kBytes = 512;
  ctl_plugin_buffer* a;    // f32 input data
  ctl_plugin_buffer* b;    // f32 input data
  ctl_plugin_buffer* ai;   // i32 input data
  ctl_plugin_buffer* out;  // the output under watch: 0xA5 before and after
};

// One malformed call: storage for its views and arrays, and what it is in words.
struct BadCall {
  ctl_tensor_view views[3];  // a, b, out unless a case says otherwise
  const ctl_tensor_view* inputs[3];
  const ctl_tensor_view* outputs[1];
  ctl_matmul_attrs matmul;
  ctl_fused_elementwise_attrs fused;  // the fused_* cases' program
  ctl_op_call call;
  std::string what;

  BadCall() = default;
  BadCall(const BadCall&) = delete;
  BadCall& operator=(const BadCall&) = delete;

  // A valid f32 add of two [4, 5] inputs into out [4, 5]; cases break one thing.
  void valid_add(const BadCallBuffers& buffers) {
    views[0] = make_view(buffers.a, CTL_DTYPE_F32, {4, 5});
    views[1] = make_view(buffers.b, CTL_DTYPE_F32, {4, 5});
    views[2] = make_view(buffers.out, CTL_DTYPE_F32, {4, 5});
    inputs[0] = &views[0];
    inputs[1] = &views[1];
    inputs[2] = nullptr;
    outputs[0] = &views[2];
    matmul = {};
    call = make_call(CTL_OP_ADD, inputs, 2, outputs, 1);
  }
};

struct BadCallSpec {
  const char* name;
  const char* label;
  std::function<void(const BadCallBuffers&, BadCall*)> build;
};

void run_bad_call(CaseContext& ctx, const BadCallSpec& spec) {
  constexpr uint8_t kWatch = 0xA5;
  constexpr int64_t kN = BadCallBuffers::kElements;
  constexpr uint64_t kBytes = BadCallBuffers::kBytes;
  const ctl_plugin_api& api = ctx.plugin->api;
  Resources res(ctx);
  ctl_plugin_stream* stream = res.stream("a malformed op call");
  BadCallBuffers buffers{res.buffer(kBytes, "input a"), res.buffer(kBytes, "input b"),
                         res.buffer(kBytes, "input (i32)"), res.buffer(kBytes, "the output")};
  ctl_plugin_buffer* good_out = res.buffer(kBytes, "the follow-up add's output");
  std::vector<float>& ha = res.host<float>(kBytes / sizeof(float));
  std::vector<float>& hb = res.host<float>(kBytes / sizeof(float));
  std::vector<int32_t>& hi = res.host<int32_t>(kBytes / sizeof(int32_t));
  std::vector<uint8_t>& watch = res.host<uint8_t>(kBytes, kWatch);
  for (size_t i = 0; i < ha.size(); ++i) {
    ha[i] = static_cast<float>(static_cast<int>(i) - 10);
    hb[i] = static_cast<float>(2 * static_cast<int>(i) + 1);
    hi[i] = static_cast<int32_t>(i * 3);
  }
  res.write(stream, buffers.a, 0, ha.data(), kBytes, "input a");
  res.write(stream, buffers.b, 0, hb.data(), kBytes, "input b");
  res.write(stream, buffers.ai, 0, hi.data(), kBytes, "the i32 input");
  res.write(stream, buffers.out, 0, watch.data(), kBytes, "the output (0xA5 bytes)");

  BadCall bad;
  bad.valid_add(buffers);
  spec.build(buffers, &bad);

  Status executed(api.op_execute(stream, &bad.call));
  if (executed.ok()) {
    throw CaseFailure(
        format("op_execute returned success for %s; it must return an error status (INVALID_ARGUMENT, "
               "UNSUPPORTED or OUT_OF_RANGE)",
               bad.what.c_str()));
  }
  if (!acceptable_refusal(executed.code())) {
    throw CaseFailure(format("op_execute returned %s for %s; expected INVALID_ARGUMENT, UNSUPPORTED or OUT_OF_RANGE",
                             executed.text().c_str(), bad.what.c_str()));
  }
  if (executed.message().empty()) {
    throw CaseFailure(
        format("op_execute refused %s with %s but an empty message; the message must name the offending "
               "argument",
               bad.what.c_str(), ctl_status_code_name(executed.code())));
  }

  // The output is unchanged and the stream still runs a good op.
  std::vector<uint8_t>& after = res.host<uint8_t>(kBytes, 0);
  res.read(stream, buffers.out, 0, after.data(), kBytes, "the output after the refused call");
  const ctl_tensor_view ga = make_view(buffers.a, CTL_DTYPE_F32, {kN});
  const ctl_tensor_view gb = make_view(buffers.b, CTL_DTYPE_F32, {kN});
  const ctl_tensor_view gout = make_view(good_out, CTL_DTYPE_F32, {kN});
  bool follow_up = true;
  {
    const ctl_tensor_view* inputs[2] = {&ga, &gb};
    const ctl_tensor_view* outputs[1] = {&gout};
    const ctl_op_call call = make_call(CTL_OP_ADD, inputs, 2, outputs, 1);
    ctl_status* status = api.op_execute(stream, &call);
    if (status && ctl_status_get_code(status) == CTL_STATUS_UNSUPPORTED) {
      follow_up = false;  // a plugin without add: the refusal is judged, the stream's health is not
      ctl_status_free(status);
    } else if (status) {
      const std::string text = describe(status);
      ctl_status_free(status);
      throw CaseFailure(
          format("after refusing %s, the stream no longer works: a valid add (f32 [%lld]) on it returned "
                 "%s",
                 bad.what.c_str(), static_cast<long long>(kN), text.c_str()));
    }
  }
  std::vector<float>& good = res.host<float>(kN);
  if (follow_up) res.read(stream, good_out, 0, good.data(), kN * sizeof(float), "the follow-up add's output");
  ctl_status* synced = api.stream_synchronize(stream);
  if (synced) {
    const std::string text = describe(synced);
    ctl_status_free(synced);
    throw CaseFailure(format("after refusing %s, stream_synchronize returned %s", bad.what.c_str(), text.c_str()));
  }
  expect_bytes(after.data(), watch.data(), kBytes,
               format("op_execute refused %s with %s but changed its output buffer (filled with 0xA5 before)",
                      bad.what.c_str(), ctl_status_code_name(executed.code())));
  if (follow_up) {
    std::vector<float> want(kN);
    for (int64_t i = 0; i < kN; ++i) want[i] = ha[i] + hb[i];
    expect_values<float>(
        good.data(), want.data(), kN,
        format("a valid add (f32 [%lld]) on the stream after the refused call", static_cast<long long>(kN)));
  }

  ctx.note = format("op_execute: %s", executed.text().c_str());
  if (!follow_up) ctx.note += "; the follow-up add is unsupported, so the stream's health was not checked";
  if (api.op_supports) {
    // op_supports is the ahead-of-time capability query for calls in the normalised form
    // (catalyst_plugin.h); on a malformed call it may answer NULL and leave the verdict to
    // op_execute, but it must not crash and a refusal must carry a fitting code.
    Status supported(api.op_supports(ctx.device->handle, &bad.call));
    if (!supported.ok() && !acceptable_refusal(supported.code())) {
      throw CaseFailure(
          format("op_supports returned %s for %s; expected NULL, UNSUPPORTED, INVALID_ARGUMENT or "
                 "OUT_OF_RANGE",
                 supported.text().c_str(), bad.what.c_str()));
    }
    ctx.note += format("; op_supports: %s", supported.ok() ? "NULL (left to op_execute)" : supported.text().c_str());
  } else {
    ctx.note += "; op_supports: not provided";
  }
}

std::vector<BadCallSpec> bad_call_specs() {
  using B = const BadCallBuffers&;
  // A fused elementwise call of add's views running `program` (r2 = a + b unless broken).
  auto fused = [](BadCall* c, std::vector<ctl_fused_instruction> program, const std::string& what) {
    c->fused = {};
    c->fused.struct_size = CTL_FUSED_ELEMENTWISE_ATTRS_STRUCT_SIZE;
    c->fused.instruction_count = static_cast<uint32_t>(program.size());
    for (size_t i = 0; i < program.size() && i < CTL_FUSED_MAX_INSTRUCTIONS; ++i) c->fused.program[i] = program[i];
    c->call.op = CTL_OP_FUSED_ELEMENTWISE;
    c->call.attrs = &c->fused;
    c->what = "fused_elementwise of f32 a [4, 5], b [4, 5] -> [4, 5] " + what;
  };
  return {
      {"unknown_op_id", "op id 9999 with the views of a valid f32 add",
       [](B, BadCall* c) {
         set_raw_enum(&c->call.op, 9999);
         c->what = "op id 9999 (unknown) with the views of a valid f32 add";
       }},
      {"op_id_zero", "op id 0 with the views of a valid f32 add",
       [](B, BadCall* c) {
         set_raw_enum(&c->call.op, 0);
         c->what = "op id 0 (no op has it) with the views of a valid f32 add";
       }},
      {"add_wrong_input_count", "add with input_count 1",
       [](B, BadCall* c) {
         c->call.input_count = 1;
         c->what = "add with input_count 1 (add takes 2 inputs)";
       }},
      {"add_null_inputs_array", "add with input_count 2 and inputs NULL",
       [](B, BadCall* c) {
         c->call.inputs = nullptr;
         c->what = "add with input_count 2 and inputs == NULL";
       }},
      {"add_null_input_view", "add with inputs[1] NULL",
       [](B, BadCall* c) {
         c->inputs[1] = nullptr;
         c->what = "add with inputs[1] == NULL (add has no optional input)";
       }},
      {"add_null_buffer", "add whose second input view has buffer NULL",
       [](B, BadCall* c) {
         c->views[1].buffer = nullptr;
         c->what = "add whose inputs[1] view has buffer == NULL";
       }},
      {"add_mixed_dtypes", "add of f32 [4, 5] + i32 [4, 5] -> f32 [4, 5]",
       [](B buffers, BadCall* c) {
         c->views[1] = make_view(buffers.ai, CTL_DTYPE_I32, {4, 5});
         c->what = "add of f32 [4, 5] + i32 [4, 5] -> f32 [4, 5] (the inputs of a binary op share one dtype)";
       }},
      {"add_output_wrong_dtype", "add of f32 + f32 -> i32 output",
       [](B buffers, BadCall* c) {
         c->views[2] = make_view(buffers.out, CTL_DTYPE_I32, {4, 5});
         c->what = "add of f32 [4, 5] + f32 [4, 5] into an i32 [4, 5] output";
       }},
      {"add_mismatched_shapes", "add of [4, 5] + [5, 4] -> [4, 5]",
       [](B buffers, BadCall* c) {
         c->views[1] = make_view(buffers.b, CTL_DTYPE_F32, {5, 4});
         c->what = "add of f32 [4, 5] + f32 [5, 4] -> [4, 5] (normalised elementwise views share one shape)";
       }},
      {"rank_too_large", "add with views of rank CTL_MAX_RANK + 1",
       [](B, BadCall* c) {
         for (ctl_tensor_view& view : c->views) {
           view.rank = CTL_MAX_RANK + 1;
           for (int i = 0; i < CTL_MAX_RANK; ++i) view.shape[i] = view.strides[i] = 1;
         }
         c->what = format("add with views of rank %d (CTL_MAX_RANK is %d; shape and strides hold %d entries)",
                          CTL_MAX_RANK + 1, CTL_MAX_RANK, CTL_MAX_RANK);
       }},
      {"negative_dimension", "add with shape [-1]",
       [](B buffers, BadCall* c) {
         c->views[0] = make_view(buffers.a, CTL_DTYPE_F32, {-1});
         c->views[1] = make_view(buffers.b, CTL_DTYPE_F32, {-1});
         c->views[2] = make_view(buffers.out, CTL_DTYPE_F32, {-1});
         c->what = "add of f32 views of shape [-1] (a negative dimension)";
       }},
      {"matmul_inner_mismatch", "matmul of a [3, 4] by b [5, 2] -> [3, 2]",
       [](B buffers, BadCall* c) {
         c->views[0] = make_view(buffers.a, CTL_DTYPE_F32, {3, 4});
         c->views[1] = make_view(buffers.b, CTL_DTYPE_F32, {5, 2});
         c->views[2] = make_view(buffers.out, CTL_DTYPE_F32, {3, 2});
         c->matmul.struct_size = CTL_MATMUL_ATTRS_STRUCT_SIZE;
         c->matmul.alpha = 1.0;
         c->matmul.alpha_set = true;
         c->matmul.beta = 0.0;
         c->matmul.activation = CTL_ACTIVATION_NONE;
         c->call.op = CTL_OP_MATMUL;
         c->call.attrs = &c->matmul;
         c->what = "matmul of f32 a [3, 4] by b [5, 2] -> [3, 2] (inner dimensions 4 and 5 differ)";
       }},
      {"reduce_null_attrs", "sum of x [4, 5] -> [4, 1] with attrs NULL",
       [](B buffers, BadCall* c) {
         c->views[2] = make_view(buffers.out, CTL_DTYPE_F32, {4, 1});
         c->call.op = CTL_OP_SUM;
         c->call.input_count = 1;
         c->call.attrs = nullptr;
         c->what =
             "sum of f32 x [4, 5] into out [4, 1] with attrs == NULL (a normalised reduction names its axes in "
             "ctl_reduce_attrs)";
       }},
      {"call_struct_size_zero", "a valid add whose ctl_op_call.struct_size is 0",
       [](B, BadCall* c) {
         c->call.struct_size = 0;
         c->what = "an otherwise valid f32 add whose ctl_op_call.struct_size is 0";
       }},
      {"view_struct_size_zero", "a valid add whose first input view has struct_size 0",
       [](B, BadCall* c) {
         c->views[0].struct_size = 0;
         c->what = "an otherwise valid f32 add whose inputs[0] view has struct_size 0";
       }},
      // ABI 1.5: a plugin without the fused op answers UNSUPPORTED, which passes.
      {"fused_no_instructions", "fused_elementwise with instruction_count 0",
       [fused](B, BadCall* c) { fused(c, {}, "with instruction_count 0 (a program has 1 to 16)"); }},
      {"fused_17_instructions", "fused_elementwise with instruction_count 17",
       [fused](B, BadCall* c) {
         fused(c, {{CTL_OP_ADD, 0, 1}}, "with instruction_count 17 (a program has 1 to 16)");
         c->fused.instruction_count = CTL_FUSED_MAX_INSTRUCTIONS + 1;
       }},
      {"fused_comparison_instruction", "fused_elementwise whose instruction is eq",
       [fused](B, BadCall* c) {
         fused(c, {{CTL_OP_EQ, 0, 1}}, "whose program[0] is eq (not a float elementwise op)");
       }},
      {"fused_unknown_instruction", "fused_elementwise whose instruction is op 9999",
       [fused](B, BadCall* c) {
         fused(c, {{CTL_OP_ADD, 0, 1}}, "whose program[0] is op 9999");
         set_raw_enum(&c->fused.program[0].op, 9999);
       }},
      {"fused_register_not_written", "fused_elementwise reading a register not yet written",
       [fused](B, BadCall* c) {
         fused(c, {{CTL_OP_ADD, 0, 2}}, "whose program[0] reads register 2, its own result");
       }},
      {"fused_register_out_of_range", "fused_elementwise reading register 65535",
       [fused](B, BadCall* c) {
         fused(c, {{CTL_OP_NEG, 0, 0}, {CTL_OP_MUL, 65535, 2}}, "whose program[1] reads register 65535");
       }},
      {"fused_null_attrs", "fused_elementwise with attrs NULL",
       [fused](B, BadCall* c) {
         fused(c, {{CTL_OP_ADD, 0, 1}}, "with attrs == NULL (the program is required)");
         c->call.attrs = nullptr;
       }},
      {"fused_mixed_dtypes", "fused_elementwise of f32 a and i32 b",
       [fused](B buffers, BadCall* c) {
         fused(c, {{CTL_OP_ADD, 0, 1}}, "");
         c->views[1] = make_view(buffers.ai, CTL_DTYPE_I32, {4, 5});
         c->what = "fused_elementwise of f32 a [4, 5] and i32 b [4, 5] -> f32 [4, 5] (one float dtype)";
       }},
      {"fused_integer_dtype", "fused_elementwise of i32 inputs and output",
       [fused](B buffers, BadCall* c) {
         fused(c, {{CTL_OP_ADD, 0, 1}}, "");
         c->views[0] = make_view(buffers.ai, CTL_DTYPE_I32, {4, 5});
         c->views[1] = make_view(buffers.ai, CTL_DTYPE_I32, {4, 5});
         c->views[2] = make_view(buffers.out, CTL_DTYPE_I32, {4, 5});
         c->what = "fused_elementwise of i32 [4, 5] inputs into i32 [4, 5] (float dtypes only)";
       }},
  };
}

// ---- registration ------------------------------------------------------------------------

void add_case(std::vector<Case>& out, const std::string& area, const std::string& name, const std::string& dtype,
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

}  // namespace

void add_contract_cases(std::vector<Case>& out) {
  add_case(out, "device", "properties", "-",
           "device_properties with a full struct: strings, kind, memory, required dtypes, PCI id, NUMA node",
           device_properties_case);
  add_case(out, "device", "older_struct", "-",
           "device_properties with an older core's smaller struct writes nothing past struct_size",
           device_older_struct_case);

  add_case(out, "buffers", "zero_size", "-", "a 0-byte buffer allocates, takes 0-byte transfers and frees",
           buffers_zero_size_case);
  add_case(out, "buffers", "oversize", "-", "allocating 2^62 and 2^63 + 1 bytes returns an error status",
           buffers_oversize_case);
  add_case(out, "buffers", "many", "-",
           "200 buffers of 1 to 100000 bytes keep their own bytes; every host allocation is freed", buffers_many_case);

  add_case(out, "copies", "write_read", "-",
           "writes and reads of sizes 0 to 20000 at unaligned offsets round-trip exactly, one synchronize",
           copies_write_read_case);
  add_case(out, "copies", "device_to_device", "-", "buffer_copy between and within buffers, in stream order",
           copies_device_to_device_case);
  add_case(out, "copies", "fill", "-", "buffer_fill with 1-, 2-, 4- and 8-byte patterns at aligned offsets",
           copies_fill_case);
  add_case(out, "copies", "host_pointer", "-",
           "on a host-visible device, buffer_host_pointer sees synchronized writes and the host's writes",
           copies_host_pointer_case);

  add_case(out, "streams", "ordered_ops", "f32",
           "write A; B = A + A; C = B * B; write A; D = A + C on one stream with one synchronize",
           streams_ordered_ops_case);
  add_case(out, "streams", "long_chain", "i32", "256 queued ops x = x + 1 on one stream, one read, one synchronize",
           streams_long_chain_case);
  add_case(out, "streams", "two_streams_independent", "i32", "two streams each run their own interleaved 64-op chain",
           streams_two_streams_case);

  add_case(out, "events", "cross_stream", "i32",
           "an event recorded behind S1's chain makes S2's copy wait for it; only S2 is synchronized",
           events_cross_stream_case);
  add_case(out, "events", "synchronize", "i32", "event_synchronize makes S1's work visible to a read on S2",
           events_synchronize_case);

  add_case(out, "threads", "concurrent", "i32",
           "4 threads, each with its own stream and buffers, run 100 iterations of an i32 op chain at once",
           threads_concurrent_case);

  for (const BadCallSpec& spec : bad_call_specs()) {
    add_case(out, "bad_calls", spec.name, "f32",
             std::string(spec.label) + ": an error status, the output untouched, the stream still usable",
             [spec](CaseContext& ctx) { run_bad_call(ctx, spec); });
  }
}

}  // namespace catalyst::conformance
