// op_context.h — what every op family shares: the checked form of a tensor view on a
// device allocation, the per-call context (error messages, argument checks), temporaries,
// and recording a dispatch.
//
// Conventions shared with shaders/common.glsl:
//  - binding 0 of every shader holds its parameters as 32-bit words (Params), bindings 1..n
//    its tensors, each bound from the start of its allocation; a view reaches a shader as
//    its element offset within that binding (in the parameters);
//  - strided loops take an Iteration: n, rank, shape[8] innermost axis first, then per view
//    its offset and strides[8], decoded by the shader's ctl_offset();
//  - a variant is named "<family>.<dtype tags>" and built from the family's one template.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "catalyst/sdk/merged_axes.hpp"
#include "catalyst/sdk/op_call.hpp"
#include "catalyst/sdk/raw_field.hpp"
#include "catalyst/sdk/status.hpp"
#include "catalyst_plugin.h"
#include "memory.h"
#include "pipelines.h"
#include "plugin.h"

namespace catalyst::vulkan {

// A validated ctl_tensor_view on a device allocation: offset (in elements from `base`, below
// 2^32: bind_buffer checks) is where element [0, ...] lies.
struct DeviceView : sdk::ViewShape {
  VkBuffer buffer = VK_NULL_HANDLE;
  uint64_t base = 0;  // the allocation's range in `buffer`: what a descriptor binds
  uint64_t range = 0;
};

// The loop of a strided shader over views of one shape: adjacent axes merged where every
// view allows it, innermost first.
struct Iteration {
  uint32_t rank = 0;
  uint32_t shape[CTL_MAX_RANK] = {};
  uint32_t strides[6][CTL_MAX_RANK] = {};
  int64_t numel = 1;
};
Iteration make_iteration(const DeviceView* const* views, size_t count);
// The rows of a normalisation: every axis of `shape` but `skip` (rank for none), merged like
// make_iteration; `strides` are each view's strides over all `rank` axes, NULL for an absent
// view (zeros). numel is the number of rows.
Iteration make_rows(uint32_t rank, const int64_t* shape, uint32_t skip, std::initializer_list<const int64_t*> strides);

// Dispatch parameters, as 32-bit words.
struct Params {
  std::vector<uint32_t> words;
  void add(uint32_t v) { words.push_back(v); }
  void add_i64(int64_t v) {
    const auto u = static_cast<uint64_t>(v);
    words.push_back(static_cast<uint32_t>(u));
    words.push_back(static_cast<uint32_t>(u >> 32));
  }
  void add_f32(float v) {
    uint32_t u;
    std::memcpy(&u, &v, 4);
    words.push_back(u);
  }
  void add_f64(double v) {
    uint64_t u;
    std::memcpy(&u, &v, 8);
    add_i64(static_cast<int64_t>(u));
  }
  // n, rank, shape[8], then offset and strides[8] of each of `views` (count of them).
  void add_iteration(const Iteration& it, const DeviceView* const* views, size_t count);
  // The same with the views' element offsets given directly.
  void add_iteration(const Iteration& it, std::initializer_list<int64_t> offsets);
  // Part `part` of `parts` of work [0, total) split in parts of `per_part` (kLoopBudget): its
  // [begin, end) and its carry flags, 1 when an earlier part left its sums in the carry, 2
  // when a later part goes on from them.
  void add_part(int64_t part, int64_t parts, int64_t per_part, int64_t total) {
    add(static_cast<uint32_t>(part * per_part));
    add(static_cast<uint32_t>(std::min(total, (part + 1) * per_part)));
    add((part > 0 ? 1u : 0u) | (part + 1 < parts ? 2u : 0u));
  }
};

// One storage buffer of a dispatch.
struct Binding {
  VkBuffer buffer;
  uint64_t base;
  uint64_t range;
  bool write;
};
inline Binding reads(const DeviceView& v) {
  return {v.buffer, v.base, v.range, false};
}
inline Binding writes(const DeviceView& v) {
  return {v.buffer, v.base, v.range, true};
}

const char* dtype_name(ctl_dtype dtype);
using sdk::raw_enum;

struct OpContext;

// Device memory for intermediate results of one call; freed after the work that uses it.
class Temporary {
 public:
  explicit Temporary(const OpContext& ctx) : ctx_(ctx) {}
  ~Temporary();
  Temporary(const Temporary&) = delete;
  Temporary& operator=(const Temporary&) = delete;
  Allocation allocation;

 private:
  const OpContext& ctx_;
};

// The per-call context: the call reader every plugin shares (sdk/op_call.hpp: arity, views,
// dtypes, shapes, attrs, messages "vulkan plugin: <op>: ...") and this device's dispatches.
struct OpContext : sdk::OpCall<OpContext, DeviceView> {
  OpContext(const ctl_host_api* host, ctl_plugin_device* device, ctl_plugin_stream* stream, const ctl_op_call* call,
            const char* name)
      : OpCall(host, call, name, kLogPrefix), device(device), stream(stream) {}

  ctl_plugin_device* device;
  ctl_plugin_stream* stream;

  // ---- binding views (sdk/op_call.hpp) ----
  uint64_t buffer_size(const ctl_plugin_buffer* buffer) const { return buffer->size; }
  // Shaders index in 32-bit elements from the allocation's start.
  ctl_status* bind_buffer(const ctl_tensor_view& v, const sdk::ViewFacts& facts, const sdk::ViewSlot& slot,
                          DeviceView* out) const;

  // ---- dispatch ----
  // Records shader `variant` over groups_x x groups_y groups of `local` invocations, with
  // spec constants `spec` (ids 1..), parameters `params` and tensors `bindings` (1..n).
  ctl_status* dispatch(const std::string& variant, uint32_t local, std::initializer_list<int32_t> spec,
                       uint32_t groups_x, uint32_t groups_y, const Params& params,
                       std::initializer_list<Binding> bindings) const;
  // Groups for a grid-stride loop over `n` items with `local` invocations per group.
  uint32_t loop_groups(int64_t n, uint32_t local) const;

  // ---- device memory ----
  ctl_status* temporary(uint64_t bytes, Temporary* out) const;
  // A contiguous view of `like`'s shape and dtype in a new temporary.
  ctl_status* contiguous_like(const DeviceView& like, Temporary* storage, DeviceView* out) const;
  // *out = v when contiguous; else a contiguous copy in *storage.
  ctl_status* make_contiguous(const DeviceView& v, Temporary* storage, DeviceView* out) const;
  // dst = src element by element (same dtype and shape, any strides).
  ctl_status* copy_view(const DeviceView& src, const DeviceView& dst) const;
  // The carry of a kernel split into parts (op_context.h, kLoopBudget): a new temporary of
  // `bytes` when the work is split (`split`), else `unsplit`, any valid buffer the shader
  // binds but does not touch.
  ctl_status* carry(bool split, uint64_t bytes, const DeviceView& unsplit, Temporary* storage, DeviceView* out) const;
  // Hands a temporary to the stream: freed once the work recorded so far has finished.
  void retire(const Allocation& a) const;
};

inline constexpr uint32_t kLoopLocal = 128;

// The loop iterations one shader invocation may spend, counting every loop it runs. Mesa's
// lavapipe (gallivm's loop limiter, LP_MAX_TGSI_LOOP_ITERATIONS) silently ends every loop of
// an invocation once 65,535 iterations have run in all: an f32 matmul with K = 70,000 gave
// 65,535, a sum of 2^22 ones 65,532. Kernels whose loops grow with a size split their work
// so that no invocation comes near it; a quarter of it leaves room for the loops of index
// arithmetic and epilogues (README, "Loop budget").
inline constexpr int64_t kLoopBudget = 16384;

}  // namespace catalyst::vulkan
