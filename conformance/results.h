// results.h — what a run produced: one result per case (including the ones the supervisor
// makes up when a worker crashes, hangs or leaks), the facts about the plugin and device,
// and the level reached.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "case.h"
#include "options.h"

namespace catalyst::conformance {

struct CaseResult {
  std::string id, group, op, dtype, label;
  Level level = Level::kCore;
  std::string status;  // pass, fail, unsupported, crash, timeout
  double seconds = 0;
  std::string message;
  std::string rerun;  // the command that runs exactly this case again
  bool failed() const { return status == "fail" || status == "crash" || status == "timeout"; }
};

struct RunResults {
  std::map<std::string, std::string> facts;  // plugin_name, device_name, dtype_mask, ...
  std::vector<CaseResult> cases;             // catalog order
  double seconds = 0;
  std::string level_reached;  // "none", "core", "training", "full", or "n/a (filtered run)"
  std::string level_note;     // why a level was not reached
};

// Decides the level reached from the results (see README: a level is reached when every
// case of it and of the levels below passed, unsupported counting against core).
void decide_level(const Options& options, RunResults& results);

// The summary on stdout, the JSON report and the Markdown table.
void print_summary(const Options& options, const RunResults& results, FILE* out);
bool write_json_report(const Options& options, const RunResults& results, const std::string& path, std::string* error);
bool write_markdown_report(const Options& options, const RunResults& results, const std::string& path,
                           std::string* error);

}  // namespace catalyst::conformance
