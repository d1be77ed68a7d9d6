// collectives.cpp — one ctl_comm_call on MPI. Allreduce runs our ring (ring.cpp) or, for
// small SUM and MEAN of types MPI knows, MPI_Iallreduce (lower latency); the switch-over size
// is the measured one in README.md. Broadcast, allgather and barrier are MPI's nonblocking
// collectives; send and recv are MPI_Isend / MPI_Irecv on a communicator of their own. Every
// wait polls against the call's deadline.
#include <sched.h>

#include <climits>
#include <cstring>

#include "communicator.hpp"
#include "reduce.hpp"

namespace catalyst::mpi {
namespace {

MPI_Datatype mpi_type(ctl_dtype dtype) {
  switch (dtype) {
    case CTL_DTYPE_F32:
      return MPI_FLOAT;
    case CTL_DTYPE_F64:
      return MPI_DOUBLE;
    case CTL_DTYPE_I32:
      return MPI_INT32_T;
    case CTL_DTYPE_I64:
      return MPI_INT64_T;
    default:
      return MPI_DATATYPE_NULL;  // f16, bf16: MPI has no such type; our ring reduces them
  }
}

bool use_mpi_allreduce(const Communicator& c, const ctl_comm_call& call, uint64_t bytes) {
  if (mpi_type(call.dtype) == MPI_DATATYPE_NULL) return false;
  // MPI's MAX and MIN leave NaN to the implementation; catalyst_comm.h promises NaN wins.
  if (call.op != CTL_COMM_SUM && call.op != CTL_COMM_MEAN) return false;
  if (call.count > static_cast<uint64_t>(INT_MAX)) return false;
  if (c.algorithm == "ring") return false;
  if (c.algorithm == "mpi") return true;
  return bytes < c.ring_threshold_bytes;
}

ctl_status* too_large(const Communicator& c, const ctl_comm_call& call) {
  return make_error(c, CTL_STATUS_UNSUPPORTED, describe(call) + " moves more than 2^31 - 1 bytes in one MPI call");
}

ctl_status* poll_one(Communicator& c, MPI_Request request, Clock::time_point deadline, const ctl_comm_call& call,
                     const std::string& waiting_for) {
  std::vector<MPI_Request> requests{request};
  return wait_all(c, requests, deadline, call.timeout_ms, describe(call), waiting_for);
}

}  // namespace

ctl_status* run_call(Communicator& c, const ctl_comm_call& call) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(call.timeout_ms);
  const uint64_t es = element_size(call.dtype);
  const uint64_t bytes = call.count * es;
  const int p = c.size;
  if (call.kind == CTL_COMM_CALL_SEND || call.kind == CTL_COMM_CALL_RECV) {
    if (bytes > static_cast<uint64_t>(INT_MAX)) return too_large(c, call);
    const int peer = static_cast<int>(call.root_or_peer), tag = static_cast<int>(call.tag);
    MPI_Request request;
    int rc = call.kind == CTL_COMM_CALL_SEND
                 ? MPI_Isend(call.input, static_cast<int>(bytes), MPI_BYTE, peer, tag, c.point_to_point, &request)
                 : MPI_Irecv(call.output, static_cast<int>(bytes), MPI_BYTE, peer, tag, c.point_to_point, &request);
    if (rc != MPI_SUCCESS) return mpi_error(c, rc, describe(call));
    if (call.kind == CTL_COMM_CALL_SEND) return poll_one(c, request, deadline, call, "rank " + std::to_string(peer));
    // A receive checks the message's size against the tensor's.
    while (true) {
      int done = 0;
      MPI_Status status;
      rc = MPI_Test(&request, &done, &status);
      if (rc != MPI_SUCCESS) return mpi_error(c, rc, describe(call));
      if (done) {
        int received = 0;
        MPI_Get_count(&status, MPI_BYTE, &received);
        if (status.MPI_ERROR == MPI_ERR_TRUNCATE || static_cast<uint64_t>(received) != bytes) {
          return make_error(c, CTL_STATUS_INVALID_ARGUMENT,
                            describe(call) + ": the message from rank " + std::to_string(peer) + " does not have the " +
                                std::to_string(bytes) + " bytes of the tensor");
        }
        return nullptr;
      }
      if (Clock::now() >= deadline) {
        MPI_Cancel(&request);
        return make_error(c, CTL_STATUS_DEVICE_LOST,
                          "waited " + std::to_string(call.timeout_ms) + " ms (the timeout) in " + describe(call) +
                              " for rank " + std::to_string(peer) + ", which sent nothing");
      }
      sched_yield();
    }
  }

  if (ctl_status* status = check_same_collective(c, call, deadline)) return status;
  MPI_Request request = MPI_REQUEST_NULL;
  int rc = MPI_SUCCESS;
  switch (call.kind) {
    case CTL_COMM_CALL_ALLREDUCE:
      if (call.count == 0) return nullptr;
      if (use_mpi_allreduce(c, call, bytes)) {
        rc = MPI_Iallreduce(MPI_IN_PLACE, call.data, static_cast<int>(call.count), mpi_type(call.dtype), MPI_SUM,
                            c.collectives, &request);
        if (rc != MPI_SUCCESS) return mpi_error(c, rc, "MPI_Iallreduce in " + describe(call));
        if (ctl_status* status = poll_one(c, request, deadline, call, "another rank")) return status;
        if (call.op == CTL_COMM_MEAN) divide(call.dtype, call.data, call.count, static_cast<uint32_t>(p));
        return nullptr;
      }
      return ring_allreduce(c, call, call.data, call.count, deadline, false);
    case CTL_COMM_CALL_REDUCE_SCATTER: {
      if (call.count == 0) return nullptr;
      // The ring works in place; the input is the core's, so it works on a copy.
      std::vector<uint8_t> work(static_cast<const uint8_t*>(call.input),
                                static_cast<const uint8_t*>(call.input) + bytes * p);
      if (ctl_status* status = ring_allreduce(c, call, work.data(), call.count * p, deadline, true)) return status;
      std::memcpy(call.output, work.data() + bytes * c.rank, bytes);
      return nullptr;
    }
    case CTL_COMM_CALL_BROADCAST:
      if (bytes == 0) return nullptr;
      if (bytes > static_cast<uint64_t>(INT_MAX)) return too_large(c, call);
      rc = MPI_Ibcast(call.data, static_cast<int>(bytes), MPI_BYTE, static_cast<int>(call.root_or_peer), c.collectives,
                      &request);
      break;
    case CTL_COMM_CALL_ALLGATHER:
      if (bytes == 0) return nullptr;
      if (bytes * p > static_cast<uint64_t>(INT_MAX)) return too_large(c, call);
      rc = MPI_Iallgather(call.input, static_cast<int>(bytes), MPI_BYTE, call.output, static_cast<int>(bytes), MPI_BYTE,
                          c.collectives, &request);
      break;
    case CTL_COMM_CALL_BARRIER:
      rc = MPI_Ibarrier(c.collectives, &request);
      break;
    default:
      return make_error(c, CTL_STATUS_UNSUPPORTED, "unknown call kind " + std::to_string(call.kind));
  }
  if (rc != MPI_SUCCESS) return mpi_error(c, rc, describe(call));
  return poll_one(c, request, deadline, call, "another rank");
}

}  // namespace catalyst::mpi
