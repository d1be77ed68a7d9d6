// cpu_peer_copy_test.cpp — the CPU plugin's ABI 1.4 table and buffer_copy_peer, driven
// through the plugin's own table with a host table of this test's (no core in between):
// a 1.4 core gets the 1.4 table with the entry, older cores the 1.2 table without it; a
// copy from cpu:0 to cpu:1 is exact, lands only in its range, and comes after the work
// that wrote its source and the event the destination stream waited on; bad ranges and a
// device of another instance are refused and change nothing.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "catalyst_plugin.h"

namespace {

// This test's statuses: the plugin creates them through the host table and the test
// reads and frees them; they never reach the core, so the opaque type is ours here.
struct TestStatus {
  ctl_status_code code;
  std::string message;
};

struct TestHost {
  std::atomic<long> live_allocations{0};
  ctl_host_api api{};
  TestHost() {
    api.struct_size = CTL_HOST_API_STRUCT_SIZE;
    api.abi_major = CTL_ABI_VERSION_MAJOR;
    api.abi_minor = CTL_ABI_VERSION_MINOR;
    api.context = this;
    api.alloc = [](void* context, size_t size, size_t alignment) -> void* {
      void* p = nullptr;
      if (posix_memalign(&p, alignment, size ? size : 1) != 0) return nullptr;
      ++static_cast<TestHost*>(context)->live_allocations;
      return p;
    };
    api.free = [](void* context, void* pointer) {
      if (!pointer) return;
      --static_cast<TestHost*>(context)->live_allocations;
      std::free(pointer);
    };
    api.log = [](void*, ctl_log_level, const char*) {};
    api.status_create = [](void*, ctl_status_code code, const char* message) -> ctl_status* {
      return reinterpret_cast<ctl_status*>(new TestStatus{code, message ? message : ""});
    };
  }
};

// Takes a status from the plugin: "" for success, else "CODE message".
std::string take(ctl_status* status) {
  if (!status) return "";
  auto* s = reinterpret_cast<TestStatus*>(status);
  std::string text = std::to_string(static_cast<int>(s->code)) + " " + s->message;
  delete s;
  return text;
}
ctl_status_code code_of(ctl_status* status) {
  if (!status) return CTL_STATUS_OK;
  auto* s = reinterpret_cast<TestStatus*>(status);
  const ctl_status_code code = s->code;
  delete s;
  return code;
}

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_.c_str(), old_.c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

ctl_plugin_query_fn load_query() {
  void* library = dlopen(CTL_TEST_CPU_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  if (!library) return nullptr;
  return reinterpret_cast<ctl_plugin_query_fn>(dlsym(library, CTL_PLUGIN_QUERY_SYMBOL));
}

TEST(CpuPeerCopy, ACore14GetsThe14TableAndOlderCoresTheTableTheyKnow) {
  TestHost host;
  const ctl_plugin_query_fn query = load_query();
  ASSERT_NE(query, nullptr) << dlerror();
  const ctl_plugin_api* api14 = query(1, 4, &host.api);
  ASSERT_NE(api14, nullptr);
  EXPECT_EQ(api14->abi_minor, 4u);
  EXPECT_EQ(api14->struct_size, CTL_PLUGIN_API_STRUCT_SIZE);
  EXPECT_NE(api14->buffer_copy_peer, nullptr);
  for (uint32_t minor : {2u, 3u}) {
    const ctl_plugin_api* api = query(1, minor, &host.api);
    ASSERT_NE(api, nullptr);
    EXPECT_EQ(api->abi_minor, 2u) << "core 1." << minor;
    EXPECT_EQ(api->struct_size, CTL_PLUGIN_API_1_2_STRUCT_SIZE) << "core 1." << minor;
  }
  EXPECT_EQ(query(1, 1, &host.api)->abi_minor, 1u);
  EXPECT_EQ(query(1, 0, &host.api)->abi_minor, 0u);
}

// One instance of the plugin split into two devices, with a stream on each.
class TwoDevices : public ::testing::Test {
 protected:
  void SetUp() override {
    const ctl_plugin_query_fn query = load_query();
    ASSERT_NE(query, nullptr);
    api_ = query(1, 4, &host_.api);
    ASSERT_NE(api_, nullptr);
    ScopedEnv devices("CATALYST_CPU_DEVICES", "2");
    ASSERT_EQ(take(api_->instance_create(&host_.api, &instance_)), "");
    uint32_t count = 0;
    ASSERT_EQ(take(api_->device_count(instance_, &count)), "");
    ASSERT_EQ(count, 2u);
    for (uint32_t k = 0; k < 2; ++k) {
      ASSERT_EQ(take(api_->device_get(instance_, k, &device_[k])), "");
      ASSERT_EQ(take(api_->stream_create(device_[k], &stream_[k])), "");
    }
  }
  void TearDown() override {
    for (ctl_plugin_buffer* b : buffers_[0]) api_->buffer_free(device_[0], b);
    for (ctl_plugin_buffer* b : buffers_[1]) api_->buffer_free(device_[1], b);
    for (ctl_plugin_stream* s : stream_) {
      if (s) api_->stream_destroy(s);
    }
    if (instance_) api_->instance_destroy(instance_);
    EXPECT_EQ(host_.live_allocations.load(), 0) << "the plugin leaked host memory";
  }
  ctl_plugin_buffer* buffer(int k, uint64_t size) {
    ctl_plugin_buffer* b = nullptr;
    EXPECT_EQ(take(api_->buffer_allocate(device_[k], size, &b)), "");
    buffers_[k].push_back(b);
    return b;
  }
  std::vector<uint8_t> read(int k, ctl_plugin_buffer* b, uint64_t size) {
    std::vector<uint8_t> out(size);
    EXPECT_EQ(take(api_->buffer_read(stream_[k], b, 0, out.data(), size)), "");
    return out;
  }

  TestHost host_;
  const ctl_plugin_api* api_ = nullptr;
  ctl_plugin_instance* instance_ = nullptr;
  ctl_plugin_device* device_[2] = {};
  ctl_plugin_stream* stream_[2] = {};
  std::vector<ctl_plugin_buffer*> buffers_[2];
};

ctl_tensor_view f32_view(ctl_plugin_buffer* buffer, int64_t n) {
  ctl_tensor_view v{};
  v.struct_size = CTL_TENSOR_VIEW_STRUCT_SIZE;
  v.buffer = buffer;
  v.dtype = CTL_DTYPE_F32;
  v.rank = 1;
  v.shape[0] = n;
  v.strides[0] = 1;
  return v;
}

TEST_F(TwoDevices, APeerCopyIsExactInItsRangeAndFollowsTheSourcesWriter) {
  // cpu:0 computes source = x + x; cpu:1's stream waits on an event recorded after it and
  // copies the sum into the middle of a destination filled with a guard pattern.
  const int64_t n = (int64_t{3} << 18) + 5;  // 3 MiB and a bit: several parts of the copy
  const uint64_t bytes = static_cast<uint64_t>(n) * 4;
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 1000) * 0.25f;
  ctl_plugin_buffer* input = buffer(0, bytes);
  ctl_plugin_buffer* source = buffer(0, bytes);
  ASSERT_EQ(take(api_->buffer_write(stream_[0], input, 0, x.data(), bytes)), "");
  const ctl_tensor_view in = f32_view(input, n), out = f32_view(source, n);
  const ctl_tensor_view* inputs[] = {&in, &in};
  const ctl_tensor_view* outputs[] = {&out};
  ctl_op_call call{};
  call.struct_size = CTL_OP_CALL_STRUCT_SIZE;
  call.op = CTL_OP_ADD;
  call.input_count = 2;
  call.inputs = inputs;
  call.output_count = 1;
  call.outputs = outputs;
  ASSERT_EQ(take(api_->op_execute(stream_[0], &call)), "");
  ctl_plugin_event* written = nullptr;
  ASSERT_EQ(take(api_->event_create(device_[0], &written)), "");
  ASSERT_EQ(take(api_->event_record(written, stream_[0])), "");
  ASSERT_EQ(take(api_->stream_wait_event(stream_[1], written)), "") << "an event of another device of the plugin";

  const uint64_t guard = 4096;
  ctl_plugin_buffer* destination = buffer(1, bytes + 2 * guard);
  const uint8_t pattern = 0xA5;
  ASSERT_EQ(take(api_->buffer_fill(stream_[1], destination, 0, bytes + 2 * guard, &pattern, 1)), "");
  ASSERT_EQ(take(api_->buffer_copy_peer(stream_[1], device_[0], source, 0, destination, guard, bytes)), "");
  ASSERT_EQ(take(api_->stream_synchronize(stream_[1])), "");
  const std::vector<uint8_t> got = read(1, destination, bytes + 2 * guard);
  std::vector<float> sums(n);
  std::memcpy(sums.data(), got.data() + guard, bytes);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(sums[i], x[i] + x[i]) << "element " << i;
  for (uint64_t i = 0; i < guard; ++i) {
    ASSERT_EQ(got[i], pattern) << "byte " << i << " before the range";
    ASSERT_EQ(got[guard + bytes + i], pattern) << "byte " << i << " after the range";
  }
  api_->event_destroy(written);
}

TEST_F(TwoDevices, BadPeerCopiesAreRefusedAndChangeNothing) {
  ctl_plugin_buffer* source = buffer(0, 256);
  ctl_plugin_buffer* destination = buffer(1, 256);
  const uint8_t pattern = 0x3C, other = 0x11;
  ASSERT_EQ(take(api_->buffer_fill(stream_[1], destination, 0, 256, &pattern, 1)), "");
  ASSERT_EQ(take(api_->buffer_fill(stream_[0], source, 0, 256, &other, 1)), "");
  EXPECT_EQ(code_of(api_->buffer_copy_peer(stream_[1], device_[0], source, 200, destination, 0, 100)),
            CTL_STATUS_OUT_OF_RANGE);
  EXPECT_EQ(code_of(api_->buffer_copy_peer(stream_[1], device_[0], source, 0, destination, 157, 100)),
            CTL_STATUS_OUT_OF_RANGE);
  EXPECT_EQ(code_of(api_->buffer_copy_peer(stream_[1], device_[0], source, UINT64_MAX, destination, 0, 2)),
            CTL_STATUS_OUT_OF_RANGE);
  EXPECT_EQ(code_of(api_->buffer_copy_peer(stream_[1], nullptr, source, 0, destination, 0, 8)),
            CTL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(code_of(api_->buffer_copy_peer(stream_[1], device_[0], nullptr, 0, destination, 0, 8)),
            CTL_STATUS_INVALID_ARGUMENT);
  // A device of another instance (another runtime's) is not this stream's peer.
  ctl_plugin_instance* second = nullptr;
  {
    ScopedEnv devices("CATALYST_CPU_DEVICES", "2");
    ASSERT_EQ(take(api_->instance_create(&host_.api, &second)), "");
  }
  ctl_plugin_device* stranger = nullptr;
  ASSERT_EQ(take(api_->device_get(second, 0, &stranger)), "");
  const std::string refused = take(api_->buffer_copy_peer(stream_[1], stranger, source, 0, destination, 0, 8));
  EXPECT_NE(refused.find("belongs to another instance"), std::string::npos) << refused;
  api_->instance_destroy(second);
  for (const uint8_t byte : read(1, destination, 256)) ASSERT_EQ(byte, pattern);
  // A zero-byte copy at the very end is fine.
  EXPECT_EQ(take(api_->buffer_copy_peer(stream_[1], device_[0], source, 256, destination, 256, 0)), "");
}

}  // namespace
