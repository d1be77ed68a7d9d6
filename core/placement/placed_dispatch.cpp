// placed_dispatch.cpp — cross-device inputs and fallback under the runtime's placement
// policy (catalyst.h, "Placement"). Moves that autograd must see are recorded as moves, so
// gradients travel back along them: an op that fell back to another device has its
// backward pass run there too.
#include "placement/placed_dispatch.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "autograd.h"
#include "dispatch.h"
#include "placement/host_share.h"
#include "placement/lazy_move.h"
#include "placement/transfer.h"
#include "runtime.h"
#include "status.h"
#include "tensor.h"
#include "topology/device_ranking.h"
#include "topology/ranking_candidates.h"

namespace catalyst {
namespace {

// Placement does not nest: an op it runs on another device that fails there is an error,
// not a new placement (which could bounce between two devices forever).
thread_local bool t_placing = false;

struct Placing {
  Placing() { t_placing = true; }
  ~Placing() { t_placing = false; }
};

struct Releaser {
  void operator()(ctl_tensor* t) const { ctl_tensor_release(t); }
};
using Owned = std::unique_ptr<ctl_tensor, Releaser>;

// The runtime of the first valid tensor among `tensors`, or NULL.
ctl_runtime* runtime_of(size_t count, ctl_tensor* const* tensors) {
  if (!tensors) return nullptr;
  for (size_t i = 0; i < count; ++i) {
    if (tensors[i] && tensors[i]->magic == kTensorMagic) return tensors[i]->device()->runtime;
  }
  return nullptr;
}

// True when every tensor given is a live tensor (NULL entries are absent optional ones):
// placement never touches a call with a released or foreign handle, whose error stands.
bool all_live(size_t count, ctl_tensor* const* tensors) {
  for (size_t i = 0; tensors && i < count; ++i) {
    if (tensors[i] && tensors[i]->magic != kTensorMagic) return false;
  }
  return true;
}

// True when the inputs (and outputs), all live, live on more than one device.
bool spans_devices(size_t input_count, ctl_tensor* const* inputs, size_t output_count, ctl_tensor* const* outputs) {
  if (!all_live(input_count, inputs) || !all_live(output_count, outputs)) return false;
  const ctl_device* first = nullptr;
  auto differs = [&](ctl_tensor* t) {
    if (!t) return false;
    if (!first) first = t->device();
    return t->device() != first;
  };
  for (size_t i = 0; inputs && i < input_count; ++i) {
    if (differs(inputs[i])) return true;
  }
  for (size_t i = 0; outputs && i < output_count; ++i) {
    if (differs(outputs[i])) return true;
  }
  return false;
}

// The policy's devices (every device of the runtime when it names none), in its order.
std::vector<ctl_device*> policy_devices(ctl_runtime* runtime, ctl_placement_mode* out_mode) {
  PlacementState& state = *runtime->placement;
  std::lock_guard lock(state.mutex);
  *out_mode = state.mode;
  if (!state.devices.empty()) return state.devices;
  std::vector<ctl_device*> all;
  for (const auto& device : runtime->devices) all.push_back(device.get());
  return all;
}

ctl_placement_mode policy_mode(ctl_runtime* runtime) {
  PlacementState& state = *runtime->placement;
  std::lock_guard lock(state.mutex);
  return state.mode;
}

uint64_t link_bandwidth(ctl_runtime* runtime, const ctl_device* from, const ctl_device* to) {
  if (from == to) return UINT64_MAX;
  ctl_device_link link{};
  link.struct_size = CTL_DEVICE_LINK_STRUCT_SIZE;
  if (ctl_status* status = ctl_runtime_device_link(runtime, from, to, &link)) {
    ctl_status_free(status);
    return 0;
  }
  return link.bytes_per_second;
}

// Where a call whose tensors span devices runs. Explicit: the first output's device for an
// into-call, else the first input's. Automatic: the device among those holding tensors to
// which moving the others costs least (bytes over the link's bandwidth).
ctl_device* cross_device_target(ctl_runtime* runtime, size_t input_count, ctl_tensor* const* inputs,
                                size_t output_count, ctl_tensor* const* outputs) {
  const ctl_placement_mode mode = policy_mode(runtime);
  std::vector<ctl_tensor*> tensors;
  for (size_t i = 0; outputs && i < output_count; ++i) {
    if (outputs[i]) tensors.push_back(outputs[i]);
  }
  for (size_t i = 0; i < input_count; ++i) {
    if (inputs[i]) tensors.push_back(inputs[i]);
  }
  if (mode == CTL_PLACEMENT_EXPLICIT || (outputs && output_count > 0)) return tensors.front()->device();
  ctl_device* best = nullptr;
  double best_cost = 0;
  for (ctl_tensor* candidate : tensors) {
    ctl_device* target = candidate->device();
    double cost = 0;
    for (ctl_tensor* t : tensors) {
      if (t->device() == target) continue;
      const double bytes = double(t->layout.numel()) * double(ctl_dtype_size(t->layout.dtype));
      cost += bytes / double(std::max<uint64_t>(1, link_bandwidth(runtime, t->device(), target)));
    }
    if (!best || cost < best_cost) {
      best = target;
      best_cost = cost;
    }
  }
  return best;
}

// How inputs_on brings a tensor to the device an op runs on.
struct Moving {
  bool recorded = false;  // autograd sees the move, so gradients come back
  bool fallback = false;  // for a fallback: host memory is shared, pending bytes read in place
  bool read_only = true;  // the op only reads it (an into-call's outputs are written too)
};

// Records `moved` as a move of `t` made for a fallback, when `how` is recorded.
ctl_status* record_fallback_move(ctl_tensor* t, ctl_tensor* moved, const Moving& how) {
  if (!how.recorded) return nullptr;
  try {
    record_view(ViewKind::kMove, t, moved, {kFallbackInputMove});
  } catch (const std::bad_alloc&) {
    return make_status(CTL_STATUS_OUT_OF_MEMORY, "out of memory recording a move for autograd");
  }
  return nullptr;
}

// `inputs`, each brought to `target` where it is elsewhere: for a fallback, shared where both
// devices address host memory (placement/host_share.h), or read where an earlier fallback
// left its bytes (placement/lazy_move.h, only what the op reads: an output's bytes must be
// the caller's); otherwise moved. *shared says which were shared.
ctl_status* inputs_on(ctl_device* target, ctl_op_id op, size_t count, ctl_tensor* const* inputs, const Moving& how,
                      std::vector<Owned>* keep, std::vector<ctl_tensor*>* out, std::vector<bool>* shared = nullptr) {
  out->assign(count, nullptr);
  if (shared) shared->assign(count, false);
  for (size_t i = 0; i < count; ++i) {
    ctl_tensor* t = inputs[i];
    if (!t || t->device() == target) {
      (*out)[i] = t;
      continue;
    }
    ctl_tensor* moved = nullptr;
    if (how.fallback && can_share_host_memory(t->device(), target)) {
      CTL_RETURN_IF_ERROR(share_host_memory(t, target, &moved));
      if (shared) (*shared)[i] = true;
    } else if (how.fallback && how.read_only) {
      moved = pending_view_on(t, target);
    }
    if (moved) {
      keep->emplace_back(moved);
      CTL_RETURN_IF_ERROR(record_fallback_move(t, moved, how));
    } else {
      CTL_RETURN_IF_ERROR(how.recorded ? transfer_recorded(t, target, op, &moved) : move_tensor(t, target, op, &moved));
      keep->emplace_back(moved);
    }
    (*out)[i] = moved;
  }
  return nullptr;
}

// Other policy devices to try for an op `asked` cannot run: policy order, or, automatic,
// the topology's ranking from `asked` (link, kind, free memory, locality:
// topology/device_ranking.h), which `catalyst topology` prints with its reasons.
std::vector<ctl_device*> fallback_candidates(ctl_device* asked, uint64_t bytes_needed) {
  ctl_runtime* runtime = asked->runtime;
  ctl_placement_mode mode;
  std::vector<ctl_device*> devices = policy_devices(runtime, &mode);
  std::erase(devices, asked);
  if (mode != CTL_PLACEMENT_AUTOMATIC) return devices;
  topology::RankingRequest request;
  request.candidates = ranking_candidates(*runtime, asked);
  request.bytes_needed = bytes_needed;
  request.anchor = asked->label;
  for (auto& candidate : request.candidates) {
    ctl_device* device = runtime->devices[candidate.index].get();
    if (std::find(devices.begin(), devices.end(), device) == devices.end()) {
      candidate.supported = false;
      candidate.unsupported = device == asked ? "the device that cannot run the op" : "not in the placement policy";
    }
  }
  std::vector<ctl_device*> ranked;
  for (const auto& r : topology::rank_devices(request)) {
    if (r.eligible) ranked.push_back(runtime->devices[r.index].get());
  }
  return ranked;
}

// Bytes of the tensors a fallback moves (a lower bound of what the other device needs).
uint64_t bytes_of(size_t count, ctl_tensor* const* tensors) {
  uint64_t total = 0;
  for (size_t i = 0; tensors && i < count; ++i) {
    if (tensors[i]) total += uint64_t(tensors[i]->layout.numel()) * ctl_dtype_size(tensors[i]->layout.dtype);
  }
  return total;
}

// The device the failing call was meant for: the outputs' for an into-call, else the inputs'.
ctl_device* asked_device(size_t input_count, ctl_tensor* const* inputs, size_t output_count,
                         ctl_tensor* const* outputs) {
  for (size_t i = 0; outputs && i < output_count; ++i) {
    if (outputs[i] && outputs[i]->magic == kTensorMagic) return outputs[i]->device();
  }
  for (size_t i = 0; inputs && i < input_count; ++i) {
    if (inputs[i] && inputs[i]->magic == kTensorMagic) return inputs[i]->device();
  }
  return nullptr;
}

const char* const kFallbackHint =
    " (to run it on another device, allow fallback in the runtime's placement policy: "
    "ctl_runtime_set_placement_policy with allow_fallback, or `catalyst train-gpt --allow-fallback`)";

// Runs an allocating call on `target`: inputs moved there (recorded), the op run and
// recorded there. For a fallback (`home` not NULL) the results go back to `home`
// (recorded): shared where both address host memory, else lazily, their bytes staying on
// `target` until `home` needs them.
ctl_status* run_allocating_on(ctl_device* target, ctl_device* home, ctl_op_id op, size_t input_count,
                              ctl_tensor* const* inputs, const void* attrs, size_t output_count,
                              ctl_tensor** out_tensors) {
  std::vector<Owned> keep;
  std::vector<ctl_tensor*> placed;
  Moving how;
  how.recorded = true;
  how.fallback = home != nullptr;
  CTL_RETURN_IF_ERROR(inputs_on(target, op, input_count, inputs, how, &keep, &placed));
  std::vector<ctl_tensor*> results(output_count, nullptr);
  CTL_RETURN_IF_ERROR(run_op(op, input_count, placed.data(), attrs, output_count, results.data()));
  std::vector<Owned> owned;
  for (ctl_tensor* t : results) owned.emplace_back(t);
  if (home && home != target) {
    for (size_t i = 0; i < output_count; ++i) {
      if (!owned[i]) continue;
      ctl_tensor* back = nullptr;
      CTL_RETURN_IF_ERROR(can_share_host_memory(target, home) ? share_host_memory(owned[i].get(), home, &back)
                                                              : move_lazily(owned[i].get(), home, op, &back));
      Owned owned_back(back);
      try {
        record_view(ViewKind::kMove, owned[i].get(), back, {kFallbackResultMove});
      } catch (const std::bad_alloc&) {
        return make_status(CTL_STATUS_OUT_OF_MEMORY, "out of memory recording a move for autograd");
      }
      owned[i] = std::move(owned_back);
    }
  }
  for (size_t i = 0; i < output_count; ++i) out_tensors[i] = owned[i].release();
  return nullptr;
}

// Runs an into-call on `target` with its inputs and outputs there — shared where both
// devices address host memory, so the op writes the caller's outputs in place; otherwise
// copies, and the results copied back into the caller's outputs (in-place ops read their
// outputs, so those travel both ways).
ctl_status* run_into_on(ctl_device* target, ctl_op_id op, size_t input_count, ctl_tensor* const* inputs,
                        const void* attrs, size_t output_count, ctl_tensor* const* outputs) {
  std::vector<Owned> keep;
  std::vector<ctl_tensor*> placed_inputs, placed_outputs;
  std::vector<bool> shared;
  Moving how;
  how.fallback = true;
  CTL_RETURN_IF_ERROR(inputs_on(target, op, input_count, inputs, how, &keep, &placed_inputs));
  how.read_only = false;
  CTL_RETURN_IF_ERROR(inputs_on(target, op, output_count, outputs, how, &keep, &placed_outputs, &shared));
  CTL_RETURN_IF_ERROR(run_op_into(op, input_count, placed_inputs.data(), attrs, output_count, placed_outputs.data()));
  if (std::find(shared.begin(), shared.end(), true) != shared.end()) {
    CTL_RETURN_IF_ERROR(synchronize(target));  // the caller's device reads what it wrote
  }
  for (size_t i = 0; i < output_count; ++i) {
    if (!outputs[i] || placed_outputs[i] == outputs[i] || shared[i]) continue;
    ctl_tensor* back = nullptr;
    CTL_RETURN_IF_ERROR(move_tensor(placed_outputs[i], outputs[i]->device(), op, &back));
    Owned owned_back(back);
    ctl_tensor* source = back;
    CTL_RETURN_IF_ERROR(run_op_into(CTL_OP_COPY, 1, &source, nullptr, 1, &outputs[i]));
  }
  return nullptr;
}

// Tries each fallback candidate in turn; the first that runs the op wins.
template <typename RunOn>
bool fall_back(ctl_device* asked, uint64_t bytes_needed, ctl_op_id op, ctl_status** failure, RunOn run_on) {
  for (ctl_device* candidate : fallback_candidates(asked, bytes_needed)) {
    const auto began = std::chrono::steady_clock::now();
    ctl_status* status = run_on(candidate);
    if (!status) {
      count_fallback(op, asked, candidate, began);
      ctl_status_free(*failure);
      *failure = nullptr;
      return true;
    }
    const bool unsupported = ctl_status_get_code(status) == CTL_STATUS_UNSUPPORTED;
    if (!unsupported) {  // a real error on the device that could run it: that is the answer
      ctl_status_free(*failure);
      *failure = status;
      return true;
    }
    ctl_status_free(status);
  }
  *failure = append_to_message(*failure, "; no other device of the placement policy runs it either");
  return true;
}

}  // namespace

ctl_status* transfer_recorded(ctl_tensor* source, ctl_device* target, ctl_op_id op, ctl_tensor** out_tensor) {
  ctl_tensor* moved = nullptr;
  CTL_RETURN_IF_ERROR(move_tensor(source, target, op, &moved));
  try {
    record_view(ViewKind::kMove, source, moved);
  } catch (const std::bad_alloc&) {
    ctl_tensor_release(moved);
    return make_status(CTL_STATUS_OUT_OF_MEMORY, "out of memory recording a move for autograd");
  }
  *out_tensor = moved;
  return nullptr;
}

bool run_op_placed(ctl_op_id op, size_t input_count, ctl_tensor* const* inputs, const void* attrs, size_t output_count,
                   ctl_tensor** out_tensors, ctl_status** failure) {
  ctl_runtime* runtime = runtime_of(input_count, inputs);
  if (!runtime || !out_tensors || t_placing) return false;
  Placing placing;
  PlacementState& state = *runtime->placement;
  const ctl_status_code code = ctl_status_get_code(*failure);
  if (code == CTL_STATUS_INVALID_ARGUMENT && spans_devices(input_count, inputs, 0, nullptr)) {
    if (!state.cross_device_inputs.load(std::memory_order_relaxed)) return false;
    ctl_device* target = cross_device_target(runtime, input_count, inputs, 0, nullptr);
    ctl_status_free(*failure);
    *failure = run_allocating_on(target, nullptr, op, input_count, inputs, attrs, output_count, out_tensors);
    return true;
  }
  if (code != CTL_STATUS_UNSUPPORTED || !all_live(input_count, inputs)) return false;
  if (!state.fallback.load(std::memory_order_relaxed)) {
    *failure = append_to_message(*failure, kFallbackHint);
    return false;
  }
  ctl_device* asked = asked_device(input_count, inputs, 0, nullptr);
  return fall_back(asked, bytes_of(input_count, inputs), op, failure, [&](ctl_device* candidate) {
    return run_allocating_on(candidate, asked, op, input_count, inputs, attrs, output_count, out_tensors);
  });
}

bool run_op_into_placed(ctl_op_id op, size_t input_count, ctl_tensor* const* inputs, const void* attrs,
                        size_t output_count, ctl_tensor* const* outputs, ctl_status** failure) {
  ctl_runtime* runtime = runtime_of(output_count, outputs);
  if (!runtime) runtime = runtime_of(input_count, inputs);
  if (!runtime || !outputs || t_placing) return false;
  Placing placing;
  PlacementState& state = *runtime->placement;
  const ctl_status_code code = ctl_status_get_code(*failure);
  if (code == CTL_STATUS_INVALID_ARGUMENT && spans_devices(input_count, inputs, output_count, outputs)) {
    if (!state.cross_device_inputs.load(std::memory_order_relaxed)) return false;
    ctl_device* target = cross_device_target(runtime, input_count, inputs, output_count, outputs);
    std::vector<Owned> keep;
    std::vector<ctl_tensor*> placed;
    ctl_status_free(*failure);
    *failure = inputs_on(target, op, input_count, inputs, Moving{}, &keep, &placed);
    if (!*failure) *failure = run_op_into(op, input_count, placed.data(), attrs, output_count, outputs);
    return true;
  }
  if (code != CTL_STATUS_UNSUPPORTED || !all_live(input_count, inputs) || !all_live(output_count, outputs)) {
    return false;
  }
  if (!state.fallback.load(std::memory_order_relaxed)) {
    *failure = append_to_message(*failure, kFallbackHint);
    return false;
  }
  ctl_device* asked = asked_device(input_count, inputs, output_count, outputs);
  return fall_back(asked, bytes_of(input_count, inputs) + bytes_of(output_count, outputs), op, failure,
                   [&](ctl_device* candidate) {
                     return run_into_on(candidate, op, input_count, inputs, attrs, output_count, outputs);
                   });
}

}  // namespace catalyst
