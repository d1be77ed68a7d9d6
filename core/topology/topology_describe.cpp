// topology_describe.cpp — rendering RuntimeTopology as text and as JSON. Both renderings
// read the same facts, gathered once by collect().
#include "topology/topology_describe.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <vector>

#include "runtime.h"
#include "topology/device_ranking.h"
#include "topology/ranking_candidates.h"
#include "topology/runtime_topology.h"

namespace catalyst {
namespace {

using topology::format_bandwidth;
using topology::format_bytes;

struct DeviceRow {
  const topology::LinkEnd* end = nullptr;
  std::string model;  // the plugin's device name, "NVIDIA H100 80GB HBM3"
  ctl_device_kind kind = CTL_DEVICE_KIND_CPU;
  uint64_t memory_total = 0;
  uint64_t memory_free = 0;
};

struct Picture {
  const topology::TopologyModel* model = nullptr;
  std::vector<DeviceRow> devices;
  std::vector<std::vector<const topology::Link*>> links;  // [from][to]
  std::vector<topology::RankedDevice> ranking;
};

const char* kind_name(ctl_device_kind kind) {
  switch (kind) {
    case CTL_DEVICE_KIND_CPU:
      return "cpu";
    case CTL_DEVICE_KIND_GPU:
      return "gpu";
    case CTL_DEVICE_KIND_ACCELERATOR:
      return "accelerator";
  }
  return "unknown";
}

Picture collect(const ctl_runtime& runtime) {
  RuntimeTopology& topo = runtime_topology(runtime);
  Picture picture;
  picture.model = &topo.model();
  for (uint32_t i = 0; i < topo.device_count(); ++i) {
    DeviceRow row;
    row.end = &topo.end(i);
    ctl_plugin_device_properties properties;
    if (ctl_status* status = runtime.devices[i]->properties(&properties)) {
      ctl_status_free(status);
    } else {
      row.model = properties.name;
      row.kind = properties.kind;
      row.memory_total = properties.memory_total;
      row.memory_free = properties.memory_free;
    }
    picture.devices.push_back(row);
  }
  // The placement order for work every device can hold (f32 is required of every device),
  // with no anchor: the order automatic placement starts from.
  topology::RankingRequest request;
  request.candidates = ranking_candidates(runtime, nullptr);
  picture.links.resize(picture.devices.size());
  for (uint32_t a = 0; a < picture.devices.size(); ++a) {
    for (uint32_t b = 0; b < picture.devices.size(); ++b) picture.links[a].push_back(&topo.link(a, b));
  }
  picture.ranking = topology::rank_devices(request);
  return picture;
}

std::string printf_string(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string printf_string(const char* format, ...) {
  va_list args;
  va_start(args, format);
  char small[512];
  va_list copy;
  va_copy(copy, args);
  const int length = std::vsnprintf(small, sizeof small, format, copy);
  va_end(copy);
  std::string out;
  if (length >= 0 && static_cast<size_t>(length) < sizeof small) {
    out = small;
  } else if (length >= 0) {
    out.resize(static_cast<size_t>(length) + 1);
    std::vsnprintf(out.data(), out.size(), format, args);
    out.resize(static_cast<size_t>(length));
  }
  va_end(args);
  return out;
}

// Short names for the matrix cells.
const char* short_class(topology::LinkClass link_class) {
  switch (link_class) {
    case topology::LinkClass::kSameDevice:
      return "same-device";
    case topology::LinkClass::kSameNumaNode:
      return "same-numa";
    case topology::LinkClass::kSamePackage:
      return "same-package";
    case topology::LinkClass::kCrossPackage:
      return "cross-package";
    case topology::LinkClass::kHostStaged:
      return "host-staged";
    case topology::LinkClass::kUnknownLocality:
      return "unknown";
  }
  return "unknown";
}

std::string cache_summary(const topology::TopologyModel& model) {
  std::string out;
  for (const auto& cache : model.caches) {
    std::string name = "L" + std::to_string(cache.depth);
    if (cache.kind == "data") name += "d";
    if (cache.kind == "instruction") name += "i";
    out += (out.empty() ? "" : ", ") + name + " " + format_bytes(cache.size) + " x" + std::to_string(cache.count);
  }
  return out.empty() ? "none reported" : out;
}

}  // namespace

std::string describe_topology_text(const ctl_runtime& runtime) {
  const Picture p = collect(runtime);
  const topology::TopologyModel& m = *p.model;
  std::string out = "Machine (" + m.source + ")\n";
  if (!m.loaded()) {
    out += "  no topology: " + m.error + "\n  every device has unknown locality\n";
  } else {
    out += printf_string("  %zu package(s), %zu NUMA node(s), %u core(s), %u processing unit(s)\n", m.packages.size(),
                         m.numa_nodes.size(), m.cores, m.pus);
    for (size_t i = 0; i < m.packages.size(); ++i) {
      const auto& package = m.packages[i];
      out += printf_string("  package %zu: %u cores, %u PUs (cpus %s)%s%s\n", i, package.cores, package.pus,
                           package.cpuset.empty() ? "none" : package.cpuset.c_str(), package.name.empty() ? "" : "  ",
                           package.name.c_str());
      for (const auto& node : m.numa_nodes) {
        if (node.package != static_cast<int>(i)) continue;
        out += printf_string("    NUMA node %d: %s, %u cores (cpus %s)\n", node.os_index,
                             format_bytes(node.memory).c_str(), node.cores,
                             node.cpuset.empty() ? "none" : node.cpuset.c_str());
      }
    }
    for (const auto& node : m.numa_nodes) {
      if (node.package >= 0) continue;
      out += printf_string("  NUMA node %d (no single package): %s, %u cores (cpus %s)\n", node.os_index,
                           format_bytes(node.memory).c_str(), node.cores,
                           node.cpuset.empty() ? "none" : node.cpuset.c_str());
    }
    out += "  caches: " + cache_summary(m) + "\n";
    out += printf_string("  PCI devices (%zu):\n", m.pci_devices.size());
    for (const auto& pci : m.pci_devices) {
      std::string near = pci.numa_node >= 0 ? "NUMA node " + std::to_string(pci.numa_node)
                         : pci.package >= 0 ? "package " + std::to_string(pci.package)
                                            : "the machine";
      out += printf_string("    %s  %s  near %s\n", pci.bus_id.c_str(), pci.name.c_str(), near.c_str());
    }
  }

  out += printf_string("\nDevices (%zu)\n", p.devices.size());
  size_t width = 4;
  for (const auto& d : p.devices) width = std::max(width, d.end->name.size());
  for (const auto& d : p.devices) {
    const auto& l = d.end->locality;
    out += printf_string("  %-*s  %s (%s), memory %s", static_cast<int>(width), d.end->name.c_str(), d.model.c_str(),
                         kind_name(d.kind), format_bytes(d.memory_total).c_str());
    if (d.memory_free) out += ", " + format_bytes(d.memory_free) + " free";
    out += d.end->host_visible ? ", host-visible\n" : "\n";
    std::string where = topology::locality_summary(l);
    if (l.known && l.cores) where += printf_string(", %u cores (cpus %s)", l.cores, l.cpuset.c_str());
    out += printf_string("  %-*s  %s\n", static_cast<int>(width), "", where.c_str());
    // The reason of an unknown locality starts by saying so; the line above already did.
    const std::string prefix = "unknown locality: ";
    const std::string reason = l.reason.rfind(prefix, 0) == 0 ? l.reason.substr(prefix.size()) : l.reason;
    out += printf_string("  %-*s  %s\n", static_cast<int>(width), "", reason.c_str());
  }

  if (!p.devices.empty()) {
    out += "\nLinks (copy bandwidth from the row's device to the column's; * measured, else the class's default)\n";
    std::vector<std::vector<std::string>> cells(p.devices.size());
    size_t cell_width = width;
    for (size_t a = 0; a < p.devices.size(); ++a) {
      for (size_t b = 0; b < p.devices.size(); ++b) {
        const topology::Link& link = *p.links[a][b];
        cells[a].push_back(printf_string("%s %.1f%s", short_class(link.link_class),
                                         static_cast<double>(link.bytes_per_second) / 1e9, link.measured ? "*" : ""));
        cell_width = std::max(cell_width, cells[a].back().size());
      }
    }
    out += printf_string("  %-*s", static_cast<int>(width), "");
    std::string header;
    for (const auto& d : p.devices)
      header += printf_string("  %-*s", static_cast<int>(cell_width), d.end->name.c_str());
    out += header.substr(0, header.find_last_not_of(' ') + 1) + "\n";
    for (size_t a = 0; a < p.devices.size(); ++a) {
      out += printf_string("  %-*s", static_cast<int>(width), p.devices[a].end->name.c_str());
      std::string row;
      for (const auto& cell : cells[a]) row += printf_string("  %-*s", static_cast<int>(cell_width), cell.c_str());
      out += row.substr(0, row.find_last_not_of(' ') + 1) + "\n";
    }
    out +=
        "  (GB/s; same-numa, same-package, cross-package: a direct copy between devices near one NUMA node,\n"
        "  one package, different packages; host-staged: through a host buffer; unknown: a locality is unknown)\n";

    out += "\nAutomatic placement order (work every device supports, inputs not yet placed)\n";
    for (size_t i = 0; i < p.ranking.size(); ++i) {
      const auto& r = p.ranking[i];
      out += printf_string("  %zu. %-*s  %s\n", i + 1, static_cast<int>(width), r.name.c_str(), r.reason.c_str());
      if (!r.decided_by.empty())
        out += printf_string("     %-*s  %s\n", static_cast<int>(width), "", r.decided_by.c_str());
    }
  }
  return out;
}

namespace {

// A minimal JSON emitter: values are written in order, commas handled by `first_`.
class Json {
 public:
  void open(const char* key, char bracket) {
    prefix(key);
    out_ += bracket;
    first_.push_back(true);
  }
  void close(char bracket) {
    out_ += bracket;
    first_.pop_back();
  }
  void string(const char* key, const std::string& text) {
    prefix(key);
    escaped(text);
  }
  void escaped(const std::string& text) {
    out_ += '"';
    for (unsigned char c : text) {
      if (c == '"' || c == '\\') {
        out_ += '\\';
        out_ += static_cast<char>(c);
      } else if (c < 0x20) {
        out_ += printf_string("\\u%04x", c);
      } else {
        out_ += static_cast<char>(c);
      }
    }
    out_ += '"';
  }
  void number(const char* key, int64_t value) {
    prefix(key);
    out_ += std::to_string(value);
  }
  void unsigned_number(const char* key, uint64_t value) {
    prefix(key);
    out_ += std::to_string(value);
  }
  void boolean(const char* key, bool value) {
    prefix(key);
    out_ += value ? "true" : "false";
  }
  void null(const char* key) {
    prefix(key);
    out_ += "null";
  }
  // -1 (and 0 for sizes) mean unknown in the ABI; JSON says null.
  void index_or_null(const char* key, int64_t value) { value < 0 ? null(key) : number(key, value); }
  void size_or_null(const char* key, uint64_t value) { value == 0 ? null(key) : unsigned_number(key, value); }
  std::string text() const { return out_ + "\n"; }

 private:
  void prefix(const char* key) {
    if (!first_.empty()) {
      if (!first_.back()) out_ += ',';
      first_.back() = false;
    }
    if (key) {
      escaped(key);
      out_ += ':';
    }
  }
  std::string out_;
  std::vector<bool> first_;
};

}  // namespace

std::string describe_topology_json(const ctl_runtime& runtime) {
  const Picture p = collect(runtime);
  const topology::TopologyModel& m = *p.model;
  Json j;
  j.open(nullptr, '{');
  j.string("source", m.source);
  m.loaded() ? j.null("error") : j.string("error", m.error);
  j.unsigned_number("cores", m.cores);
  j.unsigned_number("pus", m.pus);
  j.open("packages", '[');
  for (size_t i = 0; i < m.packages.size(); ++i) {
    const auto& package = m.packages[i];
    j.open(nullptr, '{');
    j.number("index", static_cast<int64_t>(i));
    j.string("name", package.name);
    j.unsigned_number("cores", package.cores);
    j.unsigned_number("pus", package.pus);
    j.string("cpuset", package.cpuset);
    j.close('}');
  }
  j.close(']');
  j.open("numa_nodes", '[');
  for (const auto& node : m.numa_nodes) {
    j.open(nullptr, '{');
    j.number("os_index", node.os_index);
    j.index_or_null("package", node.package);
    j.size_or_null("memory_bytes", node.memory);
    j.unsigned_number("cores", node.cores);
    j.unsigned_number("pus", node.pus);
    j.string("cpuset", node.cpuset);
    j.close('}');
  }
  j.close(']');
  j.open("caches", '[');
  for (const auto& cache : m.caches) {
    j.open(nullptr, '{');
    j.number("level", cache.depth);
    j.string("kind", cache.kind);
    j.unsigned_number("size_bytes", cache.size);
    j.unsigned_number("count", cache.count);
    j.close('}');
  }
  j.close(']');
  j.open("pci_devices", '[');
  for (const auto& pci : m.pci_devices) {
    j.open(nullptr, '{');
    j.string("bus_id", pci.bus_id);
    j.string("name", pci.name);
    j.unsigned_number("class_id", pci.class_id);
    j.unsigned_number("vendor_id", pci.vendor_id);
    j.unsigned_number("device_id", pci.device_id);
    j.index_or_null("numa_node", pci.numa_node);
    j.index_or_null("package", pci.package);
    j.close('}');
  }
  j.close(']');
  j.open("devices", '[');
  for (const auto& d : p.devices) {
    const auto& l = d.end->locality;
    j.open(nullptr, '{');
    j.number("index", d.end->index);
    j.string("name", d.end->name);
    j.string("model", d.model);
    j.string("plugin", d.end->plugin);
    j.string("kind", kind_name(d.kind));
    j.size_or_null("memory_total", d.memory_total);
    j.size_or_null("memory_free", d.memory_free);
    j.boolean("host_visible", d.end->host_visible);
    j.open("locality", '{');
    j.boolean("known", l.known);
    j.string("joined_by", topology::join_method_name(l.joined_by));
    j.boolean("from_override", l.from_override);
    j.index_or_null("package", l.package);
    j.index_or_null("numa_node", l.numa_node);
    j.string("pci_bus_id", l.pci_bus_id);
    j.unsigned_number("cores", l.cores);
    j.unsigned_number("pus", l.pus);
    j.string("cpuset", l.cpuset);
    j.string("reason", l.reason);
    j.close('}');
    j.close('}');
  }
  j.close(']');
  j.open("links", '[');
  for (size_t a = 0; a < p.devices.size(); ++a) {
    for (size_t b = 0; b < p.devices.size(); ++b) {
      const topology::Link& link = *p.links[a][b];
      j.open(nullptr, '{');
      j.string("from", p.devices[a].end->name);
      j.string("to", p.devices[b].end->name);
      j.string("class", topology::link_class_name(link.link_class));
      j.string("path", topology::copy_path_name(link.path));
      j.unsigned_number("bytes_per_second", link.bytes_per_second);
      j.boolean("measured", link.measured);
      j.string("description", link.description);
      j.close('}');
    }
  }
  j.close(']');
  j.open("placement_order", '[');
  for (const auto& r : p.ranking) {
    j.open(nullptr, '{');
    j.string("device", r.name);
    j.boolean("eligible", r.eligible);
    j.string("reason", r.reason);
    j.string("decided_by", r.decided_by);
    j.close('}');
  }
  j.close(']');
  j.close('}');
  return j.text();
}

}  // namespace catalyst
