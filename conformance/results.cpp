// results.cpp — the level reached, the summary, and the JSON and Markdown reports.
#include "results.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>

#include "json_writer.h"
#include "supervisor.h"

namespace catalyst::conformance {
namespace {

const std::vector<std::string> kDtypeColumns = {"f32", "f64", "f16", "bf16", "i8", "u8", "i32", "i64", "bool"};

struct Counts {
  size_t pass = 0, fail = 0, unsupported = 0;
};

std::string dtype_list(uint32_t mask) {
  std::string out;
  for (int d = 0; d < CTL_DTYPE_COUNT_; ++d) {
    if (mask & CTL_DTYPE_BIT(d))
      out += (out.empty() ? "" : " ") + std::string(ctl_dtype_name(static_cast<ctl_dtype>(d)));
  }
  return out;
}

std::string fact(const RunResults& r, const char* key) {
  auto it = r.facts.find(key);
  return it == r.facts.end() ? "" : it->second;
}

bool write_file(const std::string& path, const std::string& text, std::string* error) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) {
    *error = "cannot write " + path;
    return false;
  }
  return true;
}

// Every unclaimed op and dtype pair, one entry per op with its dtypes, in catalog order of
// first appearance: "matmul f32 i32 i64; softmax f32 (4 pairs)". Never cut short: the list
// is what a vendor has left to implement.
std::string missing_text(const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::vector<std::string> ops;
  std::map<std::string, std::vector<std::string>> dtypes;
  for (const auto& [op, dtype] : pairs) {
    auto& list = dtypes[op];
    if (list.empty()) ops.push_back(op);
    if (std::find(list.begin(), list.end(), dtype) == list.end()) list.push_back(dtype);
  }
  std::string out;
  size_t count = 0;
  for (const std::string& op : ops) {
    out += (out.empty() ? "" : "; ") + op;
    for (const std::string& d : dtypes[op]) out += " " + d;
    count += dtypes[op].size();
  }
  return out + " (" + std::to_string(count) + (count == 1 ? " pair)" : " pairs)");
}

}  // namespace

void decide_level(const Options& o, RunResults& r) {
  if (!o.filter.empty() || !o.exclude.empty()) {
    r.level_reached = "n/a (filtered run)";
    return;
  }
  // A level is reached when no case at or below it failed, and (core) no required case was
  // unsupported: inference needs the whole op set in the required dtypes.
  bool failed[3] = {false, false, false};
  std::vector<std::pair<std::string, std::string>> missing_core, missing_training;
  for (const CaseResult& c : r.cases) {
    const int l = static_cast<int>(c.level);
    if (c.failed()) failed[l] = true;
    // Training needs the training ops in the required dtypes, as core needs the op set.
    if (c.level == Level::kTraining && c.status == "unsupported") missing_training.emplace_back(c.op, c.dtype);
    // Optional plugin entries (events, buffer_copy, ...) may be absent: an unsupported
    // contract case never holds a plugin back.
    if (c.level == Level::kCore && c.status == "unsupported" && c.op != "contract") {
      missing_core.emplace_back(c.op, c.dtype);
    }
  }
  std::string reached = "none";
  if (!failed[0] && missing_core.empty()) {
    reached = "core";
    if (o.level >= Level::kTraining && !failed[1] && missing_training.empty()) {
      reached = "training";
      if (o.level >= Level::kFull && !failed[2]) reached = "full";
    }
  }
  r.level_reached = reached;
  if (!missing_core.empty()) {
    r.level_note = "core needs every op in f32, i32, i64 and bool where the op takes them; unclaimed: " +
                   missing_text(missing_core);
  } else if (failed[0]) {
    r.level_note = "core cases failed";
  } else if (o.level >= Level::kTraining && !missing_training.empty()) {
    r.level_note = "training needs the training ops in f32; unclaimed: " + missing_text(missing_training);
  } else if (o.level >= Level::kTraining && failed[1]) {
    r.level_note = "training cases failed";
  }
}

void print_summary(const Options& o, const RunResults& r, FILE* out) {
  size_t pass = 0, fail = 0, unsupported = 0, crash = 0, timeout = 0;
  for (const CaseResult& c : r.cases) {
    if (c.status == "pass") ++pass;
    if (c.status == "fail") ++fail;
    if (c.status == "unsupported") ++unsupported;
    if (c.status == "crash") ++crash;
    if (c.status == "timeout") ++timeout;
  }
  for (const CaseResult& c : r.cases) {
    if (!c.failed()) continue;
    std::fprintf(out, "\n%s %s [%s %s, level %s]: %s\n  case: %s\n  %s\n  rerun: %s\n",
                 c.status == "fail"    ? "FAIL"
                 : c.status == "crash" ? "CRASH"
                                       : "TIMEOUT",
                 c.id.c_str(), c.op.c_str(), c.dtype.c_str(), level_name(c.level), c.status.c_str(), c.label.c_str(),
                 c.message.c_str(), c.rerun.c_str());
  }
  std::fprintf(out, "\nCatalyst conformance — plugin %s %s (%s), device %u: %s [%s]\n", fact(r, "plugin_name").c_str(),
               fact(r, "plugin_version").c_str(), o.plugin_path.c_str(), o.device, fact(r, "device_name").c_str(),
               fact(r, "device_kind").c_str());
  const uint32_t mask = static_cast<uint32_t>(std::strtoul(fact(r, "dtype_mask").c_str(), nullptr, 10));
  std::fprintf(out, "  claimed dtypes: %s\n", dtype_list(mask).c_str());
  std::fprintf(
      out, "  %zu cases in %.1f s (seed %llu): %zu passed, %zu failed, %zu crashed, %zu timed out, %zu unsupported\n",
      r.cases.size(), r.seconds, static_cast<unsigned long long>(o.seed), pass, fail, crash, timeout, unsupported);
  std::fprintf(out, "  level requested: %s; level reached: %s%s%s\n", level_name(o.level), r.level_reached.c_str(),
               r.level_note.empty() ? "" : " — ", r.level_note.c_str());
  if (!o.report_path.empty()) std::fprintf(out, "  JSON report: %s\n", o.report_path.c_str());
  if (!o.markdown_path.empty()) std::fprintf(out, "  Markdown report: %s\n", o.markdown_path.c_str());
}

bool write_json_report(const Options& o, const RunResults& r, const std::string& path, std::string* error) {
  cli::JsonWriter j;
  j.begin_object();
  j.value("suite", "catalyst-conformance");
  j.value("abi", std::to_string(CTL_ABI_VERSION_MAJOR) + "." + std::to_string(CTL_ABI_VERSION_MINOR));
  j.begin_object("plugin");
  j.value("path", o.plugin_path);
  j.value("name", fact(r, "plugin_name"));
  j.value("version", fact(r, "plugin_version"));
  j.value("abi", fact(r, "plugin_abi"));
  j.end_object();
  j.begin_object("device");
  j.value("index", o.device);
  j.value("name", fact(r, "device_name"));
  j.value("vendor", fact(r, "device_vendor"));
  j.value("driver_version", fact(r, "device_driver"));
  j.value("kind", fact(r, "device_kind"));
  j.value("dtypes", dtype_list(static_cast<uint32_t>(std::strtoul(fact(r, "dtype_mask").c_str(), nullptr, 10))));
  j.end_object();
  j.value("seed", o.seed);
  j.value("filter", o.filter);
  j.value("exclude", o.exclude);
  j.value("level_requested", level_name(o.level));
  j.value("level_reached", r.level_reached);
  j.value("level_note", r.level_note);
  j.value("seconds", r.seconds);
  std::map<std::string, size_t> totals;
  for (const CaseResult& c : r.cases) ++totals[c.status];
  j.begin_object("summary");
  j.value("cases", static_cast<uint64_t>(r.cases.size()));
  for (const char* s : {"pass", "fail", "crash", "timeout", "unsupported"})
    j.value(s, static_cast<uint64_t>(totals[s]));
  j.end_object();
  j.begin_array("cases");
  for (const CaseResult& c : r.cases) {
    j.begin_object();
    j.value("id", c.id);
    j.value("group", c.group);
    j.value("op", c.op);
    j.value("dtype", c.dtype);
    j.value("level", level_name(c.level));
    j.value("label", c.label);
    j.value("status", c.status);
    j.value("seconds", c.seconds);
    if (!c.message.empty()) j.value("message", c.message);
    if (!c.rerun.empty()) j.value("rerun", c.rerun);
    j.end_object();
  }
  j.end_array();
  j.end_object();
  return write_file(path, j.text() + "\n", error);
}

bool write_markdown_report(const Options& o, const RunResults& r, const std::string& path, std::string* error) {
  // op -> dtype -> counts, in catalog order of ops.
  std::vector<std::string> ops;
  std::map<std::string, std::map<std::string, Counts>> table;
  std::map<std::string, Counts> contract;
  for (const CaseResult& c : r.cases) {
    Counts* k;
    if (c.op == "contract") {
      k = &contract[c.group];
    } else if (c.dtype == "-") {
      continue;  // a group's leak or teardown result: listed under Failures
    } else {
      if (!table.count(c.op)) ops.push_back(c.op);
      k = &table[c.op][c.dtype];
    }
    if (c.status == "pass")
      ++k->pass;
    else if (c.status == "unsupported")
      ++k->unsupported;
    else
      ++k->fail;
  }
  auto cell = [](const Counts& k) -> std::string {
    if (k.pass + k.fail + k.unsupported == 0) return "";
    std::string s;
    if (k.fail) s += "❌ " + std::to_string(k.fail) + " failed";
    if (k.pass) s += (s.empty() ? "" : ", ") + std::string("✅ ") + std::to_string(k.pass);
    if (k.unsupported) s += (s.empty() ? "" : ", ") + std::string("➖ ") + std::to_string(k.unsupported);
    return s;
  };
  std::string md;
  md += "# Catalyst conformance report\n\n";
  md += "| | |\n|---|---|\n";
  md += "| plugin | " + fact(r, "plugin_name") + " " + fact(r, "plugin_version") + " (`" + o.plugin_path + "`) |\n";
  md += "| device | " + std::to_string(o.device) + ": " + fact(r, "device_name") + " (" + fact(r, "device_vendor") +
        ", driver " + fact(r, "device_driver") + ") |\n";
  md += "| claimed dtypes | " +
        dtype_list(static_cast<uint32_t>(std::strtoul(fact(r, "dtype_mask").c_str(), nullptr, 10))) + " |\n";
  md += "| seed | " + std::to_string(o.seed) + " |\n";
  md += "| level requested | " + std::string(level_name(o.level)) + " |\n";
  md += "| level reached | **" + r.level_reached + "**" + (r.level_note.empty() ? "" : " — " + r.level_note) + " |\n";
  std::map<std::string, size_t> totals;
  for (const CaseResult& c : r.cases) ++totals[c.status];
  md += "| cases | " + std::to_string(r.cases.size()) + ": " + std::to_string(totals["pass"]) + " passed, " +
        std::to_string(totals["fail"]) + " failed, " + std::to_string(totals["crash"]) + " crashed, " +
        std::to_string(totals["timeout"]) + " timed out, " + std::to_string(totals["unsupported"]) +
        " unsupported |\n\n";
  md +=
      "✅ passed · ❌ failed (wrong result, contract broken, crash or timeout) · ➖ unsupported (not claimed). "
      "An empty cell: the op does not take that dtype (or --level/--filter left it out).\n\n";
  md += "## Ops × dtypes\n\n| op |";
  for (const auto& d : kDtypeColumns) md += " " + d + " |";
  md += "\n|---|";
  for (size_t i = 0; i < kDtypeColumns.size(); ++i) md += "---|";
  md += "\n";
  for (const auto& op : ops) {
    md += "| " + op + " |";
    for (const auto& d : kDtypeColumns) {
      auto it = table[op].find(d);
      md += " " + (it == table[op].end() ? std::string() : cell(it->second)) + " |";
    }
    md += "\n";
  }
  if (!contract.empty()) {
    md += "\n## Contract\n\n| area | result |\n|---|---|\n";
    for (const auto& [group, k] : contract) md += "| " + group + " | " + cell(k) + " |\n";
  }
  bool any = false;
  for (const CaseResult& c : r.cases) {
    if (!c.failed()) continue;
    if (!any) md += "\n## Failures\n";
    any = true;
    md += "\n### " + c.id + " (" + c.status + ")\n\n" + c.label + "\n\n```\n" + c.message + "\n```\n\nrerun: `" +
          c.rerun + "`\n";
  }
  return write_file(path, md, error);
}

}  // namespace catalyst::conformance
