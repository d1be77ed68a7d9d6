// communicator.cpp — see communicator.hpp: errors, the polling wait, and the check that
// every rank runs the same collective.
#include <sched.h>

#include <cstring>

#include "communicator.hpp"
#include "reduce.hpp"

namespace catalyst::mpi {

ctl_status* make_error(const Communicator& c, ctl_status_code code, const std::string& message) {
  const std::string text = "mpi rank " + std::to_string(c.rank) + ": " + message;
  return c.host->status_create(c.host->context, code, text.c_str());
}

ctl_status* mpi_error(const Communicator& c, int rc, const std::string& what) {
  char text[MPI_MAX_ERROR_STRING] = "";
  int length = 0;
  if (MPI_Error_string(rc, text, &length) != MPI_SUCCESS) std::snprintf(text, sizeof text, "MPI error %d", rc);
  // An MPI failure mid-collective leaves peers in unknown states: the communicator is lost.
  return make_error(c, CTL_STATUS_DEVICE_LOST, what + " failed: " + text);
}

ctl_status* wait_all(const Communicator& c, std::vector<MPI_Request>& requests, Clock::time_point deadline,
                     uint32_t timeout_ms, const std::string& what, const std::string& waiting_for) {
  while (true) {
    int done = 0;
    const int rc = MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) return mpi_error(c, rc, what);
    if (done) return nullptr;
    if (Clock::now() >= deadline) {
      return make_error(c, CTL_STATUS_DEVICE_LOST,
                        "waited " + std::to_string(timeout_ms) + " ms (the timeout) in " + what + " for " +
                            waiting_for + ", which did not answer (dead, stuck or not calling it)");
    }
    sched_yield();
  }
}

std::string describe(const ctl_comm_call& call) {
  static const char* const kinds[] = {"allreduce", "broadcast", "allgather", "reduce_scatter",
                                      "send",      "recv",      "barrier"};
  static const char* const ops[] = {"sum", "mean", "max", "min"};
  const unsigned kind = static_cast<unsigned>(call.kind);
  std::string text = kind < 7 ? kinds[kind] : "unknown call";
  if (call.kind == CTL_COMM_CALL_SEND || call.kind == CTL_COMM_CALL_RECV) {
    text += std::string(call.kind == CTL_COMM_CALL_SEND ? " to" : " from") + " rank " +
            std::to_string(call.root_or_peer) + " tag " + std::to_string(call.tag);
  } else {
    text += " #" + std::to_string(call.sequence);
  }
  if (call.kind == CTL_COMM_CALL_BARRIER) return text;
  text += std::string(" (") + dtype_label(call.dtype) + ", " + std::to_string(call.count) + " elements";
  if ((call.kind == CTL_COMM_CALL_ALLREDUCE || call.kind == CTL_COMM_CALL_REDUCE_SCATTER) &&
      static_cast<unsigned>(call.op) < 4) {
    text += std::string(", ") + ops[call.op];
  }
  if (call.kind == CTL_COMM_CALL_BROADCAST) text += ", root " + std::to_string(call.root_or_peer);
  return text + ")";
}

namespace {

// What ranks compare before a collective: fixed-size, so one MPI_Iallgather carries it.
struct Signature {
  uint32_t kind, dtype, op, root;
  uint64_t count, sequence;
};

ctl_comm_call call_of(const Signature& s) {
  ctl_comm_call call{};
  call.kind = static_cast<ctl_comm_call_kind>(s.kind);
  call.dtype = static_cast<ctl_dtype>(s.dtype);
  call.op = static_cast<ctl_comm_reduce_op>(s.op);
  call.root_or_peer = s.root;
  call.count = s.count;
  call.sequence = s.sequence;
  return call;
}

}  // namespace

ctl_status* check_same_collective(Communicator& c, const ctl_comm_call& call, Clock::time_point deadline) {
  Signature mine{};
  mine.kind = call.kind;
  mine.dtype = call.dtype;
  mine.op = (call.kind == CTL_COMM_CALL_ALLREDUCE || call.kind == CTL_COMM_CALL_REDUCE_SCATTER) ? call.op : 0;
  mine.root = call.kind == CTL_COMM_CALL_BROADCAST ? call.root_or_peer : 0;
  mine.count = call.count;
  mine.sequence = call.sequence;
  std::vector<Signature> all(static_cast<size_t>(c.size));
  std::vector<MPI_Request> request(1);
  const int rc =
      MPI_Iallgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, c.collectives, &request[0]);
  if (rc != MPI_SUCCESS) return mpi_error(c, rc, "MPI_Iallgather of the call signatures");
  if (ctl_status* status =
          wait_all(c, request, deadline, call.timeout_ms, "the start of " + describe(call), "another rank")) {
    return status;
  }
  for (int r = 1; r < c.size; ++r) {
    if (std::memcmp(&all[0], &all[r], sizeof(Signature)) != 0) {
      return make_error(c, CTL_STATUS_FAILED_PRECONDITION,
                        "mismatched collectives: rank 0 called " + describe(call_of(all[0])) + ", rank " +
                            std::to_string(r) + " called " + describe(call_of(all[r])));
    }
  }
  return nullptr;
}

}  // namespace catalyst::mpi
