// comm_stream.cpp — see comm_stream.h.
#include "comm_stream.h"

#include "c_guard.h"

namespace catalyst::comm {

void RequestState::complete(ctl_status* status) {
  std::lock_guard lock(mutex);
  code = ctl_status_get_code(status);
  message = ctl_status_get_message(status);
  ctl_status_free(status);
  done = true;
  done_cv.notify_all();
}

CommStream::CommStream() : thread_([this] { loop(); }) {}

CommStream::~CommStream() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

std::shared_ptr<RequestState> CommStream::submit(std::function<ctl_status*()> work) {
  auto state = std::make_shared<RequestState>();
  {
    std::lock_guard lock(mutex_);
    queue_.emplace_back(std::move(work), state);
  }
  cv_.notify_all();
  return state;
}

void CommStream::loop() {
  while (true) {
    std::pair<std::function<ctl_status*()>, std::shared_ptr<RequestState>> item;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything queued has run
      item = std::move(queue_.front());
      queue_.pop_front();
    }
    item.second->complete(guard([&] { return item.first(); }));
  }
}

}  // namespace catalyst::comm
