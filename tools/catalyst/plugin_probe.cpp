// plugin_probe.cpp — see plugin_probe.h. The child reports through a pipe, in records of a
// type byte and length-prefixed fields; the parent reads them until the child ends or the
// time is up. Whatever the child sent before it died (its log lines) is kept, because
// those are the only clue to where a plugin crashed.
#include "plugin_probe.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

namespace catalyst::cli {
namespace {

constexpr char kLogRecord = 'L';   // level byte, text
constexpr char kInfoRecord = 'I';  // the plugin report
constexpr char kUnloading = 'U';   // the report is sent; releasing the runtime now
constexpr char kDoneRecord = 'D';  // released; the child exits 0 next

void write_all(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent is gone; nothing to tell
    done += static_cast<size_t>(n);
  }
}

void put_u64(std::string& out, uint64_t value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

void put_string(std::string& out, const char* text) {
  const std::string s = text ? text : "";
  put_u64(out, s.size());
  out += s;
}

// Reads the fields put_u64 and put_string wrote; false when the record is cut short.
class Reader {
 public:
  explicit Reader(const std::string& bytes) : bytes_(bytes) {}
  bool u64(uint64_t* out) {
    if (bytes_.size() - at_ < sizeof *out) return false;
    std::memcpy(out, bytes_.data() + at_, sizeof *out);
    at_ += sizeof *out;
    return true;
  }
  bool string(std::string* out) {
    uint64_t size = 0;
    if (!u64(&size) || bytes_.size() - at_ < size) return false;
    out->assign(bytes_, at_, size);
    at_ += size;
    return true;
  }
  bool byte(char* out) {
    if (at_ >= bytes_.size()) return false;
    *out = bytes_[at_++];
    return true;
  }
  size_t at() const { return at_; }

 private:
  const std::string& bytes_;
  size_t at_ = 0;
};

void child_log(void* user_data, ctl_log_level level, const char* message) {
  std::string record(1, kLogRecord);
  record += static_cast<char>(level);
  put_string(record, message);
  write_all(*static_cast<int*>(user_data), record);
}

[[noreturn]] void run_child(const std::string& path, int fd) {
  const char* paths[] = {path.c_str()};
  ctl_runtime_options options{};
  options.struct_size = CTL_RUNTIME_OPTIONS_STRUCT_SIZE;
  options.plugin_paths = paths;
  options.plugin_path_count = 1;
  options.disable_discovery = true;
  options.log_fn = child_log;
  options.log_user_data = &fd;
  ctl_runtime* runtime = nullptr;
  if (ctl_status* status = ctl_runtime_create(&options, &runtime)) {
    child_log(&fd, CTL_LOG_ERROR, ctl_status_get_message(status));
    _exit(100);
  }
  ctl_plugin_info info{};
  info.struct_size = CTL_PLUGIN_INFO_STRUCT_SIZE;
  if (ctl_status* status = ctl_runtime_plugin_info(runtime, 0, &info)) {
    child_log(&fd, CTL_LOG_ERROR, ctl_status_get_message(status));
    _exit(100);
  }
  // Everything `catalyst devices` asks of a device in-process, asked here first.
  for (size_t i = 0; i < ctl_runtime_device_count(runtime); ++i) {
    ctl_device* device = nullptr;
    ctl_device_info device_info{};
    device_info.struct_size = CTL_DEVICE_INFO_STRUCT_SIZE;
    if (ctl_status* status = ctl_runtime_device(runtime, i, &device)) ctl_status_free(status);
    if (device) {
      if (ctl_status* status = ctl_device_get_info(device, &device_info)) ctl_status_free(status);
    }
  }
  std::string record(1, kInfoRecord);
  record += static_cast<char>(info.accepted ? 1 : 0);
  put_string(record, info.name);
  put_string(record, info.version);
  put_string(record, info.reason);
  put_u64(record, info.abi_major);
  put_u64(record, info.abi_minor);
  put_u64(record, info.device_count);
  write_all(fd, record);
  write_all(fd, std::string(1, kUnloading));
  ctl_runtime_release(runtime);
  write_all(fd, std::string(1, kDoneRecord));
  _exit(0);
}

// Takes every complete record off the front of `buffer` into `result`.
void parse_records(std::string& buffer, ProbeResult* result, bool* got_info, bool* done) {
  for (;;) {
    Reader reader(buffer);
    char type = 0;
    if (!reader.byte(&type)) return;
    if (type == kLogRecord) {
      char level = 0;
      std::string text;
      if (!reader.byte(&level) || !reader.string(&text)) return;
      result->log.push_back({static_cast<ctl_log_level>(level), std::move(text)});
    } else if (type == kInfoRecord) {
      char accepted = 0;
      uint64_t major = 0, minor = 0, count = 0;
      if (!reader.byte(&accepted) || !reader.string(&result->name) || !reader.string(&result->version) ||
          !reader.string(&result->reason) || !reader.u64(&major) || !reader.u64(&minor) || !reader.u64(&count)) {
        return;
      }
      result->accepted = accepted != 0;
      result->abi_major = static_cast<uint32_t>(major);
      result->abi_minor = static_cast<uint32_t>(minor);
      result->device_count = count;
      *got_info = true;
    } else if (type == kUnloading) {
      result->unloading = true;
    } else if (type == kDoneRecord) {
      *done = true;
    }
    buffer.erase(0, reader.at());
  }
}

}  // namespace

std::string signal_text(int signal) {
  const char* description = strsignal(signal);
  return "signal " + std::to_string(signal) + " (" + (description ? description : "unknown") + ")";
}

ProbeResult probe_plugin(const std::string& path, double timeout_seconds) {
  ProbeResult result;
  int fds[2];
  if (pipe(fds) != 0) {
    result.reason = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  std::fflush(stdout);  // the child must not write the parent's buffered output again
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) {
    result.reason = std::string("fork: ") + std::strerror(errno);
    close(fds[0]);
    close(fds[1]);
    return result;
  }
  if (pid == 0) {
    close(fds[0]);
    run_child(path, fds[1]);
  }
  close(fds[1]);

  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_seconds);
  std::string buffer;
  bool got_info = false, done = false, timed_out = false, eof = false;
  int status = 0;
  bool reaped = false;
  while (true) {
    if (!eof) {
      pollfd p{fds[0], POLLIN, 0};
      if (poll(&p, 1, 100) > 0) {
        char chunk[4096];
        const ssize_t n = read(fds[0], chunk, sizeof chunk);
        if (n > 0) {
          buffer.append(chunk, static_cast<size_t>(n));
          parse_records(buffer, &result, &got_info, &done);
        } else if (n == 0 || errno != EINTR) {
          eof = true;
        }
      }
    } else {
      poll(nullptr, 0, 100);  // the child closed its end but has not ended yet
    }
    // A plugin may leave a process of its own holding the pipe: stop when the child is gone.
    if (waitpid(pid, &status, WNOHANG) == pid) {
      reaped = true;
      pollfd rest{fds[0], POLLIN, 0};
      while (!eof && poll(&rest, 1, 0) > 0) {
        char chunk[4096];
        const ssize_t n = read(fds[0], chunk, sizeof chunk);
        if (n <= 0) break;
        buffer.append(chunk, static_cast<size_t>(n));
      }
      parse_records(buffer, &result, &got_info, &done);
      break;
    }
    if (Clock::now() > deadline) {
      kill(pid, SIGKILL);
      timed_out = true;
      break;
    }
  }
  close(fds[0]);
  if (!reaped) waitpid(pid, &status, 0);

  if (timed_out && !done) {
    result.outcome = ProbeResult::Outcome::kTimedOut;
  } else if (WIFSIGNALED(status)) {
    result.outcome = ProbeResult::Outcome::kCrashed;
    result.signal = WTERMSIG(status);
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && got_info && done) {
    result.outcome = ProbeResult::Outcome::kLoaded;
  } else {
    result.outcome = ProbeResult::Outcome::kExited;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  return result;
}

}  // namespace catalyst::cli
