// topology_abi_test.cpp — the topology through the public C ABI, with fake GPUs
// (tests/plugins/fake_gpus_plugin.cpp) on machines described by hwloc's synthetic
// topologies and by the fixtures: joins, links, measurement and its cache, override files
// good and bad, laziness, and bad arguments.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "catalyst.h"

namespace {

const std::string kFixtures = CTL_TEST_TOPOLOGY_FIXTURES;

struct LogLines {
  std::mutex mutex;
  std::vector<std::pair<ctl_log_level, std::string>> lines;
  std::string joined() {
    std::lock_guard lock(mutex);
    std::string out;
    for (const auto& [level, text] : lines) out += text + "\n";
    return out;
  }
};

void collect(void* user, ctl_log_level level, const char* message) {
  auto* log = static_cast<LogLines*>(user);
  std::lock_guard lock(log->mutex);
  log->lines.emplace_back(level, message);
}

// Every test starts from an environment of its own: no override, a one-node synthetic
// machine, a private cache directory.
class Topology : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"CATALYST_TOPOLOGY", "HWLOC_SYNTHETIC", "HWLOC_XMLFILE", "CATALYST_FAKE_GPUS",
                             "CATALYST_FAKE_GPUS_PEER", "CATALYST_LOG"}) {
      ::unsetenv(name);
    }
    // A machine of our own unless a test sets another: results never depend on the host, and
    // hwloc's PCI discovery on Linux (libpciaccess) leaks about 1 KiB, which would fail the
    // sanitizer build's leak check.
    ::setenv("HWLOC_SYNTHETIC", "pack:1 numa:1 core:2 pu:1", 1);
    cache_ = std::filesystem::temp_directory_path() / ("catalyst-topology-test-" + std::to_string(::getpid()) + "-" +
                                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(cache_);
    ::setenv("CATALYST_CACHE_DIR", cache_.c_str(), 1);
  }
  void TearDown() override {
    for (ctl_runtime* runtime : runtimes_) ctl_runtime_release(runtime);
    std::filesystem::remove_all(cache_);
  }

  ctl_runtime* make_runtime(const char* fake_gpus) {
    if (fake_gpus) ::setenv("CATALYST_FAKE_GPUS", fake_gpus, 1);
    const char* paths[] = {CTL_TEST_FAKE_GPUS_PLUGIN};
    ctl_runtime_options options{};
    options.struct_size = CTL_RUNTIME_OPTIONS_STRUCT_SIZE;
    options.plugin_paths = paths;
    options.plugin_path_count = 1;
    options.disable_discovery = true;
    options.log_fn = collect;
    options.log_user_data = &log_;
    options.log_level = CTL_LOG_DEBUG;
    options.log_level_set = true;
    ctl_runtime* runtime = nullptr;
    ctl_status* status = ctl_runtime_create(&options, &runtime);
    EXPECT_EQ(status, nullptr) << ctl_status_get_message(status);
    ctl_status_free(status);
    if (runtime) runtimes_.push_back(runtime);
    return runtime;
  }

  static ctl_device* device(ctl_runtime* runtime, size_t index) {
    ctl_device* out = nullptr;
    ctl_status* status = ctl_runtime_device(runtime, index, &out);
    EXPECT_EQ(status, nullptr) << ctl_status_get_message(status);
    ctl_status_free(status);
    return out;
  }

  static ctl_device_locality locality(ctl_device* device) {
    ctl_device_locality out{};
    out.struct_size = CTL_DEVICE_LOCALITY_STRUCT_SIZE;
    ctl_status* status = ctl_device_get_locality(device, &out);
    EXPECT_EQ(status, nullptr) << ctl_status_get_message(status);
    ctl_status_free(status);
    return out;
  }

  static ctl_device_link link(ctl_runtime* runtime, ctl_device* a, ctl_device* b) {
    ctl_device_link out{};
    out.struct_size = CTL_DEVICE_LINK_STRUCT_SIZE;
    ctl_status* status = ctl_runtime_device_link(runtime, a, b, &out);
    EXPECT_EQ(status, nullptr) << ctl_status_get_message(status);
    ctl_status_free(status);
    return out;
  }

  static std::string describe(ctl_runtime* runtime, ctl_topology_format format) {
    size_t length = 0;
    ctl_status* status = ctl_runtime_topology_describe(runtime, format, nullptr, 0, &length);
    EXPECT_EQ(status, nullptr) << ctl_status_get_message(status);
    ctl_status_free(status);
    std::string text(length + 1, '\0');
    status = ctl_runtime_topology_describe(runtime, format, text.data(), text.size(), &length);
    EXPECT_EQ(status, nullptr) << ctl_status_get_message(status);
    ctl_status_free(status);
    text.resize(length);
    return text;
  }

  // Expects `status` to have `code` and a message containing `words`, and frees it.
  static void expect_status(ctl_status* status, ctl_status_code code, const std::string& words) {
    ASSERT_NE(status, nullptr) << "expected " << ctl_status_code_name(code) << " with \"" << words << "\"";
    EXPECT_EQ(ctl_status_get_code(status), code) << ctl_status_get_message(status);
    EXPECT_NE(std::string(ctl_status_get_message(status)).find(words), std::string::npos)
        << ctl_status_get_message(status);
    ctl_status_free(status);
  }

  LogLines log_;
  std::vector<ctl_runtime*> runtimes_;
  std::filesystem::path cache_;
};

// Four GPUs of the fixture server, and a fifth whose bus id the server does not have.
constexpr const char* kFourGpusAndAStranger =
    "pci=0000:17:00.0,numa=0;pci=0000:31:00.0,numa=0;pci=0000:b1:00.0,numa=1;pci=0000:ca:00.0,numa=1;"
    "pci=0000:e3:00.0,numa=1";

TEST_F(Topology, XmlServerJoinsEachGpuByItsBusId) {
  const std::string xml = kFixtures + "/two_socket_four_gpus.xml";
  ::setenv("CATALYST_TOPOLOGY", xml.c_str(), 1);
  ctl_runtime* runtime = make_runtime(kFourGpusAndAStranger);
  ASSERT_EQ(ctl_runtime_device_count(runtime), 5u);
  const int packages[] = {0, 0, 1, 1};
  for (size_t i = 0; i < 4; ++i) {
    const ctl_device_locality l = locality(device(runtime, i));
    EXPECT_TRUE(l.known) << i << ": " << l.reason;
    EXPECT_EQ(l.joined_by, CTL_LOCALITY_JOIN_PCI_BUS_ID) << i;
    EXPECT_EQ(l.package, packages[i]) << i;
    EXPECT_EQ(l.numa_node, packages[i]) << i;
    EXPECT_EQ(l.core_count, 8u) << i;
    EXPECT_EQ(l.pu_count, 16u) << i;
    EXPECT_STREQ(l.cpuset, packages[i] ? "16-31" : "0-15") << i;
    EXPECT_FALSE(l.from_override);
    EXPECT_EQ(std::string(l.topology_source), "hwloc XML " + xml + " (CATALYST_TOPOLOGY)");
  }
  EXPECT_STREQ(locality(device(runtime, 2)).pci_bus_id, "0000:b1:00.0");
  const ctl_device_locality stranger = locality(device(runtime, 4));
  EXPECT_FALSE(stranger.known);
  EXPECT_EQ(stranger.joined_by, CTL_LOCALITY_JOIN_NONE);
  EXPECT_EQ(stranger.package, -1);
  EXPECT_EQ(stranger.numa_node, -1);
  EXPECT_EQ(stranger.core_count, 0u);
  EXPECT_NE(std::string(stranger.reason).find("PCI bus id 0000:e3:00.0"), std::string::npos) << stranger.reason;
}

TEST_F(Topology, LinksBetweenGpusWithPeerCopies) {
  const std::string xml = kFixtures + "/two_socket_four_gpus.xml";
  ::setenv("CATALYST_TOPOLOGY", xml.c_str(), 1);
  ::setenv("CATALYST_FAKE_GPUS_PEER", "1", 1);
  ctl_runtime* runtime = make_runtime(kFourGpusAndAStranger);
  ctl_device* g[5];
  for (size_t i = 0; i < 5; ++i) g[i] = device(runtime, i);
  struct Want {
    int a, b;
    ctl_device_link_class link_class;
    ctl_device_copy_path path;
    uint64_t gb;
  } wants[] = {{0, 0, CTL_DEVICE_LINK_SAME_DEVICE, CTL_DEVICE_COPY_NONE, 100},
               {0, 1, CTL_DEVICE_LINK_SAME_NUMA_NODE, CTL_DEVICE_COPY_PEER, 12},
               {1, 0, CTL_DEVICE_LINK_SAME_NUMA_NODE, CTL_DEVICE_COPY_PEER, 12},
               {0, 2, CTL_DEVICE_LINK_CROSS_PACKAGE, CTL_DEVICE_COPY_PEER, 6},
               {3, 1, CTL_DEVICE_LINK_CROSS_PACKAGE, CTL_DEVICE_COPY_PEER, 6},
               {2, 3, CTL_DEVICE_LINK_SAME_NUMA_NODE, CTL_DEVICE_COPY_PEER, 12},
               {2, 4, CTL_DEVICE_LINK_UNKNOWN_LOCALITY, CTL_DEVICE_COPY_PEER, 6}};
  for (const auto& want : wants) {
    const ctl_device_link l = link(runtime, g[want.a], g[want.b]);
    EXPECT_EQ(l.link_class, want.link_class) << want.a << "->" << want.b << ": " << l.description;
    EXPECT_EQ(l.path, want.path) << want.a << "->" << want.b;
    EXPECT_EQ(l.bytes_per_second, want.gb * 1000000000ull) << want.a << "->" << want.b;
    EXPECT_FALSE(l.measured);
  }
  EXPECT_STREQ(ctl_device_link_class_name(CTL_DEVICE_LINK_CROSS_PACKAGE), "cross_package");
  EXPECT_EQ(ctl_device_link_class_name(static_cast<ctl_device_link_class>(99)), nullptr);
}

TEST_F(Topology, WithoutPeerCopiesGpusAreHostStaged) {
  ::setenv("CATALYST_TOPOLOGY", (kFixtures + "/two_socket_four_gpus.xml").c_str(), 1);
  ctl_runtime* runtime = make_runtime(
      "pci=0000:17:00.0;pci=0000:31:00.0;pci=0000:b1:00.0,host_visible=1;"
      "pci=0000:ca:00.0,host_visible=1");
  const ctl_device_link staged = link(runtime, device(runtime, 0), device(runtime, 1));
  EXPECT_EQ(staged.link_class, CTL_DEVICE_LINK_HOST_STAGED) << staged.description;
  EXPECT_EQ(staged.path, CTL_DEVICE_COPY_HOST_STAGED);
  EXPECT_EQ(staged.bytes_per_second, 6000000000ull);
  const ctl_device_link host = link(runtime, device(runtime, 2), device(runtime, 3));
  EXPECT_EQ(host.link_class, CTL_DEVICE_LINK_SAME_NUMA_NODE) << host.description;
  EXPECT_EQ(host.path, CTL_DEVICE_COPY_HOST_MEMORY);
  EXPECT_EQ(host.bytes_per_second, 20000000000ull);
}

TEST_F(Topology, SyntheticMachineJoinsByNumaNode) {
  ::setenv("HWLOC_SYNTHETIC", "pack:2 numa:1 core:4 pu:1", 1);
  ctl_runtime* runtime =
      make_runtime("numa=1,kind=cpu,host_visible=1;numa=0,kind=cpu,host_visible=1;kind=cpu,host_visible=1");
  const ctl_device_locality one = locality(device(runtime, 0));
  EXPECT_TRUE(one.known) << one.reason;
  EXPECT_EQ(one.joined_by, CTL_LOCALITY_JOIN_NUMA_NODE);
  EXPECT_EQ(one.package, 1);
  EXPECT_EQ(one.core_count, 4u);
  EXPECT_STREQ(one.cpuset, "4-7");
  EXPECT_NE(std::string(one.topology_source).find("HWLOC_SYNTHETIC"), std::string::npos) << one.topology_source;
  const ctl_device_locality neither = locality(device(runtime, 2));
  EXPECT_FALSE(neither.known) << neither.reason;
  EXPECT_EQ(neither.core_count, 0u);
  const ctl_device_link across = link(runtime, device(runtime, 0), device(runtime, 1));
  EXPECT_EQ(across.link_class, CTL_DEVICE_LINK_CROSS_PACKAGE) << across.description;
  EXPECT_EQ(across.path, CTL_DEVICE_COPY_HOST_MEMORY);
  const ctl_device_link unknown = link(runtime, device(runtime, 0), device(runtime, 2));
  EXPECT_EQ(unknown.link_class, CTL_DEVICE_LINK_UNKNOWN_LOCALITY) << unknown.description;
}

TEST_F(Topology, HwlocXmlFileWorksAsHwlocDefinesIt) {
  ::unsetenv("HWLOC_SYNTHETIC");
  const std::string xml = kFixtures + "/two_socket_four_gpus.xml";
  ::setenv("HWLOC_XMLFILE", xml.c_str(), 1);
  ctl_runtime* runtime = make_runtime("pci=0000:ca:00.0");
  const ctl_device_locality l = locality(device(runtime, 0));
  EXPECT_TRUE(l.known) << l.reason;
  EXPECT_EQ(l.package, 1);
  EXPECT_EQ(std::string(l.topology_source), "hwloc XML " + xml + " (HWLOC_XMLFILE)");
}

TEST_F(Topology, JsonOverridePlacesADeviceByName) {
  ::setenv("CATALYST_TOPOLOGY", (kFixtures + "/two_socket_four_gpus.json").c_str(), 1);
  ctl_runtime* runtime = make_runtime("pci=0000:17:00.0;numa=1;pci=0000:e3:00.0;pci=0000:ff:00.0");
  EXPECT_EQ(locality(device(runtime, 0)).package, 0);
  EXPECT_EQ(locality(device(runtime, 1)).package, 1);
  EXPECT_FALSE(locality(device(runtime, 2)).known);
  const ctl_device_locality placed = locality(device(runtime, 3));
  EXPECT_TRUE(placed.known) << placed.reason;
  EXPECT_TRUE(placed.from_override);
  EXPECT_STREQ(placed.pci_bus_id, "0000:ca:00.0");
  EXPECT_EQ(placed.numa_node, 1);
  EXPECT_NE(std::string(placed.reason).find("the override file"), std::string::npos) << placed.reason;
}

TEST_F(Topology, BadOverrideFilesAreLoggedAndLeaveLocalityUnknown) {
  struct Case {
    std::string file;
    std::string words;
  } cases[] = {
      {kFixtures + "/bad_unknown_member.json", "packages[0].numa_nodes[0].memroy_bytes: unknown member"},
      {kFixtures + "/bad_syntax.json", "is not valid JSON: line 4"},
      {kFixtures + "/bad_not_topology.txt", "is neither an hwloc XML file"},
      {kFixtures + "/bad_truncated.xml", "as an XML topology"},
      {kFixtures + "/no_such_file.json", "cannot read CATALYST_TOPOLOGY="},
  };
  for (const auto& c : cases) {
    ::setenv("CATALYST_TOPOLOGY", c.file.c_str(), 1);
    log_.lines.clear();
    ctl_runtime* runtime = make_runtime("numa=0,kind=cpu");
    ASSERT_NE(runtime, nullptr) << c.file;
    const ctl_device_locality l = locality(device(runtime, 0));
    EXPECT_FALSE(l.known) << c.file;
    EXPECT_NE(std::string(l.reason).find(c.words), std::string::npos) << l.reason;
    bool warned = false;
    for (const auto& [level, text] : log_.lines) {
      warned = warned || (level == CTL_LOG_WARNING && text.find(c.words) != std::string::npos &&
                          text.find(c.file) != std::string::npos &&
                          text.find("every device has unknown locality") != std::string::npos);
    }
    EXPECT_TRUE(warned) << c.file << " logged:\n" << log_.joined();
    // The description says so too, and still lists the device.
    const std::string text = describe(runtime, CTL_TOPOLOGY_FORMAT_TEXT);
    EXPECT_NE(text.find("no topology: "), std::string::npos) << text;
    EXPECT_NE(text.find("fakegpu:0"), std::string::npos) << text;
  }
}

TEST_F(Topology, LoadedOnFirstUseNotAtCreation) {
  ::setenv("CATALYST_TOPOLOGY", (kFixtures + "/bad_unknown_member.json").c_str(), 1);
  ctl_runtime* runtime = make_runtime("numa=0");
  EXPECT_EQ(log_.joined().find("topology"), std::string::npos) << log_.joined();
  locality(device(runtime, 0));
  EXPECT_NE(log_.joined().find("topology: "), std::string::npos) << log_.joined();
}

TEST_F(Topology, MeasuredOnceThenCachedInMemoryAndOnDisk) {
  ::setenv("HWLOC_SYNTHETIC", "pack:2 numa:1 core:4 pu:1", 1);
  ::setenv("CATALYST_FAKE_GPUS_PEER", "1", 1);
  ctl_runtime* runtime = make_runtime("numa=0;numa=1");
  ctl_device* a = device(runtime, 0);
  ctl_device* b = device(runtime, 1);
  ctl_device_link measured{};
  measured.struct_size = CTL_DEVICE_LINK_STRUCT_SIZE;
  ctl_status* status = ctl_runtime_measure_device_link(runtime, a, b, &measured);
  ASSERT_EQ(status, nullptr) << ctl_status_get_message(status);
  EXPECT_TRUE(measured.measured);
  EXPECT_GT(measured.bytes_per_second, 0u);
  EXPECT_EQ(measured.link_class, CTL_DEVICE_LINK_CROSS_PACKAGE);
  EXPECT_NE(std::string(measured.description).find("measured now"), std::string::npos) << measured.description;
  // The runtime keeps it: the plain query returns the measurement, not the default.
  const ctl_device_link again = link(runtime, a, b);
  EXPECT_TRUE(again.measured);
  EXPECT_EQ(again.bytes_per_second, measured.bytes_per_second);
  // The other direction was not measured.
  EXPECT_FALSE(link(runtime, b, a).measured);
  // A new runtime finds it on disk without copying anything.
  const std::filesystem::path file = cache_ / "topology" / "links.tsv";
  ASSERT_TRUE(std::filesystem::exists(file));
  ctl_runtime* second = make_runtime(nullptr);
  const ctl_device_link cached = link(second, device(second, 0), device(second, 1));
  EXPECT_TRUE(cached.measured);
  EXPECT_EQ(cached.bytes_per_second, measured.bytes_per_second);
  EXPECT_NE(std::string(cached.description).find(file.string()), std::string::npos) << cached.description;
  // Devices that differ (here: another NUMA node reported) miss the cache.
  ctl_runtime* third = make_runtime("numa=1;numa=0");
  EXPECT_FALSE(link(third, device(third, 0), device(third, 1)).measured);
}

TEST_F(Topology, MeasurementWithCacheOffStaysInMemory) {
  ::setenv("CATALYST_CACHE_DIR", "off", 1);
  ctl_runtime* runtime = make_runtime("numa=0;numa=0");
  ctl_device_link measured{};
  measured.struct_size = CTL_DEVICE_LINK_STRUCT_SIZE;
  ctl_status* status = ctl_runtime_measure_device_link(runtime, device(runtime, 0), device(runtime, 1), &measured);
  ASSERT_EQ(status, nullptr) << ctl_status_get_message(status);
  EXPECT_TRUE(measured.measured);
  EXPECT_FALSE(std::filesystem::exists(cache_));
}

TEST_F(Topology, DescribeShowsTheWholePicture) {
  ::setenv("CATALYST_TOPOLOGY", (kFixtures + "/two_socket_four_gpus.xml").c_str(), 1);
  ::setenv("CATALYST_FAKE_GPUS_PEER", "1", 1);
  ctl_runtime* runtime = make_runtime(
      "pci=0000:17:00.0,free=17179869184;pci=0000:b1:00.0,free=85899345920;pci=0000:e3:00.0,free=85899345920");
  const std::string text = describe(runtime, CTL_TOPOLOGY_FORMAT_TEXT);
  for (const char* words :
       {"2 package(s), 2 NUMA node(s), 16 core(s), 32 processing unit(s)",
        "NUMA node 1: 256.0 GiB, 8 cores (cpus 16-31)",
        "0000:b1:00.0  NVIDIA Corporation H100 80GB HBM3 (cuda2)  near NUMA node 1", "0000:00:1f.2", "near the machine",
        "fakegpu:1", "NUMA node 1, package 1", "joined by PCI bus id 0000:b1:00.0", "cross-package 6.0",
        "same-device 100.0", "unknown 6.0", "1. fakegpu:1", "known locality, fakegpu:2's is unknown"}) {
    EXPECT_NE(text.find(words), std::string::npos) << "missing \"" << words << "\" in\n" << text;
  }
  const std::string json = describe(runtime, CTL_TOPOLOGY_FORMAT_JSON);
  for (const char* words :
       {"\"source\":\"hwloc XML ", "\"error\":null", "\"bus_id\":\"0000:ca:00.0\"", "\"joined_by\":\"pci_bus_id\"",
        "\"class\":\"cross_package\"", "\"path\":\"peer_copy\"", "\"placement_order\":[{\"device\":\"fakegpu:1\""}) {
    EXPECT_NE(json.find(words), std::string::npos) << "missing " << words << " in\n" << json;
  }
}

TEST_F(Topology, DescribeIsSnprintfLike) {
  ctl_runtime* runtime = make_runtime("numa=0");
  size_t full = 0;
  ctl_status* status = ctl_runtime_topology_describe(runtime, CTL_TOPOLOGY_FORMAT_TEXT, nullptr, 0, &full);
  ASSERT_EQ(status, nullptr);
  ASSERT_GT(full, 20u);
  char small[11];
  std::memset(small, 'x', sizeof small);
  size_t length = 0;
  status = ctl_runtime_topology_describe(runtime, CTL_TOPOLOGY_FORMAT_TEXT, small, sizeof small, &length);
  ASSERT_EQ(status, nullptr);
  EXPECT_EQ(length, full);
  EXPECT_EQ(std::strlen(small), 10u);
  EXPECT_EQ(std::string(small), describe(runtime, CTL_TOPOLOGY_FORMAT_TEXT).substr(0, 10));
}

TEST_F(Topology, BadArgumentsGetStatusesAndWriteNothing) {
  ctl_runtime* runtime = make_runtime("numa=0;numa=0");
  ctl_runtime* other = make_runtime("numa=0");
  ctl_device* a = device(runtime, 0);
  ctl_device* foreign = device(other, 0);
  ctl_device_locality l{};
  l.struct_size = CTL_DEVICE_LOCALITY_STRUCT_SIZE;
  expect_status(ctl_device_get_locality(nullptr, &l), CTL_STATUS_INVALID_ARGUMENT, "argument 'device' is NULL");
  expect_status(ctl_device_get_locality(a, nullptr), CTL_STATUS_INVALID_ARGUMENT, "'out_locality' is NULL");
  ctl_device_locality tiny{};
  tiny.struct_size = 4;
  expect_status(ctl_device_get_locality(a, &tiny), CTL_STATUS_INVALID_ARGUMENT, "CTL_DEVICE_LOCALITY_STRUCT_SIZE");
  EXPECT_EQ(tiny.struct_size, 4u);
  EXPECT_FALSE(tiny.known);
  ctl_device_link out{};
  out.struct_size = CTL_DEVICE_LINK_STRUCT_SIZE;
  out.bytes_per_second = 7;
  expect_status(ctl_runtime_device_link(nullptr, a, a, &out), CTL_STATUS_INVALID_ARGUMENT, "'runtime' is NULL");
  expect_status(ctl_runtime_device_link(runtime, a, nullptr, &out), CTL_STATUS_INVALID_ARGUMENT,
                "argument 'to' is NULL");
  expect_status(ctl_runtime_device_link(runtime, foreign, a, &out), CTL_STATUS_INVALID_ARGUMENT,
                "argument 'from' (device fakegpu:0) belongs to another runtime");
  expect_status(ctl_runtime_measure_device_link(runtime, a, foreign, &out), CTL_STATUS_INVALID_ARGUMENT,
                "argument 'to' (device fakegpu:0) belongs to another runtime");
  expect_status(ctl_runtime_device_link(runtime, a, a, nullptr), CTL_STATUS_INVALID_ARGUMENT, "'out_link' is NULL");
  EXPECT_EQ(out.bytes_per_second, 7u);
  const auto* dead = reinterpret_cast<const ctl_device*>(&out);  // not a device at all
  expect_status(ctl_runtime_device_link(runtime, dead, a, &out), CTL_STATUS_INVALID_ARGUMENT, "not a live ctl_device");
  size_t length = 0;
  char buffer[8];
  expect_status(
      ctl_runtime_topology_describe(runtime, static_cast<ctl_topology_format>(7), buffer, sizeof buffer, &length),
      CTL_STATUS_INVALID_ARGUMENT, "argument 'format' is 7");
  expect_status(ctl_runtime_topology_describe(runtime, CTL_TOPOLOGY_FORMAT_TEXT, nullptr, 8, &length),
                CTL_STATUS_INVALID_ARGUMENT, "argument 'buffer' is NULL but capacity is 8");
  expect_status(ctl_runtime_topology_describe(runtime, CTL_TOPOLOGY_FORMAT_TEXT, buffer, sizeof buffer, nullptr),
                CTL_STATUS_INVALID_ARGUMENT, "'out_length' is NULL");
  expect_status(ctl_runtime_topology_describe(nullptr, CTL_TOPOLOGY_FORMAT_TEXT, buffer, sizeof buffer, &length),
                CTL_STATUS_INVALID_ARGUMENT, "'runtime' is NULL");
  EXPECT_EQ(length, 0u);
}

TEST_F(Topology, AnOlderSmallerLocalityStructGetsOnlyItsFields) {
  ctl_runtime* runtime = make_runtime("numa=0");
  struct {
    ctl_device_locality l;
    char guard[16];
  } out;
  std::memset(&out, 0x5a, sizeof out);
  out.l.struct_size = offsetof(ctl_device_locality, package);  // a caller that knows less
  ctl_status* status = ctl_device_get_locality(device(runtime, 0), &out.l);
  ASSERT_EQ(status, nullptr) << ctl_status_get_message(status);
  EXPECT_EQ(out.l.struct_size, offsetof(ctl_device_locality, package));
  const auto* bytes = reinterpret_cast<const unsigned char*>(&out.l);
  for (size_t i = offsetof(ctl_device_locality, package); i < sizeof out.l; ++i) {
    ASSERT_EQ(bytes[i], 0x5a) << "byte " << i << " written past the caller's struct_size";
  }
}

}  // namespace
