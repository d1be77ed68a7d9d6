// link_cache_file.cpp — reading and rewriting links.tsv.
#include "topology/link_cache_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace catalyst::topology {
namespace {

std::string cache_root() {
  if (const char* dir = std::getenv("CATALYST_CACHE_DIR"); dir && *dir) {
    if (std::strcmp(dir, "off") == 0) return {};
    return dir;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg == '/') return std::string(xdg) + "/catalyst";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/catalyst";
  return {};
}

bool make_directories(const std::string& path) {
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i != path.size() && path[i] != '/') continue;
    const std::string partial = path.substr(0, i);
    if (mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  struct stat info {};
  return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

}  // namespace

std::string cache_identity(const std::string& text) {
  std::string out = text;
  for (char& c : out)
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  return out;
}

LinkCacheFile::LinkCacheFile() {
  const std::string root = cache_root();
  if (!root.empty()) path_ = root + "/topology/links.tsv";
}

void LinkCacheFile::load_locked() {
  if (loaded_) return;
  loaded_ = true;
  if (path_.empty()) return;
  std::ifstream file(path_);
  std::string line;
  while (std::getline(file, line)) {
    const size_t first = line.find('\t');
    const size_t second = first == std::string::npos ? first : line.find('\t', first + 1);
    if (second == std::string::npos) continue;  // a damaged line is skipped, not fatal
    char* end = nullptr;
    const unsigned long long value = std::strtoull(line.c_str() + second + 1, &end, 10);
    if (*end || value == 0) continue;
    entries_[{line.substr(0, first), line.substr(first + 1, second - first - 1)}] = value;
  }
}

bool LinkCacheFile::lookup(const std::string& from, const std::string& to, uint64_t* out_bytes_per_second) {
  std::lock_guard lock(mutex_);
  load_locked();
  const auto found = entries_.find({from, to});
  if (found == entries_.end()) return false;
  *out_bytes_per_second = found->second;
  return true;
}

bool LinkCacheFile::store(const std::string& from, const std::string& to, uint64_t bytes_per_second,
                          std::string* error) {
  std::lock_guard lock(mutex_);
  load_locked();
  entries_[{from, to}] = bytes_per_second;
  if (path_.empty()) return true;
  const std::string directory = path_.substr(0, path_.rfind('/'));
  if (!make_directories(directory)) {
    *error = "cannot create " + directory + ": " + std::strerror(errno);
    return false;
  }
  std::ostringstream text;
  for (const auto& [key, value] : entries_) text << key.first << '\t' << key.second << '\t' << value << '\n';
  const std::string temporary = path_ + ".tmp" + std::to_string(getpid());
  {
    std::ofstream file(temporary, std::ios::trunc);
    file << text.str();
    if (!file.flush()) {
      *error = "cannot write " + temporary;
      return false;
    }
  }
  if (std::rename(temporary.c_str(), path_.c_str()) != 0) {
    *error = "cannot rename " + temporary + " to " + path_ + ": " + std::strerror(errno);
    std::remove(temporary.c_str());
    return false;
  }
  return true;
}

}  // namespace catalyst::topology
