// contract_buffers.cpp — the contract cases of buffers: zero-size and absurd sizes are handled, many buffers keep their
// own bytes, and everything allocated through the host table is given back.
#include "contract_support.h"

namespace catalyst::conformance::contract {
namespace {

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

}  // namespace

void add_buffer_cases(std::vector<Case>& out) {
  add_case(out, "buffers", "zero_size", "-", "a 0-byte buffer allocates, takes 0-byte transfers and frees",
           buffers_zero_size_case);
  add_case(out, "buffers", "oversize", "-", "allocating 2^62 and 2^63 + 1 bytes returns an error status",
           buffers_oversize_case);
  add_case(out, "buffers", "many", "-",
           "200 buffers of 1 to 100000 bytes keep their own bytes; every host allocation is freed", buffers_many_case);
}

}  // namespace catalyst::conformance::contract
