// concurrent_runtimes_test.cpp — runtimes created at once from several threads each load the
// OpenCL plugin and find its devices. PoCL's lazy device initialisation crashed when two
// instances discovered devices at the same moment (found by the Rust binding's tests, which
// run in parallel threads); the plugin now discovers one instance at a time.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "test_support.hpp"

using namespace ctltest;

TEST(OpenCLConcurrentRuntimes, EveryThreadGetsTheSameDevices) {
  std::vector<const char*> paths = {CTL_TEST_OPENCL_PLUGIN};
  constexpr int kThreads = 4, kRounds = 24;  // the crash showed in 2 of 3 runs of 8 rounds
  std::atomic<int> failures{0}, device_counts{0};
  for (int round = 0; round < kRounds; ++round) {
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&] {
        while (!go.load()) {
        }
        const ctl_runtime_options o = options(&paths);
        ctl_runtime* r = nullptr;
        Status s(ctl_runtime_create(&o, &r));
        if (s) ++failures;
        device_counts += int(ctl_runtime_device_count(r));
        ctl_runtime_release(r);
      });
    }
    go.store(true);
    for (auto& t : threads) t.join();
  }
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(device_counts.load() % (kThreads * kRounds), 0) << "every runtime saw the same number of devices";
}
