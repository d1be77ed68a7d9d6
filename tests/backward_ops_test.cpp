// backward_ops_test.cpp — the reference device's ABI 1.1 kernels (core/reference/training.cpp
// and conv_pool.cpp), the oracle of the conformance suite, checked through the public C API
// in f64: every backward op against central finite differences of its forward op, on
// non-contiguous inputs; conv2d and pooling against hand-computed examples; cross_entropy
// against a composition of older ops (logsumexp minus gather) with its reduction,
// ignore_index and out-of-range rules; adamw_step against the update computed here; the
// calls the core refuses. One test shows the gradient check failing on a wrong gradient, so
// a pass means something.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "test_support.hpp"

using namespace ctltest;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kStep = 1e-6;       // finite-difference step
constexpr double kTolerance = 1e-6;  // relative, on f64

// A logical tensor on the host: row-major values of `shape`.
struct Array {
  std::vector<int64_t> shape;
  std::vector<double> v;
};

Array random_array(std::vector<int64_t> shape, uint64_t seed, double low = -2.0, double high = 2.0) {
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> dist(low, high);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  Array a{std::move(shape), std::vector<double>(static_cast<size_t>(n))};
  for (double& x : a.v) x = dist(engine);
  return a;
}

Array filled(std::vector<int64_t> shape, double value) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return Array{std::move(shape), std::vector<double>(static_cast<size_t>(n), value)};
}

double dot(const Array& a, const Array& b) {
  EXPECT_EQ(a.v.size(), b.v.size());
  double s = 0.0;
  for (size_t i = 0; i < a.v.size() && i < b.v.size(); ++i) s += a.v[i] * b.v[i];
  return s;
}

// How an Array is laid out on the device. Both non-contiguous forms make a kernel that
// ignores strides read the wrong values; kStrided's gaps hold NaN.
enum class Layout {
  kContiguous,
  kTransposed,  // the last two axes are stored swapped, then transposed back (rank >= 2)
  kStrided,     // every other element of a last axis twice as long (rank >= 1)
};

// Central differences of `loss` at `at`, element by element, against `analytic`.
::testing::AssertionResult matches_numeric(const std::vector<double>& analytic, const Array& at,
                                           const std::function<double(const Array&)>& loss) {
  if (analytic.size() != at.v.size())
    return ::testing::AssertionFailure() << "analytic gradient has " << analytic.size() << " elements, expected "
                                         << at.v.size();
  for (size_t i = 0; i < at.v.size(); ++i) {
    Array plus = at, minus = at;
    plus.v[i] += kStep;
    minus.v[i] -= kStep;
    const double numeric = (loss(plus) - loss(minus)) / (2.0 * kStep);
    if (!(std::fabs(analytic[i] - numeric) <= kTolerance * std::max(1.0, std::fabs(numeric))))
      return ::testing::AssertionFailure()
             << "element " << i << ": analytic " << analytic[i] << ", numeric " << numeric;
  }
  return ::testing::AssertionSuccess();
}

void expect_close(const Array& got, const Array& want, double tolerance, const std::string& what) {
  ASSERT_EQ(got.shape, want.shape) << what;
  ASSERT_EQ(got.v.size(), want.v.size()) << what;
  for (size_t i = 0; i < want.v.size(); ++i) {
    if (std::isnan(want.v[i])) {
      EXPECT_TRUE(std::isnan(got.v[i])) << what << " element " << i << ": " << got.v[i] << ", expected NaN";
    } else {
      EXPECT_NEAR(got.v[i], want.v[i], tolerance * std::max(1.0, std::fabs(want.v[i]))) << what << " element " << i;
    }
  }
}

// Asserts an INVALID_ARGUMENT status whose message mentions `needle`.
void expect_invalid(ctl_status* raw, const std::string& needle) {
  Status status(raw);
  ASSERT_NE(status, nullptr) << "the call succeeded; expected INVALID_ARGUMENT about " << needle;
  EXPECT_EQ(ctl_status_get_code(status.get()), CTL_STATUS_INVALID_ARGUMENT) << describe(status.get());
  EXPECT_NE(std::string(ctl_status_get_message(status.get())).find(needle), std::string::npos)
      << describe(status.get());
}

class BackwardOps : public ::testing::Test {
 protected:
  void SetUp() override {
    const ctl_runtime_options opts = options(nullptr, nullptr, true);
    ctl_runtime* raw = nullptr;
    CTL_ASSERT_OK(ctl_runtime_create(&opts, &raw));
    runtime_.reset(raw);
    device_ = find_device(runtime_.get(), "reference");
    ASSERT_NE(device_, nullptr) << "no reference device";
  }

  Tensor upload(const Array& a, Layout layout = Layout::kContiguous) {
    const size_t rank = a.shape.size();
    if (layout == Layout::kContiguous) return from_vector(device_, CTL_DTYPE_F64, a.shape, a.v);
    if (layout == Layout::kTransposed && rank < 2) ADD_FAILURE() << "kTransposed needs rank >= 2";
    if (rank < 1) ADD_FAILURE() << "kStrided needs rank >= 1";
    std::vector<int64_t> physical = a.shape;
    std::vector<double> data;
    ctl_tensor* view = nullptr;
    ctl_status* status = nullptr;
    if (layout == Layout::kTransposed) {
      const int64_t rows = a.shape[rank - 2], cols = a.shape[rank - 1], block = rows * cols;
      std::swap(physical[rank - 2], physical[rank - 1]);
      data.resize(a.v.size());
      for (size_t o = 0; o < a.v.size(); o += static_cast<size_t>(block))
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j) data[o + j * rows + i] = a.v[o + i * cols + j];
      Tensor base = from_vector(device_, CTL_DTYPE_F64, physical, data);
      status = ctl_tensor_transpose(base.get(), -2, -1, &view);
    } else {
      const int64_t n = a.shape[rank - 1];
      physical[rank - 1] = 2 * n;
      data.assign(2 * a.v.size(), kNaN);
      for (size_t i = 0; i < a.v.size(); ++i) data[2 * i] = a.v[i];
      Tensor base = from_vector(device_, CTL_DTYPE_F64, physical, data);
      status = ctl_tensor_slice(base.get(), -1, 0, 2 * n, 2, &view);
    }
    EXPECT_EQ(status, nullptr) << describe(status);
    ctl_status_free(status);
    Tensor t(view);
    if (t && a.v.size() > 1) {
      EXPECT_FALSE(info_of(t.get()).contiguous) << "the test meant a strided view";
    }
    return t;
  }

  template <typename T>
  Tensor upload_ids(ctl_dtype dtype, const std::vector<int64_t>& shape, const std::vector<int64_t>& ids) {
    return from_vector(device_, dtype, shape, std::vector<T>(ids.begin(), ids.end()));
  }

  Tensor upload_targets(ctl_dtype dtype, const std::vector<int64_t>& shape, const std::vector<int64_t>& ids) {
    return dtype == CTL_DTYPE_I32 ? upload_ids<int32_t>(dtype, shape, ids) : upload_ids<int64_t>(dtype, shape, ids);
  }

  static Array download(const ctl_tensor* t) {
    const ctl_tensor_info info = info_of(t);
    return Array{std::vector<int64_t>(info.shape, info.shape + info.rank), to_vector<double>(t)};
  }

  // ctl_op_run with fresh outputs, downloaded; a failure is reported and gives empty arrays.
  std::vector<Array> run(ctl_op_id op, const std::vector<ctl_tensor*>& inputs, const void* attrs, size_t output_count) {
    std::vector<ctl_tensor*> outputs(output_count, nullptr);
    Status status(ctl_op_run(op, inputs.size(), inputs.data(), attrs, output_count, outputs.data()));
    std::vector<Array> result(output_count);
    EXPECT_EQ(status, nullptr) << ctl_op_name(op) << ": " << describe(status.get());
    if (status) return result;
    for (size_t i = 0; i < output_count; ++i) {
      result[i] = download(outputs[i]);
      ctl_tensor_release(outputs[i]);
    }
    return result;
  }

  // ctl_op_run_into with each output (of rank >= 1) every other element of a buffer full of
  // kSentinel; checks that the gaps still hold it and returns the outputs.
  std::vector<Array> run_into_strided(ctl_op_id op, const std::vector<ctl_tensor*>& inputs, const void* attrs,
                                      const std::vector<std::vector<int64_t>>& shapes) {
    constexpr double kSentinel = 12345.0;
    std::vector<Tensor> bases, views;
    std::vector<ctl_tensor*> outputs;
    for (const std::vector<int64_t>& shape : shapes) {
      std::vector<int64_t> physical = shape;
      if (!physical.empty()) physical.back() *= 2;
      ctl_tensor* base = nullptr;
      ctl_tensor* view = nullptr;
      Status made(ctl_tensor_create_full(device_, CTL_DTYPE_F64, physical.size(), physical.data(), kSentinel, &base));
      EXPECT_EQ(made, nullptr) << describe(made.get());
      bases.emplace_back(base);
      if (shape.empty()) {
        ctl_tensor_retain(base);
        view = base;
      } else {
        Status sliced(ctl_tensor_slice(base, -1, 0, physical.back(), 2, &view));
        EXPECT_EQ(sliced, nullptr) << describe(sliced.get());
      }
      views.emplace_back(view);
      outputs.push_back(view);
    }
    Status status(ctl_op_run_into(op, inputs.size(), inputs.data(), attrs, outputs.size(), outputs.data()));
    EXPECT_EQ(status, nullptr) << ctl_op_name(op) << ": " << describe(status.get());
    std::vector<Array> result(shapes.size());
    if (status) return result;
    for (size_t i = 0; i < shapes.size(); ++i) {
      result[i] = download(views[i].get());
      if (shapes[i].empty()) continue;
      const std::vector<double> all = to_vector<double>(bases[i].get());
      for (size_t k = 1; k < all.size(); k += 2) EXPECT_EQ(all[k], kSentinel) << "outputs[" << i << "] gap " << k;
    }
    return result;
  }

  Runtime runtime_;
  ctl_device* device_ = nullptr;
};

TEST_F(BackwardOps, ReferenceDeviceSpeaksAbi11) {
  bool found = false;
  for (size_t i = 0; i < ctl_runtime_plugin_count(runtime_.get()); ++i) {
    ctl_plugin_info info{};
    info.struct_size = CTL_PLUGIN_INFO_STRUCT_SIZE;
    CTL_ASSERT_OK(ctl_runtime_plugin_info(runtime_.get(), i, &info));
    if (std::string(info.name) != "reference") continue;
    found = true;
    EXPECT_EQ(info.abi_major, 1u);
    EXPECT_GE(info.abi_minor, 1u);  // 1.1 or newer (1.2 since it has sgd_step)
  }
  EXPECT_TRUE(found);
}

TEST_F(BackwardOps, SoftmaxBackwardMatchesFiniteDifferences) {
  struct Pair {
    ctl_op_id forward, backward;
  };
  const Pair pairs[] = {{CTL_OP_SOFTMAX, CTL_OP_SOFTMAX_BACKWARD}, {CTL_OP_LOG_SOFTMAX, CTL_OP_LOG_SOFTMAX_BACKWARD}};
  struct Case {
    std::vector<int64_t> shape;
    int32_t axis;
  };
  const Case cases[] = {{{3, 5}, -1}, {{3, 5}, 0}, {{2, 3, 4}, 1}};
  for (const Pair& pair : pairs) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(ctl_op_name(pair.backward)) + " axis " + std::to_string(c.axis));
      const ctl_axis_attrs attrs{CTL_AXIS_ATTRS_STRUCT_SIZE, c.axis};
      const Array x = random_array(c.shape, 1), dy = random_array(c.shape, 2);
      auto forward = [&](const Array& xv) {
        Tensor t = upload(xv, Layout::kTransposed);
        return run(pair.forward, {t.get()}, &attrs, 1)[0];
      };
      const Array y = forward(x);
      Tensor yt = upload(y, Layout::kStrided), dyt = upload(dy, Layout::kTransposed);
      const Array dx = run(pair.backward, {yt.get(), dyt.get()}, &attrs, 1)[0];
      EXPECT_TRUE(matches_numeric(dx.v, x, [&](const Array& xv) { return dot(forward(xv), dy); }));
    }
  }
}

// layer_norm(x, weight, bias) -> y; the loss is sum(dy * y).
TEST_F(BackwardOps, LayerNormBackwardMatchesFiniteDifferences) {
  const ctl_norm_attrs attrs{CTL_NORM_ATTRS_STRUCT_SIZE, 1e-5};
  for (const bool with_weight : {true, false}) {
    SCOPED_TRACE(with_weight ? "with weight" : "without weight");
    const std::vector<int64_t> shape = with_weight ? std::vector<int64_t>{4, 6} : std::vector<int64_t>{2, 3, 5};
    const int64_t n = shape.back();
    const Array x = random_array(shape, 3), dy = random_array(shape, 4);
    // Without weight and bias, dweight and dbias are the gradients at weight 1, bias 0.
    const Array w = with_weight ? random_array({n}, 5, 0.5, 1.5) : filled({n}, 1.0);
    const Array b = with_weight ? random_array({n}, 6) : filled({n}, 0.0);
    auto forward = [&](const Array& xv, const Array& wv, const Array& bv, size_t outputs) {
      Tensor xt = upload(xv, Layout::kTransposed), wt = upload(wv), bt = upload(bv);
      return run(CTL_OP_LAYER_NORM, {xt.get(), wt.get(), bt.get()}, &attrs, outputs);
    };
    Tensor xt = upload(x, Layout::kTransposed), wt = upload(w);
    ctl_tensor* no_tensor = nullptr;
    const std::vector<Array> stats = with_weight ? forward(x, w, b, 3) : run(CTL_OP_LAYER_NORM, {xt.get()}, &attrs, 3);
    ASSERT_EQ(stats.size(), 3u);
    Tensor dyt = upload(dy, Layout::kStrided), mean = upload(stats[1]), rstd = upload(stats[2], Layout::kStrided);
    const std::vector<Array> grads =
        run(CTL_OP_LAYER_NORM_BACKWARD,
            {dyt.get(), xt.get(), mean.get(), rstd.get(), with_weight ? wt.get() : no_tensor}, nullptr, 3);
    ASSERT_EQ(grads.size(), 3u);
    EXPECT_EQ(grads[1].shape, std::vector<int64_t>{n});
    EXPECT_TRUE(matches_numeric(grads[0].v, x, [&](const Array& v) { return dot(forward(v, w, b, 1)[0], dy); }))
        << "dx";
    EXPECT_TRUE(matches_numeric(grads[1].v, w, [&](const Array& v) { return dot(forward(x, v, b, 1)[0], dy); }))
        << "dweight";
    EXPECT_TRUE(matches_numeric(grads[2].v, b, [&](const Array& v) { return dot(forward(x, w, v, 1)[0], dy); }))
        << "dbias";
    // dx alone: the optional outputs are not needed.
    const Array dx_only =
        run(CTL_OP_LAYER_NORM_BACKWARD,
            {dyt.get(), xt.get(), mean.get(), rstd.get(), with_weight ? wt.get() : no_tensor}, nullptr, 1)[0];
    EXPECT_EQ(dx_only.v, grads[0].v);
  }
}

TEST_F(BackwardOps, RmsNormBackwardMatchesFiniteDifferences) {
  const ctl_norm_attrs attrs{CTL_NORM_ATTRS_STRUCT_SIZE, 1e-5};
  const std::vector<int64_t> shape = {2, 3, 5};
  const Array x = random_array(shape, 7), dy = random_array(shape, 8), w = random_array({5}, 9, 0.5, 1.5);
  auto forward = [&](const Array& xv, const Array& wv, size_t outputs) {
    Tensor xt = upload(xv, Layout::kTransposed), wt = upload(wv, Layout::kStrided);
    return run(CTL_OP_RMS_NORM, {xt.get(), wt.get()}, &attrs, outputs);
  };
  const std::vector<Array> stats = forward(x, w, 2);
  ASSERT_EQ(stats.size(), 2u);
  Tensor dyt = upload(dy, Layout::kTransposed), xt = upload(x, Layout::kStrided), rstd = upload(stats[1]);
  Tensor wt = upload(w);
  const std::vector<Array> grads =
      run(CTL_OP_RMS_NORM_BACKWARD, {dyt.get(), xt.get(), rstd.get(), wt.get()}, nullptr, 2);
  ASSERT_EQ(grads.size(), 2u);
  EXPECT_TRUE(matches_numeric(grads[0].v, x, [&](const Array& v) { return dot(forward(v, w, 1)[0], dy); })) << "dx";
  EXPECT_TRUE(matches_numeric(grads[1].v, w, [&](const Array& v) { return dot(forward(x, v, 1)[0], dy); }))
      << "dweight";
}

// gelu backward is elementwise: dx = dy * gelu'(x), broadcast either way round.
TEST_F(BackwardOps, GeluBackwardMatchesFiniteDifferences) {
  struct Pair {
    ctl_op_id forward, backward;
  };
  const Pair pairs[] = {{CTL_OP_GELU, CTL_OP_GELU_BACKWARD}, {CTL_OP_GELU_TANH, CTL_OP_GELU_TANH_BACKWARD}};
  for (const Pair& pair : pairs) {
    for (const bool broadcast_x : {true, false}) {
      SCOPED_TRACE(std::string(ctl_op_name(pair.backward)) + (broadcast_x ? ", x broadcast" : ", dy broadcast"));
      const std::vector<int64_t> big = {3, 4}, small = {4};
      const Array dy = random_array(broadcast_x ? big : small, 10);
      Array x = random_array(broadcast_x ? small : big, 11, -4.0, 4.0);
      x.v[1] = 0.0;
      Tensor dyt = upload(dy, broadcast_x ? Layout::kTransposed : Layout::kStrided);
      Tensor xt = upload(x, broadcast_x ? Layout::kStrided : Layout::kTransposed);
      const Array dx = run(pair.backward, {dyt.get(), xt.get()}, nullptr, 1)[0];
      ASSERT_EQ(dx.shape, big);
      // gelu'(x) for every element of x at once: the op is elementwise.
      Array plus = x, minus = x;
      for (double& v : plus.v) v += kStep;
      for (double& v : minus.v) v -= kStep;
      Tensor plus_t = upload(plus), minus_t = upload(minus);
      const Array f_plus = run(pair.forward, {plus_t.get()}, nullptr, 1)[0];
      const Array f_minus = run(pair.forward, {minus_t.get()}, nullptr, 1)[0];
      ASSERT_EQ(f_plus.v.size(), x.v.size());
      for (size_t i = 0; i < 3; ++i) {
        for (size_t j = 0; j < 4; ++j) {
          const size_t xi = broadcast_x ? j : i * 4 + j, dyi = broadcast_x ? i * 4 + j : j;
          const double numeric = dy.v[dyi] * (f_plus.v[xi] - f_minus.v[xi]) / (2.0 * kStep);
          EXPECT_NEAR(dx.v[i * 4 + j], numeric, kTolerance * std::max(1.0, std::fabs(numeric)))
              << "element [" << i << ", " << j << "]";
        }
      }
    }
  }
}

// Far left of 0 both derivatives are tiny but far from 0: gelu'(-10) = -7.6e-22 (Phi(x) =
// 0.5 (1 + erf(x / sqrt 2)) lost its 7.6e-24 whole in double from x = -8.3), gelu_tanh'(-10)
// = -2.8e-36 (0.5 (1 + tanh z) and 1 - tanh^2 z were exactly 0 from x = -10). docs/ops.md's
// forms without cancellation keep them to a few roundings times x^2; huge x gives 1 or 0
// (no NaN from x^3 overflowing), x = +-inf NaN.
TEST_F(BackwardOps, GeluBackwardKeepsItsDigitsFarLeftOfZero) {
  const std::vector<double> xs = {-5.0, -8.3, -10.0, -12.0, -20.0, 1e200, -1e200, INFINITY, -INFINITY};
  auto exact = [](ctl_op_id op, long double x) -> long double {
    if (op == CTL_OP_GELU_BACKWARD) {
      return 0.5L * std::erfc(-x / std::sqrt(2.0L)) +
             x * std::exp(-0.5L * x * x) / std::sqrt(2 * 3.14159265358979323846264338327950288L);
    }
    const long double k = std::sqrt(2 / 3.14159265358979323846264338327950288L), c = 0.044715L;
    const long double z = k * (x + c * x * x * x);
    const long double e = std::exp(-2 * std::fabs(z)), r = 1 / (1 + e), s = z >= 0 ? r : e * r;
    return e == 0 ? s + (x - x) : s + 2 * k * x * (1 + 3 * c * x * x) * (e * r * r);
  };
  for (const ctl_op_id op : {CTL_OP_GELU_BACKWARD, CTL_OP_GELU_TANH_BACKWARD}) {
    SCOPED_TRACE(ctl_op_name(op));
    Array dy, x;
    dy.shape = x.shape = {static_cast<int64_t>(xs.size())};
    dy.v.assign(xs.size(), 1.0);
    x.v = xs;
    Tensor dyt = upload(dy), xt = upload(x);
    const Array dx = run(op, {dyt.get(), xt.get()}, nullptr, 1)[0];
    for (size_t i = 0; i < xs.size(); ++i) {
      const double e = static_cast<double>(exact(op, xs[i]));
      if (std::isnan(e)) {
        EXPECT_TRUE(std::isnan(dx.v[i])) << "x = " << xs[i] << ": " << dx.v[i];
      } else {
        EXPECT_NEAR(dx.v[i], e, 1e-11 * std::fabs(e)) << "x = " << xs[i];
      }
    }
    EXPECT_LT(dx.v[2], op == CTL_OP_GELU_BACKWARD ? -7e-22 : -2e-36);
  }
}

// The loss is sum(grad_loss * cross_entropy(logits)), grad_loss a scalar or one per row.
TEST_F(BackwardOps, CrossEntropyBackwardMatchesFiniteDifferences) {
  const ctl_reduction reductions[] = {CTL_REDUCTION_MEAN, CTL_REDUCTION_SUM, CTL_REDUCTION_NONE};
  for (const ctl_dtype target_dtype : {CTL_DTYPE_I64, CTL_DTYPE_I32}) {
    for (const ctl_reduction reduction : reductions) {
      SCOPED_TRACE("reduction " + std::to_string(static_cast<int>(reduction)) + ", target dtype " +
                   ctl_dtype_name(target_dtype));
      const std::vector<int64_t> shape = {5, 4}, rows = {5};
      const std::vector<int64_t> target = {2, 0, -100, 3, 1};  // row 2 is ignored
      const ctl_cross_entropy_attrs attrs{CTL_CROSS_ENTROPY_ATTRS_STRUCT_SIZE, reduction, -100, true};
      const Array logits = random_array(shape, 12, -3.0, 3.0);
      const Array grad_loss = reduction == CTL_REDUCTION_NONE ? random_array(rows, 13) : Array{{}, {0.7}};
      Tensor tt = upload_targets(target_dtype, rows, target);
      auto loss = [&](const Array& z) {
        Tensor zt = upload(z, Layout::kTransposed);
        return dot(run(CTL_OP_CROSS_ENTROPY, {zt.get(), tt.get()}, &attrs, 1)[0], grad_loss);
      };
      Tensor zt = upload(logits, Layout::kStrided), gt = upload(grad_loss);
      const Array grad = run(CTL_OP_CROSS_ENTROPY_BACKWARD, {zt.get(), tt.get(), gt.get()}, &attrs, 1)[0];
      ASSERT_EQ(grad.shape, shape);
      for (size_t k = 0; k < 4; ++k) EXPECT_EQ(grad.v[2 * 4 + k], 0.0) << "the ignored row";
      EXPECT_TRUE(matches_numeric(grad.v, logits, loss));
    }
  }
}

// cross_entropy == logsumexp(z) - z[target] per row (gather picks z[r, t] on the diagonal),
// then reduced over the rows that are not ignored.
TEST_F(BackwardOps, CrossEntropyMatchesLogsumexpMinusGather) {
  const std::vector<int64_t> shape = {6, 5}, rows = {6};
  const Array logits = random_array(shape, 14, -3.0, 3.0);
  const std::vector<int64_t> target = {4, 0, -1, 2, 1, 3};  // -1 is the ignore index below
  Tensor zt = upload(logits, Layout::kTransposed);
  Tensor tt = upload_targets(CTL_DTYPE_I64, rows, target);
  ctl_tensor* lse_raw = nullptr;
  const int64_t last = -1;
  CTL_ASSERT_OK(ctl_op_reduce(CTL_OP_LOGSUMEXP, zt.get(), 1, &last, false, &lse_raw));
  Tensor lse_t(lse_raw);
  const Array lse = download(lse_raw);
  std::vector<int64_t> clamped = target;
  for (int64_t& t : clamped) t = t < 0 ? 0 : t;
  Tensor index = upload_targets(CTL_DTYPE_I64, rows, clamped);
  const ctl_axis_attrs along_classes{CTL_AXIS_ATTRS_STRUCT_SIZE, 1};
  const Array picked = run(CTL_OP_GATHER, {zt.get(), index.get()}, &along_classes, 1)[0];  // [6, 6]
  ASSERT_EQ(picked.shape, (std::vector<int64_t>{6, 6}));
  Array per_row{rows, std::vector<double>(6)};
  double sum = 0.0;
  for (size_t r = 0; r < 6; ++r) {
    per_row.v[r] = target[r] == -1 ? 0.0 : lse.v[r] - picked.v[r * 6 + r];
    sum += per_row.v[r];
  }
  auto loss = [&](ctl_reduction reduction, ctl_tensor* targets, bool ignore) {
    const ctl_cross_entropy_attrs attrs{CTL_CROSS_ENTROPY_ATTRS_STRUCT_SIZE, reduction, -1, ignore};
    return run(CTL_OP_CROSS_ENTROPY, {zt.get(), targets}, &attrs, 1)[0];
  };
  expect_close(loss(CTL_REDUCTION_NONE, tt.get(), true), per_row, 1e-12, "none");
  expect_close(loss(CTL_REDUCTION_SUM, tt.get(), true), Array{{}, {sum}}, 1e-12, "sum");
  expect_close(loss(CTL_REDUCTION_MEAN, tt.get(), true), Array{{}, {sum / 5.0}}, 1e-12, "mean over 5 rows");
  // NULL attrs read as a zeroed struct: the mean over every row, nothing ignored.
  double sum_all = 0.0;
  for (size_t r = 0; r < 6; ++r) sum_all += lse.v[r] - picked.v[r * 6 + r];
  expect_close(run(CTL_OP_CROSS_ENTROPY, {zt.get(), index.get()}, nullptr, 1)[0], Array{{}, {sum_all / 6.0}}, 1e-12,
               "NULL attrs");

  // Not ignored when ignore_index_set is false: -1 is out of range, so NaN.
  Array unset = per_row;
  unset.v[2] = kNaN;
  expect_close(loss(CTL_REDUCTION_NONE, tt.get(), false), unset, 1e-12, "ignore_index not set");
  // Out of range above C too; the reduced loss is NaN.
  Tensor high = upload_targets(CTL_DTYPE_I64, rows, {4, 0, -1, 5, 1, 3});
  Array out_of_range = per_row;
  out_of_range.v[3] = kNaN;
  expect_close(loss(CTL_REDUCTION_NONE, high.get(), true), out_of_range, 1e-12, "target == C");
  expect_close(loss(CTL_REDUCTION_SUM, high.get(), true), Array{{}, {kNaN}}, 0, "sum with target == C");
  expect_close(loss(CTL_REDUCTION_MEAN, high.get(), true), Array{{}, {kNaN}}, 0, "mean with target == C");
  Tensor zt2 = upload(logits);
  const ctl_cross_entropy_attrs sum_attrs{CTL_CROSS_ENTROPY_ATTRS_STRUCT_SIZE, CTL_REDUCTION_SUM, -1, true};
  Tensor g = upload(Array{{}, {1.0}});
  const Array grad = run(CTL_OP_CROSS_ENTROPY_BACKWARD, {zt2.get(), high.get(), g.get()}, &sum_attrs, 1)[0];
  ASSERT_EQ(grad.v.size(), 30u);
  for (size_t k = 0; k < 5; ++k) {
    EXPECT_TRUE(std::isnan(grad.v[3 * 5 + k])) << "the out-of-range row's gradient is NaN";
    EXPECT_EQ(grad.v[2 * 5 + k], 0.0) << "the ignored row's gradient is 0";
    EXPECT_FALSE(std::isnan(grad.v[k]));
  }

  // Every row ignored: the sum is 0, the mean 0 / 0.
  Tensor all_ignored = upload_targets(CTL_DTYPE_I64, rows, std::vector<int64_t>(6, -1));
  expect_close(loss(CTL_REDUCTION_NONE, all_ignored.get(), true), Array{rows, std::vector<double>(6, 0.0)}, 0,
               "none, all ignored");
  expect_close(loss(CTL_REDUCTION_SUM, all_ignored.get(), true), Array{{}, {0.0}}, 0, "sum, all ignored");
  expect_close(loss(CTL_REDUCTION_MEAN, all_ignored.get(), true), Array{{}, {kNaN}}, 0, "mean, all ignored");
}

TEST_F(BackwardOps, CrossEntropyEdgeShapes) {
  // No rows: the sum is 0, the mean NaN, the per-row loss empty.
  Tensor empty_z = upload(Array{{0, 5}, {}});
  Tensor empty_t = upload_targets(CTL_DTYPE_I64, {0}, {});
  for (const ctl_reduction reduction : {CTL_REDUCTION_MEAN, CTL_REDUCTION_SUM, CTL_REDUCTION_NONE}) {
    const ctl_cross_entropy_attrs attrs{CTL_CROSS_ENTROPY_ATTRS_STRUCT_SIZE, reduction, 0, false};
    const Array got = run(CTL_OP_CROSS_ENTROPY, {empty_z.get(), empty_t.get()}, &attrs, 1)[0];
    const Array want = reduction == CTL_REDUCTION_NONE  ? Array{{0}, {}}
                       : reduction == CTL_REDUCTION_SUM ? Array{{}, {0.0}}
                                                        : Array{{}, {kNaN}};
    expect_close(got, want, 0, "no rows, reduction " + std::to_string(static_cast<int>(reduction)));
  }
  // No classes: a row that is not ignored has an out-of-range target.
  Tensor no_classes = upload(Array{{2, 0}, {}});
  Tensor targets = upload_targets(CTL_DTYPE_I32, {2}, {0, -100});
  const ctl_cross_entropy_attrs attrs{CTL_CROSS_ENTROPY_ATTRS_STRUCT_SIZE, CTL_REDUCTION_NONE, -100, true};
  expect_close(run(CTL_OP_CROSS_ENTROPY, {no_classes.get(), targets.get()}, &attrs, 1)[0], Array{{2}, {kNaN, 0.0}}, 0,
               "C == 0");
}

TEST_F(BackwardOps, AdamwStepMatchesTheUpdateForThreeSteps) {
  const std::vector<int64_t> shape = {2, 3};
  Array p = random_array(shape, 15), m = filled(shape, 0.0), v = filled(shape, 0.0);
  Tensor param = upload(p, Layout::kTransposed);  // outputs may be strided too
  Tensor exp_avg = upload(m), exp_avg_sq = upload(v, Layout::kStrided);
  ctl_adamw_attrs attrs{CTL_ADAMW_ATTRS_STRUCT_SIZE, 1e-2, 0.9, 0.999, 1e-8, 0.1, 0};
  for (uint64_t step = 1; step <= 3; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    attrs.step = step;
    const Array g = random_array(shape, 100 + step);
    Tensor grad = upload(g, Layout::kStrided);
    ctl_tensor* in[] = {grad.get()};
    ctl_tensor* out[] = {param.get(), exp_avg.get(), exp_avg_sq.get()};
    CTL_ASSERT_OK(ctl_op_run_into(CTL_OP_ADAMW_STEP, 1, in, &attrs, 3, out));
    const double c1 = 1.0 - std::pow(attrs.beta1, static_cast<double>(step));
    const double c2 = 1.0 - std::pow(attrs.beta2, static_cast<double>(step));
    for (size_t i = 0; i < p.v.size(); ++i) {
      p.v[i] -= attrs.lr * attrs.weight_decay * p.v[i];
      m.v[i] = attrs.beta1 * m.v[i] + (1.0 - attrs.beta1) * g.v[i];
      v.v[i] = attrs.beta2 * v.v[i] + (1.0 - attrs.beta2) * g.v[i] * g.v[i];
      p.v[i] -= attrs.lr * (m.v[i] / c1) / (std::sqrt(v.v[i] / c2) + attrs.eps);
    }
    expect_close(download(param.get()), p, 1e-14, "param");
    expect_close(download(exp_avg.get()), m, 1e-14, "exp_avg");
    expect_close(download(exp_avg_sq.get()), v, 1e-14, "exp_avg_sq");
  }
}

TEST_F(BackwardOps, SgdStepMatchesTheUpdateForThreeSteps) {
  const std::vector<int64_t> shape = {2, 3};
  struct Variant {
    const char* name;
    double momentum, dampening, weight_decay;
    bool nesterov;
  };
  const Variant variants[] = {{"momentum", 0.9, 0, 0, false},
                              {"dampening and weight decay", 0.9, 0.25, 0.01, false},
                              {"nesterov", 0.5, 0, 0.1, true},
                              {"no momentum (no buffer)", 0, 0, 0.01, false}};
  for (const Variant& variant : variants) {
    SCOPED_TRACE(variant.name);
    Array p = random_array(shape, 31), b = filled(shape, 0.0);
    Tensor param = upload(p, Layout::kTransposed);  // outputs may be strided too
    Tensor buffer = upload(b, Layout::kStrided);
    const ctl_sgd_attrs attrs{
        CTL_SGD_ATTRS_STRUCT_SIZE, 0.05, variant.momentum, variant.dampening, variant.weight_decay, variant.nesterov};
    for (int step = 1; step <= 3; ++step) {
      SCOPED_TRACE("step " + std::to_string(step));
      const Array g = random_array(shape, 200 + static_cast<uint64_t>(step));
      Tensor grad = upload(g, Layout::kStrided);
      ctl_tensor* in[] = {grad.get()};
      ctl_tensor* out[] = {param.get(), attrs.momentum != 0 ? buffer.get() : nullptr};
      CTL_ASSERT_OK(ctl_op_run_into(CTL_OP_SGD_STEP, 1, in, &attrs, 2, out));
      for (size_t i = 0; i < p.v.size(); ++i) {
        const double gi = g.v[i] + attrs.weight_decay * p.v[i];
        double d = gi;
        if (attrs.momentum != 0) {
          b.v[i] = attrs.momentum * b.v[i] + (1 - attrs.dampening) * gi;
          d = attrs.nesterov ? gi + attrs.momentum * b.v[i] : b.v[i];
        }
        p.v[i] -= attrs.lr * d;
      }
      expect_close(download(param.get()), p, 1e-14, "param");
      expect_close(download(buffer.get()), b, 1e-14, "momentum_buf");  // stays 0 without momentum
    }
  }
}

// Every refused sgd_step names what is wrong and leaves param and the buffer as they were.
TEST_F(BackwardOps, SgdStepBadCallsChangeNothing) {
  const std::vector<int64_t> shape = {2, 3};
  const Array p0 = random_array(shape, 32), b0 = random_array(shape, 33);
  Tensor grad = upload(random_array(shape, 34)), param = upload(p0), buffer = upload(b0);
  ctl_tensor* in[] = {grad.get()};
  ctl_tensor* out[] = {param.get(), buffer.get()};
  ctl_tensor* no_buffer[] = {param.get(), nullptr};
  const ctl_sgd_attrs good{CTL_SGD_ATTRS_STRUCT_SIZE, 0.1, 0.9, 0, 0, false};

  ctl_tensor* fresh[2] = {};
  expect_invalid(ctl_op_run(CTL_OP_SGD_STEP, 1, in, &good, 2, fresh), "ctl_op_run_into");
  for (ctl_tensor* t : fresh) EXPECT_EQ(t, nullptr);
  expect_invalid(ctl_op_run_into(CTL_OP_SGD_STEP, 1, in, nullptr, 2, out), "attrs");
  expect_invalid(ctl_op_run_into(CTL_OP_SGD_STEP, 1, in, &good, 2, no_buffer), "momentum_buf");
  ctl_sgd_attrs a = good;
  a.momentum = 0;
  expect_invalid(ctl_op_run_into(CTL_OP_SGD_STEP, 1, in, &a, 2, out), "must be NULL");
  a = good;
  a.momentum = -0.5;
  expect_invalid(ctl_op_run_into(CTL_OP_SGD_STEP, 1, in, &a, 2, out), "momentum");
  a = good;
  a.lr = std::nan("");
  expect_invalid(ctl_op_run_into(CTL_OP_SGD_STEP, 1, in, &a, 2, out), "finite");
  a = good;
  a.dampening = 1.5;
  expect_invalid(ctl_op_run_into(CTL_OP_SGD_STEP, 1, in, &a, 2, out), "dampening");
  a = good;
  a.nesterov = true;
  a.dampening = 0.1;
  expect_invalid(ctl_op_run_into(CTL_OP_SGD_STEP, 1, in, &a, 2, out), "Nesterov");
  Tensor wrong_shape = upload(filled({3, 2}, 0.0));
  ctl_tensor* mismatched[] = {param.get(), wrong_shape.get()};
  expect_invalid(ctl_op_run_into(CTL_OP_SGD_STEP, 1, in, &good, 2, mismatched), "shape");
  EXPECT_EQ(download(param.get()).v, p0.v) << "a refused step changed param";
  EXPECT_EQ(download(buffer.get()).v, b0.v) << "a refused step changed the buffer";
}

// Strided outputs (ctl_op_run_into) get the same values as fresh contiguous ones, and the
// elements between them are left alone.
TEST_F(BackwardOps, StridedOutputsMatchFreshOnes) {
  const std::vector<int64_t> shape = {3, 4}, rows = {3}, features = {4};
  const Array a = random_array(shape, 21, 0.1, 1.0), b = random_array(shape, 22);
  Tensor at = upload(a, Layout::kTransposed), bt = upload(b);
  Tensor mean = upload(random_array(rows, 23)), rstd = upload(random_array(rows, 24, 0.5, 1.5));
  Tensor weight = upload(random_array(features, 25)), x_small = upload(random_array(features, 26));
  Tensor target = upload_targets(CTL_DTYPE_I64, rows, {3, -100, 0});
  Tensor per_row = upload(random_array(rows, 27));
  const ctl_cross_entropy_attrs none{CTL_CROSS_ENTROPY_ATTRS_STRUCT_SIZE, CTL_REDUCTION_NONE, -100, true};
  struct Case {
    ctl_op_id op;
    std::vector<ctl_tensor*> inputs;
    const void* attrs;
    std::vector<std::vector<int64_t>> outputs;
  };
  const Case cases[] = {
      {CTL_OP_SOFTMAX_BACKWARD, {at.get(), bt.get()}, nullptr, {shape}},
      {CTL_OP_LOG_SOFTMAX_BACKWARD, {at.get(), bt.get()}, nullptr, {shape}},
      {CTL_OP_LAYER_NORM_BACKWARD,
       {bt.get(), at.get(), mean.get(), rstd.get(), weight.get()},
       nullptr,
       {shape, features, features}},
      {CTL_OP_RMS_NORM_BACKWARD, {bt.get(), at.get(), rstd.get(), weight.get()}, nullptr, {shape, features}},
      {CTL_OP_GELU_BACKWARD, {bt.get(), x_small.get()}, nullptr, {shape}},
      {CTL_OP_GELU_TANH_BACKWARD, {x_small.get(), at.get()}, nullptr, {shape}},
      {CTL_OP_CROSS_ENTROPY, {at.get(), target.get()}, &none, {rows}},
      {CTL_OP_CROSS_ENTROPY_BACKWARD, {at.get(), target.get(), per_row.get()}, &none, {shape}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(ctl_op_name(c.op));
    const std::vector<Array> fresh = run(c.op, c.inputs, c.attrs, c.outputs.size());
    const std::vector<Array> strided = run_into_strided(c.op, c.inputs, c.attrs, c.outputs);
    for (size_t i = 0; i < c.outputs.size(); ++i) {
      EXPECT_EQ(strided[i].shape, c.outputs[i]) << "outputs[" << i << "]";
      EXPECT_EQ(strided[i].v, fresh[i].v) << "outputs[" << i << "]";
    }
  }
}

// conv2d on a hand-computed example: x = 1..9 (1x1x3x3), w = [[1, 2], [3, 4]] (1x1x2x2).
TEST_F(BackwardOps, Conv2dMatchesAHandComputedExample) {
  const Array x{{1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}};
  const Array w{{1, 1, 2, 2}, {1, 2, 3, 4}};
  Tensor xt = upload(x, Layout::kTransposed), wt = upload(w, Layout::kStrided), bt = upload(Array{{1}, {10.0}});
  // NULL attrs: stride 1, no padding. y[0, 0] = 1*1 + 2*2 + 4*3 + 5*4.
  expect_close(run(CTL_OP_CONV2D, {xt.get(), wt.get()}, nullptr, 1)[0], Array{{1, 1, 2, 2}, {37, 47, 67, 77}}, 0,
               "plain");
  // Stride 2, padding 1, bias 10: each window holds the kernel's bottom-right part at the edge.
  const ctl_conv2d_attrs attrs{CTL_CONV2D_ATTRS_STRUCT_SIZE, {2, 2}, {1, 1}, {0, 0}, 0};
  expect_close(run(CTL_OP_CONV2D, {xt.get(), wt.get(), bt.get()}, &attrs, 1)[0],
               Array{{1, 1, 2, 2}, {10 + 4, 10 + 2 * 3 + 3 * 4, 10 + 4 * 2 + 7 * 4, 10 + 77}}, 0,
               "stride 2, padding 1");
  // Dilation 2 on a 3x3 input: one output, the corners times the kernel.
  const ctl_conv2d_attrs dilated{CTL_CONV2D_ATTRS_STRUCT_SIZE, {1, 1}, {0, 0}, {2, 2}, 1};
  expect_close(run(CTL_OP_CONV2D, {xt.get(), wt.get()}, &dilated, 1)[0],
               Array{{1, 1, 1, 1}, {1 * 1 + 3 * 2 + 7 * 3 + 9 * 4}}, 0, "dilation 2");
}

// The loss is sum(dy * conv2d(x, w, b)); dx and dweight against its central differences.
TEST_F(BackwardOps, Conv2dBackwardMatchesFiniteDifferences) {
  struct Case {
    const char* name;
    std::vector<int64_t> x_shape, w_shape;
    ctl_conv2d_attrs attrs;
  };
  const Case cases[] = {
      {"plain", {2, 3, 5, 4}, {4, 3, 3, 2}, {CTL_CONV2D_ATTRS_STRUCT_SIZE, {0, 0}, {0, 0}, {0, 0}, 0}},
      {"stride 2, padding 1, dilation 2, groups 2",
       {2, 4, 7, 6},
       {6, 2, 3, 2},
       {CTL_CONV2D_ATTRS_STRUCT_SIZE, {2, 2}, {1, 1}, {2, 2}, 2}},
      {"per-axis attrs", {1, 2, 6, 7}, {3, 2, 2, 3}, {CTL_CONV2D_ATTRS_STRUCT_SIZE, {1, 2}, {0, 1}, {2, 1}, 1}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Array x = random_array(c.x_shape, 31), w = random_array(c.w_shape, 32), b = random_array({c.w_shape[0]}, 33);
    auto forward = [&](const Array& xv, const Array& wv) {
      Tensor xt = upload(xv, Layout::kTransposed), wt = upload(wv, Layout::kStrided), bt = upload(b, Layout::kStrided);
      return run(CTL_OP_CONV2D, {xt.get(), wt.get(), bt.get()}, &c.attrs, 1)[0];
    };
    const Array y = forward(x, w);
    ASSERT_EQ(y.shape.size(), 4u);
    const Array dy = random_array(y.shape, 34);
    Tensor dyt = upload(dy, Layout::kStrided), xt = upload(x, Layout::kTransposed), wt = upload(w, Layout::kTransposed);
    const Array dx = run(CTL_OP_CONV2D_BACKWARD_INPUT, {dyt.get(), xt.get(), wt.get()}, &c.attrs, 1)[0];
    const Array dw = run(CTL_OP_CONV2D_BACKWARD_WEIGHT, {dyt.get(), xt.get(), wt.get()}, &c.attrs, 1)[0];
    EXPECT_EQ(dx.shape, c.x_shape);
    EXPECT_EQ(dw.shape, c.w_shape);
    EXPECT_TRUE(matches_numeric(dx.v, x, [&](const Array& v) { return dot(forward(v, w), dy); })) << "dx";
    EXPECT_TRUE(matches_numeric(dw.v, w, [&](const Array& v) { return dot(forward(x, v), dy); })) << "dweight";
  }
}

// Distinct values 0.05 apart (so a finite-difference step never changes a window's maximum),
// in a scrambled order.
Array distinct_array(std::vector<int64_t> shape, uint64_t seed) {
  Array a = filled(std::move(shape), 0.0);
  for (size_t i = 0; i < a.v.size(); ++i) a.v[i] = 0.05 * static_cast<double>(i) - 2.0;
  std::shuffle(a.v.begin(), a.v.end(), std::mt19937_64(seed));
  return a;
}

// Overlapping windows (stride 1) with padding 1; the loss is sum(dy * pool(x)).
TEST_F(BackwardOps, PoolBackwardMatchesFiniteDifferences) {
  struct Pair {
    ctl_op_id forward, backward;
  };
  const Pair pairs[] = {{CTL_OP_MAX_POOL2D, CTL_OP_MAX_POOL2D_BACKWARD},
                        {CTL_OP_AVG_POOL2D, CTL_OP_AVG_POOL2D_BACKWARD}};
  const std::vector<int64_t> shape = {2, 3, 5, 6};
  const Array x = distinct_array(shape, 35);
  for (const Pair& pair : pairs) {
    for (const bool exclude : {false, true}) {
      SCOPED_TRACE(std::string(ctl_op_name(pair.backward)) + (exclude ? ", exclude_padding" : ""));
      const ctl_pool2d_attrs attrs{CTL_POOL2D_ATTRS_STRUCT_SIZE, {3, 2}, {1, 1}, {1, 1}, exclude};
      auto forward = [&](const Array& xv) {
        Tensor t = upload(xv, Layout::kTransposed);
        return run(pair.forward, {t.get()}, &attrs, 1)[0];
      };
      const Array y = forward(x);
      ASSERT_EQ(y.shape, (std::vector<int64_t>{2, 3, 5, 7}));
      const Array dy = random_array(y.shape, 36);
      Tensor dyt = upload(dy, Layout::kTransposed), xt = upload(x, Layout::kStrided);
      const Array dx = run(pair.backward, {dyt.get(), xt.get()}, &attrs, 1)[0];
      EXPECT_EQ(dx.shape, shape);
      EXPECT_TRUE(matches_numeric(dx.v, x, [&](const Array& v) { return dot(forward(v), dy); }));
    }
  }
}

// Pooling by hand on x = 1..9 (1x1x3x3) with 2x2 windows, stride 1, padding 1 (4x4 outputs).
TEST_F(BackwardOps, PoolMatchesAHandComputedExample) {
  Array x{{1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}};
  const std::vector<int64_t> y_shape = {1, 1, 4, 4};
  ctl_pool2d_attrs attrs{CTL_POOL2D_ATTRS_STRUCT_SIZE, {2, 2}, {1, 1}, {1, 1}, false};
  Tensor xt = upload(x, Layout::kStrided);
  expect_close(run(CTL_OP_MAX_POOL2D, {xt.get()}, &attrs, 1)[0],
               Array{y_shape, {1, 2, 3, 3, 4, 5, 6, 6, 7, 8, 9, 9, 7, 8, 9, 9}}, 0, "max");
  const double q = 0.25;
  expect_close(run(CTL_OP_AVG_POOL2D, {xt.get()}, &attrs, 1)[0],
               Array{y_shape,
                     {1 * q, 3 * q, 5 * q, 3 * q, 5 * q, 12 * q, 16 * q, 9 * q, 11 * q, 24 * q, 28 * q, 15 * q, 7 * q,
                      15 * q, 17 * q, 9 * q}},
               1e-15, "avg over the window");
  attrs.exclude_padding = true;
  expect_close(run(CTL_OP_AVG_POOL2D, {xt.get()}, &attrs, 1)[0],
               Array{y_shape, {1, 1.5, 2.5, 3, 2.5, 3, 4, 4.5, 5.5, 6, 7, 7.5, 7, 7.5, 8.5, 9}}, 1e-15,
               "avg over the elements inside");
  // stride 0 means the kernel: 2x2 windows at stride 2 with padding 1 over 3x3 give 2x2.
  attrs.stride[0] = attrs.stride[1] = 0;
  expect_close(run(CTL_OP_AVG_POOL2D, {xt.get()}, &attrs, 1)[0], Array{{1, 1, 2, 2}, {1, 2.5, 5.5, 7}}, 1e-15,
               "stride 0");

  // Ties: each dy goes to the first maximum of its window, row-major; a NaN is the maximum.
  attrs = ctl_pool2d_attrs{CTL_POOL2D_ATTRS_STRUCT_SIZE, {2, 2}, {1, 1}, {0, 0}, false};
  Tensor ties = upload(Array{{1, 1, 2, 3}, {5, 5, 1, 5, 5, 1}});
  Tensor dy = upload(Array{{1, 1, 1, 2}, {1.0, 10.0}});
  expect_close(run(CTL_OP_MAX_POOL2D_BACKWARD, {dy.get(), ties.get()}, &attrs, 1)[0],
               Array{{1, 1, 2, 3}, {1, 10, 0, 0, 0, 0}}, 0, "ties");
  Tensor with_nan = upload(Array{{1, 1, 2, 3}, {5, 6, 1, kNaN, 7, kNaN}});
  expect_close(run(CTL_OP_MAX_POOL2D, {with_nan.get()}, &attrs, 1)[0], Array{{1, 1, 1, 2}, {kNaN, kNaN}}, 0, "NaN");
  expect_close(run(CTL_OP_MAX_POOL2D_BACKWARD, {dy.get(), with_nan.get()}, &attrs, 1)[0],
               Array{{1, 1, 2, 3}, {0, 0, 0, 1, 0, 10}}, 0, "NaN backward");
}

// Strided outputs of the convolution and pooling ops get the values fresh ones get.
TEST_F(BackwardOps, ConvPoolStridedOutputsMatchFreshOnes) {
  const std::vector<int64_t> x_shape = {2, 4, 5, 6}, w_shape = {2, 2, 3, 3};
  const ctl_conv2d_attrs conv{CTL_CONV2D_ATTRS_STRUCT_SIZE, {2, 1}, {1, 1}, {1, 2}, 2};
  const std::vector<int64_t> y_shape = {2, 2, 3, 4};  // (5 + 2 - 3) / 2 + 1, (6 + 2 - 5) / 1 + 1
  const ctl_pool2d_attrs pool{CTL_POOL2D_ATTRS_STRUCT_SIZE, {3, 3}, {2, 1}, {1, 1}, true};
  const std::vector<int64_t> p_shape = {2, 4, 3, 6};
  Tensor x = upload(distinct_array(x_shape, 41), Layout::kTransposed), w = upload(random_array(w_shape, 42));
  Tensor b = upload(random_array({2}, 43)), dy = upload(random_array(y_shape, 44), Layout::kStrided);
  Tensor pdy = upload(random_array(p_shape, 45), Layout::kTransposed);
  struct Case {
    ctl_op_id op;
    std::vector<ctl_tensor*> inputs;
    const void* attrs;
    std::vector<int64_t> output;
  };
  const Case cases[] = {
      {CTL_OP_CONV2D, {x.get(), w.get(), b.get()}, &conv, y_shape},
      {CTL_OP_CONV2D_BACKWARD_INPUT, {dy.get(), x.get(), w.get()}, &conv, x_shape},
      {CTL_OP_CONV2D_BACKWARD_WEIGHT, {dy.get(), x.get(), w.get()}, &conv, w_shape},
      {CTL_OP_MAX_POOL2D, {x.get()}, &pool, p_shape},
      {CTL_OP_MAX_POOL2D_BACKWARD, {pdy.get(), x.get()}, &pool, x_shape},
      {CTL_OP_AVG_POOL2D, {x.get()}, &pool, p_shape},
      {CTL_OP_AVG_POOL2D_BACKWARD, {pdy.get(), x.get()}, &pool, x_shape},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(ctl_op_name(c.op));
    const std::vector<Array> fresh = run(c.op, c.inputs, c.attrs, 1);
    const std::vector<Array> strided = run_into_strided(c.op, c.inputs, c.attrs, {c.output});
    EXPECT_EQ(fresh[0].shape, c.output);
    EXPECT_EQ(strided[0].shape, c.output);
    EXPECT_EQ(strided[0].v, fresh[0].v);
  }
}

// The gradient check is only worth something if it fails on a wrong gradient: a 1e-3 error
// in one element, and the right gradient of a different function (rms_norm's dx against
// layer_norm's finite differences).
TEST_F(BackwardOps, GradientCheckCatchesAWrongGradient) {
  const ctl_norm_attrs attrs{CTL_NORM_ATTRS_STRUCT_SIZE, 1e-5};
  const Array x = random_array({3, 4}, 16), dy = random_array({3, 4}, 17);
  auto layer_norm_loss = [&](const Array& xv) {
    Tensor t = upload(xv);
    return dot(run(CTL_OP_LAYER_NORM, {t.get()}, &attrs, 1)[0], dy);
  };
  Tensor xt = upload(x), dyt = upload(dy);
  const std::vector<Array> ln = run(CTL_OP_LAYER_NORM, {xt.get()}, &attrs, 3);
  const std::vector<Array> rms = run(CTL_OP_RMS_NORM, {xt.get()}, &attrs, 2);
  ASSERT_EQ(ln.size(), 3u);
  ASSERT_EQ(rms.size(), 2u);
  Tensor mean = upload(ln[1]), rstd = upload(ln[2]), rms_rstd = upload(rms[1]);
  Array dx = run(CTL_OP_LAYER_NORM_BACKWARD, {dyt.get(), xt.get(), mean.get(), rstd.get()}, nullptr, 1)[0];
  ASSERT_TRUE(matches_numeric(dx.v, x, layer_norm_loss));
  dx.v[5] += 1e-3;
  EXPECT_FALSE(matches_numeric(dx.v, x, layer_norm_loss)) << "a 1e-3 error went unnoticed";
  const Array rms_dx = run(CTL_OP_RMS_NORM_BACKWARD, {dyt.get(), xt.get(), rms_rstd.get()}, nullptr, 1)[0];
  EXPECT_FALSE(matches_numeric(rms_dx.v, x, layer_norm_loss)) << "rms_norm's gradient passed for layer_norm's";
}

TEST_F(BackwardOps, BadCallsAreRefused) {
  const std::vector<int64_t> shape = {2, 3};
  const Array p0 = random_array(shape, 18);
  Tensor grad = upload(random_array(shape, 19)), param = upload(p0);
  Tensor exp_avg = upload(filled(shape, 0.0)), exp_avg_sq = upload(filled(shape, 0.0));
  ctl_tensor* in[] = {grad.get()};
  ctl_tensor* out[] = {param.get(), exp_avg.get(), exp_avg_sq.get()};
  ctl_adamw_attrs attrs{CTL_ADAMW_ATTRS_STRUCT_SIZE, 1e-2, 0.9, 0.999, 1e-8, 0.1, 1};

  // adamw_step updates its state in place: ctl_op_run has nothing to update.
  ctl_tensor* fresh[3] = {};
  expect_invalid(ctl_op_run(CTL_OP_ADAMW_STEP, 1, in, &attrs, 3, fresh), "ctl_op_run_into");
  for (ctl_tensor* t : fresh) EXPECT_EQ(t, nullptr);
  attrs.step = 0;
  expect_invalid(ctl_op_run_into(CTL_OP_ADAMW_STEP, 1, in, &attrs, 3, out), "step");
  expect_invalid(ctl_op_run_into(CTL_OP_ADAMW_STEP, 1, in, nullptr, 3, out), "attrs");
  attrs.step = 1;
  attrs.beta1 = 1.0;
  expect_invalid(ctl_op_run_into(CTL_OP_ADAMW_STEP, 1, in, &attrs, 3, out), "beta1");
  EXPECT_EQ(download(param.get()).v, p0.v) << "a refused step changed param";

  // Class ids are integers.
  Tensor logits = upload(random_array(shape, 20));
  Tensor f32_target = from_vector(device_, CTL_DTYPE_F32, {2}, std::vector<float>{0.0f, 1.0f});
  const ctl_cross_entropy_attrs ce{CTL_CROSS_ENTROPY_ATTRS_STRUCT_SIZE, CTL_REDUCTION_MEAN, 0, false};
  ctl_tensor* loss = nullptr;
  ctl_tensor* ce_in[] = {logits.get(), f32_target.get()};
  expect_invalid(ctl_op_run(CTL_OP_CROSS_ENTROPY, 2, ce_in, &ce, 1, &loss), "target");
  EXPECT_EQ(loss, nullptr);
  // grad_loss of a mean is a scalar.
  Tensor target = upload_targets(CTL_DTYPE_I64, {2}, {0, 1}), per_row = upload(filled({2}, 1.0));
  ctl_tensor* ceb_in[] = {logits.get(), target.get(), per_row.get()};
  ctl_tensor* grad_logits = nullptr;
  expect_invalid(ctl_op_run(CTL_OP_CROSS_ENTROPY_BACKWARD, 3, ceb_in, &ce, 1, &grad_logits), "grad_loss");
  EXPECT_EQ(grad_logits, nullptr);
  // layer_norm_backward's statistics are x.shape[:-1].
  Tensor wrong_stats = upload(filled({3}, 1.0));
  ctl_tensor* lnb_in[] = {logits.get(), logits.get(), wrong_stats.get(), wrong_stats.get()};
  ctl_tensor* dx = nullptr;
  expect_invalid(ctl_op_run(CTL_OP_LAYER_NORM_BACKWARD, 4, lnb_in, nullptr, 1, &dx), "mean");
  EXPECT_EQ(dx, nullptr);
}

}  // namespace
