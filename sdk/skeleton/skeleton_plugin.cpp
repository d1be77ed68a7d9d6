// skeleton_plugin.cpp — the plugin to copy when starting a new backend.
//
// It is complete and loads: one device whose "device memory" is host memory, working
// buffers, streams and events, and every op reported as unsupported. To start a backend:
// copy this folder, rename "skeleton" (the file, the CMake target and kPluginName), then
// replace the memory functions with your device's and make op_supports/op_execute do real
// work, one op family at a time. Run `catalyst devices --plugin path/to/your.so` to see
// it load. Everything a plugin allocates goes through host->alloc so leaks are counted.
//
// Ops: the SDK reads every call for you (sdk/op_call.hpp: OpContext below derives from its
// reader, so ctx.input(), ctx.output(), ctx.attrs() and the checks are there), one binder per
// family turns a call into a problem (sdk/bind_*.hpp), and the op table routes each op to its
// family's function (sdk/op_families.hpp). To add a family, write its function and name it in
// kOps, e.g. for the unary ops:
//
//   ctl_status* run_unary(const OpContext& ctx) {
//     View x, y;
//     CTL_SDK_RETURN_IF_ERROR(ctx.one_to_one(&x, &y));  // checked, with the suite's messages
//     ...  // your kernel over x and y (sdk/merged_axes.hpp gives the loop over their strides)
//   }
//   constexpr auto kOps = catalyst::sdk::op_table(catalyst::sdk::OpFamilies<Run>{.unary = run_unary});
//
// A family left out answers UNSUPPORTED, and the suite judges only what the plugin claims.
#include <cstring>
#include <new>

#include "catalyst/sdk/host_memory.hpp"
#include "catalyst/sdk/op_call.hpp"
#include "catalyst/sdk/op_families.hpp"
#include "catalyst/sdk/status.hpp"
#include "catalyst_plugin.h"

namespace {

constexpr const char* kPluginName = "skeleton";

struct Instance;
struct Device {
  Instance* instance;
};
struct Instance {
  const ctl_host_api* host;
  Device device;
};
struct Buffer {
  void* data;
  uint64_t size;
  bool owned;  // false for memory wrapped with buffer_wrap_host
};
struct Stream {
  Device* device;
};
struct Event {
  Device* device;
};

using catalyst::sdk::host_delete;
using catalyst::sdk::host_new;

const ctl_host_api* host_of(Device* device) {
  return device->instance->host;
}

ctl_status* out_of_memory(const ctl_host_api* host, const char* what) {
  return catalyst::sdk::make_status(host, CTL_STATUS_OUT_OF_MEMORY, "%s: out of host memory for %s", kPluginName, what);
}

ctl_status* instance_create(const ctl_host_api* host, ctl_plugin_instance** out_instance) {
  auto* instance = host_new<Instance>(host, host, Device{nullptr});
  if (!instance) return out_of_memory(host, "the instance");
  instance->device.instance = instance;
  *out_instance = reinterpret_cast<ctl_plugin_instance*>(instance);
  return nullptr;
}

void instance_destroy(ctl_plugin_instance* handle) {
  auto* instance = reinterpret_cast<Instance*>(handle);
  host_delete(instance->host, instance);
}

ctl_status* device_count(ctl_plugin_instance*, uint32_t* out_count) {
  *out_count = 1;
  return nullptr;
}

ctl_status* device_get(ctl_plugin_instance* handle, uint32_t index, ctl_plugin_device** out_device) {
  auto* instance = reinterpret_cast<Instance*>(handle);
  if (index != 0) {
    return catalyst::sdk::make_status(instance->host, CTL_STATUS_NOT_FOUND, "%s: no device %u", kPluginName, index);
  }
  *out_device = reinterpret_cast<ctl_plugin_device*>(&instance->device);
  return nullptr;
}

ctl_status* device_properties(ctl_plugin_device*, ctl_plugin_device_properties* out) {
  ctl_plugin_device_properties properties{};
  properties.name = "Skeleton device";
  properties.vendor = "Your company";
  properties.driver_version = "0.1";
  properties.kind = CTL_DEVICE_KIND_ACCELERATOR;
  properties.compute_units = 1;
  properties.numa_node = -1;
  properties.dtype_mask = CTL_DTYPE_BIT(CTL_DTYPE_F32) | CTL_DTYPE_BIT(CTL_DTYPE_I32) | CTL_DTYPE_BIT(CTL_DTYPE_I64) |
                          CTL_DTYPE_BIT(CTL_DTYPE_BOOL);
  properties.host_visible = false;
  // Write only what the core's struct has room for; keep its struct_size and next.
  const size_t size = out->struct_size < sizeof properties ? out->struct_size : sizeof properties;
  properties.struct_size = out->struct_size;
  properties.next = out->next;
  std::memcpy(out, &properties, size);
  return nullptr;
}

ctl_status* buffer_allocate(ctl_plugin_device* handle, uint64_t size, ctl_plugin_buffer** out_buffer) {
  const ctl_host_api* host = host_of(reinterpret_cast<Device*>(handle));
  void* data = host->alloc(host->context, size ? size : 1, 64);
  if (!data) return out_of_memory(host, "a buffer");
  auto* buffer = host_new<Buffer>(host, data, size, true);
  if (!buffer) {
    host->free(host->context, data);
    return out_of_memory(host, "a buffer");
  }
  *out_buffer = reinterpret_cast<ctl_plugin_buffer*>(buffer);
  return nullptr;
}

void buffer_free(ctl_plugin_device* handle, ctl_plugin_buffer* buffer_handle) {
  const ctl_host_api* host = host_of(reinterpret_cast<Device*>(handle));
  auto* buffer = reinterpret_cast<Buffer*>(buffer_handle);
  if (!buffer) return;
  if (buffer->owned) host->free(host->context, buffer->data);
  host_delete(host, buffer);
}

char* bytes(ctl_plugin_buffer* buffer, uint64_t offset) {
  return static_cast<char*>(reinterpret_cast<Buffer*>(buffer)->data) + offset;
}

// A real device would enqueue these on the stream; host memory can copy at once.
ctl_status* buffer_write(ctl_plugin_stream*, ctl_plugin_buffer* buffer, uint64_t offset, const void* source,
                         uint64_t size) {
  if (size == 0) return nullptr;  // source may be NULL then, and memcpy must not see NULL
  std::memcpy(bytes(buffer, offset), source, size);
  return nullptr;
}

ctl_status* buffer_read(ctl_plugin_stream*, ctl_plugin_buffer* buffer, uint64_t offset, void* destination,
                        uint64_t size) {
  if (size == 0) return nullptr;
  std::memcpy(destination, bytes(buffer, offset), size);
  return nullptr;
}

ctl_status* stream_create(ctl_plugin_device* handle, ctl_plugin_stream** out_stream) {
  auto* device = reinterpret_cast<Device*>(handle);
  auto* stream = host_new<Stream>(host_of(device), device);
  if (!stream) return out_of_memory(host_of(device), "a stream");
  *out_stream = reinterpret_cast<ctl_plugin_stream*>(stream);
  return nullptr;
}

void stream_destroy(ctl_plugin_stream* handle) {
  auto* stream = reinterpret_cast<Stream*>(handle);
  host_delete(host_of(stream->device), stream);
}

ctl_status* stream_synchronize(ctl_plugin_stream*) {
  return nullptr;
}

// A checked view of a buffer: `data` points at element [0, ...].
struct View : catalyst::sdk::ViewShape {
  char* data = nullptr;
};

// The per-call context: the SDK's call reader over this plugin's buffers.
struct OpContext : catalyst::sdk::OpCall<OpContext, View> {
  OpContext(const ctl_host_api* host, Stream* stream, const ctl_op_call* call, const char* name)
      : OpCall(host, call, name, "skeleton plugin: "), stream(stream) {}
  Stream* stream;

  uint64_t buffer_size(const ctl_plugin_buffer* buffer) const { return reinterpret_cast<const Buffer*>(buffer)->size; }
  // Turns a checked view into this plugin's: a pointer at its first element.
  ctl_status* bind_buffer(const ctl_tensor_view& v, const catalyst::sdk::ViewFacts& facts,
                          const catalyst::sdk::ViewSlot&, View* out) const {
    out->data = static_cast<char*>(reinterpret_cast<const Buffer*>(v.buffer)->data) + (facts.numel ? v.byte_offset : 0);
    return nullptr;
  }
};

using Run = ctl_status* (*)(const OpContext&);
using OpEntry = catalyst::sdk::OpEntryOf<Run>;
// No family yet: every op answers UNSUPPORTED. Name your families here as you write them.
constexpr auto kOps = catalyst::sdk::op_table(catalyst::sdk::OpFamilies<Run>{});

// The call's entry in kOps, after the checks every op gets; a status otherwise.
ctl_status* find_entry(const ctl_host_api* host, const ctl_op_call* call, const OpEntry** out) {
  if (!call) return catalyst::sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%s: call is NULL", kPluginName);
  const catalyst::sdk::Check check = catalyst::sdk::find_op(kOps, call, kPluginName, out);
  if (check.ok()) return nullptr;
  return catalyst::sdk::make_status(host, check.code, "%s plugin: %s", kPluginName, check.message);
}

ctl_status* op_supports(ctl_plugin_device* handle, const ctl_op_call* call) {
  const OpEntry* entry = nullptr;
  return find_entry(host_of(reinterpret_cast<Device*>(handle)), call, &entry);
}

ctl_status* op_execute(ctl_plugin_stream* handle, const ctl_op_call* call) {
  auto* stream = reinterpret_cast<Stream*>(handle);
  const ctl_host_api* host = host_of(stream->device);
  const OpEntry* entry = nullptr;
  CTL_SDK_RETURN_IF_ERROR(find_entry(host, call, &entry));
  const OpContext ctx(host, stream, call, entry->name);
  return catalyst::sdk::run_guarded(ctx, "out of host memory", [&] { return entry->run(ctx); });
}

const ctl_plugin_api kApi = {
    .struct_size = CTL_PLUGIN_API_STRUCT_SIZE,
    .abi_major = CTL_ABI_VERSION_MAJOR,
    .abi_minor = CTL_ABI_VERSION_MINOR,
    .name = kPluginName,
    .version = "0.1.0",
    .instance_create = instance_create,
    .instance_destroy = instance_destroy,
    .device_count = device_count,
    .device_get = device_get,
    .device_properties = device_properties,
    .buffer_allocate = buffer_allocate,
    .buffer_free = buffer_free,
    .buffer_write = buffer_write,
    .buffer_read = buffer_read,
    .stream_create = stream_create,
    .stream_destroy = stream_destroy,
    .stream_synchronize = stream_synchronize,
    .op_execute = op_execute,
    // Optional entries: NULL means the core's default (see catalyst_plugin.h). Fill them
    // in as the device grows: buffer_copy and buffer_fill avoid trips through the host,
    // events let streams wait for each other without a full synchronize.
    .op_supports = op_supports,
    .buffer_copy = nullptr,
    .buffer_fill = nullptr,
    .buffer_host_pointer = nullptr,
    .buffer_wrap_host = nullptr,
    .event_create = nullptr,
    .event_destroy = nullptr,
    .event_record = nullptr,
    .stream_wait_event = nullptr,
    .event_synchronize = nullptr,
    .buffer_copy_peer = nullptr,  // since 1.4: copies between two devices of this plugin
};

}  // namespace

extern "C" CTL_EXPORT const ctl_plugin_api* ctl_plugin_query(uint32_t core_abi_major, uint32_t core_abi_minor,
                                                             const ctl_host_api* host) {
  (void)core_abi_minor;  // every 1.x core reads a 1.0 table
  if (core_abi_major != CTL_ABI_VERSION_MAJOR) {
    if (host) {
      catalyst::sdk::log(host, CTL_LOG_ERROR, "%s: incompatible ABI major: core %u, plugin %d", kPluginName,
                         core_abi_major, CTL_ABI_VERSION_MAJOR);
    }
    return nullptr;
  }
  return &kApi;
}
