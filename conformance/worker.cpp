// worker.cpp — see worker.h.
//
// A worker builds a runtime holding only the plugin under test (discovery off) and the
// core's reference device, runs its group's cases in catalog order, and after the last
// one destroys the plugin's instance and counts the host allocations still live: every
// allocation a plugin makes through the host table must be freed by then. Memory a plugin
// takes from the system itself (its own malloc, mmap) is watched another way: one passing
// case of the group runs again and again, and the process's memory must stop growing.
// State a plugin wrongly keeps from one call to the next (a result cached by the call's
// shapes, an accumulator not reset) and results that change from run to run are looked for
// by a judged rerun: after the group's cases, one of them that passed runs again, in the
// same process: with its first inputs (the same bits are due), with input values drawn from
// another seed, and with other values in other strides, each judged as on its first run.
#include "worker.h"

#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "case.h"
#include "protocol.h"
#include "runtime.h"
#include "values.h"

namespace catalyst::conformance {
namespace {

class Channel {
 public:
  explicit Channel(int fd) : fd_(fd) {}
  void send(const std::vector<std::string>& fields) {
    std::string line;
    for (size_t i = 0; i < fields.size(); ++i) line += (i ? "\t" : "") + escape_field(fields[i]);
    line += '\n';
    const char* p = line.data();
    size_t left = line.size();
    while (left > 0) {
      const ssize_t n = write(fd_, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // the supervisor is gone; nothing left to tell
      p += n;
      left -= static_cast<size_t>(n);
    }
  }

 private:
  int fd_;
};

uint64_t fnv1a(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// Runtime log lines go to stderr, which the supervisor keeps per group and quotes when a
// group crashes.
void log_to_stderr(void*, ctl_log_level level, const char* message) {
  std::fprintf(stderr, "[%s] %s\n", level >= CTL_LOG_ERROR ? "error" : "log", message);
}

const char* kind_name(ctl_device_kind kind) {
  switch (kind) {
    case CTL_DEVICE_KIND_CPU:
      return "cpu";
    case CTL_DEVICE_KIND_GPU:
      return "gpu";
    case CTL_DEVICE_KIND_ACCELERATOR:
      return "accelerator";
  }
  return "unknown";
}

// AddressSanitizer keeps freed memory in a quarantine and replaces malloc's statistics: the
// process's memory grows under it whatever the plugin does.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kMemoryWatch = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kMemoryWatch = false;
#else
constexpr bool kMemoryWatch = true;
#endif
#else
constexpr bool kMemoryWatch = true;
#endif

// The process's memory: bytes in use from malloc (every arena, mmapped blocks too) and
// the resident set.
struct Memory {
  int64_t heap = 0;
  int64_t rss = 0;
};

Memory memory_now() {
  Memory m;
  const struct mallinfo2 info = mallinfo2();
  m.heap = static_cast<int64_t>(info.uordblks + info.hblkhd);
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    long long size = 0, resident = 0;
    if (std::fscanf(f, "%lld %lld", &size, &resident) == 2) m.rss = resident * sysconf(_SC_PAGESIZE);
    std::fclose(f);
  }
  return m;
}

// A context for running a case again on `base`'s device, runtime and plugin, with nothing
// of the earlier run's (seed, generators, note) carried over.
CaseContext on_same_device(const CaseContext& base) {
  CaseContext ctx;
  ctx.runtime = base.runtime;
  ctx.device = base.device;
  ctx.reference = base.reference;
  ctx.plugin = base.plugin;
  ctx.dtype_mask = base.dtype_mask;
  return ctx;
}

// Runs case `c` (which passed) kWarmup times, so that caches that legitimately grow once
// (buffer caches, per-thread scratch, compiled kernels) are full, then kWatched times,
// reading the process's memory after each. A plugin that takes memory per call and never
// gives it back grows on (nearly) every run: malloc's in-use bytes grew in all but at most
// one of the kWatched - 1 steps, or the resident set grew in every one of them, by more
// than kNoise per run on average. Returns "" or what was seen.
std::string watch_memory(const Case& c, CaseContext base, ctl_device* device) {
  constexpr int kWarmup = 3, kWatched = 8;
  // Below this a run's growth cannot be told from the allocator's own: a correct plugin
  // was seen to grow malloc's in-use bytes and the resident set by a few KiB per run of a
  // small case (up to 12 KiB, adamw_step) without any allocation staying live.
  constexpr int64_t kNoise = int64_t{64} << 10;
  std::vector<Memory> seen;
  for (int run = 0; run < kWarmup + kWatched; ++run) {
    CaseContext ctx = on_same_device(base);
    ctx.seed = base.seed;
    ctx.rng = base.rng;  // the same data every run
    try {
      c.run(ctx);
    } catch (const std::exception&) {
      return "";  // judged by the case itself; this watch needs a case that runs
    }
    for (ctl_device* d : {device, base.reference}) {
      if (ctl_status* s = ctl_device_synchronize(d)) {
        ctl_status_free(s);
        return "";
      }
    }
    if (run >= kWarmup) seen.push_back(memory_now());
  }
  int heap_steps = 0, rss_steps = 0;
  for (size_t i = 1; i < seen.size(); ++i) {
    heap_steps += seen[i].heap > seen[i - 1].heap;
    rss_steps += seen[i].rss > seen[i - 1].rss;
  }
  const int steps = kWatched - 1;
  const int64_t heap_growth = seen.back().heap - seen.front().heap;
  const int64_t rss_growth = seen.back().rss - seen.front().rss;
  const bool heap_grows = heap_steps >= steps - 1 && heap_growth >= kNoise * steps;
  const bool rss_grows = rss_steps == steps && rss_growth >= kNoise * steps;
  if (!heap_grows && !rss_grows) return "";
  std::string text = "the process's memory grew while case " + c.id + " ran " + std::to_string(kWatched) +
                     " more times after " + std::to_string(kWarmup) + " warm-up runs: malloc in use " +
                     std::to_string(seen.front().heap) + " -> " + std::to_string(seen.back().heap) + " bytes (+" +
                     std::to_string(heap_growth / steps) + " per run, grew in " + std::to_string(heap_steps) + " of " +
                     std::to_string(steps) + " runs), resident " + std::to_string(seen.front().rss) + " -> " +
                     std::to_string(seen.back().rss) + " bytes (+" + std::to_string(rss_growth / steps) +
                     " per run); the plugin takes memory from the system (malloc, mmap) on every call and never "
                     "gives it back";
  return text;
}

// The seed of a case's inputs: from the run's seed and the case's id, so that filtering
// never shifts it; the judged rerun draws from the next seed.
uint64_t case_seed(uint64_t seed, const std::string& id) {
  return seed * 0x9e3779b97f4a7c15ull ^ fnv1a(id);
}

// Whether a passing case may be the group's judged rerun: it draws its inputs at random
// (the ulp sweeps' arguments are fixed: the same inputs again would not show a stale
// result; contract cases check behaviour, not values) and is small (the large cases would
// add seconds per group).
bool rerun_candidate(const Case& c) {
  return c.id.find(".large") == std::string::npos && c.id.find(".ulp_sweep") == std::string::npos &&
         c.id.rfind("contract.", 0) != 0;
}

// Runs case `c` once more on `base`'s device: with the inputs of its first run (fresh ==
// nullptr), or with values from `fresh` and, when other_layouts is set, other strides.
// Returns "" or its failure; the outputs it computed go to *seen.
std::string run_again(const Case& c, const CaseContext& base, ctl_device* device, const Options& o,
                      std::mt19937_64* fresh, bool other_layouts, std::vector<SeenOutput>* seen) {
  CaseContext ctx = on_same_device(base);
  ctx.seed = o.seed;
  ctx.rng.seed(case_seed(o.seed, c.id));  // the same shapes and layouts as the first run
  ctx.fresh_values = fresh;
  ctx.other_layouts = other_layouts;
  ctx.outputs_seen = seen;
  std::string failure;
  try {
    c.run(ctx);
  } catch (const CaseUnsupported& e) {
    failure = std::string("it was unsupported this time: ") + e.what();
  } catch (const std::exception& e) {
    failure = e.what();
  }
  if (ctl_status* s = ctl_device_synchronize(device)) {
    if (failure.empty()) failure = std::string("ctl_device_synchronize after it failed: ") + ctl_status_get_message(s);
    ctl_status_free(s);
  }
  return failure;
}

// Where two runs' outputs first differ, in words; "" when they are bit-identical.
std::string first_difference(const std::vector<SeenOutput>& first, const std::vector<SeenOutput>& again) {
  if (first.size() != again.size()) {
    return std::to_string(first.size()) + " outputs the first time, " + std::to_string(again.size()) + " now";
  }
  for (size_t k = 0; k < first.size(); ++k) {
    if (first[k] == again[k]) continue;
    const size_t size = ctl_dtype_size(first[k].dtype);
    if (first[k].dtype != again[k].dtype || first[k].bytes.size() != again[k].bytes.size() || size == 0) {
      return "output " + std::to_string(k) + " changed its dtype or size";
    }
    size_t differing = 0, at = 0;
    for (size_t i = 0; i * size < first[k].bytes.size(); ++i) {
      if (std::memcmp(first[k].bytes.data() + i * size, again[k].bytes.data() + i * size, size) == 0) continue;
      if (differing++ == 0) at = i;
    }
    char text[256];
    std::snprintf(text, sizeof text, "output %zu: %zu element slot(s) differ; the first is slot %zu of its buffer: "
                  "%.17g the first time, %.17g now", k, differing, at,
                  load(first[k].bytes.data() + at * size, first[k].dtype),
                  load(again[k].bytes.data() + at * size, again[k].dtype));
    return text;
  }
  return "";
}

// The judged rerun of case `c`, which passed: three more runs in the same process, after
// the group's other cases. With its first run's inputs, it must give the same bits
// (docs/ops.md: every op is deterministic on one device); with fresh input values, and
// then fresh values in other strides, it must pass as it did. Returns "" or the failure.
std::string judged_rerun(const Case& c, const CaseContext& base, ctl_device* device, const Options& o,
                         const std::vector<SeenOutput>& first_outputs) {
  const std::string passed = "case " + c.id + " passed, then ";
  std::vector<SeenOutput> again;
  std::string failure = run_again(c, base, device, o, nullptr, false, &again);
  if (!failure.empty()) {
    return passed + "failed when run again with the same inputs, after the group's other cases: " + failure;
  }
  const std::string difference = first_difference(first_outputs, again);
  if (!difference.empty()) {
    return passed + "gave other bits when run again with the same inputs, shapes and layouts, after the group's "
                    "other cases in the same process: " +
           difference +
           ". docs/ops.md promises every op the same bits on one device for the same inputs and settings "
           "(bit-identical resume and data-parallel training rely on it): a sum whose order changes from run to "
           "run, or a result read before it was written, breaks it";
  }
  std::mt19937_64 fresh(case_seed(o.seed + 1, c.id));
  failure = run_again(c, base, device, o, &fresh, false, nullptr);
  std::string how = "with the same shapes and layouts but fresh input values (seed " + std::to_string(o.seed + 1) + ")";
  if (failure.empty()) {
    std::mt19937_64 fresh_strides(case_seed(o.seed + 2, c.id));
    failure = run_again(c, base, device, o, &fresh_strides, true, nullptr);
    how = "with the same shapes, other strides (every input and output in another layout) and fresh input values "
          "(seed " + std::to_string(o.seed + 2) + ")";
  }
  if (failure.empty()) return "";
  return passed + "failed when run again after the group's other cases, in the same process, " + how + ": " +
         failure +
         ". Its results depend on state an earlier call left behind (a result cached by the call's shapes, a plan "
         "keyed by less than the call's shapes and strides, an accumulator or scratch buffer not reset)";
}

}  // namespace

int run_worker(const Options& o) {
  Channel channel(o.result_fd >= 0 ? o.result_fd : STDOUT_FILENO);
  const char* paths[] = {o.plugin_path.c_str()};
  ctl_runtime_options options{};
  options.struct_size = CTL_RUNTIME_OPTIONS_STRUCT_SIZE;
  options.plugin_paths = paths;
  options.plugin_path_count = 1;
  options.disable_discovery = true;
  options.enable_reference_device = true;
  options.log_fn = log_to_stderr;
  options.log_level = CTL_LOG_WARNING;
  options.log_level_set = true;
  ctl_runtime* runtime = nullptr;
  if (ctl_status* s = ctl_runtime_create(&options, &runtime)) {
    channel.send({"E", std::string("could not create a runtime: ") + ctl_status_get_message(s)});
    ctl_status_free(s);
    return 3;
  }
  // The plugin under test and its device.
  LoadedPlugin* plugin = nullptr;
  for (auto& p : runtime->plugins) {
    if (p->candidate.source == "options") plugin = p.get();
  }
  if (!plugin || !plugin->accepted) {
    channel.send({"E", "the plugin " + o.plugin_path +
                           " was not loaded: " + (plugin ? plugin->reason : std::string("no such candidate"))});
    ctl_runtime_release(runtime);
    return 3;
  }
  ctl_device* device = nullptr;
  ctl_device* reference = nullptr;
  uint32_t seen = 0;
  for (auto& d : runtime->devices) {
    if (d->plugin == plugin && seen++ == o.device) device = d.get();
    if (d->plugin != plugin && d->plugin->name == "reference") reference = d.get();
  }
  if (!device || !reference) {
    channel.send({"E", !reference ? std::string("internal: no reference device")
                                  : "the plugin has " + std::to_string(plugin->device_count) + " device(s); --device " +
                                        std::to_string(o.device) + " does not exist"});
    ctl_runtime_release(runtime);
    return 3;
  }
  ctl_device_info info{};
  info.struct_size = CTL_DEVICE_INFO_STRUCT_SIZE;
  if (ctl_status* s = ctl_device_get_info(device, &info)) {
    channel.send({"E", std::string("the device's properties could not be read: ") + ctl_status_get_message(s)});
    ctl_status_free(s);
    ctl_runtime_release(runtime);
    return 3;
  }
  if (o.probe) {
    channel.send({"D", "plugin_name", plugin->name});
    channel.send({"D", "plugin_version", plugin->version});
    channel.send({"D", "plugin_abi", std::to_string(plugin->abi_major) + "." + std::to_string(plugin->abi_minor)});
    channel.send({"D", "device_name", info.name ? info.name : ""});
    channel.send({"D", "device_vendor", info.vendor ? info.vendor : ""});
    channel.send({"D", "device_driver", info.driver_version ? info.driver_version : ""});
    channel.send({"D", "device_kind", kind_name(info.kind)});
    channel.send({"D", "device_count", std::to_string(plugin->device_count)});
    channel.send({"D", "dtype_mask", std::to_string(info.dtype_mask)});
    ctl_runtime_release(runtime);
    return 0;
  }

  std::vector<Case> cases = all_cases();
  // The case whose repeated runs the memory watch follows: the group's first passing case
  // (an f32 one where there is one), never a large one.
  const Case* watched = nullptr;
  CaseContext watched_context;
  // The case of the judged rerun: the group's first passing candidate, an f32 one where
  // there is one.
  const Case* rerun = nullptr;
  CaseContext rerun_context;
  std::vector<SeenOutput> rerun_outputs;  // what its first run computed
  bool resuming = !o.resume_after.empty();
  std::string grown;  // cases after which more host allocations were live than before
  for (Case& c : cases) {
    if (c.group != o.group) continue;
    if (resuming) {
      if (c.id == o.resume_after) resuming = false;
      continue;
    }
    if (c.level > o.level || !case_selected(o, c.id)) continue;
    channel.send({"B", c.id});
    CaseContext ctx;
    ctx.runtime = runtime;
    ctx.device = device;
    ctx.reference = reference;
    ctx.plugin = plugin;
    ctx.dtype_mask = info.dtype_mask;
    ctx.seed = o.seed;
    ctx.rng.seed(case_seed(o.seed, c.id));
    std::vector<SeenOutput> seen;
    if (rerun_candidate(c)) ctx.outputs_seen = &seen;
    const int64_t live_before = plugin->host->live_allocations();
    const auto start = std::chrono::steady_clock::now();
    std::string status = "pass", message;
    try {
      c.run(ctx);
      message = ctx.note;
    } catch (const CaseUnsupported& e) {
      status = "unsupported", message = e.what();
    } catch (const CaseFailure& e) {
      status = "fail", message = e.what();
    } catch (const std::exception& e) {
      status = "fail", message = std::string("the suite caught an exception: ") + e.what();
    }
    // The device's queue is drained before counting, so deferred frees are not leaks.
    if (ctl_status* s = ctl_device_synchronize(device)) {
      if (status != "fail") {
        status = "fail";
        message = std::string("ctl_device_synchronize after the case failed: ") + ctl_status_get_message(s);
      }
      ctl_status_free(s);
    }
    if (status == "pass" && c.id.find(".large") == std::string::npos &&
        (!watched || (watched->dtype != "f32" && c.dtype == "f32"))) {
      watched = &c;
      watched_context = on_same_device(ctx);
      watched_context.seed = ctx.seed;
      watched_context.rng.seed(case_seed(o.seed, c.id));
    }
    if (status == "pass" && rerun_candidate(c) && (!rerun || (rerun->dtype != "f32" && c.dtype == "f32"))) {
      rerun = &c;
      rerun_context = on_same_device(ctx);
      rerun_outputs = std::move(seen);
    }
    const int64_t grew = plugin->host->live_allocations() - live_before;
    if (grew > 0) grown += (grown.empty() ? "" : ", ") + c.id + " (+" + std::to_string(grew) + ")";
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    channel.send({"R", c.id, status, std::to_string(seconds), message});
  }
  if (rerun) {
    // Not announced as a case either: a crash or hang here is reported as the teardown's.
    channel.send({"X", rerun->id, judged_rerun(*rerun, rerun_context, device, o, rerun_outputs)});
  }
  if (kMemoryWatch && watched) {
    // Not announced as a case: a crash or hang here is the group's teardown, and the group
    // does not resume.
    const std::string grown_memory = watch_memory(*watched, std::move(watched_context), device);
    channel.send({"M", watched->id, grown_memory});
  }
  // Destroy the instance while its host table still counts, then the rest of the runtime.
  for (auto& d : runtime->devices) {
    if (d->plugin == plugin && d->stream) {
      plugin->api.stream_destroy(d->stream);
      d->stream = nullptr;
    }
  }
  unload_plugin(*plugin);
  const int64_t live = plugin->host->live_allocations();
  if (live != 0) channel.send({"L", std::to_string(live), grown});
  ctl_runtime_release(runtime);
  return 0;
}

}  // namespace catalyst::conformance
