// numeric_harness.cpp — see numeric_harness.h.
#include "numeric_harness.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <numeric>
#include <sstream>

#include "dispatch.h"
#include "op_schema.h"
#include "tensor.h"

namespace catalyst::conformance {
namespace {

constexpr unsigned char kGuardByte = 0xA5;

std::string shape_text(const int64_t* shape, size_t rank) {
  std::string s = "[";
  for (size_t i = 0; i < rank; ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

ctl_tensor_info info_of(const ctl_tensor* t) {
  ctl_tensor_info info{};
  info.struct_size = CTL_TENSOR_INFO_STRUCT_SIZE;
  check_ok(ctl_tensor_get_info(t, &info), "ctl_tensor_get_info");
  return info;
}

int64_t numel_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

// Element offsets (from the storage start) of every element of a view, in row-major order.
std::vector<int64_t> element_offsets(const ctl_tensor_info& info) {
  std::vector<int64_t> offsets(static_cast<size_t>(info.numel));
  if (info.numel == 0) return offsets;
  std::vector<int64_t> index(info.rank, 0);
  for (int64_t i = 0; i < info.numel; ++i) {
    int64_t at = info.offset;
    for (size_t k = 0; k < info.rank; ++k) at += index[k] * info.strides[k];
    offsets[static_cast<size_t>(i)] = at;
    for (size_t k = info.rank; k-- > 0;) {
      if (++index[k] < info.shape[k]) break;
      index[k] = 0;
    }
  }
  return offsets;
}

std::string index_text(size_t element, const ctl_tensor_info& info) {
  std::vector<int64_t> index(info.rank);
  size_t rest = element;
  for (size_t k = info.rank; k-- > 0;) {
    const int64_t dim = info.shape[k];
    index[k] = dim ? static_cast<int64_t>(rest % static_cast<size_t>(dim)) : 0;
    rest = dim ? rest / static_cast<size_t>(dim) : 0;
  }
  return shape_text(index.data(), index.size());
}

const char* layout_name(Layout l) {
  switch (l) {
    case Layout::kContiguous:
      return "contiguous";
    case Layout::kPermuted:
      return "permuted";
    case Layout::kSliced:
      return "sliced with a step";
    case Layout::kExpanded:
      return "expanded (stride 0)";
    case Layout::kRandom:
      return "random view";
  }
  return "?";
}

const char* output_layout_name(OutputLayout l) {
  switch (l) {
    case OutputLayout::kContiguous:
      return "contiguous output";
    case OutputLayout::kTransposed:
      return "transposed output";
    case OutputLayout::kGapped:
      return "output with gaps (stride 2)";
  }
  return "?";
}

// A guarded output: `view` inside `backing`, the backing's other bytes a known pattern.
struct GuardedOutput {
  TensorPtr backing;
  TensorPtr view;
  ctl_tensor_info info{};
  // Element offsets of the view inside the backing: shared by the reference's and the
  // device's output (a large case's are 128 MiB; copying them was 15% of its time).
  std::shared_ptr<const std::vector<int64_t>> offsets;
};

// Builds the view of `shape` inside `backing` for the layout (metadata only).
TensorPtr make_output_view(ctl_tensor* backing, const std::vector<int64_t>& shape, OutputLayout layout, int64_t guard,
                           int64_t n) {
  const size_t rank = shape.size();
  if (layout == OutputLayout::kTransposed && rank < 2) layout = OutputLayout::kGapped;
  ctl_tensor* slice = nullptr;
  const int64_t step = layout == OutputLayout::kGapped ? 2 : 1;
  check_ok(ctl_tensor_slice(backing, 0, guard, guard + step * n, step, &slice), "slicing an output's backing");
  TensorPtr sliced(slice);
  ctl_tensor* shaped = nullptr;
  if (layout == OutputLayout::kTransposed) {
    std::vector<int64_t> reversed(shape.rbegin(), shape.rend());
    check_ok(ctl_tensor_reshape(slice, rank, reversed.data(), &shaped), "reshaping an output view");
    TensorPtr r(shaped);
    std::vector<int64_t> perm(rank);
    for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(rank - 1 - i);
    ctl_tensor* permuted = nullptr;
    check_ok(ctl_tensor_permute(shaped, rank, perm.data(), &permuted), "permuting an output view");
    return TensorPtr(permuted);
  }
  check_ok(ctl_tensor_reshape(slice, rank, shape.data(), &shaped), "reshaping an output view");
  return TensorPtr(shaped);
}

// Guarded outputs of `shape` on the reference and on the device under test, laid out alike
// and starting from the same bytes; `initial` (row-major elements, may be empty) become the
// views' starting contents.
std::pair<GuardedOutput, GuardedOutput> make_guarded_outputs(ctl_device* reference, ctl_device* device, ctl_dtype dtype,
                                                             const std::vector<int64_t>& shape, OutputLayout layout,
                                                             const std::vector<unsigned char>& initial) {
  const size_t size = ctl_dtype_size(dtype);
  const int64_t guard = std::max<int64_t>(16, static_cast<int64_t>(64 / size));
  const int64_t n = numel_of(shape);
  const int64_t span =
      (layout == OutputLayout::kContiguous || (layout == OutputLayout::kTransposed && shape.size() >= 2)) ? n : 2 * n;
  const int64_t total = guard + span + guard;
  // The geometry, from a probe view on uninitialised memory (no data moves).
  ctl_tensor_info info{};
  {
    ctl_tensor* probe = nullptr;
    check_ok(ctl_tensor_create(reference, dtype, 1, &total, &probe), "allocating a probe output");
    TensorPtr probe_owner(probe);
    TensorPtr probe_view = make_output_view(probe, shape, layout, guard, n);
    info = info_of(probe_view.get());
  }
  const auto shared_offsets = std::make_shared<const std::vector<int64_t>>(element_offsets(info));
  const std::vector<int64_t>& offsets = *shared_offsets;
  std::vector<unsigned char> bytes(static_cast<size_t>(total) * size, kGuardByte);
  if (!initial.empty()) {
    for (size_t i = 0; i < offsets.size(); ++i) {
      std::memcpy(bytes.data() + static_cast<size_t>(offsets[i]) * size, initial.data() + i * size, size);
    }
  } else if (is_float(dtype)) {
    // An output without starting contents is written, never read: its elements start as
    // NaN, so that a device that reads them (out += ..., beta * out with beta 0, a blend
    // with what was there) or leaves some unwritten shows NaN where a number is expected.
    for (int64_t at : offsets) store(bytes.data() + static_cast<size_t>(at) * size, dtype, std::nan(""));
  }
  auto place = [&](ctl_device* where, const char* who) {
    GuardedOutput out;
    out.info = info;
    out.offsets = shared_offsets;
    ctl_tensor* backing = nullptr;
    check_ok(ctl_tensor_from_host(where, dtype, 1, &total, bytes.data(), bytes.size(), &backing),
             std::string("creating a guarded output on ") + who);
    out.backing.reset(backing);
    out.view = make_output_view(backing, shape, layout, guard, n);
    const ctl_tensor_info actual = info_of(out.view.get());
    if (actual.offset != info.offset || !std::equal(actual.strides, actual.strides + actual.rank, info.strides)) {
      throw CaseFailure("internal: an output view has different strides on the two devices");
    }
    return out;
  };
  return {place(reference, "the reference"), place(device, "the device")};
}

// The backing's bytes, the view's elements extracted in row-major order, and the first
// byte outside the elements that is no longer the guard pattern (described in words).
struct ReadBack {
  std::vector<unsigned char> elements;
  std::string guard_violation;
};

ReadBack read_back(const GuardedOutput& out, const char* who) {
  const std::vector<int64_t>& offsets = *out.offsets;
  const ctl_dtype dtype = out.info.dtype;
  const size_t size = ctl_dtype_size(dtype);
  const int64_t total = ctl_tensor_numel(out.backing.get());
  std::vector<unsigned char> bytes(static_cast<size_t>(total) * size);
  check_ok(ctl_tensor_to_host(out.backing.get(), bytes.data(), bytes.size()),
           std::string("reading an output back from ") + who);
  ReadBack r;
  r.elements.resize(offsets.size() * size);
  std::vector<unsigned char> covered(static_cast<size_t>(total), 0);
  for (size_t i = 0; i < offsets.size(); ++i) {
    const size_t at = static_cast<size_t>(offsets[i]);
    covered[at] = 1;
    std::memcpy(r.elements.data() + i * size, bytes.data() + at * size, size);
  }
  const int64_t first = offsets.empty() ? out.info.offset : *std::min_element(offsets.begin(), offsets.end());
  const int64_t last = offsets.empty() ? out.info.offset - 1 : *std::max_element(offsets.begin(), offsets.end());
  size_t changed = 0;
  int64_t first_changed = -1;
  for (int64_t e = 0; e < total; ++e) {
    if (covered[static_cast<size_t>(e)]) continue;
    const unsigned char* p = bytes.data() + static_cast<size_t>(e) * size;
    bool intact = true;
    for (size_t b = 0; b < size; ++b) intact = intact && p[b] == kGuardByte;
    if (intact) continue;
    ++changed;
    if (first_changed < 0) first_changed = e;
  }
  if (changed) {
    std::ostringstream o;
    o << changed << " element slot(s) outside the output were written; the first ";
    if (first_changed < first) {
      o << "is " << (first - first_changed) << " element(s) before the output's first element";
    } else if (first_changed > last) {
      o << "is " << (first_changed - last) << " element(s) past the output's last element";
    } else {
      o << "lies between the output's elements (a gap of the strided output)";
    }
    o << " (the guard pattern 0x" << std::hex << static_cast<int>(kGuardByte) << " was overwritten)";
    r.guard_violation = o.str();
  }
  return r;
}

// The bytes of a whole tensor, row-major.
std::vector<unsigned char> tensor_bytes(const ctl_tensor* t, const char* what) {
  std::vector<unsigned char> bytes(static_cast<size_t>(ctl_tensor_numel(t)) * ctl_dtype_size(ctl_tensor_dtype(t)));
  check_ok(ctl_tensor_to_host(t, bytes.data(), bytes.size()), what);
  return bytes;
}

// "" when the device's copy of an input (the whole tensor its view was cut from) still
// holds the bytes the reference's copy holds; else the number of changed elements and the
// first of them, by its index in the input's view when it lies inside it.
std::string changed_input_text(const Operand& in) {
  const ctl_tensor* dev = in.device_base ? in.device_base.get() : in.device.get();
  const ctl_tensor* ref = in.reference_base ? in.reference_base.get() : in.reference.get();
  const std::vector<unsigned char> now = tensor_bytes(dev, "reading an input back from the device");
  const std::vector<unsigned char> given = tensor_bytes(ref, "internal: reading an input back from the reference");
  const ctl_dtype dtype = ctl_tensor_dtype(dev);
  const size_t size = ctl_dtype_size(dtype);
  if (now.size() != given.size()) return "its size changed";
  size_t changed = 0, first = 0;
  for (size_t e = 0; e * size < now.size(); ++e) {
    if (std::memcmp(now.data() + e * size, given.data() + e * size, size) == 0) continue;
    if (changed++ == 0) first = e;
  }
  if (changed == 0) return "";
  std::ostringstream o;
  o.precision(17);
  o << changed << " element(s) of its buffer changed; the first ";
  const ctl_tensor_info view = info_of(in.device.get());
  bool inside = !in.device_base;
  size_t view_element = first;
  if (in.device_base) {
    const std::vector<int64_t> offsets = element_offsets(view);
    const auto it = std::find(offsets.begin(), offsets.end(), static_cast<int64_t>(first));
    inside = it != offsets.end();
    view_element = static_cast<size_t>(it - offsets.begin());
  }
  if (inside) {
    o << "is element " << index_text(view_element, view);
  } else {
    o << "is element " << first << " of the tensor the view was cut from, outside the view";
  }
  o << ": was " << load(given.data() + first * size, dtype) << ", now " << load(now.data() + first * size, dtype);
  return o.str();
}

}  // namespace

void check_ok(ctl_status* status, const std::string& what) {
  if (!status) return;
  std::string message =
      what + " failed: " + ctl_status_code_name(ctl_status_get_code(status)) + ": " + ctl_status_get_message(status);
  ctl_status_free(status);
  throw CaseFailure(message);
}

std::string describe_tensor(const ctl_tensor* t) {
  const ctl_tensor_info info = info_of(t);
  std::ostringstream o;
  o << ctl_dtype_name(info.dtype) << " shape " << shape_text(info.shape, info.rank) << " strides "
    << shape_text(info.strides, info.rank) << " offset " << info.offset;
  return o.str();
}

void Harness::require_dtype(ctl_dtype dtype, const char* what) {
  if (!(ctx_.dtype_mask & CTL_DTYPE_BIT(dtype))) {
    throw CaseUnsupported(std::string("the device does not claim dtype ") + ctl_dtype_name(dtype) + " (" + what + ")");
  }
}

namespace {

// How an input view is cut from its base tensor.
struct ViewPlan {
  Layout layout = Layout::kContiguous;
  std::vector<int64_t> base;  // the shape of the tensor the view is cut from
  std::vector<int64_t> perm;  // kPermuted: base axis perm[i] becomes view axis i
  size_t slice_axis = 0;
  int64_t slice_start = 0, slice_step = 1;
  int expand_axis = -1;  // kExpanded: the axis broadcast from size 1, or -1 for none
};

ViewPlan plan_view(const std::vector<int64_t>& shape, Layout layout, std::mt19937_64& rng) {
  const size_t rank = shape.size();
  ViewPlan v;
  if (layout == Layout::kRandom) {
    const Layout choices[] = {Layout::kContiguous, Layout::kPermuted, Layout::kSliced, Layout::kExpanded};
    layout = choices[rng() % 4];
  }
  v.layout = layout;
  v.base = shape;
  v.perm.resize(rank);
  std::iota(v.perm.begin(), v.perm.end(), 0);
  if (layout == Layout::kPermuted && rank >= 2) {
    // A random permutation other than the identity.
    do std::shuffle(v.perm.begin(), v.perm.end(), rng);
    while (std::is_sorted(v.perm.begin(), v.perm.end()));
    for (size_t i = 0; i < rank; ++i) v.base[v.perm[i]] = shape[i];
  } else if (layout == Layout::kSliced && rank >= 1) {
    v.slice_axis = rng() % rank;
    v.slice_step = 2 + static_cast<int64_t>(rng() % 2);
    v.slice_start = static_cast<int64_t>(rng() % 2);
    v.base[v.slice_axis] = v.slice_start + v.slice_step * shape[v.slice_axis] + static_cast<int64_t>(rng() % 2);
  } else if (layout == Layout::kExpanded) {
    for (size_t i = 0; i < rank; ++i) {
      if (shape[i] > 1) {
        v.expand_axis = static_cast<int>(i);
        v.base[i] = 1;
        break;
      }
    }
  }
  return v;
}

// The layout the judged rerun's "other strides" run uses instead of `layout`: every input
// changes its strides (a contiguous one becomes a slice, a view becomes contiguous or
// another kind of view).
Layout other_layout(Layout layout) {
  switch (layout) {
    case Layout::kContiguous:
      return Layout::kSliced;
    case Layout::kSliced:
      return Layout::kPermuted;
    case Layout::kPermuted:
    case Layout::kExpanded:
    case Layout::kRandom:
      return Layout::kContiguous;
  }
  return Layout::kContiguous;
}

}  // namespace

Operand Harness::input(ctl_dtype d, const std::vector<int64_t>& shape, Layout layout, Values kind) {
  require_dtype(d, "an input");
  const size_t rank = shape.size();
  std::mt19937_64& rng = ctx_.rng;
  ViewPlan plan = plan_view(shape, layout, rng);
  auto bytes = random_values(d, numel_of(plan.base), kind, rng);
  // The judged rerun: other values (and for one of its runs other strides), while rng has
  // advanced exactly as on the first run, so every later shape the case draws is the same.
  if (ctx_.other_layouts && ctx_.fresh_values) plan = plan_view(shape, other_layout(plan.layout), *ctx_.fresh_values);
  if (ctx_.fresh_values) bytes = random_values(d, numel_of(plan.base), kind, *ctx_.fresh_values);
  const std::vector<int64_t>& base = plan.base;
  Operand op;
  for (int side = 0; side < 2; ++side) {
    ctl_device* device = side == 0 ? ctx_.device : ctx_.reference;
    ctl_tensor* t = nullptr;
    check_ok(ctl_tensor_from_host(device, d, rank, base.data(), bytes.data(), bytes.size(), &t),
             std::string("creating an input on ") + (side ? "the reference" : "the device"));
    TensorPtr owner(t);
    ctl_tensor* view = nullptr;
    if (plan.layout == Layout::kPermuted && rank >= 2) {
      // view axis i is base axis perm[i]
      std::vector<int64_t> p(plan.perm.begin(), plan.perm.end());
      check_ok(ctl_tensor_permute(t, rank, p.data(), &view), "permuting an input");
    } else if (plan.layout == Layout::kSliced && rank >= 1) {
      check_ok(ctl_tensor_slice(t, static_cast<int64_t>(plan.slice_axis), plan.slice_start,
                                plan.slice_start + plan.slice_step * shape[plan.slice_axis], plan.slice_step, &view),
               "slicing an input");
    } else if (plan.expand_axis >= 0) {
      check_ok(ctl_tensor_expand(t, rank, shape.data(), &view), "expanding an input");
    }
    if (view) {
      (side == 0 ? op.device : op.reference).reset(view);
      (side == 0 ? op.device_base : op.reference_base) = std::move(owner);
    } else {
      (side == 0 ? op.device : op.reference) = std::move(owner);
    }
  }
  std::string name = layout_name(plan.layout);
  if ((plan.layout == Layout::kPermuted && rank < 2) || (plan.layout == Layout::kSliced && rank < 1) ||
      (plan.layout == Layout::kExpanded && plan.expand_axis < 0)) {
    name = "contiguous";
  }
  op.layout = name;
  return op;
}

Operand Harness::input_from(ctl_dtype d, const std::vector<int64_t>& shape, const std::vector<double>& values) {
  std::vector<unsigned char> bytes(values.size() * ctl_dtype_size(d));
  for (size_t i = 0; i < values.size(); ++i) store(bytes.data() + i * ctl_dtype_size(d), d, values[i]);
  return input_bytes(d, shape, bytes);
}

Operand Harness::input_bytes(ctl_dtype d, const std::vector<int64_t>& shape, const std::vector<unsigned char>& bytes) {
  require_dtype(d, "an input");
  Operand op;
  for (int side = 0; side < 2; ++side) {
    ctl_tensor* t = nullptr;
    check_ok(ctl_tensor_from_host(side ? ctx_.reference : ctx_.device, d, shape.size(), shape.data(), bytes.data(),
                                  bytes.size(), &t),
             "creating an input");
    (side == 0 ? op.device : op.reference).reset(t);
  }
  op.layout = "contiguous, chosen values";
  return op;
}

TensorPtr Harness::reference_abs(const Operand& operand) {
  ctl_tensor* t = nullptr;
  check_ok(ctl_op_unary(CTL_OP_ABS, operand.reference.get(), &t), "internal: |x| on the reference");
  return TensorPtr(t);
}

std::vector<double> Harness::reference_values(ctl_op_id op, const std::vector<ctl_tensor*>& inputs, const void* attrs) {
  ctl_tensor* out = nullptr;
  check_ok(ctl_op_run(op, inputs.size(), inputs.data(), attrs, 1, &out),
           "internal: a tolerance scale on the reference");
  TensorPtr owner(out);
  const ctl_dtype d = ctl_tensor_dtype(out);
  std::vector<unsigned char> bytes(static_cast<size_t>(ctl_tensor_numel(out)) * ctl_dtype_size(d));
  check_ok(ctl_tensor_to_host(out, bytes.data(), bytes.size()), "internal: reading a tolerance scale");
  std::vector<double> v(bytes.size() / ctl_dtype_size(d));
  for (size_t i = 0; i < v.size(); ++i) v[i] = load(bytes.data() + i * ctl_dtype_size(d), d);
  return v;
}

std::vector<double> Harness::reference_abs_values(ctl_op_id op, const std::vector<const Operand*>& inputs,
                                                  const std::vector<bool>& abs_of, const void* attrs) {
  std::vector<TensorPtr> keep;
  std::vector<ctl_tensor*> in;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (abs_of.empty() || abs_of[k]) {
      keep.push_back(reference_abs(*inputs[k]));
      in.push_back(keep.back().get());
    } else {
      in.push_back(inputs[k]->reference.get());
    }
  }
  return reference_values(op, in, attrs);
}

void Harness::run(ctl_op_id op, const std::vector<const Operand*>& inputs, const void* attrs, size_t output_count,
                  const std::vector<Tolerance>& tols, OutputLayout out_layout, const Operand* initial) {
  run(op, inputs, attrs, initial ? 1 : output_count, tols, out_layout,
      initial ? std::vector<const Operand*>{initial} : std::vector<const Operand*>{});
}

void Harness::run(ctl_op_id op, const std::vector<const Operand*>& inputs, const void* attrs, size_t output_count,
                  const std::vector<Tolerance>& tols, OutputLayout out_layout,
                  const std::vector<const Operand*>& initial, const std::vector<bool>& requested) {
  std::vector<bool> present;
  std::vector<ctl_dtype> dtypes;
  std::vector<std::vector<int64_t>> shapes;
  // An op that updates its outputs in place gives the starting contents of every output
  // it requests (sgd_step without momentum leaves its buffer out).
  auto wanted = [&](size_t k) { return k >= requested.size() || requested[k]; };
  bool all_initial = output_count > 0 && initial.size() >= output_count && initial[0];
  for (size_t k = 0; all_initial && k < output_count; ++k) all_initial = initial[k] || !wanted(k);
  if (all_initial) {
    // They have the shapes of their starting contents (an unrequested one: output 0's).
    for (size_t k = 0; k < output_count; ++k) {
      const ctl_tensor* t = (initial[k] ? initial[k] : initial[0])->reference.get();
      std::vector<int64_t> shape(ctl_tensor_rank(t));
      for (size_t i = 0; i < shape.size(); ++i) shape[i] = ctl_tensor_dim(t, static_cast<int64_t>(i));
      present.push_back(true);
      dtypes.push_back(ctl_tensor_dtype(t));
      shapes.push_back(std::move(shape));
    }
  } else {
    // What the op produces, from the core's own validation of the reference-side call.
    std::vector<ctl_tensor*> ref_in;
    for (const Operand* in : inputs) ref_in.push_back(in ? in->reference.get() : nullptr);
    PreparedOp prepared;
    check_ok(prepare_op(op, ref_in.size(), ref_in.data(), attrs, output_count, nullptr, true, &prepared),
             std::string("internal: the suite built an invalid ") + ctl_op_name(op) + " call");
    for (size_t k = 0; k < output_count; ++k) {
      const OutputSpec& spec = prepared.outputs[k];
      present.push_back(spec.present);
      dtypes.push_back(spec.dtype);
      shapes.emplace_back(spec.shape.begin(), spec.shape.begin() + spec.rank);
    }
  }
  for (size_t k = 0; k < output_count && k < requested.size(); ++k) {
    if (!requested[k]) present[k] = false;
  }
  run_outputs(op, inputs, attrs, present, dtypes, shapes, tols, out_layout, initial);
}

void Harness::run_creation(ctl_op_id op, ctl_dtype dtype, const std::vector<int64_t>& shape, const void* attrs,
                           const Tolerance& tol, OutputLayout out_layout) {
  run_outputs(op, {}, attrs, {true}, {dtype}, {shape}, {tol}, out_layout, {});
}

void Harness::run_outputs(ctl_op_id op, const std::vector<const Operand*>& inputs, const void* attrs,
                          const std::vector<bool>& present, const std::vector<ctl_dtype>& dtypes,
                          const std::vector<std::vector<int64_t>>& shapes, const std::vector<Tolerance>& tols,
                          OutputLayout out_layout, const std::vector<const Operand*>& initial) {
  const char* name = ctl_op_name(op);
  for (ctl_dtype d : dtypes) require_dtype(d, "an output");
  if (ctx_.other_layouts) out_layout = static_cast<OutputLayout>((static_cast<int>(out_layout) + 1) % 3);
  // The starting contents of each output (empty: none), row-major.
  std::vector<std::vector<unsigned char>> initial_bytes(dtypes.size());
  for (size_t k = 0; k < dtypes.size() && k < initial.size(); ++k) {
    if (!initial[k] || !present[k]) continue;
    const ctl_tensor* t = initial[k]->reference.get();
    if (ctl_tensor_dtype(t) != dtypes[k] || ctl_tensor_numel(t) != numel_of(shapes[k])) {
      throw CaseFailure("internal: the starting contents of output " + std::to_string(k) + " do not fit it");
    }
    initial_bytes[k].resize(static_cast<size_t>(ctl_tensor_numel(t)) * ctl_dtype_size(dtypes[k]));
    check_ok(ctl_tensor_to_host(t, initial_bytes[k].data(), initial_bytes[k].size()),
             "internal: reading initial output values");
  }
  std::vector<GuardedOutput> dev_out, ref_out;
  std::vector<ctl_tensor*> dev_views, ref_views;
  for (size_t k = 0; k < dtypes.size(); ++k) {
    if (!present[k]) {
      dev_out.emplace_back();
      ref_out.emplace_back();
      dev_views.push_back(nullptr);
      ref_views.push_back(nullptr);
      continue;
    }
    const auto& init = initial_bytes[k];
    auto [ref, dev] = make_guarded_outputs(ctx_.reference, ctx_.device, dtypes[k], shapes[k], out_layout, init);
    ref_out.push_back(std::move(ref));
    dev_out.push_back(std::move(dev));
    ref_views.push_back(ref_out.back().view.get());
    dev_views.push_back(dev_out.back().view.get());
  }
  std::vector<ctl_tensor*> ref_in, dev_in;
  for (const Operand* in : inputs) {
    ref_in.push_back(in ? in->reference.get() : nullptr);
    dev_in.push_back(in ? in->device.get() : nullptr);
  }
  // The device's claim first (an unclaimed call costs no reference work), the oracle, then
  // the device's answer.
  bool asked = false;
  if (ctl_status* s =
          query_op_support(op, dev_in.size(), dev_in.data(), attrs, dev_views.size(), dev_views.data(), &asked)) {
    const ctl_status_code code = ctl_status_get_code(s);
    std::string message = ctl_status_get_message(s);
    ctl_status_free(s);
    if (code == CTL_STATUS_UNSUPPORTED) throw CaseUnsupported("op_supports: " + message);
    throw CaseFailure(std::string("op_supports failed with ") + ctl_status_code_name(code) + ": " + message);
  }
  // The oracle.
  check_ok(ctl_op_run_into(op, ref_in.size(), ref_in.data(), attrs, ref_views.size(), ref_views.data()),
           std::string("internal: the reference ") + name);
  if (ctl_status* s = ctl_op_run_into(op, dev_in.size(), dev_in.data(), attrs, dev_views.size(), dev_views.data())) {
    const ctl_status_code code = ctl_status_get_code(s);
    std::string message = ctl_status_get_message(s);
    ctl_status_free(s);
    if (code == CTL_STATUS_UNSUPPORTED && !asked) throw CaseUnsupported("op_execute: " + message);
    if (code == CTL_STATUS_UNSUPPORTED) {
      throw CaseFailure("op_supports claimed this call but op_execute answered UNSUPPORTED: " + message);
    }
    throw CaseFailure(std::string("op_execute failed with ") + ctl_status_code_name(code) + ": " + message);
  }
  // The outputs first: the first read after the op is an output's, behind one synchronize.
  std::vector<ReadBack> expected_out(dtypes.size()), got_out(dtypes.size());
  for (size_t k = 0; k < dtypes.size(); ++k) {
    if (!present[k]) continue;
    expected_out[k] = read_back(ref_out[k], "the reference");
    if (!expected_out[k].guard_violation.empty()) {
      throw CaseFailure("internal: the reference kernel of " + std::string(name) + " wrote outside its output");
    }
    got_out[k] = read_back(dev_out[k], "the device");
    if (ctx_.outputs_seen) ctx_.outputs_seen->push_back({dtypes[k], got_out[k].elements});
  }
  std::ostringstream inputs_text;
  for (size_t i = 0; i < inputs.size(); ++i) {
    inputs_text << "\n  input " << i << ": "
                << (inputs[i] ? describe_tensor(inputs[i]->device.get()) + " (" + inputs[i]->layout + ")"
                              : std::string("absent"));
  }
  // Inputs are read-only for every op (in-place ops update their outputs): a device that
  // writes into one, scratch or not, corrupts its caller's data.
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i] || std::find(inputs.begin(), inputs.begin() + static_cast<std::ptrdiff_t>(i), inputs[i]) !=
                          inputs.begin() + static_cast<std::ptrdiff_t>(i)) {
      continue;
    }
    const std::string changed = changed_input_text(*inputs[i]);
    if (!changed.empty()) {
      throw CaseFailure(std::string(name) + ": input " + std::to_string(i) + " was written by the op: " + changed +
                        inputs_text.str());
    }
  }
  for (size_t k = 0; k < dtypes.size(); ++k) {
    if (!present[k]) continue;
    const ReadBack& expected = expected_out[k];
    const ReadBack& got = got_out[k];
    std::ostringstream where;
    where << inputs_text.str();
    where << "\n  output " << k << ": " << describe_tensor(dev_out[k].view.get()) << " ("
          << output_layout_name(out_layout) << ")";
    if (!got.guard_violation.empty()) {
      throw CaseFailure(std::string(name) + " " + ctl_dtype_name(dtypes[k]) + ": output " + std::to_string(k) + ": " +
                        got.guard_violation + where.str());
    }
    const Tolerance& tol = tols.empty() ? Tolerance{} : tols[std::min(k, tols.size() - 1)];
    const Comparison c = compare_elements(got.elements, expected.elements, dtypes[k], tol);
    if (c.bad == 0) continue;
    std::ostringstream o;
    o.precision(17);
    o << name << " " << ctl_dtype_name(dtypes[k]) << ": output " << k << ": " << c.bad << " of " << c.total
      << " elements differ from the reference" << where.str() << "\n  worst element "
      << index_text(c.worst.element, dev_out[k].info) << ": expected " << c.worst.expected << ", got " << c.worst.got
      << " (" << c.worst.why << ")";
    throw CaseFailure(o.str());
  }
}

}  // namespace catalyst::conformance
