// fuzz_support.h — what every libFuzzer harness in tests/fuzz/ shares: a reader that turns
// the fuzzer's bytes into the arguments of a small program of API calls, the runtime the
// programs run on (the CPU plugin loaded from its file, as users load it), and the checks
// every call must pass whatever it was given. A failed check aborts, which libFuzzer
// reports as a finding with the input that caused it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "catalyst.h"

namespace fuzz {

// Reports a broken promise of the API and stops; the fuzzer saves the input.
[[noreturn]] inline void fail(const char* what, const char* detail = "") {
  std::fprintf(stderr, "fuzz: broken promise: %s %s\n", what, detail);
  std::abort();
}

// The fuzzer's bytes, read front to back. Past the end every read gives zeros, so any input
// decodes into a program (a short one).
class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  bool empty() const { return used_ >= size_; }
  size_t left() const { return empty() ? 0 : size_ - used_; }

  uint8_t byte() { return empty() ? 0 : data_[used_++]; }

  template <typename T>
  T raw() {
    T value{};
    const size_t n = std::min(sizeof(T), left());
    if (n) std::memcpy(&value, data_ + used_, n);
    used_ += n;
    return value;
  }

  // A choice in [0, n), n >= 1.
  uint32_t below(uint32_t n) { return n <= 256 ? byte() % n : raw<uint32_t>() % n; }

  // A dimension: mostly 0..4, so tensors stay tiny; now and then a hostile value.
  int64_t dim() {
    const uint8_t b = byte();
    return b < 240 ? b % 5 : integer_from(b);
  }

  // An integer argument (an axis, an index, a stride): small values and the edges of int64.
  int64_t integer() {
    const uint8_t b = byte();
    if (b < 128) return static_cast<int64_t>(b % 19) - 9;  // -9 .. 9
    return integer_from(b);
  }

  std::vector<uint8_t> bytes(size_t n) {
    std::vector<uint8_t> out(n, 0);
    const size_t have = std::min(n, left());
    if (have) std::memcpy(out.data(), data_ + used_, have);
    used_ += have;
    return out;
  }

 private:
  int64_t integer_from(uint8_t b) {
    static constexpr int64_t kEdges[] = {
        INT64_MAX,        INT64_MIN,        INT64_MAX - 1,    INT64_MIN + 1,       INT64_MAX / 2, INT64_MAX / 4 + 1,
        int64_t{1} << 31, int64_t{1} << 32, int64_t{1} << 62, -(int64_t{1} << 62), 4096,          -4096};
    if (b % 2) return raw<int64_t>();
    return kEdges[(b / 2) % (sizeof kEdges / sizeof kEdges[0])];
  }

  const uint8_t* data_;
  size_t size_;
  size_t used_ = 0;
};

// Frees `status` and says whether the call succeeded. A failure must carry a known code
// and a message (the ABI promises one that names the argument).
inline bool ok(ctl_status* status) {
  if (!status) return true;
  const ctl_status_code code = ctl_status_get_code(status);
  const char* message = ctl_status_get_message(status);
  if (code == CTL_STATUS_OK) fail("a returned status has the code OK");
  if (!message || !*message) fail("a failure status has no message");
  if (!ctl_status_code_name(code)) fail("a failure status has an unknown code");
  ctl_status_free(status);
  return false;
}

// A value no real handle has: out-parameters start as it and must keep it on failure.
inline ctl_tensor* sentinel() {
  return reinterpret_cast<ctl_tensor*>(uintptr_t{0x5e5e5e50});
}

// The runtime all iterations share, made once: loading a plugin per input would dominate.
struct Runtime {
  ctl_runtime* runtime = nullptr;
  ctl_device* cpu = nullptr;        // the CPU plugin's first device
  ctl_device* reference = nullptr;  // the core's reference kernels

  static Runtime& get() {
    static Runtime instance = make();
    return instance;
  }

 private:
  static Runtime make() {
    Runtime r;
    const char* paths[] = {CATALYST_FUZZ_CPU_PLUGIN};
    ctl_runtime_options o{};
    o.struct_size = CTL_RUNTIME_OPTIONS_STRUCT_SIZE;
    o.plugin_paths = paths;
    o.plugin_path_count = 1;
    o.disable_discovery = true;
    o.enable_reference_device = true;
    if (!ok(ctl_runtime_create(&o, &r.runtime))) fail("cannot create the runtime");
    for (size_t i = 0; i < ctl_runtime_device_count(r.runtime); ++i) {
      ctl_device* device = nullptr;
      if (!ok(ctl_runtime_device(r.runtime, i, &device))) continue;
      ctl_device_info info{};
      info.struct_size = CTL_DEVICE_INFO_STRUCT_SIZE;
      if (!ok(ctl_device_get_info(device, &info))) continue;
      if (!r.cpu && std::strcmp(info.plugin_name, "cpu") == 0) r.cpu = device;
      if (!r.reference && std::strcmp(info.plugin_name, "reference") == 0) r.reference = device;
    }
    if (!r.cpu || !r.reference) fail("the runtime has no CPU plugin device or no reference device");
    return r;
  }
};

// Tensors one input's program made; all released when it ends, so that LeakSanitizer and
// the plugin's buffer accounting see every iteration clean up.
class Pool {
 public:
  Pool() = default;
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  ~Pool() {
    for (ctl_tensor* t : tensors_) ctl_tensor_release(t);
  }
  void add(ctl_tensor* t) { tensors_.push_back(t); }
  size_t size() const { return tensors_.size(); }
  ctl_tensor* at(size_t i) const { return tensors_[i]; }
  ctl_tensor* pick(Input& in) const { return tensors_.empty() ? nullptr : tensors_[in.below(tensors_.size())]; }

 private:
  std::vector<ctl_tensor*> tensors_;
};

// Elements past which a program does not copy a tensor to the host: iterations stay fast.
constexpr int64_t kMaxReadElements = 4096;

// The bytes of `t` as contiguous host data, or empty when it is too large to read.
inline std::vector<uint8_t> host_bytes(const ctl_tensor* t) {
  const int64_t n = ctl_tensor_numel(t);
  if (n < 0 || n > kMaxReadElements) return {};
  std::vector<uint8_t> bytes(static_cast<size_t>(n) * ctl_dtype_size(ctl_tensor_dtype(t)) + 1);
  if (!ok(ctl_tensor_to_host(t, bytes.data(), bytes.size() - 1))) fail("ctl_tensor_to_host failed on a valid tensor");
  bytes.pop_back();  // the spare byte keeps data() non-NULL for an empty tensor
  return bytes;
}

}  // namespace fuzz
