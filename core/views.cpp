// views.cpp — reshape, permute, transpose, slice and expand: new tensors that share the
// source's storage. Metadata only; no plugin is called.
#include <algorithm>
#include <vector>

#include "autograd.h"
#include "c_guard.h"
#include "status.h"
#include "tensor.h"

namespace catalyst {
namespace {

// Normalises `axis` for a tensor of `rank`, or fails naming `argument`.
ctl_status* normalize_axis(int64_t axis, int64_t rank, const char* argument, int64_t* out_axis) {
  if (axis < -rank || axis >= rank) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "argument '%s' is %lld, out of range for rank %lld", argument,
                       static_cast<long long>(axis), static_cast<long long>(rank));
  }
  *out_axis = axis < 0 ? axis + rank : axis;
  return nullptr;
}

// Strides that let `shape` view the same elements as `layout` without copying, if any
// exist (the classic "can this be a view" check; size-1 axes are free).
bool view_strides(const Layout& layout, const Layout& target, int64_t* strides) {
  const int64_t numel = layout.numel();
  if (numel == 0 || layout.is_contiguous()) {
    Layout dense = target;
    set_contiguous_strides(dense);
    std::copy_n(dense.strides.begin(), target.rank, strides);
    return true;
  }
  int64_t view_d = static_cast<int64_t>(target.rank) - 1;
  int64_t chunk_base_stride = layout.strides[layout.rank - 1];
  int64_t tensor_numel = 1;
  int64_t view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(layout.rank) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= layout.shape[tensor_d];
    const bool chunk_ends = tensor_d == 0 || (layout.shape[tensor_d - 1] != 1 &&
                                              layout.strides[tensor_d - 1] != tensor_numel * chunk_base_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < tensor_numel || target.shape[view_d] == 1)) {
      strides[view_d] = view_numel * chunk_base_stride;
      view_numel *= target.shape[view_d];
      --view_d;
    }
    if (view_numel != tensor_numel) return false;
    if (tensor_d > 0) {
      chunk_base_stride = layout.strides[tensor_d - 1];
      tensor_numel = 1;
      view_numel = 1;
    }
  }
  return view_d == -1;
}

ctl_status* check_view_args(ctl_tensor* tensor, ctl_tensor** out_tensor) {
  CTL_RETURN_IF_ERROR(check_tensor(tensor, "tensor"));
  CTL_CHECK_ARG(out_tensor, "argument 'out_tensor' is NULL");
  return nullptr;
}

}  // namespace
}  // namespace catalyst

using namespace catalyst;

extern "C" {

CTL_EXPORT ctl_status* ctl_tensor_reshape(ctl_tensor* tensor, size_t rank, const int64_t* shape,
                                          ctl_tensor** out_tensor) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_view_args(tensor, out_tensor));
    CTL_CHECK_ARG(rank <= CTL_MAX_RANK, "argument 'rank' is %zu; at most %d is supported", rank, CTL_MAX_RANK);
    CTL_CHECK_ARG(rank == 0 || shape, "argument 'shape' is NULL but the rank is %zu", rank);
    const Layout& source = tensor->layout;
    Layout target = source;
    target.rank = static_cast<uint32_t>(rank);
    int64_t inferred = -1;
    int64_t known = 1;
    for (size_t i = 0; i < rank; ++i) {
      if (shape[i] == -1) {
        CTL_CHECK_ARG(inferred < 0, "shape has more than one -1 (at %lld and %zu)", static_cast<long long>(inferred),
                      i);
        inferred = static_cast<int64_t>(i);
        continue;
      }
      CTL_CHECK_ARG(shape[i] >= 0, "shape[%zu] is %lld; dimensions cannot be negative", i,
                    static_cast<long long>(shape[i]));
      CTL_CHECK_ARG(shape[i] == 0 || known <= INT64_MAX / shape[i], "shape overflows int64");
      known *= shape[i];
      target.shape[i] = shape[i];
    }
    const int64_t numel = source.numel();
    if (inferred >= 0) {
      CTL_CHECK_ARG(known != 0, "shape has a -1 and a 0: the -1 cannot be inferred");
      CTL_CHECK_ARG(numel % known == 0, "shape cannot hold %lld elements: they do not divide by %lld",
                    static_cast<long long>(numel), static_cast<long long>(known));
      target.shape[inferred] = numel / known;
      known = numel;
    }
    CTL_CHECK_ARG(known == numel, "shape has %lld elements but the tensor has %lld", static_cast<long long>(known),
                  static_cast<long long>(numel));
    // An empty tensor reshaped to huge axes must still have representable strides.
    CTL_RETURN_IF_ERROR(check_shape(rank, target.shape.data(), target.dtype, "shape"));
    if (!view_strides(source, target, target.strides.data())) {
      return make_status(CTL_STATUS_INVALID_ARGUMENT,
                         "tensor strides cannot express this shape without a copy; call ctl_tensor_contiguous first");
    }
    *out_tensor = make_view(tensor->storage, target);
    record_view(ViewKind::kReshape, tensor, *out_tensor);
    return nullptr;
  });
}

CTL_EXPORT ctl_status* ctl_tensor_permute(ctl_tensor* tensor, size_t rank, const int64_t* perm,
                                          ctl_tensor** out_tensor) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_view_args(tensor, out_tensor));
    const Layout& source = tensor->layout;
    CTL_CHECK_ARG(rank == source.rank, "argument 'rank' is %zu but the tensor has rank %u", rank, source.rank);
    CTL_CHECK_ARG(rank == 0 || perm, "argument 'perm' is NULL");
    Layout target = source;
    bool used[CTL_MAX_RANK] = {};
    for (size_t i = 0; i < rank; ++i) {
      int64_t axis = 0;
      CTL_RETURN_IF_ERROR(normalize_axis(perm[i], source.rank, "perm", &axis));
      CTL_CHECK_ARG(!used[axis], "perm names axis %lld twice", static_cast<long long>(axis));
      used[axis] = true;
      target.shape[i] = source.shape[axis];
      target.strides[i] = source.strides[axis];
    }
    *out_tensor = make_view(tensor->storage, target);
    std::vector<int64_t> order(rank);
    for (size_t i = 0; i < rank; ++i) order[i] = perm[i] < 0 ? perm[i] + static_cast<int64_t>(rank) : perm[i];
    record_view(ViewKind::kPermute, tensor, *out_tensor, std::move(order));
    return nullptr;
  });
}

CTL_EXPORT ctl_status* ctl_tensor_transpose(ctl_tensor* tensor, int64_t axis0, int64_t axis1, ctl_tensor** out_tensor) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_view_args(tensor, out_tensor));
    int64_t a = 0, b = 0;
    CTL_RETURN_IF_ERROR(normalize_axis(axis0, tensor->layout.rank, "axis0", &a));
    CTL_RETURN_IF_ERROR(normalize_axis(axis1, tensor->layout.rank, "axis1", &b));
    Layout target = tensor->layout;
    std::swap(target.shape[a], target.shape[b]);
    std::swap(target.strides[a], target.strides[b]);
    *out_tensor = make_view(tensor->storage, target);
    std::vector<int64_t> order(tensor->layout.rank);
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
    std::swap(order[a], order[b]);
    record_view(ViewKind::kPermute, tensor, *out_tensor, std::move(order));
    return nullptr;
  });
}

CTL_EXPORT ctl_status* ctl_tensor_slice(ctl_tensor* tensor, int64_t axis, int64_t start, int64_t stop, int64_t step,
                                        ctl_tensor** out_tensor) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_view_args(tensor, out_tensor));
    int64_t a = 0;
    CTL_RETURN_IF_ERROR(normalize_axis(axis, tensor->layout.rank, "axis", &a));
    CTL_CHECK_ARG(step >= 1, "argument 'step' is %lld; it must be at least 1", static_cast<long long>(step));
    const int64_t n = tensor->layout.shape[a];
    auto clamp = [n](int64_t index) {
      if (index < 0) index += n;
      return std::clamp<int64_t>(index, 0, n);
    };
    const int64_t begin = clamp(start);
    const int64_t end = clamp(stop);
    Layout target = tensor->layout;
    // 1 + (end - begin - 1) / step: the usual (end - begin + step - 1) / step overflows
    // for a huge step.
    target.shape[a] = end > begin ? 1 + (end - begin - 1) / step : 0;
    if (target.shape[a] > 0) target.offset += begin * target.strides[a];
    // With one element or none the stride is never used; scaling it could overflow.
    if (target.shape[a] > 1) target.strides[a] *= step;
    *out_tensor = make_view(tensor->storage, target);
    record_view(ViewKind::kSlice, tensor, *out_tensor, {a, begin, step});
    return nullptr;
  });
}

CTL_EXPORT ctl_status* ctl_tensor_expand(ctl_tensor* tensor, size_t rank, const int64_t* shape,
                                         ctl_tensor** out_tensor) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_view_args(tensor, out_tensor));
    const Layout& source = tensor->layout;
    CTL_CHECK_ARG(rank <= CTL_MAX_RANK, "argument 'rank' is %zu; at most %d is supported", rank, CTL_MAX_RANK);
    CTL_CHECK_ARG(rank >= source.rank, "argument 'rank' is %zu, smaller than the tensor's rank %u", rank, source.rank);
    CTL_CHECK_ARG(rank == 0 || shape, "argument 'shape' is NULL");
    Layout target = source;
    target.rank = static_cast<uint32_t>(rank);
    const size_t lead = rank - source.rank;
    for (size_t i = 0; i < rank; ++i) {
      const bool is_new = i < lead;
      const int64_t have = is_new ? 1 : source.shape[i - lead];
      const int64_t want = shape[i] == -1 && !is_new ? have : shape[i];
      CTL_CHECK_ARG(want >= 0, "shape[%zu] is %lld; dimensions cannot be negative", i,
                    static_cast<long long>(shape[i]));
      if (is_new || (have == 1 && want != 1)) {
        target.shape[i] = want;
        target.strides[i] = 0;
        continue;
      }
      CTL_CHECK_ARG(have == want, "shape[%zu] is %lld but the tensor's axis %zu has size %lld (only size 1 expands)", i,
                    static_cast<long long>(want), i - lead, static_cast<long long>(have));
      target.shape[i] = have;
      target.strides[i] = source.strides[i - lead];
    }
    CTL_RETURN_IF_ERROR(check_shape(rank, target.shape.data(), target.dtype, "shape"));
    *out_tensor = make_view(tensor->storage, target);
    record_view(ViewKind::kExpand, tensor, *out_tensor);
    return nullptr;
  });
}

}  // extern "C"
