// ring.cpp — our ring allreduce: reduce-scatter then allgather around the ranks, each step
// a nonblocking exchange with the two neighbours, cut into segments so that the reduction of
// one segment overlaps the arrival of the next. In reduce-scatter step s, rank r sends its
// partial of chunk (r - s - 1) mod p to the right and adds the left neighbour's partial of
// chunk (r - s - 2) mod p into its own (the arrived partial as the left operand). Chunk c is
// thus summed in the order c+1, c+2, ..., c (mod p), exactly once, and ends on rank c; the
// allgather copies it to every rank, so all ranks hold the same bits — and the same bits as
// the core's in-process communicator, which walks the same ring.
#include <algorithm>

#include "communicator.hpp"
#include "reduce.hpp"

namespace catalyst::mpi {
namespace {

constexpr int kRingTag = 17;

// Segments of at most `segment` bytes (a whole number of elements) covering `bytes`.
std::vector<std::pair<uint64_t, uint64_t>> segments(uint64_t bytes, uint64_t segment, uint64_t element) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  const uint64_t step = std::max<uint64_t>(element, segment / element * element);
  for (uint64_t at = 0; at < bytes; at += step) out.emplace_back(at, std::min(step, bytes - at));
  return out;
}

}  // namespace

ctl_status* ring_allreduce(Communicator& c, const ctl_comm_call& call, void* data, uint64_t count,
                           Clock::time_point deadline, bool scatter_only) {
  const uint32_t p = static_cast<uint32_t>(c.size), r = static_cast<uint32_t>(c.rank);
  if (p == 1) return nullptr;
  const int left = static_cast<int>((r + p - 1) % p), right = static_cast<int>((r + 1) % p);
  const uint64_t es = element_size(call.dtype);
  uint8_t* bytes = static_cast<uint8_t*>(data);
  auto chunk = [&](uint32_t k) {
    const uint64_t b = chunk_begin(count, p, k), e = chunk_begin(count, p, k + 1);
    return std::make_pair(b * es, (e - b) * es);
  };
  const uint64_t largest = (count / p + 1) * es;
  if (c.scratch.size() < largest) c.scratch.resize(largest);
  const std::string what = describe(call);
  const std::string neighbours = "rank " + std::to_string(left) + " or rank " + std::to_string(right);

  for (uint32_t s = 0; s + 1 < p; ++s) {
    const auto [send_at, send_bytes] = chunk((r + 2 * p - s - 1) % p);
    const auto [recv_at, recv_bytes] = chunk((r + 2 * p - s - 2) % p);
    const auto recv_parts = segments(recv_bytes, c.segment_bytes, es);
    const auto send_parts = segments(send_bytes, c.segment_bytes, es);
    std::vector<MPI_Request> receives(recv_parts.size()), sends(send_parts.size());
    for (size_t j = 0; j < recv_parts.size(); ++j) {
      const int rc = MPI_Irecv(c.scratch.data() + recv_parts[j].first, static_cast<int>(recv_parts[j].second), MPI_BYTE,
                               left, kRingTag, c.collectives, &receives[j]);
      if (rc != MPI_SUCCESS) return mpi_error(c, rc, "MPI_Irecv in " + what);
    }
    for (size_t j = 0; j < send_parts.size(); ++j) {
      const int rc = MPI_Isend(bytes + send_at + send_parts[j].first, static_cast<int>(send_parts[j].second), MPI_BYTE,
                               right, kRingTag, c.collectives, &sends[j]);
      if (rc != MPI_SUCCESS) return mpi_error(c, rc, "MPI_Isend in " + what);
    }
    // Segments are reduced in order, each as soon as it is in.
    for (size_t j = 0; j < recv_parts.size(); ++j) {
      std::vector<MPI_Request> one{receives[j]};
      if (ctl_status* status =
              wait_all(c, one, deadline, call.timeout_ms, "reduce-scatter step " + std::to_string(s) + " of " + what,
                       "rank " + std::to_string(left))) {
        return status;
      }
      receives[j] = one[0];
      combine(call.dtype, call.op, c.scratch.data() + recv_parts[j].first, bytes + recv_at + recv_parts[j].first,
              recv_parts[j].second / es);
    }
    if (ctl_status* status =
            wait_all(c, sends, deadline, call.timeout_ms, "reduce-scatter step " + std::to_string(s) + " of " + what,
                     "rank " + std::to_string(right))) {
      return status;
    }
  }
  if (call.op == CTL_COMM_MEAN) {
    const auto [own_at, own_bytes] = chunk(r);
    divide(call.dtype, bytes + own_at, own_bytes / es, p);
  }
  if (scatter_only) return nullptr;
  for (uint32_t s = 0; s + 1 < p; ++s) {
    const auto [send_at, send_bytes] = chunk((r + p - s) % p);
    const auto [recv_at, recv_bytes] = chunk((r + 2 * p - s - 1) % p);
    std::vector<MPI_Request> requests;
    for (const auto& [at, n] : segments(recv_bytes, c.segment_bytes, es)) {
      requests.emplace_back();
      const int rc = MPI_Irecv(bytes + recv_at + at, static_cast<int>(n), MPI_BYTE, left, kRingTag, c.collectives,
                               &requests.back());
      if (rc != MPI_SUCCESS) return mpi_error(c, rc, "MPI_Irecv in " + what);
    }
    for (const auto& [at, n] : segments(send_bytes, c.segment_bytes, es)) {
      requests.emplace_back();
      const int rc = MPI_Isend(bytes + send_at + at, static_cast<int>(n), MPI_BYTE, right, kRingTag, c.collectives,
                               &requests.back());
      if (rc != MPI_SUCCESS) return mpi_error(c, rc, "MPI_Isend in " + what);
    }
    if (ctl_status* status = wait_all(c, requests, deadline, call.timeout_ms,
                                      "allgather step " + std::to_string(s) + " of " + what, neighbours)) {
      return status;
    }
  }
  return nullptr;
}

}  // namespace catalyst::mpi
