// topology_describe.h — the whole picture of one runtime as text (what `catalyst topology`
// prints) or JSON (`catalyst topology --json`, and what bindings parse): the machine, each
// device with its locality and memory, the link matrix and the automatic placement order.
#pragma once

#include <string>

#include "catalyst.h"

namespace catalyst {

std::string describe_topology_text(const ctl_runtime& runtime);
std::string describe_topology_json(const ctl_runtime& runtime);

}  // namespace catalyst
