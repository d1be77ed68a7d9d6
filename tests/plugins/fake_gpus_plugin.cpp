// fake_gpus_plugin.cpp — a test plugin ("fakegpu") whose devices say whatever a test needs
// them to say about where they are: PCI bus id, NUMA node, kind, memory, host visibility,
// and whether the plugin copies between its devices (buffer_copy_peer). Topology tests join
// these devices to synthetic and XML topologies of machines this box is not.
//
//   CATALYST_FAKE_GPUS="pci=0000:17:00.0,numa=0,memory=85899345920,free=80000000000;pci=0000:65:00.0"
//     one device per ';'-separated entry; keys: pci (bus id as reported), numa (-1 unknown),
//     kind (gpu, cpu, accelerator; default gpu), memory and free (bytes; default 16 GiB and
//     unknown), host_visible (0 or 1; default 0). Unset or empty: no devices.
//   CATALYST_FAKE_GPUS_PEER=1   provide buffer_copy_peer.
//
// Buffers are host memory underneath (so copies, and the core's measurement of them, work);
// every op is UNSUPPORTED. A malformed entry fails instance_create with the entry named.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "catalyst_plugin.h"

namespace {

struct FakeDevice {
  const ctl_host_api* host = nullptr;
  std::string name, pci;
  int numa = -1;
  ctl_device_kind kind = CTL_DEVICE_KIND_GPU;
  uint64_t memory = 16ull << 30;
  uint64_t free = 0;
  bool host_visible = false;
};

struct FakeInstance {
  const ctl_host_api* host = nullptr;
  std::vector<std::unique_ptr<FakeDevice>> devices;
};

struct FakeBuffer {
  void* data = nullptr;
  uint64_t size = 0;
};

struct FakeStream {
  FakeDevice* device = nullptr;
};

ctl_status* fail(const ctl_host_api* host, ctl_status_code code, const std::string& message) {
  return host->status_create(host->context, code, ("fakegpu: " + message).c_str());
}

bool parse_entry(const std::string& entry, FakeDevice* device, std::string* error) {
  size_t pos = 0;
  while (pos < entry.size()) {
    const size_t comma = entry.find(',', pos);
    const std::string field = entry.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? entry.size() : comma + 1;
    const size_t equals = field.find('=');
    if (equals == std::string::npos) {
      *error = "field \"" + field + "\" is not key=value";
      return false;
    }
    const std::string key = field.substr(0, equals), value = field.substr(equals + 1);
    char* end = nullptr;
    if (key == "pci") {
      device->pci = value;
    } else if (key == "numa") {
      device->numa = static_cast<int>(std::strtol(value.c_str(), &end, 10));
    } else if (key == "memory") {
      device->memory = std::strtoull(value.c_str(), &end, 10);
    } else if (key == "free") {
      device->free = std::strtoull(value.c_str(), &end, 10);
    } else if (key == "host_visible") {
      device->host_visible = value == "1";
    } else if (key == "kind") {
      if (value == "gpu") {
        device->kind = CTL_DEVICE_KIND_GPU;
      } else if (value == "cpu") {
        device->kind = CTL_DEVICE_KIND_CPU;
      } else if (value == "accelerator") {
        device->kind = CTL_DEVICE_KIND_ACCELERATOR;
      } else {
        *error = "kind \"" + value + "\" is not gpu, cpu or accelerator";
        return false;
      }
    } else {
      *error = "unknown key \"" + key + "\"";
      return false;
    }
    if (end && *end) {
      *error = "\"" + value + "\" is not a number in \"" + field + "\"";
      return false;
    }
  }
  return true;
}

ctl_status* instance_create(const ctl_host_api* host, ctl_plugin_instance** out) {
  auto instance = std::make_unique<FakeInstance>();
  instance->host = host;
  const char* spec = std::getenv("CATALYST_FAKE_GPUS");
  std::string text = spec ? spec : "";
  size_t pos = 0;
  while (!text.empty() && pos <= text.size()) {
    const size_t semicolon = text.find(';', pos);
    const std::string entry = text.substr(pos, semicolon == std::string::npos ? std::string::npos : semicolon - pos);
    pos = semicolon == std::string::npos ? text.size() + 1 : semicolon + 1;
    auto device = std::make_unique<FakeDevice>();
    device->host = host;
    device->name = "Fake GPU " + std::to_string(instance->devices.size());
    std::string error;
    if (!parse_entry(entry, device.get(), &error)) {
      return fail(host, CTL_STATUS_INVALID_ARGUMENT, "CATALYST_FAKE_GPUS entry \"" + entry + "\": " + error);
    }
    instance->devices.push_back(std::move(device));
  }
  *out = reinterpret_cast<ctl_plugin_instance*>(instance.release());
  return nullptr;
}

void instance_destroy(ctl_plugin_instance* instance) {
  delete reinterpret_cast<FakeInstance*>(instance);
}

ctl_status* device_count(ctl_plugin_instance* instance, uint32_t* out) {
  *out = static_cast<uint32_t>(reinterpret_cast<FakeInstance*>(instance)->devices.size());
  return nullptr;
}

ctl_status* device_get(ctl_plugin_instance* instance, uint32_t index, ctl_plugin_device** out) {
  auto* fake = reinterpret_cast<FakeInstance*>(instance);
  if (index >= fake->devices.size()) return fail(fake->host, CTL_STATUS_OUT_OF_RANGE, "no such device");
  *out = reinterpret_cast<ctl_plugin_device*>(fake->devices[index].get());
  return nullptr;
}

ctl_status* device_properties(ctl_plugin_device* handle, ctl_plugin_device_properties* out) {
  const auto* device = reinterpret_cast<FakeDevice*>(handle);
  ctl_plugin_device_properties full;
  std::memset(&full, 0, sizeof full);
  full.name = device->name.c_str();
  full.vendor = "Catalyst tests";
  full.driver_version = "0";
  full.kind = device->kind;
  full.memory_total = device->memory;
  full.memory_free = device->free;
  full.compute_units = 1;
  full.pci_bus_id = device->pci.empty() ? nullptr : device->pci.c_str();
  full.numa_node = device->numa;
  full.dtype_mask = CTL_DTYPE_BIT(CTL_DTYPE_F32) | CTL_DTYPE_BIT(CTL_DTYPE_I32) | CTL_DTYPE_BIT(CTL_DTYPE_I64) |
                    CTL_DTYPE_BIT(CTL_DTYPE_BOOL);
  full.host_visible = device->host_visible;
  const size_t size = out->struct_size < sizeof full ? out->struct_size : sizeof full;
  full.struct_size = out->struct_size;
  std::memcpy(out, &full, size);
  return nullptr;
}

ctl_status* buffer_allocate(ctl_plugin_device* handle, uint64_t size, ctl_plugin_buffer** out) {
  const auto* device = reinterpret_cast<FakeDevice*>(handle);
  auto* buffer = new FakeBuffer;
  buffer->size = size;
  buffer->data = device->host->alloc(device->host->context, size ? size : 1, 64);
  if (!buffer->data) {
    delete buffer;
    return fail(device->host, CTL_STATUS_OUT_OF_MEMORY, "out of memory");
  }
  *out = reinterpret_cast<ctl_plugin_buffer*>(buffer);
  return nullptr;
}

void buffer_free(ctl_plugin_device* handle, ctl_plugin_buffer* raw) {
  const auto* device = reinterpret_cast<FakeDevice*>(handle);
  auto* buffer = reinterpret_cast<FakeBuffer*>(raw);
  device->host->free(device->host->context, buffer->data);
  delete buffer;
}

ctl_status* buffer_write(ctl_plugin_stream*, ctl_plugin_buffer* raw, uint64_t offset, const void* source,
                         uint64_t size) {
  std::memcpy(static_cast<char*>(reinterpret_cast<FakeBuffer*>(raw)->data) + offset, source, size);
  return nullptr;
}

ctl_status* buffer_read(ctl_plugin_stream*, ctl_plugin_buffer* raw, uint64_t offset, void* destination, uint64_t size) {
  std::memcpy(destination, static_cast<const char*>(reinterpret_cast<FakeBuffer*>(raw)->data) + offset, size);
  return nullptr;
}

ctl_status* buffer_host_pointer(ctl_plugin_device*, ctl_plugin_buffer* raw, void** out) {
  *out = reinterpret_cast<FakeBuffer*>(raw)->data;
  return nullptr;
}

ctl_status* buffer_copy_peer(ctl_plugin_stream*, ctl_plugin_device*, ctl_plugin_buffer* source, uint64_t source_offset,
                             ctl_plugin_buffer* destination, uint64_t destination_offset, uint64_t size) {
  std::memcpy(static_cast<char*>(reinterpret_cast<FakeBuffer*>(destination)->data) + destination_offset,
              static_cast<const char*>(reinterpret_cast<FakeBuffer*>(source)->data) + source_offset, size);
  return nullptr;
}

ctl_status* stream_create(ctl_plugin_device* handle, ctl_plugin_stream** out) {
  auto* stream = new FakeStream;
  stream->device = reinterpret_cast<FakeDevice*>(handle);
  *out = reinterpret_cast<ctl_plugin_stream*>(stream);
  return nullptr;
}

void stream_destroy(ctl_plugin_stream* stream) {
  delete reinterpret_cast<FakeStream*>(stream);
}

ctl_status* stream_synchronize(ctl_plugin_stream*) {
  return nullptr;
}

ctl_status* op_execute(ctl_plugin_stream* raw, const ctl_op_call*) {
  const FakeDevice* device = reinterpret_cast<FakeStream*>(raw)->device;
  return fail(device->host, CTL_STATUS_UNSUPPORTED, "a fake GPU runs no ops");
}

ctl_plugin_api g_table;

}  // namespace

extern "C" CTL_EXPORT const ctl_plugin_api* ctl_plugin_query(uint32_t core_abi_major, uint32_t core_abi_minor,
                                                             const ctl_host_api* host) {
  if (core_abi_major != CTL_ABI_VERSION_MAJOR || core_abi_minor < 4) {
    host->log(host->context, CTL_LOG_WARNING, "fakegpu: needs a core of ABI 1.4 or later");
    return nullptr;
  }
  std::memset(&g_table, 0, sizeof g_table);
  g_table.struct_size = CTL_PLUGIN_API_STRUCT_SIZE;
  g_table.abi_major = CTL_ABI_VERSION_MAJOR;
  g_table.abi_minor = 4;
  g_table.name = "fakegpu";
  g_table.version = "0.0.1-test";
  g_table.instance_create = instance_create;
  g_table.instance_destroy = instance_destroy;
  g_table.device_count = device_count;
  g_table.device_get = device_get;
  g_table.device_properties = device_properties;
  g_table.buffer_allocate = buffer_allocate;
  g_table.buffer_free = buffer_free;
  g_table.buffer_write = buffer_write;
  g_table.buffer_read = buffer_read;
  g_table.stream_create = stream_create;
  g_table.stream_destroy = stream_destroy;
  g_table.stream_synchronize = stream_synchronize;
  g_table.op_execute = op_execute;
  g_table.buffer_host_pointer = buffer_host_pointer;
  const char* peer = std::getenv("CATALYST_FAKE_GPUS_PEER");
  if (peer && std::strcmp(peer, "1") == 0) g_table.buffer_copy_peer = buffer_copy_peer;
  return &g_table;
}
