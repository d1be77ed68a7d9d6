// pipeline.hpp — the trainer's layer (pipeline) split over several devices (--devices
// without --data-parallel), what it reports of each device's use (busy time, memory, bytes
// moved: the progress line and log.jsonl), and the placement report at the end (moves and
// fallbacks per op and device pair, each with its share of the training time). Included
// by train_gpt.cpp after its Options.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "catalyst/catalyst.hpp"

namespace catalyst::gpt {

// "cpu:0", "opencl:1": the names `catalyst devices` and --device use, for every device of
// the runtime (plugin name and index among that plugin's devices).
inline std::map<ctl_device*, std::string> device_labels(const Runtime& rt) {
  std::map<ctl_device*, std::string> labels;
  std::map<std::string, int> per_plugin;
  for (const Device& d : rt.devices()) {
    const std::string plugin = d.plugin();
    labels[d.get()] = plugin + ":" + std::to_string(per_plugin[plugin]++);
  }
  return labels;
}

// How many consecutive blocks each stage gets: --split as given (it must name every stage
// and add up to the layers), else in proportion to the stages' memory (equal where a
// device does not say), at least one each, rounded by largest remainder.
inline std::vector<int64_t> blocks_per_stage(const std::vector<Device>& stages, int64_t layers,
                                             const std::string& split) {
  const size_t n = stages.size();
  std::vector<int64_t> counts;
  if (!split.empty()) {
    std::stringstream in(split);
    std::string item;
    int64_t total = 0;
    while (std::getline(in, item, ',')) {
      char* end = nullptr;
      const long long v = std::strtoll(item.c_str(), &end, 10);
      if (item.empty() || *end != '\0' || v < 1) {
        throw Error(CTL_STATUS_INVALID_ARGUMENT, "--split: '" + item + "' is not a positive block count");
      }
      counts.push_back(v);
      total += v;
    }
    if (counts.size() != n || total != layers) {
      throw Error(CTL_STATUS_INVALID_ARGUMENT, "--split " + split + " gives " + std::to_string(counts.size()) +
                                                   " stages and " + std::to_string(total) + " blocks; --devices has " +
                                                   std::to_string(n) + " devices and the model " +
                                                   std::to_string(layers) + " layers");
    }
    return counts;
  }
  if (int64_t(n) > layers) {
    throw Error(CTL_STATUS_INVALID_ARGUMENT, std::to_string(n) + " devices for " + std::to_string(layers) +
                                                 " layers: every stage needs a block (use fewer --devices)");
  }
  std::vector<double> weight(n);
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t memory = stages[i].info().memory_total;
    weight[i] = memory ? double(memory) : 1.0;
    sum += weight[i];
  }
  // One block each first, the rest shared by memory.
  counts.assign(n, 1);
  const int64_t rest = layers - int64_t(n);
  std::vector<double> remainder(n);
  int64_t given = 0;
  for (size_t i = 0; i < n; ++i) {
    const double share = double(rest) * weight[i] / sum;
    counts[i] += int64_t(share);
    given += int64_t(share);
    remainder[i] = share - double(int64_t(share));
  }
  for (int64_t left = rest - given; left > 0; --left) {
    const size_t best = size_t(std::max_element(remainder.begin(), remainder.end()) - remainder.begin());
    ++counts[best];
    remainder[best] = -1;
  }
  return counts;
}

// Per-step use of each device the model runs on, from ctl_device_get_usage deltas.
class DeviceMeter {
 public:
  DeviceMeter(std::vector<Device> devices, std::vector<std::string> labels)
      : devices_(std::move(devices)), labels_(std::move(labels)), last_(devices_.size()) {
    for (size_t i = 0; i < devices_.size(); ++i) last_[i] = devices_[i].usage();
    last_time_ = std::chrono::steady_clock::now();
  }

  struct Sample {
    std::string label;
    double busy = 0;        // fraction of the wall time since the last sample
    uint64_t memory = 0;    // bytes in use now
    uint64_t peak = 0;      // bytes at most so far
    uint64_t moved = 0;     // bytes in and out since the last sample
    uint64_t launches = 0;  // plugin calls since the last sample
  };

  std::vector<Sample> sample() {
    const auto now = std::chrono::steady_clock::now();
    const double wall_ns = double(std::chrono::duration_cast<std::chrono::nanoseconds>(now - last_time_).count());
    std::vector<Sample> out;
    for (size_t i = 0; i < devices_.size(); ++i) {
      const ctl_device_usage u = devices_[i].usage();
      Sample s;
      s.label = labels_[i];
      s.busy = wall_ns > 0 ? double(u.busy_ns - last_[i].busy_ns) / wall_ns : 0;
      s.memory = u.memory_in_use;
      s.peak = u.memory_peak;
      s.moved = (u.bytes_in - last_[i].bytes_in) + (u.bytes_out - last_[i].bytes_out);
      s.launches = u.ops - last_[i].ops;
      last_[i] = u;
      out.push_back(s);
    }
    last_time_ = now;
    return out;
  }

  // `"devices": [{"device": "cpu:0", "busy": 0.93, ...}, ...]` for log.jsonl.
  static std::string json(const std::vector<Sample>& samples) {
    std::ostringstream o;
    o.precision(4);
    o << "\"devices\": [";
    for (size_t i = 0; i < samples.size(); ++i) {
      const Sample& s = samples[i];
      o << (i ? ", " : "") << "{\"device\": \"" << s.label << "\", \"busy\": " << s.busy
        << ", \"memory_bytes\": " << s.memory << ", \"peak_memory_bytes\": " << s.peak
        << ", \"moved_bytes\": " << s.moved << ", \"launches\": " << s.launches << "}";
    }
    o << "]";
    return o.str();
  }

  // "cpu:0 93% 12M" per device, for the progress line.
  static std::string compact(const std::vector<Sample>& samples) {
    std::string out;
    for (const Sample& s : samples) {
      char b[96];
      std::snprintf(b, sizeof b, "%s%s %.0f%% %.0fM", out.empty() ? "" : ", ", s.label.c_str(), 100.0 * s.busy,
                    double(s.memory) / (1 << 20));
      out += b;
      if (s.moved) {
        std::snprintf(b, sizeof b, " +%.1fM moved", double(s.moved) / (1 << 20));
        out += b;
      }
    }
    return out;
  }

 private:
  std::vector<Device> devices_;
  std::vector<std::string> labels_;
  std::vector<ctl_device_usage> last_;
  std::chrono::steady_clock::time_point last_time_;
};

// The placement report's records, keyed by what a line of it names.
using PlacementKey = std::tuple<int, int, ctl_device*, ctl_device*>;
inline std::map<PlacementKey, ctl_placement_record> placement_by_key(const std::vector<ctl_placement_record>& records) {
  std::map<PlacementKey, ctl_placement_record> by_key;
  for (const ctl_placement_record& r : records) by_key[{int(r.kind), int(r.op), r.from, r.to}] = r;
  return by_key;
}

// What happened between two placement reports of one runtime (`after` minus `before`),
// record by record: the training loop's share of a run's moves and fallbacks.
inline std::vector<ctl_placement_record> placement_since(const std::vector<ctl_placement_record>& before,
                                                         const std::vector<ctl_placement_record>& after) {
  const auto earlier = placement_by_key(before);
  std::vector<ctl_placement_record> delta;
  for (ctl_placement_record r : after) {
    const auto it = earlier.find({int(r.kind), int(r.op), r.from, r.to});
    if (it != earlier.end()) {
      r.count -= it->second.count;
      r.bytes -= it->second.bytes;
      r.nanoseconds -= it->second.nanoseconds;
    }
    if (r.count) delta.push_back(r);
  }
  return delta;
}

// How many ops fell back, out of all the ops the model's devices were asked to run:
// `fallbacks` from the placement records, `ran` the ops the devices ran themselves.
struct FallbackShare {
  uint64_t fallbacks = 0;
  uint64_t asked = 0;
  double fraction() const { return asked ? double(fallbacks) / double(asked) : 0; }
};
inline FallbackShare fallback_share(const std::vector<ctl_placement_record>& records, uint64_t ran) {
  FallbackShare share;
  for (const ctl_placement_record& r : records) {
    if (r.kind == CTL_PLACEMENT_FALLBACK) share.fallbacks += r.count;
  }
  share.asked = ran + share.fallbacks;
  return share;
}

// Above this share of fallen-back ops the trainer warns (issue 33's bound): past it a run
// says little about the device it was asked to train on.
constexpr double kFallbackWarnFraction = 0.10;

// "layer_norm 12, gelu 6": the ops that fell back, most frequent first.
inline std::string fallback_ops_text(const std::vector<ctl_placement_record>& records) {
  std::vector<std::pair<uint64_t, std::string>> ops;
  for (const ctl_placement_record& r : records) {
    if (r.kind == CTL_PLACEMENT_FALLBACK) ops.emplace_back(r.count, ctl_op_name(r.op));
  }
  std::sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string text;
  for (const auto& [count, name] : ops) text += (text.empty() ? "" : ", ") + name + " " + std::to_string(count);
  return text;
}

// After the first step with --allow-fallback: a warning on stderr when more than 10% of the
// step's ops fell back to another device, naming them: the run is then a measure of the
// device asked for only in part, and between devices that do not share host memory each
// fallback moves tensors.
inline void warn_about_fallbacks(const Runtime& rt, const std::vector<ctl_placement_record>& before, uint64_t ops_ran) {
  const auto step = placement_since(before, rt.placement_report());
  const FallbackShare share = fallback_share(step, ops_ran);
  if (share.fraction() <= kFallbackWarnFraction) return;
  std::fprintf(stderr,
               "warning: %llu of the first step's %llu ops (%.1f%%) fell back to another device (%s): this run "
               "trains on the device asked for only in part (the placement report at the end gives each op's "
               "share of the time)\n",
               static_cast<unsigned long long>(share.fallbacks), static_cast<unsigned long long>(share.asked),
               100.0 * share.fraction(), fallback_ops_text(step).c_str());
}

// The runtime's placement report in words: every move and fallback, per op and device pair.
// With `training` (the training loop's records) and its wall time, each line also gives
// the share of the training time it took, the measure of what a fallback costs.
inline void print_placement_report(const Runtime& rt, const std::vector<ctl_placement_record>& training,
                                   double training_seconds, FILE* out) {
  const auto records = rt.placement_report();
  if (records.empty()) return;
  const auto labels = device_labels(rt);
  const auto in_training = placement_by_key(training);
  std::fprintf(out, "placement:\n");
  for (const ctl_placement_record& r : records) {
    const std::string from = labels.count(r.from) ? labels.at(r.from) : "?";
    const std::string to = labels.count(r.to) ? labels.at(r.to) : "?";
    std::string share;
    const auto it = in_training.find({int(r.kind), int(r.op), r.from, r.to});
    if (it != in_training.end() && training_seconds > 0) {
      char b[64];
      std::snprintf(b, sizeof b, ", %.1f%% of the training time",
                    100.0 * double(it->second.nanoseconds) * 1e-9 / training_seconds);
      share = b;
    }
    if (r.kind == CTL_PLACEMENT_FALLBACK) {
      std::fprintf(out, "  %-22s fell back %llu times from %s to %s%s\n", ctl_op_name(r.op),
                   static_cast<unsigned long long>(r.count), from.c_str(), to.c_str(), share.c_str());
    } else {
      std::fprintf(out, "  %-22s moved %llu tensors (%.1f MiB) from %s to %s%s\n",
                   r.op == CTL_OP_COPY ? "(transfers)" : ctl_op_name(r.op), static_cast<unsigned long long>(r.count),
                   double(r.bytes) / (1 << 20), from.c_str(), to.c_str(), share.c_str());
    }
  }
}

}  // namespace catalyst::gpt
