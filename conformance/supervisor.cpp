// supervisor.cpp — see supervisor.h.
#include "supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <set>

#include "protocol.h"

namespace catalyst::conformance {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kMaxRestarts = 25;
// The most a busy machine stretches the per-case limit (120 s becomes at most 16 minutes).
constexpr double kMaxLoadScale = 8;

// The machine's load: the 1-minute load average and the CPUs online.
struct Load {
  double average = 0;
  long cpus = 1;
  // How much slower than on an idle machine a case may run now: runnable threads per CPU,
  // at least 1 (an idle or half-busy machine keeps the plain limit), at most kMaxLoadScale.
  double scale() const { return std::clamp(average / static_cast<double>(cpus), 1.0, kMaxLoadScale); }
};

Load load_now() {
  Load load;
  load.cpus = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
  if (getloadavg(&load.average, 1) != 1) load.average = 0;
  return load;
}

std::string self_path() {
  char self[PATH_MAX];
  const ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  if (length <= 0) return "catalyst-conformance";
  self[length] = '\0';
  return self;
}

std::string shell_quote(const std::string& text) {
  bool plain = !text.empty();
  for (char c : text) plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || std::strchr("/._-:=,+", c));
  if (plain) return text;
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string signal_text(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  const char* description = strsignal(sig);
  return std::string(abbrev ? "SIG" + std::string(abbrev) : "signal " + std::to_string(sig)) + " (" +
         (description ? description : "?") + ")";
}

std::string tail_of_file(const std::string& path, size_t max_bytes) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return "";
  std::fseek(f, 0, SEEK_END);
  const long size = std::ftell(f);
  const long start = size > static_cast<long>(max_bytes) ? size - static_cast<long>(max_bytes) : 0;
  std::fseek(f, start, SEEK_SET);
  std::string text(static_cast<size_t>(size - start), '\0');
  const size_t got = std::fread(text.data(), 1, text.size(), f);
  text.resize(got);
  std::fclose(f);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// One worker process running (part of) a group.
struct Worker {
  std::string group;
  pid_t pid = -1;
  int fd = -1;
  std::string buffer;
  std::string stderr_path;
  std::string pending;  // the case that started and has not reported
  Clock::time_point last_activity;
  // The busiest the machine was since the worker last reported: a slow case on a loaded
  // machine is not a hang, so its limit is --timeout times this load's scale.
  Load peak_load;
  bool killed_for_timeout = false;
  std::string fatal;  // an E record
  std::string leak_count, leak_detail;
  std::string memory_growth;  // an M record's finding: memory kept growing over repeated runs
  std::string rerun_failure;  // an X record's finding: a passing case failed on fresh inputs
  std::map<std::string, std::string> facts;
};

struct GroupState {
  std::string resume_after;
  int restarts = 0;
};

bool spawn(const Options& o, const std::string& group, const std::string& resume_after, bool probe, Worker* w,
           std::string* error) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return *error = std::string("pipe: ") + std::strerror(errno), false;
  char stderr_template[] = "/tmp/catalyst-conformance-XXXXXX";
  const int err_fd = mkstemp(stderr_template);
  if (err_fd < 0) {
    close(fds[0]);
    close(fds[1]);
    return *error = std::string("mkstemp: ") + std::strerror(errno), false;
  }
  std::vector<std::string> args = {self_path(),   "--worker",
                                   "--plugin",    o.plugin_path,
                                   "--device",    std::to_string(o.device),
                                   "--seed",      std::to_string(o.seed),
                                   "--level",     level_name(o.level),
                                   "--result-fd", "3"};
  if (probe) args.push_back("--probe");
  if (!group.empty()) args.insert(args.end(), {"--group", group});
  if (!o.filter.empty()) args.insert(args.end(), {"--filter", o.filter});
  if (!o.exclude.empty()) args.insert(args.end(), {"--exclude", o.exclude});
  if (!resume_after.empty()) args.insert(args.end(), {"--resume-after", resume_after});
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    close(err_fd);
    return *error = std::string("fork: ") + std::strerror(errno), false;
  }
  if (pid == 0) {
    // The child: results on fd 3, stderr into the group's log, stdout discarded.
    dup2(fds[1], 3);
    dup2(err_fd, STDERR_FILENO);
    const int null_fd = open("/dev/null", O_WRONLY);
    if (null_fd >= 0) dup2(null_fd, STDOUT_FILENO);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(fds[1]);
  close(err_fd);
  w->group = group;
  w->pid = pid;
  w->fd = fds[0];
  w->stderr_path = stderr_template;
  w->last_activity = Clock::now();
  return true;
}

void finish_worker_files(Worker& w) {
  if (w.fd >= 0) close(w.fd);
  w.fd = -1;
  if (!w.stderr_path.empty()) unlink(w.stderr_path.c_str());
}

// Parses complete lines in the worker's buffer; results go to `results` through `on_result`.
template <typename OnRecord>
void drain_lines(Worker& w, OnRecord on_record) {
  size_t newline;
  while ((newline = w.buffer.find('\n')) != std::string::npos) {
    const std::string line = w.buffer.substr(0, newline);
    w.buffer.erase(0, newline + 1);
    on_record(split_record(line));
  }
}

}  // namespace

std::string rerun_command(const Options& o, const std::string& filter) {
  const char* invoked = std::getenv("CATALYST_INVOKED_AS");  // set by `catalyst conformance`
  std::string command = invoked && *invoked ? invoked : self_path();
  command += " --plugin " + shell_quote(o.plugin_path) + " --device " + std::to_string(o.device) + " --seed " +
             std::to_string(o.seed) + " --filter " + shell_quote(filter);
  if (o.timeout_seconds != Options{}.timeout_seconds) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g", o.timeout_seconds);
    command += std::string(" --timeout ") + seconds;
  }
  return command;
}

bool probe_plugin(const Options& o, RunResults& results, std::string* error) {
  Worker w;
  if (!spawn(o, "", "", true, &w, error)) return false;
  const auto deadline = Clock::now() + std::chrono::duration<double>(std::max(60.0, o.timeout_seconds));
  char chunk[4096];
  bool done = false;
  while (!done) {
    pollfd p{w.fd, POLLIN, 0};
    const int ready = poll(&p, 1, 200);
    if (ready > 0) {
      const ssize_t n = read(w.fd, chunk, sizeof chunk);
      if (n > 0) {
        w.buffer.append(chunk, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        done = true;
      }
    }
    if (Clock::now() > deadline) {
      kill(w.pid, SIGKILL);
      w.killed_for_timeout = true;
      done = true;
    }
  }
  drain_lines(w, [&](const std::vector<std::string>& f) {
    if (f[0] == "D" && f.size() >= 3) results.facts[f[1]] = f[2];
    if (f[0] == "E" && f.size() >= 2) w.fatal = f[1];
  });
  int status = 0;
  waitpid(w.pid, &status, 0);
  const std::string log = tail_of_file(w.stderr_path, 2000);
  finish_worker_files(w);
  if (w.killed_for_timeout) {
    *error = "loading the plugin did not finish within the time limit";
  } else if (WIFSIGNALED(status)) {
    *error = "loading the plugin crashed the process: " + signal_text(WTERMSIG(status));
  } else if (!w.fatal.empty()) {
    *error = w.fatal;
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || results.facts.empty()) {
    *error = "the probe worker failed (exit status " + std::to_string(WEXITSTATUS(status)) + ")";
  } else {
    return true;
  }
  if (!log.empty()) *error += "\nits log:\n" + log;
  return false;
}

void run_cases(const Options& o, const std::vector<Case>& selected, RunResults& results) {
  const auto run_start = Clock::now();
  // Results are kept in catalog order; the index of each selected case.
  std::map<std::string, size_t> index;
  std::vector<std::string> group_order;
  std::map<std::string, std::vector<size_t>> group_cases;
  for (const Case& c : selected) {
    CaseResult r;
    r.id = c.id, r.group = c.group, r.op = c.op, r.dtype = c.dtype, r.label = c.label, r.level = c.level;
    index[c.id] = results.cases.size();
    if (!group_cases.count(c.group)) group_order.push_back(c.group);
    group_cases[c.group].push_back(results.cases.size());
    results.cases.push_back(std::move(r));
  }
  std::vector<CaseResult> extra;  // group-level results (leaks, teardown crashes)
  std::deque<std::string> queue(group_order.begin(), group_order.end());
  std::map<std::string, GroupState> state;
  std::vector<std::unique_ptr<Worker>> running;
  size_t groups_done = 0, cases_done = 0, failures = 0, unsupported = 0;
  const bool tty = isatty(STDERR_FILENO);
  Clock::time_point last_progress;
  auto progress = [&](bool force) {
    Clock::time_point& last = last_progress;
    if (!force && Clock::now() - last < std::chrono::milliseconds(tty ? 200 : 10000)) return;
    last = Clock::now();
    std::string now_running;
    for (auto& w : running) now_running += (now_running.empty() ? "" : " ") + w->group;
    if (now_running.size() > 40) now_running = now_running.substr(0, 37) + "...";
    std::fprintf(stderr, "%s[conformance] groups %zu/%zu  cases %zu/%zu  failed %zu  unsupported %zu  %s%s",
                 tty ? "\r\033[K" : "", groups_done, group_order.size(), cases_done, selected.size(), failures,
                 unsupported, now_running.empty() ? "" : ("running: " + now_running).c_str(), tty ? "" : "\n");
    std::fflush(stderr);
  };
  auto record = [&](const std::string& id, const std::string& status, double seconds, const std::string& message) {
    auto it = index.find(id);
    if (it == index.end()) return;
    CaseResult& r = results.cases[it->second];
    if (!r.status.empty()) return;  // first word wins
    r.status = status, r.seconds = seconds, r.message = message;
    ++cases_done;
    if (r.failed()) ++failures;
    if (status == "unsupported") ++unsupported;
  };
  auto group_result = [&](const std::string& group, const std::string& suffix, const std::string& status,
                          const std::string& message) {
    CaseResult r;
    r.id = group + "." + suffix;
    r.group = group;
    const CaseResult& first = results.cases[group_cases[group].front()];
    r.op = first.op;
    r.dtype = "-";
    r.level = Level::kCore;
    r.label = suffix == "leaks"    ? "host allocations freed by instance_destroy"
              : suffix == "memory" ? "process memory over repeated runs of one case"
              : suffix == "rerun"  ? "one passing case again, same shapes, fresh values, after the group's others"
                                   : "worker teardown";
    r.status = status;
    r.message = message;
    r.rerun = rerun_command(o, group + ".*");
    ++failures;
    extra.push_back(std::move(r));
  };

  while (!queue.empty() || !running.empty()) {
    while (!queue.empty() && running.size() < o.jobs) {
      const std::string group = queue.front();
      queue.pop_front();
      auto w = std::make_unique<Worker>();
      std::string error;
      if (!spawn(o, group, state[group].resume_after, false, w.get(), &error)) {
        for (size_t i : group_cases[group])
          record(results.cases[i].id, "fail", 0, "could not start a worker: " + error);
        ++groups_done;
        continue;
      }
      running.push_back(std::move(w));
    }
    std::vector<pollfd> fds;
    for (auto& w : running) fds.push_back({w->fd, POLLIN, 0});
    poll(fds.data(), fds.size(), 200);
    for (size_t k = 0; k < running.size(); ++k) {
      Worker& w = *running[k];
      bool ended = false;
      if (fds[k].revents & (POLLIN | POLLHUP | POLLERR)) {
        char chunk[65536];
        const ssize_t n = read(w.fd, chunk, sizeof chunk);
        if (n > 0) {
          w.buffer.append(chunk, static_cast<size_t>(n));
          w.last_activity = Clock::now();
          w.peak_load = Load{};
        } else if (n == 0 || errno != EINTR) {
          ended = true;
        }
      }
      drain_lines(w, [&](const std::vector<std::string>& f) {
        if (f[0] == "B" && f.size() >= 2) {
          w.pending = f[1];
        } else if (f[0] == "R" && f.size() >= 5) {
          record(f[1], f[2], std::atof(f[3].c_str()), f[4]);
          w.pending.clear();
        } else if (f[0] == "L" && f.size() >= 3) {
          w.leak_count = f[1], w.leak_detail = f[2];
        } else if (f[0] == "M" && f.size() >= 3) {
          w.memory_growth = f[2];
        } else if (f[0] == "X" && f.size() >= 3) {
          w.rerun_failure = f[2];
        } else if (f[0] == "E" && f.size() >= 2) {
          w.fatal = f[1];
        }
      });
      const double idle = std::chrono::duration<double>(Clock::now() - w.last_activity).count();
      if (!ended && idle > o.timeout_seconds && !w.killed_for_timeout) {
        const Load load = load_now();
        if (load.scale() > w.peak_load.scale()) w.peak_load = load;
      }
      if (!ended && idle > o.timeout_seconds * w.peak_load.scale() && !w.killed_for_timeout) {
        kill(w.pid, SIGKILL);
        w.killed_for_timeout = true;
      }
      if (!ended) continue;
      int status = 0;
      waitpid(w.pid, &status, 0);
      const std::string log = tail_of_file(w.stderr_path, 1500);
      std::string indented;
      for (char c : log) indented += c == '\n' ? std::string("\n    ") : std::string(1, c);
      const std::string log_note = log.empty() ? "" : "\n  worker log (last lines):\n    " + indented;
      GroupState& gs = state[w.group];
      bool resume = false;
      if (w.killed_for_timeout) {
        const double limit = o.timeout_seconds * w.peak_load.scale();
        char seconds[160];
        if (w.peak_load.scale() > 1) {
          std::snprintf(seconds, sizeof seconds,
                        "%.0f s (--timeout %g s scaled by %.1f for a load average of %.1f on %ld CPUs)", limit,
                        o.timeout_seconds, w.peak_load.scale(), w.peak_load.average, w.peak_load.cpus);
        } else {
          std::snprintf(seconds, sizeof seconds, "%g s (the machine was not loaded)", o.timeout_seconds);
        }
        const std::string message =
            std::string("no answer within ") + seconds + " (timeout: the plugin hangs); the worker was killed";
        if (!w.pending.empty()) {
          record(w.pending, "timeout", limit, message + " during case " + w.pending + log_note);
          resume = true;
        } else {
          group_result(w.group, "teardown", "timeout", message + " after the group's last case" + log_note);
        }
      } else if (WIFSIGNALED(status)) {
        const std::string message = "the worker was killed by " + signal_text(WTERMSIG(status));
        if (!w.pending.empty()) {
          record(w.pending, "crash", 0, message + " during case " + w.pending + " (group " + w.group + ")" + log_note);
          resume = true;
        } else {
          group_result(w.group, "teardown", "crash", message + " after the group's last case" + log_note);
        }
      } else if (!w.fatal.empty()) {
        for (size_t i : group_cases[w.group]) {
          record(results.cases[i].id, "fail", 0, "the worker could not start: " + w.fatal + log_note);
        }
      } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        const std::string message =
            "the worker exited with status " + std::to_string(WEXITSTATUS(status)) + " during this case" + log_note;
        if (!w.pending.empty()) {
          record(w.pending, "crash", 0, message);
          resume = true;
        }
      }
      if (!w.leak_count.empty()) {
        group_result(
            w.group, "leaks", "fail",
            w.leak_count +
                " host allocation(s) made through the host table were still live after "
                "instance_destroy (a leak)" +
                (w.leak_detail.empty() ? std::string(".") : "; live allocations grew during: " + w.leak_detail));
      }
      if (!w.memory_growth.empty()) group_result(w.group, "memory", "fail", w.memory_growth);
      if (!w.rerun_failure.empty()) group_result(w.group, "rerun", "fail", w.rerun_failure);
      finish_worker_files(w);
      if (resume) {
        gs.resume_after = w.pending;
        if (++gs.restarts <= kMaxRestarts) {
          queue.push_front(w.group);
        } else {
          for (size_t i : group_cases[w.group]) {
            record(results.cases[i].id, "fail", 0,
                   "not run: the group's worker crashed or hung " + std::to_string(kMaxRestarts) + " times");
          }
          ++groups_done;
        }
      } else {
        ++groups_done;
      }
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
      --k;
      fds.erase(fds.begin() + static_cast<std::ptrdiff_t>(k + 1));
    }
    progress(false);
  }
  progress(true);
  if (tty) std::fprintf(stderr, "\n");
  // Anything a worker never reported (it exited early without a word).
  for (CaseResult& r : results.cases) {
    if (r.status.empty()) {
      r.status = "fail";
      r.message = "the worker ended without running this case";
    }
  }
  for (CaseResult& r : results.cases) {
    if (r.failed()) r.rerun = rerun_command(o, r.id);
  }
  for (auto& r : extra) results.cases.push_back(std::move(r));
  results.seconds = std::chrono::duration<double>(Clock::now() - run_start).count();
}

}  // namespace catalyst::conformance
