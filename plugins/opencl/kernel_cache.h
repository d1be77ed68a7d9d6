// kernel_cache.h — the kernel manager. A program is built on first use for each (device,
// op family, specialisation), where a specialisation is the set of -D defines that picks
// dtypes and variants from the family's one template source. Built programs stay in
// memory for the instance's life, and their binaries go to a disk cache so the next
// process skips the compiler:
//   $CATALYST_CACHE_DIR/opencl, else $XDG_CACHE_HOME/catalyst/opencl, else
//   ~/.cache/catalyst/opencl; CATALYST_CACHE_DIR=off keeps programs in memory only.
// Each entry is keyed by the device, its driver version, the build options and the hash of
// the source; an entry that is truncated, fails its checksum or that the driver refuses is
// logged, rebuilt from source and rewritten. CATALYST_OPENCL_BUILD_LOG=FILE appends a line
// per program build (source or disk, seconds, device, family, defines) to FILE.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "catalyst_plugin.h"
#include "opencl_api.h"

namespace catalyst::opencl {

// One kernel of a built program. OpenCL kernel arguments are state on the cl_kernel, so
// setting them and enqueueing happen under `mutex` (several streams may share a kernel).
struct Kernel {
  cl_kernel kernel = nullptr;
  std::mutex mutex;
  size_t max_work_group_size = 1;  // CL_KERNEL_WORK_GROUP_SIZE for this device
};

// What the cache has done so far (for the log and for tests).
struct KernelCacheStats {
  uint32_t built_from_source = 0;
  double source_seconds = 0;  // wall time in clBuildProgram from source
  uint32_t loaded_from_disk = 0;
  double disk_seconds = 0;        // wall time reading and building cached binaries
  uint32_t rejected_entries = 0;  // corrupt or stale entries that were rebuilt
};

class KernelCache {
 public:
  KernelCache(const ctl_host_api* host, ctl_plugin_device* device);
  ~KernelCache();
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;

  // The kernel `kernel_name` from family `family` (a kernels/<family>.cl file) built with
  // `defines` (e.g. "-DTA=f32"). Builds or loads the program on first use. A failed build
  // returns a status carrying the compiler's log. `appendix`, when not empty, is generated
  // OpenCL C appended to the family's source (a fused elementwise program's kernel): it is
  // part of the program's key here and of the source hash on disk.
  ctl_status* kernel(const char* family, const std::string& defines, const char* kernel_name, Kernel** out_kernel,
                     const std::string& appendix = {});

  KernelCacheStats stats() const;
  // The directory of the disk cache, or "" when it is off.
  const std::string& directory() const { return directory_; }

 private:
  struct Program;
  ctl_status* build(const char* family, const std::string& defines, const std::string& appendix, Program* program);
  ctl_status* build_from_source(const std::string& source, const std::string& options, const char* family,
                                const std::string& defines, cl_program* out);
  bool load_from_disk(const std::string& path, const std::string& key, const std::string& options, cl_program* out);
  void store_on_disk(const std::string& path, const std::string& key, cl_program program);

  const ctl_host_api* host_;
  ctl_plugin_device* device_;
  std::string directory_;
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Program>> programs_;  // by family + defines
  KernelCacheStats stats_;
};

}  // namespace catalyst::opencl
