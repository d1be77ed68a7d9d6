// topology_rules_test.cpp — the pure rules of core/topology/, compiled in: bus id spelling,
// the JSON topology format, hwloc's view of synthetic and XML machines, the join rules, the
// link classes and the placement ranking. Nothing here depends on the machine running it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "topology/device_link.h"
#include "topology/device_locality.h"
#include "topology/device_ranking.h"
#include "topology/hwloc_loader.h"
#include "topology/pci_bus_id.h"
#include "topology/topology_json.h"

namespace topo = catalyst::topology;

namespace {

const std::string kFixtures = CTL_TEST_TOPOLOGY_FIXTURES;

std::string read_file(const std::string& path) {
  std::ifstream file(path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// hwloc reads HWLOC_SYNTHETIC when it loads; each test sets it for its own load only.
topo::TopologyModel synthetic(const char* description) {
  ::setenv("HWLOC_SYNTHETIC", description, 1);
  topo::TopologyModel model = topo::load_hwloc_topology("");
  ::unsetenv("HWLOC_SYNTHETIC");
  return model;
}

topo::DeviceFacts facts(const std::string& name, const std::string& pci, int numa) {
  topo::DeviceFacts f;
  f.name = name;
  f.pci_bus_id = pci;
  f.numa_node = numa;
  return f;
}

topo::LinkEnd end(uint32_t index, const void* plugin, bool host_visible, bool peer, topo::Locality locality) {
  topo::LinkEnd e;
  e.index = index;
  e.name = "dev:" + std::to_string(index);
  e.plugin = "p";
  e.plugin_id = plugin;
  e.host_visible = host_visible;
  e.plugin_has_peer_copy = peer;
  e.locality = std::move(locality);
  return e;
}

topo::Locality at(int package, int numa) {
  topo::Locality l;
  l.known = package >= 0 || numa >= 0;
  l.package = package;
  l.numa_node = numa;
  return l;
}

}  // namespace

TEST(PciBusId, OneSpellingForEveryForm) {
  EXPECT_EQ(topo::normalize_pci_bus_id("0000:3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(topo::normalize_pci_bus_id("3b:00.0"), "0000:3b:00.0");
  EXPECT_EQ(topo::normalize_pci_bus_id("  0001:b1:1f.7\n"), "0001:b1:1f.7");
  EXPECT_EQ(topo::normalize_pci_bus_id("gpu0"), "");
  EXPECT_EQ(topo::normalize_pci_bus_id("0000:3b:00"), "");
  EXPECT_EQ(topo::normalize_pci_bus_id("0000:3b:20.0"), "");  // device numbers end at 0x1f
  EXPECT_EQ(topo::normalize_pci_bus_id("0000:3b:00.8"), "");  // functions end at 7
  EXPECT_EQ(topo::normalize_pci_bus_id(""), "");
}

TEST(TopologyJson, CpuListsCount) {
  uint32_t count = 0;
  EXPECT_TRUE(topo::count_cpu_list("0-3,8", &count));
  EXPECT_EQ(count, 5u);
  EXPECT_FALSE(topo::count_cpu_list("3-1", &count));
  EXPECT_FALSE(topo::count_cpu_list("0-", &count));
  EXPECT_FALSE(topo::count_cpu_list("a", &count));
}

TEST(TopologyJson, TheFixtureReadsAsTwoPackagesFourGpus) {
  const std::string path = kFixtures + "/two_socket_four_gpus.json";
  const topo::TopologyModel model = topo::parse_topology_json(read_file(path), path);
  ASSERT_TRUE(model.loaded()) << model.error;
  EXPECT_EQ(model.source, "JSON " + path + " (CATALYST_TOPOLOGY)");
  ASSERT_EQ(model.packages.size(), 2u);
  ASSERT_EQ(model.numa_nodes.size(), 2u);
  EXPECT_EQ(model.numa_nodes[1].os_index, 1);
  EXPECT_EQ(model.numa_nodes[1].package, 1);
  EXPECT_EQ(model.numa_nodes[1].pus, 16u);
  EXPECT_EQ(model.numa_nodes[1].cores, 8u);
  EXPECT_EQ(model.numa_nodes[1].memory, 274877906944ull);
  EXPECT_EQ(model.cores, 16u);
  ASSERT_EQ(model.pci_devices.size(), 4u);
  EXPECT_EQ(model.pci_devices[2].bus_id, "0000:b1:00.0");
  EXPECT_EQ(model.pci_devices[2].package, 1);
  ASSERT_EQ(model.assignments.size(), 1u);
  EXPECT_EQ(model.assignments[0].device, "fakegpu:3");
  EXPECT_EQ(model.assignments[0].pci_bus_id, "0000:ca:00.0");
}

TEST(TopologyJson, MistakesAreNamedWithTheirPlace) {
  struct Case {
    const char* text;
    const char* expected;
  } cases[] = {
      {"{\"catalyst_topology\": 1, \"packages\": [{\"numa_nodes\": [{\"os_index\": 0, \"memroy_bytes\": 1}]}]}",
       "packages[0].numa_nodes[0].memroy_bytes: unknown member"},
      {"{\"packages\": [{\"numa_nodes\": [{\"os_index\": 0}]}]}", "catalyst_topology: missing"},
      {"{\"catalyst_topology\": 2, \"packages\": []}", "catalyst_topology: must be a whole number from 1 to 1"},
      {"{\"catalyst_topology\": 1, \"packages\": []}", "packages: must be a non-empty array"},
      {"{\"catalyst_topology\": 1, \"packages\": [{\"numa_nodes\": [{\"os_index\": 0}, {\"os_index\": 0}]}]}",
       "NUMA node 0 is listed twice"},
      {"{\"catalyst_topology\": 1, \"packages\": [{\"numa_nodes\": [{\"os_index\": 0}]}], \"pci_devices\": "
       "[{\"bus_id\": \"0000:17:00.0\", \"numa_node\": 4}]}",
       "pci_devices[0].numa_node: NUMA node 4 is not among the packages' nodes"},
      {"{\"catalyst_topology\": 1, \"packages\": [{\"numa_nodes\": [{\"os_index\": 0}]}], \"devices\": "
       "[{\"device\": \"cpu:0\", \"pci_bus_id\": \"gpu0\"}]}",
       "devices[0].pci_bus_id: \"gpu0\" is not a PCI bus id"},
      {"{\"catalyst_topology\": 1, \"packages\": [{\"numa_nodes\": [{\"os_index\": 0}]}], \"devices\": "
       "[{\"device\": \"cpu:0\"}]}",
       "devices[0]: gives neither numa_node nor pci_bus_id"},
      {"{\"catalyst_topology\": 1,\n \"packages\": [ }",
       "is not valid JSON: line 2, column 16: unexpected character '}'"},
  };
  for (const auto& c : cases) {
    const topo::TopologyModel model = topo::parse_topology_json(c.text, "x.json");
    EXPECT_FALSE(model.loaded()) << c.text;
    EXPECT_NE(model.error.find(c.expected), std::string::npos)
        << "error: " << model.error << "\nwanted: " << c.expected;
    EXPECT_TRUE(model.numa_nodes.empty() && model.packages.empty()) << "a refused file leaves nothing behind";
  }
}

TEST(HwlocLoader, SyntheticTwoPackages) {
  const topo::TopologyModel model = synthetic("pack:2 numa:1 core:4 pu:1");
  ASSERT_TRUE(model.loaded()) << model.error;
  EXPECT_NE(model.source.find("HWLOC_SYNTHETIC"), std::string::npos) << model.source;
  ASSERT_EQ(model.packages.size(), 2u);
  ASSERT_EQ(model.numa_nodes.size(), 2u);
  EXPECT_EQ(model.cores, 8u);
  EXPECT_EQ(model.numa_nodes[1].os_index, 1);
  EXPECT_EQ(model.numa_nodes[1].package, 1);
  EXPECT_EQ(model.numa_nodes[1].cores, 4u);
  EXPECT_EQ(model.numa_nodes[1].cpuset, "4-7");
  EXPECT_TRUE(model.pci_devices.empty());
}

TEST(HwlocLoader, XmlFixtureHasFourGpusOnTwoPackages) {
  const topo::TopologyModel model = topo::load_hwloc_topology(kFixtures + "/two_socket_four_gpus.xml");
  ASSERT_TRUE(model.loaded()) << model.error;
  ASSERT_EQ(model.packages.size(), 2u);
  EXPECT_EQ(model.cores, 16u);
  EXPECT_EQ(model.pus, 32u);
  ASSERT_EQ(model.numa_nodes.size(), 2u);
  EXPECT_EQ(model.numa_nodes[0].memory, 274877906944ull);
  struct Want {
    const char* bus;
    int numa;
    int package;
  } wants[] = {{"0000:17:00.0", 0, 0}, {"0000:31:00.0", 0, 0}, {"0000:4b:00.0", 0, 0},
               {"0000:b1:00.0", 1, 1}, {"0000:ca:00.0", 1, 1}, {"0000:00:1f.2", -1, -1}};
  for (const auto& want : wants) {
    const topo::PciDevice* pci = model.find_pci_device(want.bus);
    ASSERT_NE(pci, nullptr) << want.bus;
    EXPECT_EQ(pci->numa_node, want.numa) << want.bus;
    EXPECT_EQ(pci->package, want.package) << want.bus;
  }
  const topo::PciDevice* gpu = model.find_pci_device("0000:b1:00.0");
  EXPECT_EQ(gpu->class_id, 0x0302u);
  EXPECT_EQ(gpu->name, "NVIDIA Corporation H100 80GB HBM3 (cuda2)");
  bool has_l3 = false;
  for (const auto& cache : model.caches) has_l3 = has_l3 || (cache.depth == 3 && cache.count == 2);
  EXPECT_TRUE(has_l3);
}

TEST(HwlocLoader, BrokenXmlIsAnErrorNotACrash) {
  const topo::TopologyModel model = topo::load_hwloc_topology(kFixtures + "/bad_truncated.xml");
  EXPECT_FALSE(model.loaded());
  EXPECT_NE(model.error.find("bad_truncated.xml"), std::string::npos) << model.error;
  const topo::TopologyModel missing = topo::load_hwloc_topology(kFixtures + "/no_such_file.xml");
  EXPECT_FALSE(missing.loaded());
}

TEST(Join, ByPciBusIdOnTheXmlServer) {
  const topo::TopologyModel model = topo::load_hwloc_topology(kFixtures + "/two_socket_four_gpus.xml");
  ASSERT_TRUE(model.loaded()) << model.error;
  const topo::Locality gpu2 = topo::join_device(model, facts("g:2", "0000:B1:00.0", -1));
  EXPECT_TRUE(gpu2.known);
  EXPECT_EQ(gpu2.joined_by, topo::JoinMethod::kPciBusId);
  EXPECT_EQ(gpu2.pci_bus_id, "0000:b1:00.0");
  EXPECT_EQ(gpu2.package, 1);
  EXPECT_EQ(gpu2.numa_node, 1);
  EXPECT_EQ(gpu2.cores, 8u);
  EXPECT_EQ(gpu2.pus, 16u);
  EXPECT_EQ(gpu2.cpuset, "16-31");
  // The bus id wins over a NUMA node that contradicts it.
  const topo::Locality gpu0 = topo::join_device(model, facts("g:0", "0000:17:00.0", 1));
  EXPECT_EQ(gpu0.numa_node, 0);
  EXPECT_EQ(gpu0.package, 0);
}

TEST(Join, AbsentPciBusIdIsUnknownEvenWithANode) {
  const topo::TopologyModel model = topo::load_hwloc_topology(kFixtures + "/two_socket_four_gpus.xml");
  const topo::Locality l = topo::join_device(model, facts("g:9", "0000:e3:00.0", 1));
  EXPECT_FALSE(l.known);
  EXPECT_EQ(l.joined_by, topo::JoinMethod::kNone);
  EXPECT_EQ(l.package, -1);
  EXPECT_EQ(l.numa_node, -1);
  EXPECT_NE(l.reason.find("PCI bus id 0000:e3:00.0"), std::string::npos) << l.reason;
  EXPECT_NE(l.reason.find("is not in the topology"), std::string::npos) << l.reason;
  const topo::Locality bad = topo::join_device(model, facts("g:8", "gpu-eight", -1));
  EXPECT_FALSE(bad.known);
  EXPECT_NE(bad.reason.find("\"gpu-eight\""), std::string::npos) << bad.reason;
}

TEST(Join, PciDeviceAboveEveryPackageIsNotGivenTheMachine) {
  const topo::TopologyModel model = topo::load_hwloc_topology(kFixtures + "/two_socket_four_gpus.xml");
  const topo::Locality l = topo::join_device(model, facts("sata:0", "0000:00:1f.2", -1));
  EXPECT_FALSE(l.known);
  EXPECT_EQ(l.joined_by, topo::JoinMethod::kPciBusId);
  EXPECT_EQ(l.package, -1);
  EXPECT_EQ(l.numa_node, -1);
  EXPECT_EQ(l.cores, 0u);
  EXPECT_NE(l.reason.find("hangs above every package"), std::string::npos) << l.reason;
}

TEST(Join, ByNumaNodeOnASyntheticMachine) {
  const topo::TopologyModel model = synthetic("pack:2 numa:1 core:4 pu:1");
  const topo::Locality cpu1 = topo::join_device(model, facts("cpu:1", "", 1));
  EXPECT_TRUE(cpu1.known);
  EXPECT_EQ(cpu1.joined_by, topo::JoinMethod::kNumaNode);
  EXPECT_EQ(cpu1.package, 1);
  EXPECT_EQ(cpu1.cores, 4u);
  EXPECT_EQ(cpu1.cpuset, "4-7");
  const topo::Locality missing = topo::join_device(model, facts("cpu:7", "", 7));
  EXPECT_FALSE(missing.known);
  EXPECT_NE(missing.reason.find("NUMA node 7"), std::string::npos) << missing.reason;
  // Neither a bus id nor a node on a machine of two nodes: unknown, not the whole machine.
  const topo::Locality neither = topo::join_device(model, facts("x:0", "", -1));
  EXPECT_FALSE(neither.known);
  EXPECT_EQ(neither.numa_node, -1);
  EXPECT_EQ(neither.cores, 0u);
  EXPECT_NE(neither.reason.find("the machine has 2 NUMA nodes"), std::string::npos) << neither.reason;
}

TEST(Join, NeitherOnASingleNodeMachineIsTheSoleNode) {
  const topo::TopologyModel model = synthetic("pack:1 numa:1 core:2 pu:2");
  const topo::Locality l = topo::join_device(model, facts("opencl:0", "", -1));
  EXPECT_TRUE(l.known);
  EXPECT_EQ(l.joined_by, topo::JoinMethod::kSoleNumaNode);
  EXPECT_EQ(l.numa_node, 0);
  EXPECT_EQ(l.package, 0);
  EXPECT_EQ(l.pus, 4u);
  EXPECT_NE(l.reason.find("sole NUMA node"), std::string::npos) << l.reason;
}

TEST(Join, OverrideAssignmentReplacesWhatThePluginSays) {
  const std::string path = kFixtures + "/two_socket_four_gpus.json";
  const topo::TopologyModel model = topo::parse_topology_json(read_file(path), path);
  // fakegpu:3 reports a bus id the file does not know; the file's "devices" entry places it.
  const topo::Locality placed = topo::join_device(model, facts("fakegpu:3", "0000:ff:00.0", -1));
  EXPECT_TRUE(placed.known);
  EXPECT_TRUE(placed.from_override);
  EXPECT_EQ(placed.pci_bus_id, "0000:ca:00.0");
  EXPECT_EQ(placed.package, 1);
  const topo::Locality other = topo::join_device(model, facts("fakegpu:2", "0000:ff:00.0", -1));
  EXPECT_FALSE(other.known);
  EXPECT_FALSE(other.from_override);
}

TEST(Join, NoTopologyMeansUnknownWithTheError) {
  topo::TopologyModel model;
  model.error = "cannot read CATALYST_TOPOLOGY=/nowhere";
  const topo::Locality l = topo::join_device(model, facts("cpu:0", "", 0));
  EXPECT_FALSE(l.known);
  EXPECT_NE(l.reason.find("cannot read CATALYST_TOPOLOGY=/nowhere"), std::string::npos) << l.reason;
}

TEST(Link, ClassesFollowPathAndLocality) {
  int plugin_a = 0, plugin_b = 0;
  const auto gpu0 = end(0, &plugin_a, false, true, at(0, 0));
  const auto gpu1 = end(1, &plugin_a, false, true, at(0, 0));
  const auto gpu2 = end(2, &plugin_a, false, true, at(1, 1));
  const auto snc = end(3, &plugin_a, false, true, at(0, 2));  // another node of package 0
  const auto lost = end(4, &plugin_a, false, true, topo::Locality{});
  const auto other = end(5, &plugin_b, false, false, at(0, 0));
  const auto cpu = end(6, &plugin_b, true, false, at(0, 0));
  const auto cpu_far = end(7, &plugin_b, true, false, at(1, 1));

  auto expect = [](const topo::LinkEnd& a, const topo::LinkEnd& b, topo::LinkClass c, topo::CopyPath p, uint64_t gb) {
    const topo::Link link = topo::classify_link(a, b);
    EXPECT_EQ(link.link_class, c) << a.name << " -> " << b.name << ": " << link.description;
    EXPECT_EQ(link.path, p) << a.name << " -> " << b.name;
    EXPECT_EQ(link.bytes_per_second, gb * 1000000000ull) << a.name << " -> " << b.name;
    EXPECT_FALSE(link.measured);
  };
  expect(gpu0, gpu0, topo::LinkClass::kSameDevice, topo::CopyPath::kNone, 100);
  expect(gpu0, gpu1, topo::LinkClass::kSameNumaNode, topo::CopyPath::kPeerCopy, 12);
  expect(gpu0, snc, topo::LinkClass::kSamePackage, topo::CopyPath::kPeerCopy, 12);
  expect(gpu0, gpu2, topo::LinkClass::kCrossPackage, topo::CopyPath::kPeerCopy, 6);
  expect(gpu0, lost, topo::LinkClass::kUnknownLocality, topo::CopyPath::kPeerCopy, 6);
  // Different plugins, one side not host-visible: staged, whatever the localities.
  expect(gpu0, other, topo::LinkClass::kHostStaged, topo::CopyPath::kHostStaged, 6);
  expect(cpu, gpu1, topo::LinkClass::kHostStaged, topo::CopyPath::kHostStaged, 6);
  // Both host-visible: one copy in host memory, classed by locality.
  expect(cpu, cpu_far, topo::LinkClass::kCrossPackage, topo::CopyPath::kHostMemory, 10);
  // A CPU split into devices of one plugin with peer copies: the copy is in host memory.
  const auto cpu_a = end(9, &plugin_a, true, true, at(0, 0));
  const auto cpu_b = end(10, &plugin_a, true, true, at(0, 0));
  const auto cpu_c = end(11, &plugin_a, true, true, at(1, 1));
  expect(cpu_a, cpu_b, topo::LinkClass::kSameNumaNode, topo::CopyPath::kPeerCopy, 20);
  expect(cpu_a, cpu_c, topo::LinkClass::kCrossPackage, topo::CopyPath::kPeerCopy, 10);
  // One plugin without peer copies whose devices are not host-visible: staged.
  const auto plain0 = end(8, &plugin_b, false, false, at(0, 0));
  expect(plain0, other, topo::LinkClass::kHostStaged, topo::CopyPath::kHostStaged, 6);
  EXPECT_NE(topo::classify_link(plain0, other).description.find("has no buffer_copy_peer"), std::string::npos);
}

namespace {

topo::RankingCandidate candidate(uint32_t index, bool accelerator, uint64_t free_bytes, bool known) {
  topo::RankingCandidate c;
  c.index = index;
  c.name = "d:" + std::to_string(index);
  c.accelerator = accelerator;
  c.memory_free = free_bytes;
  c.locality_known = known;
  return c;
}

std::string order(const std::vector<topo::RankedDevice>& ranked) {
  std::string out;
  for (const auto& r : ranked) out += (out.empty() ? "" : " ") + r.name + (r.eligible ? "" : "(x)");
  return out;
}

topo::Link link_of(topo::LinkClass c, uint64_t gb) {
  topo::Link link;
  link.link_class = c;
  link.bytes_per_second = gb * 1000000000ull;
  return link;
}

}  // namespace

TEST(Ranking, WithoutAnAnchorKindThenMemoryThenLocalityThenIndex) {
  topo::RankingRequest request;
  request.candidates = {candidate(0, false, 64ull << 30, true), candidate(1, true, 8ull << 30, true),
                        candidate(2, true, 80ull << 30, false), candidate(3, true, 80ull << 30, true),
                        candidate(4, true, 0, true)};
  const auto ranked = topo::rank_devices(request);
  EXPECT_EQ(order(ranked), "d:3 d:2 d:1 d:4 d:0");
  EXPECT_EQ(ranked[0].decided_by, "known locality, d:2's is unknown");
  EXPECT_NE(ranked[1].decided_by.find("more free memory than d:1"), std::string::npos) << ranked[1].decided_by;
  EXPECT_NE(ranked[2].decided_by.find("more free memory than d:4"), std::string::npos) << ranked[2].decided_by;
  EXPECT_EQ(ranked[3].decided_by, "a GPU or accelerator, d:0 is a CPU");
  EXPECT_EQ(ranked[4].decided_by, "");
}

TEST(Ranking, SmallMemoryDifferencesDoNotReorder) {
  topo::RankingRequest request;
  request.candidates = {candidate(0, true, 80ull << 30, true), candidate(1, true, (80ull << 30) + (1ull << 30), true)};
  EXPECT_EQ(order(topo::rank_devices(request)), "d:0 d:1");
  EXPECT_EQ(topo::rank_devices(request)[0].decided_by, "lower index than d:1 (otherwise equal)");
}

TEST(Ranking, TheAnchorWinsAndAFallbackGoesToItsNearestDevice) {
  topo::RankingRequest request;
  request.anchor = "d:0";
  auto c0 = candidate(0, true, 80ull << 30, true);
  auto c1 = candidate(1, true, 80ull << 30, true);
  auto c2 = candidate(2, true, 80ull << 30, true);
  auto c3 = candidate(3, false, 512ull << 30, true);
  c0.has_link = c1.has_link = c2.has_link = c3.has_link = true;
  c0.link_to_anchor = link_of(topo::LinkClass::kSameDevice, 100);
  c1.link_to_anchor = link_of(topo::LinkClass::kCrossPackage, 6);
  c2.link_to_anchor = link_of(topo::LinkClass::kSameNumaNode, 12);
  c3.link_to_anchor = link_of(topo::LinkClass::kHostStaged, 6);
  request.candidates = {c0, c1, c2, c3};
  EXPECT_EQ(order(topo::rank_devices(request)), "d:0 d:2 d:1 d:3");
  // The anchor cannot run the op: the fallback goes to the device nearest to it.
  request.candidates[0].supported = false;
  request.candidates[0].unsupported = "does not support matmul on f16";
  const auto ranked = topo::rank_devices(request);
  EXPECT_EQ(order(ranked), "d:2 d:1 d:3 d:0(x)");
  EXPECT_EQ(ranked[0].decided_by, "faster link from d:0 than d:1 (12.0 GB/s vs 6.0 GB/s)");
  EXPECT_EQ(ranked[1].decided_by, "a GPU or accelerator, d:3 is a CPU");  // equal links: kind decides
  EXPECT_EQ(ranked[2].decided_by, "ahead of every device that is not eligible");
  EXPECT_EQ(ranked[3].decided_by, "not eligible: does not support matmul on f16");
  EXPECT_NE(ranked[0].reason.find("from d:0: same_numa_node 12.0 GB/s (estimated)"), std::string::npos)
      << ranked[0].reason;
}

TEST(Ranking, NotEnoughFreeMemoryIsNotEligibleButUnknownIs) {
  topo::RankingRequest request;
  request.bytes_needed = 10ull << 30;
  request.candidates = {candidate(0, true, 8ull << 30, true), candidate(1, true, 0, true),
                        candidate(2, false, 64ull << 30, true)};
  const auto ranked = topo::rank_devices(request);
  EXPECT_EQ(order(ranked), "d:1 d:2 d:0(x)");
  EXPECT_EQ(ranked[2].decided_by, "not eligible: needs 10.0 GiB but 8.0 GiB is free");
}
