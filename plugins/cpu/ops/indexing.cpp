// indexing.cpp — gather (take along an axis) and scatter_add.
//
// Both walk the "outer" positions (x's axes before `axis`, then the index's axes) and, at
// each, move a "post" block (x's axes after `axis`): an embedding lookup is one memcpy per
// index. Out-of-range indices give zeros (gather) or are skipped (scatter_add); neither
// ever touches memory outside the views.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "catalyst/sdk/bind_movement.hpp"
#include "dtype_dispatch.h"
#include "elementwise.h"
#include "kernels.h"
#include "tensor_iter.h"

namespace catalyst::cpu {
namespace {

struct Geometry {
  Layout<3> outer;  // gather: out, x, index.  scatter: src, index, out
  Layout<2> post;   // gather: out, x.         scatter: src, out
  int64_t post_count;
  int64_t axis_size;
  int64_t axis_stride;  // of x (gather) or out (scatter)
};

int64_t read_index(const View& index, int64_t offset) {
  return index.dtype == CTL_DTYPE_I32 ? static_cast<int64_t>(index.as<int32_t>()[offset]) : index.as<int64_t>()[offset];
}

// Checks big = table.shape[:axis] + index.shape + table.shape[axis+1:] and builds the
// walk. `big` is gather's output / scatter's src; `table` is gather's x / scatter's out.
ctl_status* build(const OpContext& ctx, const View& big, const char* big_name, const View& table, const View& index,
                  uint32_t axis, bool gather, Geometry* g) {
  const uint32_t q = index.rank;
  if (big.rank != table.rank - 1 + q) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "%s has rank %u, expected %u", big_name, big.rank, table.rank - 1 + q);
  }
  int64_t shape[CTL_MAX_RANK], s_big[CTL_MAX_RANK], s_table[CTL_MAX_RANK], s_index[CTL_MAX_RANK];
  for (uint32_t d = 0; d < axis + q; ++d) {
    const bool pre = d < axis;
    const int64_t expected = pre ? table.shape[d] : index.shape[d - axis];
    if (big.shape[d] != expected) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "%s has size %lld on axis %u, expected %lld", big_name,
                      static_cast<long long>(big.shape[d]), d, static_cast<long long>(expected));
    }
    shape[d] = big.shape[d];
    s_big[d] = big.strides[d];
    s_table[d] = pre ? table.strides[d] : 0;
    s_index[d] = pre ? 0 : index.strides[d - axis];
  }
  if (gather)
    g->outer = make_layout<3>(axis + q, shape, {s_big, s_table, s_index});
  else
    g->outer = make_layout<3>(axis + q, shape, {s_big, s_index, s_table});
  const uint32_t post_rank = table.rank - 1 - axis;
  for (uint32_t d = 0; d < post_rank; ++d) {
    const int64_t expected = table.shape[axis + 1 + d];
    if (big.shape[axis + q + d] != expected) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "%s has size %lld on axis %u, expected %lld", big_name,
                      static_cast<long long>(big.shape[axis + q + d]), axis + q + d, static_cast<long long>(expected));
    }
  }
  g->post = make_layout<2>(post_rank, table.shape + axis + 1, {big.strides + axis + q, table.strides + axis + 1});
  g->post_count = g->post.numel;
  g->axis_size = table.shape[axis];
  g->axis_stride = table.strides[axis];
  return nullptr;
}

// out[..., index[j], ...] += src[..., j, ...] into `out` (of type D) from src (of type S).
// Threads split the post block, never the index positions: every output element
// receives its additions from one thread, in index order, whatever the thread count.
template <class D, class S>
void scatter(const OpContext& ctx, const Geometry& g, const View& out, const View& index, const View& src) {
  if (src.numel() == 0) return;
  D* const po = out.as<D>();
  const S* const ps = src.as<S>();
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(g.outer.numel, 1));
  parallel_for(ctx.pool, g.post_count, grain, [&](int64_t pb, int64_t pe, unsigned) {
    for_each_segment(g.outer, 0, g.outer.numel, [&](const std::array<int64_t, 3>& off, int64_t n, int64_t) {
      for (int64_t k = 0; k < n; ++k) {
        int64_t i = read_index(index, off[1] + k * g.outer.inner_stride(1));
        if (i < 0) i += g.axis_size;
        if (i < 0 || i >= g.axis_size) continue;
        const S* s = ps + off[0] + k * g.outer.inner_stride(0);
        D* o = po + off[2] + k * g.outer.inner_stride(2) + i * g.axis_stride;
        for_each_segment(g.post, pb, pe, [&](const std::array<int64_t, 2>& p, int64_t m, int64_t) {
          const int64_t ss = g.post.inner_stride(0), so = g.post.inner_stride(1);
          for (int64_t j = 0; j < m; ++j) {
            D& dst = o[p[1] + j * so];
            const S add = s[p[0] + j * ss];
            if constexpr (is_int_v<D>) {
              using U = std::make_unsigned_t<D>;
              dst = static_cast<D>(static_cast<U>(dst) + static_cast<U>(add));  // wraps
            } else {
              dst = store<D>(load(dst) + load(add));
            }
          }
        });
      }
    });
  });
}

}  // namespace

ctl_status* run_gather(const OpContext& ctx) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(2, 2, 1, 1));
  View x, index, out;
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "x", &x));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(1, "index", &index));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "out", &out));
  CTL_SDK_RETURN_IF_ERROR(sdk::check_index(ctx, index));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(out, "output 0 (out)", x.dtype));
  if (x.rank == 0) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input 0 (x) must have rank >= 1");
  uint32_t axis;
  CTL_SDK_RETURN_IF_ERROR(sdk::read_axis(ctx, x.rank, &axis));
  Geometry g;
  CTL_SDK_RETURN_IF_ERROR(build(ctx, out, "output 0 (out)", x, index, axis, true, &g));
  if (out.numel() == 0) return nullptr;
  const size_t es = x.element_size;
  const bool flat = g.post.rank == 1 && g.post.strides[0][0] == 1 && g.post.strides[1][0] == 1;
  dispatch_raw(es, [&](auto tag) {
    using R = typename decltype(tag)::type;
    R* const po = out.as<R>();
    const R* const px = x.as<R>();
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(g.post_count, 1));
    parallel_for(ctx.pool, g.outer.numel, grain, [&](int64_t begin, int64_t end, unsigned) {
      for_each_segment(g.outer, begin, end, [&](const std::array<int64_t, 3>& off, int64_t n, int64_t) {
        for (int64_t k = 0; k < n; ++k) {
          R* o = po + off[0] + k * g.outer.inner_stride(0);
          int64_t i = read_index(index, off[2] + k * g.outer.inner_stride(2));
          if (i < 0) i += g.axis_size;
          const bool valid = i >= 0 && i < g.axis_size;
          const R* src = px + off[1] + k * g.outer.inner_stride(1) + (valid ? i * g.axis_stride : 0);
          if (flat) {
            if (valid)
              std::memcpy(o, src, static_cast<size_t>(g.post_count) * sizeof(R));
            else
              std::memset(o, 0, static_cast<size_t>(g.post_count) * sizeof(R));  // 0 in every dtype
            continue;
          }
          for_each_segment(g.post, 0, g.post_count, [&](const std::array<int64_t, 2>& p, int64_t m, int64_t) {
            const int64_t so = g.post.inner_stride(0), sx = g.post.inner_stride(1);
            for (int64_t j = 0; j < m; ++j) o[p[0] + j * so] = valid ? src[p[1] + j * sx] : R(0);
          });
        }
      });
    });
  });
  return nullptr;
}

ctl_status* run_scatter_add(const OpContext& ctx) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(3, 3, 1, 1));
  View target, index, src, out;
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "target", &target));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(1, "index", &index));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(2, "src", &src));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "out", &out));
  CTL_SDK_RETURN_IF_ERROR(sdk::check_index(ctx, index));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(src, "input 2 (src)", target.dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(out, "output 0 (out)", target.dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_same_shape(out, "output 0 (out)", target, "input 0 (target)"));
  if (target.rank == 0) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input 0 (target) must have rank >= 1");
  uint32_t axis;
  CTL_SDK_RETURN_IF_ERROR(sdk::read_axis(ctx, target.rank, &axis));
  Geometry g;
  CTL_SDK_RETURN_IF_ERROR(build(ctx, src, "input 2 (src)", out, index, axis, false, &g));
  ctl_status* status = nullptr;
  const bool known = dispatch_numeric(out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (is_half_v<T>) {
      // f16/bf16 sum in an f32 copy of the target and round once at the end, so repeated
      // indices do not lose a rounding step per addition.
      Scratch scratch(ctx);
      status = scratch.allocate(ctx, sizeof(float) * static_cast<size_t>(out.numel()));
      if (status) return;
      View acc = out;
      acc.data = scratch.as<char>();
      acc.dtype = CTL_DTYPE_F32;
      acc.element_size = sizeof(float);
      for (int64_t d = acc.rank, stride = 1; d-- > 0; stride *= acc.shape[d]) acc.strides[d] = stride;
      Geometry ga;
      status = build(ctx, src, "input 2 (src)", acc, index, axis, false, &ga);
      if (status) return;
      map_unary<float, T>(ctx, acc, target, kCheapGrain, [](T v) { return load(v); });
      scatter<float, T>(ctx, ga, acc, index, src);
      map_unary<T, float>(ctx, out, acc, kCheapGrain, [](float v) { return store<T>(v); });
    } else {
      copy_elements(ctx, target, out);
      scatter<T, T>(ctx, g, out, index, src);
    }
  });
  if (status) return status;
  if (!known) return ctx.fail(CTL_STATUS_UNSUPPORTED, "dtype %s is not supported", dtype_name(out.dtype));
  return nullptr;
}

}  // namespace catalyst::cpu
