// normalization_backward.cpp — the ABI 1.1 backward forms of normalization.cpp's ops:
// softmax_backward and log_softmax_backward along any axis, layer_norm_backward and
// rms_norm_backward over the last axis.
//
// As in the forward ops, one row at a time, rows spread over threads, everything computed
// in double and rounded once on the store (double keeps dy - sum(dy * y) and g - mean(g)
// within one rounding of the reference). dweight and dbias sum over rows: tasks of a fixed
// block of rows by a fixed run of columns write their own partial sums, which are then added
// in block order, so the result never depends on the thread count. f32 rows with unit
// stride go to vec_kernels.h (f32 arithmetic, sums in double).
#include <algorithm>
#include <cmath>

#include "dtype_dispatch.h"
#include "kernels.h"
#include "tensor_iter.h"
#include "vec_kernels.h"

namespace catalyst::cpu {
namespace {

constexpr int64_t kElementsPerPart = 8192;  // a parallel part's least work
constexpr int64_t kParamBlockRows = 1024;   // rows per dweight / dbias block
constexpr int64_t kParamColumns = 256;      // columns per dweight / dbias task

int64_t row_grain(int64_t n) {
  return std::max<int64_t>(1, kElementsPerPart / std::max<int64_t>(n, 1));
}

// Strides of a view over every axis but `axis`.
void drop_axis(const View& v, uint32_t axis, int64_t* out) {
  uint32_t r = 0;
  for (uint32_t i = 0; i < v.rank; ++i) {
    if (i != axis) out[r++] = v.strides[i];
  }
}

ctl_status* expect_vector(const OpContext& ctx, const View& v, const char* what, const View& x) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(v, what, x.dtype));
  if (v.rank != 1 || v.shape[0] != x.shape[x.rank - 1]) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "%s must be 1-D of length %lld (x's last axis)", what,
                    static_cast<long long>(x.shape[x.rank - 1]));
  }
  return nullptr;
}

template <class T>
void softmax_backward_rows(const OpContext& ctx, const View& y, const View& dy, const View& dx, uint32_t axis,
                           bool log) {
  const bool scalar = y.rank == 0;  // one row of one element
  const int64_t n = scalar ? 1 : y.shape[axis];
  const int64_t sy = scalar ? 0 : y.strides[axis], sd = scalar ? 0 : dy.strides[axis];
  const int64_t sx = scalar ? 0 : dx.strides[axis];
  int64_t shape[CTL_MAX_RANK] = {}, ys[CTL_MAX_RANK] = {}, ds[CTL_MAX_RANK] = {}, xs[CTL_MAX_RANK] = {};
  const uint32_t rank = scalar ? 0 : y.rank - 1;
  if (!scalar) {
    drop_axis(y, axis, ys);
    drop_axis(dy, axis, ds);
    drop_axis(dx, axis, xs);
    for (uint32_t i = 0, r = 0; i < y.rank; ++i) {
      if (i != axis) shape[r++] = y.shape[i];
    }
  }
  const auto rows = make_layout<3>(rank, shape, {ys, ds, xs});
  const T* const py = y.as<T>();
  const T* const pd = dy.as<T>();
  T* const px = dx.as<T>();
  const bool vector = std::is_same_v<T, float> && sy == 1 && sd == 1 && sx == 1;
  const bool stream = dx.numel() * static_cast<int64_t>(sizeof(T)) >= kStreamBytes;
  const VecKernels& k = vec_kernels();
  parallel_for(ctx.pool, rows.numel, row_grain(n), [&](int64_t begin, int64_t end, unsigned) {
    for_each_row(rows, begin, end, [&](const auto& off) {
      const T* yr = py + off[0];
      const T* dr = pd + off[1];
      T* xr = px + off[2];
      if constexpr (std::is_same_v<T, float>) {
        if (vector) {
          k.softmax_backward_row(xr, yr, dr, n, log, stream);
          return;
        }
      }
      double s = 0;
      for (int64_t i = 0; i < n; ++i)
        s += log ? load_double(dr, i * sd) : load_double(dr, i * sd) * load_double(yr, i * sy);
      for (int64_t i = 0; i < n; ++i) {
        const double yi = load_double(yr, i * sy), di = load_double(dr, i * sd);
        xr[i * sx] = store_double<T>(log ? di - std::exp(yi) * s : yi * (di - s));
      }
    });
    stream_fence();  // this part's streamed stores, before the pool reports it done
  });
}

// mean / rstd: f32 for f16 / bf16 x, else x's own type.
template <class T>
using stat_t = std::conditional_t<is_half_v<T>, float, T>;

struct NormBackward {
  bool layer = true;
  View dy, x, mean, rstd, weight, dx, dweight, dbias;
  bool has_weight = false, has_dweight = false, has_dbias = false;
};

ctl_status* norm_backward_views(const OpContext& ctx, bool layer, NormBackward* v) {
  v->layer = layer;
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
  const View& x = v->x;
  if (x.rank == 0) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input 1 (x) must have rank >= 1");
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(v->dy, "input 0 (dy)", x.dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_same_shape(v->dy, "input 0 (dy)", x, "input 1 (x)"));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(v->dx, "output 0 (dx)", x.dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_same_shape(v->dx, "output 0 (dx)", x, "input 1 (x)"));
  const ctl_dtype stat = x.dtype == CTL_DTYPE_F16 || x.dtype == CTL_DTYPE_BF16 ? CTL_DTYPE_F32 : x.dtype;
  if (layer) {
    CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(v->mean, "input 2 (mean)", stat));
    CTL_SDK_RETURN_IF_ERROR(ctx.expect_leading_shape(v->mean, "input 2 (mean)", x, "x"));
  }
  const char* rstd_name = layer ? "input 3 (rstd)" : "input 2 (rstd)";
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(v->rstd, rstd_name, stat));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_leading_shape(v->rstd, rstd_name, x, "x"));
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

// dx = rstd * (g - mean(g) - xh * mean(g * xh)), g = dy * weight; rms_norm drops mean(g).
template <class T>
void norm_backward_dx(const OpContext& ctx, const NormBackward& v) {
  using S = stat_t<T>;
  const View& x = v.x;
  const uint32_t last = x.rank - 1;
  const int64_t n = x.shape[last];
  const int64_t sd = v.dy.strides[last], sx = x.strides[last], so = v.dx.strides[last];
  const int64_t sw = v.has_weight ? v.weight.strides[0] : 0;
  static const int64_t zeros[CTL_MAX_RANK] = {};
  const auto rows = make_layout<5>(
      last, x.shape, {v.dy.strides, x.strides, v.dx.strides, v.layer ? v.mean.strides : zeros, v.rstd.strides});
  const T* const pd = v.dy.as<T>();
  const T* const px = x.as<T>();
  T* const po = v.dx.as<T>();
  const T* const pw = v.has_weight ? v.weight.as<T>() : nullptr;
  const S* const pmean = v.layer ? v.mean.as<S>() : nullptr;
  const S* const prstd = v.rstd.as<S>();
  const double dn = static_cast<double>(n);
  const bool vector = std::is_same_v<T, float> && sd == 1 && sx == 1 && so == 1 && (!pw || sw == 1);
  const bool stream = v.dx.numel() * static_cast<int64_t>(sizeof(T)) >= kStreamBytes;
  const VecKernels& k = vec_kernels();
  parallel_for(ctx.pool, rows.numel, row_grain(n), [&](int64_t begin, int64_t end, unsigned) {
    for_each_row(rows, begin, end, [&](const auto& off) {
      const T* dr = pd + off[0];
      const T* xr = px + off[1];
      T* out = po + off[2];
      if constexpr (std::is_same_v<T, float>) {
        if (vector) {
          k.norm_backward_row(out, dr, xr, pw, n, pmean ? pmean[off[3]] : 0.0f, prstd[off[4]], v.layer, stream);
          return;
        }
      }
      const double mean = pmean ? load_double(pmean, off[3]) : 0.0;
      const double rstd = load_double(prstd, off[4]);
      double sum_g = 0, sum_gx = 0;
      for (int64_t i = 0; i < n; ++i) {
        const double g = pw ? load_double(dr, i * sd) * load_double(pw, i * sw) : load_double(dr, i * sd);
        const double xh = (load_double(xr, i * sx) - mean) * rstd;
        sum_g += g;
        sum_gx += g * xh;
      }
      const double mean_g = v.layer ? sum_g / dn : 0.0, mean_gx = sum_gx / dn;
      for (int64_t i = 0; i < n; ++i) {
        const double g = pw ? load_double(dr, i * sd) * load_double(pw, i * sw) : load_double(dr, i * sd);
        const double xh = (load_double(xr, i * sx) - mean) * rstd;
        out[i * so] = store_double<T>(rstd * (g - mean_g - xh * mean_gx));
      }
    });
    stream_fence();  // this part's streamed stores, before the pool reports it done
  });
}

// dweight = sum over rows of dy * xh, dbias = sum over rows of dy. Tasks are (block of
// kParamBlockRows rows, kParamColumns columns); each writes its own slice of `partial`
// ([2][blocks][n] doubles), and the blocks are then added in order for every column.
template <class T>
void norm_backward_params(const OpContext& ctx, const NormBackward& v, double* partial) {
  using S = stat_t<T>;
  const View& x = v.x;
  const uint32_t last = x.rank - 1;
  const int64_t n = x.shape[last];
  const int64_t sd = v.dy.strides[last], sx = x.strides[last];
  static const int64_t zeros[CTL_MAX_RANK] = {};
  const auto rows =
      make_layout<4>(last, x.shape, {v.dy.strides, x.strides, v.layer ? v.mean.strides : zeros, v.rstd.strides});
  const int64_t row_count = rows.numel;
  const int64_t blocks = (row_count + kParamBlockRows - 1) / kParamBlockRows;
  const int64_t chunks = (n + kParamColumns - 1) / kParamColumns;
  double* const pw = partial;
  double* const pb = partial + blocks * n;
  const T* const pd = v.dy.as<T>();
  const T* const px = x.as<T>();
  const S* const pmean = v.layer ? v.mean.as<S>() : nullptr;
  const S* const prstd = v.rstd.as<S>();
  const int64_t task_elements = std::min(row_count, kParamBlockRows) * std::min(n, kParamColumns);
  const int64_t grain = std::max<int64_t>(1, kElementsPerPart / std::max<int64_t>(task_elements, 1));
  const bool vector = std::is_same_v<T, float> && sd == 1 && sx == 1;
  const VecKernels& k = vec_kernels();
  parallel_for(ctx.pool, blocks * chunks, grain, [&](int64_t first, int64_t end_task, unsigned) {
    for (int64_t task = first; task < end_task; ++task) {
      const int64_t b = task / chunks, j0 = task % chunks * kParamColumns, j1 = std::min(n, j0 + kParamColumns);
      double* const w = pw + b * n;
      double* const s = pb + b * n;
      for (int64_t j = j0; j < j1; ++j) w[j] = s[j] = 0;
      const int64_t r1 = std::min(row_count, (b + 1) * kParamBlockRows);
      for_each_row(rows, b * kParamBlockRows, r1, [&](const auto& off) {
        if constexpr (std::is_same_v<T, float>) {
          if (vector) {
            k.norm_param_row(w + j0, s + j0, pd + off[0] + j0, px + off[1] + j0, j1 - j0, pmean ? pmean[off[2]] : 0.0f,
                             prstd[off[3]]);
            return;
          }
        }
        const double mean = pmean ? load_double(pmean, off[2]) : 0.0;
        const double rstd = load_double(prstd, off[3]);
        for (int64_t j = j0; j < j1; ++j) {
          const double d = load_double(pd + off[0], j * sd);
          w[j] += d * ((load_double(px + off[1], j * sx) - mean) * rstd);
          s[j] += d;
        }
      });
    }
  });
  T* const dw = v.has_dweight ? v.dweight.as<T>() : nullptr;
  T* const db = v.has_dbias ? v.dbias.as<T>() : nullptr;
  const int64_t sw = v.has_dweight ? v.dweight.strides[0] : 0, sb = v.has_dbias ? v.dbias.strides[0] : 0;
  const int64_t combine_grain = std::max<int64_t>(1, kElementsPerPart / std::max<int64_t>(blocks, 1));
  parallel_for(ctx.pool, n, combine_grain, [&](int64_t begin, int64_t end, unsigned) {
    for (int64_t j = begin; j < end; ++j) {
      double w = 0, s = 0;  // no rows: sums of nothing, 0
      for (int64_t b = 0; b < blocks; ++b) {
        w += pw[b * n + j];
        s += pb[b * n + j];
      }
      if (dw) dw[j * sw] = store_double<T>(w);
      if (db) db[j * sb] = store_double<T>(s);
    }
  });
}

ctl_status* run_norm_backward(const OpContext& ctx, bool layer) {
  NormBackward v;
  CTL_SDK_RETURN_IF_ERROR(norm_backward_views(ctx, layer, &v));
  const int64_t n = v.x.shape[v.x.rank - 1];
  int64_t rows = 1;
  for (uint32_t i = 0; i + 1 < v.x.rank; ++i) rows *= v.x.shape[i];
  Scratch scratch(ctx);
  const bool params = (v.has_dweight || v.has_dbias) && n > 0;
  if (params) {
    const int64_t blocks = (rows + kParamBlockRows - 1) / kParamBlockRows;
    CTL_SDK_RETURN_IF_ERROR(scratch.allocate(ctx, sizeof(double) * 2 * static_cast<size_t>(blocks * n)));
  }
  const bool known = dispatch_float(v.x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (rows > 0 && n > 0) norm_backward_dx<T>(ctx, v);
    if (params) norm_backward_params<T>(ctx, v, scratch.as<double>());
  });
  if (!known) return ctx.fail(CTL_STATUS_UNSUPPORTED, "dtype %s is not supported", dtype_name(v.x.dtype));
  return nullptr;
}

}  // namespace

ctl_status* run_softmax_backward(const OpContext& ctx) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(2, 2, 1, 1));
  View y, dy, dx;
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "y", &y));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(1, "dy", &dy));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "dx", &dx));
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
  const bool log = ctx.call->op == CTL_OP_LOG_SOFTMAX_BACKWARD;
  const bool known = dispatch_float(y.dtype, [&](auto tag) {
    softmax_backward_rows<typename decltype(tag)::type>(ctx, y, dy, dx, static_cast<uint32_t>(axis), log);
  });
  if (!known) return ctx.fail(CTL_STATUS_UNSUPPORTED, "dtype %s is not supported", dtype_name(y.dtype));
  return nullptr;
}

ctl_status* run_layer_norm_backward(const OpContext& ctx) {
  return run_norm_backward(ctx, true);
}

ctl_status* run_rms_norm_backward(const OpContext& ctx) {
  return run_norm_backward(ctx, false);
}

}  // namespace catalyst::cpu
