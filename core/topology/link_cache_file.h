// link_cache_file.h — measured copy bandwidths kept on disk between runs, so that a link
// is timed once per machine, not once per program: <cache>/topology/links.tsv where <cache>
// is $CATALYST_CACHE_DIR, else $XDG_CACHE_HOME/catalyst, else ~/.cache/catalyst (the same
// root as the OpenCL plugin's kernel cache; CATALYST_CACHE_DIR=off keeps measurements in
// memory only). One line per ordered pair: identity of the source device, a tab, identity
// of the destination, a tab, bytes per second. An identity names the host and the device
// (plugin, name, runtime name, PCI bus id, UUID, NUMA node), so a changed machine or device
// simply misses. Deleting the file forgets every measurement.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace catalyst::topology {

class LinkCacheFile {
 public:
  // The file for the current environment; path() is "" when caching on disk is off.
  LinkCacheFile();
  explicit LinkCacheFile(std::string path) : path_(std::move(path)) {}

  const std::string& path() const { return path_; }
  // The cached figure of from → to; false when there is none.
  bool lookup(const std::string& from, const std::string& to, uint64_t* out_bytes_per_second);
  // Adds or replaces a figure and rewrites the file (through a temporary file and a rename,
  // so a reader never sees half a file). `error` receives why it could not be written.
  bool store(const std::string& from, const std::string& to, uint64_t bytes_per_second, std::string* error);

 private:
  void load_locked();
  std::string path_;
  std::mutex mutex_;
  bool loaded_ = false;
  std::map<std::pair<std::string, std::string>, uint64_t> entries_;
};

// An identity with tabs and newlines replaced, fit for one field of the file.
std::string cache_identity(const std::string& text);

}  // namespace catalyst::topology
