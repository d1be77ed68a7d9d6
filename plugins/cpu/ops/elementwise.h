// elementwise.h — running a per-element functor over operands that share one shape:
// a tight loop when every operand is contiguous along the run (the compiler vectorises
// it), a stride-0 variant for a broadcast scalar, and a strided loop for everything else.
// The *_spans forms hand the contiguous runs to a hand-vectorised kernel instead.
#pragma once

#include <cstdint>

#include "op_context.h"
#include "tensor_iter.h"
#include "vec_kernels.h"

namespace catalyst::cpu {

// Elements per parallel part: cheap arithmetic amortises a part's start-up only over
// many elements; transcendental functions over fewer.
inline constexpr int64_t kCheapGrain = 32768;
inline constexpr int64_t kCostlyGrain = 4096;

// out[i] = f(in[i]). O and I are storage types; f maps I to O.
template <class O, class I, class F>
void map_unary(const OpContext& ctx, const View& out, const View& in, int64_t grain, F f) {
  const auto layout = make_layout<2>(out.rank, out.shape, {out.strides, in.strides});
  O* const o = out.as<O>();
  const I* const x = in.as<I>();
  parallel_for(ctx.pool, layout.numel, grain, [&](int64_t begin, int64_t end, unsigned) {
    for_each_segment(layout, begin, end, [&](const std::array<int64_t, 2>& off, int64_t n, int64_t) {
      O* __restrict po = o + off[0];
      const I* __restrict px = x + off[1];
      const int64_t so = layout.inner_stride(0), sx = layout.inner_stride(1);
      if (so == 1 && sx == 1) {
        for (int64_t i = 0; i < n; ++i) po[i] = f(px[i]);
      } else {
        for (int64_t i = 0; i < n; ++i) po[i * so] = f(px[i * sx]);
      }
    });
  });
}

// True when `out` is dense in row-major order and every view in `others` (of out's shape)
// has out's strides: the whole op is then one run, and the spans forms skip the layout
// analysis (which costs more than a small op's arithmetic).
template <class... Views>
inline bool dense_alike(const View& out, const Views&... others) {
  int64_t expected = 1;
  for (uint32_t i = out.rank; i-- > 0;) {
    if (out.shape[i] != 1) {
      if (out.strides[i] != expected || ((others.strides[i] != expected) || ...)) return false;
    }
    expected *= out.shape[i];
  }
  return true;
}

// out[i] = f(x[i]), except that runs where out and x are both contiguous go to
// span(out, x, n) instead (a vector kernel). O and I are the storage types of out and x
// (one type, T, for most ops; two for a cast).
template <class O, class I = O, class F, class Span>
void map_unary_spans(const OpContext& ctx, const View& out, const View& in, int64_t grain, F f, Span span) {
  O* const o = out.as<O>();
  const I* const x = in.as<I>();
  if (dense_alike(out, in)) {
    parallel_for(ctx.pool, out.numel(), grain, [&](int64_t begin, int64_t end, unsigned) {
      span(o + begin, x + begin, end - begin);
      stream_fence();
    });
    return;
  }
  const auto layout = make_layout<2>(out.rank, out.shape, {out.strides, in.strides});
  parallel_for(ctx.pool, layout.numel, grain, [&](int64_t begin, int64_t end, unsigned) {
    for_each_segment(layout, begin, end, [&](const std::array<int64_t, 2>& off, int64_t n, int64_t) {
      const int64_t so = layout.inner_stride(0), sx = layout.inner_stride(1);
      if (so == 1 && sx == 1) {
        span(o + off[0], x + off[1], n);
      } else {
        for (int64_t i = 0; i < n; ++i) o[off[0] + i * so] = f(x[off[1] + i * sx]);
      }
    });
    stream_fence();  // this part's streamed stores, before the pool reports it done
  });
}

// out[i] = f(a[i], b[i]), except that runs where out is contiguous and a and b are each
// contiguous or one broadcast element go to span(out, a, sa, b, sb, n) instead.
template <class T, class F, class Span>
void map_binary_spans(const OpContext& ctx, const View& out, const View& a, const View& b, int64_t grain, F f,
                      Span span) {
  if (dense_alike(out, a, b)) {
    T* const o = out.as<T>();
    const T* const pa = a.as<T>();
    const T* const pb = b.as<T>();
    parallel_for(ctx.pool, out.numel(), grain, [&](int64_t begin, int64_t end, unsigned) {
      span(o + begin, pa + begin, 1, pb + begin, 1, end - begin);
      stream_fence();
    });
    return;
  }
  const auto layout = make_layout<3>(out.rank, out.shape, {out.strides, a.strides, b.strides});
  T* const o = out.as<T>();
  const T* const pa = a.as<T>();
  const T* const pb = b.as<T>();
  parallel_for(ctx.pool, layout.numel, grain, [&](int64_t begin, int64_t end, unsigned) {
    for_each_segment(layout, begin, end, [&](const std::array<int64_t, 3>& off, int64_t n, int64_t) {
      const int64_t so = layout.inner_stride(0), sa = layout.inner_stride(1), sb = layout.inner_stride(2);
      if (so == 1 && (sa == 0 || sa == 1) && (sb == 0 || sb == 1) && sa + sb > 0) {
        span(o + off[0], pa + off[1], sa, pb + off[2], sb, n);
      } else {
        for (int64_t i = 0; i < n; ++i) o[off[0] + i * so] = f(pa[off[1] + i * sa], pb[off[2] + i * sb]);
      }
    });
    stream_fence();  // this part's streamed stores, before the pool reports it done
  });
}

// out[i] = f(a[i], b[i]).
template <class O, class I, class F>
void map_binary(const OpContext& ctx, const View& out, const View& a, const View& b, int64_t grain, F f) {
  const auto layout = make_layout<3>(out.rank, out.shape, {out.strides, a.strides, b.strides});
  O* const o = out.as<O>();
  const I* const pa = a.as<I>();
  const I* const pb = b.as<I>();
  parallel_for(ctx.pool, layout.numel, grain, [&](int64_t begin, int64_t end, unsigned) {
    for_each_segment(layout, begin, end, [&](const std::array<int64_t, 3>& off, int64_t n, int64_t) {
      O* __restrict po = o + off[0];
      const I* __restrict xa = pa + off[1];
      const I* __restrict xb = pb + off[2];
      const int64_t so = layout.inner_stride(0), sa = layout.inner_stride(1), sb = layout.inner_stride(2);
      if (so == 1 && sa == 1 && sb == 1) {
        for (int64_t i = 0; i < n; ++i) po[i] = f(xa[i], xb[i]);
      } else if (so == 1 && sa == 1 && sb == 0) {
        const I vb = xb[0];
        for (int64_t i = 0; i < n; ++i) po[i] = f(xa[i], vb);
      } else if (so == 1 && sa == 0 && sb == 1) {
        const I va = xa[0];
        for (int64_t i = 0; i < n; ++i) po[i] = f(va, xb[i]);
      } else {
        for (int64_t i = 0; i < n; ++i) po[i * so] = f(xa[i * sa], xb[i * sb]);
      }
    });
  });
}

}  // namespace catalyst::cpu
