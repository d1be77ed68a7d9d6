// plan_memory.cpp — memory planning: the internal storages (analysis.h) of each device move
// into one arena buffer, at offsets chosen so that two storages share bytes only when
// their lifetimes do not overlap. A storage lives from the first node that touches it to
// the last. Storages are placed largest first, each at the lowest offset where it overlaps
// (in bytes) no already placed storage that is alive at the same time: the greedy-by-size
// offset assignment of static memory planners, which comes close to the lower bound (the
// most bytes alive at any one node) on training steps.
//
// Exact: every node computes the same values; only where they live changes. A device's
// stream runs in order, so a node that reuses bytes runs after the last reader of their
// previous tenant, across launches too.
#include <algorithm>

#include "graph/analysis.h"
#include "graph/passes/passes.h"
#include "status.h"

namespace catalyst {
namespace {

// Offsets are multiples of this, so every view keeps the alignment a buffer start has for
// any dtype and vector width the plugins use.
constexpr uint64_t kAlignment = 256;

uint64_t aligned(uint64_t bytes) {
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

struct Tenant {
  Storage* storage = nullptr;
  size_t first = 0, last = 0;
  uint64_t offset = 0;
  uint64_t bytes = 0;  // aligned size
};

// The lowest aligned offset where `t` overlaps no placed tenant alive at the same time.
uint64_t lowest_offset(const Tenant& t, const std::vector<const Tenant*>& placed) {
  std::vector<const Tenant*> alive;
  for (const Tenant* p : placed) {
    if (!(p->last < t.first || t.last < p->first)) alive.push_back(p);
  }
  std::sort(alive.begin(), alive.end(), [](const Tenant* a, const Tenant* b) { return a->offset < b->offset; });
  uint64_t offset = 0;
  for (const Tenant* p : alive) {
    if (offset + t.bytes <= p->offset) break;
    offset = std::max(offset, p->offset + p->bytes);
  }
  return offset;
}

}  // namespace

ctl_status* plan_memory(ctl_graph* graph, uint64_t* out_changes) {
  std::unordered_map<Storage*, Tenant> tenants;
  for (size_t i = 0; i < graph->nodes.size(); ++i) {
    const GraphNode& node = graph->nodes[i];
    for (const auto* list : {&node.inputs, &node.outputs}) {
      for (const NodeOperand& operand : *list) {
        if (!operand.storage || !is_internal(*graph, operand.storage)) continue;
        auto [it, inserted] = tenants.try_emplace(operand.storage);
        if (inserted) it->second = Tenant{operand.storage, i, i, 0, aligned(operand.storage->size_bytes)};
        it->second.last = i;
      }
    }
  }
  std::unordered_map<ctl_device*, std::vector<Tenant*>> by_device;
  for (auto& [storage, tenant] : tenants) by_device[storage->device].push_back(&tenant);
  uint64_t moved = 0;
  for (auto& [device, list] : by_device) {
    if (list.size() < 2) continue;  // one storage gains nothing from an arena
    std::sort(list.begin(), list.end(), [](const Tenant* a, const Tenant* b) {
      if (a->bytes != b->bytes) return a->bytes > b->bytes;
      return a->first < b->first;  // a fixed order: one graph always gets the same plan
    });
    std::vector<const Tenant*> placed;
    uint64_t arena_bytes = 0;
    for (Tenant* t : list) {
      t->offset = lowest_offset(*t, placed);
      placed.push_back(t);
      arena_bytes = std::max(arena_bytes, t->offset + t->bytes);
    }
    // The tenants' own buffers are released before the next device's arena is allocated,
    // so planning never needs much more memory than the capture already holds.
    Storage* arena = nullptr;
    CTL_RETURN_IF_ERROR(allocate_storage(device, arena_bytes, &arena));
    graph->storages[arena] = StorageInfo{true, true};
    for (GraphNode& node : graph->nodes) {
      for (auto* operands : {&node.inputs, &node.outputs}) {
        for (NodeOperand& operand : *operands) {
          if (!operand.storage || operand.storage->device != device) continue;
          const auto it = tenants.find(operand.storage);
          if (it == tenants.end()) continue;
          operand.storage = arena;
          operand.view.byte_offset += it->second.offset;
          if (node.kind != NodeKind::kOp) node.byte_offset += it->second.offset;  // fills and writes
        }
      }
    }
    for (const Tenant* t : list) tenants.erase(t->storage);  // a later allocation may reuse the address
    drop_unused_storages(graph);
    moved += list.size();
  }
  *out_changes = moved;
  return nullptr;
}

}  // namespace catalyst
