// sdk_host_device_test.cpp — the SDK's device side for host-memory plugins
// (sdk/host_device.hpp) on its own, through the function table host_device_api() builds:
// what it fills and leaves NULL, one device, buffers that hold their bytes and are counted by
// the host's allocator, synchronous streams, properties cut to an older core's struct, and
// statuses (never a crash) for a missing device or an impossible size.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "catalyst/sdk/host_device.hpp"

namespace {

namespace sdk = catalyst::sdk;

// A host table that counts live allocations and records the last status.
struct Host {
  int64_t live = 0;
  ctl_status_code code = CTL_STATUS_OK;
  std::string message;
  ctl_host_api api{};

  Host() {
    api.struct_size = CTL_HOST_API_STRUCT_SIZE;
    api.context = this;
    api.alloc = [](void* context, size_t size, size_t alignment) -> void* {
      void* p = nullptr;
      if (posix_memalign(&p, alignment, size ? size : 1) != 0) return nullptr;
      ++static_cast<Host*>(context)->live;
      return p;
    };
    api.free = [](void* context, void* pointer) {
      if (!pointer) return;
      --static_cast<Host*>(context)->live;
      std::free(pointer);
    };
    api.log = [](void*, ctl_log_level, const char*) {};
    api.status_create = [](void* context, ctl_status_code code, const char* message) {
      auto* host = static_cast<Host*>(context);
      host->code = code;
      host->message = message;
      return reinterpret_cast<ctl_status*>(host);
    };
  }
};

ctl_status* properties(ctl_plugin_device*, ctl_plugin_device_properties* out) {
  ctl_plugin_device_properties p{};
  p.name = "test device";
  p.numa_node = 3;
  p.dtype_mask = CTL_DTYPE_BIT(CTL_DTYPE_F32);
  sdk::write_properties(p, out);
  return nullptr;
}
ctl_status* supports(ctl_plugin_device*, const ctl_op_call*) {
  return nullptr;
}
ctl_status* execute(ctl_plugin_stream*, const ctl_op_call*) {
  return nullptr;
}

constexpr ctl_plugin_api kApi = sdk::host_device_api("test", "1.2.3", properties, supports, execute);

TEST(HostDevice, TableHasTheRequiredEntriesAndTheOpEntries) {
  EXPECT_EQ(kApi.struct_size, CTL_PLUGIN_API_STRUCT_SIZE);
  EXPECT_EQ(kApi.abi_major, static_cast<uint32_t>(CTL_ABI_VERSION_MAJOR));
  EXPECT_EQ(kApi.abi_minor, static_cast<uint32_t>(CTL_ABI_VERSION_MINOR));
  EXPECT_STREQ(kApi.name, "test");
  EXPECT_STREQ(kApi.version, "1.2.3");
  EXPECT_EQ(kApi.device_properties, &properties);
  EXPECT_EQ(kApi.op_supports, &supports);
  EXPECT_EQ(kApi.op_execute, &execute);
  for (const void* entry :
       {(const void*)kApi.instance_create, (const void*)kApi.instance_destroy, (const void*)kApi.device_count,
        (const void*)kApi.device_get, (const void*)kApi.buffer_allocate, (const void*)kApi.buffer_free,
        (const void*)kApi.buffer_write, (const void*)kApi.buffer_read, (const void*)kApi.stream_create,
        (const void*)kApi.stream_destroy, (const void*)kApi.stream_synchronize, (const void*)kApi.buffer_host_pointer,
        (const void*)kApi.buffer_wrap_host}) {
    EXPECT_NE(entry, nullptr);
  }
  // Optional entries stay NULL: the core's defaults.
  EXPECT_EQ(kApi.buffer_copy, nullptr);
  EXPECT_EQ(kApi.buffer_fill, nullptr);
  EXPECT_EQ(kApi.event_create, nullptr);
  EXPECT_EQ(kApi.buffer_copy_peer, nullptr);
}

TEST(HostDevice, OneDeviceBuffersAndStreamsAllCountedByTheHost) {
  Host host;
  ctl_plugin_instance* instance = nullptr;
  ASSERT_EQ(kApi.instance_create(&host.api, &instance), nullptr);
  uint32_t count = 0;
  ASSERT_EQ(kApi.device_count(instance, &count), nullptr);
  EXPECT_EQ(count, 1u);
  ctl_plugin_device* device = nullptr;
  ASSERT_EQ(kApi.device_get(instance, 0, &device), nullptr);
  EXPECT_EQ(sdk::host_of(device), &host.api);
  ctl_plugin_device* other = nullptr;
  EXPECT_NE(kApi.device_get(instance, 1, &other), nullptr);
  EXPECT_EQ(host.code, CTL_STATUS_NOT_FOUND);
  EXPECT_EQ(other, nullptr);

  ctl_plugin_stream* stream = nullptr;
  ASSERT_EQ(kApi.stream_create(device, &stream), nullptr);
  EXPECT_EQ(sdk::host_of(stream), &host.api);
  ctl_plugin_buffer* buffer = nullptr;
  ASSERT_EQ(kApi.buffer_allocate(device, 100, &buffer), nullptr);
  EXPECT_EQ(sdk::host_buffer(buffer).size, 100u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(sdk::host_buffer(buffer).data) % 64, 0u);
  const char text[] = "host memory";
  ASSERT_EQ(kApi.buffer_write(stream, buffer, 7, text, sizeof text), nullptr);
  EXPECT_EQ(std::memcmp(sdk::host_buffer(buffer).data + 7, text, sizeof text), 0);
  char back[sizeof text] = {};
  ASSERT_EQ(kApi.buffer_read(stream, buffer, 7, back, sizeof back), nullptr);
  EXPECT_STREQ(back, text);
  EXPECT_EQ(kApi.buffer_write(stream, buffer, 100, nullptr, 0), nullptr);  // size 0, no source
  EXPECT_EQ(kApi.stream_synchronize(stream), nullptr);
  ctl_plugin_buffer* empty = nullptr;
  ASSERT_EQ(kApi.buffer_allocate(device, 0, &empty), nullptr);
  EXPECT_EQ(sdk::host_buffer(empty).size, 0u);
  EXPECT_EQ(host.live, 4);  // instance, stream, two buffers

  kApi.buffer_free(device, empty);
  kApi.buffer_free(device, buffer);
  kApi.stream_destroy(stream);
  kApi.instance_destroy(instance);
  EXPECT_EQ(host.live, 0);
}

// Host memory both ways: a buffer's bytes are its host pointer, and a wrapped buffer reads
// and writes the caller's memory in place and leaves it to the caller when freed (DLPack,
// and a fallback to another host-memory device sharing a tensor). write_properties says so.
TEST(HostDevice, BuffersAreHostMemoryAndWrappedMemoryStaysTheCallers) {
  Host host;
  ctl_plugin_instance* instance = nullptr;
  ASSERT_EQ(kApi.instance_create(&host.api, &instance), nullptr);
  ctl_plugin_device* device = nullptr;
  ASSERT_EQ(kApi.device_get(instance, 0, &device), nullptr);
  ctl_plugin_stream* stream = nullptr;
  ASSERT_EQ(kApi.stream_create(device, &stream), nullptr);
  ctl_plugin_buffer* buffer = nullptr;
  ASSERT_EQ(kApi.buffer_allocate(device, 16, &buffer), nullptr);
  void* pointer = nullptr;
  ASSERT_EQ(kApi.buffer_host_pointer(device, buffer, &pointer), nullptr);
  EXPECT_EQ(pointer, sdk::host_buffer(buffer).data);

  float theirs[4] = {1, 2, 3, 4};
  ctl_plugin_buffer* wrapped = nullptr;
  ASSERT_EQ(kApi.buffer_wrap_host(device, theirs, sizeof theirs, &wrapped), nullptr);
  ASSERT_EQ(kApi.buffer_host_pointer(device, wrapped, &pointer), nullptr);
  EXPECT_EQ(pointer, static_cast<void*>(theirs));
  EXPECT_EQ(sdk::host_buffer(wrapped).size, sizeof theirs);
  const float five = 5;
  ASSERT_EQ(kApi.buffer_write(stream, wrapped, sizeof(float), &five, sizeof five), nullptr);
  EXPECT_EQ(theirs[1], 5.0f) << "written in place";
  EXPECT_EQ(host.live, 4);  // instance, stream, buffer, the wrapped buffer's header
  kApi.buffer_free(device, wrapped);
  EXPECT_EQ(host.live, 3) << "the header goes, the memory stays the caller's";
  EXPECT_EQ(theirs[3], 4.0f);

  ctl_plugin_device_properties out{};
  out.struct_size = sizeof out;
  sdk::write_properties(ctl_plugin_device_properties{}, &out);
  EXPECT_TRUE(out.host_visible);
  kApi.buffer_free(device, buffer);
  kApi.stream_destroy(stream);
  kApi.instance_destroy(instance);
  EXPECT_EQ(host.live, 0);
}

TEST(HostDevice, ImpossibleSizeIsOutOfMemoryNotAWrappedAllocation) {
  Host host;
  ctl_plugin_instance* instance = nullptr;
  ASSERT_EQ(kApi.instance_create(&host.api, &instance), nullptr);
  ctl_plugin_device* device = nullptr;
  ASSERT_EQ(kApi.device_get(instance, 0, &device), nullptr);
  ctl_plugin_buffer* buffer = nullptr;
  EXPECT_NE(kApi.buffer_allocate(device, UINT64_MAX - 8, &buffer), nullptr);
  EXPECT_EQ(host.code, CTL_STATUS_OUT_OF_MEMORY);
  EXPECT_EQ(buffer, nullptr);
  kApi.instance_destroy(instance);
  EXPECT_EQ(host.live, 0);
}

TEST(HostDevice, PropertiesFillOnlyWhatTheCoresStructHolds) {
  ctl_plugin_device_properties out;
  std::memset(&out, 0x5A, sizeof out);
  out.struct_size = offsetof(ctl_plugin_device_properties, dtype_mask);  // an older, smaller struct
  out.next = nullptr;
  ASSERT_EQ(properties(nullptr, &out), nullptr);
  EXPECT_STREQ(out.name, "test device");
  EXPECT_EQ(out.numa_node, 3);
  EXPECT_EQ(out.struct_size, offsetof(ctl_plugin_device_properties, dtype_mask));
  uint32_t untouched;
  std::memset(&untouched, 0x5A, sizeof untouched);
  EXPECT_EQ(out.dtype_mask, untouched);  // past struct_size: not written
}

}  // namespace
