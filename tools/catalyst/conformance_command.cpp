// conformance_command.cpp — `catalyst conformance` runs catalyst-conformance, the suite's
// own program, found beside this executable. The suite is a separate program because it
// links the core's reference kernels and internals statically, while `catalyst` uses only
// the public ABI of libcatalyst.
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "commands.h"

namespace catalyst::cli {

int conformance_command(int argc, char** argv) {
  char self[PATH_MAX];
  const ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  if (length <= 0) {
    std::fprintf(stderr, "catalyst conformance: cannot find this program's path: %s\n", std::strerror(errno));
    return 3;
  }
  self[length] = '\0';
  std::string dir(self);
  dir.resize(dir.rfind('/'));
  const std::string runner = dir + "/catalyst-conformance";
  // Reports print rerun commands in the form the user typed.
  const std::string invoked_as = std::string(self) + " conformance";
  setenv("CATALYST_CONFORMANCE_COMMAND", invoked_as.c_str(), 1);
  std::vector<char*> args;
  args.push_back(const_cast<char*>(runner.c_str()));
  for (int i = 0; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  execv(runner.c_str(), args.data());
  std::fprintf(stderr, "catalyst conformance: cannot run %s: %s\n", runner.c_str(), std::strerror(errno));
  return 3;
}

}  // namespace catalyst::cli
