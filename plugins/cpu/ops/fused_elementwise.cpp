// fused_elementwise.cpp — CTL_OP_FUSED_ELEMENTWISE (ABI 1.5): the program runs in one pass
// over the output, tile by tile (kTile elements, a few KiB per register, so a tile's
// registers stay in L1/L2), and each instruction of a tile is computed by this plugin's own
// op function for that op (run_unary, run_binary, run_gelu_backward) on views of the
// tile's scratch. The fused result is therefore the unfused result bit for bit, as
// catalyst.h promises, and stays so when those kernels change.
//
// One subtlety keeps that true. A few ops have a vector form whose last bit may differ
// from the scalar one (exp, tanh, sigmoid, silu, gelu, gelu_tanh and both gelus' backward
// forms; in f32, and in f16/bf16 through f32's), and the separate op takes the vector form
// only where its operands are contiguous along the run (elementwise.h: map_*_spans). Unfused, an
// instruction's operands are the caller's inputs (any strides, broadcast) and earlier
// results (contiguous tensors of the broadcast shape of their own operands). plan() works
// out, per instruction, the views the separate call would have had and the path it would
// have taken; an instruction that would have run scalar is run here on gapped views
// (stride 2), which send the op down its scalar path too.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <vector>

#include "catalyst/sdk/fused_program.hpp"
#include "elementwise.h"
#include "kernels.h"
#include "plugin.h"

namespace catalyst::cpu {
namespace {

constexpr int64_t kTile = 1024;       // elements per tile and register
constexpr int64_t kTilesPerPart = 8;  // tiles per parallel part, at least
constexpr uint32_t kMaxRegisters = CTL_FUSED_MAX_INPUTS + CTL_FUSED_MAX_INSTRUCTIONS;

// The op function that runs each instruction's op here.
ctl_status* (*family_of(ctl_op_id op))(const OpContext&) {
  if (op >= CTL_OP_NEG && op <= CTL_OP_RECIPROCAL) return run_unary;
  if (op == CTL_OP_GELU_BACKWARD || op == CTL_OP_GELU_TANH_BACKWARD) return run_gelu_backward;
  return run_binary;
}

// f16 and bf16 take the same vector forms as f32, through f32 (half_convert.h).
bool has_vector_form(ctl_dtype dtype, ctl_op_id op) {
  if (dtype != CTL_DTYPE_F32 && dtype != CTL_DTYPE_F16 && dtype != CTL_DTYPE_BF16) return false;
  return op == CTL_OP_EXP || op == CTL_OP_TANH || op == CTL_OP_SIGMOID || op == CTL_OP_SILU || op == CTL_OP_GELU_TANH ||
         op == CTL_OP_GELU_TANH_BACKWARD || op == CTL_OP_GELU || op == CTL_OP_GELU_BACKWARD;
}

// The operand view of `r` in a separate call whose output has `out`'s shape (the core
// broadcasts it: stride 0 on axes where r has size 1).
View broadcast_to(const View& r, const View& out) {
  View v = r;
  for (uint32_t d = 0; d < out.rank; ++d) {
    if (r.shape[d] == 1 && out.shape[d] != 1) v.strides[d] = 0;
    v.shape[d] = out.shape[d];
  }
  return v;
}

View contiguous_like(uint32_t rank, const int64_t* shape) {
  View v;
  v.rank = rank;
  int64_t stride = 1;
  for (uint32_t d = rank; d-- > 0;) {
    v.shape[d] = shape[d];
    v.strides[d] = stride;
    stride *= shape[d];
  }
  return v;
}

// True when the separate call (f32, f16 or bf16) of a vector-form op on these views would
// take the vector form: the same tests as map_unary_spans / map_binary_spans and
// run_gelu_grad.
bool separate_call_is_vector(const View& out, const View& a, const View* b) {
  if (!b) {
    if (dense_alike(out, a)) return true;
    const auto layout = make_layout<2>(out.rank, out.shape, {out.strides, a.strides});
    return layout.inner_stride(0) == 1 && layout.inner_stride(1) == 1;
  }
  if (dense_alike(out, a, *b)) return true;
  const auto layout = make_layout<3>(out.rank, out.shape, {out.strides, a.strides, b->strides});
  return layout.inner_stride(0) == 1 && layout.inner_stride(1) == 1 && layout.inner_stride(2) == 1;
}

struct Plan {
  ctl_fused_elementwise_attrs program;
  uint32_t inputs = 0;
  std::array<bool, CTL_FUSED_MAX_INSTRUCTIONS> scalar{};  // run on gapped views
  std::array<uint32_t, kMaxRegisters> slot{};             // scratch slot of each instruction's register
  uint32_t slots = 0;
  std::array<const char*, CTL_FUSED_MAX_INSTRUCTIONS> names{};  // each instruction's op, for messages
};

// A register as the unfused chain would hold it is a View without data: the output's
// shape with 1 on the axes it is broadcast along, and its strides (an input's own; an
// earlier result's contiguous ones).
void plan(const View& out, const std::vector<View>& inputs, Plan* p) {
  const ctl_fused_elementwise_attrs& prog = p->program;
  for (uint32_t i = 0; i < prog.instruction_count; ++i) p->names[i] = op_name(prog.program[i].op);
  std::vector<View> regs;
  for (const View& in : inputs) {
    View v = in;
    for (uint32_t d = 0; d < in.rank; ++d) {
      if (in.strides[d] == 0) v.shape[d] = 1;
    }
    regs.push_back(v);
  }
  for (uint32_t i = 0; i < prog.instruction_count; ++i) {
    const ctl_fused_instruction& in = prog.program[i];
    const bool binary = sdk::fused_instruction_arity(in.op) == 2;
    int64_t shape[CTL_MAX_RANK];
    for (uint32_t d = 0; d < out.rank; ++d) {
      shape[d] = std::max(regs[in.a].shape[d], binary ? regs[in.b].shape[d] : int64_t{1});
    }
    const View result = contiguous_like(out.rank, shape);
    if (has_vector_form(out.dtype, in.op)) {
      const View a = binary ? broadcast_to(regs[in.a], result) : regs[in.a];
      const View b = binary ? broadcast_to(regs[in.b], result) : View{};
      p->scalar[i] = !separate_call_is_vector(result, a, binary ? &b : nullptr);
    }
    regs.push_back(result);
  }
  // Scratch slots by liveness: a register's slot is free again after its last reader.
  std::array<uint32_t, kMaxRegisters> last_use{};
  for (uint32_t i = 0; i < prog.instruction_count; ++i) {
    last_use[prog.program[i].a] = i;
    if (sdk::fused_instruction_arity(prog.program[i].op) == 2) last_use[prog.program[i].b] = i;
  }
  std::vector<uint32_t> free_slots;
  for (uint32_t i = 0; i < prog.instruction_count; ++i) {
    const uint32_t r = p->inputs + i;
    if (free_slots.empty()) {
      p->slot[r] = p->slots++;
    } else {
      p->slot[r] = free_slots.back();
      free_slots.pop_back();
    }
    // Operands read for the last time free their slots once this result has its own.
    const ctl_fused_instruction& in = prog.program[i];
    const uint32_t operands[2] = {in.a, sdk::fused_instruction_arity(in.op) == 2 ? in.b : in.a};
    for (uint32_t k = 0; k < 2; ++k) {
      const uint32_t o = operands[k];
      if (o >= p->inputs && last_use[o] == i && (k == 0 || o != operands[0])) free_slots.push_back(p->slot[o]);
    }
  }
}

// Copies elements [begin, begin + n) of `v` (row-major over its shape) to `dst`
// (contiguous), or the other way round when `to_view`.
template <class R>
void move_tile(const View& v, int64_t begin, int64_t n, R* tile, bool to_view) {
  const auto layout = make_layout<1>(v.rank, v.shape, {v.strides});
  R* const base = v.as<R>();
  for_each_segment(layout, begin, begin + n, [&](const std::array<int64_t, 1>& off, int64_t count, int64_t linear) {
    const int64_t s = layout.inner_stride(0);
    R* p = base + off[0];
    R* t = tile + (linear - begin);
    if (to_view) {
      for (int64_t i = 0; i < count; ++i) p[i * s] = t[i];
    } else {
      for (int64_t i = 0; i < count; ++i) t[i] = p[i * s];
    }
  });
}

void move_tile_bytes(const View& v, int64_t begin, int64_t n, void* tile, bool to_view) {
  switch (v.element_size) {
    case 2:
      return move_tile(v, begin, n, static_cast<uint16_t*>(tile), to_view);
    case 4:
      return move_tile(v, begin, n, static_cast<uint32_t*>(tile), to_view);
    default:
      return move_tile(v, begin, n, static_cast<uint64_t*>(tile), to_view);
  }
}

// Copies n elements between a contiguous run and every second element of `gapped`.
void gap(const char* from, char* gapped, int64_t n, size_t size) {
  for (int64_t i = 0; i < n; ++i) std::memcpy(gapped + 2 * i * size, from + i * size, size);
}
void ungap(const char* gapped, char* to, int64_t n, size_t size) {
  for (int64_t i = 0; i < n; ++i) std::memcpy(to + i * size, gapped + 2 * i * size, size);
}

// One instruction on n elements: the op's own function on 1-D views with `stride`.
ctl_status* run_instruction(const OpContext& ctx, ctl_op_id op, const char* name, ctl_dtype dtype, char* out,
                            const char* a, const char* b, int64_t n, int64_t stride) {
  const size_t size = sdk::dtype_size(dtype);
  const uint64_t bytes = static_cast<uint64_t>((n - 1) * stride + 1) * size;
  ctl_plugin_buffer buffers[3] = {
      {out, bytes, false, 0}, {const_cast<char*>(a), bytes, false, 0}, {const_cast<char*>(b), bytes, false, 0}};
  ctl_tensor_view views[3];
  for (int k = 0; k < 3; ++k) {
    views[k] = ctl_tensor_view{};
    views[k].struct_size = CTL_TENSOR_VIEW_STRUCT_SIZE;
    views[k].buffer = &buffers[k];
    views[k].dtype = dtype;
    views[k].rank = 1;
    views[k].shape[0] = n;
    views[k].strides[0] = stride;
  }
  const ctl_tensor_view* inputs[2] = {&views[1], &views[2]};
  const ctl_tensor_view* outputs[1] = {&views[0]};
  ctl_op_call call{};
  call.struct_size = CTL_OP_CALL_STRUCT_SIZE;
  call.op = op;
  call.input_count = sdk::fused_instruction_arity(op);
  call.inputs = inputs;
  call.output_count = 1;
  call.outputs = outputs;
  const OpContext sub{ctx.host, ctx.pool, &call, name, ctx.cache};
  return family_of(op)(sub);
}

}  // namespace

ctl_status* run_fused_elementwise(const OpContext& ctx) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(1, CTL_FUSED_MAX_INPUTS, 1, 1));
  Plan p;
  p.inputs = ctx.call->input_count;
  CTL_SDK_RETURN_IF_ERROR(ctx.check(sdk::read_fused_program(ctx.call->attrs, p.inputs, &p.program)));
  View out;
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "out", &out));
  std::vector<View> inputs(p.inputs);
  for (uint32_t k = 0; k < p.inputs; ++k) {
    CTL_SDK_RETURN_IF_ERROR(ctx.input(k, "x", &inputs[k]));
    CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(inputs[k], "an input", out.dtype));
    CTL_SDK_RETURN_IF_ERROR(ctx.expect_same_shape(out, "output 0 (out)", inputs[k], "an input"));
  }
  if (out.dtype != CTL_DTYPE_F32 && out.dtype != CTL_DTYPE_F64 && out.dtype != CTL_DTYPE_F16 &&
      out.dtype != CTL_DTYPE_BF16) {
    return ctx.fail(CTL_STATUS_UNSUPPORTED, "dtype %s is not supported (float dtypes only)", dtype_name(out.dtype));
  }
  const int64_t numel = out.numel();
  if (numel == 0) return nullptr;
  plan(out, inputs, &p);

  const size_t size = out.element_size;
  const View dense = contiguous_like(out.rank, out.shape);
  std::array<bool, CTL_FUSED_MAX_INPUTS> direct{};  // read in place: row-major over the output
  for (uint32_t k = 0; k < p.inputs; ++k) direct[k] = dense_alike(dense, inputs[k]);
  const bool out_direct = dense_alike(dense, out);
  // Per part: a tile of each gathered input, the instruction slots, three gapped tiles.
  const size_t tile_bytes = static_cast<size_t>(kTile) * size;
  const size_t part_bytes = (p.inputs + p.slots + 6) * tile_bytes;

  const int64_t tiles = (numel + kTile - 1) / kTile;
  Scratch scratch(ctx);
  CTL_SDK_RETURN_IF_ERROR(scratch.allocate(ctx, part_bytes * ctx.threads()));
  // The instructions' views are made here and valid, so a failure would be a defect of
  // this file; the first one is reported, and the other parts stop at their next step.
  std::atomic<ctl_status*> failure{nullptr};
  parallel_for(ctx.pool, tiles, kTilesPerPart, [&](int64_t first, int64_t last, unsigned part) {
    char* const base = scratch.as<char>() + part * part_bytes;
    char* const gapped = base + (p.inputs + p.slots) * tile_bytes;  // 3 regions of 2 tiles
    for (int64_t t = first; t < last; ++t) {
      const int64_t begin = t * kTile, n = std::min(kTile, numel - begin);
      std::array<const char*, kMaxRegisters> reg{};
      for (uint32_t k = 0; k < p.inputs; ++k) {
        if (direct[k]) {
          reg[k] = inputs[k].data + begin * static_cast<int64_t>(size);
        } else {
          char* tile = base + k * tile_bytes;
          move_tile_bytes(inputs[k], begin, n, tile, false);
          reg[k] = tile;
        }
      }
      for (uint32_t i = 0; i < p.program.instruction_count; ++i) {
        if (failure.load(std::memory_order_relaxed)) return;
        const ctl_fused_instruction& in = p.program.program[i];
        const uint32_t r = p.inputs + i;
        const bool last_one = i + 1 == p.program.instruction_count;
        char* result = last_one && out_direct ? out.data + begin * static_cast<int64_t>(size)
                                              : base + (p.inputs + p.slot[r]) * tile_bytes;
        const bool binary = sdk::fused_instruction_arity(in.op) == 2;
        const char* a = reg[in.a];
        const char* b = binary ? reg[in.b] : a;
        ctl_status* status = nullptr;
        if (p.scalar[i]) {
          char* ga = gapped;
          char* gb = gapped + 2 * tile_bytes;
          char* go = gapped + 4 * tile_bytes;
          gap(a, ga, n, size);
          if (binary) gap(b, gb, n, size);
          status = run_instruction(ctx, in.op, p.names[i], out.dtype, go, ga, binary ? gb : ga, n, 2);
          if (!status) ungap(go, result, n, size);
        } else {
          status = run_instruction(ctx, in.op, p.names[i], out.dtype, result, a, b, n, 1);
        }
        if (status) {
          ctl_status* none = nullptr;
          failure.compare_exchange_strong(none, status);
          return;
        }
        reg[r] = result;
        if (last_one && !out_direct) move_tile_bytes(out, begin, n, result, true);
      }
    }
  });
  return failure.load();
}

}  // namespace catalyst::cpu
