// comm.h — the structs behind ctl_comm and ctl_comm_request: a backend (in-process or a
// plugin), the communication stream that runs its calls in order, and the first failure,
// after which the communicator refuses every call.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend.h"
#include "catalyst_comm.h"
#include "comm_stream.h"

namespace catalyst::comm {
constexpr uint32_t kCommMagic = 0x4d4d4f43;     // "COMM"
constexpr uint32_t kRequestMagic = 0x51524d43;  // "CMRQ"
}  // namespace catalyst::comm

struct ctl_comm {
  uint32_t magic = catalyst::comm::kCommMagic;
  std::atomic<int64_t> references{1};
  ctl_runtime* runtime = nullptr;  // retained: plugin communicators log through it
  std::unique_ptr<catalyst::comm::Backend> backend;
  uint32_t default_timeout_ms = CTL_COMM_DEFAULT_TIMEOUT_MS;
  std::mutex broken_mutex;
  std::string broken;               // the first failure, quoted by every later call
  uint64_t sequence = 0;            // collectives run so far; touched only on the stream's thread
  std::vector<uint8_t> staging[2];  // host copies of a call's tensors; the stream's thread only
  // Declared last so it is destroyed first: it finishes the queued calls, which use the rest.
  std::unique_ptr<catalyst::comm::CommStream> stream;

  ~ctl_comm();
};

struct ctl_comm_request {
  uint32_t magic = catalyst::comm::kRequestMagic;
  std::shared_ptr<catalyst::comm::RequestState> state;
};
