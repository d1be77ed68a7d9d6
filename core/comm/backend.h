// backend.h — what a communicator runs its calls on: the in-process group or a plugin.
// A backend sees host memory only (the core stages tensors, catalyst_comm.h says why) and
// each call in the form a plugin sees it, ctl_comm_call, so both kinds are driven alike.
#pragma once

#include <string>

#include "catalyst_comm.h"

namespace catalyst::comm {

class Backend {
 public:
  virtual ~Backend() = default;
  // Runs one checked call to completion or to its deadline (call.timeout_ms > 0).
  virtual ctl_status* run(const ctl_comm_call& call) = 0;
  virtual uint32_t rank() const = 0;
  virtual uint32_t size() const = 0;
  virtual const char* name() const = 0;
  // The communicator failed earlier: tear down without waiting for peers.
  virtual void mark_broken() {}
};

// Words for a call, as errors quote it: "allreduce #3 (f32, 1000 elements, sum)".
std::string describe_call(const ctl_comm_call& call);

}  // namespace catalyst::comm
