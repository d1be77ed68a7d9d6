// host_walk.hpp — the loops of a plugin whose device memory the host addresses: a view with a
// host pointer, typed loads and stores, a dtype's C++ type, and the walk over the elements of
// strided views that share one shape (dense, strided, broadcast and transposed alike).
//
//   sdk::visit_dtype<kMask>(x.dtype, [&](auto t) {  // T = decltype(t): float, int32_t, ...
//     using T = decltype(t);
//     sdk::map_elements<T>(y, {&x}, [&](T v) { return sdk::unary_op(op, v); });
//   });
//   const sdk::HostView* views[] = {&x, &y};  // or any loop of one's own over the elements:
//   sdk::walk_views(views, [&](int64_t i, const int64_t (&at)[2]) { ... x.at(at[0]) ... });
//
// The walk merges axes first (merged_axes.hpp), so a contiguous tensor is one loop and a
// transposed one two; elements come in row-major order, counted from 0, as fill, arange and
// random number them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "catalyst/sdk/merged_axes.hpp"
#include "catalyst/sdk/op_call.hpp"
#include "catalyst_plugin.h"

namespace catalyst::sdk {

// A checked view (op_call.hpp's ViewShape) of host memory: `data` is where the view's buffer
// bytes start (its byte offset applied), `offset` a further offset in elements (concat's parts).
struct HostView : ViewShape {
  char* data = nullptr;

  // The address of the element `element` elements past the view's first one.
  char* at(int64_t element) const { return data + (offset + element) * static_cast<int64_t>(element_size); }
};

// Loads and stores through memcpy: no alignment or aliasing assumption. A bool byte other
// than 0 loads as true.
template <class T>
T load(const char* p) {
  if constexpr (std::is_same_v<T, bool>) {
    unsigned char byte;
    std::memcpy(&byte, p, 1);
    return byte != 0;
  } else {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
}
template <class T>
void store(char* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

// Calls fn(T{}) with T the C++ type of `dtype` (float, double, int8_t, uint8_t, int32_t,
// int64_t, bool) when `dtype` is in Mask (CTL_DTYPE_BIT of each), so only the dtypes a
// plugin claims are compiled. Returns false, calling nothing, for any other dtype (f16 and
// bf16 have no C++ type: half.hpp converts them).
template <uint32_t Mask, class Fn>
bool visit_dtype(ctl_dtype dtype, Fn&& fn) {
  const auto visit = [&](auto t) {
    fn(t);
    return true;
  };
  switch (raw_enum(dtype)) {
    case CTL_DTYPE_F32:
      if constexpr ((Mask & CTL_DTYPE_BIT(CTL_DTYPE_F32)) != 0) return visit(float{});
      break;
    case CTL_DTYPE_F64:
      if constexpr ((Mask & CTL_DTYPE_BIT(CTL_DTYPE_F64)) != 0) return visit(double{});
      break;
    case CTL_DTYPE_I8:
      if constexpr ((Mask & CTL_DTYPE_BIT(CTL_DTYPE_I8)) != 0) return visit(int8_t{});
      break;
    case CTL_DTYPE_U8:
      if constexpr ((Mask & CTL_DTYPE_BIT(CTL_DTYPE_U8)) != 0) return visit(uint8_t{});
      break;
    case CTL_DTYPE_I32:
      if constexpr ((Mask & CTL_DTYPE_BIT(CTL_DTYPE_I32)) != 0) return visit(int32_t{});
      break;
    case CTL_DTYPE_I64:
      if constexpr ((Mask & CTL_DTYPE_BIT(CTL_DTYPE_I64)) != 0) return visit(int64_t{});
      break;
    case CTL_DTYPE_BOOL:
      if constexpr ((Mask & CTL_DTYPE_BIT(CTL_DTYPE_BOOL)) != 0) return visit(bool{});
      break;
    default:
      break;
  }
  return false;
}

// The same inside an op: NULL once fn ran, else an UNSUPPORTED status from the plugin's op
// context (op_call.hpp) naming the dtype.
template <uint32_t Mask, class Ctx, class Fn>
ctl_status* visit_dtype(const Ctx& ctx, ctl_dtype dtype, Fn&& fn) {
  if (visit_dtype<Mask>(dtype, fn)) return nullptr;
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "no kernel for dtype %s", dtype_name(dtype));
}

// Element `element` of an index view (gather's and scatter_add's index: i32 or i64).
inline int64_t load_index(const HostView& index, int64_t element) {
  const char* p = index.at(element);
  return index.dtype == CTL_DTYPE_I32 ? load<int32_t>(p) : load<int64_t>(p);
}

// walk_views(views, fn) calls fn(i, at) for every element of views[0]'s shape, in row-major
// order: i counts them from 0, and at[v] is the element's offset in view v, in elements from
// its first element (HostView::at adds the view's own offset). Each view's strides are read
// along views[0]'s axes, so a view may have another shape where its strides say how it moves
// along them (a reduction's kept axes, a norm's statistics, which lack the last axis).
// walk_views(views, skip, fn) leaves axis `skip` out: it visits a normalisation's rows, and
// the kernel walks that axis itself.
template <size_t N, class View, class Fn>
void walk_views(const View* const (&views)[N], uint32_t skip, Fn&& fn) {
  const int64_t* strides[N];
  for (size_t v = 0; v < N; ++v) strides[v] = views[v]->strides;
  const MergedAxes<N> m = merge_axes<N>(views[0]->rank, views[0]->shape, strides, N, skip);
  if (m.numel == 0) return;
  const int64_t inner = m.shape[0];  // 1 when no axis is left
  int64_t index[CTL_MAX_RANK] = {};
  int64_t at[N] = {};
  for (int64_t i = 0; i < m.numel;) {
    for (int64_t j = 0; j < inner; ++j, ++i) {
      fn(i, static_cast<const int64_t(&)[N]>(at));
      for (size_t v = 0; v < N; ++v) at[v] += m.strides[v][0];
    }
    for (size_t v = 0; v < N; ++v) at[v] -= m.strides[v][0] * inner;
    for (uint32_t axis = 1; axis < m.rank; ++axis) {  // the odometer over the outer axes
      for (size_t v = 0; v < N; ++v) at[v] += m.strides[v][axis];
      if (++index[axis] < m.shape[axis]) break;
      for (size_t v = 0; v < N; ++v) at[v] -= m.strides[v][axis] * m.shape[axis];
      index[axis] = 0;
    }
  }
}

template <size_t N, class View, class Fn>
void walk_views(const View* const (&views)[N], Fn&& fn) {
  walk_views(views, CTL_MAX_RANK, fn);
}

namespace host_walk_detail {

template <class... In, class Fn, size_t... I>
void map_elements(const HostView& out, const HostView* const (&x)[sizeof...(In)], Fn& fn, std::index_sequence<I...>) {
  const HostView* views[] = {x[I]..., &out};
  walk_views(views, [&](int64_t, const int64_t(&at)[sizeof...(In) + 1]) {
    store(out.at(at[sizeof...(In)]), fn(load<In>(x[I]->at(at[I]))...));
  });
}

}  // namespace host_walk_detail

// The elementwise loop: out's element = fn(x[0]'s element loaded as In[0], x[1]'s as In[1],
// ...), stored as fn's result type, for every element of out's shape (the inputs have it, as
// the core broadcasts them: stride 0 on broadcast axes).
//
//   sdk::map_elements<T, T>(y, {&a, &b}, [&](T p, T q) { return sdk::binary_op(op, p, q); });
template <class... In, class Fn>
void map_elements(const HostView& out, const HostView* const (&x)[sizeof...(In)], Fn&& fn) {
  host_walk_detail::map_elements<In...>(out, x, fn, std::index_sequence_for<In...>{});
}

}  // namespace catalyst::sdk
