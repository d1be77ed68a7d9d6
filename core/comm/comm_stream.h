// comm_stream.h — a communicator's communication stream: one thread that runs the
// communicator's calls in the order they were issued, so the issuing thread goes on
// computing while they run, and the backend sees one call at a time. Each call completes a
// request that any thread may wait on, with a timeout.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "catalyst.h"

namespace catalyst::comm {

// The outcome of one call, shared by the stream and the request handles.
struct RequestState {
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  ctl_status_code code = CTL_STATUS_OK;
  std::string message;
  void complete(ctl_status* status);
};

class CommStream {
 public:
  CommStream();
  ~CommStream();  // runs what is queued, then stops
  CommStream(const CommStream&) = delete;
  CommStream& operator=(const CommStream&) = delete;

  // Queues `work`; its status completes the returned request.
  std::shared_ptr<RequestState> submit(std::function<ctl_status*()> work);

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::pair<std::function<ctl_status*()>, std::shared_ptr<RequestState>>> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace catalyst::comm
