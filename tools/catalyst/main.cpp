// main.cpp — `catalyst`: the command users and vendors run. Dispatches to subcommands.
#include <cstdio>
#include <cstring>
#include <string>

#include "catalyst.h"
#include "commands.h"

namespace {

void print_usage(FILE* out) {
  std::fprintf(out,
               "usage: catalyst <command> [options]\n"
               "\n"
               "commands:\n"
               "  devices [--json] [--plugin PATH]...   list plugins (accepted or rejected, and why) and devices\n"
               "                                        with their names (catalyst devices --help)\n"
               "  topology [--json] [--measure]         the machine, where each device sits, the links between\n"
               "                                        devices and the placement order (catalyst topology --help)\n"
               "  conformance --plugin PATH|NAME [...]  run the conformance suite against a plugin\n"
               "                                        (catalyst conformance --help for its options)\n"
               "  train-gpt [--data FILE] [...]         train a byte-level GPT from scratch and sample from it\n"
               "                                        (catalyst train-gpt --help for its options)\n"
               "  version                               print the ABI version of the loaded library\n"
               "  help                                  show this text\n"
               "\n"
               "environment:\n"
               "  CATALYST_PLUGINS=FILE[:FILE...]       extra plugin files to load\n"
               "  CATALYST_PLUGIN_PATH=DIR[:DIR...]     extra directories to search for libcatalyst-*.so\n"
               "  CATALYST_DEVICE=NAME                  the default device of every program (cpu:0, opencl:1,\n"
               "                                        ...: the names catalyst devices prints)\n"
               "  CATALYST_CPU_DEVICES=numa|1|N          the CPU as one device per NUMA node (default), one device,\n"
               "                                        or N devices of equal core sets (plugins/cpu/README.md)\n"
               "  CATALYST_TOPOLOGY=FILE                hwloc XML or JSON that replaces topology detection\n"
               "                                        (docs/topology.md)\n"
               "  CATALYST_CACHE_DIR=DIR|off            where kernel, pipeline and link-measurement caches live\n"
               "  CATALYST_LOG=debug|info|warning|error|off   log level (debug shows every plugin candidate)\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_usage(stderr);
    return 2;
  }
  const std::string command = argv[1];
  if (command == "devices") return catalyst::cli::devices_command(argc - 2, argv + 2);
  if (command == "topology") return catalyst::cli::topology_command(argc - 2, argv + 2);
  if (command == "conformance") return catalyst::cli::conformance_command(argc - 2, argv + 2);
  if (command == "train-gpt") return catalyst::cli::train_gpt_command(argc - 2, argv + 2);
  if (command == "version" || command == "--version") {
    uint32_t major = 0, minor = 0;
    ctl_abi_version(&major, &minor);
    std::printf("catalyst ABI %u.%u (headers %d.%d)\n", major, minor, CTL_ABI_VERSION_MAJOR, CTL_ABI_VERSION_MINOR);
    return 0;
  }
  if (command == "help" || command == "--help" || command == "-h") {
    print_usage(stdout);
    return 0;
  }
  std::fprintf(stderr, "catalyst: unknown command '%s'\n\n", command.c_str());
  print_usage(stderr);
  return 2;
}
