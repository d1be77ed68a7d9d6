// in_process.h — the in-process communicator: one rank per device of this process, each
// rank used from its own thread. Ranks share memory, so a step of the ring is a read of the
// left neighbour's host buffer between two barriers; every barrier has the call's deadline.
#pragma once

#include <memory>
#include <vector>

#include "backend.h"

namespace catalyst::comm {

// The `size` ranks of a new group; element r is rank r.
std::vector<std::unique_ptr<Backend>> make_in_process_group(uint32_t size);

}  // namespace catalyst::comm
