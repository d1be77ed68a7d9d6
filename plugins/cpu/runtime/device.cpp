// device.cpp — the instance (host table) and its devices: this machine's CPUs, as one
// device or divided by device_plan.h, each with its own thread pool and buffer cache;
// described from /proc/cpuinfo, /proc/meminfo, sysconf, the affinity mask and hwloc.
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <new>

#include "catalyst/sdk/status.hpp"
#include "device_plan.h"
#include "isa.h"
#include "plugin.h"

namespace catalyst::cpu {
namespace {

bool host_is_complete(const ctl_host_api* host) {
  return host && host->struct_size >= CTL_HOST_API_STRUCT_SIZE && host->alloc && host->free && host->status_create;
}

// Copies the value of the first "key<spaces>: value" line of /proc/cpuinfo into out.
bool cpuinfo_value(const char* key, char* out, size_t out_size) {
  FILE* file = std::fopen("/proc/cpuinfo", "r");
  if (!file) return false;
  char line[512];
  bool found = false;
  const size_t key_length = std::strlen(key);
  while (!found && std::fgets(line, sizeof line, file)) {
    if (std::strncmp(line, key, key_length) != 0) continue;
    const char* p = line + key_length;
    while (*p == ' ' || *p == '\t') ++p;
    if (*p != ':') continue;
    ++p;
    while (*p == ' ' || *p == '\t') ++p;
    size_t n = std::strcspn(p, "\n");
    while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t')) --n;
    if (n == 0) continue;
    if (n >= out_size) n = out_size - 1;
    std::memcpy(out, p, n);
    out[n] = '\0';
    found = true;
  }
  std::fclose(file);
  return found;
}

// A /proc/meminfo field in bytes, 0 when absent.
uint64_t meminfo_bytes(const char* key) {
  FILE* file = std::fopen("/proc/meminfo", "r");
  if (!file) return 0;
  char line[256];
  uint64_t result = 0;
  const size_t key_length = std::strlen(key);
  while (std::fgets(line, sizeof line, file)) {
    unsigned long long kib = 0;
    if (std::strncmp(line, key, key_length) == 0 && line[key_length] == ':' &&
        std::sscanf(line + key_length + 1, "%llu", &kib) == 1) {
      result = static_cast<uint64_t>(kib) * 1024u;
      break;
    }
  }
  std::fclose(file);
  return result;
}

// Says which kernels run and why, and warns when CATALYST_CPU_ISA could not be honoured.
void log_isa_choice(const ctl_host_api* host) {
  const IsaInfo& info = isa_info();
  if (info.request && !info.request_valid) {
    sdk::log(host, CTL_LOG_WARNING, "%sCATALYST_CPU_ISA=\"%s\" is not baseline, avx2 or avx512; ignored", kLogPrefix,
             info.request);
  } else if (info.request && std::strcmp(info.request, isa_name(info.isa)) != 0) {
    sdk::log(host, CTL_LOG_WARNING, "%sCATALYST_CPU_ISA=%s asks for more than this CPU and OS allow; using %s",
             kLogPrefix, info.request, isa_name(info.isa));
  }
  sdk::log(host, CTL_LOG_INFO, "%s%s kernels (detected %s%s%s%s)", kLogPrefix, isa_name(info.isa),
           isa_name(info.detected), info.avx512_bf16 ? ", bf16 dot product" : "",
           info.avx512_fp16 ? ", fp16 arithmetic" : "",
           info.amx_bf16         ? ", AMX tiles"
           : info.amx_turned_off ? ", AMX tiles (off: CATALYST_CPU_AMX=0)"
                                 : "");
}

// The plugin version and the kernels in use, as `catalyst devices` shows it.
const char* driver_version() {
  switch (active_isa()) {
    case Isa::kAvx512:
      return "catalyst-cpu 1.1.0 (avx512 kernels)";
    case Isa::kAvx2:
      return "catalyst-cpu 1.1.0 (avx2 kernels)";
    default:
      return "catalyst-cpu 1.1.0 (baseline kernels)";
  }
}

uint64_t memory_total() {
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_size > 0) return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
  return meminfo_bytes("MemTotal");
}

uint64_t memory_free() {
  // MemAvailable counts reclaimable cache, which is what "free for tensors" means.
  if (const uint64_t available = meminfo_bytes("MemAvailable")) return available;
  const long pages = sysconf(_SC_AVPHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_size > 0) return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
  return 0;
}

uint32_t usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) {
    return static_cast<uint32_t>(CPU_COUNT(&set));
  }
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<uint32_t>(online) : 1u;
}

// Free bytes of NUMA node `node` ("Node 1 MemFree: ... kB"), 0 when unreadable. The node
// file has no MemAvailable, so reclaimable cache does not count.
uint64_t node_memory_free(int32_t node) {
  char path[64];
  std::snprintf(path, sizeof path, "/sys/devices/system/node/node%d/meminfo", node);
  FILE* file = std::fopen(path, "r");
  if (!file) return 0;
  char line[256];
  uint64_t result = 0;
  while (std::fgets(line, sizeof line, file)) {
    unsigned long long kib = 0;
    const char* field = std::strstr(line, "MemFree:");
    if (field && std::sscanf(field + 8, "%llu", &kib) == 1) {
      result = static_cast<uint64_t>(kib) * 1024u;
      break;
    }
  }
  std::fclose(file);
  return result;
}

// Binds a device's freshly mapped buffer blocks to its node (BufferCache's MapHook).
void bind_block(void* context, void* block, size_t bytes) {
  const auto* device = static_cast<const ctl_plugin_device*>(context);
  bind_memory(device->instance->topology, block, bytes, device->numa_node);
}

// A ThreadPool in host memory. Its constructor may throw (no thread could be started):
// the memory is then given back and the exception goes on to instance_create's handler.
ThreadPool* new_pool(const ctl_host_api* host, unsigned threads, const PoolPlacement& placement) {
  void* memory = host->alloc(host->context, sizeof(ThreadPool), alignof(ThreadPool) < 16 ? 16 : alignof(ThreadPool));
  if (!memory) return nullptr;
  try {
    return new (memory) ThreadPool(threads, placement);
  } catch (...) {
    host->free(host->context, memory);
    throw;
  }
}

// Everything an instance owns; safe on a partly built one.
void free_instance(ctl_plugin_instance* instance) {
  if (!instance) return;
  const ctl_host_api* host = instance->host;
  for (ctl_plugin_device* device : instance->devices) {
    host_delete(host, device->pool);
    host_delete(host, device->buffer_cache);  // every buffer is freed by now: unmaps what it kept
    host_delete(host, device);
  }
  destroy_topology(instance->topology);
  host_delete(host, instance);
}

// Builds device `index` of `plan`; false when the host is out of memory.
bool add_device(ctl_plugin_instance* instance, const DevicePlan& plan, size_t index, const char* model,
                const char* vendor) {
  const ctl_host_api* host = instance->host;
  const DeviceSpan& span = plan.devices[index];
  ctl_plugin_device* device = host_new<ctl_plugin_device>(host);
  if (!device) return false;
  instance->devices.push_back(device);  // owned from here on, whatever fails below
  device->instance = instance;
  device->index = static_cast<uint32_t>(index);
  std::snprintf(device->vendor, sizeof device->vendor, "%s", vendor);
  device->numa_node = span.numa_node;
  device->whole_machine = plan.whole_machine;
  device->node_memory = span.node_memory;
  device->node_free_known = plan.bind && span.node_memory > 0;
  unsigned threads = 0;
  PoolPlacement placement;
  placement.device = device->index;
  if (plan.whole_machine) {
    // Exactly the device the plugin always had.
    std::snprintf(device->name, sizeof device->name, "%s", model);
    device->compute_units = usable_cpus();
    threads = default_thread_count();
  } else {
    const std::string cpus = cpu_list(span.cpus);
    if (span.numa_node >= 0) {
      std::snprintf(device->name, sizeof device->name, "%s (CPUs %s, NUMA node %d)", model, cpus.c_str(),
                    span.numa_node);
    } else {
      std::snprintf(device->name, sizeof device->name, "%s (CPUs %s)", model, cpus.c_str());
    }
    device->compute_units = static_cast<uint32_t>(span.cpus.size());
    const unsigned setting = thread_count_setting();
    threads = setting ? setting : device->compute_units;
    // A topology that is not this machine's (HWLOC_SYNTHETIC) names CPUs that may not
    // exist: such a device's workers are left where the scheduler puts them.
    if (plan.bind) placement.cpus = span.cpus;
    placement.bind = plan.bind;
  }
  device->pool = new_pool(host, threads, placement);
  if (!device->pool) return false;
  MapHook hook;
  if (plan.bind && span.node_memory > 0 && span.numa_node >= 0) hook = {bind_block, device};
  const size_t limit = BufferCache::default_limit() / plan.devices.size();
  device->buffer_cache = host_new<BufferCache>(host, limit, hook);
  if (!device->buffer_cache) return false;
  if (host->log) {
    sdk::log(host, CTL_LOG_DEBUG, "%scpu:%u \"%s\" with %u threads%s", kLogPrefix, device->index, device->name, threads,
             placement.bind ? ", workers bound to its CPUs" : "");
  }
  return true;
}

}  // namespace

ctl_status* instance_create(const ctl_host_api* host, ctl_plugin_instance** out_instance) {
  // Without a complete host table there is no way to make a status: report nothing and
  // leave no instance behind (the core always passes its table).
  if (!host_is_complete(host)) {
    if (out_instance) *out_instance = nullptr;
    return nullptr;
  }
  if (!out_instance) {
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%sinstance_create: out_instance is NULL", kLogPrefix);
  }
  ctl_plugin_instance* instance = nullptr;
  try {
    instance = host_new<ctl_plugin_instance>(host);
    if (!instance) {
      return sdk::make_status(host, CTL_STATUS_OUT_OF_MEMORY, "%sinstance_create: out of host memory", kLogPrefix);
    }
    instance->host = host;
    instance->topology = nullptr;
    DevicePlan plan = plan_devices(host);
    instance->topology = plan.topology;
    char model[192];
    if (!cpuinfo_value("model name", model, sizeof model)) std::snprintf(model, sizeof model, "CPU");
    char vendor[64];
    if (!cpuinfo_value("vendor_id", vendor, sizeof vendor)) std::snprintf(vendor, sizeof vendor, "unknown");
    instance->devices.reserve(plan.devices.size());
    for (size_t i = 0; i < plan.devices.size(); ++i) {
      if (!add_device(instance, plan, i, model, vendor)) {
        free_instance(instance);
        return sdk::make_status(host, CTL_STATUS_OUT_OF_MEMORY, "%sinstance_create: out of host memory", kLogPrefix);
      }
    }
    if (host->log) log_isa_choice(host);
  } catch (const std::bad_alloc&) {
    free_instance(instance);
    return sdk::make_status(host, CTL_STATUS_OUT_OF_MEMORY, "%sinstance_create: out of memory", kLogPrefix);
  } catch (const std::exception& e) {
    free_instance(instance);
    return sdk::make_status(host, CTL_STATUS_INTERNAL, "%sinstance_create: %s", kLogPrefix, e.what());
  } catch (...) {
    free_instance(instance);
    return sdk::make_status(host, CTL_STATUS_INTERNAL, "%sinstance_create: unknown exception", kLogPrefix);
  }
  register_host(host);
  *out_instance = instance;
  return nullptr;
}

void instance_destroy(ctl_plugin_instance* instance) {
  if (!instance) return;
  unregister_host(instance->host);
  free_instance(instance);
}

ctl_status* device_count(ctl_plugin_instance* instance, uint32_t* out_count) {
  if (!instance) return null_handle("device_count", "instance");
  if (!out_count) {
    return sdk::make_status(instance->host, CTL_STATUS_INVALID_ARGUMENT, "%sdevice_count: out_count is NULL",
                            kLogPrefix);
  }
  *out_count = static_cast<uint32_t>(instance->devices.size());
  return nullptr;
}

ctl_status* device_get(ctl_plugin_instance* instance, uint32_t index, ctl_plugin_device** out_device) {
  if (!instance) return null_handle("device_get", "instance");
  if (!out_device) {
    return sdk::make_status(instance->host, CTL_STATUS_INVALID_ARGUMENT, "%sdevice_get: out_device is NULL",
                            kLogPrefix);
  }
  if (index >= instance->devices.size()) {
    return sdk::make_status(instance->host, CTL_STATUS_NOT_FOUND,
                            "%sdevice_get: index %u out of range (the cpu plugin has %zu device%s; "
                            "CATALYST_CPU_DEVICES sets how many)",
                            kLogPrefix, index, instance->devices.size(), instance->devices.size() == 1 ? "" : "s");
  }
  *out_device = instance->devices[index];
  return nullptr;
}

ctl_status* device_properties(ctl_plugin_device* device, ctl_plugin_device_properties* out_properties) {
  if (!device) return null_handle("device_properties", "device");
  const ctl_host_api* host = device->instance->host;
  if (!out_properties) {
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%sdevice_properties: out_properties is NULL",
                            kLogPrefix);
  }
  if (out_properties->struct_size < sizeof(size_t)) {
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%sdevice_properties: struct_size %zu is too small",
                            kLogPrefix, out_properties->struct_size);
  }
  ctl_plugin_device_properties full{};
  full.struct_size = out_properties->struct_size;
  full.next = nullptr;
  full.name = device->name;
  full.vendor = device->vendor;
  full.driver_version = driver_version();
  full.kind = CTL_DEVICE_KIND_CPU;
  // A device of one node of several reports that node's memory; the others (the whole
  // machine, a split of a one-node machine) the machine's, which they share.
  if (device->node_memory > 0) {
    full.memory_total = device->node_memory;
    full.memory_free = device->node_free_known ? node_memory_free(device->numa_node) : 0;
  } else {
    full.memory_total = memory_total();
    full.memory_free = memory_free();
  }
  full.compute_units = device->compute_units;
  full.pci_bus_id = nullptr;
  full.numa_node = device->numa_node;
  full.has_uuid = false;
  full.dtype_mask = (1u << CTL_DTYPE_COUNT_) - 1u;  // every dtype of ABI 1.0
  full.host_visible = true;
  // An older core passes a smaller struct: write only what it has room for, and keep
  // its own struct_size (and next) as they were.
  const size_t size = out_properties->struct_size < sizeof full ? out_properties->struct_size : sizeof full;
  const void* next = out_properties->next;
  const size_t caller_size = out_properties->struct_size;
  std::memcpy(out_properties, &full, size);
  out_properties->struct_size = caller_size;
  if (size >= offsetof(ctl_plugin_device_properties, next) + sizeof(void*)) out_properties->next = next;
  return nullptr;
}

}  // namespace catalyst::cpu
