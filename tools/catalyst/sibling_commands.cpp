// sibling_commands.cpp — subcommands that are programs of their own, installed beside
// `catalyst`: `catalyst conformance` runs catalyst-conformance (it links the core's
// reference kernels and internals statically, while `catalyst` uses only the public ABI of
// libcatalyst), and `catalyst train-gpt` runs catalyst-train-gpt (an example program built
// on the C++ binding).
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
namespace {

// Replaces this process with `program` from this executable's directory.
int exec_sibling(const char* program, const char* command, int argc, char** argv) {
  char self[PATH_MAX];
  const ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  if (length <= 0) {
    std::fprintf(stderr, "catalyst %s: cannot find this program's path: %s\n", command, std::strerror(errno));
    return 3;
  }
  self[length] = '\0';
  std::string dir(self);
  dir.resize(dir.rfind('/'));
  const std::string path = dir + "/" + program;
  // Reports print commands in the form the user typed.
  const std::string invoked_as = std::string(self) + " " + command;
  setenv("CATALYST_INVOKED_AS", invoked_as.c_str(), 1);
  std::vector<char*> args;
  args.push_back(const_cast<char*>(path.c_str()));
  for (int i = 0; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  execv(path.c_str(), args.data());
  std::fprintf(stderr, "catalyst %s: cannot run %s: %s\n", command, path.c_str(), std::strerror(errno));
  return 3;
}

}  // namespace

int conformance_command(int argc, char** argv) {
  return exec_sibling("catalyst-conformance", "conformance", argc, argv);
}

int train_gpt_command(int argc, char** argv) {
  return exec_sibling("catalyst-train-gpt", "train-gpt", argc, argv);
}

}  // namespace catalyst::cli
