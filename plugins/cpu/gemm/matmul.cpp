// matmul.cpp — batched matmul with alpha, beta, a broadcast bias and a fused activation.
//
// Floats use a packed GEMM (BLIS-style): for each block of B (KC x NC) packed into
// NR-wide panels and each block of A (MC x KC) packed into MR-tall panels, a
// register-blocked micro-kernel (gemm_kernels.h) computes MR x NR tiles and applies
// alpha, beta, bias and activation as it writes each tile to C. Packing reads A and B
// through their strides, so transposed or broadcast operands cost nothing extra. f32 and
// f64 accumulate in their own type; f16/bf16 in f32, either on the bf16 dot-product
// kernel (bf16 on CPUs with AVX512-BF16) or converted to f32 while packing, and each
// finished tile is rounded into the output while it is in L1 (half_merge.h). Threads
// share one product by claiming cells of C, their own run of cells first, each packing
// the B it needs itself (gemm_schedule.h), or take whole products when a batch has many
// small ones.
// Integers use a plain row loop that wraps in 64 bits.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "cast_rules.h"
#include "catalyst/sdk/bind_matmul.hpp"
#include "dtype_dispatch.h"
#include "gemm_half.h"
#include "gemm_kernels.h"
#include "gemm_schedule.h"
#include "half_merge.h"
#include "kernels.h"
#include "matmul_problem.h"

namespace catalyst::cpu {
namespace {

// Blocking for this tile shape (12 x 32 f32 on AVX-512) and a 48 KiB L1d / 2 MiB L2 per
// core: a packed B block (KC x NC, 1 MiB) stays in L2 and its panels stream from there;
// a 12-row A panel (12 x KC, 12 KiB) stays in L1 while it meets every panel of the block.
// A cell's rows of A (at most MC x KC, 1.5 MiB) are packed for each block of B they
// meet, so A is packed once per 1024 columns and B once per product (gemm_schedule.h).
// On a Zen 5 (1 MiB L2) KC from 128 to 768, NC from 256 to 2048 and MC from 96 to 1536
// were all within 3% of these at N = 2048 and 4096 (in-process A/B, 1 and 2 threads).
constexpr int64_t kKc = 256;
// The bf16 dot-product kernel's depth blocks are deeper: one block up to K = 2048 keeps
// an f16/bf16 tile out of scratch C (FloatProduct::compute). Zen 5, N = 2048, against
// 512-deep blocks: 1 thread 378 -> 391 GFLOP/s, 2 threads 672 -> 686; N = 1024 the same.
constexpr int64_t kKcPairs = 2048;
constexpr int64_t kMc = 1536;
constexpr int64_t kNc = 1024;
// Up to this N the kernel reads row-major A in place rather than packing it (see rows_a).
constexpr int64_t kRowsAMaxN = 512;
// L2 per core: an A read in place by every column chunk must fit in half of it.
constexpr double kL2Bytes = 2 << 20;
// Products with at most this many rows (and A read in place) let each thread pack its own
// columns of B (see `independent`).
constexpr int64_t kIndependentMaxRows = 256;

// ---- float GEMM -------------------------------------------------------------------------

// The largest tile of any kernel (12 x 32 on AVX-512).
constexpr int kMaxTile = 12 * 32;

// The depth of each block of a product of depth K: at most `most`, and all blocks about
// equal, so that no short last block pays a whole pass over the C tile for a few steps
// (K = 784 runs as 4 x 196 rather than 3 x 256 + 16; K = 257 as 129 + 128), each a
// multiple of the kernel's depth group kp (so only the last can end in a part group). It
// depends on K alone, so the order of every sum is still the same for any thread count.
int64_t depth_step(int64_t K, int64_t most, int kp) {
  const int64_t blocks = (K + most - 1) / most;
  const int64_t step = (K + blocks - 1) / blocks;
  return (step + kp - 1) / kp * kp;
}

// Depth kc as packed: a whole number of kp-deep groups (gemm_kernels.h).
inline int64_t packed_depth(int64_t kc, int kp) {
  return (kc + kp - 1) / kp * kp;
}

// One source value as packed: converted to the kernel's type (f16/bf16 to f32), or bf16
// bits kept as they are for the bf16 dot-product kernel.
template <class P, class S>
inline P packed_value(S x) {
  if constexpr (std::is_same_v<P, uint16_t>) {
    return x.bits;
  } else {
    return static_cast<P>(load(x));
  }
}

// Packs rows [0, mc) x depth [0, kc) of A into MR-tall panels of kp-deep groups,
// zero-padding the last panel's rows and the last group.
template <class P, class S>
void pack_a(P* __restrict dst, const S* a, int64_t rs, int64_t cs, int64_t mc, int64_t kc, int mr, int kp) {
  const int64_t groups = (kc + kp - 1) / kp;
  for (int64_t ir = 0; ir < mc; ir += mr) {
    const int64_t m = std::min<int64_t>(mr, mc - ir);
    const S* panel = a + ir * rs;
    for (int64_t g = 0; g < groups; ++g) {
      for (int r = 0; r < kp; ++r) {
        const int64_t k = g * kp + r;
        P* out = dst + g * mr * kp + r;
        int64_t i = 0;
        if (k < kc) {
          for (; i < m; ++i) out[i * kp] = packed_value<P>(panel[i * rs + k * cs]);
        }
        for (; i < mr; ++i) out[i * kp] = P(0);
      }
    }
    dst += mr * groups * kp;
  }
}

// Packs depth [0, kc) x columns [0, n) of B into one NR-wide panel of kp-deep groups,
// zero-padding the columns past n and the last group.
template <class P, class S>
void pack_b_panel(P* __restrict dst, const S* b, int64_t rs, int64_t cs, int64_t n, int64_t kc, int nr, int kp) {
  const int64_t depth = packed_depth(kc, kp);
  for (int64_t k = 0; k < depth; ++k) {
    P* out = dst + (k / kp) * nr * kp + k % kp;
    const S* row = b + k * rs;
    int64_t j = 0;
    if (k < kc) {
      if (cs == 1) {
        for (; j < n; ++j) out[j * kp] = packed_value<P>(row[j]);
      } else {
        for (; j < n; ++j) out[j * kp] = packed_value<P>(row[j * cs]);
      }
    }
    for (; j < nr; ++j) out[j * kp] = P(0);
  }
}

// Where a tile's results go: straight into the output (f32/f64 output with unit column
// stride), or into an Acc scratch matrix that the epilogue then writes out; for f16/bf16
// outputs, each tile of scratch is merged into the output (`half`) as its last depth
// block finishes, and a product of one depth block has no scratch (c is null): each tile
// goes through a stack copy.
template <class Acc>
struct Target {
  Acc* c;
  int64_t ldc;
  bool direct;  // beta, bias and activation are applied by the kernel rather than the epilogue
  const Acc* bias;
  int64_t bias_rs, bias_cs;
  HalfOutput half;  // half.out is null unless the output is f16/bf16
};

// One product C = alpha * A @ B (+ beta/bias/activation when direct) of one batch element,
// as the pack and compute tasks of a GemmSchedule. The kernel multiplies panels of P and
// sums in Acc; S is the operands' type. With `rows_a` the kernel reads A's rows in place
// (unit column stride) instead of a packed copy.
template <class P, class Acc, class S>
struct FloatProduct {
  // The kernel's own packers (and reading A in place) need operands already in its type.
  static constexpr bool kNative = std::is_same_v<S, P> || (std::is_same_v<S, bf16> && std::is_same_v<P, uint16_t>);

  // f16 or bf16 converted while packing for an f32 kernel: vector packers where the kernel
  // has them.
  static constexpr bool kHalfToF32 = is_half_v<S> && std::is_same_v<P, float>;

  const Problem& p;
  const GemmKernel<P, Acc>& kernel;
  Matrix a, b;
  Target<Acc> t;
  bool rows_a;
  P* bpacks;  // the schedule's buffers, b_size apart
  int64_t b_size;
  const GemmHalfPackers* half_packers;  // with kHalfToF32, or null

  // Panels [q0, q1) of the block into its buffer.
  void pack(const GemmBlock& k, int64_t q0, int64_t q1) const {
    const int nr = kernel.nr, kp = kernel.kp;
    const S* const pb = reinterpret_cast<const S*>(b.data);
    P* const buffer = bpacks + k.buffer * b_size;
    for (int64_t q = q0; q < q1; ++q) {
      const S* src = pb + k.pc * b.rs + (k.jc + q * nr) * b.cs;
      const int n = static_cast<int>(std::min<int64_t>(nr, k.nc - q * nr));
      P* const dst = buffer + q * nr * packed_depth(k.kc, kp);
      if constexpr (kNative) {
        const P* const native = reinterpret_cast<const P*>(src);
        if (kernel.pack_b && b.cs == 1) {
          kernel.pack_b(native, b.rs, k.kc, n, dst);
          continue;
        }
        if (kernel.pack_b_t && b.rs == 1) {
          kernel.pack_b_t(native, b.cs, k.kc, n, dst);
          continue;
        }
      }
      if constexpr (kHalfToF32) {
        if (half_packers && b.cs == 1) {
          half_packers->pack_b(reinterpret_cast<const uint16_t*>(src), b.rs, k.kc, n, dst);
          continue;
        }
        if (half_packers && b.rs == 1) {
          half_packers->pack_b_t(reinterpret_cast<const uint16_t*>(src), b.cs, k.kc, n, dst);
          continue;
        }
      }
      pack_b_panel<P, S>(dst, src, b.rs, b.cs, n, k.kc, nr, kp);
    }
  }

  // One cell from the packed block, packing its A rows into `apack` first unless rows_a.
  // `fresh`: the cell's panels of B are not packed yet (gemm_schedule.h). Where the kernel
  // can (f32 with a row-major B), its first row of tiles packs them as it goes
  // (run_packing_b, run_rows_packing_b); otherwise they are packed first.
  void compute(const GemmBlock& k, const GemmCell& cell, bool fresh, P* apack) const {
    const int mr = kernel.mr, nr = kernel.nr, kp = kernel.kp;
    const int64_t kcp = packed_depth(k.kc, kp);
    const S* const pa = reinterpret_cast<const S*>(a.data);
    const int64_t mc = cell.m1 - cell.m0;
    const int64_t q0 = (cell.n0 - k.jc) / nr, q1 = (cell.n1 - k.jc + nr - 1) / nr;
    bool pack_while_computing = false;
    if constexpr (kNative) {
      pack_while_computing =
          fresh && b.cs == 1 && (rows_a ? kernel.run_rows_packing_b != nullptr : kernel.run_packing_b != nullptr);
    }
    if (fresh && !pack_while_computing) pack(k, q0, q1);
    if (!rows_a) {
      bool packed = false;
      if constexpr (kNative) {
        const P* const native = reinterpret_cast<const P*>(pa);
        if (kernel.pack_a && a.rs == 1) {
          for (int64_t ir = 0; ir < mc; ir += mr) {
            kernel.pack_a(native + (cell.m0 + ir) + k.pc * a.cs, a.cs, k.kc,
                          static_cast<int>(std::min<int64_t>(mr, mc - ir)), apack + ir * kcp);
          }
          packed = true;
        } else if (kernel.pack_a_rows && a.cs == 1) {
          for (int64_t ir = 0; ir < mc; ir += mr) {
            kernel.pack_a_rows(native + (cell.m0 + ir) * a.rs + k.pc, a.rs, k.kc,
                               static_cast<int>(std::min<int64_t>(mr, mc - ir)), apack + ir * kcp);
          }
          packed = true;
        }
      }
      if constexpr (kHalfToF32) {
        const uint16_t* const bits = reinterpret_cast<const uint16_t*>(pa);
        if (half_packers && a.cs == 1) {
          for (int64_t ir = 0; ir < mc; ir += mr) {
            half_packers->pack_a_rows(bits + (cell.m0 + ir) * a.rs + k.pc, a.rs, k.kc,
                                      static_cast<int>(std::min<int64_t>(mr, mc - ir)), apack + ir * kcp);
          }
          packed = true;
        } else if (half_packers && a.rs == 1) {
          for (int64_t ir = 0; ir < mc; ir += mr) {
            half_packers->pack_a(bits + (cell.m0 + ir) + k.pc * a.cs, a.cs, k.kc,
                                 static_cast<int>(std::min<int64_t>(mr, mc - ir)), apack + ir * kcp);
          }
          packed = true;
        }
      }
      if (!packed) pack_a<P, S>(apack, pa + cell.m0 * a.rs + k.pc * a.cs, a.rs, a.cs, mc, k.kc, mr, kp);
    }
    TileEpilogue<Acc> e{};
    e.alpha = static_cast<Acc>(p.alpha);
    e.beta = t.direct ? static_cast<Acc>(p.beta) : Acc(0);
    e.bias_rs = t.bias_rs;
    e.bias_cs = t.bias_cs;
    e.activation = t.direct ? p.activation : CTL_ACTIVATION_NONE;
    e.overwrite = k.first;
    e.finish = t.direct && k.last;
    bool merge = t.half.out && k.last;
    // The kernel rounds the last depth block's tiles into the output itself where the
    // merge's work is only a bias add and ReLU (half_out, gemm_kernels.h): half of a
    // one-block product's tiles then never touch memory as f32.
    const bool round_in_kernel =
        merge && kernel.rounds_half && t.half.ocs == 1 && t.half.beta == 0.0f &&
        (t.half.activation == CTL_ACTIVATION_NONE || t.half.activation == CTL_ACTIVATION_RELU) &&
        (!t.half.bias || t.half.bcs == 0 || t.half.bcs == 1);
    if (round_in_kernel) {
      merge = false;
      e.half_ld = t.half.ors;
      e.half_brs = t.half.brs;
      e.half_bcs = t.half.bcs;
      e.half_f16 = t.half.dtype == CTL_DTYPE_F16;
      e.half_relu = t.half.activation == CTL_ACTIVATION_RELU;
    }
    const bool local_tile = !t.c;  // see Target
    alignas(64) Acc local[kMaxTile];
    P* const buffer = bpacks + k.buffer * b_size;
    for (int64_t ir = 0; ir < mc; ir += mr) {
      const int64_t row = cell.m0 + ir;
      const int m = static_cast<int>(std::min<int64_t>(mr, mc - ir));
      for (int64_t q = q0; q < q1; ++q) {
        const int64_t col = k.jc + q * nr;
        const int n = static_cast<int>(std::min<int64_t>(nr, k.nc - q * nr));
        P* const panel = buffer + q * nr * kcp;
        e.bias = t.bias ? t.bias + row * t.bias_rs + col * t.bias_cs : nullptr;
        if (round_in_kernel) {
          e.half_out = reinterpret_cast<uint16_t*>(t.half.out) + row * t.half.ors + col;
          e.half_bias = t.half.bias
                            ? reinterpret_cast<const uint16_t*>(t.half.bias) + row * t.half.brs + col * t.half.bcs
                            : nullptr;
        }
        Acc* const c = local_tile ? local : t.c + row * t.ldc + col;
        const int64_t ldc = local_tile ? nr : t.ldc;
        if (pack_while_computing && ir == 0) {  // only where kNative
          const P* const source = reinterpret_cast<const P*>(b.data) + k.pc * b.rs + col;
          if (rows_a) {
            kernel.run_rows_packing_b(k.kc, reinterpret_cast<const P*>(pa + row * a.rs + k.pc), a.rs, source, b.rs,
                                      panel, c, ldc, m, n, e);
          } else {
            kernel.run_packing_b(k.kc, apack + ir * kcp, source, b.rs, panel, c, ldc, m, n, e);
          }
        } else if (rows_a) {  // only where kNative
          kernel.run_rows(k.kc, reinterpret_cast<const P*>(pa + row * a.rs + k.pc), a.rs, panel, c, ldc, m, n, e);
        } else {
          kernel.run(k.kc, apack + ir * kcp, panel, c, ldc, m, n, e);
        }
        if constexpr (std::is_same_v<Acc, float>) {
          if (merge) merge_half_tile(t.half, c, ldc, row, col, m, n);
        }
      }
    }
  }
};

// out = act(C + beta * out + bias) for outputs not written directly; C may be NULL (K == 0).
template <class Acc, class T>
void epilogue(const Problem& p, const Acc* c, T* out, int64_t ors, int64_t ocs, const T* bias, int64_t brs, int64_t bcs,
              ThreadPool* pool) {
  parallel_for(pool, p.M, std::max<int64_t>(1, 16384 / std::max<int64_t>(p.N, 1)),
               [&](int64_t begin, int64_t end, unsigned) {
                 for (int64_t i = begin; i < end; ++i) {
                   for (int64_t j = 0; j < p.N; ++j) {
                     Acc v = c ? c[i * p.N + j] : Acc(0);
                     T* o = out + i * ors + j * ocs;
                     if (p.beta != 0) v += static_cast<Acc>(p.beta) * static_cast<Acc>(load(*o));
                     if (bias) v += static_cast<Acc>(load(bias[i * brs + j * bcs]));
                     *o = store<T>(activate(v, p.activation));
                   }
                 }
               });
}

// One float product on `kernel`: panels of P, sums in Acc, operands and output of type T.
template <class T, class P, class Acc>
ctl_status* gemm(const OpContext& ctx, const Problem& p, const GemmKernel<P, Acc>& kernel) {
  using Product = FloatProduct<P, Acc, T>;
  const int64_t M = p.M, N = p.N, K = p.K;
  const int64_t ors = p.out.strides[p.out.rank - 2], ocs = p.out.strides[p.out.rank - 1];
  const int64_t brs = p.has_bias ? p.bias.strides[p.bias.rank - 2] : 0;
  const int64_t bcs = p.has_bias ? p.bias.strides[p.bias.rank - 1] : 0;
  const int64_t ars = p.a.strides[p.a.rank - 2], acs = p.a.strides[p.a.rank - 1];
  const int64_t bkrs = p.b.strides[p.b.rank - 2], bkcs = p.b.strides[p.b.rank - 1];
  const size_t es = sizeof(T);

  const bool direct = std::is_same_v<T, Acc> && (ocs == 1 || N == 1);
  const int64_t threads = ctx.threads();
  const bool per_batch = one_product_per_thread(p, threads);
  // A product this small is done before a second thread could join in: up to 40^3
  // multiply-adds two threads took longer than one (a 24^3 product 1.8 vs 3.8 us), and
  // from 64^3 they win.
  constexpr double kSplitWork = 48.0 * 48 * 48;
  const int64_t sharing = !per_batch && product_work(p) > kSplitWork ? threads : 1;
  // Reading A in place saves packing it, which matters when each packed A block would be
  // used by few B panels (small N); large N packs, so that a 12-row panel sits densely in
  // L1 whatever A's row stride (rows 4 KiB apart would all share one L1 set).
  const bool rows_a = Product::kNative && kernel.run_rows && acs == 1 && N <= kRowsAMaxN;
  // Threads walk the product block by block (gemm_schedule.h) unless A is read in place
  // and has few rows: then B is most of the data, and cells of whole columns that run
  // through the depth, each packing only its own panels of B, pack every panel once
  // (while A, small enough to stay in L2, is read again by every column chunk), where
  // blocks mode packs each block once per thread. In-process A/B on Zen 5, 2 threads,
  // independent against blocks mode: 128^3 1.07-1.4x, 256^3 1.09x; 128x784x512,
  // 192x784x512, 256x512x512 and 64x1024x1024 within 1%. (Against the earlier shared
  // packing, on a Xeon: 512^3 0.93x and 2048x128x384 0.92x, which M <= 256 leaves out.)
  const bool independent =
      rows_a && M <= kIndependentMaxRows && static_cast<double>(M) * static_cast<double>(K) * sizeof(P) <= kL2Bytes / 2;
  const int64_t kc_step = depth_step(K, kernel.kp == 1 ? kKc : kKcPairs, kernel.kp);
  const GemmSchedule shape(M, N, K, kernel.mr, kernel.nr, kc_step, kNc, kMc, sharing, independent);
  // Slots: one per thread taking whole products, or one shared by all. A slot holds the
  // schedule's counters, then a packed-B buffer per sharing thread, then an A block per
  // sharing thread (none with rows_a).
  const int64_t slots = per_batch ? std::min(threads, p.batches) : 1;
  const size_t counter_bytes = (shape.counter_bytes() + 63) / 64 * 64;
  const int64_t b_size = std::min(kNc, (N + kernel.nr - 1) / kernel.nr * kernel.nr) * kc_step;
  const int64_t a_size = rows_a ? 0 : shape.row_chunk() * kc_step;
  const size_t slot_bytes =
      (counter_bytes + static_cast<size_t>(shape.buffers() * b_size + sharing * a_size) * sizeof(P) + 63) / 64 * 64;
  // Scratch C for outputs not written directly, but for f16/bf16 products of one depth
  // block, whose tiles go through the stack (Target).
  const bool stack_tiles = is_half_v<T> && kc_step >= K && kernel.mr * kernel.nr <= kMaxTile;
  const int64_t c_size = direct || stack_tiles ? 0 : M * N;
  Scratch scratch(ctx);
  CTL_SDK_RETURN_IF_ERROR(
      scratch.allocate(ctx, slots * slot_bytes + static_cast<size_t>(slots * c_size) * sizeof(Acc)));
  char* const base = scratch.as<char>();
  Acc* const cs = reinterpret_cast<Acc*>(base + slots * slot_bytes);

  // The target of batch element `index`, with scratch C number `slot` when not direct.
  auto target_of = [&](int64_t index, int64_t slot, T** out, const T** bias, Matrix* am, Matrix* bm) {
    int64_t off[4];
    batch_offsets(p, index, off);
    *am = Matrix{p.a.data + off[0] * es, ars, acs};
    *bm = Matrix{p.b.data + off[1] * es, bkrs, bkcs};
    *out = p.out.as<T>() + off[2];
    *bias = p.has_bias ? p.bias.as<T>() + off[3] : nullptr;
    if (direct) {
      return Target<Acc>{reinterpret_cast<Acc*>(*out), ors, true, reinterpret_cast<const Acc*>(*bias), brs, bcs, {}};
    }
    Target<Acc> t{stack_tiles ? nullptr : cs + slot * c_size, N, false, nullptr, 0, 0, {}};
    if constexpr (is_half_v<T>) {  // alpha is applied by the kernel, the rest by the merge
      t.half = HalfOutput{.dtype = p.dtype,
                          .out = reinterpret_cast<char*>(*out),
                          .ors = ors,
                          .ocs = ocs,
                          .bias = reinterpret_cast<const char*>(*bias),
                          .brs = brs,
                          .bcs = bcs,
                          .alpha = 1.0f,
                          .beta = static_cast<float>(p.beta),
                          .activation = p.activation};
    }
    return t;
  };
  const GemmHalfPackers* half_packers = nullptr;
  if constexpr (Product::kHalfToF32) half_packers = std::is_same_v<T, f16> ? gemm_f16_packers() : gemm_bf16_packers();
  // One product's schedule and tasks, over the scratch of its slot.
  struct Run {
    GemmSchedule schedule;
    Product product;
    P* apacks;
  };
  auto start = [&](int64_t index, int64_t slot, T** out, const T** bias) {
    Matrix am, bm;
    const Target<Acc> t = target_of(index, slot, out, bias, &am, &bm);
    char* const memory = base + slot * slot_bytes;
    Run run{shape, Product{p, kernel, am, bm, t, rows_a, nullptr, b_size, half_packers}, nullptr};
    run.schedule.start(memory);
    run.product.bpacks = reinterpret_cast<P*>(memory + counter_bytes);
    run.apacks = run.product.bpacks + shape.buffers() * b_size;
    return run;
  };
  auto run_part = [&](Run& run, int64_t thread) {
    P* const apack = run.apacks + thread * a_size;
    run.schedule.run_part(thread, [&](const GemmBlock& k, const GemmCell& cell, bool fresh) {
      run.product.compute(k, cell, fresh, apack);
    });
  };
  // Outputs that are neither written directly nor merged tile by tile (f32/f64 with a
  // strided row) get the epilogue pass.
  const bool needs_epilogue = !direct && !is_half_v<T>;
  if (per_batch) {
    parallel_for(ctx.pool, p.batches, 1, [&](int64_t begin, int64_t end, unsigned part) {
      for (int64_t index = begin; index < end; ++index) {
        T* out;
        const T* bias;
        Run run = start(index, part, &out, &bias);
        run_part(run, 0);
        if (needs_epilogue) epilogue<Acc, T>(p, run.product.t.c, out, ors, ocs, bias, brs, bcs, nullptr);
      }
    });
    return nullptr;
  }
  for (int64_t index = 0; index < p.batches; ++index) {
    T* out;
    const T* bias;
    Run run = start(index, 0, &out, &bias);
    parallel_for(ctx.pool, sharing, 1, [&](int64_t, int64_t, unsigned part) { run_part(run, part); });
    if (needs_epilogue) epilogue<Acc, T>(p, run.product.t.c, out, ors, ocs, bias, brs, bcs, ctx.pool);
  }
  return nullptr;
}

// A float matmul on the best kernel for its dtype: bf16 on the dot-product kernel where
// the CPU has one and the inputs hold no subnormal it would read as zero; f16 and the
// remaining bf16 converted to f32 while packing.
template <class T>
ctl_status* matmul_float(const OpContext& ctx, const Problem& p) {
  using Acc = compute_t<T>;
  if (p.K == 0) {  // out = act(beta * out + bias)
    const int64_t ors = p.out.strides[p.out.rank - 2], ocs = p.out.strides[p.out.rank - 1];
    const int64_t brs = p.has_bias ? p.bias.strides[p.bias.rank - 2] : 0;
    const int64_t bcs = p.has_bias ? p.bias.strides[p.bias.rank - 1] : 0;
    for (int64_t index = 0; index < p.batches; ++index) {
      int64_t off[4];
      batch_offsets(p, index, off);
      epilogue<Acc, T>(p, nullptr, p.out.as<T>() + off[2], ors, ocs, p.has_bias ? p.bias.as<T>() + off[3] : nullptr,
                       brs, bcs, ctx.pool);
    }
    return nullptr;
  }
  if constexpr (std::is_same_v<T, double>) {
    return gemm<T>(ctx, p, gemm_kernel_f64());
  } else {
    if constexpr (std::is_same_v<T, bf16>) {
      const GemmKernel<uint16_t, float>* dot = gemm_kernel_bf16();
      if (dot && half_inputs_exact(p, ctx.pool)) return gemm<T>(ctx, p, *dot);
    }
    return gemm<T>(ctx, p, gemm_kernel_f32());
  }
}

// ---- integer matmul ---------------------------------------------------------------------

template <class T>
ctl_status* matmul_int(const OpContext& ctx, const Problem& p) {
  const int64_t N = p.N, K = p.K;
  const int64_t ars = p.a.strides[p.a.rank - 2], acs = p.a.strides[p.a.rank - 1];
  const int64_t bkrs = p.b.strides[p.b.rank - 2], bkcs = p.b.strides[p.b.rank - 1];
  const int64_t ors = p.out.strides[p.out.rank - 2], ocs = p.out.strides[p.out.rank - 1];
  const int64_t brs = p.has_bias ? p.bias.strides[p.bias.rank - 2] : 0;
  const int64_t bcs = p.has_bias ? p.bias.strides[p.bias.rank - 1] : 0;
  // alpha and beta are whole numbers (docs/ops.md) applied in the sum's wrapping 64-bit
  // arithmetic, and the result keeps its low bits, as every integer op does. (Scales other
  // than 1 once went through f64 and the cast rules: an overflowing i32 result saturated
  // where the reference wraps, and i64 past 2^53 lost its low bits.)
  const auto whole = [](double v, int64_t* out) {
    if (!(v == std::trunc(v) && std::fabs(v) < 0x1p63)) return false;
    *out = static_cast<int64_t>(v);
    return true;
  };
  int64_t alpha = 1, beta = 0;
  if (!whole(p.alpha, &alpha) || !whole(p.beta, &beta)) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "integer matmul needs whole alpha and beta, got %g and %g", p.alpha,
                    p.beta);
  }
  Scratch scratch(ctx);
  CTL_SDK_RETURN_IF_ERROR(scratch.allocate(ctx, sizeof(uint64_t) * static_cast<size_t>(N) * ctx.threads()));
  uint64_t* const rows = scratch.as<uint64_t>();
  const int64_t work = std::max<int64_t>(1, N * K);
  parallel_for(ctx.pool, p.batches * p.M, std::max<int64_t>(1, 65536 / work),
               [&](int64_t begin, int64_t end, unsigned part) {
                 uint64_t* const acc = rows + part * N;
                 for (int64_t r = begin; r < end; ++r) {
                   const int64_t index = r / p.M, i = r % p.M;
                   int64_t off[4];
                   batch_offsets(p, index, off);
                   const T* a = p.a.as<T>() + off[0] + i * ars;
                   const T* b = p.b.as<T>() + off[1];
                   T* out = p.out.as<T>() + off[2] + i * ors;
                   const T* bias = p.has_bias ? p.bias.as<T>() + off[3] + i * brs : nullptr;
                   for (int64_t j = 0; j < N; ++j) acc[j] = 0;
                   for (int64_t k = 0; k < K; ++k) {
                     const uint64_t av = static_cast<uint64_t>(static_cast<int64_t>(a[k * acs]));
                     const T* brow = b + k * bkrs;
                     if (bkcs == 1) {
                       for (int64_t j = 0; j < N; ++j)
                         acc[j] += av * static_cast<uint64_t>(static_cast<int64_t>(brow[j]));
                     } else {
                       for (int64_t j = 0; j < N; ++j)
                         acc[j] += av * static_cast<uint64_t>(static_cast<int64_t>(brow[j * bkcs]));
                     }
                   }
                   for (int64_t j = 0; j < N; ++j) {
                     T* o = out + j * ocs;
                     const T bv = bias ? bias[j * bcs] : T(0);
                     uint64_t v = static_cast<uint64_t>(alpha) * acc[j] + static_cast<uint64_t>(static_cast<int64_t>(bv));
                     if (beta != 0) v += static_cast<uint64_t>(beta) * static_cast<uint64_t>(static_cast<int64_t>(*o));
                     *o = static_cast<T>(v);
                   }
                 }
               });
  return nullptr;
}

// ---- validation -------------------------------------------------------------------------

}  // namespace

ctl_status* run_matmul(const OpContext& ctx) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(2, 3, 1, 1));
  Problem p{};
  bool has_bias = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "a", &p.a));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(1, "b", &p.b));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(2, "bias", &p.bias, true, &has_bias));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "out", &p.out));
  p.has_bias = has_bias;
  ctl_matmul_attrs attrs;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&attrs, sizeof attrs, CTL_MATMUL_ATTRS_STRUCT_SIZE, "ctl_matmul_attrs", &given));
  p.alpha = given && attrs.alpha_set ? attrs.alpha : 1.0;
  p.beta = given ? attrs.beta : 0.0;
  const int64_t activation = raw_enum(attrs.activation);  // zeroed (NONE) when attrs is NULL
  if (activation < CTL_ACTIVATION_NONE || activation > CTL_ACTIVATION_GELU_TANH) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs.activation %lld is not a ctl_activation",
                    static_cast<long long>(activation));
  }
  p.activation = static_cast<ctl_activation>(activation);
  p.dtype = p.a.dtype;
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(p.b, "input 1 (b)", p.dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(p.out, "output 0 (out)", p.dtype));
  if (has_bias) CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(p.bias, "input 2 (bias)", p.dtype));
  if (p.a.rank < 2 || p.b.rank < 2 || p.out.rank < 2) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "a, b and out need rank >= 2 (got %u, %u, %u)", p.a.rank, p.b.rank,
                    p.out.rank);
  }
  // The core applies transposes as strides; honour the flags anyway if a caller sets them.
  if (given && attrs.transpose_a) sdk::swap_last_two(&p.a);
  if (given && attrs.transpose_b) sdk::swap_last_two(&p.b);
  p.M = p.a.shape[p.a.rank - 2];
  p.K = p.a.shape[p.a.rank - 1];
  p.N = p.b.shape[p.b.rank - 1];
  if (p.b.shape[p.b.rank - 2] != p.K) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "a is (..., %lld, %lld) but b is (..., %lld, %lld)",
                    static_cast<long long>(p.M), static_cast<long long>(p.K),
                    static_cast<long long>(p.b.shape[p.b.rank - 2]), static_cast<long long>(p.N));
  }
  if (p.out.shape[p.out.rank - 2] != p.M || p.out.shape[p.out.rank - 1] != p.N) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "output 0 (out) is (..., %lld, %lld), expected (..., %lld, %lld)",
                    static_cast<long long>(p.out.shape[p.out.rank - 2]),
                    static_cast<long long>(p.out.shape[p.out.rank - 1]), static_cast<long long>(p.M),
                    static_cast<long long>(p.N));
  }
  p.batch_rank = p.out.rank - 2;
  p.batches = 1;
  for (uint32_t i = 0; i < p.batch_rank; ++i) {
    p.batch_shape[i] = p.out.shape[i];
    p.batches *= p.out.shape[i];
    p.batch_strides[2][i] = p.out.strides[i];
  }
  CTL_SDK_RETURN_IF_ERROR(sdk::matmul_batch_strides(ctx, p.a, "input 0 (a)", p.out, p.batch_strides[0]));
  CTL_SDK_RETURN_IF_ERROR(sdk::matmul_batch_strides(ctx, p.b, "input 1 (b)", p.out, p.batch_strides[1]));
  if (has_bias) {
    // The bias broadcasts to the whole output: check its last two axes like batch axes.
    if (p.bias.rank > p.out.rank) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input 2 (bias) has rank %u, more than the output's %u", p.bias.rank,
                      p.out.rank);
    }
    View bias = p.bias;  // padded to out's rank with broadcast axes
    const uint32_t pad = p.out.rank - p.bias.rank;
    for (uint32_t i = p.out.rank; i-- > 0;) {
      bias.shape[i] = i >= pad ? p.bias.shape[i - pad] : 1;
      bias.strides[i] = i >= pad ? p.bias.strides[i - pad] : 0;
      if (bias.shape[i] == 1) bias.strides[i] = 0;
      if (bias.shape[i] != 1 && bias.shape[i] != p.out.shape[i]) {
        return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input 2 (bias) does not broadcast to the output on axis %u", i);
      }
    }
    bias.rank = p.out.rank;
    p.bias = bias;
    CTL_SDK_RETURN_IF_ERROR(sdk::matmul_batch_strides(ctx, p.bias, "input 2 (bias)", p.out, p.batch_strides[3]));
  }
  if (p.batches == 0 || p.M == 0 || p.N == 0) return nullptr;
  ctl_status* status = nullptr;
  if (matmul_half(ctx, p, &status)) return status;  // f16/bf16 on AMX where it can run
  if (dispatch_float(p.dtype, [&](auto tag) { status = matmul_float<typename decltype(tag)::type>(ctx, p); })) {
    return status;
  }
  if (p.activation == CTL_ACTIVATION_NONE && p.dtype == CTL_DTYPE_I32) return matmul_int<int32_t>(ctx, p);
  if (p.activation == CTL_ACTIVATION_NONE && p.dtype == CTL_DTYPE_I64) return matmul_int<int64_t>(ctx, p);
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "dtype %s%s is not supported", dtype_name(p.dtype),
                  p.activation != CTL_ACTIVATION_NONE ? " with an activation" : "");
}

}  // namespace catalyst::cpu
