// commands.h — the subcommands of the `catalyst` tool, each in its own file.
#pragma once

namespace catalyst::cli {

// `catalyst devices [--json] [--plugin PATH]...`: every plugin found and every device.
int devices_command(int argc, char** argv);

// `catalyst topology [--json] [--measure] [--plugin PATH]...`: the machine, where each device
// sits on it, the links between devices and the automatic placement order.
int topology_command(int argc, char** argv);

}  // namespace catalyst::cli

namespace catalyst::cli {

// `catalyst conformance ...`: runs the conformance suite (the catalyst-conformance program
// installed beside this one) with the same arguments.
int conformance_command(int argc, char** argv);

// `catalyst train-gpt ...`: trains a GPT (catalyst-train-gpt, examples/gpt) with the same arguments.
int train_gpt_command(int argc, char** argv);

}  // namespace catalyst::cli
