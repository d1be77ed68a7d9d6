// cpu_gemm_test.cpp — the CPU plugin's float GEMM (plugins/cpu/gemm/matmul.cpp and its
// micro-kernels) against a plain double-precision product computed here, on the shapes
// that stress tiling: M, N, K that are not multiples of any tile or block, K = 1, N = 1,
// M = 1, more depth than one packed block, more columns than one B block, transposed and
// broadcast-batch operands, alpha, beta with a bias of each layout and each activation.
// CTest runs this binary once per instruction-set path (CATALYST_CPU_ISA), so every
// kernel the machine can run is checked; each case runs with 1 and 3 threads, and twice
// per thread count, and its results must be the same bits every time.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "test_support.hpp"

using namespace ctltest;

namespace {

enum class Bias { kNone, kRow, kColumn, kFull };

struct Shape {
  int64_t m, n, k;
};

struct Variant {
  const char* name;
  bool transpose_a, transpose_b;
  int64_t batch;       // out's batch size (0: rank-2 output)
  bool broadcast_a;    // a has no batch axis and is shared by every product
  bool attrs_flags;    // transpose through ctl_matmul_attrs instead of a transposed view
  double alpha, beta;  // beta needs run_into
  Bias bias;
  ctl_activation activation;
};

// 12 x 32 is the AVX-512 tile, 6 x 16 the AVX2 one, 4 x 8 the baseline one; the packed
// B blocks are 256 deep and 1024 wide, A blocks 1536 rows, and row-major A is read in
// place up to N = 512.
const Shape kShapes[] = {
    {1, 1, 1},      {13, 1, 7},    {1, 33, 19},    {7, 5, 1},    {25, 47, 3},
    {12, 32, 64},   {3, 20, 2},    {35, 57, 40},   {13, 33, 65}, {37, 129, 257},
    {100, 70, 300}, {400, 40, 30}, {30, 1030, 20}, {5, 4100, 3}, {1601, 33, 9},
};

const Variant kVariants[] = {
    {"plain", false, false, 0, false, false, 1.0, 0.0, Bias::kNone, CTL_ACTIVATION_NONE},
    {"a^T", true, false, 0, false, false, 1.0, 0.0, Bias::kNone, CTL_ACTIVATION_NONE},
    {"b^T", false, true, 0, false, false, 1.0, 0.0, Bias::kNone, CTL_ACTIVATION_NONE},
    {"a^T b^T via attrs", true, true, 0, false, true, 1.0, 0.0, Bias::kNone, CTL_ACTIVATION_NONE},
    {"batch 3, shared a", false, false, 3, true, false, 1.0, 0.0, Bias::kNone, CTL_ACTIVATION_NONE},
    {"batch 2, b^T, alpha", false, true, 2, false, false, -1.5, 0.0, Bias::kRow, CTL_ACTIVATION_NONE},
    {"beta, row bias, relu", false, false, 0, false, false, 1.0, 0.5, Bias::kRow, CTL_ACTIVATION_RELU},
    {"beta, column bias, gelu", true, false, 0, false, false, 0.75, -1.0, Bias::kColumn, CTL_ACTIVATION_GELU},
    {"batch 2, beta, full bias, gelu_tanh", false, false, 2, false, false, 1.0, 2.0, Bias::kFull,
     CTL_ACTIVATION_GELU_TANH},
    {"relu, no bias", false, true, 0, false, false, 1.0, 0.0, Bias::kNone, CTL_ACTIVATION_RELU},
};

double activate(double v, ctl_activation activation) {
  switch (activation) {
    case CTL_ACTIVATION_RELU:
      return v > 0 ? v : 0.0;
    case CTL_ACTIVATION_GELU:
      return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    case CTL_ACTIVATION_GELU_TANH:
      return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
    default:
      return v;
  }
}

// A tensor built from `values` (row-major over `shape`), or its last two axes swapped as a
// view when `transposed` (the storage then has them the other way round).
template <class T>
Tensor make_operand(ctl_device* device, ctl_dtype dtype, std::vector<int64_t> shape, const std::vector<double>& values,
                    bool transposed) {
  const size_t rank = shape.size();
  std::vector<int64_t> stored = shape;
  if (transposed) std::swap(stored[rank - 1], stored[rank - 2]);
  const int64_t rows = shape[rank - 2], cols = shape[rank - 1];
  std::vector<T> data(values.size());
  for (size_t index = 0; index < values.size(); ++index) {
    const int64_t matrix = static_cast<int64_t>(index) / (rows * cols),
                  rest = static_cast<int64_t>(index) % (rows * cols);
    const int64_t i = rest / cols, j = rest % cols;
    const int64_t at = transposed ? matrix * rows * cols + j * rows + i : static_cast<int64_t>(index);
    data[at] = static_cast<T>(values[index]);
  }
  Tensor base = from_vector<T>(device, dtype, stored, data);
  if (!transposed) return base;
  ctl_tensor* view = nullptr;
  Status s(ctl_tensor_transpose(base.get(), -1, -2, &view));
  EXPECT_EQ(s, nullptr) << describe(s.get());
  return Tensor(view);
}

std::vector<double> random_values(size_t count, std::mt19937* rng) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> v(count);
  for (double& x : v) x = dist(*rng);
  return v;
}

struct Result {
  std::vector<double> values;
  std::string error;
};

// Runs one case on a fresh runtime with `threads` CPU threads and returns out as doubles.
template <class T>
Result run_case(ctl_dtype dtype, const Shape& s, const Variant& v, unsigned threads, const std::vector<double>& a,
                const std::vector<double>& b, const std::vector<double>& c0, const std::vector<double>& bias,
                std::vector<double>* second_run) {
  setenv("CATALYST_CPU_THREADS", std::to_string(threads).c_str(), 1);
  std::vector<const char*> paths = {CTL_TEST_CPU_PLUGIN};
  const ctl_runtime_options opts = options(&paths);
  ctl_runtime* raw = nullptr;
  Status created(ctl_runtime_create(&opts, &raw));
  if (created) return {{}, describe(created.get())};
  Runtime runtime(raw);
  ctl_device* device = find_device(runtime.get(), "cpu");
  if (!device) return {{}, "no cpu device"};

  const int64_t batch = v.batch;
  auto with_batch = [&](std::vector<int64_t> shape, bool shared) {
    if (batch > 0 && !shared) shape.insert(shape.begin(), batch);
    return shape;
  };
  // Operands as the op sees them: a is (batch?, M, K), b is (batch?, K, N). With the attrs
  // flags the core receives them stored transposed and swaps them itself.
  std::vector<int64_t> a_shape = with_batch({s.m, s.k}, v.broadcast_a);
  std::vector<int64_t> b_shape = with_batch({s.k, s.n}, false);
  Tensor ta, tb;
  if (v.attrs_flags) {
    // Storage (.., K, M) and (.., N, K), passed as they are.
    auto swapped = [](std::vector<int64_t> shape, const std::vector<double>& values) {
      const size_t r = shape.size();
      const int64_t rows = shape[r - 2], cols = shape[r - 1];
      std::vector<double> out(values.size());
      for (size_t index = 0; index < values.size(); ++index) {
        const int64_t matrix = static_cast<int64_t>(index) / (rows * cols);
        const int64_t rest = static_cast<int64_t>(index) % (rows * cols);
        out[matrix * rows * cols + (rest % cols) * rows + rest / cols] = values[index];
      }
      std::swap(shape[r - 1], shape[r - 2]);
      return std::make_pair(shape, out);
    };
    auto [as, av] = swapped(a_shape, a);
    auto [bs, bv] = swapped(b_shape, b);
    ta = make_operand<T>(device, dtype, as, av, false);
    tb = make_operand<T>(device, dtype, bs, bv, false);
  } else {
    ta = make_operand<T>(device, dtype, a_shape, a, v.transpose_a);
    tb = make_operand<T>(device, dtype, b_shape, b, v.transpose_b);
  }
  Tensor tbias;
  if (v.bias == Bias::kRow) tbias = make_operand<T>(device, dtype, {1, s.n}, bias, false);
  if (v.bias == Bias::kColumn) tbias = make_operand<T>(device, dtype, {s.m, 1}, bias, false);
  if (v.bias == Bias::kFull) tbias = make_operand<T>(device, dtype, with_batch({s.m, s.n}, false), bias, false);

  ctl_matmul_attrs attrs{};
  attrs.struct_size = CTL_MATMUL_ATTRS_STRUCT_SIZE;
  attrs.transpose_a = v.attrs_flags && v.transpose_a;
  attrs.transpose_b = v.attrs_flags && v.transpose_b;
  attrs.alpha = v.alpha;
  attrs.alpha_set = true;
  attrs.beta = v.beta;
  attrs.activation = v.activation;
  std::vector<ctl_tensor*> inputs = {ta.get(), tb.get()};
  if (tbias) inputs.push_back(tbias.get());

  Result result;
  for (int pass = 0; pass < 2; ++pass) {
    Tensor out = make_operand<T>(device, dtype, with_batch({s.m, s.n}, false), c0, false);
    ctl_tensor* outputs[1] = {out.get()};
    Status status(ctl_op_run_into(CTL_OP_MATMUL, inputs.size(), inputs.data(), &attrs, 1, outputs));
    if (status) return {{}, describe(status.get())};
    const std::vector<T> host = to_vector<T>(out.get());
    std::vector<double>& dst = pass == 0 ? result.values : *second_run;
    dst.assign(host.begin(), host.end());
  }
  return result;
}

template <class T>
void check_all(ctl_dtype dtype, double eps) {
  std::mt19937 rng(12345);
  for (const Shape& s : kShapes) {
    for (const Variant& v : kVariants) {
      const int64_t batches = v.batch > 0 ? v.batch : 1;
      const std::vector<double> a = random_values(static_cast<size_t>((v.broadcast_a ? 1 : batches) * s.m * s.k), &rng);
      const std::vector<double> b = random_values(static_cast<size_t>(batches * s.k * s.n), &rng);
      const std::vector<double> c0 = random_values(static_cast<size_t>(batches * s.m * s.n), &rng);
      const int64_t bias_count = v.bias == Bias::kRow ? s.n : v.bias == Bias::kColumn ? s.m : batches * s.m * s.n;
      const std::vector<double> bias =
          v.bias == Bias::kNone ? std::vector<double>{} : random_values(static_cast<size_t>(bias_count), &rng);
      // The reference, from the values as the device holds them (rounded to T).
      auto held = [](double x) { return static_cast<double>(static_cast<T>(x)); };
      std::vector<double> expected(c0.size()), bound(c0.size());
      for (int64_t p = 0; p < batches; ++p) {
        const double* pa = a.data() + (v.broadcast_a ? 0 : p * s.m * s.k);
        const double* pb = b.data() + p * s.k * s.n;
        for (int64_t i = 0; i < s.m; ++i) {
          for (int64_t j = 0; j < s.n; ++j) {
            double sum = 0, magnitude = 0;
            for (int64_t k = 0; k < s.k; ++k) {
              const double term = held(pa[i * s.k + k]) * held(pb[k * s.n + j]);
              sum += term;
              magnitude += std::fabs(term);
            }
            const size_t o = static_cast<size_t>(p * s.m * s.n + i * s.n + j);
            double value = v.alpha * sum + v.beta * held(c0[o]);
            magnitude = std::fabs(v.alpha) * magnitude + std::fabs(v.beta * held(c0[o]));
            double bias_value = 0;
            if (v.bias == Bias::kRow) bias_value = held(bias[j]);
            if (v.bias == Bias::kColumn) bias_value = held(bias[i]);
            if (v.bias == Bias::kFull) bias_value = held(bias[o]);
            value += bias_value;
            magnitude += std::fabs(bias_value);
            expected[o] = activate(value, v.activation);
            // Rounding of a sum of K products, scaled by the activation's slope (at most 1.13).
            bound[o] = 1.2 * eps * static_cast<double>(s.k + 4) * (magnitude + 1e-30);
          }
        }
      }
      std::vector<double> one_thread;
      for (unsigned threads : {1u, 3u}) {
        SCOPED_TRACE(std::string(v.name) + ", M N K = " + std::to_string(s.m) + " " + std::to_string(s.n) + " " +
                     std::to_string(s.k) + ", threads " + std::to_string(threads));
        std::vector<double> again;
        const Result got = run_case<T>(dtype, s, v, threads, a, b, c0, bias, &again);
        ASSERT_EQ(got.error, "");
        ASSERT_EQ(got.values.size(), expected.size());
        int reported = 0;
        for (size_t o = 0; o < expected.size() && reported < 5; ++o) {
          if (!(std::fabs(got.values[o] - expected[o]) <= bound[o])) {
            ADD_FAILURE() << "element " << o << ": got " << got.values[o] << ", expected " << expected[o]
                          << " (tolerance " << bound[o] << ")";
            ++reported;
          }
        }
        EXPECT_EQ(std::memcmp(got.values.data(), again.data(), again.size() * sizeof(double)), 0)
            << "two identical calls gave different bits";
        // Every element is summed in one order whatever thread computes it (the depth
        // blocks depend on K alone), so the thread count does not change a bit either.
        if (threads == 1) {
          one_thread = got.values;
        } else {
          EXPECT_EQ(std::memcmp(got.values.data(), one_thread.data(), one_thread.size() * sizeof(double)), 0)
              << "1 and " << threads << " threads gave different bits";
        }
      }
    }
  }
}

TEST(CpuGemm, F32MatchesDoubleReference) {
  check_all<float>(CTL_DTYPE_F32, std::ldexp(1.0, -24));
}

TEST(CpuGemm, F64MatchesDoubleReference) {
  check_all<double>(CTL_DTYPE_F64, std::ldexp(1.0, -53));
}

}  // namespace
