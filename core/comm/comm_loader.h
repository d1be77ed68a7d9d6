// comm_loader.h — communication plugins: files named libcatalyst-comm-<name>.so found on
// the device plugins' search path (which skips them), loaded once per process and never
// unloaded, each asked for its table through ctl_comm_plugin_query.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend.h"
#include "catalyst_comm.h"
#include "log.h"

namespace catalyst::comm {

struct CommPluginRecord {
  std::string path;
  std::string source;  // as for device plugins: "CATALYST_PLUGINS", "CATALYST_PLUGIN_PATH", ...
  std::string name;
  std::string version;
  bool accepted = false;
  std::string reason;
  uint32_t abi_major = 0, abi_minor = 0;
  ctl_comm_plugin_api api{};  // copied into a zeroed full-size table
};

// Every communication plugin on the search path now, loaded (or rejected, with why).
std::vector<std::shared_ptr<CommPluginRecord>> list_comm_plugins(const Logger& logger);

// Rank of the group the plugin `name` (a short name or a path) forms; `logger` must outlive it.
ctl_status* make_plugin_backend(const std::string& name, const std::string& options, const Logger& logger,
                                std::unique_ptr<Backend>* out_backend);

}  // namespace catalyst::comm
