// training.cpp — the loss and optimizer kernels: cross_entropy, its backward and adamw_step
// (ABI 1.1), and sgd_step (ABI 1.2).
//
// Every value is computed in double and rounded once when stored, whatever the dtype: these
// ops are bound by memory and a libm call per element, and double keeps their
// cancellations (lse - z[t], beta1 * m + (1 - beta1) * g) within one rounding of the
// reference. Loss rows are spread over the pool as in normalization.cpp; the MEAN / SUM
// loss adds per-block sums in block order, blocks sized by the shape alone, so it never
// depends on the thread count.
//
// f32 with unit strides goes to vec_kernels.h: a row's exps in f32 summed in f32 lanes (its
// log and the loss in double), AdamW's update in double per element as here.
#include <algorithm>
#include <cmath>
#include <limits>

#include "catalyst/sdk/bind_training.hpp"
#include "dtype_dispatch.h"
#include "kernels.h"
#include "tensor_iter.h"
#include "vec_kernels.h"

namespace catalyst::cpu {
namespace {

constexpr int64_t kElementsPerPart = 8192;    // a parallel part's least work
constexpr int64_t kElementsPerBlock = 32768;  // rows per loss block: this many elements

int64_t row_grain(int64_t n) {
  return std::max<int64_t>(1, kElementsPerPart / std::max<int64_t>(n, 1));
}

// ---- cross_entropy and cross_entropy_backward ------------------------------------------

// The views and attrs of a loss call (sdk/bind_training.hpp).
using CrossEntropy = sdk::CrossEntropyProblem<View>;

// The row's max, NaN when the row holds one (then everything derived is NaN too).
template <class T>
double row_max(const T* z, int64_t n, int64_t stride) {
  double m = -std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < n; ++i) {
    const double value = load_double(z, i * stride);
    if (value != value || value > m) m = value;
  }
  return m;
}

// logsumexp over a row, as the logsumexp op defines it: an infinite (or NaN) max is the
// result, so a row holding +inf gives +inf rather than inf - inf.
template <class T>
double row_logsumexp(const T* z, int64_t n, int64_t stride) {
  const double m = row_max(z, n, stride);
  if (!std::isfinite(m)) return m;
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(load_double(z, i * stride) - m);
  return m + std::log(sum);
}

template <class T, class I>
void cross_entropy_rows(const OpContext& ctx, const CrossEntropy& v, double* block_sums, int64_t* block_counts) {
  const View& z = v.logits;
  const uint32_t last = z.rank - 1;
  const int64_t c = z.shape[last], sz = z.strides[last];
  const bool per_row = v.reduction == CTL_REDUCTION_NONE;
  static const int64_t zeros[CTL_MAX_RANK] = {};
  const auto rows = make_layout<3>(last, z.shape, {z.strides, v.target.strides, per_row ? v.out.strides : zeros});
  const T* const pz = z.as<T>();
  const I* const pt = v.target.as<I>();
  T* const pout = v.out.as<T>();
  const int64_t block = std::max<int64_t>(1, kElementsPerBlock / std::max<int64_t>(c, 1));
  const int64_t blocks = (rows.numel + block - 1) / block;
  const bool vector = std::is_same_v<T, float> && sz == 1 && c > 0;
  const VecKernels& k = vec_kernels();
  auto logsumexp = [&](const T* zr) {
    if constexpr (std::is_same_v<T, float>) {
      if (vector) {
        float m;
        double log_sum;
        k.row_max_logsum(zr, c, &m, &log_sum);
        return std::isfinite(m) ? static_cast<double>(m) + log_sum : static_cast<double>(m);
      }
    }
    return row_logsumexp(zr, c, sz);
  };
  parallel_for(ctx.pool, blocks, 1, [&](int64_t first, int64_t last_block, unsigned) {
    for (int64_t b = first; b < last_block; ++b) {
      double sum = 0;
      int64_t count = 0;
      for_each_row(rows, b * block, std::min(rows.numel, (b + 1) * block), [&](const auto& off) {
        const int64_t t = static_cast<int64_t>(pt[off[1]]);
        double loss = 0;
        if (!v.ignored(t)) {
          ++count;
          loss = (t < 0 || t >= c) ? std::numeric_limits<double>::quiet_NaN()
                                   : logsumexp(pz + off[0]) - load_double(pz + off[0], t * sz);
          sum += loss;
        }
        if (per_row) pout[off[2]] = store_double<T>(loss);
      });
      block_sums[b] = sum;
      block_counts[b] = count;
    }
  });
  if (per_row) return;
  double total = 0;
  int64_t count = 0;
  for (int64_t b = 0; b < blocks; ++b) {
    total += block_sums[b];
    count += block_counts[b];
  }
  // MEAN over no counted row is 0 / 0: NaN.
  const double loss = v.reduction == CTL_REDUCTION_SUM ? total : total / static_cast<double>(count);
  *pout = store_double<T>(loss);
}

// Rows whose target is not ignored (MEAN's divisor); an integer sum, so any order is exact.
template <class I>
int64_t counted_rows(const OpContext& ctx, const CrossEntropy& v, int64_t* part_counts) {
  const View& t = v.target;
  const auto layout = make_layout<1>(t.rank, t.shape, {t.strides});
  const I* const pt = t.as<I>();
  for (unsigned p = 0; p < ctx.threads(); ++p) part_counts[p] = 0;
  parallel_for(ctx.pool, layout.numel, kElementsPerPart * 4, [&](int64_t begin, int64_t end, unsigned part) {
    int64_t count = 0;
    for_each_segment(layout, begin, end, [&](const std::array<int64_t, 1>& off, int64_t n, int64_t) {
      for (int64_t i = 0; i < n; ++i)
        count += v.ignored(static_cast<int64_t>(pt[off[0] + i * layout.inner_stride(0)])) ? 0 : 1;
    });
    part_counts[part] = count;
  });
  int64_t total = 0;
  for (unsigned p = 0; p < ctx.threads(); ++p) total += part_counts[p];
  return total;
}

template <class T, class I>
void cross_entropy_backward_rows(const OpContext& ctx, const CrossEntropy& v, int64_t count, double* scratch) {
  const View& z = v.logits;
  const uint32_t last = z.rank - 1;
  const int64_t c = z.shape[last], sz = z.strides[last], so = v.out.strides[last];
  const bool per_row = v.reduction == CTL_REDUCTION_NONE;
  static const int64_t zeros[CTL_MAX_RANK] = {};
  const auto rows =
      make_layout<4>(last, z.shape, {z.strides, v.target.strides, v.out.strides, per_row ? v.grad.strides : zeros});
  const T* const pz = z.as<T>();
  const I* const pt = v.target.as<I>();
  const T* const pg = v.grad.as<T>();
  T* const pout = v.out.as<T>();
  double scale = 0;  // g_r for MEAN and SUM
  if (!per_row) {
    scale = load_double(pg, 0);
    if (v.reduction == CTL_REDUCTION_MEAN) scale /= static_cast<double>(count);
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const bool vector = std::is_same_v<T, float> && sz == 1 && so == 1;
  const VecKernels& k = vec_kernels();
  parallel_for(ctx.pool, rows.numel, row_grain(c), [&](int64_t begin, int64_t end, unsigned part) {
    double* const e = scratch + static_cast<int64_t>(part) * c;
    for_each_row(rows, begin, end, [&](const auto& off) {
      const T* zr = pz + off[0];
      T* out = pout + off[2];
      const int64_t t = static_cast<int64_t>(pt[off[1]]);
      if (v.ignored(t)) {
        for (int64_t i = 0; i < c; ++i) out[i * so] = store_double<T>(0.0);
        return;
      }
      if (t < 0 || t >= c) {
        for (int64_t i = 0; i < c; ++i) out[i * so] = store_double<T>(nan);
        return;
      }
      const double g = per_row ? load_double(pg, off[3]) : scale;
      if constexpr (std::is_same_v<T, float>) {
        if (vector) {
          // p = e / sum in f32; g * (p - 1) at the target.
          float* const ef = reinterpret_cast<float*>(e);
          const float sum = k.row_exp_sum(ef, zr, c, k.row_max(zr, c));
          const float inv = 1.0f / sum, gf = static_cast<float>(g);
          for (int64_t i = 0; i < c; ++i) out[i] = gf * (ef[i] * inv);
          out[t] = static_cast<float>(g * (static_cast<double>(ef[t]) / static_cast<double>(sum) - 1.0));
          return;
        }
      }
      // softmax(z) as the softmax op computes it: a row of -inf, or holding +inf, is NaN.
      const double m = row_max(zr, c, sz);
      double sum = 0;
      for (int64_t i = 0; i < c; ++i) {
        e[i] = std::exp(load_double(zr, i * sz) - m);
        sum += e[i];
      }
      for (int64_t i = 0; i < c; ++i) {
        const double p = e[i] / sum;
        out[i * so] = store_double<T>(g * (i == t ? p - 1.0 : p));
      }
    });
  });
}

// Calls f(Tag<T>{}, Tag<I>{}) for the logits' float type T and the target's integer type I.
template <class F>
bool dispatch_cross_entropy(const CrossEntropy& v, F&& f) {
  return dispatch_float(v.logits.dtype, [&](auto tag) {
    if (v.target.dtype == CTL_DTYPE_I32)
      f(tag, Tag<int32_t>{});
    else
      f(tag, Tag<int64_t>{});
  });
}

// ---- adamw_step ---------------------------------------------------------------------

template <class T>
void adamw_elements(const OpContext& ctx, const View& grad, const View* state, const ctl_adamw_attrs& a) {
  const auto layout =
      make_layout<4>(grad.rank, grad.shape, {grad.strides, state[0].strides, state[1].strides, state[2].strides});
  const T* const pg = grad.as<T>();
  T* const pp = state[0].as<T>();
  T* const pm = state[1].as<T>();
  T* const pv = state[2].as<T>();
  const double lr = a.lr, decay = a.lr * a.weight_decay, beta1 = a.beta1, beta2 = a.beta2, eps = a.eps;
  const double correction1 = 1 - std::pow(a.beta1, static_cast<double>(a.step));
  const double correction2 = 1 - std::pow(a.beta2, static_cast<double>(a.step));
  const VecKernels& k = vec_kernels();
  parallel_for(ctx.pool, layout.numel, kElementsPerPart * 4, [&](int64_t begin, int64_t end, unsigned) {
    for_each_segment(layout, begin, end, [&](const std::array<int64_t, 4>& off, int64_t count, int64_t) {
      const int64_t sg = layout.inner_stride(0), sp = layout.inner_stride(1);
      const int64_t sm = layout.inner_stride(2), sv = layout.inner_stride(3);
      const T* g = pg + off[0];
      T* p = pp + off[1];
      T* m = pm + off[2];
      T* v = pv + off[3];
      if constexpr (std::is_same_v<T, float>) {
        if (sg == 1 && sp == 1 && sm == 1 && sv == 1) {
          k.adamw(p, m, v, g, count, lr, decay, beta1, beta2, eps, 1 / correction1, 1 / correction2);
          return;
        }
      }
      for (int64_t i = 0; i < count; ++i) {
        const double gi = load_double(g, i * sg);
        double pi = load_double(p, i * sp);
        pi = pi - decay * pi;
        const double mi = beta1 * load_double(m, i * sm) + (1 - beta1) * gi;
        const double vi = beta2 * load_double(v, i * sv) + (1 - beta2) * gi * gi;
        pi = pi - lr * (mi / correction1) / (std::sqrt(vi / correction2) + eps);
        p[i * sp] = store_double<T>(pi);
        m[i * sm] = store_double<T>(mi);
        v[i * sv] = store_double<T>(vi);
      }
    });
  });
}

// ---- sgd_step -----------------------------------------------------------------------

template <class T>
void sgd_elements(const OpContext& ctx, const View& grad, const View& param, const View* buffer,
                  const ctl_sgd_attrs& a) {
  // Without a buffer, param's strides stand in for its (unused) slot.
  const auto layout =
      make_layout<3>(grad.rank, grad.shape, {grad.strides, param.strides, buffer ? buffer->strides : param.strides});
  const T* const pg = grad.as<T>();
  T* const pp = param.as<T>();
  T* const pb = buffer ? buffer->as<T>() : nullptr;
  const VecKernels& k = vec_kernels();
  parallel_for(ctx.pool, layout.numel, kElementsPerPart * 4, [&](int64_t begin, int64_t end, unsigned) {
    for_each_segment(layout, begin, end, [&](const std::array<int64_t, 3>& off, int64_t count, int64_t) {
      const int64_t sg = layout.inner_stride(0), sp = layout.inner_stride(1), sb = layout.inner_stride(2);
      const T* g = pg + off[0];
      T* p = pp + off[1];
      T* b = pb ? pb + off[2] : nullptr;
      if constexpr (std::is_same_v<T, float>) {
        if (sg == 1 && sp == 1 && (!b || sb == 1)) {
          k.sgd(p, b, g, count, a.lr, a.momentum, a.dampening, a.weight_decay, a.nesterov);
          return;
        }
      }
      for (int64_t i = 0; i < count; ++i) {
        const double pi = load_double(p, i * sp);
        const double gi = load_double(g, i * sg) + a.weight_decay * pi;
        double d = gi;
        if (b) {
          const double bi = a.momentum * load_double(b, i * sb) + (1 - a.dampening) * gi;
          b[i * sb] = store_double<T>(bi);
          d = a.nesterov ? gi + a.momentum * bi : bi;
        }
        p[i * sp] = store_double<T>(pi - a.lr * d);
      }
    });
  });
}

}  // namespace

ctl_status* run_cross_entropy(const OpContext& ctx) {
  CrossEntropy v;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_cross_entropy(ctx, false, &v));
  const int64_t c = v.logits.shape[v.logits.rank - 1];
  const int64_t rows = v.target.numel();
  const int64_t block = std::max<int64_t>(1, kElementsPerBlock / std::max<int64_t>(c, 1));
  const int64_t blocks = (rows + block - 1) / block;
  Scratch scratch(ctx);
  CTL_SDK_RETURN_IF_ERROR(scratch.allocate(ctx, (sizeof(double) + sizeof(int64_t)) * static_cast<size_t>(blocks)));
  double* const sums = scratch.as<double>();
  int64_t* const counts = reinterpret_cast<int64_t*>(sums + blocks);
  const bool known = dispatch_cross_entropy(v, [&](auto tag, auto index_tag) {
    cross_entropy_rows<typename decltype(tag)::type, typename decltype(index_tag)::type>(ctx, v, sums, counts);
  });
  if (!known) return ctx.fail(CTL_STATUS_UNSUPPORTED, "dtype %s is not supported", dtype_name(v.logits.dtype));
  return nullptr;
}

ctl_status* run_cross_entropy_backward(const OpContext& ctx) {
  CrossEntropy v;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_cross_entropy(ctx, true, &v));
  const int64_t c = v.logits.shape[v.logits.rank - 1];
  if (v.logits.numel() == 0) return nullptr;
  Scratch scratch(ctx);
  const size_t row_bytes = sizeof(double) * static_cast<size_t>(c) * ctx.threads();
  CTL_SDK_RETURN_IF_ERROR(scratch.allocate(ctx, std::max(row_bytes, sizeof(int64_t) * ctx.threads())));
  const bool known = dispatch_cross_entropy(v, [&](auto tag, auto index_tag) {
    using I = typename decltype(index_tag)::type;
    const int64_t count = v.reduction == CTL_REDUCTION_MEAN
                              ? counted_rows<I>(ctx, v, reinterpret_cast<int64_t*>(scratch.as<double>()))
                              : 0;
    cross_entropy_backward_rows<typename decltype(tag)::type, I>(ctx, v, count, scratch.as<double>());
  });
  if (!known) return ctx.fail(CTL_STATUS_UNSUPPORTED, "dtype %s is not supported", dtype_name(v.logits.dtype));
  return nullptr;
}

ctl_status* run_adamw_step(const OpContext& ctx) {
  sdk::AdamwProblem<View> ap;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_adamw(ctx, &ap));
  const View& grad = ap.grad;
  const View* state = ap.state;
  const ctl_adamw_attrs& a = ap.attrs;
  if (grad.numel() == 0) return nullptr;
  const bool known =
      dispatch_float(grad.dtype, [&](auto tag) { adamw_elements<typename decltype(tag)::type>(ctx, grad, state, a); });
  if (!known) return ctx.fail(CTL_STATUS_UNSUPPORTED, "dtype %s is not supported", dtype_name(grad.dtype));
  return nullptr;
}

ctl_status* run_sgd_step(const OpContext& ctx) {
  sdk::SgdProblem<View> sp;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_sgd(ctx, &sp));
  const View &grad = sp.grad, &param = sp.param;
  const View* buffer = sp.has_buffer ? &sp.buffer : nullptr;
  const ctl_sgd_attrs& a = sp.attrs;
  if (grad.numel() == 0) return nullptr;
  const bool known = dispatch_float(
      grad.dtype, [&](auto tag) { sgd_elements<typename decltype(tag)::type>(ctx, grad, param, buffer, a); });
  if (!known) return ctx.fail(CTL_STATUS_UNSUPPORTED, "dtype %s is not supported", dtype_name(grad.dtype));
  return nullptr;
}

}  // namespace catalyst::cpu
