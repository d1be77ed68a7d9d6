// main.cpp — catalyst-conformance: `catalyst conformance` runs it. Parses the command line,
// then either supervises a run (the default) or is one of its workers (--worker).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "options.h"
#include "results.h"
#include "supervisor.h"
#include "worker.h"

using namespace catalyst::conformance;

int main(int argc, char** argv) {
  Options o;
  std::string error;
  if (!parse_options(argc - 1, argv + 1, &o, &error)) {
    std::fprintf(stderr, "catalyst conformance: %s\n\n", error.c_str());
    print_usage(stderr);
    return 3;
  }
  if (o.help) {
    print_usage(stdout);
    return 0;
  }
  if (o.worker) {
    o.plugin_path = o.plugin;
    return run_worker(o);
  }
  std::vector<Case> selected;
  for (Case& c : all_cases()) {
    if (c.level <= o.level && case_selected(o, c.id)) selected.push_back(std::move(c));
  }
  if (o.list) {
    for (const Case& c : selected) std::printf("%-40s %-8s %s\n", c.id.c_str(), level_name(c.level), c.label.c_str());
    std::fprintf(stderr, "%zu cases\n", selected.size());
    return 0;
  }
  if (selected.empty()) {
    std::fprintf(
        stderr, "catalyst conformance: no case matches --filter '%s' but not --exclude '%s' at level %s (see --list)\n",
        o.filter.c_str(), o.exclude.c_str(), level_name(o.level));
    return 3;
  }
  if (!resolve_plugin(o.plugin, &o.plugin_path, &error)) {
    std::fprintf(stderr, "catalyst conformance: %s\n", error.c_str());
    return 3;
  }
  // The workers' large cases move gigabytes through fresh host memory, and on virtual
  // machines a 4 KiB page fault is dear: glibc backing its large blocks with transparent huge
  // pages took adamw_step.f32.large from 52 s to 30 s on a 2-core VM. A caller's own setting
  // of GLIBC_TUNABLES is kept; glibc before 2.35 ignores the tunable.
  if (!std::getenv("GLIBC_TUNABLES")) setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 0);
  RunResults results;
  if (!probe_plugin(o, results, &error)) {
    std::fprintf(stderr, "catalyst conformance: cannot test %s: %s\n", o.plugin_path.c_str(), error.c_str());
    return 3;
  }
  std::fprintf(stderr, "[conformance] %s %s, device %u: %s — %zu cases at level %s, %u job(s)\n",
               results.facts["plugin_name"].c_str(), results.facts["plugin_version"].c_str(), o.device,
               results.facts["device_name"].c_str(), selected.size(), level_name(o.level), o.jobs);
  run_cases(o, selected, results);
  decide_level(o, results);
  if (!o.report_path.empty() && !write_json_report(o, results, o.report_path, &error)) {
    std::fprintf(stderr, "catalyst conformance: %s\n", error.c_str());
  }
  if (!o.markdown_path.empty() && !write_markdown_report(o, results, o.markdown_path, &error)) {
    std::fprintf(stderr, "catalyst conformance: %s\n", error.c_str());
  }
  print_summary(o, results, stdout);
  for (const CaseResult& c : results.cases) {
    if (c.failed()) return 1;
  }
  if (o.filter.empty() && o.exclude.empty() && results.level_reached != level_name(o.level)) return 2;
  return 0;
}
