// contract_device.cpp — the contract cases of device_properties: sane, well-formed values, and nothing written past the
// struct_size an older core passes.
#include "contract_support.h"

namespace catalyst::conformance::contract {
namespace {

// ---- device ------------------------------------------------------------------------------

void device_properties_case(CaseContext& ctx) {
  const ctl_plugin_device_properties p = full_properties(ctx);
  if (p.struct_size != CTL_PLUGIN_DEVICE_PROPERTIES_STRUCT_SIZE) {
    throw CaseFailure(format("device_properties changed struct_size from %zu to %zu; it is set by the caller",
                             static_cast<size_t>(CTL_PLUGIN_DEVICE_PROPERTIES_STRUCT_SIZE), p.struct_size));
  }
  if (!p.name) throw CaseFailure("device_properties left name NULL; a device needs a name");
  if (!*p.name) throw CaseFailure("device_properties reported an empty name; a device needs a name");
  const struct {
    const char* field;
    const char* value;
  } strings[] = {{"name", p.name}, {"vendor", p.vendor}, {"driver_version", p.driver_version}};
  for (const auto& s : strings) {
    if (!s.value) {
      throw CaseFailure(
          format("device_properties left %s NULL; it must point to a string (\"\" when unknown)", s.field));
    }
    const std::string problem = check_printable_utf8(s.value);
    if (!problem.empty()) {
      throw CaseFailure(format("device_properties: %s %s %s", s.field, quote(s.value).c_str(), problem.c_str()));
    }
  }
  const int64_t kind = raw_enum(p.kind);
  if (kind != CTL_DEVICE_KIND_CPU && kind != CTL_DEVICE_KIND_GPU && kind != CTL_DEVICE_KIND_ACCELERATOR) {
    throw CaseFailure(format("device_properties: kind is %lld, not a ctl_device_kind (CPU 0, GPU 1, ACCELERATOR 2)",
                             static_cast<long long>(kind)));
  }
  if (p.memory_total != 0 && p.memory_free != 0 && p.memory_free > p.memory_total) {
    throw CaseFailure(format("device_properties: memory_free %llu is larger than memory_total %llu",
                             static_cast<unsigned long long>(p.memory_free),
                             static_cast<unsigned long long>(p.memory_total)));
  }
  std::string missing;
  for (ctl_dtype dtype : {CTL_DTYPE_F32, CTL_DTYPE_I32, CTL_DTYPE_I64, CTL_DTYPE_BOOL}) {
    if (!(p.dtype_mask & CTL_DTYPE_BIT(dtype))) {
      missing += (missing.empty() ? "" : ", ") + std::string(ctl_dtype_name(dtype));
    }
  }
  if (!missing.empty()) {
    throw CaseFailure(
        format("device_properties: dtype_mask 0x%x lacks the required dtype(s) %s (f32, i32, i64 and "
               "bool are required)",
               p.dtype_mask, missing.c_str()));
  }
  const uint32_t unknown_bits = p.dtype_mask & ~((1u << CTL_DTYPE_COUNT_) - 1u);
  if (unknown_bits) {
    throw CaseFailure(
        format("device_properties: dtype_mask 0x%x has bits 0x%x at or past CTL_DTYPE_COUNT_ (%d), "
               "which name no dtype",
               p.dtype_mask, unknown_bits, static_cast<int>(CTL_DTYPE_COUNT_)));
  }
  if (p.pci_bus_id) {
    // "dddd:bb:dd.f", lower-case hex digits.
    const char* id = p.pci_bus_id;
    const char* shape = "xxxx:xx:xx.x";
    bool good = strnlen(id, 16) == 12;
    for (size_t i = 0; good && i < 12; ++i) {
      const char c = id[i];
      good = shape[i] == 'x' ? ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) : c == shape[i];
    }
    if (!good) {
      throw CaseFailure(
          format("device_properties: pci_bus_id %s is not \"dddd:bb:dd.f\" in lower-case hex (or NULL "
                 "when the device has none)",
                 quote(id).c_str()));
    }
  }
  if (p.numa_node < -1) {
    throw CaseFailure(format("device_properties: numa_node is %d; it must be a node number or -1 (unknown)",
                             static_cast<int>(p.numa_node)));
  }
  static const char* const kKinds[] = {"CPU", "GPU", "accelerator"};
  ctx.note = format("%s by %s, %s, dtype_mask 0x%x%s", quote(p.name).c_str(), quote(p.vendor).c_str(), kKinds[kind],
                    p.dtype_mask, p.host_visible ? ", host-visible" : "");
}

// Which field of ctl_plugin_device_properties holds byte `offset`.
const char* properties_field_at(size_t offset) {
  struct Field {
    size_t offset;
    const char* name;
  };
  static const Field kFields[] = {
      {offsetof(ctl_plugin_device_properties, struct_size), "struct_size"},
      {offsetof(ctl_plugin_device_properties, next), "next"},
      {offsetof(ctl_plugin_device_properties, name), "name"},
      {offsetof(ctl_plugin_device_properties, vendor), "vendor"},
      {offsetof(ctl_plugin_device_properties, driver_version), "driver_version"},
      {offsetof(ctl_plugin_device_properties, kind), "kind"},
      {offsetof(ctl_plugin_device_properties, memory_total), "memory_total"},
      {offsetof(ctl_plugin_device_properties, memory_free), "memory_free"},
      {offsetof(ctl_plugin_device_properties, compute_units), "compute_units"},
      {offsetof(ctl_plugin_device_properties, pci_bus_id), "pci_bus_id"},
      {offsetof(ctl_plugin_device_properties, numa_node), "numa_node"},
      {offsetof(ctl_plugin_device_properties, uuid), "uuid"},
      {offsetof(ctl_plugin_device_properties, has_uuid), "has_uuid"},
      {offsetof(ctl_plugin_device_properties, dtype_mask), "dtype_mask"},
      {offsetof(ctl_plugin_device_properties, host_visible), "host_visible"},
  };
  if (offset >= CTL_PLUGIN_DEVICE_PROPERTIES_STRUCT_SIZE) return "(past the end of the struct)";
  const char* name = "struct_size";
  for (const Field& field : kFields) {
    if (field.offset <= offset) name = field.name;
  }
  return name;
}

void device_older_struct_case(CaseContext& ctx) {
  constexpr unsigned char kFill = 0xCD;
  constexpr size_t kSlack = 64;
  const size_t sizes[] = {offsetof(ctl_plugin_device_properties, kind),
                          offsetof(ctl_plugin_device_properties, pci_bus_id),
                          offsetof(ctl_plugin_device_properties, host_visible)};
  for (const size_t size : sizes) {
    alignas(ctl_plugin_device_properties) unsigned char raw[sizeof(ctl_plugin_device_properties) + kSlack];
    std::memset(raw, kFill, sizeof raw);
    const void* const no_next = nullptr;
    std::memcpy(raw + offsetof(ctl_plugin_device_properties, struct_size), &size, sizeof size);
    std::memcpy(raw + offsetof(ctl_plugin_device_properties, next), &no_next, sizeof no_next);
    auto* properties = reinterpret_cast<ctl_plugin_device_properties*>(raw);
    require_ok(ctx.plugin->api.device_properties(ctx.device->handle, properties),
               format("device_properties with struct_size %zu (an older core's struct, ending before %s)", size,
                      properties_field_at(size)));
    for (size_t i = size; i < sizeof raw; ++i) {
      if (raw[i] != kFill) {
        size_t changed = 0;
        for (size_t k = size; k < sizeof raw; ++k) changed += raw[k] != kFill;
        throw CaseFailure(
            format("device_properties with struct_size %zu wrote past it: byte %zu (field %s) is 0x%02x, "
                   "was 0x%02x (%zu bytes past struct_size changed); a plugin must write only fields "
                   "that fit in struct_size",
                   size, i, properties_field_at(i), raw[i], kFill, changed));
      }
    }
    size_t size_after;
    const void* next_after;
    std::memcpy(&size_after, raw + offsetof(ctl_plugin_device_properties, struct_size), sizeof size_after);
    std::memcpy(&next_after, raw + offsetof(ctl_plugin_device_properties, next), sizeof next_after);
    if (size_after != size) {
      throw CaseFailure(
          format("device_properties changed struct_size from %zu to %zu; it is set by the caller", size, size_after));
    }
    if (next_after != nullptr) {
      throw CaseFailure(
          format("device_properties with struct_size %zu changed next from NULL to %p; next is the "
                 "caller's extension chain",
                 size, next_after));
    }
    const char* name;
    std::memcpy(&name, raw + offsetof(ctl_plugin_device_properties, name), sizeof name);
    uintptr_t untouched;
    std::memset(&untouched, kFill, sizeof untouched);
    if (reinterpret_cast<uintptr_t>(name) == untouched) {
      throw CaseFailure(format("device_properties with struct_size %zu did not write name, which fits in it", size));
    }
    if (!name || !*name) {
      throw CaseFailure(
          format("device_properties with struct_size %zu reported a %s name", size, name ? "empty" : "NULL"));
    }
  }
}

}  // namespace

void add_device_cases(std::vector<Case>& out) {
  add_case(out, "device", "properties", "-",
           "device_properties with a full struct: strings, kind, memory, required dtypes, PCI id, NUMA node",
           device_properties_case);
  add_case(out, "device", "older_struct", "-",
           "device_properties with an older core's smaller struct writes nothing past struct_size",
           device_older_struct_case);
}

}  // namespace catalyst::conformance::contract
