// comm_loader.cpp — see comm_loader.h. Rejections say why in words, as device plugins' do.
#include "comm_loader.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "host_api.h"
#include "status.h"

namespace catalyst::comm {
namespace fs = std::filesystem;
namespace {

constexpr const char* kPrefix = "libcatalyst-comm-";

bool is_comm_plugin_file(const fs::path& path) {
  const std::string name = path.filename().string();
  return name.starts_with(kPrefix) && name.ends_with(".so");
}

std::vector<std::string> split(const char* text) {
  std::vector<std::string> parts;
  std::stringstream stream(text ? text : "");
  std::string part;
  while (std::getline(stream, part, ':')) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

std::string library_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&list_comm_plugins), &info) == 0 || !info.dli_fname) return {};
  std::error_code error;
  const fs::path path = fs::canonical(info.dli_fname, error);
  return error ? std::string() : path.parent_path().string();
}

struct Candidate {
  std::string path, source;
};

// The directories searched, in order, for NOT_FOUND messages and discovery.
std::vector<Candidate> search_directories() {
  std::vector<Candidate> directories;
  for (const auto& d : split(std::getenv("CATALYST_PLUGIN_PATH"))) directories.push_back({d, "CATALYST_PLUGIN_PATH"});
  const std::string library = library_directory();
  if (!library.empty()) {
    directories.push_back({library + "/catalyst/plugins", "installed"});
    directories.push_back({library, "library"});
  }
  return directories;
}

std::vector<Candidate> discover() {
  std::vector<Candidate> candidates;
  std::set<std::string> seen;
  auto add = [&](const fs::path& path, const std::string& source) {
    std::error_code error;
    const fs::path real = fs::canonical(path, error);
    if (seen.insert(error ? path.string() : real.string()).second) candidates.push_back({path.string(), source});
  };
  for (const auto& file : split(std::getenv("CATALYST_PLUGINS"))) {
    if (is_comm_plugin_file(file)) add(file, "CATALYST_PLUGINS");
  }
  for (const auto& directory : search_directories()) {
    std::vector<fs::path> files;
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(directory.path, error)) {
      if (is_comm_plugin_file(entry.path())) files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) add(f, directory.source);
  }
  return candidates;
}

std::mutex registry_mutex;
std::map<std::string, std::shared_ptr<CommPluginRecord>> registry;  // by path; never unloaded

std::shared_ptr<CommPluginRecord> load(const Candidate& candidate, const Logger& logger) {
  std::lock_guard lock(registry_mutex);
  if (auto it = registry.find(candidate.path); it != registry.end()) return it->second;
  auto record = std::make_shared<CommPluginRecord>();
  record->path = candidate.path;
  record->source = candidate.source;
  registry[candidate.path] = record;
  auto reject = [&](std::string why) {
    record->reason = std::move(why);
    logger.printf(CTL_LOG_DEBUG, "comm plugin %s: rejected: %s", record->path.c_str(), record->reason.c_str());
    return record;
  };
  dlerror();
  void* library = dlopen(candidate.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* why = dlerror();
    return reject(std::string("dlopen failed: ") + (why ? why : "unknown error"));
  }
  auto query = reinterpret_cast<ctl_comm_plugin_query_fn>(dlsym(library, CTL_COMM_PLUGIN_QUERY_SYMBOL));
  if (!query) return reject("missing entry symbol " CTL_COMM_PLUGIN_QUERY_SYMBOL " (is it a communication plugin?)");
  HostApi host(&logger, "comm plugin " + candidate.path);
  std::string said;
  host.capture_log(&said);
  const ctl_comm_plugin_api* table = query(CTL_ABI_VERSION_MAJOR, CTL_ABI_VERSION_MINOR, host.table());
  host.capture_log(nullptr);
  if (!table) {
    return reject("ctl_comm_plugin_query returned NULL" +
                  (said.empty() ? std::string(" without saying why") : " (the plugin said: " + said + ")"));
  }
  if (table->abi_major != CTL_ABI_VERSION_MAJOR) {
    return reject("incompatible ABI major: plugin " + std::to_string(table->abi_major) + ", core " +
                  std::to_string(CTL_ABI_VERSION_MAJOR));
  }
  if (table->struct_size < CTL_COMM_PLUGIN_API_STRUCT_SIZE) {
    return reject("function table too small: struct_size " + std::to_string(table->struct_size) + " bytes, at least " +
                  std::to_string(CTL_COMM_PLUGIN_API_STRUCT_SIZE) + " needed");
  }
  std::memcpy(&record->api, table, std::min(table->struct_size, sizeof(ctl_comm_plugin_api)));
  record->api.struct_size = sizeof(ctl_comm_plugin_api);
  const ctl_comm_plugin_api& api = record->api;
  if (!api.communicator_create || !api.communicator_destroy || !api.communicator_rank_size || !api.communicator_run) {
    return reject("a required table entry is NULL");
  }
  record->name = api.name ? api.name : "";
  record->version = api.version ? api.version : "";
  record->abi_major = table->abi_major;
  record->abi_minor = std::min<uint32_t>(table->abi_minor, CTL_ABI_VERSION_MINOR);
  record->accepted = true;
  record->reason = "loaded: ABI " + std::to_string(record->abi_major) + "." + std::to_string(record->abi_minor);
  logger.printf(CTL_LOG_DEBUG, "comm plugin %s: accepted: %s", record->path.c_str(), record->reason.c_str());
  return record;
}

class PluginBackend final : public Backend {
 public:
  PluginBackend(std::shared_ptr<CommPluginRecord> plugin, std::unique_ptr<HostApi> host,
                ctl_comm_plugin_communicator* communicator, uint32_t rank, uint32_t size)
      : plugin_(std::move(plugin)), host_(std::move(host)), communicator_(communicator), rank_(rank), size_(size) {}
  ~PluginBackend() override { plugin_->api.communicator_destroy(communicator_, broken_); }
  ctl_status* run(const ctl_comm_call& call) override { return plugin_->api.communicator_run(communicator_, &call); }
  uint32_t rank() const override { return rank_; }
  uint32_t size() const override { return size_; }
  const char* name() const override { return plugin_->name.c_str(); }
  void mark_broken() override { broken_ = true; }

 private:
  std::shared_ptr<CommPluginRecord> plugin_;
  std::unique_ptr<HostApi> host_;
  ctl_comm_plugin_communicator* communicator_;
  uint32_t rank_, size_;
  bool broken_ = false;
};

}  // namespace

std::vector<std::shared_ptr<CommPluginRecord>> list_comm_plugins(const Logger& logger) {
  std::vector<std::shared_ptr<CommPluginRecord>> out;
  for (const auto& candidate : discover()) out.push_back(load(candidate, logger));
  return out;
}

ctl_status* make_plugin_backend(const std::string& name, const std::string& options, const Logger& logger,
                                std::unique_ptr<Backend>* out_backend) {
  std::shared_ptr<CommPluginRecord> plugin;
  if (name.find('/') != std::string::npos) {
    std::error_code error;
    if (!fs::exists(name, error)) {
      return make_status(CTL_STATUS_NOT_FOUND, "communication plugin file '%s' does not exist", name.c_str());
    }
    plugin = load({name, "options"}, logger);
  } else {
    const std::string file = kPrefix + name + ".so";
    for (const auto& candidate : discover()) {
      if (fs::path(candidate.path).filename() == file) {
        plugin = load(candidate, logger);
        break;
      }
    }
    if (!plugin) {
      std::string searched;
      for (const auto& d : search_directories()) searched += (searched.empty() ? "" : ", ") + d.path;
      return make_status(CTL_STATUS_NOT_FOUND,
                         "no communication plugin '%s': no %s in CATALYST_PLUGINS or in the directories searched "
                         "(%s)",
                         name.c_str(), file.c_str(), searched.empty() ? "none" : searched.c_str());
    }
  }
  if (!plugin->accepted) {
    return make_status(CTL_STATUS_NOT_FOUND, "communication plugin %s was rejected: %s", plugin->path.c_str(),
                       plugin->reason.c_str());
  }
  auto host = std::make_unique<HostApi>(&logger, "comm plugin " + plugin->name);
  ctl_comm_plugin_communicator* communicator = nullptr;
  if (ctl_status* status = plugin->api.communicator_create(host->table(), options.c_str(), &communicator)) {
    return annotate(status, "communication plugin " + plugin->name + ": communicator_create failed");
  }
  uint32_t rank = 0, size = 0;
  ctl_status* status = plugin->api.communicator_rank_size(communicator, &rank, &size);
  if (!status && (size == 0 || rank >= size)) {
    status = make_status(CTL_STATUS_INTERNAL, "communication plugin %s says rank %u of %u ranks", plugin->name.c_str(),
                         rank, size);
  }
  if (status) {
    plugin->api.communicator_destroy(communicator, true);
    return status;
  }
  *out_backend = std::make_unique<PluginBackend>(plugin, std::move(host), communicator, rank, size);
  return nullptr;
}

}  // namespace catalyst::comm
