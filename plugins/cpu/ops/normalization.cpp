// normalization.cpp — softmax and log_softmax along any axis, layer_norm and rms_norm over
// the last axis. One row at a time, rows spread over threads; statistics are computed in
// double (f64 rows entirely in double), then each element is rounded once to the dtype.
// f32 rows with unit stride go to vec_kernels.h instead (f32 arithmetic, double statistics).
#include <algorithm>
#include <cmath>
#include <limits>

#include "dtype_dispatch.h"
#include "kernels.h"
#include "tensor_iter.h"
#include "vec_kernels.h"

namespace catalyst::cpu {
namespace {

constexpr int64_t kElementsPerPart = 8192;

int64_t row_grain(int64_t n) {
  return std::max<int64_t>(1, kElementsPerPart / std::max<int64_t>(n, 1));
}

// Element (row, i) of a row whose elements are `stride` apart.
template <class T>
void softmax_rows(const OpContext& ctx, const View& x, const View& y, uint32_t axis, bool log, double* scratch) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const int64_t n = x.shape[axis];
  const int64_t sx = x.strides[axis], sy = y.strides[axis];
  // Rows are indexed by every axis but `axis`.
  int64_t shape[CTL_MAX_RANK], xs[CTL_MAX_RANK], ys[CTL_MAX_RANK];
  uint32_t rank = 0;
  for (uint32_t i = 0; i < x.rank; ++i) {
    if (i == axis) continue;
    shape[rank] = x.shape[i];
    xs[rank] = x.strides[i];
    ys[rank++] = y.strides[i];
  }
  const auto rows = make_layout<2>(rank, shape, {xs, ys});
  const T* const px = x.as<T>();
  T* const py = y.as<T>();
  // f32 rows with unit stride go to the vector kernel (the last axis of a contiguous tensor).
  const bool vector = std::is_same_v<T, float> && sx == 1 && sy == 1;
  const bool stream = y.numel() * static_cast<int64_t>(sizeof(T)) >= kStreamBytes;
  const VecKernels& k = vec_kernels();
  parallel_for(ctx.pool, rows.numel, row_grain(n), [&](int64_t begin, int64_t end, unsigned part) {
    double* const e = scratch + part * n;
    for_each_segment(rows, begin, end, [&](const std::array<int64_t, 2>& off, int64_t count, int64_t) {
      if constexpr (std::is_same_v<T, float>) {
        if (vector && !log) {  // the run of rows at once; `e` holds 2n floats
          k.softmax_rows(py + off[1], rows.inner_stride(1), px + off[0], rows.inner_stride(0), count, n,
                         reinterpret_cast<float*>(e), stream);
          return;
        }
      }
      for (int64_t r = 0; r < count; ++r) {
        const T* xr = px + off[0] + r * rows.inner_stride(0);
        T* yr = py + off[1] + r * rows.inner_stride(1);
        if constexpr (std::is_same_v<T, float>) {
          if (vector) {
            k.softmax_row(yr, xr, n, log, reinterpret_cast<float*>(e), stream);
            continue;
          }
        }
        // Max first (NaN sticks), then exp(x - max) summed in double.
        C m = -std::numeric_limits<C>::infinity();
        for (int64_t i = 0; i < n; ++i) {
          const C v = static_cast<C>(load(xr[i * sx]));
          if (v != v || v > m) m = v;
        }
        double sum = 0;
        for (int64_t i = 0; i < n; ++i) {
          const C shifted = static_cast<C>(load(xr[i * sx])) - m;
          e[i] = static_cast<double>(std::exp(shifted));
          sum += e[i];
        }
        if (log) {
          // x - max - log(sum); an all -inf row gives NaN through (-inf) - (-inf).
          const double lse = std::log(sum);
          for (int64_t i = 0; i < n; ++i) {
            yr[i * sy] = store<T>(static_cast<double>(static_cast<C>(load(xr[i * sx])) - m) - lse);
          }
        } else {
          const double inv = 1.0 / sum;
          for (int64_t i = 0; i < n; ++i) yr[i * sy] = store<T>(e[i] * inv);
        }
      }
    });
    stream_fence();  // this part's streamed stores, before the pool reports it done
  });
}

// mean/rstd outputs: f32 for f16/bf16 inputs, else the input's own type.
template <class T>
using stat_t = std::conditional_t<is_half_v<T>, float, T>;

struct NormViews {
  View x, weight, bias, y, mean, rstd;
  bool has_weight = false, has_bias = false, has_mean = false, has_rstd = false;
  double eps = 1e-5;
};

template <class T>
void norm_rows(const OpContext& ctx, const NormViews& v, bool layer) {
  using S = stat_t<T>;
  const View& x = v.x;
  const uint32_t last = x.rank - 1;
  const int64_t n = x.shape[last];
  const int64_t sx = x.strides[last], sy = v.y.strides[last];
  const int64_t sw = v.has_weight ? v.weight.strides[0] : 0, sb = v.has_bias ? v.bias.strides[0] : 0;
  static const int64_t zeros[CTL_MAX_RANK] = {};
  const auto rows = make_layout<4>(
      last, x.shape,
      {x.strides, v.y.strides, v.has_mean ? v.mean.strides : zeros, v.has_rstd ? v.rstd.strides : zeros});
  const T* const px = x.as<T>();
  T* const py = v.y.as<T>();
  const T* const pw = v.has_weight ? v.weight.as<T>() : nullptr;
  const T* const pb = v.has_bias ? v.bias.as<T>() : nullptr;
  S* const pmean = v.has_mean ? v.mean.as<S>() : nullptr;
  S* const prstd = v.has_rstd ? v.rstd.as<S>() : nullptr;
  const double dn = static_cast<double>(n);
  // f32 rows with unit stride (weight and bias too) go to the vector kernel.
  const bool vector = std::is_same_v<T, float> && n > 0 && sx == 1 && sy == 1 && (!pw || sw == 1) && (!pb || sb == 1);
  const bool stream = v.y.numel() * static_cast<int64_t>(sizeof(T)) >= kStreamBytes;
  const VecKernels& k = vec_kernels();
  parallel_for(ctx.pool, rows.numel, row_grain(n), [&](int64_t begin, int64_t end, unsigned) {
    for_each_segment(rows, begin, end, [&](const std::array<int64_t, 4>& off, int64_t count, int64_t) {
      for (int64_t r = 0; r < count; ++r) {
        const T* xr = px + off[0] + r * rows.inner_stride(0);
        T* yr = py + off[1] + r * rows.inner_stride(1);
        if constexpr (std::is_same_v<T, float>) {
          float mean_f, rstd_f;
          if (vector && k.norm_row(yr, xr, pw, pb, n, v.eps, layer, &mean_f, &rstd_f, stream)) {
            if (pmean) pmean[off[2] + r * rows.inner_stride(2)] = mean_f;
            if (prstd) prstd[off[3] + r * rows.inner_stride(3)] = rstd_f;
            continue;
          }
        }
        double mean = 0;
        if (layer) {
          double sum = 0;
          for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(load(xr[i * sx]));
          mean = sum / dn;  // n == 0 gives NaN statistics, as the formula does
        }
        double sq = 0;
        for (int64_t i = 0; i < n; ++i) {
          const double d = static_cast<double>(load(xr[i * sx])) - mean;
          sq += d * d;
        }
        const double rstd = 1.0 / std::sqrt(sq / dn + v.eps);
        for (int64_t i = 0; i < n; ++i) {
          double value = (static_cast<double>(load(xr[i * sx])) - mean) * rstd;
          if (pw) value *= static_cast<double>(load(pw[i * sw]));
          if (pb) value += static_cast<double>(load(pb[i * sb]));
          yr[i * sy] = store<T>(value);
        }
        if (pmean) pmean[off[2] + r * rows.inner_stride(2)] = static_cast<S>(mean);
        if (prstd) prstd[off[3] + r * rows.inner_stride(3)] = static_cast<S>(rstd);
      }
    });
    stream_fence();  // this part's streamed stores, before the pool reports it done
  });
}

ctl_status* check_stat(const OpContext& ctx, const View& stat, const char* name, const View& x, ctl_dtype dtype) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(stat, name, dtype));
  bool ok = stat.rank == x.rank - 1;
  for (uint32_t i = 0; ok && i + 1 < x.rank; ++i) ok = stat.shape[i] == x.shape[i];
  if (!ok) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "%s must have x's shape without its last axis", name);
  return nullptr;
}

ctl_status* check_vector(const OpContext& ctx, const View& v, const char* name, const View& x) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(v, name, x.dtype));
  if (v.rank != 1 || v.shape[0] != x.shape[x.rank - 1]) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "%s must be 1-D of length %lld (x's last axis)", name,
                    static_cast<long long>(x.shape[x.rank - 1]));
  }
  return nullptr;
}

ctl_status* run_norm(const OpContext& ctx, bool layer) {
  NormViews v;
  if (layer) {
    CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(1, 3, 1, 3));
  } else {
    CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(1, 2, 1, 2));
  }
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "x", &v.x));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(1, "weight", &v.weight, true, &v.has_weight));
  if (layer) CTL_SDK_RETURN_IF_ERROR(ctx.input(2, "bias", &v.bias, true, &v.has_bias));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "y", &v.y));
  if (layer) {
    CTL_SDK_RETURN_IF_ERROR(ctx.output(1, "mean", &v.mean, true, &v.has_mean));
    CTL_SDK_RETURN_IF_ERROR(ctx.output(2, "rstd", &v.rstd, true, &v.has_rstd));
  } else {
    CTL_SDK_RETURN_IF_ERROR(ctx.output(1, "rstd", &v.rstd, true, &v.has_rstd));
  }
  if (v.x.rank == 0) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "input 0 (x) must have rank >= 1");
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(v.y, "output 0 (y)", v.x.dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_same_shape(v.y, "output 0 (y)", v.x, "input 0 (x)"));
  if (v.has_weight) CTL_SDK_RETURN_IF_ERROR(check_vector(ctx, v.weight, "input 1 (weight)", v.x));
  if (v.has_bias) CTL_SDK_RETURN_IF_ERROR(check_vector(ctx, v.bias, "input 2 (bias)", v.x));
  const ctl_dtype stat = v.x.dtype == CTL_DTYPE_F16 || v.x.dtype == CTL_DTYPE_BF16 ? CTL_DTYPE_F32 : v.x.dtype;
  if (v.has_mean) CTL_SDK_RETURN_IF_ERROR(check_stat(ctx, v.mean, "output 1 (mean)", v.x, stat));
  if (v.has_rstd) {
    CTL_SDK_RETURN_IF_ERROR(check_stat(ctx, v.rstd, layer ? "output 2 (rstd)" : "output 1 (rstd)", v.x, stat));
  }
  ctl_norm_attrs attrs;
  bool given = false;
  CTL_SDK_RETURN_IF_ERROR(ctx.attrs(&attrs, sizeof attrs, CTL_NORM_ATTRS_STRUCT_SIZE, "ctl_norm_attrs", &given));
  if (given && attrs.epsilon != 0) v.eps = attrs.epsilon;  // 0 in a zeroed struct means 1e-5
  if (!(v.eps >= 0)) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "attrs.epsilon %g is negative or NaN", v.eps);
  int64_t rows = 1;
  for (uint32_t i = 0; i + 1 < v.x.rank; ++i) rows *= v.x.shape[i];
  if (rows == 0) return nullptr;
  const bool known =
      dispatch_float(v.x.dtype, [&](auto tag) { norm_rows<typename decltype(tag)::type>(ctx, v, layer); });
  if (!known) return ctx.fail(CTL_STATUS_UNSUPPORTED, "dtype %s is not supported", dtype_name(v.x.dtype));
  return nullptr;
}

}  // namespace

ctl_status* run_softmax(const OpContext& ctx) {
  View x, y;
  CTL_SDK_RETURN_IF_ERROR(ctx.one_to_one(&x, &y));
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
  const int64_t n = x.shape[axis];
  Scratch scratch(ctx);
  CTL_SDK_RETURN_IF_ERROR(scratch.allocate(ctx, sizeof(double) * static_cast<size_t>(n) * ctx.threads()));
  const bool log = ctx.call->op == CTL_OP_LOG_SOFTMAX;
  const bool known = dispatch_float(x.dtype, [&](auto tag) {
    softmax_rows<typename decltype(tag)::type>(ctx, x, y, static_cast<uint32_t>(axis), log, scratch.as<double>());
  });
  if (!known) return ctx.fail(CTL_STATUS_UNSUPPORTED, "dtype %s is not supported", dtype_name(x.dtype));
  return nullptr;
}

ctl_status* run_layer_norm(const OpContext& ctx) {
  return run_norm(ctx, true);
}
ctl_status* run_rms_norm(const OpContext& ctx) {
  return run_norm(ctx, false);
}

}  // namespace catalyst::cpu
