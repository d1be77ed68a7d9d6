// graph.h — the structs behind ctl_graph: the nodes a capture recorded (ops, zero fills and
// host writes), the device buffers they use, and what the passes and launches did.
//
// A node names its tensors by Storage (tensor.h) plus the plugin view into it; the view's
// buffer pointer is filled in from the storage when the node runs, so a pass may point an
// operand at another storage (memory planning, common subexpressions) by changing one
// field. The graph holds one reference to every storage any node uses.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "catalyst.h"
#include "op_schema.h"
#include "tensor.h"

namespace catalyst {

constexpr uint64_t kGraphMagic = 0x485052474c544c43ull;  // "CLTLGRPH"

enum class NodeKind {
  kOp,     // a plugin op call
  kFill,   // buffer_fill of a byte range with a repeated pattern
  kWrite,  // buffer_write of bytes the graph keeps
};

// One tensor a node reads or writes: absent when `storage` is NULL (an optional input or
// output the call left out).
struct NodeOperand {
  Storage* storage = nullptr;
  ctl_tensor_view view{};
};

struct GraphNode {
  uint64_t id = 0;  // capture order; a fused node keeps its last member's id
  NodeKind kind = NodeKind::kOp;
  ctl_device* device = nullptr;
  ctl_op_id op = CTL_OP_COPY;  // kOp only
  PreparedOp::Attrs attrs{};
  bool has_attrs = false;
  std::vector<NodeOperand> inputs;
  std::vector<NodeOperand> outputs;  // kFill and kWrite: outputs[0], with the byte range below
  uint64_t byte_offset = 0;          // kFill, kWrite: where in outputs[0].storage
  uint64_t byte_count = 0;
  std::vector<uint8_t> payload;  // kFill: the pattern; kWrite: the bytes
  std::vector<uint64_t> merged;  // ids of captured nodes folded into this one (fusion)
};

// What the graph knows about a storage beyond its reference.
struct StorageInfo {
  bool made_in_capture = false;  // allocated while capturing (else the program's own tensor)
  bool pinned = false;           // holds data that must survive launches (folded constants)
};

struct PassRecord {
  const char* name = "";
  uint64_t nodes_before = 0, nodes_after = 0;
  uint64_t bytes_before = 0, bytes_after = 0;
  uint64_t changes = 0;
};

}  // namespace catalyst

struct ctl_graph {
  uint64_t magic = catalyst::kGraphMagic;
  std::atomic<int64_t> references{1};
  ctl_runtime* runtime = nullptr;  // retained
  std::vector<catalyst::GraphNode> nodes;
  std::unordered_map<catalyst::Storage*, catalyst::StorageInfo> storages;  // one reference each
  uint64_t captured_nodes = 0;
  uint64_t captured_bytes = 0;
  uint64_t unfused_groups = 0;  // fusions the device's plugin could not take
  std::string captured_dot;     // the graph as captured, for ctl_graph_write_dot
  std::vector<catalyst::PassRecord> passes;
  bool optimized = false;
  bool materialized = false;  // every storage has a buffer (capture.h: materialize)
  std::atomic<uint64_t> runs{0};
  std::atomic<bool> launched{false};

  ~ctl_graph();
};

namespace catalyst {

// Status for a NULL, foreign or released graph handle passed as `argument`.
ctl_status* check_graph(const ctl_graph* graph, const char* argument);

// Adds `storage` to the graph's set (retaining it once) if it is not there yet.
void hold_storage(ctl_graph* graph, Storage* storage, bool made_in_capture);

// Device bytes of the storages made in capture that the graph alone holds: what its
// intermediate buffers cost.
uint64_t graph_device_bytes(const ctl_graph* graph);

// Releases the graph's reference to storages no node uses any more.
void drop_unused_storages(ctl_graph* graph);

// The graph as Graphviz DOT text.
std::string graph_dot(const ctl_graph* graph, const char* title);

// Whether the node's device claims the node's call (op_supports); false when its plugin
// has no op_supports to ask.
bool node_supported(const GraphNode& node);

// Runs one node on its device's stream.
ctl_status* run_node(const GraphNode& node);

}  // namespace catalyst
