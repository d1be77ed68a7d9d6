// distributed.hpp — communicators and data-parallel training on catalyst_comm.h.
//
//   auto comms = catalyst::distributed::Communicator::in_process(rt, {dev0, dev1});  // or
//   auto comm = catalyst::distributed::Communicator::from_plugin(rt, "mpi");          // under mpirun
//   catalyst::distributed::DataParallel ddp(rt, comm, model.parameters());
//   ddp.broadcast_parameters();            // every rank starts from rank 0's parameters
//   loss_on_my_shard.backward();
//   ddp.synchronize_gradients();           // gradients become the mean over ranks
//   optimizer.step(...);
//
// Buckets. Gradients are averaged in buckets — the first of at least 1 MiB, the rest of at
// least 25 MiB (as PyTorch's DDP), configurable — so that a few large calls replace one per
// parameter. The ABI has no hook that says when one parameter's gradient is final during
// ctl_tensor_backward (it is one call that returns when the whole backward is done), so
// buckets cannot start during backward. They are filled in reverse parameter order — the
// order in which reverse-mode autograd finishes gradients (the last layers first) and the one
// DDP uses when it has no hook either — and each bucket's allreduce is started as soon as the
// bucket is packed, so the communication of one bucket overlaps the packing of the next and,
// on devices that run asynchronously, the rest of the step's queued work. A gradient-ready
// callback in catalyst.h would let the first buckets start inside backward; DataParallel's
// interface would not change.
//
// A parameter with no gradient on a step is an error naming it (before this rank sends
// anything, so the other ranks then fail with the communicator's timeout — never a hang).
#pragma once

#include <catalyst_comm.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "catalyst/catalyst.hpp"
#include "catalyst/nn.hpp"

namespace catalyst::distributed {

// One in-flight call; wait() throws the call's error.
class Request {
 public:
  Request() = default;
  explicit Request(ctl_comm_request* request) : request_(request) {}
  Request(Request&& other) noexcept : request_(std::exchange(other.request_, nullptr)) {}
  Request& operator=(Request&& other) noexcept {
    std::swap(request_, other.request_);
    return *this;
  }
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ~Request() { ctl_comm_request_release(request_); }

  void wait(uint32_t timeout_ms = 0) const { check(ctl_comm_request_wait(request_, timeout_ms)); }
  bool done() const {
    bool d = false;
    check(ctl_comm_request_test(request_, &d));
    return d;
  }

 private:
  ctl_comm_request* request_ = nullptr;
};

// A rank of a group. Copies share the communicator.
class Communicator {
 public:
  Communicator() = default;
  explicit Communicator(ctl_comm* comm) : comm_(comm) {}
  Communicator(const Communicator& other) : comm_(other.comm_) { ctl_comm_retain(comm_); }
  Communicator& operator=(Communicator other) {
    std::swap(comm_, other.comm_);
    return *this;
  }
  ~Communicator() { ctl_comm_release(comm_); }

  // One rank per device of this process; rank i is devices[i]. Use each from its own thread.
  static std::vector<Communicator> in_process(const Runtime& runtime, const std::vector<Device>& devices,
                                              uint32_t default_timeout_ms = 0) {
    std::vector<ctl_device*> raw;
    for (const Device& d : devices) raw.push_back(d.get());
    std::vector<ctl_comm*> comms(raw.size(), nullptr);
    ctl_comm_options o{};
    o.struct_size = CTL_COMM_OPTIONS_STRUCT_SIZE;
    o.default_timeout_ms = default_timeout_ms;
    check(ctl_comm_create_in_process(runtime.get(), raw.data(), raw.size(), &o, comms.data()));
    std::vector<Communicator> out;
    for (ctl_comm* c : comms) out.emplace_back(c);
    return out;
  }
  // This process's rank of the group a communication plugin forms ("mpi" under mpirun).
  static Communicator from_plugin(const Runtime& runtime, const std::string& name, uint32_t default_timeout_ms = 0) {
    ctl_comm_options o{};
    o.struct_size = CTL_COMM_OPTIONS_STRUCT_SIZE;
    o.default_timeout_ms = default_timeout_ms;
    ctl_comm* c = nullptr;
    check(ctl_comm_create_from_plugin(runtime.get(), name.c_str(), &o, &c));
    return Communicator(c);
  }

  ctl_comm* get() const { return comm_; }
  int rank() const { return ctl_comm_rank(comm_); }
  int size() const { return ctl_comm_size(comm_); }

  Request allreduce_async(const Tensor& t, ctl_comm_reduce_op op = CTL_COMM_SUM, uint32_t timeout_ms = 0) const {
    ctl_comm_request* r = nullptr;
    const ctl_comm_call_options o = options(timeout_ms);
    check(ctl_comm_allreduce_async(comm_, t.get(), op, &o, &r));
    return Request(r);
  }
  void allreduce(const Tensor& t, ctl_comm_reduce_op op = CTL_COMM_SUM, uint32_t timeout_ms = 0) const {
    allreduce_async(t, op, timeout_ms).wait();
  }
  Request broadcast_async(const Tensor& t, uint32_t root, uint32_t timeout_ms = 0) const {
    ctl_comm_request* r = nullptr;
    const ctl_comm_call_options o = options(timeout_ms);
    check(ctl_comm_broadcast_async(comm_, t.get(), root, &o, &r));
    return Request(r);
  }
  void broadcast(const Tensor& t, uint32_t root, uint32_t timeout_ms = 0) const {
    broadcast_async(t, root, timeout_ms).wait();
  }
  void allgather(const Tensor& input, const Tensor& output, uint32_t timeout_ms = 0) const {
    const ctl_comm_call_options o = options(timeout_ms);
    check(ctl_comm_allgather(comm_, input.get(), output.get(), &o));
  }
  void barrier(uint32_t timeout_ms = 0) const {
    const ctl_comm_call_options o = options(timeout_ms);
    check(ctl_comm_barrier(comm_, &o));
  }

 private:
  static ctl_comm_call_options options(uint32_t timeout_ms) {
    ctl_comm_call_options o{};
    o.struct_size = CTL_COMM_CALL_OPTIONS_STRUCT_SIZE;
    o.timeout_ms = timeout_ms;
    return o;
  }
  ctl_comm* comm_ = nullptr;
};

struct DataParallelOptions {
  size_t first_bucket_bytes = size_t(1) << 20;  // 1 MiB
  size_t bucket_bytes = size_t(25) << 20;       // 25 MiB
  uint32_t timeout_ms = 0;                      // 0: the communicator's default
};

// Rows [rank * B / size, (rank + 1) * B / size) of a batch whose first axis is B: this
// rank's shard. B must be a multiple of size, so every rank's mean weighs samples alike.
inline Tensor shard(const Tensor& batch, int rank, int size) {
  const int64_t rows = batch.dim(0);
  if (size < 1 || rows % size != 0) {
    throw Error(CTL_STATUS_INVALID_ARGUMENT, "a batch of " + std::to_string(rows) +
                                                 " rows does not split evenly over " + std::to_string(size) + " ranks");
  }
  const int64_t each = rows / size;
  return batch.slice(0, rank * each, (rank + 1) * each);
}

class DataParallel {
 public:
  // `runtime` holds the parameters (gradients are packed with recording off) and must
  // outlive this object.
  DataParallel(const Runtime& runtime, Communicator comm, nn::NamedTensors params, DataParallelOptions options = {})
      : runtime_(&runtime), comm_(std::move(comm)), params_(std::move(params)), options_(options) {
    // Buckets are fixed once, from the parameters' sizes, so every rank forms the same ones.
    Bucket current;
    size_t limit = options_.first_bucket_bytes;
    for (size_t k = params_.size(); k-- > 0;) {
      const Tensor& p = params_[k].second;
      if (!current.members.empty() && p.dtype() != params_[current.members.back()].second.dtype()) {
        buckets_.push_back(std::move(current));
        current = {};
      }
      current.members.push_back(k);
      current.bytes += size_t(p.numel()) * ctl_dtype_size(p.dtype());
      if (current.bytes >= limit) {
        buckets_.push_back(std::move(current));
        current = {};
        limit = options_.bucket_bytes;
      }
    }
    if (!current.members.empty()) buckets_.push_back(std::move(current));
  }

  const Communicator& communicator() const { return comm_; }
  // Parameter indices of each bucket, in the order the buckets are sent.
  std::vector<std::vector<size_t>> buckets() const {
    std::vector<std::vector<size_t>> out;
    for (const Bucket& b : buckets_) out.push_back(b.members);
    return out;
  }

  // Every rank's parameters become rank 0's (call once, before training).
  void broadcast_parameters() {
    std::vector<Request> requests;
    for (const auto& [name, p] : params_) requests.push_back(comm_.broadcast_async(p, 0, options_.timeout_ms));
    for (const Request& r : requests) r.wait();
  }

  // After backward: each gradient becomes the mean of the ranks' gradients.
  void synchronize_gradients() {
    wait_seconds_ = 0;
    for (const auto& [name, p] : params_) {
      if (!p.grad()) {
        throw Error(CTL_STATUS_FAILED_PRECONDITION,
                    "data parallel: parameter '" + name + "' got no gradient on this step (rank " +
                        std::to_string(comm_.rank()) +
                        "); every parameter must take part in the loss on every rank and step");
      }
    }
    NoGrad no_grad(*runtime_);
    std::vector<Tensor> flats;
    std::vector<Request> requests;
    for (const Bucket& bucket : buckets_) {
      std::vector<Tensor> parts;
      for (size_t k : bucket.members) {
        const Tensor g = params_[k].second.grad();
        parts.push_back(g.contiguous().reshape({g.numel()}));
      }
      // A bucket of one contiguous gradient is reduced in place: its flat view is the gradient.
      flats.push_back(parts.size() == 1 ? parts[0] : concat(parts, 0));
      requests.push_back(comm_.allreduce_async(flats.back(), CTL_COMM_MEAN, options_.timeout_ms));
    }
    for (size_t b = 0; b < buckets_.size(); ++b) {
      const auto t0 = std::chrono::steady_clock::now();
      requests[b].wait();
      wait_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (buckets_[b].members.size() == 1 && contiguous(params_[buckets_[b].members[0]].second.grad())) continue;
      int64_t at = 0;
      for (size_t k : buckets_[b].members) {
        const Tensor g = params_[k].second.grad();
        const int64_t n = g.numel();
        copy_(g, flats[b].slice(0, at, at + n).reshape(g.shape()));
        at += n;
      }
    }
  }

  // Seconds the last synchronize_gradients spent waiting for communication to finish.
  double last_wait_seconds() const { return wait_seconds_; }

 private:
  static bool contiguous(const Tensor& t) {
    ctl_tensor_info info{};
    info.struct_size = CTL_TENSOR_INFO_STRUCT_SIZE;
    check(ctl_tensor_get_info(t.get(), &info));
    return info.contiguous;
  }
  struct Bucket {
    std::vector<size_t> members;  // parameter indices, in reverse parameter order
    size_t bytes = 0;
  };
  const Runtime* runtime_;
  Communicator comm_;
  nn::NamedTensors params_;
  DataParallelOptions options_;
  std::vector<Bucket> buckets_;
  double wait_seconds_ = 0;
};

}  // namespace catalyst::distributed
