// cpu_devices_test.cpp — the CPU plugin's devices (plugins/cpu/runtime/device_plan.h): one per NUMA
// node of hwloc synthetic topologies, CATALYST_CPU_DEVICES=N splits into disjoint, covering
// CPU sets, workers run only on their device's CPUs (read from /proc), two devices compute
// concurrently, tensors move between them exactly, and bad settings fall back with a
// message. Each test sets the environment before it creates its runtime, which is when the
// plugin reads it.
#include <dirent.h>
#include <dlpack/dlpack.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "test_support.hpp"

using namespace ctltest;

namespace {

// Sets (or, with nullptr, unsets) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_.c_str(), old_.c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

struct CpuDevice {
  ctl_device* device;
  std::string name;
  int32_t numa_node;
  uint32_t compute_units;
  uint64_t memory_total;
};

Runtime cpu_runtime(LogSink* sink = nullptr) {
  std::vector<const char*> paths = {CTL_TEST_CPU_PLUGIN};
  const ctl_runtime_options o = options(&paths, sink);
  ctl_runtime* r = nullptr;
  Status s(ctl_runtime_create(&o, &r));
  EXPECT_EQ(s, nullptr) << describe(s.get());
  return Runtime(r);
}

std::vector<CpuDevice> cpu_devices(ctl_runtime* runtime) {
  std::vector<CpuDevice> devices;
  for (size_t i = 0; i < ctl_runtime_device_count(runtime); ++i) {
    ctl_device* device = nullptr;
    Status s(ctl_runtime_device(runtime, i, &device));
    if (s) continue;
    ctl_device_info info{};
    info.struct_size = CTL_DEVICE_INFO_STRUCT_SIZE;
    Status s2(ctl_device_get_info(device, &info));
    if (s2 || std::string(info.plugin_name) != "cpu") continue;
    devices.push_back({device, info.name, info.numa_node, info.compute_units, info.memory_total});
  }
  return devices;
}

// "0-3,8" -> {0, 1, 2, 3, 8}.
std::vector<int> parse_cpu_list(const std::string& text) {
  std::vector<int> cpus;
  size_t i = 0;
  while (i < text.size()) {
    size_t end = text.find(',', i);
    if (end == std::string::npos) end = text.size();
    const std::string range = text.substr(i, end - i);
    const size_t dash = range.find('-');
    const int first = std::stoi(range.substr(0, dash));
    const int last = dash == std::string::npos ? first : std::stoi(range.substr(dash + 1));
    for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
    i = end + 1;
  }
  return cpus;
}

// The CPUs a split device's name states: "<model> (CPUs 0-3, NUMA node 0)".
std::vector<int> cpus_in_name(const std::string& name) {
  const size_t at = name.rfind("(CPUs ");
  if (at == std::string::npos) return {};
  const size_t start = at + 6;
  const size_t end = std::min(name.find(", NUMA", start), name.find(')', start));
  return parse_cpu_list(name.substr(start, end - start));
}

std::vector<int> process_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

// Each device's CPUs are disjoint from the others' and together they are `all`.
void expect_disjoint_cover(const std::vector<CpuDevice>& devices, const std::vector<int>& all) {
  std::set<int> seen;
  for (const CpuDevice& d : devices) {
    const std::vector<int> cpus = cpus_in_name(d.name);
    ASSERT_FALSE(cpus.empty()) << d.name;
    EXPECT_EQ(cpus.size(), d.compute_units) << d.name;
    for (const int cpu : cpus) EXPECT_TRUE(seen.insert(cpu).second) << "CPU " << cpu << " is in two devices";
  }
  EXPECT_EQ(seen, std::set<int>(all.begin(), all.end()));
}

TEST(CpuDevices, OneDevicePerNumaNodeOfASyntheticTwoNodeMachine) {
  ScopedEnv topology("HWLOC_SYNTHETIC", "pack:2 numa:1 core:4 pu:1");
  ScopedEnv devices_env("CATALYST_CPU_DEVICES", nullptr);
  Runtime runtime = cpu_runtime();
  const std::vector<CpuDevice> devices = cpu_devices(runtime.get());
  ASSERT_EQ(devices.size(), 2u);
  for (int32_t k = 0; k < 2; ++k) {
    SCOPED_TRACE(devices[k].name);
    EXPECT_EQ(devices[k].numa_node, k);
    EXPECT_EQ(devices[k].compute_units, 4u);
    EXPECT_EQ(devices[k].memory_total, uint64_t{1} << 30);  // hwloc's synthetic node: 1 GiB
    EXPECT_NE(devices[k].name.find(k == 0 ? "(CPUs 0-3, NUMA node 0)" : "(CPUs 4-7, NUMA node 1)"), std::string::npos);
  }
}

TEST(CpuDevices, OneDevicePerNumaNodeOfASyntheticFourNodeMachineWithHardwareThreads) {
  ScopedEnv topology("HWLOC_SYNTHETIC", "pack:2 numa:2 core:2 pu:2");
  ScopedEnv devices_env("CATALYST_CPU_DEVICES", "numa");
  Runtime runtime = cpu_runtime();
  const std::vector<CpuDevice> devices = cpu_devices(runtime.get());
  ASSERT_EQ(devices.size(), 4u);
  std::vector<int> all(16);
  for (int i = 0; i < 16; ++i) all[i] = i;
  expect_disjoint_cover(devices, all);
  for (int32_t k = 0; k < 4; ++k) {
    EXPECT_EQ(devices[k].numa_node, k) << devices[k].name;
    EXPECT_EQ(devices[k].compute_units, 4u) << devices[k].name;  // 2 cores of 2 threads
  }
}

TEST(CpuDevices, OneDeviceSettingGivesTheWholeMachineOnASyntheticTwoNodeMachine) {
  ScopedEnv topology("HWLOC_SYNTHETIC", "pack:2 numa:1 core:4 pu:1");
  ScopedEnv devices_env("CATALYST_CPU_DEVICES", "1");
  Runtime runtime = cpu_runtime();
  const std::vector<CpuDevice> devices = cpu_devices(runtime.get());
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].name.find("(CPUs"), std::string::npos) << devices[0].name;
}

TEST(CpuDevices, SplitIntoThreeKeepsCoresWholeAndCoversTheSyntheticMachine) {
  ScopedEnv topology("HWLOC_SYNTHETIC", "pack:2 numa:2 core:2 pu:2");
  ScopedEnv devices_env("CATALYST_CPU_DEVICES", "3");
  Runtime runtime = cpu_runtime();
  const std::vector<CpuDevice> devices = cpu_devices(runtime.get());
  ASSERT_EQ(devices.size(), 3u);
  std::vector<int> all(16);
  for (int i = 0; i < 16; ++i) all[i] = i;
  expect_disjoint_cover(devices, all);
  // 8 cores into 3: 2, 3 and 3 cores of 2 threads; a core's two threads stay together.
  EXPECT_EQ(devices[0].compute_units, 4u);
  EXPECT_EQ(devices[1].compute_units, 6u);
  EXPECT_EQ(devices[2].compute_units, 6u);
  for (const CpuDevice& d : devices) {
    const std::vector<int> cpus = cpus_in_name(d.name);
    const std::set<int> mine(cpus.begin(), cpus.end());
    for (const int cpu : cpus) EXPECT_TRUE(mine.count(cpu ^ 1)) << "core of CPU " << cpu << " split: " << d.name;
  }
  // Cores 0-1 lie in node 0; cores 2-4 and 5-7 span two nodes each.
  EXPECT_EQ(devices[0].numa_node, 0);
  EXPECT_EQ(devices[1].numa_node, -1);
  EXPECT_EQ(devices[2].numa_node, -1);
}

TEST(CpuDevices, SplitIntoTwoAndThreeOnThisMachine) {
  ScopedEnv topology("HWLOC_SYNTHETIC", nullptr);
  const std::vector<int> all = process_cpus();
  for (const char* count : {"2", "3"}) {
    SCOPED_TRACE(std::string("CATALYST_CPU_DEVICES=") + count);
    ScopedEnv devices_env("CATALYST_CPU_DEVICES", count);
    LogSink sink;
    Runtime runtime = cpu_runtime(&sink);
    const std::vector<CpuDevice> devices = cpu_devices(runtime.get());
    const size_t n = std::stoul(count);
    ASSERT_EQ(devices.size(), n);
    if (all.size() >= n) {
      expect_disjoint_cover(devices, all);
      uint32_t least = UINT32_MAX, most = 0;
      for (const CpuDevice& d : devices)
        least = std::min(least, d.compute_units), most = std::max(most, d.compute_units);
      EXPECT_LE(most - least, 2u) << "as equal as the cores allow (2 threads a core at most here)";
    } else {
      // More devices than CPUs: the later ones share, round robin, and the log says so.
      for (size_t k = 0; k < n; ++k) {
        EXPECT_EQ(cpus_in_name(devices[k].name), cpus_in_name(devices[k % all.size()].name));
      }
      EXPECT_TRUE(sink.contains("asks for more devices than the")) << sink.all();
    }
  }
}

// Worker threads of each device, by the names the pool gives them ("ctl-cpu<k>/w<i>"),
// and the CPUs Linux lets each run on.
std::map<std::string, std::vector<int>> worker_affinities() {
  std::map<std::string, std::vector<int>> workers;
  DIR* dir = opendir("/proc/self/task");
  if (!dir) return workers;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    const std::string task = std::string("/proc/self/task/") + entry->d_name;
    std::ifstream comm(task + "/comm");
    std::string name;
    std::getline(comm, name);
    if (name.rfind("ctl-cpu", 0) != 0) continue;
    std::ifstream status(task + "/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("Cpus_allowed_list:", 0) == 0) {
        const size_t at = line.find_first_not_of(" \t", 18);
        workers[name + " (" + entry->d_name + ")"] = parse_cpu_list(line.substr(at));
      }
    }
  }
  closedir(dir);
  return workers;
}

TEST(CpuDevices, WorkersRunOnlyOnTheirDevicesCpus) {
  ScopedEnv topology("HWLOC_SYNTHETIC", nullptr);
  ScopedEnv devices_env("CATALYST_CPU_DEVICES", "2");
  // Three threads a device: two workers each, whatever the machine's size.
  ScopedEnv threads_env("CATALYST_CPU_THREADS", "3");
  Runtime runtime = cpu_runtime();
  const std::vector<CpuDevice> devices = cpu_devices(runtime.get());
  ASSERT_EQ(devices.size(), 2u);
  const auto workers = worker_affinities();
  for (uint32_t k = 0; k < 2; ++k) {
    const std::vector<int> mine = cpus_in_name(devices[k].name);
    const std::string prefix = "ctl-cpu" + std::to_string(k) + "/";
    int found = 0;
    for (const auto& [name, allowed] : workers) {
      if (name.rfind(prefix, 0) != 0) continue;
      ++found;
      EXPECT_FALSE(allowed.empty()) << name;
      for (const int cpu : allowed) {
        EXPECT_TRUE(std::find(mine.begin(), mine.end(), cpu) != mine.end())
            << name << " may run on CPU " << cpu << ", outside " << devices[k].name;
      }
    }
    EXPECT_EQ(found, 2) << "workers of cpu:" << k;
  }
}

// A K x N product of small integers, exact in f32 whatever the summation order.
std::vector<float> small_integers(size_t n, int seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(static_cast<int>((i * 7 + seed * 13) % 5) - 2);
  return v;
}

TEST(CpuDevices, TwoDevicesComputeConcurrentlyFromTwoThreads) {
  ScopedEnv topology("HWLOC_SYNTHETIC", nullptr);
  ScopedEnv devices_env("CATALYST_CPU_DEVICES", "2");
  // Two threads a device, so that each device's pool has a worker on any machine.
  ScopedEnv threads_env("CATALYST_CPU_THREADS", "2");
  Runtime runtime = cpu_runtime();
  const std::vector<CpuDevice> devices = cpu_devices(runtime.get());
  ASSERT_EQ(devices.size(), 2u);
  constexpr int64_t M = 96, K = 160, N = 128;
  std::vector<std::string> failures(2);
  auto work = [&](int k) {
    const std::vector<float> a = small_integers(M * K, k), b = small_integers(K * N, k + 5);
    std::vector<float> want(M * N, 0.0f);
    for (int64_t i = 0; i < M; ++i) {
      for (int64_t j = 0; j < N; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < K; ++p) sum += static_cast<double>(a[i * K + p]) * b[p * N + j];
        want[i * N + j] = static_cast<float>(sum);
      }
    }
    for (int round = 0; round < 300; ++round) {
      ctl_tensor *ta = nullptr, *tb = nullptr, *tc = nullptr;
      const int64_t sa[] = {M, K}, sb[] = {K, N};
      Status s1(ctl_tensor_from_host(devices[k].device, CTL_DTYPE_F32, 2, sa, a.data(), a.size() * 4, &ta));
      Status s2(ctl_tensor_from_host(devices[k].device, CTL_DTYPE_F32, 2, sb, b.data(), b.size() * 4, &tb));
      Tensor hold_a(ta), hold_b(tb);
      Status s3(s1 || s2 ? nullptr : ctl_op_matmul(ta, tb, &tc));
      Tensor hold_c(tc);
      std::vector<float> got(M * N, -1.0f);
      Status s4(tc ? ctl_tensor_to_host(tc, got.data(), got.size() * 4) : nullptr);
      if (s1 || s2 || s3 || s4 || !tc || got != want) {
        failures[k] = "cpu:" + std::to_string(k) + " round " + std::to_string(round) + ": " + describe(s1.get()) +
                      describe(s2.get()) + describe(s3.get()) + describe(s4.get()) +
                      (got != want ? "wrong product" : "");
        return;
      }
    }
  };
  std::thread t0(work, 0), t1(work, 1);
  t0.join();
  t1.join();
  EXPECT_EQ(failures[0], "");
  EXPECT_EQ(failures[1], "");
}

TEST(CpuDevices, TensorsMoveBetweenTwoDevicesExactly) {
  ScopedEnv topology("HWLOC_SYNTHETIC", nullptr);
  ScopedEnv devices_env("CATALYST_CPU_DEVICES", "2");
  Runtime runtime = cpu_runtime();
  const std::vector<CpuDevice> devices = cpu_devices(runtime.get());
  ASSERT_EQ(devices.size(), 2u);
  // 3 MiB and a bit: several 1 MiB parts of a peer copy, and a ragged end.
  const size_t n = (size_t{3} << 18) + 77;
  std::vector<int32_t> data(n);
  for (size_t i = 0; i < n; ++i) data[i] = static_cast<int32_t>(i * 2654435761u);
  const int64_t shape[] = {static_cast<int64_t>(n)};
  ctl_tensor* t0 = nullptr;
  CTL_ASSERT_OK(ctl_tensor_from_host(devices[0].device, CTL_DTYPE_I32, 1, shape, data.data(), n * 4, &t0));
  Tensor hold0(t0);
  ctl_tensor* t1 = nullptr;
  CTL_ASSERT_OK(ctl_tensor_to_device(t0, devices[1].device, &t1));
  Tensor hold1(t1);
  ctl_tensor* back = nullptr;
  CTL_ASSERT_OK(ctl_tensor_to_device(t1, devices[0].device, &back));
  Tensor hold_back(back);
  EXPECT_EQ(to_vector<int32_t>(t1), data);
  EXPECT_EQ(to_vector<int32_t>(back), data);
}

// The memory policy Linux holds for the page at `address` (get_mempolicy with MPOL_F_ADDR):
// false when the call is refused (a container's seccomp policy).
bool page_policy(const void* address, int* mode, unsigned long* nodes) {
  constexpr unsigned long kMaxNode = 8 * sizeof(unsigned long);
  *nodes = 0;
  return syscall(SYS_get_mempolicy, mode, nodes, kMaxNode, address, 2 /* MPOL_F_ADDR */) == 0;
}

// The first byte of a CPU tensor, through a zero-copy DLPack export.
void* data_of(ctl_tensor* tensor) {
  DLManagedTensor* managed = nullptr;
  Status s(ctl_tensor_to_dlpack(tensor, &managed));
  EXPECT_EQ(s, nullptr) << describe(s.get());
  if (!managed) return nullptr;
  void* data = static_cast<char*>(managed->dl_tensor.data) + managed->dl_tensor.byte_offset;
  managed->deleter(managed);  // the tensor still holds the buffer
  return data;
}

TEST(CpuDevices, LargeBuffersOfANodesDeviceAreBoundToItsNode) {
  // Two nodes of one CPU each, which hwloc is told are this machine's: CPUs 0 and 1 exist
  // here, node 1 does not (its binding is refused, best effort), node 0 does.
  const std::vector<int> all = process_cpus();
  if (all.size() < 2 || all[0] != 0 || all[1] != 1) GTEST_SKIP() << "needs CPUs 0 and 1";
  ScopedEnv topology("HWLOC_SYNTHETIC", "numa:2 core:1 pu:1");
  ScopedEnv this_system("HWLOC_THISSYSTEM", "1");
  ScopedEnv devices_env("CATALYST_CPU_DEVICES", nullptr);
  Runtime runtime = cpu_runtime();
  const std::vector<CpuDevice> devices = cpu_devices(runtime.get());
  ASSERT_EQ(devices.size(), 2u);
  ASSERT_EQ(devices[0].numa_node, 0);
  const int64_t large[] = {int64_t{1} << 18};  // 1 MiB of f32: the device's buffer cache
  ctl_tensor* t = nullptr;
  CTL_ASSERT_OK(ctl_tensor_create_zeros(devices[0].device, CTL_DTYPE_F32, 1, large, &t));
  Tensor hold(t);
  int mode = -1;
  unsigned long nodes = 0;
  if (!page_policy(data_of(t), &mode, &nodes)) GTEST_SKIP() << "get_mempolicy refused here";
  // MPOL_PREFERRED (1), or MPOL_PREFERRED_MANY (5) that hwloc uses on newer kernels: the
  // node first, elsewhere when it is full (never MPOL_BIND, which would kill the process).
  EXPECT_TRUE(mode == 1 || mode == 5) << "policy " << mode;
  EXPECT_EQ(nodes, 1ul) << "node 0";
  // The whole-machine device binds nothing.
  ScopedEnv one("CATALYST_CPU_DEVICES", "1");
  Runtime whole = cpu_runtime();
  const std::vector<CpuDevice> machine = cpu_devices(whole.get());
  ASSERT_EQ(machine.size(), 1u);
  ctl_tensor* u = nullptr;
  CTL_ASSERT_OK(ctl_tensor_create_zeros(machine[0].device, CTL_DTYPE_F32, 1, large, &u));
  Tensor hold_u(u);
  ASSERT_TRUE(page_policy(data_of(u), &mode, &nodes));
  EXPECT_EQ(mode, 0) << "MPOL_DEFAULT";
}

TEST(CpuDevices, BadSettingsAreLoggedAndTheDefaultIsUsed) {
  ScopedEnv topology("HWLOC_SYNTHETIC", nullptr);
  size_t default_count = 0;
  {
    ScopedEnv devices_env("CATALYST_CPU_DEVICES", nullptr);
    Runtime runtime = cpu_runtime();
    default_count = cpu_devices(runtime.get()).size();
  }
  ASSERT_GE(default_count, 1u);
  for (const char* bad : {"0", "-2", "abc", "2x", "257", "1.5"}) {
    SCOPED_TRACE(bad);
    ScopedEnv devices_env("CATALYST_CPU_DEVICES", bad);
    LogSink sink;
    Runtime runtime = cpu_runtime(&sink);
    ASSERT_NE(runtime, nullptr);
    EXPECT_EQ(cpu_devices(runtime.get()).size(), default_count);
    EXPECT_TRUE(sink.contains(std::string("CATALYST_CPU_DEVICES=\"") + bad +
                              "\" is not \"numa\" or a device count from 1 to 256; using numa"))
        << sink.all();
  }
}

}  // namespace
