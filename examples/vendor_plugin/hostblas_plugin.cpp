// hostblas_plugin.cpp — the worked vendor plugin of docs/vendor-guide.md: the SDK's skeleton
// grown into a device that reaches the conformance suite's `core` level. Its memory is host
// memory; matmul in f32 goes through OpenBLAS (cblas_sgemm); every other op it claims is a
// plain loop over the views the SDK's binders hand it (catalyst/sdk/bind_*.hpp), walked by
// catalyst/sdk/host_walk.hpp and computed by the scalar rules of catalyst/sdk/scalar_rules.hpp.
// It computes in the required dtypes (f32, i32, i64, bool) and leaves the training ops and
// convolutions unclaimed: they answer UNSUPPORTED, and the core may fall back to another device.
#include <cblas.h>

#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "catalyst/sdk/bind_elementwise.hpp"
#include "catalyst/sdk/bind_matmul.hpp"
#include "catalyst/sdk/bind_movement.hpp"
#include "catalyst/sdk/bind_normalization.hpp"
#include "catalyst/sdk/bind_reduce.hpp"
#include "catalyst/sdk/host_device.hpp"
#include "catalyst/sdk/host_walk.hpp"
#include "catalyst/sdk/op_families.hpp"
#include "catalyst/sdk/philox.hpp"
#include "catalyst/sdk/scalar_rules.hpp"
#include "catalyst_plugin.h"

namespace {

namespace sdk = catalyst::sdk;
constexpr const char* kPluginName = "hostblas";
constexpr uint32_t kNumeric =
    CTL_DTYPE_BIT(CTL_DTYPE_F32) | CTL_DTYPE_BIT(CTL_DTYPE_I32) | CTL_DTYPE_BIT(CTL_DTYPE_I64);
constexpr uint32_t kAll = kNumeric | CTL_DTYPE_BIT(CTL_DTYPE_BOOL);  // the dtypes this device computes in

// ---- The device: host memory, so the SDK's host-memory entries (buffers from host->alloc,
// synchronous streams) serve; a device with memory of its own writes them as the skeleton does.

ctl_status* device_properties(ctl_plugin_device*, ctl_plugin_device_properties* out) {
  ctl_plugin_device_properties p{};
  p.name = "Host memory with OpenBLAS";
  p.vendor = "Catalyst example";
  p.driver_version = "0.1";
  p.kind = CTL_DEVICE_KIND_CPU;
  p.compute_units = 1;
  p.numa_node = -1;
  p.dtype_mask = kAll;
  sdk::write_properties(p, out);
  return nullptr;
}

// ---- Op calls: the SDK's reader over these buffers. ----

using View = sdk::HostView;
struct OpContext : sdk::OpCall<OpContext, View> {
  using OpCall::OpCall;
  uint64_t buffer_size(const ctl_plugin_buffer* buffer) const { return sdk::host_buffer(buffer).size; }
  ctl_status* bind_buffer(const ctl_tensor_view& v, const sdk::ViewFacts& facts, const sdk::ViewSlot&,
                          View* out) const {
    out->data = sdk::host_buffer(v.buffer).data + (facts.numel ? v.byte_offset : 0);
    return nullptr;
  }
};

// y = x, element by element whatever the dtype (copy, concat's parts, scatter_add's start).
ctl_status* copy_view(const View& x, const View& y) {
  const View* views[] = {&x, &y};
  sdk::walk_views(views,
                  [&](int64_t, const int64_t(&at)[2]) { std::memcpy(y.at(at[1]), x.at(at[0]), y.element_size); });
  return nullptr;
}

// ---- The op families. ----

// The unary ops, and copy: the identity, whatever the dtype.
ctl_status* run_unary(const OpContext& ctx) {
  View x, y;
  CTL_SDK_RETURN_IF_ERROR(ctx.one_to_one(&x, &y));
  if (ctx.call->op == CTL_OP_COPY) return copy_view(x, y);
  return sdk::visit_dtype<kNumeric>(ctx, x.dtype, [&](auto t) {
    sdk::map_elements<decltype(t)>(y, {&x}, [&](auto v) { return sdk::unary_op(ctx.call->op, v); });
  });
}

// The binary ops and the comparisons: two inputs of one dtype, one output.
ctl_status* run_binary(const OpContext& ctx) {
  const int64_t op = ctx.call->op;
  const ctl_dtype kBool = CTL_DTYPE_BOOL;
  View a, b, y;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_binary(ctx, &a, &b, &y, "a", "b", op >= CTL_OP_EQ ? &kBool : nullptr));
  if (op >= CTL_OP_EQ) {
    return sdk::visit_dtype<kAll>(ctx, a.dtype, [&](auto t) {
      sdk::map_elements<decltype(t), decltype(t)>(y, {&a, &b},
                                                  [&](auto p, auto q) { return sdk::compare_op(op, p, q); });
    });
  }
  return sdk::visit_dtype<kNumeric>(ctx, a.dtype, [&](auto t) {
    sdk::map_elements<decltype(t), decltype(t)>(y, {&a, &b}, [&](auto p, auto q) { return sdk::binary_op(op, p, q); });
  });
}

ctl_status* run_where(const OpContext& ctx) {
  View cond, a, b, y;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_where(ctx, &cond, &a, &b, &y));
  const View* views[] = {&cond, &a, &b, &y};
  sdk::walk_views(views, [&](int64_t, const int64_t(&at)[4]) {
    std::memcpy(y.at(at[3]), sdk::load<bool>(cond.at(at[0])) ? a.at(at[1]) : b.at(at[2]), y.element_size);
  });
  return nullptr;
}

ctl_status* run_cast(const OpContext& ctx) {
  View x, y;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_cast(ctx, &x, &y));
  return sdk::visit_dtype<kAll>(ctx, x.dtype, [&](auto from) {
    sdk::visit_dtype<kAll>(y.dtype, [&](auto to) {
      sdk::map_elements<decltype(from)>(y, {&x}, [](auto v) { return sdk::cast_value<decltype(to)>(v); });
    });
  });
}

// sum, mean, max, min, argmax, argmin, logsumexp: one output per kept element, its reduced
// elements walked in row-major order (the same order every run).
ctl_status* run_reduce(const OpContext& ctx) {
  sdk::ReduceProblem<View> r;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_reduce(ctx, &r));
  return sdk::visit_dtype<kNumeric>(ctx, r.x.dtype, [&](auto t) {
    using T = decltype(t);
    const View *kept[] = {&r.kept_x, &r.kept_out}, *reduced[] = {&r.reduced_x};
    const bool is_max = r.op == CTL_OP_MAX || r.op == CTL_OP_ARGMAX || r.op == CTL_OP_LOGSUMEXP;
    sdk::walk_views(kept, [&](int64_t, const int64_t(&k)[2]) {
      double sum = 0;
      uint64_t wrapped = 0;  // integer sums wrap in 64 bits
      T best{};
      int64_t best_at = 0;
      sdk::walk_views(reduced, [&](int64_t i, const int64_t(&e)[1]) {
        const T v = sdk::load<T>(r.x.at(k[0] + e[0]));
        if constexpr (std::is_integral_v<T>) wrapped += static_cast<uint64_t>(v);
        sum += static_cast<double>(v);
        if (i == 0 || (r.arg && sdk::arg_replaces(v, best, is_max))) best = v, best_at = i;
        if (!r.arg) best = is_max ? sdk::maximum_of(best, v) : sdk::minimum_of(best, v);
      });
      char* out = r.out.at(k[1]);
      if (r.op == CTL_OP_SUM) sdk::store(out, std::is_integral_v<T> ? static_cast<T>(wrapped) : static_cast<T>(sum));
      if (r.op == CTL_OP_MEAN) sdk::store(out, static_cast<T>(sum / static_cast<double>(r.count())));
      if (r.op == CTL_OP_MAX || r.op == CTL_OP_MIN) sdk::store(out, best);
      if (r.arg) sdk::store(out, best_at);
      if (r.op != CTL_OP_LOGSUMEXP) return;
      const double m = r.count() ? static_cast<double>(best) : -INFINITY;
      double terms = 0;
      sdk::walk_views(reduced, [&](int64_t, const int64_t(&e)[1]) {
        terms += std::exp(static_cast<double>(sdk::load<T>(r.x.at(k[0] + e[0]))) - m);
      });
      sdk::store(out, static_cast<T>(std::isinf(m) ? m : m + std::log(terms)));
    });
  });
}

// out = act(alpha * a @ b + beta * out + bias), one matrix of the batch at a time: a and b
// packed row-major, C = A B by OpenBLAS (f32) or a wrapping loop (i32, i64), then the epilogue.
template <class T>
void matmul(const sdk::MatmulProblem<View>& mm) {
  const int64_t M = mm.M, N = mm.N, K = mm.K;
  const T alpha = std::is_integral_v<T> ? static_cast<T>(static_cast<int64_t>(mm.alpha)) : T{};  // whole numbers
  const T beta = std::is_integral_v<T> ? static_cast<T>(static_cast<int64_t>(mm.beta)) : T{};
  std::vector<T> a(M * K), b(K * N), c(M * N);
  View batch[4];
  sdk::matmul_batch_views(mm, batch);
  const View* views[] = {&batch[0], &batch[1], &batch[2], &batch[3]};
  sdk::walk_views(views, [&](int64_t, const int64_t(&at)[4]) {
    for (int64_t i = 0; i < M * K; ++i) a[i] = sdk::load<T>(mm.a.at(at[0] + i / K * mm.a_rs + i % K * mm.a_cs));
    for (int64_t i = 0; i < K * N; ++i) b[i] = sdk::load<T>(mm.b.at(at[1] + i / N * mm.b_rs + i % N * mm.b_cs));
    if constexpr (std::is_same_v<T, float>) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a.data(), K ? K : 1, b.data(), N, 0.0f,
                  c.data(), N);
    } else {
      for (int64_t i = 0; i < M * N; ++i) {
        c[i] = 0;
        for (int64_t k = 0; k < K; ++k)
          c[i] = sdk::wrapping_add(c[i], sdk::wrapping_mul(a[i / N * K + k], b[k * N + i % N]));
      }
    }
    for (int64_t i = 0; i < M * N; ++i) {
      char* out = mm.out.at(at[2] + i / N * mm.out_rs + i % N * mm.out_cs);
      const T bias = mm.has_bias ? sdk::load<T>(mm.bias.at(at[3] + i / N * mm.bias_rs + i % N * mm.bias_cs)) : T{};
      if constexpr (std::is_same_v<T, float>) {
        double v = mm.alpha * c[i];
        if (mm.has_bias) v += bias;
        if (mm.beta != 0) v += mm.beta * sdk::load<T>(out);
        sdk::store(out, static_cast<T>(sdk::activation_op(mm.activation, v)));
      } else {  // whole alpha and beta, wrapping
        T v = sdk::wrapping_add(sdk::wrapping_mul(alpha, c[i]), bias);
        if (mm.beta != 0) v = sdk::wrapping_add(v, sdk::wrapping_mul(beta, sdk::load<T>(out)));
        sdk::store(out, v);
      }
    }
  });
}

ctl_status* run_matmul(const OpContext& ctx) {
  sdk::MatmulProblem<View> mm;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_matmul(ctx, &mm));
  if (mm.empty()) return nullptr;
  return sdk::visit_dtype<kNumeric>(ctx, mm.dtype, [&](auto t) { matmul<decltype(t)>(mm); });
}

// softmax / log_softmax along one axis, f32 in double: each row's max, then its sum of exps.
ctl_status* run_softmax(const OpContext& ctx) {
  sdk::SoftmaxProblem<View> s;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_softmax(ctx, &s));
  const int64_t n = s.x.shape[s.axis], xs = s.x.strides[s.axis], ys = s.y.strides[s.axis];
  const View* views[] = {&s.x, &s.y};
  sdk::walk_views(views, s.axis, [&](int64_t, const int64_t(&at)[2]) {
    double m = -INFINITY, sum = 0;
    for (int64_t k = 0; k < n; ++k) m = sdk::ieee_maximum(m, sdk::load<float>(s.x.at(at[0] + k * xs)));
    for (int64_t k = 0; k < n; ++k) sum += std::exp(sdk::load<float>(s.x.at(at[0] + k * xs)) - m);
    for (int64_t k = 0; k < n; ++k) {
      const double d = sdk::load<float>(s.x.at(at[0] + k * xs)) - m;
      sdk::store(s.y.at(at[1] + k * ys), static_cast<float>(s.log_form ? d - std::log(sum) : std::exp(d) / sum));
    }
  });
  return nullptr;
}

// layer_norm / rms_norm over the last axis, f32 in double, the variance in two passes.
ctl_status* run_norm(const OpContext& ctx) {
  sdk::NormProblem<View> p;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_norm(ctx, ctx.call->op == CTL_OP_LAYER_NORM, &p));
  const int64_t n = p.x.shape[p.last], xs = p.x.strides[p.last], ys = p.y.strides[p.last];
  const auto value = [](const View& v, bool present, int64_t k, double otherwise) {
    return present ? sdk::load<float>(v.at(k * v.strides[0])) : otherwise;
  };
  const View* views[] = {&p.x, &p.y, &p.mean, &p.rstd};
  sdk::walk_views(views, p.last, [&](int64_t, const int64_t(&at)[4]) {
    double mean = 0, var = 0;
    for (int64_t k = 0; p.layer && k < n; ++k) mean += sdk::load<float>(p.x.at(at[0] + k * xs));
    if (p.layer) mean /= static_cast<double>(n);
    for (int64_t k = 0; k < n; ++k) var += std::pow(sdk::load<float>(p.x.at(at[0] + k * xs)) - mean, 2);
    const double rstd = 1.0 / std::sqrt(var / static_cast<double>(n) + p.eps);
    for (int64_t k = 0; k < n; ++k) {
      const double xh = (sdk::load<float>(p.x.at(at[0] + k * xs)) - mean) * rstd;
      const double y = xh * value(p.weight, p.has_weight, k, 1.0) + value(p.bias, p.has_bias, k, 0.0);
      sdk::store(p.y.at(at[1] + k * ys), static_cast<float>(y));
    }
    if (p.has_mean) sdk::store(p.mean.at(at[2]), static_cast<float>(mean));
    if (p.has_rstd) sdk::store(p.rstd.at(at[3]), static_cast<float>(rstd));
  });
  return nullptr;
}

ctl_status* run_concat(const OpContext& ctx) {
  return sdk::run_concat_parts<OpContext, View>(ctx,
                                                [](const View& x, const View& part) { return copy_view(x, part); });
}

// gather: an index outside [-n, n) gives 0.
constexpr char kZero[8] = {};
ctl_status* run_gather(const OpContext& ctx) {
  sdk::GatherProblem<View> g;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_gather(ctx, &g));
  const int64_t n = g.x.shape[g.axis];
  const View* views[] = {&g.x_walk, &g.index_walk, &g.out};
  sdk::walk_views(views, [&](int64_t, const int64_t(&at)[3]) {
    const int64_t i = sdk::index_position(sdk::load_index(g.index, at[1]), n);
    const char* from = i < 0 ? kZero : g.x.at(at[0] + i * g.x.strides[g.axis]);
    std::memcpy(g.out.at(at[2]), from, g.out.element_size);
  });
  return nullptr;
}

// scatter_add: out = target, then each src element added where its index points (skipped
// outside [-n, n)), in one order every run.
ctl_status* run_scatter_add(const OpContext& ctx) {
  sdk::ScatterAddProblem<View> s;
  CTL_SDK_RETURN_IF_ERROR(sdk::bind_scatter_add(ctx, &s));
  copy_view(s.target, s.out);
  const sdk::ScatterWalks<View> w = sdk::scatter_walks(s, s.out);
  const int64_t n = s.target.shape[s.axis];
  return sdk::visit_dtype<kNumeric>(ctx, s.out.dtype, [&](auto t) {
    using T = decltype(t);
    const View *columns[] = {&w.src_columns, &w.acc_columns}, *positions[] = {&w.src_positions, &s.index};
    sdk::walk_views(columns, [&](int64_t, const int64_t(&c)[2]) {
      sdk::walk_views(positions, [&](int64_t, const int64_t(&j)[2]) {
        const int64_t i = sdk::index_position(sdk::load_index(s.index, j[1]), n);
        if (i < 0) return;
        char* out = s.out.at(c[1] + i * s.out.strides[s.axis]);
        sdk::store(out, sdk::binary_op(CTL_OP_ADD, sdk::load<T>(out), sdk::load<T>(s.src.at(c[0] + j[0]))));
      });
    });
  });
}

// fill, arange, random: element i of out (row-major) is value(i) in double, cast by the rules.
ctl_status* run_create(const OpContext& ctx) {
  View out;
  double value = 0, step = 0;
  sdk::RandomProblem rp;
  const int64_t op = ctx.call->op;
  if (op == CTL_OP_FILL) CTL_SDK_RETURN_IF_ERROR(sdk::bind_fill(ctx, &out, &value));
  if (op == CTL_OP_ARANGE) CTL_SDK_RETURN_IF_ERROR(sdk::bind_arange(ctx, &out, &value, &step));
  if (op == CTL_OP_RANDOM_UNIFORM || op == CTL_OP_RANDOM_NORMAL)
    CTL_SDK_RETURN_IF_ERROR(sdk::bind_random(ctx, &out, &rp));
  const View* views[] = {&out};
  sdk::walk_views(views, [&](int64_t i, const int64_t(&at)[1]) {
    double v = value;
    if (op == CTL_OP_ARANGE) v += static_cast<double>(i) * step;
    if (op == CTL_OP_RANDOM_UNIFORM) v = sdk::philox_uniform(rp.seed, rp.offset + i, rp.a, rp.b);
    if (op == CTL_OP_RANDOM_NORMAL) v = sdk::philox_normal(rp.seed, rp.offset + i, rp.a, rp.b);
    const uint64_t bits = sdk::bits_from_double(out.dtype, v);  // in the low bytes, little-endian
    std::memcpy(out.at(at[0]), &bits, out.element_size);
  });
  return nullptr;
}

// ---- The op table: a family named here is claimed; every other op answers UNSUPPORTED. ----

using Run = ctl_status* (*)(const OpContext&);
using OpEntry = sdk::OpEntryOf<Run>;
constexpr auto kOps = sdk::op_table(sdk::OpFamilies<Run>{.unary = run_unary,
                                                         .binary = run_binary,
                                                         .compare = run_binary,
                                                         .where = run_where,
                                                         .reduce = run_reduce,
                                                         .matmul = run_matmul,
                                                         .softmax = run_softmax,
                                                         .layer_norm = run_norm,
                                                         .rms_norm = run_norm,
                                                         .copy = run_unary,
                                                         .cast = run_cast,
                                                         .concat = run_concat,
                                                         .gather = run_gather,
                                                         .scatter_add = run_scatter_add,
                                                         .fill = run_create,
                                                         .arange = run_create,
                                                         .random = run_create});

// The call's entry, once the op, its dtype and every view's dtype are ones this device runs.
ctl_status* find_entry(const ctl_host_api* host, const ctl_op_call* call, const OpEntry** out) {
  sdk::Check check = sdk::find_op(kOps, call, kPluginName, out);
  int64_t dtype = check.ok() ? sdk::dtype_outside(call->inputs, call->input_count, kAll) : -1;
  if (check.ok() && dtype < 0) dtype = sdk::dtype_outside(call->outputs, call->output_count, kAll);
  if (dtype >= 0)
    check = sdk::check_failed(CTL_STATUS_UNSUPPORTED, "%s: no %s kernels", (*out)->name,
                              sdk::dtype_name(static_cast<ctl_dtype>(dtype)));
  return check.ok() ? nullptr : sdk::make_status(host, check.code, "%s plugin: %s", kPluginName, check.message);
}

ctl_status* op_supports(ctl_plugin_device* device, const ctl_op_call* call) {
  const OpEntry* entry = nullptr;
  return find_entry(sdk::host_of(device), call, &entry);
}

ctl_status* op_execute(ctl_plugin_stream* stream, const ctl_op_call* call) {
  const ctl_host_api* host = sdk::host_of(stream);
  const OpEntry* entry = nullptr;
  CTL_SDK_RETURN_IF_ERROR(find_entry(host, call, &entry));
  const OpContext ctx(host, call, entry->name, "hostblas plugin: ");
  return sdk::run_guarded(ctx, "out of host memory", [&] { return entry->run(ctx); });
}

const ctl_plugin_api kApi = sdk::host_device_api(kPluginName, "0.1.0", device_properties, op_supports, op_execute);

}  // namespace

extern "C" CTL_EXPORT const ctl_plugin_api* ctl_plugin_query(uint32_t core_abi_major, uint32_t,
                                                             const ctl_host_api* host) {
  if (core_abi_major == CTL_ABI_VERSION_MAJOR) return &kApi;
  if (host) {
    sdk::log(host, CTL_LOG_ERROR, "%s: incompatible ABI major: core %u, plugin %d", kPluginName, core_abi_major,
             CTL_ABI_VERSION_MAJOR);
  }
  return nullptr;
}
