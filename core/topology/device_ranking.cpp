// device_ranking.cpp — the rules of device_ranking.h as a lexicographic order, and the
// words that explain each step of it.
#include "topology/device_ranking.h"

#include <algorithm>
#include <cstdio>

namespace catalyst::topology {
namespace {

bool eligible(const RankingCandidate& c, uint64_t bytes_needed, std::string* why_not) {
  if (!c.supported) {
    *why_not = "not eligible: " + (c.unsupported.empty() ? std::string("cannot run the work") : c.unsupported);
    return false;
  }
  if (bytes_needed && c.memory_free && c.memory_free < bytes_needed) {
    *why_not = "not eligible: needs " + format_bytes(bytes_needed) + " but " + format_bytes(c.memory_free) + " is free";
    return false;
  }
  return true;
}

// floor(log2(bytes)), -1 when unknown: rule 4's buckets.
int memory_bucket(uint64_t bytes) {
  if (bytes == 0) return -1;
  int bucket = 0;
  while (bytes >>= 1) ++bucket;
  return bucket;
}

struct Entry {
  const RankingCandidate* candidate;
  bool eligible;
  std::string why_not;
};

// The first rule (2 to 6) by which `a` goes before `b`, in words; "" when `a` does not.
std::string first_difference(const Entry& a, const Entry& b, const std::string& anchor) {
  const RankingCandidate& x = *a.candidate;
  const RankingCandidate& y = *b.candidate;
  if (x.has_link && y.has_link && x.link_to_anchor.bytes_per_second != y.link_to_anchor.bytes_per_second) {
    if (x.link_to_anchor.bytes_per_second < y.link_to_anchor.bytes_per_second) return "";
    return "faster link from " + (anchor.empty() ? std::string("the anchor") : anchor) + " than " + y.name + " (" +
           format_bandwidth(x.link_to_anchor.bytes_per_second) + " vs " +
           format_bandwidth(y.link_to_anchor.bytes_per_second) + ")";
  }
  if (x.accelerator != y.accelerator) return x.accelerator ? "a GPU or accelerator, " + y.name + " is a CPU" : "";
  const int mx = memory_bucket(x.memory_free), my = memory_bucket(y.memory_free);
  if (mx != my) {
    if (mx < my) return "";
    return "more free memory than " + y.name + " (" + format_bytes(x.memory_free) + " vs " +
           format_bytes(y.memory_free) + ")";
  }
  if (x.locality_known != y.locality_known) {
    return x.locality_known ? "known locality, " + y.name + "'s is unknown" : "";
  }
  if (x.index < y.index) return "lower index than " + y.name + " (otherwise equal)";
  return "";
}

std::string facts(const RankingCandidate& c, const std::string& anchor) {
  std::string out = c.accelerator ? "GPU or accelerator" : "CPU";
  out += "; " + (c.memory_free ? format_bytes(c.memory_free) + " free" : std::string("free memory unknown"));
  out +=
      "; " + (c.locality.empty() ? std::string(c.locality_known ? "known locality" : "unknown locality") : c.locality);
  if (c.has_link) {
    out += "; from " + (anchor.empty() ? std::string("the anchor") : anchor) + ": " +
           link_class_name(c.link_to_anchor.link_class) + " " + format_bandwidth(c.link_to_anchor.bytes_per_second) +
           (c.link_to_anchor.measured ? " (measured)" : " (estimated)");
  }
  return out;
}

}  // namespace

std::string format_bytes(uint64_t bytes) {
  if (bytes == 0) return "unknown";
  char text[32];
  const double value = static_cast<double>(bytes);
  if (value >= 1024.0 * 1024 * 1024) {
    std::snprintf(text, sizeof text, "%.1f GiB", value / (1024.0 * 1024 * 1024));
  } else if (value >= 1024.0 * 1024) {
    std::snprintf(text, sizeof text, "%.1f MiB", value / (1024.0 * 1024));
  } else if (value >= 1024.0) {
    std::snprintf(text, sizeof text, "%.1f KiB", value / 1024.0);
  } else {
    std::snprintf(text, sizeof text, "%llu B", static_cast<unsigned long long>(bytes));
  }
  return text;
}

std::string format_bandwidth(uint64_t bytes_per_second) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GB/s", static_cast<double>(bytes_per_second) / 1e9);
  return text;
}

std::vector<RankedDevice> rank_devices(const RankingRequest& request) {
  std::vector<Entry> entries;
  entries.reserve(request.candidates.size());
  for (const auto& candidate : request.candidates) {
    Entry entry{&candidate, false, ""};
    entry.eligible = eligible(candidate, request.bytes_needed, &entry.why_not);
    entries.push_back(std::move(entry));
  }
  std::stable_sort(entries.begin(), entries.end(), [&](const Entry& a, const Entry& b) {
    if (a.eligible != b.eligible) return a.eligible;
    if (!a.eligible) return a.candidate->index < b.candidate->index;
    const RankingCandidate& x = *a.candidate;
    const RankingCandidate& y = *b.candidate;
    if (x.has_link && y.has_link && x.link_to_anchor.bytes_per_second != y.link_to_anchor.bytes_per_second) {
      return x.link_to_anchor.bytes_per_second > y.link_to_anchor.bytes_per_second;
    }
    if (x.accelerator != y.accelerator) return x.accelerator;
    const int mx = memory_bucket(x.memory_free), my = memory_bucket(y.memory_free);
    if (mx != my) return mx > my;
    if (x.locality_known != y.locality_known) return x.locality_known;
    return x.index < y.index;
  });
  std::vector<RankedDevice> out;
  out.reserve(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& entry = entries[i];
    RankedDevice ranked;
    ranked.index = entry.candidate->index;
    ranked.name = entry.candidate->name;
    ranked.eligible = entry.eligible;
    ranked.reason = facts(*entry.candidate, request.anchor);
    if (!entry.eligible) {
      ranked.decided_by = entry.why_not;
    } else if (i + 1 < entries.size() && !entries[i + 1].eligible) {
      ranked.decided_by = "ahead of every device that is not eligible";
    } else if (i + 1 < entries.size()) {
      ranked.decided_by = first_difference(entry, entries[i + 1], request.anchor);
    }
    out.push_back(std::move(ranked));
  }
  return out;
}

}  // namespace catalyst::topology
