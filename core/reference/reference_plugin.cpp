// reference_plugin.cpp — the reference device's plugin table and query function: the
// instance, its one device, synchronous streams and events, and the op entry points
// (buffers are in buffers.cpp, op dispatch in op_dispatch.cpp). Every object is allocated
// through the host table so the core's leak counting sees it.
#include "reference_plugin.h"

#include <algorithm>
#include <cstring>

#include "plugin_objects.h"
#include "reference_kernels.h"

namespace catalyst::reference {
namespace {

// ---- instance and device -------------------------------------------------------------

ctl_status* instance_create(const ctl_host_api* host, ctl_plugin_instance** out_instance) {
  if (!host) return nullptr;  // cannot even make a status; the core never does this
  if (!out_instance) return null_argument(host, "out_instance");
  Instance* instance = host_new(host, Instance{host, Device{nullptr}});
  if (!instance) return out_of_memory(host, "the instance");
  instance->device.instance = instance;
  *out_instance = reinterpret_cast<ctl_plugin_instance*>(instance);
  return nullptr;
}

void instance_destroy(ctl_plugin_instance* instance) {
  if (!instance) return;
  const ctl_host_api* host = reinterpret_cast<Instance*>(instance)->host;
  host->free(host->context, instance);
}

ctl_status* device_count(ctl_plugin_instance* instance, uint32_t* out_count) {
  if (!instance || !out_count) return nullptr;
  *out_count = 1;
  return nullptr;
}

ctl_status* device_get(ctl_plugin_instance* instance, uint32_t index, ctl_plugin_device** out_device) {
  Instance* self = reinterpret_cast<Instance*>(instance);
  if (!self) return nullptr;
  if (!out_device) return null_argument(self->host, "out_device");
  if (index != 0)
    return sdk::make_status(self->host, CTL_STATUS_NOT_FOUND, "reference: device index %u out of range (1 device)",
                            index);
  *out_device = reinterpret_cast<ctl_plugin_device*>(&self->device);
  return nullptr;
}

ctl_status* device_properties(ctl_plugin_device* device, ctl_plugin_device_properties* out_properties) {
  if (!device) return nullptr;
  if (!out_properties) return null_argument(host_of(device), "out_properties");
  ctl_plugin_device_properties p{};
  p.struct_size = out_properties->struct_size;
  p.next = out_properties->next;
  p.name = "Catalyst reference kernels";
  p.vendor = "Catalyst";
  p.driver_version = "1.0";
  p.kind = CTL_DEVICE_KIND_CPU;
  p.memory_total = 0;  // host memory, not ours to report
  p.memory_free = 0;
  p.compute_units = 1;
  p.pci_bus_id = nullptr;
  p.numa_node = -1;
  p.has_uuid = false;
  p.dtype_mask = (1u << CTL_DTYPE_COUNT_) - 1u;  // all nine dtypes
  p.host_visible = true;
  // An older core passes a smaller struct: write only what fits, keep its struct_size.
  std::memcpy(out_properties, &p, std::min(out_properties->struct_size, sizeof p));
  return nullptr;
}

// ---- streams and events: synchronous, so ordering holds trivially ----------------------

ctl_status* stream_create(ctl_plugin_device* device, ctl_plugin_stream** out_stream) {
  if (!device) return nullptr;
  const ctl_host_api* host = host_of(device);
  if (!out_stream) return null_argument(host, "out_stream");
  Stream* stream = host_new(host, Stream{reinterpret_cast<Device*>(device)});
  if (!stream) return out_of_memory(host, "a stream");
  *out_stream = reinterpret_cast<ctl_plugin_stream*>(stream);
  return nullptr;
}

void stream_destroy(ctl_plugin_stream* stream) {
  if (!stream) return;
  const ctl_host_api* host = host_of(stream);
  host->free(host->context, stream);
}

ctl_status* stream_synchronize(ctl_plugin_stream*) {
  return nullptr;
}

ctl_status* event_create(ctl_plugin_device* device, ctl_plugin_event** out_event) {
  if (!device) return nullptr;
  const ctl_host_api* host = host_of(device);
  if (!out_event) return null_argument(host, "out_event");
  Event* event = host_new(host, Event{reinterpret_cast<Device*>(device)});
  if (!event) return out_of_memory(host, "an event");
  *out_event = reinterpret_cast<ctl_plugin_event*>(event);
  return nullptr;
}

void event_destroy(ctl_plugin_event* event) {
  if (!event) return;
  const ctl_host_api* host = reinterpret_cast<Event*>(event)->device->instance->host;
  host->free(host->context, event);
}

ctl_status* event_record(ctl_plugin_event*, ctl_plugin_stream*) {
  return nullptr;
}
ctl_status* stream_wait_event(ctl_plugin_stream*, ctl_plugin_event*) {
  return nullptr;
}
ctl_status* event_synchronize(ctl_plugin_event*) {
  return nullptr;
}

// ---- ops -------------------------------------------------------------------------------

ctl_status* plugin_op_supports(ctl_plugin_device* device, const ctl_op_call* call) {
  if (!device) return nullptr;
  return op_supports(host_of(device), call);
}

ctl_status* plugin_op_execute(ctl_plugin_stream* stream, const ctl_op_call* call) {
  if (!stream) return nullptr;
  return op_execute(host_of(stream), call, resolve_buffer);
}

// The newest ABI minor the kernels implement: 1.1 added the training ops (training.cpp),
// 1.2 sgd_step, 1.5 fused_elementwise (fused_elementwise.cpp).
constexpr uint32_t kAbiMinor = 5;

// Filled by member name, not position, so that the table stays right whatever order the
// header gives its entries.
ctl_plugin_api make_table(uint32_t abi_minor) {
  ctl_plugin_api t{};
  t.struct_size = CTL_PLUGIN_API_STRUCT_SIZE;
  t.abi_major = 1;
  t.abi_minor = abi_minor;
  t.name = "reference";
  t.version = "1.0";
  t.instance_create = instance_create;
  t.instance_destroy = instance_destroy;
  t.device_count = device_count;
  t.device_get = device_get;
  t.device_properties = device_properties;
  t.buffer_allocate = buffer_allocate;
  t.buffer_free = buffer_free;
  t.buffer_write = buffer_write;
  t.buffer_read = buffer_read;
  t.stream_create = stream_create;
  t.stream_destroy = stream_destroy;
  t.stream_synchronize = stream_synchronize;
  t.op_execute = plugin_op_execute;
  t.op_supports = plugin_op_supports;
  t.buffer_copy = buffer_copy;
  t.buffer_fill = buffer_fill;
  t.buffer_host_pointer = buffer_host_pointer;
  t.buffer_wrap_host = buffer_wrap_host;
  t.event_create = event_create;
  t.event_destroy = event_destroy;
  t.event_record = event_record;
  t.stream_wait_event = stream_wait_event;
  t.event_synchronize = event_synchronize;
  return t;
}

// Function-local statics: built on first use, whatever the order of static initialisers.
// An older core gets a table that says its own version (newer minors only appended op ids
// and properties, which it never sends or reads).
const ctl_plugin_api& table(uint32_t core_abi_minor) {
  static const ctl_plugin_api v1_0 = make_table(0);
  static const ctl_plugin_api v1_1 = make_table(1);
  static const ctl_plugin_api v1_2 = make_table(2);
  static const ctl_plugin_api newest = make_table(kAbiMinor);
  if (core_abi_minor >= kAbiMinor) return newest;
  return core_abi_minor >= 2 ? v1_2 : core_abi_minor == 1 ? v1_1 : v1_0;
}

}  // namespace

const ctl_plugin_api* reference_plugin_query(uint32_t core_abi_major, uint32_t core_abi_minor,
                                             const ctl_host_api* host) {
  const ctl_plugin_api& t = table(core_abi_minor);  // ABI 1.min(5, core's minor)
  if (core_abi_major != t.abi_major) {
    if (host && host->log)
      sdk::log(host, CTL_LOG_ERROR, "reference: built for ABI %u.x, the core is %u.%u", t.abi_major, core_abi_major,
               core_abi_minor);
    return nullptr;
  }
  return &t;
}

}  // namespace catalyst::reference
