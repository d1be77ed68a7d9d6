// contract_copies.cpp — the contract cases of copies: host<->device transfers round-trip exactly at any size and offset
// and touch nothing outside their range; buffer_copy, buffer_fill and buffer_host_pointer work where the plugin
// provides them.
#include "contract_support.h"

namespace catalyst::conformance::contract {
namespace {

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

}  // namespace

void add_copy_cases(std::vector<Case>& out) {
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
}

}  // namespace catalyst::conformance::contract
