// allreduce_bench.cpp — `mpirun -np P catalyst-allreduce-bench`: bus bandwidth of allreduce
// (sum of f32) through the MPI communication plugin, our ring beside MPI_Allreduce (Open
// MPI's own choice of algorithm), from 4 KiB to 256 MiB; results in plugins/mpi/README.md.
//
// Both run through the same catalyst_comm.h call on a tensor of the CPU device, so both pay
// the same staging (device -> host -> device); the plugin is told which to use through
// CATALYST_MPI_ALLREDUCE when each communicator is made. Bus bandwidth is
// 2 (p - 1) / p * bytes / time: the bytes each rank's link carries in a ring, so that a
// perfect ring's figure does not depend on p. The time is rank 0's, after a barrier, per
// call, the best of 3 batches.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "catalyst/catalyst.hpp"
#include "catalyst/distributed.hpp"

namespace dist = catalyst::distributed;
using Clock = std::chrono::steady_clock;

static dist::Communicator make(const catalyst::Runtime& rt, const char* algorithm) {
  setenv("CATALYST_MPI_ALLREDUCE", algorithm, 1);
  return dist::Communicator::from_plugin(rt, "mpi", 600000);
}

int main(int argc, char** argv) {
  const int64_t max_bytes = argc > 1 ? std::atoll(argv[1]) : (int64_t(256) << 20);
  try {
    catalyst::Runtime rt;
    catalyst::Device device = rt.device("cpu:0");
    dist::Communicator mpi = make(rt, "mpi");
    dist::Communicator ring = make(rt, "ring");
    const int p = ring.size(), rank = ring.rank();
    if (rank == 0) {
      std::printf("# %d ranks; f32 sum; bus bandwidth in GB/s (2(p-1)/p * bytes / time); time per call in ms\n", p);
      std::printf("%12s  %10s %10s  %10s %10s  %s\n", "bytes", "ring GB/s", "ring ms", "MPI GB/s", "MPI ms",
                  "ring / MPI");
    }
    for (int64_t bytes = 4096; bytes <= max_bytes; bytes *= 4) {
      const int64_t n = bytes / 4;
      catalyst::Tensor t = catalyst::Tensor::full(device, CTL_DTYPE_F32, {n}, 1.0 / p);
      double seconds[2];
      for (int which = 0; which < 2; ++which) {
        const dist::Communicator& comm = which == 0 ? ring : mpi;
        const int iterations = int(std::clamp<int64_t>((int64_t(64) << 20) / bytes, 2, 200));
        double best = 1e30;
        for (int batch = 0; batch < 3; ++batch) {
          comm.barrier();
          const auto t0 = Clock::now();
          for (int i = 0; i < iterations; ++i) comm.allreduce(t, CTL_COMM_SUM);
          best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count() / iterations);
        }
        seconds[which] = best;
      }
      if (rank == 0) {
        const double factor = 2.0 * (p - 1) / p * double(bytes) / 1e9;
        std::printf("%12lld  %10.3f %10.3f  %10.3f %10.3f  %.2f\n", (long long)bytes, factor / seconds[0],
                    seconds[0] * 1e3, factor / seconds[1], seconds[1] * 1e3, seconds[1] / seconds[0]);
        std::fflush(stdout);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "catalyst-allreduce-bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
