// communicator.hpp — the MPI plugin's communicator: this process's rank of MPI_COMM_WORLD,
// with one duplicate communicator for collectives and one for the program's send/recv (so
// their messages never match each other), errors returned rather than fatal
// (MPI_ERRORS_RETURN), and every wait a polling loop with a deadline.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "catalyst_comm.h"

struct ctl_comm_plugin_communicator {
  const ctl_host_api* host = nullptr;
  MPI_Comm collectives = MPI_COMM_NULL;
  MPI_Comm point_to_point = MPI_COMM_NULL;
  int rank = 0;
  int size = 1;
  bool initialized_mpi = false;       // this plugin called MPI_Init_thread, so it finalizes
  std::vector<uint8_t> scratch;       // the ring's receive buffers
  uint64_t ring_threshold_bytes = 0;  // allreduce at or above this many bytes runs our ring
  uint64_t segment_bytes = 0;         // the ring's pipelining unit
  std::string algorithm;              // "auto", "ring" or "mpi" (CATALYST_MPI_ALLREDUCE)
};

namespace catalyst::mpi {

using Clock = std::chrono::steady_clock;
using Communicator = ctl_comm_plugin_communicator;

ctl_status* make_error(const Communicator& c, ctl_status_code code, const std::string& message);
// The status for an MPI error code `rc` returned by `what`.
ctl_status* mpi_error(const Communicator& c, int rc, const std::string& what);

// Polls `requests` until all complete or `deadline` passes (DEVICE_LOST naming `what` and
// `waiting_for`, e.g. "rank 3"). Yields the processor between polls: ranks often share cores.
ctl_status* wait_all(const Communicator& c, std::vector<MPI_Request>& requests, Clock::time_point deadline,
                     uint32_t timeout_ms, const std::string& what, const std::string& waiting_for);

// "allreduce #3 (f32, 1000 elements, sum)", as the core words calls.
std::string describe(const ctl_comm_call& call);

// Every rank's description of its next collective; a mismatch is FAILED_PRECONDITION naming
// rank 0's call and the first rank whose call differs, the same message on every rank.
ctl_status* check_same_collective(Communicator& c, const ctl_comm_call& call, Clock::time_point deadline);

// The collectives (collectives.cpp) and the ring (ring.cpp).
ctl_status* run_call(Communicator& c, const ctl_comm_call& call);
ctl_status* ring_allreduce(Communicator& c, const ctl_comm_call& call, void* data, uint64_t count,
                           Clock::time_point deadline, bool scatter_only);

}  // namespace catalyst::mpi
