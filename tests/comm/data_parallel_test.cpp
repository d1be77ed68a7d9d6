// data_parallel_test.cpp — data parallelism gives the one-process result, as PyTorch tests
// DDP: N ranks, each training a small GPT on its shard of every global batch, hold after
// each of 6 SGD steps the parameters that one process training on the whole batch holds
// (within 1e-6 relative, parameter by parameter; how many are bit-identical is printed),
// for several bucket sizes. Rank r > 0 starts from a different seed, so the broadcast of
// rank 0's parameters is part of what is checked. Also: a parameter with no gradient is an
// error naming it.
//
//   data_parallel_test PLUGINS in-process N      N ranks as threads, each the CPU device of a
//                                                runtime of its own
//   data_parallel_test PLUGINS in-process LIST   a rank per device name of LIST (cpu:0,opencl:0)
// PLUGINS is one plugin file or several joined by ':'; one process trains on cpu:0.
//   data_parallel_test PLUGIN mpi            one rank per process, under mpirun
// Exits 0 when every check held (on this process's ranks).
#include <atomic>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "catalyst/catalyst.hpp"
#include "catalyst/distributed.hpp"
#include "catalyst/nn.hpp"
#include "catalyst/optim.hpp"

namespace {

namespace dist = catalyst::distributed;
using catalyst::Tensor;

constexpr int64_t kBatch = 8, kSteps = 6;
const catalyst::nn::GPTConfig kConfig{32, 8, 16, 2, 2};

std::mutex print_mutex;
std::atomic<int> failures{0};

catalyst::Runtime make_runtime(const std::string& plugin) {
  catalyst::RuntimeOptions o;
  std::stringstream paths(plugin);
  for (std::string path; std::getline(paths, path, ':');) o.plugin_paths.push_back(path);
  o.disable_discovery = true;
  return catalyst::Runtime(o);
}

uint64_t next_random(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Global batch `step`: token ids and next-token targets in [0, vocab).
std::vector<int32_t> batch_ids(int64_t step, int which) {
  std::vector<int32_t> ids(kBatch * kConfig.context);
  uint64_t state = 0x1234 + uint64_t(step) * 977 + uint64_t(which) * 31;
  for (auto& id : ids) id = int32_t(next_random(state) % uint64_t(kConfig.vocab));
  return ids;
}

using Snapshot = std::vector<std::vector<float>>;  // every parameter, in order

Snapshot snapshot(const catalyst::nn::NamedTensors& params) {
  Snapshot s;
  for (const auto& [name, p] : params) s.push_back(p.to_vector<float>());
  return s;
}

// Parameters after every step of one process training on the whole batch.
std::vector<Snapshot> one_process(const std::string& plugin) {
  catalyst::Runtime rt = make_runtime(plugin);
  catalyst::Device device = rt.device("cpu:0");
  catalyst::nn::GPT model(device, CTL_DTYPE_F32, kConfig, 7);
  const auto params = model.parameters();
  catalyst::optim::SGD sgd(params, 0.9);
  std::vector<Snapshot> out;
  for (int64_t step = 0; step < kSteps; ++step) {
    Tensor x = Tensor::from_vector<int32_t>(device, {kBatch, kConfig.context}, batch_ids(step, 0));
    Tensor y = Tensor::from_vector<int32_t>(device, {kBatch, kConfig.context}, batch_ids(step, 1));
    model.loss(x, y).backward();
    sgd.step(rt, 0.5);
    sgd.zero_grad();
    out.push_back(snapshot(params));
  }
  return out;
}

void fail(int rank, const std::string& what) {
  std::lock_guard lock(print_mutex);
  std::fprintf(stderr, "rank %d: FAILED: %s\n", rank, what.c_str());
  ++failures;
}

// One rank's training; compares with `reference` after every step.
void rank_training(const catalyst::Runtime& rt, catalyst::Device device, dist::Communicator comm,
                   const std::vector<Snapshot>& reference, dist::DataParallelOptions options,
                   const std::string& label) {
  const int rank = comm.rank(), size = comm.size();
  catalyst::nn::GPT model(device, CTL_DTYPE_F32, kConfig, rank == 0 ? 7 : 100 + uint64_t(rank));
  const auto params = model.parameters();
  dist::DataParallel ddp(rt, comm, params, options);
  ddp.broadcast_parameters();
  catalyst::optim::SGD sgd(params, 0.9);
  size_t identical = 0, total = 0;
  double worst = 0;
  for (int64_t step = 0; step < kSteps; ++step) {
    Tensor x = Tensor::from_vector<int32_t>(device, {kBatch, kConfig.context}, batch_ids(step, 0));
    Tensor y = Tensor::from_vector<int32_t>(device, {kBatch, kConfig.context}, batch_ids(step, 1));
    model.loss(dist::shard(x, rank, size).contiguous(), dist::shard(y, rank, size).contiguous()).backward();
    ddp.synchronize_gradients();
    sgd.step(rt, 0.5);
    sgd.zero_grad();
    const Snapshot now = snapshot(params);
    for (size_t k = 0; k < now.size(); ++k) {
      double diff = 0, scale = 0;
      for (size_t i = 0; i < now[k].size(); ++i) {
        diff = std::max(diff, double(std::fabs(now[k][i] - reference[step][k][i])));
        scale = std::max(scale, double(std::fabs(reference[step][k][i])));
      }
      const double relative = diff / std::max(scale, 1e-30);
      worst = std::max(worst, relative);
      identical += now[k] == reference[step][k];
      ++total;
      if (!(relative <= 1e-6)) {
        fail(rank, label + ": step " + std::to_string(step + 1) + ", parameter " + params[k].first +
                       ": relative difference " + std::to_string(relative) + " from one process");
      }
    }
  }
  std::lock_guard lock(print_mutex);
  std::printf(
      "rank %d, %s, %zu buckets: worst relative difference %.3g over %lld steps; %zu of %zu parameter "
      "snapshots bit-identical\n",
      rank, label.c_str(), ddp.buckets().size(), worst, (long long)kSteps, identical, total);
}

// A parameter the loss never reaches: synchronize_gradients names it.
void missing_gradient(const catalyst::Runtime& rt, catalyst::Device device, dist::Communicator comm) {
  catalyst::nn::GPT model(device, CTL_DTYPE_F32, kConfig, 7);
  auto params = model.parameters();
  Tensor unused = Tensor::zeros(device, CTL_DTYPE_F32, {3});
  unused.set_requires_grad(true);
  params.emplace_back("extra.unused", unused);
  dist::DataParallel ddp(rt, comm, params);
  Tensor x = Tensor::from_vector<int32_t>(device, {1, kConfig.context}, std::vector<int32_t>(kConfig.context, 1));
  model.loss(x, x).backward();
  try {
    ddp.synchronize_gradients();
    fail(comm.rank(), "a parameter without a gradient was accepted");
  } catch (const catalyst::Error& e) {
    const std::string text = e.what();
    if (text.find("'extra.unused' got no gradient") == std::string::npos) fail(comm.rank(), "unclear error: " + text);
  }
}

std::vector<std::pair<std::string, dist::DataParallelOptions>> bucket_configs() {
  dist::DataParallelOptions per_parameter, small, whole;
  per_parameter.first_bucket_bytes = per_parameter.bucket_bytes = 1;  // one bucket per parameter
  small.first_bucket_bytes = 1024;                                    // a small first, then 8 KiB
  small.bucket_bytes = 8192;
  return {{"buckets of one parameter", per_parameter},
          {"1 KiB then 8 KiB buckets", small},
          {"1 MiB then 25 MiB buckets (one bucket here)", whole}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: data_parallel_test PLUGIN in-process N | PLUGIN mpi\n");
    return 2;
  }
  const std::string plugin = argv[1], mode = argv[2];
  try {
    const std::vector<Snapshot> reference = one_process(plugin);
    if (mode == "mpi") {
      catalyst::Runtime rt = make_runtime(plugin);
      catalyst::Device device = rt.device("cpu:0");
      dist::Communicator comm = dist::Communicator::from_plugin(rt, "mpi", 60000);
      for (const auto& [label, options] : bucket_configs()) rank_training(rt, device, comm, reference, options, label);
      if (comm.rank() == 0) missing_gradient(rt, device, comm);
    } else {
      const std::string ranks = argc > 3 ? argv[3] : "2";
      std::vector<std::string> names;
      if (ranks.find(':') == std::string::npos) {
        names.assign(size_t(std::atoi(ranks.c_str())), "cpu:0");
      } else {
        std::stringstream list(ranks);
        for (std::string name; std::getline(list, name, ',');) names.push_back(name);
      }
      const int n = int(names.size());
      std::vector<catalyst::Runtime> runtimes;
      std::vector<catalyst::Device> devices;
      for (int r = 0; r < n; ++r) {
        runtimes.push_back(make_runtime(plugin));
        devices.push_back(runtimes.back().device(names[size_t(r)]));
      }
      for (const auto& [label, options] : bucket_configs()) {
        auto comms = dist::Communicator::in_process(runtimes[0], devices, 60000);
        std::vector<std::thread> threads;
        for (int r = 0; r < n; ++r) {
          threads.emplace_back([&, r, options = options, label = label] {
            try {
              rank_training(runtimes[r], devices[r], comms[r], reference, options, label);
            } catch (const std::exception& e) {
              fail(r, e.what());
            }
          });
        }
        for (auto& t : threads) t.join();
      }
      missing_gradient(runtimes[0], devices[0], dist::Communicator::in_process(runtimes[0], {devices[0]})[0]);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAILED: %s\n", e.what());
    return 1;
  }
  return failures == 0 ? 0 : 1;
}
