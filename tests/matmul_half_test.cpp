// matmul_half_test.cpp — f16 and bf16 matmul on the CPU plugin against a double
// reference: sizes that are no multiple of any tile, K = 1, depths that need several
// depth blocks, transposed, expanded and batch-broadcast operands, strided outputs, and
// the fused epilogue (alpha, beta, bias, activations). CTest runs it once for each
// CATALYST_CPU_ISA value, and for avx512 once more with CATALYST_CPU_AMX=0, so the AMX
// path (avx512 on a CPU with AMX), the bf16 dot-product kernel (avx512 on a CPU with
// AVX512-BF16, AMX off or absent) and the f32 conversion paths (avx2, baseline) each
// face the same cases.
//
// The bound is conformance's for matmul (conformance/tolerance.h, kSum): the error of a
// sum of K terms accumulated in f32, (K + 2) 2^-24 S with S = |alpha| |a| @ |b| +
// |beta out| + |bias|, plus one rounding to the 16-bit output type.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include "catalyst/sdk/half.hpp"
#include "test_support.hpp"

using namespace ctltest;

namespace {

double to_double(ctl_dtype d, uint16_t bits) {
  return d == CTL_DTYPE_F16 ? catalyst::sdk::half_to_float(bits) : catalyst::sdk::bf16_to_float(bits);
}
uint16_t from_double(ctl_dtype d, double v) {
  return d == CTL_DTYPE_F16 ? catalyst::sdk::double_to_half(v) : catalyst::sdk::double_to_bf16(v);
}
double unit_roundoff(ctl_dtype d) {
  return d == CTL_DTYPE_F16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -8);
}
double smallest_normal(ctl_dtype d) {
  return d == CTL_DTYPE_F16 ? std::ldexp(1.0, -14) : std::ldexp(1.0, -126);
}

double activate(double v, ctl_activation act) {
  switch (act) {
    case CTL_ACTIVATION_RELU:
      return v != v ? v : (v > 0 ? v : 0.0);
    case CTL_ACTIVATION_GELU:
      return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
    case CTL_ACTIVATION_GELU_TANH:
      return 0.5 * v * (1 + std::tanh(0.79788456080286535588 * (v + 0.044715 * v * v * v)));
    default:
      return v;
  }
}

// A logical matrix operand: batch axes, then rows x cols. Stored transposed (a
// transpose view of a cols x rows tensor), expanded (an expand view of batch size 1) or
// stepped (every other column of a tensor twice as wide, a slice with step 2, so that
// neither matrix stride is 1) when asked, so the plugin sees non-unit and zero strides.
struct Operand {
  std::vector<int64_t> batch;  // logical batch shape
  int64_t rows = 0, cols = 0;
  bool transposed = false;
  bool expanded = false;         // one stored batch element, expanded to `batch`
  std::vector<uint16_t> values;  // logical, row-major over (batch, rows, cols)
  bool stepped = false;          // stored as column 2j of a rows x 2 cols tensor
  std::vector<int64_t> shape() const {
    std::vector<int64_t> s = batch;
    s.push_back(rows);
    s.push_back(cols);
    return s;
  }
  int64_t batch_count() const {
    int64_t n = 1;
    for (int64_t b : batch) n *= b;
    return n;
  }
  // Logical (batch index, i, j); a batch index of the operand's own batch shape.
  uint16_t at(int64_t b, int64_t i, int64_t j) const { return values[(b * rows + i) * cols + j]; }
};

struct Case {
  const char* name;
  ctl_dtype dtype;
  std::vector<int64_t> a_batch, b_batch;
  int64_t M, N, K;
  bool ta = false, tb = false, expand_a = false, out_transposed = false, bias = false;
  bool step_a = false, step_b = false;  // Operand::stepped
  double alpha = 1, beta = 0;
  ctl_activation act = CTL_ACTIVATION_NONE;
  double scale = 2;    // inputs are uniform in [-scale, scale]
  double special = 0;  // when non-zero, a[0, 0, 0] takes this value (Inf, NaN)
};

class MatmulHalf : public ::testing::Test {
 protected:
  void SetUp() override {
    paths_ = {CTL_TEST_CPU_PLUGIN};
    const ctl_runtime_options opts = options(&paths_, nullptr, false);
    ctl_runtime* raw = nullptr;
    CTL_ASSERT_OK(ctl_runtime_create(&opts, &raw));
    runtime_.reset(raw);
    device_ = find_device(runtime_.get(), "cpu");
    ASSERT_NE(device_, nullptr);
  }

  // The M x N product of row-major a (M x K) and b (K x N) of dtype d, as bits, in *got.
  void product(ctl_dtype d, int64_t M, int64_t K, int64_t N, const std::vector<uint16_t>& a,
               const std::vector<uint16_t>& b, std::vector<uint16_t>* got) {
    Tensor ta = from_vector(device_, d, {M, K}, a);
    Tensor tb = from_vector(device_, d, {K, N}, b);
    ctl_tensor* raw = nullptr;
    CTL_ASSERT_OK(ctl_op_matmul(ta.get(), tb.get(), &raw));
    Tensor out(raw);
    *got = to_vector<uint16_t>(out.get());
  }

  // Fills `op` with random values and returns its device tensor (a view where asked).
  Tensor make(ctl_dtype d, Operand& op, std::mt19937& rng, double scale) {
    std::uniform_real_distribution<double> dist(-scale, scale);
    const int64_t stored_batches = op.expanded ? 1 : op.batch_count();
    const int64_t step = op.stepped ? 2 : 1;  // stored columns per logical one
    // Where logical (stored batch sb, i, j) lies in the stored tensor.
    auto phys = [&](int64_t sb, int64_t i, int64_t j) {
      return op.transposed ? (sb * op.cols + j) * op.rows + i : (sb * op.rows + i) * op.cols * step + j * step;
    };
    std::vector<uint16_t> stored(static_cast<size_t>(stored_batches * op.rows * op.cols * step));
    for (uint16_t& v : stored) v = from_double(d, dist(rng));  // stepped: the skipped columns too
    op.values.assign(static_cast<size_t>(op.batch_count() * op.rows * op.cols), 0);
    for (int64_t b = 0; b < op.batch_count(); ++b) {
      for (int64_t i = 0; i < op.rows; ++i) {
        for (int64_t j = 0; j < op.cols; ++j) {
          op.values[static_cast<size_t>((b * op.rows + i) * op.cols + j)] =
              stored[static_cast<size_t>(phys(op.expanded ? 0 : b, i, j))];
        }
      }
    }
    std::vector<int64_t> shape = op.expanded ? std::vector<int64_t>(op.batch.size(), 1) : op.batch;
    shape.push_back(op.transposed ? op.cols : op.rows);
    shape.push_back(op.transposed ? op.rows : op.cols * step);
    Tensor t = from_vector(device_, d, shape, stored);
    if (op.stepped) {
      ctl_tensor* view = nullptr;
      CTL_EXPECT_OK(ctl_tensor_slice(t.get(), -1, 0, op.cols * step, step, &view));
      t.reset(view);
    }
    if (op.transposed) {
      ctl_tensor* view = nullptr;
      CTL_EXPECT_OK(ctl_tensor_transpose(t.get(), -1, -2, &view));
      t.reset(view);
    }
    if (op.expanded) {
      const std::vector<int64_t> full = op.shape();
      ctl_tensor* view = nullptr;
      CTL_EXPECT_OK(ctl_tensor_expand(t.get(), full.size(), full.data(), &view));
      t.reset(view);
    }
    return t;
  }

  void run(const Case& c) {
    SCOPED_TRACE(c.name);
    const ctl_dtype d = c.dtype;
    std::mt19937 rng(static_cast<unsigned>(c.M * 131 + c.N * 17 + c.K));
    Operand a{c.a_batch, c.M, c.K, c.ta, c.expand_a, {}, c.step_a};
    Operand b{c.b_batch, c.K, c.N, c.tb, false, {}, c.step_b};
    Tensor ta = make(d, a, rng, c.scale);
    Tensor tb = make(d, b, rng, c.scale);
    if (c.special != 0) {  // rebuild a with one special value at element 0
      a.values[0] = from_double(d, c.special);
      std::vector<uint16_t> stored = a.values;
      ta = from_vector(device_, d, a.shape(), stored);
    }
    // Output batch shape: NumPy broadcast of the two batch shapes.
    const size_t rank = std::max(a.batch.size(), b.batch.size());
    std::vector<int64_t> batch(rank, 1);
    for (size_t i = 0; i < rank; ++i) {
      const int64_t ad = i + a.batch.size() >= rank ? a.batch[i + a.batch.size() - rank] : 1;
      const int64_t bd = i + b.batch.size() >= rank ? b.batch[i + b.batch.size() - rank] : 1;
      batch[i] = std::max(ad, bd);
    }
    Operand out{batch, c.M, c.N, c.out_transposed, false, {}};
    Tensor tout = make(d, out, rng, 1.0);
    Operand bias{{}, 1, c.N, false, false, {}};
    Tensor tbias = make(d, bias, rng, 1.0);

    ctl_matmul_attrs attrs{};
    attrs.struct_size = CTL_MATMUL_ATTRS_STRUCT_SIZE;
    attrs.alpha = c.alpha;
    attrs.alpha_set = true;
    attrs.beta = c.beta;
    attrs.activation = c.act;
    std::vector<ctl_tensor*> inputs = {ta.get(), tb.get()};
    if (c.bias) {
      ctl_tensor* flat = nullptr;
      const int64_t n = c.N;
      CTL_ASSERT_OK(ctl_tensor_reshape(tbias.get(), 1, &n, &flat));
      tbias.reset(flat);
      inputs.push_back(tbias.get());
    }
    ctl_tensor* outputs[] = {tout.get()};
    CTL_ASSERT_OK(ctl_op_run_into(CTL_OP_MATMUL, inputs.size(), inputs.data(), &attrs, 1, outputs));
    Tensor contiguous;
    {
      ctl_tensor* raw = nullptr;
      CTL_ASSERT_OK(ctl_tensor_contiguous(tout.get(), &raw));
      contiguous.reset(raw);
    }
    const std::vector<uint16_t> got = to_vector<uint16_t>(contiguous.get());

    const double u = unit_roundoff(d), u_acc = std::ldexp(1.0, -24);
    int64_t bad = 0;
    const int64_t batches = out.batch_count();
    for (int64_t bi = 0; bi < batches; ++bi) {
      // Operand batch indices by broadcasting (right-aligned, size-1 axes repeat).
      int64_t ab = 0, bb = 0, rest = bi;
      std::vector<int64_t> index(rank);
      for (size_t i = rank; i-- > 0;) {
        index[i] = rest % batch[i];
        rest /= batch[i];
      }
      for (size_t i = 0; i < rank; ++i) {
        if (i + a.batch.size() >= rank) {
          const int64_t dim = a.batch[i + a.batch.size() - rank];
          ab = ab * dim + (dim == 1 ? 0 : index[i]);
        }
        if (i + b.batch.size() >= rank) {
          const int64_t dim = b.batch[i + b.batch.size() - rank];
          bb = bb * dim + (dim == 1 ? 0 : index[i]);
        }
      }
      for (int64_t i = 0; i < c.M; ++i) {
        for (int64_t j = 0; j < c.N; ++j) {
          double sum = 0, mag = 0;
          for (int64_t k = 0; k < c.K; ++k) {
            const double x = to_double(d, a.at(ab, i, k)), y = to_double(d, b.at(bb, k, j));
            sum += x * y;
            mag += std::fabs(x * y);
          }
          const double old = to_double(d, out.at(bi, i, j));
          const double bv = c.bias ? to_double(d, bias.at(0, 0, j)) : 0.0;
          double v = c.alpha * sum + bv;
          if (c.beta != 0) v += c.beta * old;
          const double expected = activate(v, c.act);
          double s = std::fabs(c.alpha) * mag + std::fabs(bv) + (c.beta != 0 ? std::fabs(c.beta * old) : 0.0);
          if (c.act != CTL_ACTIVATION_NONE) s = 1.2 * s + 8;
          const double tol = (c.K + 6) * u_acc * s + 2 * u * std::fabs(expected) + smallest_normal(d);
          const double value = to_double(d, got[static_cast<size_t>((bi * c.M + i) * c.N + j)]);
          bool ok;
          if (std::isnan(expected)) {
            ok = std::isnan(value);
          } else if (std::isinf(to_double(d, from_double(d, expected)))) {
            ok = value == to_double(d, from_double(d, expected));  // overflow: the same Inf
          } else {
            ok = std::fabs(value - expected) <= tol;
          }
          if (!ok && ++bad <= 5) {
            ADD_FAILURE() << "batch " << bi << " (" << i << ", " << j << "): got " << value << ", expected " << expected
                          << " +- " << tol;
          }
        }
      }
    }
    EXPECT_EQ(bad, 0);
  }

  std::vector<const char*> paths_;
  Runtime runtime_;
  ctl_device* device_ = nullptr;
};

std::vector<Case> cases(ctl_dtype d) {
  std::vector<Case> list;
  auto add = [&](Case c) {
    c.dtype = d;
    list.push_back(c);
  };
  add({"odd sizes 37x45x19", d, {}, {}, 37, 45, 19});
  add({"K = 1", d, {}, {}, 33, 17, 1});
  add({"one row and column, long K", d, {}, {}, 1, 1, 300});
  add({"several depth blocks", d, {}, {}, 70, 33, 1100});
  add({"several row, column and depth blocks", d, {}, {}, 300, 290, 700});
  add({"transposed a", d, {}, {}, 29, 40, 50, true});
  add({"transposed b", d, {}, {}, 31, 48, 77, false, true});
  add({"both transposed, odd depth", d, {}, {}, 18, 35, 65, true, true});
  add({"batch-broadcast b", d, {3}, {}, 20, 21, 22});
  add({"broadcast batch axes both ways", d, {2, 1}, {1, 3}, 9, 40, 33});
  add({"expanded a (zero batch stride)", d, {4}, {4}, 35, 12, 40, false, false, true});
  Case epi{"bias + relu, alpha 0.75", d, {}, {}, 45, 50, 61};
  epi.bias = true;
  epi.alpha = 0.75;
  epi.act = CTL_ACTIVATION_RELU;
  add(epi);
  Case gelu{"bias + gelu, beta 0.5, transposed out", d, {2}, {}, 19, 34, 40};
  gelu.bias = true;
  gelu.beta = 0.5;
  gelu.out_transposed = true;
  gelu.act = CTL_ACTIVATION_GELU;
  add(gelu);
  Case tanh{"gelu_tanh, beta -1, alpha 2", d, {}, {}, 64, 64, 64};
  tanh.beta = -1;
  tanh.alpha = 2;
  tanh.act = CTL_ACTIVATION_GELU_TANH;
  add(tanh);
  // Past N = 512 a row-major A is packed rather than read in place.
  add({"N past the in-place limit, odd depth", d, {}, {}, 30, 600, 47});
  Case stepped{"no unit stride in a or b, odd depth", d, {}, {}, 26, 37, 51};
  stepped.step_a = stepped.step_b = true;
  add(stepped);
  Case beta{"beta 1, bias, wide N", d, {}, {}, 40, 300, 45};
  beta.beta = 1;
  beta.bias = true;
  add(beta);
  // Products near f16's range: an f16 accumulator would overflow; an f32 one does not.
  Case big{"large values, small alpha", d, {}, {}, 20, 20, 64};
  big.scale = 200;
  big.alpha = 1.0 / 256;
  add(big);
  Case inf{"an Inf input", d, {}, {}, 5, 6, 7};
  inf.special = std::numeric_limits<double>::infinity();
  add(inf);
  Case nan{"a NaN input", d, {}, {}, 5, 6, 7};
  nan.special = std::numeric_limits<double>::quiet_NaN();
  add(nan);
  return list;
}

TEST_F(MatmulHalf, F16MatchesDoubleReference) {
  for (const Case& c : cases(CTL_DTYPE_F16)) run(c);
}

TEST_F(MatmulHalf, Bf16MatchesDoubleReference) {
  for (const Case& c : cases(CTL_DTYPE_BF16)) run(c);
}

// K = 1 with alpha 1: the exact product rounded once, so the result is bit-identical to
// the reference's. A path that dropped the low bits of an f16 operand would miss it.
TEST_F(MatmulHalf, F16SingleProductsRoundOnce) {
  const int64_t M = 40, N = 40;
  std::vector<uint16_t> a(M), b(N);
  std::mt19937 rng(7);
  for (auto& v : a) v = static_cast<uint16_t>(0x3c00 | (rng() & 0x3ff));  // [1, 2), all mantissa bits
  for (auto& v : b) v = static_cast<uint16_t>(0x3800 | (rng() & 0x3ff));  // [0.5, 1)
  std::vector<uint16_t> got;
  ASSERT_NO_FATAL_FAILURE(product(CTL_DTYPE_F16, M, 1, N, a, b, &got));
  int bad = 0;
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      const double exact = to_double(CTL_DTYPE_F16, a[i]) * to_double(CTL_DTYPE_F16, b[j]);
      const uint16_t want = from_double(CTL_DTYPE_F16, exact);
      if (got[static_cast<size_t>(i * N + j)] != want && ++bad <= 5) {
        ADD_FAILURE() << "(" << i << ", " << j << "): got bits " << got[static_cast<size_t>(i * N + j)] << ", want "
                      << want;
      }
    }
  }
}

// Deep f16 products may leave out the lo x lo part of each product (gemm_amx.h); the
// result must still meet the matmul bound. These inputs make that part as large as it
// gets and all of one sign, while the products themselves nearly cancel: a = x = 1 + 2^-8
// (a tie that rounds down to hi = 1, lo = +2^-8) and b alternating x and -y with
// y = 1 + 3 2^-8 (a tie that rounds up, lo = -2^-8), so every a_lo b_lo is +2^-16. With
// the lo x lo part left out at K = 100 the error would be 1.4 times the bound; at
// K = 1030 and 2048 that part is under a quarter of it.
TEST_F(MatmulHalf, F16DeepProductsMeetTheBoundOnAdversarialInputs) {
  const double x = 1 + std::ldexp(1.0, -8), y = 1 + 3 * std::ldexp(1.0, -8);
  const uint16_t hx = catalyst::sdk::double_to_half(x), hy = catalyst::sdk::double_to_half(-y);
  ASSERT_EQ(catalyst::sdk::half_to_float(hx), x);
  ASSERT_EQ(catalyst::sdk::half_to_float(hy), -y);
  const int64_t M = 33, N = 35;
  for (int64_t K : {int64_t{100}, int64_t{1030}, int64_t{2048}}) {
    SCOPED_TRACE("K = " + std::to_string(K));
    std::vector<uint16_t> a(static_cast<size_t>(M * K), hx), b(static_cast<size_t>(K * N));
    for (int64_t k = 0; k < K; ++k) {
      for (int64_t j = 0; j < N; ++j) b[static_cast<size_t>(k * N + j)] = k % 2 == 0 ? hx : hy;
    }
    std::vector<uint16_t> got;
    ASSERT_NO_FATAL_FAILURE(product(CTL_DTYPE_F16, M, K, N, a, b, &got));
    double sum = 0, mag = 0;
    for (int64_t k = 0; k < K; ++k) {
      const double p = x * (k % 2 == 0 ? x : -y);
      sum += p;
      mag += std::fabs(p);
    }
    const double u = std::ldexp(1.0, -11), u_acc = std::ldexp(1.0, -24);
    const double bound = (K + 2) * u_acc * mag + 2 * u * std::fabs(sum) + std::ldexp(1.0, -14);
    double worst = 0;
    for (uint16_t v : got) worst = std::max(worst, std::fabs(catalyst::sdk::half_to_float(v) - sum));
    EXPECT_LE(worst, bound) << "expected " << sum << ", worst error " << worst;
  }
}

// Subnormal inputs count: a bf16 subnormal times a large value is a normal result (the
// tile unit would read the subnormal as zero), and f16 subnormals split exactly.
TEST_F(MatmulHalf, SubnormalInputsAreNotFlushed) {
  struct Sub {
    ctl_dtype dtype;
    double tiny, large;
  };
  for (const Sub& c : {Sub{CTL_DTYPE_BF16, 1e-39, 1e30}, Sub{CTL_DTYPE_F16, 3e-7, 1000.0}}) {
    SCOPED_TRACE(c.dtype == CTL_DTYPE_F16 ? "f16" : "bf16");
    const int64_t M = 3, K = 2, N = 20;
    std::vector<uint16_t> a(M * K, from_double(c.dtype, c.tiny)), b(K * N, from_double(c.dtype, c.large));
    std::vector<uint16_t> got;
    ASSERT_NO_FATAL_FAILURE(product(c.dtype, M, K, N, a, b, &got));
    const double expected = 2 * to_double(c.dtype, a[0]) * to_double(c.dtype, b[0]);
    for (uint16_t bits : got) EXPECT_NEAR(to_double(c.dtype, bits), expected, 2 * unit_roundoff(c.dtype) * expected);
  }
}

// The scan for subnormals covers every element of a large input, whichever thread of the
// pool reads it: one bf16 subnormal in the first or the last row of A, or of B, still
// sends the product to the exact conversion path. Its product with 1e30 (1e-9) is the
// only term of one output element, which the dot-product kernel would make 0.
TEST_F(MatmulHalf, OneSubnormalAnywhereInALargeBf16InputIsFound) {
  const ctl_dtype d = CTL_DTYPE_BF16;
  const int64_t n = 512;
  const uint16_t tiny = from_double(d, 1e-39), large = from_double(d, 1e30), zero = from_double(d, 0.0);
  const double expected = to_double(d, tiny) * to_double(d, large);
  for (bool in_a : {true, false}) {
    for (int64_t at : {int64_t{0}, n - 1}) {
      SCOPED_TRACE(std::string(in_a ? "A" : "B") + ", row " + std::to_string(at));
      // Small normal values everywhere, then the one product that matters: in_a puts the
      // subnormal at A[at][k] and 1e30 at B[k][*] with row `at` of A otherwise zero; else
      // the subnormal at B[at][n-1], 1e30 at A[0][at] and row 0 of A otherwise zero.
      std::vector<uint16_t> a(n * n), b(n * n);
      for (int64_t i = 0; i < n * n; ++i) {
        a[i] = from_double(d, 0.25 + 0.5 * static_cast<double>(i % 7) / 7);
        b[i] = from_double(d, 0.25 + 0.5 * static_cast<double>(i % 11) / 11);
      }
      int64_t row, col;
      if (in_a) {
        const int64_t k = n / 2;
        for (int64_t j = 0; j < n; ++j) a[at * n + j] = zero;
        a[at * n + k] = tiny;
        for (int64_t j = 0; j < n; ++j) b[k * n + j] = large;
        row = at;
        col = n - 1;
      } else {
        for (int64_t j = 0; j < n; ++j) a[j] = zero;
        a[at] = large;
        b[at * n + n - 1] = tiny;
        row = 0;
        col = n - 1;
      }
      std::vector<uint16_t> got;
      ASSERT_NO_FATAL_FAILURE(product(d, n, n, n, a, b, &got));
      EXPECT_NEAR(to_double(d, got[row * n + col]), expected, 2 * unit_roundoff(d) * expected);
    }
  }
}

}  // namespace
