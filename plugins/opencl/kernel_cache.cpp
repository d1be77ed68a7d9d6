// kernel_cache.cpp — building, keeping and caching OpenCL programs (see kernel_cache.h).
//
// A disk entry is one file, <hash>.clbin:
//   "CTLCLBIN" | u32 format | u32 reserved | u64 key hash (2x) | u64 payload size |
//   u64 payload checksum | payload (the driver's program binary)
// The key covers the device identity (platform, device, driver versions), the build options
// and the full source text, so a new driver or a changed kernel never meets an old binary.
#include "kernel_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "catalyst/sdk/status.hpp"
#include "cl_errors.h"
#include "kernel_sources.h"
#include "plugin.h"

namespace catalyst::opencl {

struct KernelCache::Program {
  cl_program program = nullptr;
  std::map<std::string, std::unique_ptr<Kernel>> kernels;
};

namespace {

constexpr char kMagic[8] = {'C', 'T', 'L', 'C', 'L', 'B', 'I', 'N'};
constexpr uint32_t kFormat = 1;

struct EntryHeader {
  char magic[8];
  uint32_t format;
  uint32_t reserved;
  uint64_t key_hash[2];
  uint64_t payload_size;
  uint64_t payload_checksum;
};

// FNV-1a, 64 bits; two different bases give the 128-bit key.
uint64_t fnv1a(const void* data, size_t size, uint64_t hash) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}
constexpr uint64_t kBaseA = 0xcbf29ce484222325ull;
constexpr uint64_t kBaseB = 0x84222325cbf29ce4ull;

// With CATALYST_OPENCL_BUILD_LOG=FILE every program build appends one line to FILE:
//   <source|disk> <seconds> <device> <family> <defines>
// One write() with O_APPEND per line, so the worker processes of a conformance run can share
// the file; summing its seconds per kind measures what the disk cache saves.
void append_build_log(const char* kind, double seconds, const std::string& device, const char* family,
                      const std::string& defines) {
  const char* path = std::getenv("CATALYST_OPENCL_BUILD_LOG");
  if (!path || !*path) return;
  char line[768];
  const int length =
      std::snprintf(line, sizeof line, "%s %.6f %s %s %s\n", kind, seconds, device.c_str(), family, defines.c_str());
  if (length <= 0) return;
  const int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const size_t size = static_cast<size_t>(length) < sizeof line ? static_cast<size_t>(length) : sizeof line - 1;
  [[maybe_unused]] const ssize_t written = write(fd, line, size);
  close(fd);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// mkdir -p; false when the directory cannot be made.
bool make_directories(const std::string& path) {
  std::string partial;
  for (size_t i = 0; i <= path.size(); ++i) {
    if (i == path.size() || (path[i] == '/' && i > 0)) {
      partial = path.substr(0, i);
      if (mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) return false;
    }
  }
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

std::string cache_directory() {
  std::string root;
  if (const char* dir = std::getenv("CATALYST_CACHE_DIR"); dir && *dir) {
    if (std::strcmp(dir, "off") == 0) return {};
    root = dir;
  } else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg == '/') {
    root = std::string(xdg) + "/catalyst";
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    root = std::string(home) + "/.cache/catalyst";
  } else {
    return {};
  }
  return root + "/opencl";
}

std::string build_log(cl_program program, cl_device_id device) {
  size_t size = 0;
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS || size == 0) {
    return "(the driver gave no build log)";
  }
  std::string log(size, '\0');
  clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
  log.resize(std::strlen(log.c_str()));
  return log;
}

}  // namespace

KernelCache::KernelCache(const ctl_host_api* host, ctl_plugin_device* device) : host_(host), device_(device) {
  directory_ = cache_directory();
  if (!directory_.empty() && !make_directories(directory_)) {
    sdk::log(host_, CTL_LOG_WARNING, "%scannot create the kernel cache directory %s (%s); programs stay in memory",
             kLogPrefix, directory_.c_str(), std::strerror(errno));
    directory_.clear();
  }
}

KernelCache::~KernelCache() {
  const KernelCacheStats s = stats_;
  if (s.built_from_source + s.loaded_from_disk > 0) {
    sdk::log(host_, CTL_LOG_INFO,
             "%s%s: %u program(s) built from source in %.2f s, %u loaded from the disk cache in %.2f s, %u cache "
             "entr%s rebuilt",
             kLogPrefix, device_->name.c_str(), s.built_from_source, s.source_seconds, s.loaded_from_disk,
             s.disk_seconds, s.rejected_entries, s.rejected_entries == 1 ? "y" : "ies");
  }
  for (auto& [key, program] : programs_) {
    for (auto& [name, kernel] : program->kernels) clReleaseKernel(kernel->kernel);
    if (program->program) clReleaseProgram(program->program);
  }
}

KernelCacheStats KernelCache::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

ctl_status* KernelCache::kernel(const char* family, const std::string& defines, const char* kernel_name,
                                Kernel** out_kernel, const std::string& appendix) {
  std::lock_guard lock(mutex_);
  const std::string key = std::string(family) + " " + defines + (appendix.empty() ? "" : "\n" + appendix);
  auto found = programs_.find(key);
  if (found == programs_.end()) {
    auto program = std::make_unique<Program>();
    CTL_SDK_RETURN_IF_ERROR(build(family, defines, appendix, program.get()));
    found = programs_.emplace(key, std::move(program)).first;
  }
  Program& program = *found->second;
  auto kernel = program.kernels.find(kernel_name);
  if (kernel == program.kernels.end()) {
    auto made = std::make_unique<Kernel>();
    cl_int error = CL_SUCCESS;
    made->kernel = clCreateKernel(program.program, kernel_name, &error);
    if (error != CL_SUCCESS) {
      return sdk::make_status(host_, CTL_STATUS_INTERNAL, "%sclCreateKernel(%s) in family %s (%s) failed: %s (%d)",
                              kLogPrefix, kernel_name, family, defines.c_str(), cl_error_name(error), error);
    }
    size_t limit = 1;
    if (clGetKernelWorkGroupInfo(made->kernel, device_->id, CL_KERNEL_WORK_GROUP_SIZE, sizeof limit, &limit, nullptr) !=
        CL_SUCCESS) {
      limit = device_->max_work_group_size;
    }
    made->max_work_group_size = limit;
    kernel = program.kernels.emplace(kernel_name, std::move(made)).first;
  }
  *out_kernel = kernel->second.get();
  return nullptr;
}

ctl_status* KernelCache::build(const char* family, const std::string& defines, const std::string& appendix,
                               Program* program) {
  const char* common = kernel_source("common");
  const char* body = kernel_source(family);
  if (!common || !body) {
    return sdk::make_status(host_, CTL_STATUS_INTERNAL, "%sno kernel source for family %s", kLogPrefix, family);
  }
  std::string source = std::string(common) + "\n#line 1 \"" + family + ".cl\"\n" + body;
  if (!appendix.empty()) source += "\n#line 1 \"generated.cl\"\n" + appendix;
  // -cl-std=CL1.2: the kernels use nothing newer, so they build on every 1.2+ driver.
  std::string options = "-cl-std=CL1.2 " + defines;
  if (device_->has_fp64) options += " -DCTL_HAVE_FP64=1";
  // IEEE division and sqrt in f32 where the driver can (OpenCL's default allows 2.5 ulp).
  if (device_->fp32_correct_divide_sqrt) options += " -cl-fp32-correctly-rounded-divide-sqrt";

  const std::string key = device_->cache_identity + "\n" + options + "\n" + source;
  const uint64_t hash_a = fnv1a(key.data(), key.size(), kBaseA);
  const uint64_t hash_b = fnv1a(key.data(), key.size(), kBaseB);
  std::string path;
  if (!directory_.empty()) {
    char name[64];
    std::snprintf(name, sizeof name, "/%016llx%016llx.clbin", static_cast<unsigned long long>(hash_a),
                  static_cast<unsigned long long>(hash_b));
    path = directory_ + name;
    const auto start = std::chrono::steady_clock::now();
    if (load_from_disk(path, key, options, &program->program)) {
      append_build_log("disk", seconds_since(start), device_->name, family, defines);
      return nullptr;
    }
  }
  const auto start = std::chrono::steady_clock::now();
  CTL_SDK_RETURN_IF_ERROR(build_from_source(source, options, family, defines, &program->program));
  append_build_log("source", seconds_since(start), device_->name, family, defines);
  if (!path.empty()) store_on_disk(path, key, program->program);
  return nullptr;
}

ctl_status* KernelCache::build_from_source(const std::string& source, const std::string& options, const char* family,
                                           const std::string& defines, cl_program* out) {
  const auto start = std::chrono::steady_clock::now();
  const char* text = source.c_str();
  const size_t length = source.size();
  cl_int error = CL_SUCCESS;
  cl_program program = clCreateProgramWithSource(device_->context, 1, &text, &length, &error);
  if (error != CL_SUCCESS) return cl_fail(host_, error, "clCreateProgramWithSource", family);
  error = clBuildProgram(program, 1, &device_->id, options.c_str(), nullptr, nullptr);
  if (error != CL_SUCCESS) {
    const std::string log = build_log(program, device_->id);
    clReleaseProgram(program);
    // The whole log goes to the log; the status carries its start, which names the first error.
    sdk::log(host_, CTL_LOG_ERROR, "%sbuilding %s (%s) failed:", kLogPrefix, family, defines.c_str());
    host_->log(host_->context, CTL_LOG_ERROR, log.c_str());
    return sdk::make_status(host_, error == CL_BUILD_PROGRAM_FAILURE ? CTL_STATUS_INTERNAL : cl_error_code(error),
                            "%sclBuildProgram for kernel family %s (%s) failed: %s (%d); build log: %.300s", kLogPrefix,
                            family, defines.c_str(), cl_error_name(error), error, log.c_str());
  }
  stats_.built_from_source += 1;
  stats_.source_seconds += seconds_since(start);
  *out = program;
  return nullptr;
}

bool KernelCache::load_from_disk(const std::string& path, const std::string& key, const std::string& options,
                                 cl_program* out) {
  const auto start = std::chrono::steady_clock::now();
  FILE* file = std::fopen(path.c_str(), "rb");
  if (!file) return false;  // not cached yet
  EntryHeader header{};
  std::vector<unsigned char> payload;
  const char* problem = nullptr;
  if (std::fread(&header, sizeof header, 1, file) != 1) {
    problem = "it is shorter than its header";
  } else if (std::memcmp(header.magic, kMagic, sizeof kMagic) != 0 || header.format != kFormat) {
    problem = "its header is not a Catalyst cache header of this version";
  } else if (header.key_hash[0] != fnv1a(key.data(), key.size(), kBaseA) ||
             header.key_hash[1] != fnv1a(key.data(), key.size(), kBaseB)) {
    problem = "it belongs to another key";
  } else if (header.payload_size == 0 || header.payload_size > (uint64_t{1} << 32)) {
    problem = "its payload size is implausible";
  } else {
    payload.resize(header.payload_size);
    if (std::fread(payload.data(), 1, payload.size(), file) != payload.size()) {
      problem = "it is truncated";
    } else if (std::fgetc(file) != EOF) {
      problem = "it has bytes past its payload";
    } else if (fnv1a(payload.data(), payload.size(), kBaseA) != header.payload_checksum) {
      problem = "its checksum does not match";
    }
  }
  std::fclose(file);
  cl_program program = nullptr;
  if (!problem) {
    const unsigned char* binary = payload.data();
    const size_t size = payload.size();
    cl_int binary_status = CL_SUCCESS, error = CL_SUCCESS;
    program = clCreateProgramWithBinary(device_->context, 1, &device_->id, &size, &binary, &binary_status, &error);
    if (error != CL_SUCCESS || binary_status != CL_SUCCESS) {
      problem = "the driver refused the binary (stale?)";
    } else if (clBuildProgram(program, 1, &device_->id, options.c_str(), nullptr, nullptr) != CL_SUCCESS) {
      problem = "the driver could not build the binary (stale?)";
    }
  }
  if (problem) {
    if (program) clReleaseProgram(program);
    sdk::log(host_, CTL_LOG_WARNING, "%skernel cache entry %s is unusable: %s; rebuilding it from source", kLogPrefix,
             path.c_str(), problem);
    std::remove(path.c_str());
    stats_.rejected_entries += 1;
    return false;
  }
  stats_.loaded_from_disk += 1;
  stats_.disk_seconds += seconds_since(start);
  *out = program;
  return true;
}

void KernelCache::store_on_disk(const std::string& path, const std::string& key, cl_program program) {
  size_t size = 0;
  if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) != CL_SUCCESS || size == 0) {
    return;  // the driver offers no binary: nothing to cache
  }
  std::vector<unsigned char> payload(size);
  unsigned char* binaries[1] = {payload.data()};
  if (clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof binaries, binaries, nullptr) != CL_SUCCESS) return;
  EntryHeader header{};
  std::memcpy(header.magic, kMagic, sizeof kMagic);
  header.format = kFormat;
  header.key_hash[0] = fnv1a(key.data(), key.size(), kBaseA);
  header.key_hash[1] = fnv1a(key.data(), key.size(), kBaseB);
  header.payload_size = payload.size();
  header.payload_checksum = fnv1a(payload.data(), payload.size(), kBaseA);
  // Write a private temporary file, then rename: readers (other processes included) see
  // either no entry or a whole one.
  char suffix[48];
  std::snprintf(suffix, sizeof suffix, ".tmp.%d.%p", static_cast<int>(getpid()), static_cast<void*>(this));
  const std::string temporary = path + suffix;
  FILE* file = std::fopen(temporary.c_str(), "wb");
  if (!file) return;
  const bool written = std::fwrite(&header, sizeof header, 1, file) == 1 &&
                       std::fwrite(payload.data(), 1, payload.size(), file) == payload.size();
  const bool closed = std::fclose(file) == 0;
  if (!written || !closed || std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    sdk::log(host_, CTL_LOG_DEBUG, "%scould not write kernel cache entry %s", kLogPrefix, path.c_str());
  }
}

}  // namespace catalyst::opencl
