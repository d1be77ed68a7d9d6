// supervisor.h — runs the selected cases group by group in worker processes (at most
// --jobs at a time), with a time limit per case; turns crashes, hangs and leaks into
// results and resumes a group after the case that killed its worker.
#pragma once

#include "options.h"
#include "results.h"

namespace catalyst::conformance {

// Loads the plugin once in a worker and fills results.facts. False (with the worker's
// message) when the plugin or device cannot be used at all.
bool probe_plugin(const Options& options, RunResults& results, std::string* error);

void run_cases(const Options& options, const std::vector<Case>& selected, RunResults& results);

// "catalyst conformance --plugin ... --filter 'ID'": reruns exactly `filter`.
std::string rerun_command(const Options& options, const std::string& filter);

}  // namespace catalyst::conformance
