// reduce.cpp — sum, mean, max, min, argmax, argmin and logsumexp over any set of axes.
//
// The input's axes are split into kept axes (one output element per position) and
// reduced axes; each side is coalesced so that reducing the trailing axes of a contiguous
// tensor is one tight run per output. Outputs are spread over threads; when there are
// few outputs but long reductions, each reduction is cut into fixed-size chunks whose
// partial results are combined in chunk order, so the result never depends on the
// number of threads. Float sums accumulate in double, integer sums in 64 bits. f32 runs
// with unit stride use vec_kernels.h, and so do f32, f16 and bf16 sums over leading axes
// (a bias gradient's column sums), which add whole rows into a row of double accumulators.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "catalyst/sdk/bind_reduce.hpp"
#include "dtype_dispatch.h"
#include "half_convert.h"
#include "kernels.h"
#include "tensor_iter.h"
#include "vec_kernels.h"

namespace catalyst::cpu {
namespace {

constexpr int64_t kChunk = 32768;      // reduced elements per partial result
constexpr int64_t kSplitOutputs = 64;  // fewer outputs than this may split reductions
constexpr int64_t kElementsPerPart = 16384;

// Sum (and mean): double for floats, wrapping uint64 for integers.
template <class T>
struct SumReducer {
  using Acc = std::conditional_t<is_float_v<T>, double, uint64_t>;
  Acc acc = 0;
  void run(const T* p, int64_t n, int64_t stride, int64_t) {
    if constexpr (std::is_same_v<T, float>) {
      if (stride == 1) {
        acc += vec_kernels().row_sum(p, n);
        return;
      }
    }
    if (stride == 1) {
      // Eight independent partial sums: the compiler vectorises them without being
      // allowed to reassociate one long chain.
      Acc part[8] = {};
      int64_t i = 0;
      for (; i + 8 <= n; i += 8) {
        for (int j = 0; j < 8; ++j) part[j] += static_cast<Acc>(load(p[i + j]));
      }
      for (; i < n; ++i) part[0] += static_cast<Acc>(load(p[i]));
      acc += ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
    } else {
      for (int64_t i = 0; i < n; ++i) acc += static_cast<Acc>(load(p[i * stride]));
    }
  }
  void merge(const SumReducer& other) { acc += other.acc; }
};

// max / min; NaN is sticky (a NaN never loses a comparison, and nothing replaces it), and
// -0 < +0 as in IEEE 754-2019 maximum/minimum (and the elementwise ops).
template <class T, bool kMax>
struct ExtremeReducer {
  using C = compute_t<T>;
  static constexpr C start() {
    if constexpr (std::is_floating_point_v<C>) {
      return kMax ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity();
    } else {
      return kMax ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max();
    }
  }
  C acc = start();
  void take(C v) {
    if (v != v || (kMax ? v > acc : v < acc)) {
      acc = v;
    } else if constexpr (std::is_floating_point_v<C>) {
      if (v == acc && std::signbit(v) != std::signbit(acc) && std::signbit(v) != kMax) acc = v;
    }
  }
  void run(const T* p, int64_t n, int64_t stride, int64_t) {
    if constexpr (std::is_same_v<T, float>) {
      if (stride == 1 && n > 0) {
        take(kMax ? vec_kernels().row_max(p, n) : vec_kernels().row_min(p, n));
        return;
      }
    }
    for (int64_t i = 0; i < n; ++i) take(load(p[i * stride]));
  }
  void merge(const ExtremeReducer& other) { take(other.acc); }
};

// argmax / argmin: the first NaN wins, else the first of equal extremes.
template <class T, bool kMax>
struct ArgReducer {
  using C = compute_t<T>;
  C best{};
  int64_t index = -1;
  void take(C v, int64_t i) {
    if (index < 0 || (best == best && (v != v || (kMax ? v > best : v < best)))) {
      best = v;
      index = i;
    }
  }
  void run(const T* p, int64_t n, int64_t stride, int64_t first) {
    for (int64_t i = 0; i < n; ++i) take(load(p[i * stride]), first + i);
  }
  // `other` covers later indices, so ties keep ours.
  void merge(const ArgReducer& other) {
    if (other.index >= 0) take(other.best, other.index);
  }
};

// The second pass of logsumexp: sum of exp(x - m) with the row's max m.
template <class T>
struct SumExpReducer {
  double m = 0;
  double acc = 0;
  void run(const T* p, int64_t n, int64_t stride, int64_t) {
    for (int64_t i = 0; i < n; ++i) acc += std::exp(static_cast<double>(load(p[i * stride])) - m);
  }
  void merge(const SumExpReducer& other) { acc += other.acc; }
};

struct Geometry {
  Layout<2> kept;     // kept axes: x strides, out strides
  Layout<1> reduced;  // reduced axes: x strides
  int64_t outputs;
  int64_t count;  // reduced elements per output
};

// Element offsets in x and out of output number `o`.
void kept_offsets(const Geometry& g, int64_t o, int64_t* x_offset, int64_t* out_offset) {
  sdk::StridedWalker<2> walker(g.kept.rank, g.kept.shape);
  walker.add(g.kept.strides[0]);
  walker.add(g.kept.strides[1]);
  walker.seek(o);
  *x_offset = walker.offset(0);
  *out_offset = walker.offset(1);
}

template <class T, class R>
void reduce_range(const Geometry& g, const T* base, int64_t begin, int64_t end, R& r) {
  if (g.reduced.rank == 1) {
    const int64_t stride = g.reduced.strides[0][0];
    r.run(base + begin * stride, end - begin, stride, begin);
    return;
  }
  for_each_segment(g.reduced, begin, end, [&](const std::array<int64_t, 1>& off, int64_t n, int64_t linear) {
    r.run(base + off[0], n, g.reduced.inner_stride(0), linear);
  });
}

// Runs reducers made by make(o) over every output and hands each to finish(o, r, out_offset).
template <class T, class R, class Make, class Finish>
ctl_status* reduce_all(const OpContext& ctx, const Geometry& g, const T* x, Make make, Finish finish) {
  if (g.outputs < kSplitOutputs && g.count >= 2 * kChunk) {
    const int64_t chunks = (g.count + kChunk - 1) / kChunk;
    const int64_t tasks = g.outputs * chunks;
    Scratch partials(ctx);
    CTL_SDK_RETURN_IF_ERROR(partials.allocate(ctx, sizeof(R) * static_cast<size_t>(tasks)));
    R* const parts = partials.as<R>();
    parallel_for(ctx.pool, tasks, 1, [&](int64_t begin, int64_t end, unsigned) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t o = t / chunks, c = t % chunks;
        int64_t xo, oo;
        kept_offsets(g, o, &xo, &oo);
        R r = make(o);
        reduce_range(g, x + xo, c * kChunk, std::min(g.count, (c + 1) * kChunk), r);
        new (&parts[t]) R(r);
      }
    });
    for (int64_t o = 0; o < g.outputs; ++o) {
      R r = parts[o * chunks];
      for (int64_t c = 1; c < chunks; ++c) r.merge(parts[o * chunks + c]);
      int64_t xo, oo;
      kept_offsets(g, o, &xo, &oo);
      finish(o, r, oo);
    }
    return nullptr;
  }
  const int64_t grain = std::max<int64_t>(1, kElementsPerPart / std::max<int64_t>(g.count, 1));
  parallel_for(ctx.pool, g.outputs, grain, [&](int64_t begin, int64_t end, unsigned) {
    for_each_segment(g.kept, begin, end, [&](const std::array<int64_t, 2>& off, int64_t n, int64_t linear) {
      for (int64_t k = 0; k < n; ++k) {
        R r = make(linear + k);
        reduce_range(g, x + off[0] + k * g.kept.inner_stride(0), 0, g.count, r);
        finish(linear + k, r, off[1] + k * g.kept.inner_stride(1));
      }
    });
  });
  return nullptr;
}

// f32 sum / mean over one reduced axis whose outputs lie along x's unit-stride axis (a
// column sum, as a bias gradient is). The rows are cut into bands, and wide rows into
// blocks of columns, by the shape alone; each task adds its band's rows in order into its
// own row of double partial sums, then the calling thread adds the bands' partials in
// band order. So every output has one order of additions whatever the number of threads,
// and the tasks read x front to back. Tasks that each walked a 128-column block down all
// the rows read 512 bytes per row at a large stride: the prefetchers missed it, and a
// 2048 x 384 sum from L3 ran at 8.7 GB/s on a Xeon.
constexpr int64_t kColumnBlock = 2048;    // columns per task: its partial sums fill 16 KiB of L1
constexpr int64_t kBandElements = 32768;  // elements of x per task (128 KiB) at least
constexpr int64_t kMaxBands = 32;         // bounds the partial sums and their serial merge
bool column_sums_apply(const Geometry& g) {
  return g.kept.rank == 1 && g.kept.strides[0][0] == 1 && g.reduced.rank == 1 && g.outputs >= 16 && g.count > 1;
}
// f16 and bf16 take the same path: each row segment is widened to f32 (exactly) on the
// stack first, so a bf16 bias gradient no longer walks each column at the row stride with
// scalar loads (4% of a bf16 GPT step).
template <class T>
ctl_status* column_sums(const OpContext& ctx, const Geometry& g, const T* x, T* out, bool mean) {
  const int64_t width = std::min(g.outputs, kColumnBlock);
  const int64_t blocks = (g.outputs + width - 1) / width;
  const int64_t band_rows = std::max({int64_t{1}, kBandElements / width, (g.count + kMaxBands - 1) / kMaxBands});
  const int64_t bands = (g.count + band_rows - 1) / band_rows;
  // One row of partial sums per band: at most an eighth of x's bytes (bands of 16 rows of
  // 2048 columns) and kMaxBands rows; a single row when all rows make one band.
  Scratch scratch(ctx);
  CTL_SDK_RETURN_IF_ERROR(scratch.allocate(ctx, sizeof(double) * static_cast<size_t>(bands * g.outputs)));
  double* const partials = scratch.as<double>();
  const int64_t row_stride = g.reduced.strides[0][0], out_stride = g.kept.strides[1][0];
  const VecKernels& k = vec_kernels();
  parallel_for(ctx.pool, bands * blocks, 1, [&](int64_t begin, int64_t end, unsigned) {
    for (int64_t task = begin; task < end; ++task) {
      const int64_t band = task / blocks, j0 = task % blocks * width;
      const int64_t n = std::min(g.outputs - j0, width);
      const int64_t r1 = std::min(g.count, (band + 1) * band_rows);
      double* const acc = partials + band * g.outputs + j0;
      std::fill(acc, acc + n, 0.0);
      if constexpr (std::is_same_v<T, float>) {
        for (int64_t r = band * band_rows; r < r1; ++r) k.accumulate(acc, x + r * row_stride + j0, n);
      } else {
        constexpr ctl_dtype d = std::is_same_v<T, f16> ? CTL_DTYPE_F16 : CTL_DTYPE_BF16;
        alignas(64) float row[kColumnBlock];
        for (int64_t r = band * band_rows; r < r1; ++r) {
          half_span_to_f32(d, reinterpret_cast<const uint16_t*>(x + r * row_stride + j0), row, n);
          k.accumulate(acc, row, n);
        }
      }
    }
  });
  for (int64_t band = 1; band < bands; ++band) {
    const double* const part = partials + band * g.outputs;
    for (int64_t j = 0; j < g.outputs; ++j) partials[j] += part[j];
  }
  for (int64_t j = 0; j < g.outputs; ++j) {
    out[j * out_stride] = store<T>(mean ? partials[j] / static_cast<double>(g.count) : partials[j]);
  }
  return nullptr;
}

template <class T>
ctl_status* reduce_typed(const OpContext& ctx, const Geometry& g, const View& xv, const View& outv) {
  const T* const x = xv.as<T>();
  const ctl_op_id op = ctx.call->op;
  const int64_t count = g.count;
  if (op == CTL_OP_SUM || op == CTL_OP_MEAN) {
    T* const out = outv.as<T>();
    const bool mean = op == CTL_OP_MEAN;
    if constexpr (std::is_same_v<T, float> || is_half_v<T>) {
      if (column_sums_apply(g)) return column_sums(ctx, g, x, out, mean);
    }
    return reduce_all<T, SumReducer<T>>(
        ctx, g, x, [](int64_t) { return SumReducer<T>{}; },
        [&](int64_t, const SumReducer<T>& r, int64_t o) {
          if constexpr (is_float_v<T>) {
            // An empty mean is 0/0 = NaN, as ops.md says.
            out[o] = store<T>(mean ? r.acc / static_cast<double>(count) : r.acc);
          } else {
            out[o] = static_cast<T>(r.acc);  // wraps to the dtype
          }
        });
  }
  if (op == CTL_OP_MAX || op == CTL_OP_MIN) {
    T* const out = outv.as<T>();
    auto run = [&](auto reducer) {
      using R = decltype(reducer);
      return reduce_all<T, R>(
          ctx, g, x, [](int64_t) { return R{}; }, [&](int64_t, const R& r, int64_t o) { out[o] = store<T>(r.acc); });
    };
    return op == CTL_OP_MAX ? run(ExtremeReducer<T, true>{}) : run(ExtremeReducer<T, false>{});
  }
  if (op == CTL_OP_ARGMAX || op == CTL_OP_ARGMIN) {
    int64_t* const out = outv.as<int64_t>();
    auto run = [&](auto reducer) {
      using R = decltype(reducer);
      return reduce_all<T, R>(
          ctx, g, x, [](int64_t) { return R{}; }, [&](int64_t, const R& r, int64_t o) { out[o] = r.index; });
    };
    return op == CTL_OP_ARGMAX ? run(ArgReducer<T, true>{}) : run(ArgReducer<T, false>{});
  }
  if constexpr (is_float_v<T>) {
    // logsumexp: the max per output first, then the shifted sum of exponentials.
    T* const out = outv.as<T>();
    Scratch maxima(ctx);
    CTL_SDK_RETURN_IF_ERROR(maxima.allocate(ctx, sizeof(double) * static_cast<size_t>(g.outputs)));
    double* const m = maxima.as<double>();
    using Max = ExtremeReducer<T, true>;
    ctl_status* status = reduce_all<T, Max>(
        ctx, g, x, [](int64_t) { return Max{}; },
        [&](int64_t o, const Max& r, int64_t) { m[o] = static_cast<double>(r.acc); });
    if (status) return status;
    using SumExp = SumExpReducer<T>;
    return reduce_all<T, SumExp>(
        ctx, g, x,
        [&](int64_t o) {
          return SumExp{m[o], 0.0};
        },
        [&](int64_t o, const SumExp& r, int64_t oo) {
          // m = ±inf (and NaN) is the result itself; an empty reduction is -inf.
          const double result = std::isfinite(m[o]) ? m[o] + std::log(r.acc) : m[o];
          out[oo] = store<T>(result);
        });
  }
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "dtype %s is not supported", dtype_name(xv.dtype));
}

}  // namespace

ctl_status* run_reduce(const OpContext& ctx) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(1, 1, 1, 1));
  View x, out;
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "x", &x));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "out", &out));
  const ctl_op_id op = ctx.call->op;
  const bool arg = op == CTL_OP_ARGMAX || op == CTL_OP_ARGMIN;
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(out, "output 0 (out)", arg ? CTL_DTYPE_I64 : x.dtype));

  bool reduced[CTL_MAX_RANK] = {};
  CTL_SDK_RETURN_IF_ERROR(sdk::read_reduced_axes(ctx, x.rank, arg, reduced));
  // The core hands over the output with x's rank and size 1 on reduced axes.
  if (out.rank != x.rank) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "output 0 (out) has rank %u, expected x's rank %u", out.rank, x.rank);
  }
  int64_t kept_shape[CTL_MAX_RANK], kept_x[CTL_MAX_RANK], kept_out[CTL_MAX_RANK];
  int64_t red_shape[CTL_MAX_RANK], red_x[CTL_MAX_RANK];
  uint32_t nk = 0, nr = 0;
  for (uint32_t i = 0; i < x.rank; ++i) {
    const int64_t expected = reduced[i] ? 1 : x.shape[i];
    if (out.shape[i] != expected) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "output 0 (out) has size %lld on axis %u, expected %lld",
                      static_cast<long long>(out.shape[i]), i, static_cast<long long>(expected));
    }
    if (reduced[i]) {
      red_shape[nr] = x.shape[i];
      red_x[nr++] = x.strides[i];
    } else {
      kept_shape[nk] = x.shape[i];
      kept_x[nk] = x.strides[i];
      kept_out[nk++] = out.strides[i];
    }
  }
  Geometry g;
  g.kept = make_layout<2>(nk, kept_shape, {kept_x, kept_out});
  g.reduced = make_layout<1>(nr, red_shape, {red_x});
  g.outputs = g.kept.numel;
  g.count = g.reduced.numel;
  if (g.count == 0 && (op == CTL_OP_MAX || op == CTL_OP_MIN || arg)) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "cannot reduce an empty axis (it has no %s)",
                    op == CTL_OP_MIN || op == CTL_OP_ARGMIN ? "minimum" : "maximum");
  }
  if (g.outputs == 0) return nullptr;
  ctl_status* status = nullptr;
  const bool known = dispatch_numeric(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_float_v<T>) {
      status = reduce_typed<T>(ctx, g, x, out);
    } else {
      if (op == CTL_OP_MEAN || op == CTL_OP_LOGSUMEXP) {
        status = ctx.fail(CTL_STATUS_UNSUPPORTED, "dtype %s is not supported (float only)", dtype_name(x.dtype));
      } else {
        status = reduce_typed<T>(ctx, g, x, out);
      }
    }
  });
  if (!known) return ctx.fail(CTL_STATUS_UNSUPPORTED, "dtype %s is not supported", dtype_name(x.dtype));
  return status;
}

}  // namespace catalyst::cpu
