// pipelines.h — compute pipelines, built on first use per (shader variant, specialisation)
// and kept for the device's life, through one VkPipelineCache per device that is persisted
// on disk so the next process skips most of the driver's compiler:
//   $CATALYST_CACHE_DIR/vulkan, else $XDG_CACHE_HOME/catalyst/vulkan, else
//   ~/.cache/catalyst/vulkan; CATALYST_CACHE_DIR=off keeps pipelines in memory only.
// The file is keyed by the device's pipelineCacheUUID, vendor and device ids, driver version
// and the hash of every embedded shader. It carries a checksum; a file that is truncated,
// fails its checksum or whose Vulkan header belongs to another device is logged, deleted
// and rebuilt. CATALYST_VULKAN_PIPELINE_LOG=FILE appends one line per cache load
// ("cache <loaded|empty|rejected> <bytes>") and per pipeline ("pipeline <seconds> <key>").
//
// Every shader takes its parameters at binding 0 and its tensors at bindings 1..n, all
// storage buffers; specialisation constant 0 is the work-group size, 1.. the shader's own.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "catalyst_plugin.h"
#include "vk_api.h"

namespace catalyst::vulkan {

struct Pipeline {
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  uint32_t bindings = 0;
  uint32_t local_size = 1;
};

struct PipelineStats {
  uint32_t created = 0;
  double seconds = 0;         // in vkCreateComputePipelines
  bool cache_loaded = false;  // a valid file was found
  bool cache_rejected = false;
};

class Pipelines {
 public:
  explicit Pipelines(ctl_plugin_device* device);
  ~Pipelines();  // writes the cache file when this process created pipelines
  Pipelines(const Pipelines&) = delete;
  Pipelines& operator=(const Pipelines&) = delete;

  // The pipeline of variant `shader` with `bindings` storage buffers (params included),
  // `local_size` invocations per group and spec constants 1..spec_count.
  ctl_status* get(const char* shader, uint32_t bindings, uint32_t local_size, const int32_t* spec, uint32_t spec_count,
                  const Pipeline** out);
  PipelineStats stats() const;
  const std::string& cache_path() const { return path_; }

 private:
  struct Layout {
    VkDescriptorSetLayout set = VK_NULL_HANDLE;
    VkPipelineLayout pipeline = VK_NULL_HANDLE;
  };
  void open_cache();  // mutex_ held, once
  void save_cache();
  ctl_status* layout(uint32_t bindings, Layout** out);

  ctl_plugin_device* device_;
  mutable std::mutex mutex_;
  bool opened_ = false;
  std::string path_;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  std::map<uint32_t, Layout> layouts_;
  std::map<std::string, std::unique_ptr<Pipeline>> pipelines_;
  std::map<std::string, VkShaderModule> modules_;
  PipelineStats stats_;
};

}  // namespace catalyst::vulkan
