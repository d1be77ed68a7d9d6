// safetensors_fuzzer.cpp — libFuzzer harness for catalyst::load_safetensors
// (bindings/cpp/include/catalyst/safetensors.hpp): the input is the whole file. It is
// written to an in-memory file and loaded by its /proc path, as a checkpoint on disk is.
//
// The loader promises to check every fact of the header and to throw catalyst::Error with
// INVALID_ARGUMENT for anything wrong; any other exception, a crash or a sanitizer report is
// a finding. When a file loads, every tensor small enough is made on the CPU plugin and
// read back, and must hold exactly the bytes its data_offsets name.
#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include "catalyst/safetensors.hpp"
#include "fuzz_support.h"

namespace {

// One in-memory file for the whole run, truncated and rewritten per input.
int memory_file() {
  static const int fd = [] {
    const int f = memfd_create("safetensors-fuzz", MFD_CLOEXEC);
    if (f < 0) fuzz::fail("memfd_create failed");
    return f;
  }();
  return fd;
}

void write_input(const uint8_t* data, size_t size) {
  const int fd = memory_file();
  if (ftruncate(fd, 0) != 0) fuzz::fail("ftruncate failed");
  size_t done = 0;
  while (done < size) {
    const ssize_t n = pwrite(fd, data + done, size - done, static_cast<off_t>(done));
    if (n <= 0) fuzz::fail("pwrite failed");
    done += static_cast<size_t>(n);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Runtime& rt = fuzz::Runtime::get();
  write_input(data, size);
  const std::string path = "/proc/self/fd/" + std::to_string(memory_file());
  catalyst::SafetensorsFile file;
  try {
    file = catalyst::load_safetensors(path);
  } catch (const catalyst::Error& error) {
    if (error.code() != CTL_STATUS_INVALID_ARGUMENT)
      fuzz::fail("load_safetensors threw a code other than INVALID_ARGUMENT", error.what());
    return 0;
  } catch (const std::exception& error) {
    fuzz::fail("load_safetensors threw something other than catalyst::Error:", error.what());
  }
  // Loaded: the header's promises hold for every tensor.
  catalyst::Device device(rt.cpu);
  for (const auto& entry : file.entries) {
    const uint64_t bytes = entry.end - entry.begin;
    if (entry.end > file.data.size() || entry.begin > entry.end) fuzz::fail("a loaded entry lies outside the data");
    if (bytes > 65536) continue;
    try {
      catalyst::Tensor t = file.tensor(entry.name, device);
      const std::vector<uint8_t> back = fuzz::host_bytes(t.get());
      if (ctl_tensor_numel(t.get()) <= fuzz::kMaxReadElements &&
          (back.size() != bytes || (bytes && std::memcmp(back.data(), file.data.data() + entry.begin, bytes) != 0))) {
        fuzz::fail("a loaded tensor does not hold its bytes");
      }
    } catch (const catalyst::Error& error) {
      // Refused by design with INVALID_ARGUMENT: a BOOL tensor holding a byte other than 0
      // or 1, a rank above CTL_MAX_RANK (the format has no limit; Catalyst's tensors do).
      if (error.code() != CTL_STATUS_INVALID_ARGUMENT) fuzz::fail("a loaded tensor could not be made:", error.what());
    }
  }
  return 0;
}
