// views_fuzzer.cpp — libFuzzer harness for the view functions of catalyst.h: reshape,
// permute, transpose, slice, expand and contiguous, chained on tensors of the CPU plugin
// with shapes, axes and bounds from the input (hostile ones included).
//
// Beside the real tensors the harness keeps its own model of each view: shape and
// row-major elements, computed on the host from the documented semantics. Every call must
// (1) succeed exactly when the model says the arguments are valid (reshape may also refuse
// a non-contiguous source it cannot view), (2) on failure leave the out-parameter alone,
// (3) on success produce the model's shape and, read back with ctl_tensor_to_host, the
// model's elements. AddressSanitizer and UBSan watch the core while it does so.
#include <array>
#include <optional>
#include <vector>

#include "fuzz_support.h"

namespace {

using fuzz::Input;

// A view as the documentation says it should be: shape and elements in row-major order
// (elements empty and `known` false once the view is too large to follow).
struct Model {
  std::vector<int64_t> shape;
  std::vector<float> values;
  bool known = true;
  bool contiguous = true;  // a fresh tensor or a reshape of one: reshape always works

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
};

// Builds the elements of a view of `source` shaped `shape`, where `index_of` maps an output
// multi-index to the source multi-index it shows.
template <typename Map>
Model derive(const Model& source, std::vector<int64_t> shape, Map index_of) {
  Model out;
  out.shape = std::move(shape);
  out.contiguous = false;
  const int64_t n = out.numel();
  if (!source.known || n > fuzz::kMaxReadElements) {
    out.known = false;
    return out;
  }
  out.values.reserve(static_cast<size_t>(n));
  std::vector<int64_t> index(out.shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    const std::vector<int64_t> from = index_of(index);
    int64_t flat = 0;
    for (size_t d = 0; d < from.size(); ++d) flat = flat * source.shape[d] + from[d];
    out.values.push_back(source.values[static_cast<size_t>(flat)]);
    for (size_t d = index.size(); d-- > 0;) {
      if (++index[d] < out.shape[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

bool axis_in_range(int64_t axis, size_t rank) {
  return axis >= -static_cast<int64_t>(rank) && axis < static_cast<int64_t>(rank);
}
size_t normalized(int64_t axis, size_t rank) {
  return static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(rank) : axis);
}

// The product of `shape`, or nothing when no f32 tensor may have it: a negative axis, or
// a product past 2^63 bytes with zero-sized axes counted as 1 (an empty tensor's strides
// must still be representable, catalyst.h).
std::optional<int64_t> checked_numel(const std::vector<int64_t>& shape) {
  int64_t span = 1;
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0) return std::nullopt;
    const int64_t extent = d == 0 ? 1 : d;
    if (span > INT64_MAX / 4 / extent) return std::nullopt;
    span *= extent;
    empty = empty || d == 0;
  }
  return empty ? 0 : span;
}

std::optional<Model> model_reshape(const Model& m, const std::vector<int64_t>& shape) {
  if (shape.size() > CTL_MAX_RANK) return std::nullopt;
  int64_t known = 1;
  int inferred = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (inferred >= 0) return std::nullopt;
      inferred = static_cast<int>(i);
      continue;
    }
    if (shape[i] < 0) return std::nullopt;
    if (shape[i] != 0 && known > INT64_MAX / shape[i]) return std::nullopt;
    known *= shape[i];
  }
  std::vector<int64_t> out = shape;
  if (inferred >= 0) {
    if (known == 0 || m.numel() % known != 0) return std::nullopt;
    out[static_cast<size_t>(inferred)] = m.numel() / known;
    known = m.numel();
  }
  if (known != m.numel() || !checked_numel(out)) return std::nullopt;
  Model r = m;
  r.shape = out;
  return r;
}

std::optional<Model> model_permute(const Model& m, const std::vector<int64_t>& perm) {
  if (perm.size() != m.shape.size()) return std::nullopt;
  std::vector<size_t> axes;
  std::array<bool, CTL_MAX_RANK> used{};
  for (int64_t p : perm) {
    if (!axis_in_range(p, m.shape.size())) return std::nullopt;
    const size_t a = normalized(p, m.shape.size());
    if (used[a]) return std::nullopt;
    used[a] = true;
    axes.push_back(a);
  }
  std::vector<int64_t> shape;
  for (size_t a : axes) shape.push_back(m.shape[a]);
  return derive(m, shape, [&](const std::vector<int64_t>& index) {
    std::vector<int64_t> from(index.size());
    for (size_t i = 0; i < axes.size(); ++i) from[axes[i]] = index[i];
    return from;
  });
}

std::optional<Model> model_slice(const Model& m, int64_t axis, int64_t start, int64_t stop, int64_t step) {
  if (!axis_in_range(axis, m.shape.size()) || step < 1) return std::nullopt;
  const size_t a = normalized(axis, m.shape.size());
  const int64_t n = m.shape[a];
  auto clamp = [n](int64_t i) {
    if (i < 0) i = i < -n ? 0 : i + n;  // written so that i + n cannot overflow
    return std::min(i, n);
  };
  const int64_t begin = clamp(start), end = clamp(stop);
  std::vector<int64_t> shape = m.shape;
  shape[a] = end > begin ? 1 + (end - begin - 1) / step : 0;
  return derive(m, shape, [&](const std::vector<int64_t>& index) {
    std::vector<int64_t> from = index;
    from[a] = begin + index[a] * step;
    return from;
  });
}

std::optional<Model> model_expand(const Model& m, const std::vector<int64_t>& shape) {
  if (shape.size() > CTL_MAX_RANK || shape.size() < m.shape.size()) return std::nullopt;
  const size_t lead = shape.size() - m.shape.size();
  std::vector<int64_t> out(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    const bool is_new = i < lead;
    const int64_t have = is_new ? 1 : m.shape[i - lead];
    const int64_t want = shape[i] == -1 && !is_new ? have : shape[i];
    if (want < 0) return std::nullopt;
    if (!is_new && have != 1 && have != want) return std::nullopt;
    out[i] = want;
  }
  if (!checked_numel(out)) return std::nullopt;
  return derive(m, out, [&](const std::vector<int64_t>& index) {
    std::vector<int64_t> from(m.shape.size());
    for (size_t d = 0; d < from.size(); ++d) from[d] = m.shape[d] == 1 ? 0 : index[d + lead];
    return from;
  });
}

std::vector<int64_t> take_shape(Input& in, size_t rank) {
  std::vector<int64_t> shape(rank);
  for (auto& d : shape) d = in.byte() < 200 ? in.dim() : in.integer();
  return shape;
}

// Checks a view call's outcome against the model and, on success, keeps the view.
void settle(ctl_status* status, ctl_tensor* out, const std::optional<Model>& want, bool may_refuse,
            std::vector<ctl_tensor*>& tensors, std::vector<Model>& models) {
  if (!fuzz::ok(status)) {
    if (out != fuzz::sentinel()) fuzz::fail("a failed view call wrote its out-parameter");
    if (want && !may_refuse) fuzz::fail("a view call refused arguments the documentation allows");
    return;
  }
  if (!out || out == fuzz::sentinel()) fuzz::fail("a view call succeeded without a tensor");
  tensors.push_back(out);
  if (!want) fuzz::fail("a view call accepted arguments the documentation refuses");
  const Model& m = *want;
  ctl_tensor_info info{};
  info.struct_size = CTL_TENSOR_INFO_STRUCT_SIZE;
  if (!fuzz::ok(ctl_tensor_get_info(out, &info))) fuzz::fail("ctl_tensor_get_info failed on a view");
  if (info.rank != m.shape.size()) fuzz::fail("a view has the wrong rank");
  for (size_t d = 0; d < info.rank; ++d) {
    if (info.shape[d] != m.shape[d]) fuzz::fail("a view has the wrong shape");
  }
  if (info.numel != m.numel()) fuzz::fail("a view has the wrong element count");
  if (m.known) {
    const std::vector<uint8_t> bytes = fuzz::host_bytes(out);
    if (bytes.size() != m.values.size() * sizeof(float) ||
        (!bytes.empty() && std::memcmp(bytes.data(), m.values.data(), bytes.size()) != 0)) {
      fuzz::fail("a view's elements differ from the documented ones");
    }
  }
  models.push_back(m);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Runtime& rt = fuzz::Runtime::get();
  Input in(data, size);
  std::vector<ctl_tensor*> tensors;
  std::vector<Model> models;
  // The first tensor: f32, rank 0 to 4, holding 0, 1, 2, ... so that every element is told
  // apart.
  Model base;
  base.shape.resize(in.below(5));
  for (auto& d : base.shape) d = in.byte() % 5;
  for (int64_t i = 0; i < base.numel(); ++i) base.values.push_back(static_cast<float>(i));
  ctl_tensor* t = nullptr;
  if (!fuzz::ok(ctl_tensor_from_host(rt.cpu, CTL_DTYPE_F32, base.shape.size(), base.shape.data(), base.values.data(),
                                     base.values.size() * sizeof(float), &t))) {
    fuzz::fail("ctl_tensor_from_host refused a small tensor");
  }
  tensors.push_back(t);
  models.push_back(base);

  for (int step = 0; step < 12 && !in.empty(); ++step) {
    const size_t pick = in.below(static_cast<uint32_t>(tensors.size()));
    ctl_tensor* source = tensors[pick];
    const Model m = models[pick];
    ctl_tensor* out = fuzz::sentinel();
    switch (in.below(6)) {
      case 0: {
        const std::vector<int64_t> shape = take_shape(in, in.below(10));
        settle(ctl_tensor_reshape(source, shape.size(), shape.data(), &out), out, model_reshape(m, shape),
               !m.contiguous, tensors, models);
        break;
      }
      case 1: {
        std::vector<int64_t> perm(in.byte() < 230 ? m.shape.size() : in.below(10));
        for (auto& p : perm) p = in.byte() < 200 ? in.below(static_cast<uint32_t>(perm.size() + 1)) : in.integer();
        settle(ctl_tensor_permute(source, perm.size(), perm.data(), &out), out, model_permute(m, perm), false, tensors,
               models);
        break;
      }
      case 2: {
        const int64_t a = in.integer(), b = in.integer();
        std::optional<Model> want;
        if (axis_in_range(a, m.shape.size()) && axis_in_range(b, m.shape.size())) {
          std::vector<int64_t> perm(m.shape.size());
          for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
          std::swap(perm[normalized(a, perm.size())], perm[normalized(b, perm.size())]);
          want = model_permute(m, perm);
        }
        settle(ctl_tensor_transpose(source, a, b, &out), out, want, false, tensors, models);
        break;
      }
      case 3: {
        const int64_t axis = in.integer(), start = in.integer(), stop = in.integer(), stride = in.integer();
        settle(ctl_tensor_slice(source, axis, start, stop, stride, &out), out,
               model_slice(m, axis, start, stop, stride), false, tensors, models);
        break;
      }
      case 4: {
        const std::vector<int64_t> shape = take_shape(in, in.below(10));
        settle(ctl_tensor_expand(source, shape.size(), shape.data(), &out), out, model_expand(m, shape), false, tensors,
               models);
        break;
      }
      case 5: {
        if (m.numel() > fuzz::kMaxReadElements) break;  // a copy of a huge broadcast is slow, not wrong
        Model copy = m;
        copy.contiguous = true;
        settle(ctl_tensor_contiguous(source, &out), out, copy, false, tensors, models);
        break;
      }
    }
  }
  for (ctl_tensor* tensor : tensors) ctl_tensor_release(tensor);
  return 0;
}
