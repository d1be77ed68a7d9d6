// normalization.cpp — softmax and log_softmax along any axis, layer_norm and rms_norm over
// the last axis, and the backward forms of all four (ABI 1.1). Every row is one work-group
// of kernels/normalization.cl with its max and sums in local memory; dweight / dbias sum
// over rows in fixed blocks whose partials are added in block order, so no result depends
// on the launch size. The argument checks follow the CPU plugin's.
#include <algorithm>
#include <initializer_list>
#include <string>

#include "kernels.h"

namespace catalyst::opencl {
namespace {

constexpr size_t kMostGroupSize = 256;
constexpr int64_t kParamBlockRows = 1024;  // rows per dweight / dbias partial

// The rows of a normalisation: every axis of `shape` but `skip`, size-1 axes dropped and
// adjacent axes merged where every view allows it, innermost first (as make_iteration).
struct Rows {
  cl_int rank = 0;
  cl_long8 shape{};
  cl_long8 strides[5]{};
  int64_t count = 1;
};

// `strides[v]` are view v's strides over the full `rank` axes; a null entry (an absent
// view) takes zeros. `skip` is the normalised axis (or rank for none).
Rows make_rows(uint32_t rank, const int64_t* shape, uint32_t skip, std::initializer_list<const int64_t*> strides) {
  Rows rows;
  const size_t views = strides.size();
  const int64_t* const* s = strides.begin();
  int64_t merged_shape[CTL_MAX_RANK];
  int64_t merged[5][CTL_MAX_RANK];
  int r = 0;
  for (uint32_t axis = rank; axis-- > 0;) {
    if (axis == skip) continue;
    const int64_t size = shape[axis];
    rows.count *= size;
    if (size == 1) continue;
    bool merge = r > 0;
    for (size_t v = 0; merge && v < views; ++v) {
      const int64_t stride = s[v] ? s[v][axis] : 0;
      merge = stride == merged[v][r - 1] * merged_shape[r - 1];
    }
    if (merge) {
      merged_shape[r - 1] *= size;
      continue;
    }
    merged_shape[r] = size;
    for (size_t v = 0; v < views; ++v) merged[v][r] = s[v] ? s[v][axis] : 0;
    ++r;
  }
  rows.rank = r;
  for (int i = 0; i < CTL_MAX_RANK; ++i) {
    rows.shape.s[i] = i < r ? merged_shape[i] : 1;
    for (size_t v = 0; v < views; ++v) rows.strides[v].s[i] = i < r ? merged[v][i] : 0;
  }
  return rows;
}

// mean / rstd: f32 for f16 / bf16 x, else x's own dtype.
ctl_dtype stat_dtype(ctl_dtype dtype) {
  return dtype == CTL_DTYPE_F16 || dtype == CTL_DTYPE_BF16 ? CTL_DTYPE_F32 : dtype;
}

// x's dtype as TA and its statistics' dtype as TS.
std::string defines(ctl_dtype dtype) {
  return std::string("-DTA=") + dtype_tag(dtype) + " -DTS=" + dtype_tag(stat_dtype(dtype));
}

ctl_status* expect_float(const OpContext& ctx, const DeviceView& x) {
  if (x.dtype == CTL_DTYPE_F32 || x.dtype == CTL_DTYPE_F64 || x.dtype == CTL_DTYPE_F16 || x.dtype == CTL_DTYPE_BF16) {
    return nullptr;
  }
  return ctx.fail(CTL_STATUS_UNSUPPORTED, "dtype %s is not supported", dtype_name(x.dtype));
}

// One work-group per row: a power-of-two local size no larger than the row needs, and at
// most as many groups as keep every compute unit busy (the kernels loop over the rest).
struct RowLaunch {
  size_t global = 0;
  size_t local = 1;
};
RowLaunch row_launch(const OpContext& ctx, const Kernel* k, int64_t rows, int64_t n) {
  size_t most = std::min(k->max_work_group_size, kMostGroupSize);
  if (ctx.device->local_memory_size > 0) most = std::min<size_t>(most, ctx.device->local_memory_size / 16);
  RowLaunch launch;
  while (launch.local * 2 <= most && static_cast<int64_t>(launch.local) < n) launch.local *= 2;
  const size_t groups =
      std::min<size_t>(static_cast<size_t>(rows), static_cast<size_t>(ctx.device->compute_units) * 256);
  launch.global = groups * launch.local;
  return launch;
}

// The epsilon of a compute in MATH_T (double where the device has it).
Scalar math_scalar(const OpContext& ctx, double value) {
  return compute_scalar(ctx.device->has_fp64 ? CTL_DTYPE_F64 : CTL_DTYPE_F32, value);
}

ctl_status* expect_vector(const OpContext& ctx, const DeviceView& v, const char* what, const DeviceView& x) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(v, what, x.dtype));
  if (v.rank != 1 || v.shape[0] != x.shape[x.rank - 1]) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "%s must be 1-D of length %lld (x's last axis)", what,
                    static_cast<long long>(x.shape[x.rank - 1]));
  }
  return nullptr;
}

ctl_status* expect_stat(const OpContext& ctx, const DeviceView& stat, const char* what, const DeviceView& x) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(stat, what, stat_dtype(x.dtype)));
  return ctx.expect_leading_shape(stat, what, x, "x");
}

// A view's strides, or null for an absent one (make_rows reads zeros).
const int64_t* strides_of(const DeviceView& v, bool present) {
  return present ? v.strides : nullptr;
}

ctl_status* run_norm(const OpContext& ctx, bool layer) {
  if (layer) {
    CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(1, 3, 1, 3));
  } else {
    CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(1, 2, 1, 2));
  }
  DeviceView x, weight, bias, y, mean, rstd;
  bool has_weight = false, has_bias = false, has_mean = false, has_rstd = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "x", &x));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(1, "weight", &weight, true, &has_weight));
  if (layer) CTL_SDK_RETURN_IF_ERROR(ctx.input(2, "bias", &bias, true, &has_bias));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "y", &y));
  if (layer) {
    CTL_SDK_RETURN_IF_ERROR(ctx.output(1, "mean", &mean, true, &has_mean));
    CTL_SDK_RETURN_IF_ERROR(ctx.output(2, "rstd", &rstd, true, &has_rstd));
  } else {
    CTL_SDK_RETURN_IF_ERROR(ctx.output(1, "rstd", &rstd, true, &has_rstd));
  }
  CTL_SDK_RETURN_IF_ERROR(expect_float(ctx, x));
  if (x.rank == 0) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input 0 (x) must have rank >= 1");
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(y, "output 0 (y)", x.dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_same_shape(y, "output 0 (y)", x, "input 0 (x)"));
  if (has_weight) CTL_SDK_RETURN_IF_ERROR(expect_vector(ctx, weight, "input 1 (weight)", x));
  if (has_bias) CTL_SDK_RETURN_IF_ERROR(expect_vector(ctx, bias, "input 2 (bias)", x));
  if (has_mean) CTL_SDK_RETURN_IF_ERROR(expect_stat(ctx, mean, "output 1 (mean)", x));
  if (has_rstd) CTL_SDK_RETURN_IF_ERROR(expect_stat(ctx, rstd, layer ? "output 2 (rstd)" : "output 1 (rstd)", x));
  ctl_norm_attrs attrs;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&attrs, sizeof attrs, CTL_NORM_ATTRS_STRUCT_SIZE, "ctl_norm_attrs", &given));
  double eps = 1e-5;
  if (given && attrs.epsilon != 0) eps = attrs.epsilon;  // 0 in a zeroed struct means 1e-5
  if (!(eps >= 0)) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs.epsilon %g is negative or NaN", eps);

  const uint32_t last = x.rank - 1;
  // Stats have rank x.rank - 1: their strides line up with x's leading axes.
  const Rows rows =
      make_rows(x.rank, x.shape, last, {x.strides, y.strides, strides_of(mean, has_mean), strides_of(rstd, has_rstd)});
  if (rows.count == 0) return nullptr;
  const int64_t n = x.shape[last];
  Kernel* k = nullptr;
  CTL_SDK_RETURN_IF_ERROR(ctx.kernel("normalization", defines(x.dtype), "norm_rows", &k));
  const RowLaunch launch = row_launch(ctx, k, rows.count, n);
  // An absent view still fills its kernel arguments: it passes x's buffer, which the kernel
  // reads through that argument only when the matching has_* flag is set, never here.
  const DeviceView& w = has_weight ? weight : x;
  const DeviceView& b = has_bias ? bias : x;
  const DeviceView& mo = has_mean ? mean : y;
  const DeviceView& ro = has_rstd ? rstd : y;
  const cl_long w_step = has_weight ? weight.strides[0] : 0, b_step = has_bias ? bias.strides[0] : 0;
  return ctx.enqueue(k, 1, &launch.global, &launch.local, x, rows.strides[0], static_cast<cl_long>(x.strides[last]), y,
                     rows.strides[1], static_cast<cl_long>(y.strides[last]), w, w_step, b, b_step, mo, rows.strides[2],
                     ro, rows.strides[3], rows.rank, rows.shape, static_cast<cl_long>(rows.count),
                     static_cast<cl_long>(n), cl_int{layer}, cl_int{has_weight}, cl_int{has_bias}, cl_int{has_mean},
                     cl_int{has_rstd}, math_scalar(ctx, eps), LocalBytes{launch.local * 8});
}

struct NormBackward {
  DeviceView dy, x, mean, rstd, weight, dx, dweight, dbias;
  bool has_weight = false, has_dweight = false, has_dbias = false;
};

ctl_status* norm_backward_views(const OpContext& ctx, bool layer, NormBackward* v) {
  const uint32_t stats = layer ? 2 : 1, weight = 2 + stats;
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(weight, weight + 1, 1, layer ? 3 : 2));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "dy", &v->dy));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(1, "x", &v->x));
  if (layer) CTL_SDK_RETURN_IF_ERROR(ctx.input(2, "mean", &v->mean));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(weight - 1, "rstd", &v->rstd));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(weight, "weight", &v->weight, true, &v->has_weight));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "dx", &v->dx));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(1, "dweight", &v->dweight, true, &v->has_dweight));
  if (layer) CTL_SDK_RETURN_IF_ERROR(ctx.output(2, "dbias", &v->dbias, true, &v->has_dbias));
  const DeviceView& x = v->x;
  CTL_SDK_RETURN_IF_ERROR(expect_float(ctx, x));
  if (x.rank == 0) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input 1 (x) must have rank >= 1");
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(v->dy, "input 0 (dy)", x.dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_same_shape(v->dy, "input 0 (dy)", x, "input 1 (x)"));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(v->dx, "output 0 (dx)", x.dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_same_shape(v->dx, "output 0 (dx)", x, "input 1 (x)"));
  if (layer) CTL_SDK_RETURN_IF_ERROR(expect_stat(ctx, v->mean, "input 2 (mean)", x));
  CTL_SDK_RETURN_IF_ERROR(expect_stat(ctx, v->rstd, layer ? "input 3 (rstd)" : "input 2 (rstd)", x));
  if (v->has_weight) {
    CTL_SDK_RETURN_IF_ERROR(expect_vector(ctx, v->weight, layer ? "input 4 (weight)" : "input 3 (weight)", x));
  }
  if (v->has_dweight) CTL_SDK_RETURN_IF_ERROR(expect_vector(ctx, v->dweight, "output 1 (dweight)", x));
  if (v->has_dbias) CTL_SDK_RETURN_IF_ERROR(expect_vector(ctx, v->dbias, "output 2 (dbias)", x));
  // ctl_norm_attrs is unused, but a malformed struct is still an error.
  ctl_norm_attrs attrs;
  bool given = false;
  return ctx.attrs(&attrs, sizeof attrs, CTL_NORM_ATTRS_STRUCT_SIZE, "ctl_norm_attrs", &given);
}

ctl_status* run_norm_backward(const OpContext& ctx, bool layer) {
  NormBackward v;
  CTL_SDK_RETURN_IF_ERROR(norm_backward_views(ctx, layer, &v));
  const DeviceView& x = v.x;
  const uint32_t last = x.rank - 1;
  const int64_t n = x.shape[last];
  const std::string defs = defines(x.dtype);
  const DeviceView& mean = layer ? v.mean : v.rstd;  // rms_norm never reads its mean
  const Rows rows = make_rows(
      x.rank, x.shape, last, {v.dy.strides, x.strides, v.dx.strides, layer ? v.mean.strides : nullptr, v.rstd.strides});
  const cl_long row_count = rows.count, length = n;
  const cl_long dy_step = v.dy.strides[last], x_step = x.strides[last], dx_step = v.dx.strides[last];
  if (rows.count > 0 && n > 0) {
    Kernel* k = nullptr;
    CTL_SDK_RETURN_IF_ERROR(ctx.kernel("normalization", defs, "norm_backward_rows", &k));
    const RowLaunch launch = row_launch(ctx, k, rows.count, n);
    const DeviceView& w = v.has_weight ? v.weight : x;
    const cl_long w_step = v.has_weight ? v.weight.strides[0] : 0;
    CTL_SDK_RETURN_IF_ERROR(ctx.enqueue(k, 1, &launch.global, &launch.local, v.dy, rows.strides[0], dy_step, x,
                                        rows.strides[1], x_step, v.dx, rows.strides[2], dx_step, mean, rows.strides[3],
                                        v.rstd, rows.strides[4], w, w_step, rows.rank, rows.shape, row_count, length,
                                        cl_int{layer}, cl_int{v.has_weight}, LocalBytes{launch.local * 8}));
  }
  if (!(v.has_dweight || v.has_dbias) || n == 0) return nullptr;

  // dweight = sum over rows of dy * xh, dbias = sum over rows of dy: per block of rows,
  // then the blocks in order.
  const int64_t blocks = (rows.count + kParamBlockRows - 1) / kParamBlockRows;
  Temporary partial;
  CTL_SDK_RETURN_IF_ERROR(ctx.temporary(static_cast<uint64_t>(2 * blocks * n) * 8, &partial));
  const cl_long block_rows = kParamBlockRows, block_count = blocks;
  if (blocks > 0) {
    Kernel* k = nullptr;
    CTL_SDK_RETURN_IF_ERROR(ctx.kernel("normalization", defs, "norm_params_partial", &k));
    CTL_SDK_RETURN_IF_ERROR(ctx.launch(k, blocks * n, v.dy, rows.strides[0], dy_step, x, rows.strides[1], x_step, mean,
                                       rows.strides[3], v.rstd, rows.strides[4], rows.rank, rows.shape, row_count,
                                       length, cl_int{layer}, block_rows, block_count, partial.mem()));
  }
  Kernel* combine = nullptr;
  CTL_SDK_RETURN_IF_ERROR(ctx.kernel("normalization", defs, "norm_params_combine", &combine));
  const DeviceView& dw = v.has_dweight ? v.dweight : v.dx;
  const DeviceView& db = v.has_dbias ? v.dbias : v.dx;
  const cl_long dw_step = v.has_dweight ? v.dweight.strides[0] : 0, db_step = v.has_dbias ? v.dbias.strides[0] : 0;
  return ctx.launch(combine, n, partial.mem(), block_count, length, dw, dw_step, db, db_step, cl_int{v.has_dweight},
                    cl_int{v.has_dbias});
}

}  // namespace

ctl_status* run_softmax(const OpContext& ctx) {
  DeviceView x, y;
  CTL_SDK_RETURN_IF_ERROR(ctx.one_to_one(&x, &y));
  CTL_SDK_RETURN_IF_ERROR(expect_float(ctx, x));
  ctl_softmax_attrs attrs;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&attrs, sizeof attrs, CTL_AXIS_ATTRS_STRUCT_SIZE, "ctl_softmax_attrs", &given));
  if (x.rank == 0) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input 0 (x) must have rank >= 1");
  int64_t axis = given ? attrs.axis : -1;  // NULL attrs: the last axis
  if (axis < 0) axis += x.rank;
  if (axis < 0 || axis >= static_cast<int64_t>(x.rank)) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs.axis %d is out of range for rank %u", attrs.axis, x.rank);
  }
  if (x.numel() == 0) return nullptr;
  const uint32_t a = static_cast<uint32_t>(axis);
  const Rows rows = make_rows(x.rank, x.shape, a, {x.strides, y.strides});
  const int64_t n = x.shape[a];
  Kernel* k = nullptr;
  CTL_SDK_RETURN_IF_ERROR(ctx.kernel("normalization", defines(x.dtype), "softmax_rows", &k));
  const RowLaunch launch = row_launch(ctx, k, rows.count, n);
  const cl_int log_form = ctx.call->op == CTL_OP_LOG_SOFTMAX;
  return ctx.enqueue(k, 1, &launch.global, &launch.local, x, rows.strides[0], static_cast<cl_long>(x.strides[a]), y,
                     rows.strides[1], static_cast<cl_long>(y.strides[a]), rows.rank, rows.shape,
                     static_cast<cl_long>(rows.count), static_cast<cl_long>(n), log_form, LocalBytes{launch.local * 8});
}

ctl_status* run_layer_norm(const OpContext& ctx) {
  return run_norm(ctx, true);
}

ctl_status* run_rms_norm(const OpContext& ctx) {
  return run_norm(ctx, false);
}

ctl_status* run_softmax_backward(const OpContext& ctx) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(2, 2, 1, 1));
  DeviceView y, dy, dx;
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "y", &y));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(1, "dy", &dy));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "dx", &dx));
  CTL_SDK_RETURN_IF_ERROR(expect_float(ctx, y));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(dy, "input 1 (dy)", y.dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(dx, "output 0 (dx)", y.dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_same_shape(dy, "input 1 (dy)", y, "input 0 (y)"));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_same_shape(dx, "output 0 (dx)", y, "input 0 (y)"));
  ctl_axis_attrs attrs;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&attrs, sizeof attrs, CTL_AXIS_ATTRS_STRUCT_SIZE, "ctl_axis_attrs", &given));
  // NULL attrs: the last axis. A scalar is one row of one element (axis 0 or -1).
  const int64_t rank = y.rank;
  int64_t axis = given ? attrs.axis : -1;
  if (axis < 0) axis += std::max<int64_t>(rank, 1);
  if (axis < 0 || axis >= std::max<int64_t>(rank, 1)) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs.axis %d is out of range for rank %u", attrs.axis, y.rank);
  }
  if (y.numel() == 0) return nullptr;
  const bool scalar = rank == 0;
  const uint32_t a = static_cast<uint32_t>(axis);
  const Rows rows = make_rows(y.rank, y.shape, a, {y.strides, dy.strides, dx.strides});
  const int64_t n = scalar ? 1 : y.shape[a];
  const cl_long y_step = scalar ? 0 : y.strides[a], dy_step = scalar ? 0 : dy.strides[a];
  const cl_long dx_step = scalar ? 0 : dx.strides[a];
  Kernel* k = nullptr;
  CTL_SDK_RETURN_IF_ERROR(ctx.kernel("normalization", defines(y.dtype), "softmax_backward_rows", &k));
  const RowLaunch launch = row_launch(ctx, k, rows.count, n);
  const cl_int log_form = ctx.call->op == CTL_OP_LOG_SOFTMAX_BACKWARD;
  return ctx.enqueue(k, 1, &launch.global, &launch.local, y, rows.strides[0], y_step, dy, rows.strides[1], dy_step, dx,
                     rows.strides[2], dx_step, rows.rank, rows.shape, static_cast<cl_long>(rows.count),
                     static_cast<cl_long>(n), log_form, LocalBytes{launch.local * 8});
}

ctl_status* run_layer_norm_backward(const OpContext& ctx) {
  return run_norm_backward(ctx, true);
}

ctl_status* run_rms_norm_backward(const OpContext& ctx) {
  return run_norm_backward(ctx, false);
}

}  // namespace catalyst::opencl
