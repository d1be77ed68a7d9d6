// pipelines.cpp — building pipelines and persisting the device's pipeline cache (see
// pipelines.h). The cache file is
//   "CTLVKPC1" | u64 payload size | u64 payload checksum | payload (vkGetPipelineCacheData)
// and is named after the 64-bit key; it is written to a temporary file and renamed, so
// processes sharing the directory never read half a file.
#include "pipelines.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "catalyst/sdk/status.hpp"
#include "plugin.h"
#include "shaders.h"

namespace catalyst::vulkan {
namespace {

constexpr char kMagic[8] = {'C', 'T', 'L', 'V', 'K', 'P', 'C', '1'};
constexpr size_t kHeader = 8 + 8 + 8;

uint64_t fnv1a(const void* data, size_t size, uint64_t hash = 0xcbf29ce484222325ull) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

void append_log(const char* format, ...) __attribute__((format(printf, 1, 2)));
void append_log(const char* format, ...) {
  const char* path = std::getenv("CATALYST_VULKAN_PIPELINE_LOG");
  if (!path || !*path) return;
  char line[512];
  va_list args;
  va_start(args, format);
  const int length = std::vsnprintf(line, sizeof line - 1, format, args);
  va_end(args);
  if (length <= 0) return;
  size_t size = static_cast<size_t>(length) < sizeof line - 1 ? static_cast<size_t>(length) : sizeof line - 2;
  line[size++] = '\n';
  const int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  [[maybe_unused]] const ssize_t written = write(fd, line, size);
  close(fd);
}

bool make_directories(const std::string& path) {
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      const std::string partial = path.substr(0, i);
      if (mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) return false;
    }
  }
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

// The directory the OpenCL plugin's kernel cache uses, with vulkan/ in place of opencl/.
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
  return root + "/vulkan";
}

bool read_file(const std::string& path, std::vector<unsigned char>* out) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  std::vector<unsigned char> data;
  unsigned char chunk[65536];
  size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof chunk, f)) > 0) data.insert(data.end(), chunk, chunk + n);
  std::fclose(f);
  *out = std::move(data);
  return true;
}

}  // namespace

Pipelines::Pipelines(ctl_plugin_device* device) : device_(device) {}

Pipelines::~Pipelines() {
  const DeviceFunctions& fn = device_->fn;
  VkDevice d = device_->device;
  if (!device_->lost) save_cache();
  if (stats_.created > 0) {
    sdk::log(device_->instance->host, CTL_LOG_INFO, "%s%s: %u pipeline(s) created in %.3f s (disk cache %s)",
             kLogPrefix, device_->name.c_str(), stats_.created, stats_.seconds,
             stats_.cache_loaded     ? "loaded"
             : stats_.cache_rejected ? "rejected and rebuilt"
                                     : "empty");
  }
  for (auto& [key, p] : pipelines_) fn.vkDestroyPipeline(d, p->pipeline, nullptr);
  for (auto& [key, m] : modules_) fn.vkDestroyShaderModule(d, m, nullptr);
  for (auto& [n, l] : layouts_) {
    fn.vkDestroyPipelineLayout(d, l.pipeline, nullptr);
    fn.vkDestroyDescriptorSetLayout(d, l.set, nullptr);
  }
  if (cache_) fn.vkDestroyPipelineCache(d, cache_, nullptr);
}

PipelineStats Pipelines::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void Pipelines::open_cache() {
  opened_ = true;
  const ctl_host_api* host = device_->instance->host;
  const std::string directory = cache_directory();
  if (!directory.empty()) {
    if (make_directories(directory)) {
      uint64_t key = fnv1a(device_->pipeline_cache_uuid, VK_UUID_SIZE);
      const uint32_t ids[3] = {device_->vendor_id, device_->device_id, device_->driver_version_raw};
      key = fnv1a(ids, sizeof ids, key);
      const uint64_t shaders = shaders_hash();
      key = fnv1a(&shaders, sizeof shaders, key);
      char name[40];
      std::snprintf(name, sizeof name, "/%016llx.vkpc", static_cast<unsigned long long>(key));
      path_ = directory + name;
    } else {
      sdk::log(host, CTL_LOG_WARNING, "%scannot create the pipeline cache directory %s (%s); pipelines stay in memory",
               kLogPrefix, directory.c_str(), std::strerror(errno));
    }
  }
  std::vector<unsigned char> file;
  const unsigned char* payload = nullptr;
  size_t payload_size = 0;
  if (!path_.empty() && read_file(path_, &file)) {
    const char* problem = nullptr;
    uint64_t size = 0, checksum = 0;
    if (file.size() < kHeader || std::memcmp(file.data(), kMagic, 8) != 0) {
      problem = "no cache header";
    } else {
      std::memcpy(&size, file.data() + 8, 8);
      std::memcpy(&checksum, file.data() + 16, 8);
      if (size != file.size() - kHeader) {
        problem = "truncated";
      } else if (fnv1a(file.data() + kHeader, size) != checksum) {
        problem = "checksum mismatch";
      } else if (size < 16 + VK_UUID_SIZE) {
        problem = "no Vulkan header";
      } else {
        // VkPipelineCacheHeaderVersionOne: length, version, vendor, device, UUID.
        uint32_t header[4];
        std::memcpy(header, file.data() + kHeader, sizeof header);
        if (header[1] != VK_PIPELINE_CACHE_HEADER_VERSION_ONE || header[2] != device_->vendor_id ||
            header[3] != device_->device_id ||
            std::memcmp(file.data() + kHeader + 16, device_->pipeline_cache_uuid, VK_UUID_SIZE) != 0) {
          problem = "written for another device or driver";
        }
      }
    }
    if (problem) {
      sdk::log(host, CTL_LOG_WARNING, "%spipeline cache %s is corrupt (%s); deleted and rebuilt", kLogPrefix,
               path_.c_str(), problem);
      append_log("cache rejected %zu %s", file.size(), problem);
      std::remove(path_.c_str());
      stats_.cache_rejected = true;
    } else {
      payload = file.data() + kHeader;
      payload_size = size;
      stats_.cache_loaded = true;
      append_log("cache loaded %zu", payload_size);
    }
  } else if (!path_.empty()) {
    append_log("cache empty 0");
  }
  VkPipelineCacheCreateInfo info{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  info.initialDataSize = payload_size;
  info.pInitialData = payload;
  if (device_->fn.vkCreatePipelineCache(device_->device, &info, nullptr, &cache_) != VK_SUCCESS) {
    // A driver that refuses the data: start empty rather than go without a cache.
    info.initialDataSize = 0;
    info.pInitialData = nullptr;
    stats_.cache_loaded = false;
    if (device_->fn.vkCreatePipelineCache(device_->device, &info, nullptr, &cache_) != VK_SUCCESS)
      cache_ = VK_NULL_HANDLE;
  }
}

void Pipelines::save_cache() {
  if (path_.empty() || !cache_ || stats_.created == 0) return;
  size_t size = 0;
  if (device_->fn.vkGetPipelineCacheData(device_->device, cache_, &size, nullptr) != VK_SUCCESS || size == 0) return;
  std::vector<unsigned char> data(kHeader + size);
  if (device_->fn.vkGetPipelineCacheData(device_->device, cache_, &size, data.data() + kHeader) != VK_SUCCESS) return;
  data.resize(kHeader + size);
  const uint64_t size64 = size, checksum = fnv1a(data.data() + kHeader, size);
  std::memcpy(data.data(), kMagic, 8);
  std::memcpy(data.data() + 8, &size64, 8);
  std::memcpy(data.data() + 16, &checksum, 8);
  const std::string temporary = path_ + ".tmp." + std::to_string(getpid());
  FILE* f = std::fopen(temporary.c_str(), "wb");
  if (!f) return;
  const bool ok = std::fwrite(data.data(), 1, data.size(), f) == data.size();
  if (std::fclose(f) != 0 || !ok || std::rename(temporary.c_str(), path_.c_str()) != 0) std::remove(temporary.c_str());
}

ctl_status* Pipelines::layout(uint32_t bindings, Layout** out) {
  auto found = layouts_.find(bindings);
  if (found != layouts_.end()) {
    *out = &found->second;
    return nullptr;
  }
  VkDescriptorSetLayoutBinding list[16] = {};
  for (uint32_t i = 0; i < bindings; ++i) {
    list[i].binding = i;
    list[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    list[i].descriptorCount = 1;
    list[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  if (device_->has_push_descriptors) set_info.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
  set_info.bindingCount = bindings;
  set_info.pBindings = list;
  Layout l;
  VkResult r = device_->fn.vkCreateDescriptorSetLayout(device_->device, &set_info, nullptr, &l.set);
  if (r != VK_SUCCESS) return vk_fail(device_, r, "vkCreateDescriptorSetLayout", "pipelines");
  VkPipelineLayoutCreateInfo info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  info.setLayoutCount = 1;
  info.pSetLayouts = &l.set;
  r = device_->fn.vkCreatePipelineLayout(device_->device, &info, nullptr, &l.pipeline);
  if (r != VK_SUCCESS) {
    device_->fn.vkDestroyDescriptorSetLayout(device_->device, l.set, nullptr);
    return vk_fail(device_, r, "vkCreatePipelineLayout", "pipelines");
  }
  *out = &layouts_.emplace(bindings, l).first->second;
  return nullptr;
}

ctl_status* Pipelines::get(const char* shader, uint32_t bindings, uint32_t local_size, const int32_t* spec,
                           uint32_t spec_count, const Pipeline** out) {
  const ctl_host_api* host = device_->instance->host;
  std::string key = std::string(shader) + "/" + std::to_string(bindings) + "/" + std::to_string(local_size);
  for (uint32_t i = 0; i < spec_count; ++i) key += "/" + std::to_string(spec[i]);
  std::lock_guard lock(mutex_);
  if (auto found = pipelines_.find(key); found != pipelines_.end()) {
    *out = found->second.get();
    return nullptr;
  }
  if (!opened_) open_cache();
  if (bindings > 16 || spec_count > 15) {
    return sdk::make_status(host, CTL_STATUS_INTERNAL, "%s%s: too many bindings or constants", kLogPrefix, shader);
  }
  const ShaderCode* code = find_shader(shader);
  if (!code) return sdk::make_status(host, CTL_STATUS_INTERNAL, "%sno shader variant %s", kLogPrefix, shader);
  VkShaderModule module = VK_NULL_HANDLE;
  if (auto m = modules_.find(shader); m != modules_.end()) {
    module = m->second;
  } else {
    VkShaderModuleCreateInfo info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    info.codeSize = code->size;
    info.pCode = reinterpret_cast<const uint32_t*>(code->code);
    const VkResult r = device_->fn.vkCreateShaderModule(device_->device, &info, nullptr, &module);
    if (r != VK_SUCCESS) return vk_fail(device_, r, "vkCreateShaderModule", shader);
    modules_.emplace(shader, module);
  }
  Layout* l = nullptr;
  CTL_SDK_RETURN_IF_ERROR(layout(bindings, &l));
  int32_t values[16];
  VkSpecializationMapEntry entries[16];
  values[0] = static_cast<int32_t>(local_size);
  for (uint32_t i = 0; i < spec_count; ++i) values[i + 1] = spec[i];
  for (uint32_t i = 0; i <= spec_count; ++i)
    entries[i] = {i, static_cast<uint32_t>(i * sizeof(int32_t)), sizeof(int32_t)};
  VkSpecializationInfo specialization{spec_count + 1, entries, (spec_count + 1) * sizeof(int32_t), values};
  VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = module;
  info.stage.pName = "main";
  info.stage.pSpecializationInfo = &specialization;
  info.layout = l->pipeline;
  auto p = std::make_unique<Pipeline>();
  const auto start = std::chrono::steady_clock::now();
  const VkResult r = device_->fn.vkCreateComputePipelines(device_->device, cache_, 1, &info, nullptr, &p->pipeline);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (r != VK_SUCCESS) return vk_fail(device_, r, "vkCreateComputePipelines", shader);
  ++stats_.created;
  stats_.seconds += seconds;
  append_log("pipeline %.6f %s", seconds, key.c_str());
  p->layout = l->pipeline;
  p->set_layout = l->set;
  p->bindings = bindings;
  p->local_size = local_size;
  *out = pipelines_.emplace(key, std::move(p)).first->second.get();
  return nullptr;
}

}  // namespace catalyst::vulkan
