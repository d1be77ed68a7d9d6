// plugin_loader.h — finding plugin files, loading them with dlopen, negotiating the ABI
// version and recording, for every candidate, whether it was accepted and why.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "catalyst_plugin.h"
#include "host_api.h"
#include "log.h"

namespace catalyst {

// A candidate plugin file and where discovery found it.
struct PluginCandidate {
  std::string path;
  std::string source;  // "options", "CATALYST_PLUGINS", "CATALYST_PLUGIN_PATH", "installed", "library"
};

// One plugin: either accepted (api and instance set) or rejected with a reason.
struct LoadedPlugin {
  PluginCandidate candidate;
  bool accepted = false;
  std::string reason;
  std::string name;
  std::string version;
  uint32_t abi_major = 0;
  uint32_t abi_minor = 0;
  void* library = nullptr;        // dlopen handle, kept open while the runtime lives
  ctl_plugin_api api{};           // the plugin's table copied into a zeroed full-size one
  std::unique_ptr<HostApi> host;  // the host table this plugin's instance uses
  ctl_plugin_instance* instance = nullptr;
  uint32_t device_count = 0;
};

// Every candidate file, in discovery order, without duplicates (same real path).
std::vector<PluginCandidate> discover_plugins(const char* const* option_paths, size_t option_path_count,
                                              bool disable_discovery, const Logger& logger);

// Loads and negotiates one candidate, creating its instance. Never throws for a bad file:
// a rejected plugin comes back with accepted == false and the reason in words.
std::unique_ptr<LoadedPlugin> load_plugin(const PluginCandidate& candidate, const Logger& logger);

// A candidate recorded as not accepted without loading it (no plugin code runs): what
// ctl_runtime_options.discover_only reports for every candidate.
std::unique_ptr<LoadedPlugin> unloaded_plugin(const PluginCandidate& candidate, std::string reason);

// Accepts a table that is already in memory (the built-in reference kernels), with the
// same checks as a file.
std::unique_ptr<LoadedPlugin> load_builtin_plugin(const std::string& label, ctl_plugin_query_fn query,
                                                  const Logger& logger);

// Destroys the instance; the library stays mapped (plugins are never unloaded while a
// runtime may still run their code).
void unload_plugin(LoadedPlugin& plugin);

}  // namespace catalyst
