// placement_api.cpp — the C functions of catalyst.h's "Placement" section: the policy, the
// recorded move, the placement report and device usage.
#include <algorithm>
#include <cstring>

#include "c_guard.h"
#include "enum_value.h"
#include "placement/placed_dispatch.h"
#include "placement/transfer.h"
#include "runtime.h"
#include "status.h"
#include "tensor.h"

using namespace catalyst;

extern "C" {

CTL_EXPORT ctl_status* ctl_runtime_set_placement_policy(ctl_runtime* runtime, const ctl_placement_policy* policy) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_runtime(runtime, "runtime"));
    ctl_placement_policy p{};
    if (policy) {
      CTL_CHECK_ARG(policy->struct_size >= CTL_PLACEMENT_POLICY_STRUCT_SIZE,
                    "policy->struct_size is %zu; expected %zu (CTL_PLACEMENT_POLICY_STRUCT_SIZE)", policy->struct_size,
                    static_cast<size_t>(CTL_PLACEMENT_POLICY_STRUCT_SIZE));
      std::memcpy(&p, policy, std::min(policy->struct_size, sizeof p));
      const int mode = enum_value(p.mode);  // any int may arrive from C (enum_value.h)
      CTL_CHECK_ARG(mode == CTL_PLACEMENT_EXPLICIT || mode == CTL_PLACEMENT_AUTOMATIC,
                    "policy->mode is %d, not a ctl_placement_mode", mode);
      CTL_CHECK_ARG(p.devices || p.device_count == 0, "policy->devices is NULL but device_count is %zu",
                    p.device_count);
    }
    std::vector<ctl_device*> devices;
    for (size_t i = 0; i < p.device_count; ++i) {
      ctl_device* device = p.devices[i];
      if (ctl_status* status = check_device(device, "policy->devices[i]")) {
        return annotate(status, "policy->devices[" + std::to_string(i) + "]");
      }
      CTL_CHECK_ARG(device->runtime == runtime, "policy->devices[%zu] (%s) belongs to another runtime", i,
                    device->label.c_str());
      CTL_CHECK_ARG(std::find(devices.begin(), devices.end(), device) == devices.end(),
                    "policy->devices[%zu] (%s) is listed twice", i, device->label.c_str());
      devices.push_back(device);
    }
    PlacementState& state = *runtime->placement;
    std::lock_guard lock(state.mutex);
    state.mode = p.mode;
    state.devices = std::move(devices);
    state.cross_device_inputs.store(p.allow_cross_device_inputs);
    state.fallback.store(p.allow_fallback);
    return nullptr;
  });
}

CTL_EXPORT ctl_status* ctl_tensor_transfer(ctl_tensor* tensor, ctl_device* device, ctl_tensor** out_tensor) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_tensor(tensor, "tensor"));
    CTL_RETURN_IF_ERROR(check_device(device, "device"));
    CTL_CHECK_ARG(out_tensor, "argument 'out_tensor' is NULL");
    CTL_CHECK_ARG(device->runtime == tensor->device()->runtime,
                  "argument 'device' (%s) belongs to another runtime than the tensor (on %s)", device->label.c_str(),
                  tensor->device()->label.c_str());
    return transfer_recorded(tensor, device, CTL_OP_COPY, out_tensor);
  });
}

CTL_EXPORT ctl_status* ctl_runtime_placement_report(ctl_runtime* runtime, ctl_placement_record* records,
                                                    size_t capacity, size_t* out_count, bool reset) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_runtime(runtime, "runtime"));
    CTL_CHECK_ARG(records || capacity == 0, "argument 'records' is NULL but capacity is %zu", capacity);
    CTL_CHECK_ARG(out_count, "argument 'out_count' is NULL");
    for (size_t i = 0; i < capacity; ++i) {
      CTL_CHECK_ARG(records[i].struct_size >= offsetof(ctl_placement_record, bytes),
                    "records[%zu].struct_size is %zu; set it to CTL_PLACEMENT_RECORD_STRUCT_SIZE", i,
                    records[i].struct_size);
    }
    PlacementState& state = *runtime->placement;
    std::lock_guard lock(state.mutex);
    size_t i = 0;
    for (const auto& [key, value] : state.records) {
      if (i < capacity) {
        ctl_placement_record r{};
        r.struct_size = records[i].struct_size;
        r.kind = static_cast<ctl_placement_event_kind>(std::get<0>(key));
        r.op = static_cast<ctl_op_id>(std::get<1>(key));
        r.from = const_cast<ctl_device*>(std::get<2>(key));
        r.to = const_cast<ctl_device*>(std::get<3>(key));
        r.count = value.count;
        r.bytes = value.bytes;
        r.nanoseconds = value.nanoseconds;
        std::memcpy(&records[i], &r, std::min(r.struct_size, sizeof r));
      }
      ++i;
    }
    *out_count = state.records.size();
    if (reset) state.records.clear();
    return nullptr;
  });
}

CTL_EXPORT ctl_status* ctl_device_get_usage(const ctl_device* device, ctl_device_usage* out_usage) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_device(device, "device"));
    CTL_CHECK_ARG(out_usage, "argument 'out_usage' is NULL");
    CTL_CHECK_ARG(out_usage->struct_size >= offsetof(ctl_device_usage, busy_ns),
                  "out_usage->struct_size is %zu; set it to CTL_DEVICE_USAGE_STRUCT_SIZE", out_usage->struct_size);
    const DeviceUsage& u = device->usage;
    ctl_device_usage usage{};
    usage.struct_size = out_usage->struct_size;
    usage.busy_ns = u.busy_ns.load(std::memory_order_relaxed);
    usage.ops = u.ops.load(std::memory_order_relaxed);
    usage.memory_in_use = u.memory_in_use.load(std::memory_order_relaxed);
    usage.memory_peak = u.memory_peak.load(std::memory_order_relaxed);
    usage.bytes_in = u.bytes_in.load(std::memory_order_relaxed);
    usage.bytes_out = u.bytes_out.load(std::memory_order_relaxed);
    std::memcpy(out_usage, &usage, std::min(usage.struct_size, sizeof usage));
    return nullptr;
  });
}

}  // extern "C"
