// worker.h — the child process that runs one group of cases (or only probes the plugin)
// and reports to the supervisor through the protocol of protocol.h.
#pragma once

#include "options.h"

namespace catalyst::conformance {

int run_worker(const Options& options);

}  // namespace catalyst::conformance
