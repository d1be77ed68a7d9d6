// plugin_loader.cpp — see plugin_loader.h. Every rejection says why in words, because a
// silent or cryptic rejection is the most common complaint about plugin systems.
#include "plugin_loader.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>

#include "status.h"

namespace catalyst {
namespace fs = std::filesystem;

namespace {

std::vector<std::string> split(const char* text, char separator) {
  std::vector<std::string> parts;
  if (!text) return parts;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, separator)) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

bool is_plugin_file_name(const std::string& name) {
  // libcatalyst-comm-*.so are communication plugins (catalyst_comm.h), found by core/comm.
  return name.starts_with("libcatalyst-") && name.ends_with(".so") && !name.starts_with("libcatalyst-comm-");
}

// Plugin files in `directory`, sorted so discovery order does not depend on the file system.
std::vector<std::string> plugin_files_in(const std::string& directory) {
  std::vector<std::string> files;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(directory, error)) {
    if (is_plugin_file_name(entry.path().filename().string())) files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The directory holding libcatalyst.so itself, found from one of its own symbols.
std::string library_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&discover_plugins), &info) == 0 || !info.dli_fname) return {};
  std::error_code error;
  fs::path path = fs::canonical(info.dli_fname, error);
  if (error) return {};
  return path.parent_path().string();
}

std::string real_path_or_self(const std::string& path) {
  std::error_code error;
  fs::path real = fs::canonical(path, error);
  return error ? path : real.string();
}

const char* kRequiredEntries[] = {"instance_create",   "instance_destroy", "device_count",   "device_get",
                                  "device_properties", "buffer_allocate",  "buffer_free",    "buffer_write",
                                  "buffer_read",       "stream_create",    "stream_destroy", "stream_synchronize",
                                  "op_execute"};

// The required entries of a table, in the order of kRequiredEntries.
std::vector<const void*> required_entries(const ctl_plugin_api& api) {
  return {reinterpret_cast<const void*>(api.instance_create),   reinterpret_cast<const void*>(api.instance_destroy),
          reinterpret_cast<const void*>(api.device_count),      reinterpret_cast<const void*>(api.device_get),
          reinterpret_cast<const void*>(api.device_properties), reinterpret_cast<const void*>(api.buffer_allocate),
          reinterpret_cast<const void*>(api.buffer_free),       reinterpret_cast<const void*>(api.buffer_write),
          reinterpret_cast<const void*>(api.buffer_read),       reinterpret_cast<const void*>(api.stream_create),
          reinterpret_cast<const void*>(api.stream_destroy),    reinterpret_cast<const void*>(api.stream_synchronize),
          reinterpret_cast<const void*>(api.op_execute)};
}

void reject(LoadedPlugin& plugin, std::string reason, const Logger& logger) {
  plugin.accepted = false;
  plugin.reason = std::move(reason);
  logger.printf(CTL_LOG_DEBUG, "plugin %s (%s): rejected: %s", plugin.candidate.path.c_str(),
                plugin.candidate.source.c_str(), plugin.reason.c_str());
}

// Negotiates with `query`, copies the table and creates the instance; `plugin` records
// the outcome.
void negotiate(LoadedPlugin& plugin, ctl_plugin_query_fn query, const Logger& logger) {
  std::string said;
  plugin.host->capture_log(&said);
  const ctl_plugin_api* table = query(CTL_ABI_VERSION_MAJOR, CTL_ABI_VERSION_MINOR, plugin.host->table());
  plugin.host->capture_log(nullptr);
  if (!table) {
    reject(plugin,
           "ctl_plugin_query returned NULL" +
               (said.empty() ? std::string(" without saying why") : " (the plugin said: " + said + ")"),
           logger);
    return;
  }
  if (table->abi_major != CTL_ABI_VERSION_MAJOR) {
    reject(plugin,
           "incompatible ABI major: plugin " + std::to_string(table->abi_major) + ", core " +
               std::to_string(CTL_ABI_VERSION_MAJOR),
           logger);
    return;
  }
  if (table->struct_size < CTL_PLUGIN_API_MIN_STRUCT_SIZE) {
    reject(plugin,
           "function table too small: struct_size " + std::to_string(table->struct_size) + " bytes, at least " +
               std::to_string(CTL_PLUGIN_API_MIN_STRUCT_SIZE) + " needed",
           logger);
    return;
  }
  // Read only what both sides know: an older table leaves the newer entries NULL.
  std::memcpy(&plugin.api, table, std::min(table->struct_size, sizeof(ctl_plugin_api)));
  plugin.api.struct_size = sizeof(ctl_plugin_api);
  const auto entries = required_entries(plugin.api);
  for (size_t i = 0; i < entries.size(); ++i) {
    if (!entries[i]) {
      reject(plugin, std::string("required table entry ") + kRequiredEntries[i] + " is NULL", logger);
      return;
    }
  }
  plugin.name = plugin.api.name ? plugin.api.name : "";
  plugin.version = plugin.api.version ? plugin.api.version : "";
  plugin.abi_major = table->abi_major;
  plugin.abi_minor = std::min<uint32_t>(table->abi_minor, CTL_ABI_VERSION_MINOR);
  if (!plugin.name.empty()) plugin.host->set_label("plugin " + plugin.name);

  ctl_plugin_instance* instance = nullptr;
  if (ctl_status* status = plugin.api.instance_create(plugin.host->table(), &instance)) {
    reject(plugin, std::string("instance_create failed: ") + ctl_status_get_message(status), logger);
    ctl_status_free(status);
    return;
  }
  uint32_t count = 0;
  if (ctl_status* status = plugin.api.device_count(instance, &count)) {
    reject(plugin, std::string("device_count failed: ") + ctl_status_get_message(status), logger);
    ctl_status_free(status);
    plugin.api.instance_destroy(instance);
    return;
  }
  if (count == 0) {
    reject(plugin, "no devices", logger);
    plugin.api.instance_destroy(instance);
    return;
  }
  plugin.instance = instance;
  plugin.device_count = count;
  plugin.accepted = true;
  plugin.reason = "loaded: ABI " + std::to_string(plugin.abi_major) + "." + std::to_string(plugin.abi_minor) + ", " +
                  std::to_string(count) + (count == 1 ? " device" : " devices");
  if (table->struct_size < sizeof(ctl_plugin_api)) {
    plugin.reason += " (older table: newer entries use the core's defaults)";
  }
  logger.printf(CTL_LOG_DEBUG, "plugin %s (%s): accepted: %s", plugin.candidate.path.c_str(),
                plugin.candidate.source.c_str(), plugin.reason.c_str());
}

}  // namespace

std::vector<PluginCandidate> discover_plugins(const char* const* option_paths, size_t option_path_count,
                                              bool disable_discovery, const Logger& logger) {
  std::vector<PluginCandidate> candidates;
  std::set<std::string> seen;
  auto add = [&](const std::string& path, const char* source) {
    const std::string real = real_path_or_self(path);
    if (!seen.insert(real).second) {
      logger.printf(CTL_LOG_DEBUG, "plugin %s (%s): skipped, already a candidate", path.c_str(), source);
      return;
    }
    logger.printf(CTL_LOG_DEBUG, "plugin candidate %s (from %s)", path.c_str(), source);
    candidates.push_back({path, source});
  };
  for (size_t i = 0; i < option_path_count; ++i) {
    if (option_paths && option_paths[i]) add(option_paths[i], "options");
  }
  if (disable_discovery) return candidates;
  for (const auto& file : split(std::getenv("CATALYST_PLUGINS"), ':')) add(file, "CATALYST_PLUGINS");
  for (const auto& directory : split(std::getenv("CATALYST_PLUGIN_PATH"), ':')) {
    logger.printf(CTL_LOG_DEBUG, "searching %s (from CATALYST_PLUGIN_PATH)", directory.c_str());
    for (const auto& file : plugin_files_in(directory)) add(file, "CATALYST_PLUGIN_PATH");
  }
  const std::string library_dir = library_directory();
  // The installed plugin directory is <libdir>/catalyst/plugins, found relative to this
  // library rather than compiled in, so a relocated install (or the build tree, which has
  // the same layout) never picks up plugins of another Catalyst installed elsewhere.
  if (!library_dir.empty()) {
    const std::string directory = library_dir + "/catalyst/plugins";
    logger.printf(CTL_LOG_DEBUG, "searching %s (installed plugin directory)", directory.c_str());
    for (const auto& file : plugin_files_in(directory)) add(file, "installed");
  }
  if (!library_dir.empty()) {
    logger.printf(CTL_LOG_DEBUG, "searching %s (directory of libcatalyst)", library_dir.c_str());
    for (const auto& file : plugin_files_in(library_dir)) add(file, "library");
  }
  return candidates;
}

std::unique_ptr<LoadedPlugin> load_plugin(const PluginCandidate& candidate, const Logger& logger) {
  auto plugin = std::make_unique<LoadedPlugin>();
  plugin->candidate = candidate;
  plugin->host = std::make_unique<HostApi>(&logger, "plugin " + candidate.path);
  std::error_code error;
  if (!fs::exists(candidate.path, error)) {
    reject(*plugin, "file not found", logger);
    return plugin;
  }
  dlerror();
  void* library = dlopen(candidate.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* why = dlerror();
    reject(*plugin, std::string("dlopen failed: ") + (why ? why : "unknown error"), logger);
    return plugin;
  }
  auto query = reinterpret_cast<ctl_plugin_query_fn>(dlsym(library, CTL_PLUGIN_QUERY_SYMBOL));
  if (!query) {
    reject(*plugin, "missing entry symbol " CTL_PLUGIN_QUERY_SYMBOL " (is it a Catalyst plugin?)", logger);
    dlclose(library);
    return plugin;
  }
  // From here the plugin's code has run, so it stays mapped even if rejected.
  plugin->library = library;
  negotiate(*plugin, query, logger);
  return plugin;
}

std::unique_ptr<LoadedPlugin> unloaded_plugin(const PluginCandidate& candidate, std::string reason) {
  auto plugin = std::make_unique<LoadedPlugin>();
  plugin->candidate = candidate;
  plugin->reason = std::move(reason);
  return plugin;
}

std::unique_ptr<LoadedPlugin> load_builtin_plugin(const std::string& label, ctl_plugin_query_fn query,
                                                  const Logger& logger) {
  auto plugin = std::make_unique<LoadedPlugin>();
  plugin->candidate = {label, "builtin"};
  plugin->host = std::make_unique<HostApi>(&logger, label);
  negotiate(*plugin, query, logger);
  return plugin;
}

void unload_plugin(LoadedPlugin& plugin) {
  if (plugin.instance) plugin.api.instance_destroy(plugin.instance);
  plugin.instance = nullptr;
}

}  // namespace catalyst
