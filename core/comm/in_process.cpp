// in_process.cpp — see in_process.h. The ring is the one the MPI plugin runs, step for step:
// in reduce-scatter step s, rank r adds the partial sum of chunk (r - s - 2) mod p that its
// left neighbour holds into its own, so chunk c is summed in the order c+1, c+2, ..., c
// (mod p) and ends on rank c; allgather then copies each finished chunk around the ring.
// Each element is thus reduced exactly once, and every rank gets the same bits.
#include "in_process.h"

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>

#include "host_reduce.h"
#include "status.h"

namespace catalyst::comm {
namespace {

using Clock = std::chrono::steady_clock;

size_t element_size(ctl_dtype dtype) {
  return ctl_dtype_size(dtype);
}

// memcpy, which must not see the null data pointer of an empty staging buffer.
void copy_bytes(void* destination, const void* source, size_t bytes) {
  if (bytes > 0) std::memcpy(destination, source, bytes);
}

bool same_collective(const ctl_comm_call& a, const ctl_comm_call& b) {
  return a.kind == b.kind && a.dtype == b.dtype && a.count == b.count && a.op == b.op &&
         a.root_or_peer == b.root_or_peer && a.sequence == b.sequence;
}

struct Message {
  uint32_t tag;
  std::vector<uint8_t> bytes;
};

}  // namespace

class InProcessGroup {
 public:
  explicit InProcessGroup(uint32_t size)
      : size_(size), arrived_(size, false), posted_(size), mailboxes_(size_t(size) * size) {}

  uint32_t size() const { return size_; }

  // Waits until every rank has arrived here, or the deadline passes (then the group is
  // broken and every waiting rank is told which ranks never came).
  ctl_status* barrier(uint32_t rank, Clock::time_point deadline, uint32_t timeout_ms, const std::string& where) {
    std::unique_lock lock(mutex_);
    if (!broken_.empty()) return failed();
    const uint64_t generation = generation_;
    arrived_[rank] = true;
    if (++arrived_count_ == size_) {
      std::fill(arrived_.begin(), arrived_.end(), false);
      arrived_count_ = 0;
      ++generation_;
      cv_.notify_all();
      return nullptr;
    }
    while (generation_ == generation) {
      if (!broken_.empty()) return failed();
      if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && generation_ == generation && broken_.empty()) {
        std::string missing;
        for (uint32_t r = 0; r < size_; ++r) {
          if (!arrived_[r]) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
        }
        broken_ = "in-process communicator: rank " + std::to_string(rank) + " waited " + std::to_string(timeout_ms) +
                  " ms (the timeout) at " + where + "; rank " + missing + " did not arrive";
        cv_.notify_all();
        return make_status_string(CTL_STATUS_DEVICE_LOST, broken_);
      }
    }
    return nullptr;
  }

  ctl_status* collective(uint32_t rank, const ctl_comm_call& call) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(call.timeout_ms);
    const std::string what = describe_call(call);
    {
      std::lock_guard lock(mutex_);
      posted_[rank] = call;
    }
    CTL_RETURN_IF_ERROR(barrier(rank, deadline, call.timeout_ms, "the start of " + what));
    // Every rank compares every call with rank 0's, so all ranks report the same pair.
    for (uint32_t r = 1; r < size_; ++r) {
      if (!same_collective(posted_[0], posted_[r])) {
        std::lock_guard lock(mutex_);
        const std::string message = "mismatched collectives: rank 0 called " + describe_call(posted_[0]) + ", rank " +
                                    std::to_string(r) + " called " + describe_call(posted_[r]);
        if (broken_.empty()) broken_ = message;
        cv_.notify_all();
        return make_status_string(CTL_STATUS_FAILED_PRECONDITION, message);
      }
    }
    const uint32_t p = size_;
    const uint32_t left = (rank + p - 1) % p;
    const size_t esize = element_size(call.dtype);
    auto step_barrier = [&](const char* phase, uint32_t step) {
      return barrier(rank, deadline, call.timeout_ms,
                     std::string(phase) + " step " + std::to_string(step) + " of " + what);
    };
    // The reduce-scatter half of the ring on `mine` (p chunks over `count` elements);
    // afterwards chunk `rank` of `mine` is final. `theirs(r)` is rank r's buffer.
    auto reduce_scatter = [&](uint8_t* mine, auto theirs, uint64_t count) -> ctl_status* {
      for (uint32_t s = 0; s + 1 < p; ++s) {
        if (s > 0) CTL_RETURN_IF_ERROR(step_barrier("reduce-scatter", s));
        const uint32_t k = (rank + 2 * p - s - 2) % p;
        const uint64_t begin = chunk_begin(count, p, k), end = chunk_begin(count, p, k + 1);
        combine(call.dtype, call.op, theirs(left) + begin * esize, mine + begin * esize, end - begin);
      }
      return nullptr;
    };
    switch (call.kind) {
      case CTL_COMM_CALL_ALLREDUCE: {
        auto data_of = [&](uint32_t r) { return static_cast<uint8_t*>(posted_[r].data); };
        uint8_t* mine = data_of(rank);
        CTL_RETURN_IF_ERROR(reduce_scatter(mine, data_of, call.count));
        const uint64_t own = chunk_begin(call.count, p, rank), own_end = chunk_begin(call.count, p, rank + 1);
        if (call.op == CTL_COMM_MEAN) divide(call.dtype, mine + own * esize, own_end - own, p);
        for (uint32_t s = 0; s + 1 < p; ++s) {
          CTL_RETURN_IF_ERROR(step_barrier("allgather", s));
          const uint32_t k = (rank + p - 1 - s) % p;
          const uint64_t begin = chunk_begin(call.count, p, k), end = chunk_begin(call.count, p, k + 1);
          copy_bytes(mine + begin * esize, data_of(left) + begin * esize, (end - begin) * esize);
        }
        break;
      }
      case CTL_COMM_CALL_REDUCE_SCATTER: {
        // The input is the core's own staging copy, so the ring may work in it.
        auto input_of = [&](uint32_t r) { return static_cast<uint8_t*>(const_cast<void*>(posted_[r].input)); };
        uint8_t* mine = input_of(rank);
        CTL_RETURN_IF_ERROR(reduce_scatter(mine, input_of, call.count * p));
        copy_bytes(call.output, mine + call.count * rank * esize, call.count * esize);
        if (call.op == CTL_COMM_MEAN) divide(call.dtype, call.output, call.count, p);
        break;
      }
      case CTL_COMM_CALL_BROADCAST:
        if (rank != call.root_or_peer && call.count > 0) {
          std::memcpy(call.data, posted_[call.root_or_peer].data, call.count * esize);
        }
        break;
      case CTL_COMM_CALL_ALLGATHER:
        for (uint32_t r = 0; r < p && call.count > 0; ++r) {
          std::memcpy(static_cast<uint8_t*>(call.output) + call.count * r * esize, posted_[r].input,
                      call.count * esize);
        }
        break;
      default:
        break;  // barrier: arriving was the whole call
    }
    // Nobody leaves while a neighbour may still read its buffer.
    return barrier(rank, deadline, call.timeout_ms, "the end of " + what);
  }

  ctl_status* send(uint32_t rank, const ctl_comm_call& call) {
    std::lock_guard lock(mutex_);
    if (!broken_.empty()) return failed();
    const uint8_t* bytes = static_cast<const uint8_t*>(call.input);
    mailboxes_[rank * size_ + call.root_or_peer].push_back(
        {call.tag, std::vector<uint8_t>(bytes, bytes + call.count * element_size(call.dtype))});
    cv_.notify_all();
    return nullptr;  // buffered: a send never waits for its receiver
  }

  ctl_status* recv(uint32_t rank, const ctl_comm_call& call) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(call.timeout_ms);
    std::unique_lock lock(mutex_);
    auto& box = mailboxes_[call.root_or_peer * size_ + rank];
    while (true) {
      if (!broken_.empty()) return failed();
      for (auto it = box.begin(); it != box.end(); ++it) {
        if (it->tag != call.tag) continue;
        const uint64_t expected = call.count * element_size(call.dtype);
        if (it->bytes.size() != expected) {
          return make_status(CTL_STATUS_INVALID_ARGUMENT,
                             "recv on rank %u from rank %u, tag %u: the message has %zu bytes, the tensor %llu", rank,
                             call.root_or_peer, call.tag, it->bytes.size(), static_cast<unsigned long long>(expected));
        }
        copy_bytes(call.output, it->bytes.data(), expected);
        box.erase(it);
        return nullptr;
      }
      if (cv_.wait_until(lock, deadline) == std::cv_status::timeout) {
        bool arrived = false;
        for (const auto& m : box) arrived |= m.tag == call.tag;
        if (arrived) continue;
        broken_ = "in-process communicator: rank " + std::to_string(rank) + " waited " +
                  std::to_string(call.timeout_ms) + " ms (the timeout) for a message from rank " +
                  std::to_string(call.root_or_peer) + " with tag " + std::to_string(call.tag);
        cv_.notify_all();
        return make_status_string(CTL_STATUS_DEVICE_LOST, broken_);
      }
    }
  }

 private:
  ctl_status* failed() const {
    return make_status_string(CTL_STATUS_DEVICE_LOST, "the in-process group failed earlier: " + broken_);
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  uint32_t size_;
  uint64_t generation_ = 0;
  std::vector<bool> arrived_;
  uint32_t arrived_count_ = 0;
  std::string broken_;  // the first failure; every later call of every rank fails with it
  std::vector<ctl_comm_call> posted_;
  std::vector<std::deque<Message>> mailboxes_;  // [from * size + to]
};

namespace {

class InProcessRank final : public Backend {
 public:
  InProcessRank(std::shared_ptr<InProcessGroup> group, uint32_t rank) : group_(std::move(group)), rank_(rank) {}
  ctl_status* run(const ctl_comm_call& call) override {
    if (call.kind == CTL_COMM_CALL_SEND) return group_->send(rank_, call);
    if (call.kind == CTL_COMM_CALL_RECV) return group_->recv(rank_, call);
    return group_->collective(rank_, call);
  }
  uint32_t rank() const override { return rank_; }
  uint32_t size() const override { return group_->size(); }
  const char* name() const override { return "in-process"; }

 private:
  std::shared_ptr<InProcessGroup> group_;
  uint32_t rank_;
};

}  // namespace

std::vector<std::unique_ptr<Backend>> make_in_process_group(uint32_t size) {
  auto group = std::make_shared<InProcessGroup>(size);
  std::vector<std::unique_ptr<Backend>> ranks;
  for (uint32_t r = 0; r < size; ++r) ranks.push_back(std::make_unique<InProcessRank>(group, r));
  return ranks;
}

}  // namespace catalyst::comm
