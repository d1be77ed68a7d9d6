// movement.cpp — reference kernels that move or convert elements: copy, cast, concat,
// gather and scatter_add. Moves copy bytes, so values (NaN payloads, -0) survive exactly;
// cast converts through double or int64 by the rules of docs/ops.md.
#include <cstring>
#include <vector>

#include "catalyst/sdk/view.hpp"
#include "reference_kernels.h"

namespace catalyst::reference {
namespace {

ctl_status* check_copy_shapes(const Call& call) {
  if (!same_shape(call.in[0], call.out[0]))
    return call.invalid("output shape %s differs from input shape %s", shape_string(call.out[0]).c_str(),
                        shape_string(call.in[0]).c_str());
  return nullptr;
}

// The axis from ctl_axis_attrs (NULL attrs: axis 0), checked against `rank`.
ctl_status* read_axis(const Call& call, uint32_t rank, uint32_t* axis) {
  ctl_axis_attrs attrs;
  bool present = false;
  CTL_SDK_RETURN_IF_ERROR(read_attrs(call, CTL_AXIS_ATTRS_STRUCT_SIZE, &attrs, &present));
  const int32_t value = present ? attrs.axis : 0;
  if (value < 0 || static_cast<uint32_t>(value) >= rank)
    return call.invalid("axis %d is out of range for rank %u", value, rank);
  *axis = static_cast<uint32_t>(value);
  return nullptr;
}

// The layout shared by gather's output and scatter_add's src: x.shape[:axis] +
// index.shape + x.shape[axis+1:]. For a walk over that shape, `x_strides` gets `x_inner`
// on the x axes and 0 on the index axes, `index_strides` the reverse.
struct TakeLayout {
  uint32_t rank = 0;
  int64_t shape[CTL_MAX_RANK] = {};
  int64_t x_strides[CTL_MAX_RANK] = {};
  int64_t index_strides[CTL_MAX_RANK] = {};
};

bool take_layout(const Operand& x, const int64_t* x_inner, const Operand& index, uint32_t axis, TakeLayout* out) {
  if (x.rank - 1 + index.rank > CTL_MAX_RANK) return false;
  out->rank = x.rank - 1 + index.rank;
  for (uint32_t d = 0; d < out->rank; ++d) {
    if (d < axis) {
      out->shape[d] = x.shape[d];
      out->x_strides[d] = x_inner[d];
    } else if (d < axis + index.rank) {
      out->shape[d] = index.shape[d - axis];
      out->index_strides[d] = index.strides[d - axis];
    } else {
      out->shape[d] = x.shape[d - index.rank + 1];
      out->x_strides[d] = x_inner[d - index.rank + 1];
    }
  }
  return true;
}

bool matches(const TakeLayout& layout, const Operand& v) {
  if (v.rank != layout.rank) return false;
  for (uint32_t d = 0; d < v.rank; ++d) {
    if (v.shape[d] != layout.shape[d]) return false;
  }
  return true;
}

// An index read from the index tensor as a position along an axis of length n: negative
// counts from the end; false when it lies outside [-n, n).
bool position(int64_t i, int64_t n, int64_t* out) {
  if (i < -n || i >= n) return false;
  *out = i < 0 ? i + n : i;
  return true;
}

}  // namespace

ctl_status* run_copy(const Call& call) {
  CTL_SDK_RETURN_IF_ERROR(check_copy_shapes(call));
  const Operand& x = call.in[0];
  const Operand& y = call.out[0];
  sdk::StridedWalker<2> walk(y.rank, y.shape);
  const size_t xs = walk.add(x.strides), ys = walk.add(y.strides);
  for (int64_t i = 0, n = y.numel(); i < n; ++i, walk.next()) {
    std::memcpy(y.at(walk.offset(ys)), x.at(walk.offset(xs)), y.element_size);
  }
  return nullptr;
}

ctl_status* run_cast(const Call& call) {
  CTL_SDK_RETURN_IF_ERROR(check_copy_shapes(call));
  const Operand& x = call.in[0];
  const Operand& y = call.out[0];
  sdk::StridedWalker<2> walk(y.rank, y.shape);
  const size_t xs = walk.add(x.strides), ys = walk.add(y.strides);
  for (int64_t i = 0, n = y.numel(); i < n; ++i, walk.next()) {
    const int64_t xo = walk.offset(xs), yo = walk.offset(ys);
    if (x.dtype == y.dtype) {
      std::memcpy(y.at(yo), x.at(xo), y.element_size);
    } else if (is_float(x.dtype)) {
      y.store(yo, x.load(xo));
    } else {  // integers and bool go through int64, exactly
      y.store_i(yo, x.load_i(xo));
    }
  }
  return nullptr;
}

ctl_status* run_concat(const Call& call) {
  const Operand& y = call.out[0];
  uint32_t axis = 0;
  CTL_SDK_RETURN_IF_ERROR(read_axis(call, y.rank, &axis));
  int64_t total = 0;
  for (size_t i = 0; i < call.in.size(); ++i) {
    const Operand& x = call.in[i];
    bool ok = x.rank == y.rank;
    for (uint32_t d = 0; ok && d < y.rank; ++d) ok = d == axis || x.shape[d] == y.shape[d];
    if (!ok)
      return call.invalid("input[%zu] shape %s does not fit the output %s along axis %u", i, shape_string(x).c_str(),
                          shape_string(y).c_str(), axis);
    total += x.shape[axis];
  }
  if (total != y.shape[axis])
    return call.invalid("inputs add up to %lld along axis %u, the output has %lld", static_cast<long long>(total), axis,
                        static_cast<long long>(y.shape[axis]));
  int64_t start = 0;  // where the current input begins along the axis
  for (const Operand& x : call.in) {
    sdk::StridedWalker<2> walk(x.rank, x.shape);
    const size_t xs = walk.add(x.strides), ys = walk.add(y.strides);
    const int64_t y0 = start * y.strides[axis];
    for (int64_t i = 0, n = x.numel(); i < n; ++i, walk.next()) {
      std::memcpy(y.at(y0 + walk.offset(ys)), x.at(walk.offset(xs)), y.element_size);
    }
    start += x.shape[axis];
  }
  return nullptr;
}

ctl_status* run_gather(const Call& call) {
  const Operand& x = call.in[0];
  const Operand& index = call.in[1];
  const Operand& y = call.out[0];
  uint32_t axis = 0;
  CTL_SDK_RETURN_IF_ERROR(read_axis(call, x.rank, &axis));
  TakeLayout layout;
  if (!take_layout(x, x.strides, index, axis, &layout) || !matches(layout, y))
    return call.invalid(
        "output shape %s is not x.shape[:axis] + index.shape + "
        "x.shape[axis+1:] for x %s, index %s, axis %u",
        shape_string(y).c_str(), shape_string(x).c_str(), shape_string(index).c_str(), axis);
  sdk::StridedWalker<3> walk(y.rank, y.shape);
  const size_t xs = walk.add(layout.x_strides), is = walk.add(layout.index_strides), ys = walk.add(y.strides);
  for (int64_t i = 0, n = y.numel(); i < n; ++i, walk.next()) {
    int64_t p = 0;
    unsigned char* target = y.at(walk.offset(ys));
    if (position(index.load_i(walk.offset(is)), x.shape[axis], &p)) {
      std::memcpy(target, x.at(walk.offset(xs) + p * x.strides[axis]), y.element_size);
    } else {
      std::memset(target, 0, y.element_size);  // zero bytes are 0 in every dtype
    }
  }
  return nullptr;
}

ctl_status* run_scatter_add(const Call& call) {
  const Operand& target = call.in[0];
  const Operand& index = call.in[1];
  const Operand& src = call.in[2];
  const Operand& y = call.out[0];
  uint32_t axis = 0;
  CTL_SDK_RETURN_IF_ERROR(read_axis(call, target.rank, &axis));
  if (!same_shape(target, y))
    return call.invalid("output shape %s differs from target shape %s", shape_string(y).c_str(),
                        shape_string(target).c_str());
  // Sums are kept per output element in row-major order, so `dense` holds its strides.
  int64_t dense[CTL_MAX_RANK];
  int64_t step = 1;
  for (uint32_t d = target.rank; d-- > 0;) {
    dense[d] = step;
    step *= target.shape[d];
  }
  TakeLayout layout;
  if (!take_layout(target, dense, index, axis, &layout) || !matches(layout, src))
    return call.invalid(
        "src shape %s is not target.shape[:axis] + index.shape + "
        "target.shape[axis+1:] for target %s, index %s, axis %u",
        shape_string(src).c_str(), shape_string(target).c_str(), shape_string(index).c_str(), axis);
  // Floats sum in double and round once; integers sum exactly with wrap.
  const bool floats = is_float(y.dtype);
  const int64_t count = y.numel();
  std::vector<double> sums(floats ? count : 0);
  std::vector<int64_t> int_sums(floats ? 0 : count);
  sdk::StridedWalker<2> out_walk(y.rank, y.shape);
  const size_t ts = out_walk.add(target.strides), ys = out_walk.add(y.strides);
  for (int64_t i = 0; i < count; ++i, out_walk.next()) {
    if (floats)
      sums[i] = target.load(out_walk.offset(ts));
    else
      int_sums[i] = target.load_i(out_walk.offset(ts));
  }
  sdk::StridedWalker<3> walk(src.rank, src.shape);
  const size_t ds = walk.add(layout.x_strides), is = walk.add(layout.index_strides), ss = walk.add(src.strides);
  for (int64_t i = 0, n = src.numel(); i < n; ++i, walk.next()) {
    int64_t p = 0;
    if (!position(index.load_i(walk.offset(is)), target.shape[axis], &p)) continue;  // skipped
    const int64_t at = walk.offset(ds) + p * dense[axis];
    if (floats)
      sums[at] += src.load(walk.offset(ss));
    else
      int_sums[at] = wrap_add(int_sums[at], src.load_i(walk.offset(ss)));
  }
  out_walk.seek(0);
  for (int64_t i = 0; i < count; ++i, out_walk.next()) {
    if (floats)
      y.store(out_walk.offset(ys), sums[i]);
    else
      y.store_i(out_walk.offset(ys), int_sums[i]);
  }
  return nullptr;
}

}  // namespace catalyst::reference
