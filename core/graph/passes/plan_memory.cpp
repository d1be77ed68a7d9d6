// plan_memory.cpp — memory planning: internal storages (analysis.h) whose lifetimes do not
// overlap share one device buffer. A storage lives from the first node that touches it to
// the last; two storages may share a buffer when one's last node comes before the other's
// first. Storages are placed largest first, each into the first buffer of its device whose
// tenants it does not overlap in time (the greedy interval colouring used by static memory
// planners), so a buffer's size is that of its first, largest tenant.
//
// Exact: every node computes the same values; only where they live changes. A device's
// stream runs in order, so a node that reuses a buffer runs after the last reader of the
// previous tenant, across launches too.
#include <algorithm>

#include "graph/analysis.h"
#include "graph/passes/passes.h"
#include "status.h"

namespace catalyst {
namespace {

struct Lifetime {
  Storage* storage = nullptr;
  size_t first = 0, last = 0;
};

struct Slot {
  ctl_device* device = nullptr;
  uint64_t bytes = 0;
  std::vector<std::pair<size_t, size_t>> busy;  // [first, last] of each tenant
  Storage* storage = nullptr;                   // allocated once all tenants are known

  bool free_during(size_t first, size_t last) const {
    for (const auto& [a, b] : busy) {
      if (!(b < first || last < a)) return false;
    }
    return true;
  }
};

ctl_status* allocate_slot(Slot* slot) {
  ctl_tensor* tensor = nullptr;
  const int64_t shape[1] = {static_cast<int64_t>(slot->bytes)};
  CTL_RETURN_IF_ERROR(allocate_tensor(slot->device, CTL_DTYPE_U8, 1, shape, &tensor));
  slot->storage = tensor->storage;
  slot->storage->retain();
  ctl_tensor_release(tensor);
  return nullptr;
}

}  // namespace

ctl_status* plan_memory(ctl_graph* graph, uint64_t* out_changes) {
  std::unordered_map<Storage*, Lifetime> lifetimes;
  for (size_t i = 0; i < graph->nodes.size(); ++i) {
    const GraphNode& node = graph->nodes[i];
    for (const auto* list : {&node.inputs, &node.outputs}) {
      for (const NodeOperand& operand : *list) {
        if (!operand.storage || !is_internal(*graph, operand.storage)) continue;
        auto [it, inserted] = lifetimes.try_emplace(operand.storage, Lifetime{operand.storage, i, i});
        it->second.last = i;
      }
    }
  }
  std::vector<Lifetime> order;
  for (const auto& [storage, lifetime] : lifetimes) order.push_back(lifetime);
  std::sort(order.begin(), order.end(), [](const Lifetime& a, const Lifetime& b) {
    if (a.storage->size_bytes != b.storage->size_bytes) return a.storage->size_bytes > b.storage->size_bytes;
    return a.first < b.first;  // a fixed order, so one graph always gets the same plan
  });
  std::vector<Slot> slots;
  std::unordered_map<Storage*, size_t> slot_of;
  for (const Lifetime& lifetime : order) {
    ctl_device* device = lifetime.storage->device;
    size_t chosen = slots.size();
    for (size_t k = 0; k < slots.size(); ++k) {
      if (slots[k].device == device && slots[k].free_during(lifetime.first, lifetime.last)) {
        chosen = k;
        break;
      }
    }
    if (chosen == slots.size()) slots.push_back(Slot{device, lifetime.storage->size_bytes, {}, nullptr});
    slots[chosen].busy.emplace_back(lifetime.first, lifetime.last);
    slot_of[lifetime.storage] = chosen;
  }
  // One buffer at a time: its tenants are released before the next is allocated, so
  // planning never needs much more memory than the capture already holds.
  uint64_t shared = 0;
  for (size_t k = 0; k < slots.size(); ++k) {
    Slot& slot = slots[k];
    if (slot.busy.size() < 2) continue;  // a buffer of one tenant is the tenant's own
    CTL_RETURN_IF_ERROR(allocate_slot(&slot));
    graph->storages[slot.storage] = StorageInfo{true, true};
    for (GraphNode& node : graph->nodes) {
      for (auto* list : {&node.inputs, &node.outputs}) {
        for (NodeOperand& operand : *list) {
          const auto it = operand.storage ? slot_of.find(operand.storage) : slot_of.end();
          if (it != slot_of.end() && it->second == k) operand.storage = slot.storage;
        }
      }
    }
    // The tenants die next; forget them first, since a later allocation may reuse an address.
    for (auto it = slot_of.begin(); it != slot_of.end();) it = it->second == k ? slot_of.erase(it) : std::next(it);
    drop_unused_storages(graph);
    shared += slot.busy.size();
  }
  *out_changes = shared;
  return nullptr;
}

}  // namespace catalyst
