// gemm_half.cpp — the driver of the f16/bf16 GEMM on AMX (gemm_half.h).
//
// B is packed whole (every depth, every column) once per product, or once for all of
// them when it is broadcast over the batch, and shared by the threads. Each thread claims
// blocks of at most kMc rows of A, packs them for the whole depth, and walks the output in
// kMc x kNc blocks, one depth block (kDepthChunks tile rows) at a time: the A and B
// slices of a depth block (256 KiB each) stay in L2 while every 32 x 32 tile of the
// block is computed, and the f32 partial sums of the block (kMc x kNc, 256 KiB) stay in
// cache between depth blocks. Within a block, the two B panels of one column pair
// (32 KiB) stay in L1 while the row pairs' A panels stream past them from L2. The last
// depth block writes the output through alpha, beta, bias and activation, rounding once
// to f16/bf16.
#include "gemm_half.h"

#include "intrinsics.h"

#include <algorithm>
#include <atomic>

#include "amx.h"
#include "gemm_amx.h"
#include "half_merge.h"
#include "thread_pool.h"

namespace catalyst::cpu {
namespace {

// Packed depth of one tile product. 16 chunks keep a B panel pair in L1 (32 of 48 KiB);
// at 32 chunks (64 KiB) both operands streamed from L2 and bf16 ran about 25% slower
// (interleaved runs of matmul/bf16/2048 and matmul/f16/2048, 1 thread).
constexpr int64_t kDepthChunks = 16;
constexpr int64_t kMc = 256;  // rows of A a thread packs at once
constexpr int64_t kNc = 256;  // columns a depth block runs over before the next

#define CTL_CPU_AVX512_SCAN __attribute__((target("avx512f,avx512vl,avx512bw,avx2")))

// The lanes of v (among `lanes`) that bf16_units_exact rejects. f16: exponent bits all ones;
// bf16: magnitude - 1 < 0x7f (unsigned), i.e. a magnitude of 1 to 0x7f.
CTL_CPU_AVX512_SCAN inline __mmask32 inexact_lanes(bool f16, __m512i v, __mmask32 lanes) {
  const __m512i mask_bits = _mm512_set1_epi16(f16 ? 0x7c00 : 0x7fff);
  const __m512i bits = _mm512_and_si512(v, mask_bits);
  if (f16) return _mm512_mask_cmpeq_epi16_mask(lanes, bits, mask_bits);
  return _mm512_mask_cmplt_epu16_mask(lanes, _mm512_sub_epi16(bits, _mm512_set1_epi16(1)), _mm512_set1_epi16(0x7f));
}

// Whether rows [begin, end) of a matrix (rows rs apart, cols values cs apart in each)
// hold only values bf16_units_exact accepts.
CTL_CPU_AVX512_SCAN bool rows_exact(bool f16, const uint16_t* m, int64_t begin, int64_t end, int64_t cols, int64_t rs,
                                    int64_t cs) {
  auto bad = [f16](uint16_t x) {
    const unsigned magnitude = x & 0x7fffu;
    return f16 ? (x & 0x7c00u) == 0x7c00u : magnitude != 0 && magnitude < 0x80u;
  };
  for (int64_t i = begin; i < end; ++i) {
    const uint16_t* row = m + i * rs;
    if (cs == 1) {
      __mmask32 found = 0;
      int64_t j = 0;
      for (; j + 32 <= cols; j += 32) found |= inexact_lanes(f16, _mm512_loadu_si512(row + j), ~__mmask32{0});
      if (j < cols) {
        const __mmask32 lanes = static_cast<__mmask32>((1u << (cols - j)) - 1u);
        found |= inexact_lanes(f16, _mm512_maskz_loadu_epi16(lanes, row + j), lanes);
      }
      if (found) return false;
    } else {
      for (int64_t j = 0; j < cols; ++j) {
        if (bad(row[j * cs])) return false;
      }
    }
  }
  return true;
}

// True when the CPU's bf16 units (AMX tiles, vdpbf16ps) compute every product of this
// rows x cols 16-bit matrix exactly: f16 must be finite (its hi/lo split has no form for
// Inf and NaN: inf * 0 would appear), and bf16 must hold no subnormal, which tdpbf16ps
// and vdpbf16ps read as zero. The scan reads the whole matrix, from memory once it is
// larger than the caches: the pool's threads share it (a 1024 x 1024 bf16 matmul spent
// 2% of one thread's time here).
bool bf16_units_exact(ctl_dtype dtype, const uint16_t* m, int64_t rows, int64_t cols, int64_t rs, int64_t cs,
                      ThreadPool* pool) {
  if (cs != 1 && rs == 1) {  // scan the contiguous axis
    std::swap(rows, cols);
    std::swap(rs, cs);
  }
  const bool f16 = dtype == CTL_DTYPE_F16;
  constexpr int64_t kValuesPerPart = 1 << 17;  // 256 KiB
  std::atomic<bool> exact{true};
  parallel_for(pool, rows, std::max<int64_t>(1, kValuesPerPart / std::max<int64_t>(cols, 1)),
               [&](int64_t begin, int64_t end, unsigned) {
                 if (exact.load(std::memory_order_relaxed) && !rows_exact(f16, m, begin, end, cols, rs, cs)) {
                   exact.store(false, std::memory_order_relaxed);
                 }
               });
  return exact.load(std::memory_order_relaxed);
}

bool broadcast_over_batch(const Problem& p, int operand) {
  for (uint32_t axis = 0; axis < p.batch_rank; ++axis) {
    if (p.batch_strides[operand][axis] != 0) return false;
  }
  return true;
}

}  // namespace

// Inputs the bf16 units cannot take exactly (bf16_units_exact) go to the conversion path.
bool half_inputs_exact(const Problem& p, ThreadPool* pool) {
  const int64_t ars = p.a.strides[p.a.rank - 2], acs = p.a.strides[p.a.rank - 1];
  const int64_t brs = p.b.strides[p.b.rank - 2], bcs = p.b.strides[p.b.rank - 1];
  const bool a_once = broadcast_over_batch(p, 0), b_once = broadcast_over_batch(p, 1);
  for (int64_t index = 0; index < p.batches; ++index) {
    int64_t off[4];
    batch_offsets(p, index, off);
    if ((index == 0 || !a_once) && !bf16_units_exact(p.dtype, p.a.as<uint16_t>() + off[0], p.M, p.K, ars, acs, pool)) {
      return false;
    }
    if ((index == 0 || !b_once) && !bf16_units_exact(p.dtype, p.b.as<uint16_t>() + off[1], p.K, p.N, brs, bcs, pool)) {
      return false;
    }
  }
  return true;
}

namespace {

// From this depth on, f16 products sum three bf16 plane products (gemm_amx.h) instead of
// the four of the exact split. The one left out, a_lo b_lo, errs by at most 2^-16 |a b|
// per product (|lo| <= 2^-8 |x| with hi rounded to nearest), so by at most 2^-16 S with
// S = sum |a_k b_k|, where an f32-accumulated sum of K products is allowed (K + 2) 2^-24 S
// (docs/ops.md, conformance kSum): at K >= 1022 the omission is at most a quarter of that.
constexpr int64_t kF16PlanesMinDepth = 1024;

struct Plan {
  HalfKind kind;        // of each packed operand (kF16Hi and kF16Lo: see planes)
  int64_t chunks;       // packed depth of the whole product, in chunks
  int64_t blocks;       // depth blocks: chunks / kDepthChunks, rounded up
  int64_t depth_block;  // source depth of one depth block
  int64_t mc_block;     // rows of A packed at once
  int64_t b_panels;     // 16-column panels of B (a whole number of pairs)
  int64_t block_panel;  // values of one panel in one depth block
  // Deep f16: each operand is packed twice, hi plane then lo plane, and the product is
  // the sum of the plane pairs (hi, hi), (lo, hi), (hi, lo). Otherwise one plane, one pair.
  int64_t planes;
  int64_t pairs;
  int64_t a_plane, b_plane;          // 16-bit elements of one plane of an A block and of packed B
  int64_t a_size, b_size, acc_size;  // all planes of an A block and of packed B; floats of acc
  HalfKind plane_kind(int64_t plane) const {
    return planes == 1 ? kind : plane == 0 ? HalfKind::kF16Hi : HalfKind::kF16Lo;
  }
  // The A and B planes of pair `pair`.
  int64_t a_plane_of(int64_t pair) const { return pair == 1 ? 1 : 0; }
  int64_t b_plane_of(int64_t pair) const { return pair == 2 ? 1 : 0; }
};

struct Operands {
  const uint16_t* a;
  int64_t ars, acs;
  const uint16_t* b;
  int64_t brs, bcs;
};

// Packed operands are stored depth block by depth block, each block holding every panel
// side by side (plan.block_panel values per panel: kDepthChunks chunks, or fewer when
// the whole depth is one shorter block, so that small products allocate and touch less). A block's slices are then
// contiguous: with whole-depth panels, a power-of-two panel stride put every panel's slice on the same L2 sets and
// halved the tile rate (measured).

// Packs all of B (every depth, every column), in parallel over panels.
void pack_b(const Problem& p, const Plan& plan, const Operands& x, uint16_t* b_pack, ThreadPool* pool) {
  parallel_for(pool, plan.b_panels, 4, [&](int64_t begin, int64_t end, unsigned) {
    for (int64_t q = begin; q < end; ++q) {
      const int64_t cols = p.N - 16 * q;
      for (int64_t plane = 0; plane < plan.planes; ++plane) {
        for (int64_t block = 0; block < plan.blocks; ++block) {
          const int64_t k0 = block * plan.depth_block;
          const int64_t chunks = std::min(kDepthChunks, plan.chunks - block * kDepthChunks);
          const uint16_t* src = cols > 0 ? x.b + k0 * x.brs + 16 * q * x.bcs : x.b;
          amx_pack_b(plan.plane_kind(plane),
                     b_pack + plane * plan.b_plane + (block * plan.b_panels + q) * plan.block_panel, src, x.brs, x.bcs,
                     cols, std::min(plan.depth_block, p.K - k0), chunks);
        }
      }
    }
  });
}

// One product over a packed B: out = act(alpha a @ b + beta out + bias). Blocks of A rows
// are shared out (with a pool) or all done with slot `slot`'s buffers (without).
void gemm(const Problem& p, const Plan& plan, const Operands& x, const HalfOutput& out, uint16_t* a_buffers,
          float* acc_buffers, const uint16_t* b_pack, ThreadPool* pool, unsigned slot) {
  const int64_t m_blocks = (p.M + plan.mc_block - 1) / plan.mc_block;
  const int64_t a_panels = plan.mc_block / 16;
  // Row blocks are claimed first come, first served, so a thread on a slower CPU takes
  // fewer of them; which thread computes a block does not change its result.
  std::atomic<int64_t> next_block{0};
  const int64_t parts = pool ? std::min<int64_t>(m_blocks, pool->size()) : 1;
  parallel_for(pool, parts, 1, [&](int64_t, int64_t, unsigned part) {
    const unsigned s = pool ? part : slot;
    uint16_t* const a_pack = a_buffers + s * plan.a_size;
    float* const acc = plan.acc_size ? acc_buffers + s * plan.acc_size : nullptr;
    alignas(64) float tile[32 * 32];
    amx_begin();
    for (int64_t block; (block = next_block.fetch_add(1, std::memory_order_relaxed)) < m_blocks;) {
      const int64_t ic = block * plan.mc_block;
      const int64_t mc = std::min(plan.mc_block, p.M - ic);
      const int64_t row_pairs = (mc + 31) / 32;
      for (int64_t panel = 0; panel < 2 * row_pairs; ++panel) {
        const int64_t rows = mc - 16 * panel;
        for (int64_t plane = 0; plane < plan.planes; ++plane) {
          for (int64_t db = 0; db < plan.blocks; ++db) {
            const int64_t k0 = db * plan.depth_block;
            const int64_t chunks = std::min(kDepthChunks, plan.chunks - db * kDepthChunks);
            const uint16_t* src = rows > 0 ? x.a + (ic + 16 * panel) * x.ars + k0 * x.acs : x.a;
            amx_pack_a(plan.plane_kind(plane),
                       a_pack + plane * plan.a_plane + (db * a_panels + panel) * plan.block_panel, src, x.ars, x.acs,
                       rows, std::min(plan.depth_block, p.K - k0), chunks);
          }
        }
      }
      // Every plane pair's depth blocks in turn accumulate into the same tiles.
      const int64_t steps = plan.pairs * plan.blocks;
      for (int64_t jc = 0; jc < p.N; jc += kNc) {
        const int64_t nc = std::min(kNc, p.N - jc);
        const int64_t col_pairs = (nc + 31) / 32;
        for (int64_t step = 0; step < steps; ++step) {
          const int64_t pair = step / plan.blocks, db = step % plan.blocks;
          const int64_t chunks = std::min(kDepthChunks, plan.chunks - db * kDepthChunks);
          const bool first = step == 0, last = step + 1 == steps;
          const uint16_t* const a_slices = a_pack + plan.a_plane_of(pair) * plan.a_plane;
          const uint16_t* const b_slices = b_pack + plan.b_plane_of(pair) * plan.b_plane;
          for (int64_t q = 0; q < col_pairs; ++q) {
            const uint16_t* b0 = b_slices + (db * plan.b_panels + jc / 16 + 2 * q) * plan.block_panel;
            for (int64_t ir = 0; ir < row_pairs; ++ir) {
              const uint16_t* a0 = a_slices + (db * a_panels + 2 * ir) * plan.block_panel;
              float* acc_tile = acc ? acc + 32 * ir * kNc + 32 * q : nullptr;
              if (last) {
                amx_kernel_32x32(chunks, a0, a0 + plan.block_panel, b0, b0 + plan.block_panel,
                                 first ? nullptr : acc_tile, kNc, tile, 32);
                merge_half_tile(out, tile, 32, ic + 32 * ir, jc + 32 * q, std::min<int64_t>(32, mc - 32 * ir),
                                std::min<int64_t>(32, nc - 32 * q));
              } else {
                amx_kernel_32x32(chunks, a0, a0 + plan.block_panel, b0, b0 + plan.block_panel,
                                 first ? nullptr : acc_tile, kNc, acc_tile, kNc);
              }
            }
          }
        }
      }
    }
    amx_end();
  });
}

}  // namespace

bool matmul_half(const OpContext& ctx, const Problem& p, ctl_status** status) {
  *status = nullptr;
  if ((p.dtype != CTL_DTYPE_F16 && p.dtype != CTL_DTYPE_BF16) || p.K == 0 || !amx_bf16_usable()) return false;
  if (!half_inputs_exact(p, ctx.pool)) return false;

  Plan plan{};
  const bool planes = p.dtype == CTL_DTYPE_F16 && p.K >= kF16PlanesMinDepth;
  plan.kind = p.dtype == CTL_DTYPE_BF16 ? HalfKind::kBf16 : planes ? HalfKind::kF16Hi : HalfKind::kF16Split;
  plan.planes = planes ? 2 : 1;
  plan.pairs = planes ? 3 : 1;
  plan.chunks = (p.K * packed_per_depth(plan.kind) + kAmxChunk - 1) / kAmxChunk;
  plan.blocks = (plan.chunks + kDepthChunks - 1) / kDepthChunks;
  plan.depth_block = kDepthChunks * kAmxChunk / packed_per_depth(plan.kind);
  const unsigned threads = ctx.threads();
  const int64_t M = p.M, N = p.N;
  const bool per_batch = one_product_per_thread(p, threads);
  int64_t mc_block = kMc;
  if (!per_batch) {  // about kBlocksPerThread blocks of rows per thread, and none under kMinRows
    constexpr int64_t kBlocksPerThread = 4, kMinRows = 64;
    const int64_t share = (M + kBlocksPerThread * threads - 1) / (kBlocksPerThread * threads);
    mc_block = std::min(kMc, std::max<int64_t>(kMinRows, (share + 31) / 32 * 32));
  }
  plan.mc_block = mc_block;
  plan.b_panels = (N + 31) / 32 * 2;
  // Whole-depth packing costs 2 (bf16), 8 (f16, four products) or 4 (f16, two planes) bytes
  // per element: past 1 GiB for B or for one thread's A block, the f32 path's bounded blocks
  // are the better trade.
  constexpr int64_t kMaxPacked = int64_t{1} << 29;
  plan.block_panel = std::min(kDepthChunks, plan.chunks) * kAmxPanelChunk;
  if (!checked_mul(plan.blocks * plan.b_panels, plan.block_panel, &plan.b_plane) ||
      !checked_mul(plan.blocks * (mc_block / 16), plan.block_panel, &plan.a_plane) ||
      !checked_mul(plan.planes, plan.b_plane, &plan.b_size) || plan.b_size > kMaxPacked ||
      !checked_mul(plan.planes, plan.a_plane, &plan.a_size) || plan.a_size > kMaxPacked) {
    return false;
  }
  plan.acc_size = plan.pairs * plan.blocks > 1 ? mc_block * kNc : 0;
  // B broadcast over the batch is packed once for every product; otherwise once per
  // product, by each thread for itself when threads take whole products.
  const bool b_once = broadcast_over_batch(p, 1);
  const int64_t b_packs = b_once || !per_batch ? 1 : threads;
  Scratch scratch(ctx);
  *status =
      scratch.allocate(ctx, static_cast<size_t>(threads * plan.a_size + b_packs * plan.b_size) * sizeof(uint16_t) +
                                static_cast<size_t>(threads * plan.acc_size) * sizeof(float));
  if (*status) return true;
  float* const acc_buffers = scratch.as<float>();
  uint16_t* const a_buffers = reinterpret_cast<uint16_t*>(acc_buffers + threads * plan.acc_size);
  uint16_t* const b_buffers = a_buffers + threads * plan.a_size;

  const int64_t ors = p.out.strides[p.out.rank - 2], ocs = p.out.strides[p.out.rank - 1];
  const int64_t bias_rs = p.has_bias ? p.bias.strides[p.bias.rank - 2] : 0;
  const int64_t bias_cs = p.has_bias ? p.bias.strides[p.bias.rank - 1] : 0;
  auto operands = [&](int64_t index, int64_t off[4]) {
    batch_offsets(p, index, off);
    return Operands{p.a.as<uint16_t>() + off[0], p.a.strides[p.a.rank - 2], p.a.strides[p.a.rank - 1],
                    p.b.as<uint16_t>() + off[1], p.b.strides[p.b.rank - 2], p.b.strides[p.b.rank - 1]};
  };
  if (b_once) {
    int64_t off[4];
    pack_b(p, plan, operands(0, off), b_buffers, ctx.pool);
  }
  auto one = [&](int64_t index, ThreadPool* pool, unsigned slot) {
    int64_t off[4];
    const Operands x = operands(index, off);
    uint16_t* const b_pack = b_buffers + (b_once || pool ? 0 : slot) * plan.b_size;
    if (!b_once) pack_b(p, plan, x, b_pack, pool);
    HalfOutput out{};
    out.dtype = p.dtype;
    out.out = reinterpret_cast<char*>(p.out.as<uint16_t>() + off[2]);
    out.ors = ors;
    out.ocs = ocs;
    out.bias = p.has_bias ? reinterpret_cast<const char*>(p.bias.as<uint16_t>() + off[3]) : nullptr;
    out.brs = bias_rs;
    out.bcs = bias_cs;
    out.alpha = static_cast<float>(p.alpha);
    out.beta = static_cast<float>(p.beta);
    out.activation = p.activation;
    gemm(p, plan, x, out, a_buffers, acc_buffers, b_pack, pool, slot);
  };
  if (per_batch) {
    parallel_for(ctx.pool, p.batches, 1, [&](int64_t begin, int64_t end, unsigned part) {
      for (int64_t index = begin; index < end; ++index) one(index, nullptr, part);
    });
  } else {
    for (int64_t index = 0; index < p.batches; ++index) one(index, ctx.pool, 0);
  }
  return true;
}

}  // namespace catalyst::cpu
