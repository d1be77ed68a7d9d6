// cpu_vs_reference_test.cpp — every op of the op set, in every dtype docs/ops.md allows
// (and the CPU device reports), run on the CPU plugin's device and on the reference device
// in one runtime, on the same random inputs, and compared.
//
// Inputs are made on the CPU device in several layouts — contiguous, permuted
// (non-contiguous), sliced with a step, expanded (stride-0 broadcast axes) — plus rank 0
// and empty tensors and NumPy broadcasting between inputs; the reference gets contiguous
// copies (ctl_tensor_to_device) holding the same values, so it is the oracle of values.
// Float inputs of elementwise ops include NaN, ±inf and ±0.
//
// Tolerances (u = unit roundoff of the dtype: f32 2^-24, f64 2^-53, f16 2^-11, bf16 2^-8;
// u_acc = the accumulator's: f64 for f64, else f32, since the CPU may accumulate f16/bf16/f32
// in f32 while the reference uses double):
//  - integers and bool: exact, always.
//  - exact ops (neg, abs, relu, maximum, minimum, max, min, comparisons, where, copy, cast,
//    concat, gather, fill, arange, argmax/argmin, random_uniform): bit-exact (NaN: any NaN),
//    signed zeros must match. One seed gives the same random numbers on every device.
//  - add, sub, mul, div: both sides round the exact result once (double rounding through f64
//    is innocuous since 53 >= 2p + 2), so 1 ulp (2u|e|) of slack only; signed zeros match.
//  - transcendental unary ops and pow: libm functions in f32/f64 are within a few ulp, and
//    gelu/silu/sigmoid cancel near zero: 8u|e| + 32u absolute (f16/bf16: computed in >= f32
//    then rounded once, so 2u|e| + 2u absolute: one rounding flip).
//  - sums (sum, mean, matmul, scatter_add with repeated indices): the classic bound
//    (n + 2) u_acc S, with S the same reduction over |x| (for matmul |a| @ |b| + |bias|),
//    computed on the reference; plus 2u|e| for the final rounding of f16/bf16.
//  - logsumexp, softmax, log_softmax, layer_norm, rms_norm: (n + 8) u_acc (1 + |e|) * 4, plus
//    2u|e|; n is the length of the normalised axis.
//  - random_normal: 4u(1 + |e|) (log and cos in f64 on both sides).
// NaN positions must match for every op; an expected ±inf must be matched exactly.
// On a mismatch the message gives op, dtype, the variant's shapes and strides, the seed and
// the worst element. CATALYST_TEST_SEED overrides the seed.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <random>
#include <sstream>

#include "catalyst/sdk/half.hpp"
#include "test_support.hpp"

using namespace ctltest;

namespace {

// ---- the two devices -----------------------------------------------------------------------

struct Devices {
  Runtime runtime;
  ctl_device* cpu = nullptr;
  ctl_device* ref = nullptr;
  uint32_t cpu_mask = 0;
};

Devices& devices() {
  static Devices* d = [] {
    auto* devs = new Devices;
    std::vector<const char*> paths = {CTL_TEST_CPU_PLUGIN};
    ctl_runtime_options o = options(&paths, nullptr, /*reference=*/true);
    ctl_runtime* r = nullptr;
    Status s(ctl_runtime_create(&o, &r));
    if (s) return devs;
    devs->runtime.reset(r);
    devs->cpu = find_device(r, "cpu");
    devs->ref = find_device(r, "reference");
    if (devs->cpu) {
      ctl_device_info info{};
      info.struct_size = CTL_DEVICE_INFO_STRUCT_SIZE;
      Status s2(ctl_device_get_info(devs->cpu, &info));
      devs->cpu_mask = info.dtype_mask;
    }
    return devs;
  }();
  return *d;
}

// ---- host values of any dtype -----------------------------------------------------------

bool is_float(ctl_dtype d) {
  return d == CTL_DTYPE_F32 || d == CTL_DTYPE_F64 || d == CTL_DTYPE_F16 || d == CTL_DTYPE_BF16;
}

double load(const unsigned char* p, ctl_dtype d) {
  switch (d) {
    case CTL_DTYPE_F32: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case CTL_DTYPE_F64: {
      double v;
      std::memcpy(&v, p, 8);
      return v;
    }
    case CTL_DTYPE_F16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return catalyst::sdk::half_to_float(v);
    }
    case CTL_DTYPE_BF16: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return catalyst::sdk::bf16_to_float(v);
    }
    case CTL_DTYPE_I8:
      return static_cast<int8_t>(*p);
    case CTL_DTYPE_U8:
      return *p;
    case CTL_DTYPE_BOOL:
      return *p;
    case CTL_DTYPE_I32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case CTL_DTYPE_I64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
    default:
      return 0;
  }
}

int64_t load_int(const unsigned char* p, ctl_dtype d) {
  if (d == CTL_DTYPE_I64) {
    int64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  return static_cast<int64_t>(load(p, d));
}

void store(unsigned char* p, ctl_dtype d, double v) {
  switch (d) {
    case CTL_DTYPE_F32: {
      float f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
      break;
    }
    case CTL_DTYPE_F64:
      std::memcpy(p, &v, 8);
      break;
    case CTL_DTYPE_F16: {
      uint16_t h = catalyst::sdk::float_to_half(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      break;
    }
    case CTL_DTYPE_BF16: {
      uint16_t h = catalyst::sdk::float_to_bf16(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      break;
    }
    case CTL_DTYPE_I8:
      *p = static_cast<unsigned char>(static_cast<int8_t>(v));
      break;
    case CTL_DTYPE_U8:
      *p = static_cast<unsigned char>(v);
      break;
    case CTL_DTYPE_BOOL:
      *p = v != 0;
      break;
    case CTL_DTYPE_I32: {
      int32_t i = static_cast<int32_t>(v);
      std::memcpy(p, &i, 4);
      break;
    }
    case CTL_DTYPE_I64: {
      int64_t i = static_cast<int64_t>(v);
      std::memcpy(p, &i, 8);
      break;
    }
    default:
      break;
  }
}

double unit_roundoff(ctl_dtype d) {
  switch (d) {
    case CTL_DTYPE_F64:
      return std::ldexp(1.0, -53);
    case CTL_DTYPE_F16:
      return std::ldexp(1.0, -11);
    case CTL_DTYPE_BF16:
      return std::ldexp(1.0, -8);
    default:
      return std::ldexp(1.0, -24);
  }
}
double accumulator_roundoff(ctl_dtype d) {
  return d == CTL_DTYPE_F64 ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
}
double smallest_subnormal(ctl_dtype d) {
  switch (d) {
    case CTL_DTYPE_F64:
      return std::numeric_limits<double>::denorm_min();
    case CTL_DTYPE_F16:
      return std::ldexp(1.0, -24);
    default:
      return std::numeric_limits<float>::denorm_min();  // f32 and bf16 share the exponent range
  }
}

// ---- random inputs --------------------------------------------------------------------------

enum class Values {
  kGeneral,   // floats in [-4, 4] with NaN, ±inf, ±0 mixed in; integers in [-20, 20]
  kFinite,    // floats in [-2, 2], no specials (sums, matmul, norms)
  kPositive,  // floats in (0, 8] with specials (log, sqrt, rsqrt also see negatives via kGeneral)
  kSmallInt,  // integers in [-3, 3], floats in [-3, 3] (pow exponents and bases)
  kIndex,     // indices in [-7, 7): in range, negative and out of range
};

std::vector<unsigned char> random_values(ctl_dtype d, int64_t n, Values kind, std::mt19937_64& rng) {
  const size_t size = ctl_dtype_size(d);
  std::vector<unsigned char> bytes(static_cast<size_t>(n) * size);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double specials[] = {std::nan(""), INFINITY, -INFINITY, 0.0, -0.0, 1.0, -1.0};
  for (int64_t i = 0; i < n; ++i) {
    unsigned char* p = bytes.data() + i * size;
    if (d == CTL_DTYPE_BOOL) {
      *p = unit(rng) < 0.5;
      continue;
    }
    const bool special = kind != Values::kFinite && kind != Values::kIndex && is_float(d) && unit(rng) < 0.08;
    double v;
    if (special) {
      v = specials[static_cast<size_t>(unit(rng) * 7) % 7];
    } else if (is_float(d)) {
      switch (kind) {
        case Values::kFinite:
          v = -2.0 + 4.0 * unit(rng);
          break;
        case Values::kPositive:
          v = 8.0 * (1.0 - unit(rng));
          break;
        case Values::kSmallInt:
          v = -3.0 + 6.0 * unit(rng);
          break;
        default:
          v = -4.0 + 8.0 * unit(rng);
          break;
      }
    } else {
      int lo = -20, hi = 20;
      if (kind == Values::kSmallInt) lo = -3, hi = 3;
      if (kind == Values::kIndex) lo = -7, hi = 6;
      if (d == CTL_DTYPE_U8) lo = std::max(lo, 0), hi = kind == Values::kSmallInt ? 3 : 40;
      v = lo + static_cast<int>(unit(rng) * (hi - lo + 1));
      if (v > hi) v = hi;
    }
    store(p, d, v);
  }
  return bytes;
}

// ---- inputs in several layouts ----------------------------------------------------------

enum class Layout { kContiguous, kPermuted, kStepSliced, kExpanded };
const char* layout_name(Layout l) {
  switch (l) {
    case Layout::kContiguous:
      return "contiguous";
    case Layout::kPermuted:
      return "permuted";
    case Layout::kStepSliced:
      return "sliced with step 2";
    case Layout::kExpanded:
      return "expanded";
  }
  return "?";
}

struct Input {
  Tensor cpu;
  Tensor ref;
};

// A tensor of `shape` on the CPU device in `layout`, and the reference copy of it.
Input make_input(ctl_dtype d, const std::vector<int64_t>& shape, Layout layout, Values kind, std::mt19937_64& rng) {
  Devices& dev = devices();
  const size_t rank = shape.size();
  std::vector<int64_t> base = shape;
  if (layout == Layout::kPermuted && rank >= 2) std::reverse(base.begin(), base.end());
  if (layout == Layout::kStepSliced && rank >= 1) base[0] = 2 * shape[0] + 1;
  int expand_axis = -1;
  if (layout == Layout::kExpanded) {
    for (size_t i = 0; i < rank; ++i) {
      if (shape[i] > 1) {
        expand_axis = static_cast<int>(i);
        base[i] = 1;
        break;
      }
    }
  }
  int64_t n = 1;
  for (int64_t s : base) n *= s;
  auto bytes = random_values(d, n, kind, rng);
  ctl_tensor* t = nullptr;
  Status s(ctl_tensor_from_host(dev.cpu, d, rank, base.data(), bytes.data(), bytes.size(), &t));
  EXPECT_EQ(s, nullptr) << describe(s.get());
  Tensor owner(t);
  ctl_tensor* view = nullptr;
  if (layout == Layout::kPermuted && rank >= 2) {
    std::vector<int64_t> perm(rank);
    for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(rank - 1 - i);
    Status s2(ctl_tensor_permute(t, rank, perm.data(), &view));
    EXPECT_EQ(s2, nullptr) << describe(s2.get());
  } else if (layout == Layout::kStepSliced && rank >= 1) {
    Status s2(ctl_tensor_slice(t, 0, 1, base[0], 2, &view));
    EXPECT_EQ(s2, nullptr) << describe(s2.get());
  } else if (expand_axis >= 0) {
    Status s2(ctl_tensor_expand(t, rank, shape.data(), &view));
    EXPECT_EQ(s2, nullptr) << describe(s2.get());
  }
  Input in;
  in.cpu.reset(view ? view : owner.release());
  EXPECT_EQ(ctl_tensor_rank(in.cpu.get()), rank);
  for (size_t i = 0; i < rank; ++i) EXPECT_EQ(ctl_tensor_dim(in.cpu.get(), static_cast<int64_t>(i)), shape[i]);
  ctl_tensor* r = nullptr;
  Status s3(ctl_tensor_to_device(in.cpu.get(), dev.ref, &r));
  EXPECT_EQ(s3, nullptr) << describe(s3.get());
  in.ref.reset(r);
  return in;
}

// A tensor with explicit host values, on both devices (contiguous).
Input make_input_from(ctl_dtype d, const std::vector<int64_t>& shape, const std::vector<double>& values) {
  Devices& dev = devices();
  std::vector<unsigned char> bytes(values.size() * ctl_dtype_size(d));
  for (size_t i = 0; i < values.size(); ++i) store(bytes.data() + i * ctl_dtype_size(d), d, values[i]);
  Input in;
  ctl_tensor* t = nullptr;
  Status s(ctl_tensor_from_host(dev.cpu, d, shape.size(), shape.data(), bytes.data(), bytes.size(), &t));
  EXPECT_EQ(s, nullptr) << describe(s.get());
  in.cpu.reset(t);
  ctl_tensor* r = nullptr;
  Status s2(ctl_tensor_to_device(t, dev.ref, &r));
  EXPECT_EQ(s2, nullptr) << describe(s2.get());
  in.ref.reset(r);
  return in;
}

std::string describe_tensor(const ctl_tensor* t) {
  const ctl_tensor_info info = info_of(t);
  std::ostringstream o;
  o << ctl_dtype_name(info.dtype) << " shape [";
  for (size_t i = 0; i < info.rank; ++i) o << (i ? "," : "") << info.shape[i];
  o << "] strides [";
  for (size_t i = 0; i < info.rank; ++i) o << (i ? "," : "") << info.strides[i];
  o << "] offset " << info.offset;
  return o.str();
}

std::vector<unsigned char> host_bytes(const ctl_tensor* t) {
  std::vector<unsigned char> bytes(static_cast<size_t>(ctl_tensor_numel(t)) * ctl_dtype_size(ctl_tensor_dtype(t)));
  Status s(ctl_tensor_to_host(t, bytes.data(), bytes.size()));
  EXPECT_EQ(s, nullptr) << describe(s.get());
  return bytes;
}

std::vector<double> host_values(const ctl_tensor* t) {
  const auto bytes = host_bytes(t);
  const ctl_dtype d = ctl_tensor_dtype(t);
  std::vector<double> v(bytes.size() / ctl_dtype_size(d));
  for (size_t i = 0; i < v.size(); ++i) v[i] = load(bytes.data() + i * ctl_dtype_size(d), d);
  return v;
}

// ---- tolerance and comparison -----------------------------------------------------------

enum class Tol { kExact, kArith, kTranscendental, kSum, kRowNorm, kNormal };

struct Tolerance {
  Tolerance(Tol k = Tol::kExact) : kind(k) {}  // NOLINT: implicit on purpose
  Tol kind = Tol::kExact;
  double n = 0;               // length of the reduced / normalised axis
  std::vector<double> scale;  // kSum: S per output element (empty: |expected|)
};

struct Variant {
  std::string label;
  std::vector<const ctl_tensor*> inputs;  // CPU side, for the report
};

uint64_t g_seed = 0;

void compare(ctl_op_id op, const Variant& v, size_t output, const ctl_tensor* got_t, const ctl_tensor* exp_t,
             const Tolerance& tol) {
  ASSERT_EQ(ctl_tensor_dtype(got_t), ctl_tensor_dtype(exp_t));
  ASSERT_EQ(ctl_tensor_rank(got_t), ctl_tensor_rank(exp_t));
  for (size_t i = 0; i < ctl_tensor_rank(got_t); ++i) ASSERT_EQ(ctl_tensor_dim(got_t, i), ctl_tensor_dim(exp_t, i));
  const ctl_dtype d = ctl_tensor_dtype(got_t);
  const auto got_b = host_bytes(got_t);
  const auto exp_b = host_bytes(exp_t);
  const size_t size = ctl_dtype_size(d);
  const size_t n = got_b.size() / size;
  size_t bad = 0, worst = 0;
  double worst_excess = -1;
  std::string worst_why;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char* gp = got_b.data() + i * size;
    const unsigned char* ep = exp_b.data() + i * size;
    std::string why;
    double excess = 0;
    if (!is_float(d)) {
      if (load_int(gp, d) != load_int(ep, d)) why = "integers differ", excess = 1e300;
    } else {
      const double g = load(gp, d), e = load(ep, d);
      if (std::isnan(e) || std::isnan(g)) {
        if (std::isnan(e) != std::isnan(g)) why = "NaN position differs", excess = 1e300;
      } else if (std::isinf(e) || std::isinf(g)) {
        if (g != e) why = "infinity differs", excess = 1e300;
      } else if (tol.kind == Tol::kExact) {
        if (std::memcmp(gp, ep, size) != 0) why = "not bit-identical", excess = std::fabs(g - e) + 1e-300;
      } else {
        const double u = unit_roundoff(d), ua = accumulator_roundoff(d);
        const double ae = std::fabs(e);
        double t = 2 * smallest_subnormal(d);
        switch (tol.kind) {
          case Tol::kArith:
            t += 2 * u * ae;
            break;
          case Tol::kTranscendental:
            t += (d == CTL_DTYPE_F16 || d == CTL_DTYPE_BF16) ? 2 * u * ae + 2 * u : 8 * u * ae + 32 * u;
            break;
          case Tol::kSum:
            t += (tol.n + 2) * ua * (tol.scale.empty() ? ae : tol.scale[i]) + (ua != u ? 2 * u * ae : 0);
            break;
          case Tol::kRowNorm:
            t += 4 * (tol.n + 8) * ua * (1 + ae) + (ua != u ? 2 * u * ae : 0);
            break;
          case Tol::kNormal:
            t += 4 * u * (1 + ae);
            break;
          case Tol::kExact:
            break;
        }
        const double diff = std::fabs(g - e);
        if (diff > t) {
          why = "differs by " + std::to_string(diff) + " > tolerance " + std::to_string(t);
          excess = diff / t;
        }
        if (why.empty() && e == 0 && g == 0 && (tol.kind == Tol::kArith) && std::signbit(e) != std::signbit(g)) {
          why = "signed zero differs", excess = 1e-300;
        }
      }
    }
    if (!why.empty()) {
      ++bad;
      if (excess > worst_excess) worst_excess = excess, worst = i, worst_why = why;
    }
  }
  if (bad == 0) return;
  std::ostringstream o;
  o << ctl_op_name(op) << " " << ctl_dtype_name(d) << " [" << v.label << "] output " << output << ": " << bad << " of "
    << n << " elements differ (seed " << g_seed << ")\n";
  for (size_t k = 0; k < v.inputs.size(); ++k) {
    o << "  input " << k << ": " << (v.inputs[k] ? describe_tensor(v.inputs[k]) : std::string("absent")) << "\n";
  }
  o << "  output: " << describe_tensor(got_t) << "\n";
  // The worst element's multi-index.
  std::vector<int64_t> index(ctl_tensor_rank(got_t));
  size_t rest = worst;
  for (size_t k = index.size(); k-- > 0;) {
    const int64_t dim = ctl_tensor_dim(got_t, k);
    index[k] = dim ? static_cast<int64_t>(rest % dim) : 0;
    rest = dim ? rest / dim : 0;
  }
  o << "  worst element [";
  for (size_t k = 0; k < index.size(); ++k) o << (k ? "," : "") << index[k];
  o.precision(17);
  o << "]: cpu " << load(got_b.data() + worst * size, d) << ", reference " << load(exp_b.data() + worst * size, d)
    << " (" << worst_why << ")";
  ADD_FAILURE() << o.str();
}

// Runs `op` on both devices (ctl_op_run) and compares every output.
void run_both(ctl_op_id op, const std::vector<Input*>& inputs, const void* attrs, size_t outputs,
              const std::string& label, const std::vector<Tolerance>& tols) {
  std::vector<ctl_tensor*> cpu_in, ref_in;
  Variant v{label, {}};
  for (Input* in : inputs) {
    cpu_in.push_back(in ? in->cpu.get() : nullptr);
    ref_in.push_back(in ? in->ref.get() : nullptr);
    v.inputs.push_back(in ? in->cpu.get() : nullptr);
  }
  std::vector<ctl_tensor*> cpu_out(outputs), ref_out(outputs);
  Status se(ctl_op_run(op, ref_in.size(), ref_in.data(), attrs, outputs, ref_out.data()));
  ASSERT_EQ(se, nullptr) << "reference " << ctl_op_name(op) << " [" << label << "]: " << describe(se.get());
  std::vector<Tensor> keep;
  for (ctl_tensor* t : ref_out) keep.emplace_back(t);
  Status sg(ctl_op_run(op, cpu_in.size(), cpu_in.data(), attrs, outputs, cpu_out.data()));
  ASSERT_EQ(sg, nullptr) << "cpu " << ctl_op_name(op) << " [" << label << "] (seed " << g_seed
                         << "): " << describe(sg.get());
  for (ctl_tensor* t : cpu_out) keep.emplace_back(t);
  for (size_t k = 0; k < outputs; ++k) {
    compare(op, v, k, cpu_out[k], ref_out[k], tols.size() > k ? tols[k] : tols.back());
  }
}

// ---- which dtypes each op takes (docs/ops.md) ------------------------------------------

const std::vector<ctl_dtype> kFloat = {CTL_DTYPE_F32, CTL_DTYPE_F64, CTL_DTYPE_F16, CTL_DTYPE_BF16};
const std::vector<ctl_dtype> kNumeric = {CTL_DTYPE_F32, CTL_DTYPE_F64, CTL_DTYPE_F16, CTL_DTYPE_BF16,
                                         CTL_DTYPE_I8,  CTL_DTYPE_U8,  CTL_DTYPE_I32, CTL_DTYPE_I64};
const std::vector<ctl_dtype> kAll = {CTL_DTYPE_F32, CTL_DTYPE_F64, CTL_DTYPE_F16, CTL_DTYPE_BF16, CTL_DTYPE_I8,
                                     CTL_DTYPE_U8,  CTL_DTYPE_I32, CTL_DTYPE_I64, CTL_DTYPE_BOOL};
const std::vector<ctl_dtype> kMatmul = {CTL_DTYPE_F32,  CTL_DTYPE_F64, CTL_DTYPE_F16,
                                        CTL_DTYPE_BF16, CTL_DTYPE_I32, CTL_DTYPE_I64};

struct OpSpec {
  ctl_op_id op;
  const std::vector<ctl_dtype>* dtypes;
};

const std::vector<OpSpec> kOpSet = {
    {CTL_OP_NEG, &kNumeric},
    {CTL_OP_ABS, &kNumeric},
    {CTL_OP_EXP, &kFloat},
    {CTL_OP_LOG, &kFloat},
    {CTL_OP_SQRT, &kFloat},
    {CTL_OP_RSQRT, &kFloat},
    {CTL_OP_TANH, &kFloat},
    {CTL_OP_SIGMOID, &kFloat},
    {CTL_OP_RELU, &kNumeric},
    {CTL_OP_GELU, &kFloat},
    {CTL_OP_GELU_TANH, &kFloat},
    {CTL_OP_SILU, &kFloat},
    {CTL_OP_SIN, &kFloat},
    {CTL_OP_COS, &kFloat},
    {CTL_OP_RECIPROCAL, &kFloat},
    {CTL_OP_ADD, &kNumeric},
    {CTL_OP_SUB, &kNumeric},
    {CTL_OP_MUL, &kNumeric},
    {CTL_OP_DIV, &kNumeric},
    {CTL_OP_POW, &kNumeric},
    {CTL_OP_MAXIMUM, &kNumeric},
    {CTL_OP_MINIMUM, &kNumeric},
    {CTL_OP_EQ, &kAll},
    {CTL_OP_NE, &kAll},
    {CTL_OP_LT, &kAll},
    {CTL_OP_LE, &kAll},
    {CTL_OP_GT, &kAll},
    {CTL_OP_GE, &kAll},
    {CTL_OP_WHERE, &kAll},
    {CTL_OP_SUM, &kNumeric},
    {CTL_OP_MEAN, &kFloat},
    {CTL_OP_MAX, &kNumeric},
    {CTL_OP_MIN, &kNumeric},
    {CTL_OP_ARGMAX, &kNumeric},
    {CTL_OP_ARGMIN, &kNumeric},
    {CTL_OP_LOGSUMEXP, &kFloat},
    {CTL_OP_MATMUL, &kMatmul},
    {CTL_OP_SOFTMAX, &kFloat},
    {CTL_OP_LOG_SOFTMAX, &kFloat},
    {CTL_OP_LAYER_NORM, &kFloat},
    {CTL_OP_RMS_NORM, &kFloat},
    {CTL_OP_COPY, &kAll},
    {CTL_OP_CAST, &kAll},
    {CTL_OP_CONCAT, &kAll},
    {CTL_OP_GATHER, &kAll},
    {CTL_OP_SCATTER_ADD, &kNumeric},
    {CTL_OP_FILL, &kAll},
    {CTL_OP_ARANGE, &kNumeric},
    {CTL_OP_RANDOM_UNIFORM, &kFloat},
    {CTL_OP_RANDOM_NORMAL, &kFloat},
};

struct Param {
  ctl_op_id op;
  ctl_dtype dtype;
};

void PrintTo(const Param& p, std::ostream* os) {
  *os << ctl_op_name(p.op) << " " << ctl_dtype_name(p.dtype);
}

std::vector<Param> all_params() {
  std::vector<Param> params;
  for (const auto& spec : kOpSet) {
    for (ctl_dtype d : *spec.dtypes) params.push_back({spec.op, d});
  }
  return params;
}

// ---- the families -----------------------------------------------------------------------

Tol unary_tol(ctl_op_id op) {
  switch (op) {
    case CTL_OP_NEG:
    case CTL_OP_ABS:
    case CTL_OP_RELU:
      return Tol::kExact;
    case CTL_OP_SQRT:
    case CTL_OP_RECIPROCAL:
      return Tol::kArith;
    default:
      return Tol::kTranscendental;
  }
}

struct Shaped {
  std::vector<int64_t> shape;
  Layout layout;
};

std::string shapes_label(const std::vector<Shaped>& s) {
  std::ostringstream o;
  for (size_t k = 0; k < s.size(); ++k) {
    o << (k ? " & " : "") << "[";
    for (size_t i = 0; i < s[k].shape.size(); ++i) o << (i ? "," : "") << s[k].shape[i];
    o << "] " << layout_name(s[k].layout);
  }
  return o.str();
}

void test_unary(ctl_op_id op, ctl_dtype d, std::mt19937_64& rng) {
  const std::vector<Shaped> cases = {{{3, 5}, Layout::kContiguous},  {{4, 6}, Layout::kPermuted},
                                     {{3, 4}, Layout::kStepSliced},  {{3, 5}, Layout::kExpanded},
                                     {{}, Layout::kContiguous},      {{0, 3}, Layout::kContiguous},
                                     {{2, 3, 4}, Layout::kPermuted}, {{257}, Layout::kContiguous}};
  const Values kind =
      (op == CTL_OP_LOG || op == CTL_OP_SQRT || op == CTL_OP_RSQRT) ? Values::kPositive : Values::kGeneral;
  for (const auto& c : cases) {
    Input x = make_input(d, c.shape, c.layout, kind, rng);
    ctl_tensor* in = x.cpu.get();
    (void)in;
    run_both(op, {&x}, nullptr, 1, shapes_label({c}), {{unary_tol(op)}});
  }
  // Negative inputs for the positive-domain ops (NaN positions).
  if (kind == Values::kPositive) {
    Input x = make_input(d, {4, 4}, Layout::kContiguous, Values::kGeneral, rng);
    run_both(op, {&x}, nullptr, 1, "[4,4] with negatives", {{unary_tol(op)}});
  }
}

void test_binary(ctl_op_id op, ctl_dtype d, std::mt19937_64& rng) {
  const bool compare_op = op >= CTL_OP_EQ && op <= CTL_OP_GE;
  Tol tol = Tol::kExact;
  if (op == CTL_OP_ADD || op == CTL_OP_SUB || op == CTL_OP_MUL || op == CTL_OP_DIV) tol = Tol::kArith;
  if (op == CTL_OP_POW) tol = Tol::kTranscendental;
  const Values kind = op == CTL_OP_POW ? Values::kSmallInt : Values::kGeneral;
  const std::vector<std::pair<Shaped, Shaped>> cases = {
      {{{3, 4}, Layout::kContiguous}, {{3, 4}, Layout::kContiguous}},
      {{{3, 4}, Layout::kPermuted}, {{4}, Layout::kContiguous}},
      {{{2, 1, 4}, Layout::kStepSliced}, {{3, 1}, Layout::kContiguous}},
      {{{3, 4}, Layout::kExpanded}, {{3, 4}, Layout::kPermuted}},
      {{{}, Layout::kContiguous}, {{5}, Layout::kStepSliced}},
      {{{0, 4}, Layout::kContiguous}, {{4}, Layout::kContiguous}},
      {{{2, 3}, Layout::kContiguous}, {{}, Layout::kContiguous}},
      {{{300}, Layout::kContiguous}, {{300}, Layout::kContiguous}},
  };
  for (const auto& [sa, sb] : cases) {
    Input a = make_input(d, sa.shape, sa.layout, kind, rng);
    Input b = make_input(d, sb.shape, sb.layout, kind, rng);
    run_both(op, {&a, &b}, nullptr, 1, shapes_label({sa, sb}), {{compare_op ? Tol::kExact : tol}});
  }
  // Equal operands, so comparisons see ties and max/min see ±0 pairs.
  Input a = make_input(d, {4, 5}, Layout::kContiguous, kind, rng);
  std::vector<Input*> same = {&a, &a};
  run_both(op, same, nullptr, 1, "x op x", {{compare_op ? Tol::kExact : tol}});
  if (is_float(d) && !compare_op) {
    Input z1 = make_input_from(d, {4}, {0.0, -0.0, 0.0, -0.0});
    Input z2 = make_input_from(d, {4}, {0.0, 0.0, -0.0, -0.0});
    run_both(op, {&z1, &z2}, nullptr, 1, "signed zeros", {{tol == Tol::kTranscendental ? tol : Tol::kArith}});
  }
}

void test_where(ctl_dtype d, std::mt19937_64& rng) {
  const std::vector<std::array<Shaped, 3>> cases = {
      {{{{3, 1}, Layout::kContiguous}, {{1, 4}, Layout::kContiguous}, {{3, 4}, Layout::kPermuted}}},
      {{{{4, 3}, Layout::kStepSliced}, {{4, 3}, Layout::kExpanded}, {{4, 3}, Layout::kContiguous}}},
      {{{{}, Layout::kContiguous}, {{2, 3}, Layout::kContiguous}, {{3}, Layout::kContiguous}}},
      {{{{0, 2}, Layout::kContiguous}, {{2}, Layout::kContiguous}, {{1}, Layout::kContiguous}}},
  };
  for (const auto& c : cases) {
    Input cond = make_input(CTL_DTYPE_BOOL, c[0].shape, c[0].layout, Values::kGeneral, rng);
    Input a = make_input(d, c[1].shape, c[1].layout, Values::kGeneral, rng);
    Input b = make_input(d, c[2].shape, c[2].layout, Values::kGeneral, rng);
    run_both(CTL_OP_WHERE, {&cond, &a, &b}, nullptr, 1, shapes_label({c[0], c[1], c[2]}), {{Tol::kExact}});
  }
}

// S for the sum bound: the same reduction of |x| on the reference.
std::vector<double> abs_reduction(ctl_op_id op, Input& x, const ctl_reduce_attrs& attrs) {
  ctl_tensor* ax = nullptr;
  Status s(ctl_op_unary(CTL_OP_ABS, x.ref.get(), &ax));
  EXPECT_EQ(s, nullptr) << describe(s.get());
  Tensor abs_x(ax);
  ctl_tensor* in[] = {ax};
  ctl_tensor* out = nullptr;
  ctl_reduce_attrs a = attrs;
  Status s2(ctl_op_run(op == CTL_OP_MEAN ? CTL_OP_MEAN : CTL_OP_SUM, 1, in, &a, 1, &out));
  EXPECT_EQ(s2, nullptr) << describe(s2.get());
  Tensor o(out);
  return host_values(out);
}

void test_reduce(ctl_op_id op, ctl_dtype d, std::mt19937_64& rng) {
  const bool arg = op == CTL_OP_ARGMAX || op == CTL_OP_ARGMIN;
  const bool needs_values = arg || op == CTL_OP_MAX || op == CTL_OP_MIN;
  struct Case {
    Shaped x;
    std::vector<int32_t> axes;
    bool keepdims;
  };
  std::vector<Case> cases = {
      {{{4, 5, 6}, Layout::kContiguous}, {1}, false}, {{{4, 5, 6}, Layout::kContiguous}, {-1}, true},
      {{{5, 6}, Layout::kPermuted}, {0}, false},      {{{6, 4}, Layout::kStepSliced}, {1}, true},
      {{{3, 4}, Layout::kExpanded}, {0}, false},      {{{2, 3, 4}, Layout::kPermuted}, {2}, false},
      {{{4, 0}, Layout::kContiguous}, {0}, false},    {{{1000}, Layout::kContiguous}, {0}, false},
  };
  if (!arg) {
    cases.push_back({{{4, 5, 6}, Layout::kContiguous}, {}, false});
    cases.push_back({{{4, 5, 6}, Layout::kPermuted}, {0, 2}, true});
    cases.push_back({{{}, Layout::kContiguous}, {}, false});
    if (!needs_values) cases.push_back({{{0, 5}, Layout::kContiguous}, {0}, false});
  } else {
    cases.push_back({{{}, Layout::kContiguous}, {0}, false});  // replaced below: rank 0 has no axis
    cases.pop_back();
  }
  const Values kind = needs_values ? Values::kGeneral : Values::kFinite;
  for (const auto& c : cases) {
    Input x = make_input(d, c.x.shape, c.x.layout, kind, rng);
    ctl_reduce_attrs attrs{};
    attrs.struct_size = CTL_REDUCE_ATTRS_STRUCT_SIZE;
    attrs.axis_count = static_cast<uint32_t>(c.axes.size());
    for (size_t i = 0; i < c.axes.size(); ++i) attrs.axes[i] = c.axes[i];
    attrs.keepdims = c.keepdims;
    std::string label = shapes_label({c.x}) + " axes {";
    for (size_t i = 0; i < c.axes.size(); ++i) label += (i ? "," : "") + std::to_string(c.axes[i]);
    label += c.keepdims ? "} keepdims" : "}";
    Tolerance tol;
    tol.kind = Tol::kExact;
    double n = 1;
    if (c.axes.empty()) {
      for (int64_t s : c.x.shape) n *= s;
    } else {
      for (int32_t a : c.axes) n *= c.x.shape[a < 0 ? a + c.x.shape.size() : a];
    }
    tol.n = n;
    if (is_float(d) && (op == CTL_OP_SUM || op == CTL_OP_MEAN)) {
      tol.kind = Tol::kSum;
      tol.scale = abs_reduction(op, x, attrs);
    } else if (op == CTL_OP_LOGSUMEXP) {
      tol.kind = Tol::kRowNorm;
    }
    run_both(op, {&x}, &attrs, 1, label, {tol});
  }
  if (is_float(d) && needs_values) {
    // NaN wins (and propagates), ties take the first index, ±0 and ±inf.
    Input x = make_input_from(
        d, {4, 4}, {1, NAN, 3, NAN, -INFINITY, -INFINITY, 2, 2, 0.0, -0.0, INFINITY, -0.0, -0.0, 0.0, -0.0, -INFINITY});
    ctl_reduce_attrs attrs{};
    attrs.struct_size = CTL_REDUCE_ATTRS_STRUCT_SIZE;
    attrs.axis_count = 1;
    attrs.axes[0] = 1;
    run_both(op, {&x}, &attrs, 1, "NaN, ties, ±0 (-0 < +0 as in IEEE 754-2019 maximum/minimum), ±inf along axis 1",
             {{Tol::kExact}});
  }
}

void test_matmul(ctl_dtype d, std::mt19937_64& rng) {
  struct Case {
    Shaped a, b;
    bool bias, ta, tb;
    double alpha;
    ctl_activation act;
  };
  std::vector<Case> cases = {
      {{{3, 4}, Layout::kContiguous}, {{4, 5}, Layout::kContiguous}, false, false, false, 1, CTL_ACTIVATION_NONE},
      {{{2, 3, 4}, Layout::kContiguous}, {{4, 5}, Layout::kPermuted}, true, false, false, 1, CTL_ACTIVATION_NONE},
      {{{4, 3}, Layout::kPermuted}, {{5, 4}, Layout::kStepSliced}, false, true, true, 0.5, CTL_ACTIVATION_NONE},
      {{{2, 1, 3, 8}, Layout::kContiguous},
       {{3, 8, 2}, Layout::kContiguous},
       true,
       false,
       false,
       1,
       CTL_ACTIVATION_NONE},
      {{{3, 0}, Layout::kContiguous}, {{0, 4}, Layout::kContiguous}, true, false, false, 1, CTL_ACTIVATION_NONE},
      {{{0, 3}, Layout::kContiguous}, {{3, 4}, Layout::kContiguous}, false, false, false, 1, CTL_ACTIVATION_NONE},
      {{{17, 33}, Layout::kContiguous}, {{33, 65}, Layout::kContiguous}, true, false, false, 1, CTL_ACTIVATION_NONE},
      {{{3, 4}, Layout::kExpanded}, {{4, 5}, Layout::kContiguous}, false, false, false, 1, CTL_ACTIVATION_NONE},
  };
  if (is_float(d)) {
    cases.push_back(
        {{{6, 7}, Layout::kContiguous}, {{7, 5}, Layout::kContiguous}, true, false, false, 1, CTL_ACTIVATION_RELU});
    cases.push_back(
        {{{6, 7}, Layout::kContiguous}, {{7, 5}, Layout::kContiguous}, true, false, false, 2, CTL_ACTIVATION_GELU});
    cases.push_back({{{6, 7}, Layout::kContiguous},
                     {{7, 5}, Layout::kContiguous},
                     false,
                     false,
                     false,
                     1,
                     CTL_ACTIVATION_GELU_TANH});
  }
  for (const auto& c : cases) {
    Input a = make_input(d, c.a.shape, c.a.layout, Values::kFinite, rng);
    Input b = make_input(d, c.b.shape, c.b.layout, Values::kFinite, rng);
    const double alpha = is_float(d) ? c.alpha : std::round(c.alpha * 4);  // integers need a whole alpha
    const int64_t n = c.tb ? c.b.shape[c.b.shape.size() - 2] : c.b.shape.back();
    const int64_t k = c.ta ? c.a.shape[c.a.shape.size() - 2] : c.a.shape.back();
    Input bias = make_input(d, {n}, Layout::kContiguous, Values::kFinite, rng);
    ctl_matmul_attrs attrs{};
    attrs.struct_size = CTL_MATMUL_ATTRS_STRUCT_SIZE;
    attrs.transpose_a = c.ta;
    attrs.transpose_b = c.tb;
    attrs.alpha = alpha;
    attrs.alpha_set = true;
    attrs.activation = c.act;
    std::vector<Input*> ins = {&a, &b};
    if (c.bias) ins.push_back(&bias);
    Tolerance tol;
    tol.kind = Tol::kExact;
    if (is_float(d)) {
      // S = |alpha| |a| @ |b| + |bias| on the reference (without the activation, which
      // does not increase magnitudes).
      tol.kind = Tol::kSum;
      tol.n = static_cast<double>(k) + 4;
      std::vector<ctl_tensor*> abs_in;
      std::vector<Tensor> keep;
      for (Input* in : ins) {
        ctl_tensor* t = nullptr;
        Status s(ctl_op_unary(CTL_OP_ABS, in->ref.get(), &t));
        ASSERT_EQ(s, nullptr) << describe(s.get());
        keep.emplace_back(t);
        abs_in.push_back(t);
      }
      ctl_matmul_attrs abs_attrs = attrs;
      abs_attrs.alpha = std::fabs(alpha);
      abs_attrs.activation = CTL_ACTIVATION_NONE;
      ctl_tensor* s_t = nullptr;
      Status s(ctl_op_run(CTL_OP_MATMUL, abs_in.size(), abs_in.data(), &abs_attrs, 1, &s_t));
      ASSERT_EQ(s, nullptr) << describe(s.get());
      Tensor owner(s_t);
      tol.scale = host_values(s_t);
      if (c.act != CTL_ACTIVATION_NONE) {
        // gelu' is at most ~1.13 and the activation adds its own rounding.
        for (double& v : tol.scale) v = 1.2 * v + 8;
      }
    }
    std::ostringstream label;
    label << shapes_label({c.a, c.b}) << (c.bias ? " +bias" : "") << (c.ta ? " ta" : "") << (c.tb ? " tb" : "")
          << " alpha " << alpha << " act " << static_cast<int>(c.act);
    run_both(CTL_OP_MATMUL, ins, &attrs, 1, label.str(), {tol});
  }
  // beta through run_into: out = a @ b + 0.5 * out, same starting out on both devices.
  Input a = make_input(d, {3, 4}, Layout::kContiguous, Values::kFinite, rng);
  Input b = make_input(d, {4, 2}, Layout::kContiguous, Values::kFinite, rng);
  Input out = make_input(d, {3, 2}, Layout::kContiguous, Values::kFinite, rng);
  ctl_matmul_attrs attrs{};
  attrs.struct_size = CTL_MATMUL_ATTRS_STRUCT_SIZE;
  attrs.beta = is_float(d) ? 0.5 : 2;
  ctl_tensor* cin[] = {a.cpu.get(), b.cpu.get()};
  ctl_tensor* rin[] = {a.ref.get(), b.ref.get()};
  ctl_tensor* cout[] = {out.cpu.get()};
  ctl_tensor* rout[] = {out.ref.get()};
  CTL_ASSERT_OK(ctl_op_run_into(CTL_OP_MATMUL, 2, rin, &attrs, 1, rout));
  CTL_ASSERT_OK(ctl_op_run_into(CTL_OP_MATMUL, 2, cin, &attrs, 1, cout));
  Tolerance tol;
  tol.kind = is_float(d) ? Tol::kSum : Tol::kExact;
  tol.n = 8;
  tol.scale.assign(6, 16.0 + 2 * 2);  // |a||b| <= 4 * 2 * 2, |beta out| <= 1
  compare(CTL_OP_MATMUL, {"run_into with beta", {a.cpu.get(), b.cpu.get()}}, 0, out.cpu.get(), out.ref.get(), tol);
}

void test_softmax(ctl_op_id op, ctl_dtype d, std::mt19937_64& rng) {
  const std::vector<std::pair<Shaped, int32_t>> cases = {
      {{{4, 7}, Layout::kContiguous}, -1}, {{{6, 5}, Layout::kPermuted}, 0},    {{{3, 4, 5}, Layout::kStepSliced}, 1},
      {{{3, 5}, Layout::kExpanded}, 0},    {{{0, 4}, Layout::kContiguous}, -1}, {{{2, 1000}, Layout::kContiguous}, 1}};
  for (const auto& [x_shape, axis] : cases) {
    Input x = make_input(d, x_shape.shape, x_shape.layout, Values::kFinite, rng);
    ctl_softmax_attrs attrs{CTL_AXIS_ATTRS_STRUCT_SIZE, axis};
    Tolerance tol;
    tol.kind = Tol::kRowNorm;
    tol.n = static_cast<double>(x_shape.shape[axis < 0 ? axis + x_shape.shape.size() : axis]);
    run_both(op, {&x}, &attrs, 1, shapes_label({x_shape}) + " axis " + std::to_string(axis), {tol});
  }
  // A row of all -inf gives NaN; +inf and NaN inputs.
  Input x = make_input_from(d, {3, 3}, {-INFINITY, -INFINITY, -INFINITY, 1, INFINITY, 2, NAN, 0, 1});
  Tolerance tol;
  tol.kind = Tol::kRowNorm;
  tol.n = 3;
  run_both(op, {&x}, nullptr, 1, "rows of -inf, +inf and NaN", {tol});
}

void test_norm(ctl_op_id op, ctl_dtype d, std::mt19937_64& rng) {
  const bool layer = op == CTL_OP_LAYER_NORM;
  const std::vector<Shaped> shapes = {{{5, 8}, Layout::kContiguous},     {{4, 6}, Layout::kPermuted},
                                      {{2, 3, 16}, Layout::kStepSliced}, {{3, 5}, Layout::kExpanded},
                                      {{7}, Layout::kContiguous},        {{0, 4}, Layout::kContiguous},
                                      {{2, 700}, Layout::kContiguous}};
  for (const auto& s : shapes) {
    const int64_t n = s.shape.back();
    for (int present = 0; present < (layer ? 4 : 2); ++present) {
      Input x = make_input(d, s.shape, s.layout, Values::kFinite, rng);
      Input w = make_input(d, {n}, Layout::kContiguous, Values::kFinite, rng);
      Input b = make_input(d, {n}, Layout::kContiguous, Values::kFinite, rng);
      std::vector<Input*> ins = {&x, (present & 1) ? &w : nullptr};
      if (layer) ins.push_back((present & 2) ? &b : nullptr);
      ctl_norm_attrs attrs{CTL_NORM_ATTRS_STRUCT_SIZE, present == 1 ? 1e-3 : 0.0};
      const size_t outputs = present % 2 == 0 ? (layer ? 3 : 2) : 1;
      Tolerance tol;
      tol.kind = Tol::kRowNorm;
      tol.n = static_cast<double>(n);
      std::string label = shapes_label({s}) + (present & 1 ? " weight" : "") + (layer && (present & 2) ? " bias" : "") +
                          " outputs " + std::to_string(outputs);
      run_both(op, ins, &attrs, outputs, label, {tol});
    }
  }
}

void test_copy(ctl_dtype d, std::mt19937_64& rng) {
  const std::vector<Shaped> shapes = {{{3, 5}, Layout::kPermuted},   {{4, 3}, Layout::kStepSliced},
                                      {{3, 5}, Layout::kExpanded},   {{}, Layout::kContiguous},
                                      {{0, 2}, Layout::kContiguous}, {{2, 3, 4}, Layout::kPermuted}};
  for (const auto& s : shapes) {
    Input x = make_input(d, s.shape, s.layout, Values::kGeneral, rng);
    run_both(CTL_OP_COPY, {&x}, nullptr, 1, shapes_label({s}), {{Tol::kExact}});
  }
  // Into a strided output: a permuted view of a fresh tensor on each device.
  Input x = make_input(d, {4, 6}, Layout::kStepSliced, Values::kGeneral, rng);
  Input y = make_input(d, {6, 4}, Layout::kContiguous, Values::kGeneral, rng);
  ctl_tensor *cy = nullptr, *ry = nullptr;
  CTL_ASSERT_OK(ctl_tensor_transpose(y.cpu.get(), 0, 1, &cy));
  CTL_ASSERT_OK(ctl_tensor_transpose(y.ref.get(), 0, 1, &ry));
  Tensor ocy(cy), ory(ry);
  ctl_tensor* cin[] = {x.cpu.get()};
  ctl_tensor* rin[] = {x.ref.get()};
  CTL_ASSERT_OK(ctl_op_run_into(CTL_OP_COPY, 1, cin, nullptr, 1, &cy));
  CTL_ASSERT_OK(ctl_op_run_into(CTL_OP_COPY, 1, rin, nullptr, 1, &ry));
  compare(CTL_OP_COPY, {"run_into a transposed output", {x.cpu.get()}}, 0, cy, ry, {Tol::kExact});
}

void test_cast(ctl_dtype from, std::mt19937_64& rng) {
  for (ctl_dtype to : kAll) {
    if (!(devices().cpu_mask & CTL_DTYPE_BIT(to))) continue;
    Input x = make_input(from, {5, 7}, Layout::kPermuted, Values::kGeneral, rng);
    ctl_cast_attrs attrs{CTL_CAST_ATTRS_STRUCT_SIZE, to};
    run_both(CTL_OP_CAST, {&x}, &attrs, 1, std::string("to ") + ctl_dtype_name(to), {{Tol::kExact}});
    if (is_float(from)) {
      // Saturation, truncation toward zero, NaN -> 0, rounding to nearest even.
      Input s = make_input_from(
          from, {12},
          {1e10, -1e10, 300.7, -300.7, 2.5, -2.5, 0.49999, 65519.0, 1e-8, std::nan(""), INFINITY, -INFINITY});
      run_both(CTL_OP_CAST, {&s}, &attrs, 1, std::string("edge values to ") + ctl_dtype_name(to), {{Tol::kExact}});
    }
  }
}

void test_concat(ctl_dtype d, std::mt19937_64& rng) {
  Input a = make_input(d, {2, 3}, Layout::kContiguous, Values::kGeneral, rng);
  Input b = make_input(d, {2, 1}, Layout::kExpanded, Values::kGeneral, rng);
  Input c = make_input(d, {2, 4}, Layout::kPermuted, Values::kGeneral, rng);
  Input e = make_input(d, {2, 0}, Layout::kContiguous, Values::kGeneral, rng);
  ctl_axis_attrs axis1{CTL_AXIS_ATTRS_STRUCT_SIZE, 1};
  run_both(CTL_OP_CONCAT, {&a, &b, &e, &c}, &axis1, 1, "[2,3] [2,1] [2,0] [2,4]ᵀ along 1", {{Tol::kExact}});
  Input f = make_input(d, {3, 3}, Layout::kStepSliced, Values::kGeneral, rng);
  ctl_axis_attrs axis0{CTL_AXIS_ATTRS_STRUCT_SIZE, -2};
  run_both(CTL_OP_CONCAT, {&a, &f}, &axis0, 1, "[2,3] [3,3] sliced along -2", {{Tol::kExact}});
  Input one = make_input(d, {5}, Layout::kContiguous, Values::kGeneral, rng);
  run_both(CTL_OP_CONCAT, {&one}, nullptr, 1, "one input", {{Tol::kExact}});
}

void test_gather(ctl_dtype d, std::mt19937_64& rng) {
  for (ctl_dtype index_dtype : {CTL_DTYPE_I64, CTL_DTYPE_I32}) {
    Input x = make_input(d, {5, 4}, Layout::kPermuted, Values::kGeneral, rng);
    Input idx = make_input(index_dtype, {2, 3}, Layout::kContiguous, Values::kIndex, rng);
    ctl_axis_attrs axis0{CTL_AXIS_ATTRS_STRUCT_SIZE, 0};
    run_both(CTL_OP_GATHER, {&x, &idx}, &axis0, 1, std::string("axis 0, index ") + ctl_dtype_name(index_dtype),
             {{Tol::kExact}});
    Input idx1 = make_input(index_dtype, {6}, Layout::kStepSliced, Values::kIndex, rng);
    ctl_axis_attrs axis1{CTL_AXIS_ATTRS_STRUCT_SIZE, -1};
    run_both(CTL_OP_GATHER, {&x, &idx1}, &axis1, 1, std::string("axis -1, index ") + ctl_dtype_name(index_dtype),
             {{Tol::kExact}});
    Input scalar_idx = make_input_from(index_dtype, {}, {-1});
    run_both(CTL_OP_GATHER, {&x, &scalar_idx}, &axis0, 1, "rank-0 index -1", {{Tol::kExact}});
    Input empty_idx = make_input(index_dtype, {0}, Layout::kContiguous, Values::kIndex, rng);
    run_both(CTL_OP_GATHER, {&x, &empty_idx}, &axis0, 1, "empty index", {{Tol::kExact}});
  }
}

void test_scatter_add(ctl_dtype d, std::mt19937_64& rng) {
  for (int axis : {0, 1}) {
    Input target = make_input(d, {5, 4}, axis ? Layout::kPermuted : Layout::kContiguous, Values::kFinite, rng);
    const int64_t count = axis ? 7 : 9;  // more positions than the axis: repeats
    Input index = make_input(axis ? CTL_DTYPE_I32 : CTL_DTYPE_I64, {count}, Layout::kContiguous, Values::kIndex, rng);
    const std::vector<int64_t> src_shape = axis ? std::vector<int64_t>{5, count} : std::vector<int64_t>{count, 4};
    Input src = make_input(d, src_shape, Layout::kContiguous, Values::kFinite, rng);
    ctl_axis_attrs attrs{CTL_AXIS_ATTRS_STRUCT_SIZE, axis};
    Tolerance tol;
    tol.kind = Tol::kExact;
    if (is_float(d)) {
      // Repeated indices may be summed in any order: the sum bound over |target| + |src|.
      tol.kind = Tol::kSum;
      tol.n = static_cast<double>(count) + 1;
      tol.scale.assign(20, 2.0 * (count + 1));
    }
    run_both(CTL_OP_SCATTER_ADD, {&target, &index, &src}, &attrs, 1, "axis " + std::to_string(axis), {tol});
  }
}

void test_creation(ctl_op_id op, ctl_dtype d) {
  Devices& dev = devices();
  struct Run {
    std::string label;
    std::vector<int64_t> shape;
    std::vector<unsigned char> attrs;
    bool strided;
  };
  std::vector<Run> runs;
  auto bytes_of = [](const auto& a) {
    std::vector<unsigned char> b(sizeof a);
    std::memcpy(b.data(), &a, sizeof a);
    return b;
  };
  Tol tol = Tol::kExact;
  if (op == CTL_OP_FILL) {
    for (double v : {2.5, -3.75, 1e10, -1e10, std::nan(""), -0.0, 1.0}) {
      runs.push_back(
          {"fill " + std::to_string(v), {3, 5}, bytes_of(ctl_fill_attrs{CTL_FILL_ATTRS_STRUCT_SIZE, v}), true});
    }
    runs.push_back({"fill rank 0", {}, bytes_of(ctl_fill_attrs{CTL_FILL_ATTRS_STRUCT_SIZE, 7}), false});
    runs.push_back({"fill empty", {0, 5}, bytes_of(ctl_fill_attrs{CTL_FILL_ATTRS_STRUCT_SIZE, 7}), false});
  } else if (op == CTL_OP_ARANGE) {
    runs.push_back(
        {"arange -3 + 0.75 i", {11}, bytes_of(ctl_arange_attrs{CTL_ARANGE_ATTRS_STRUCT_SIZE, -3, 0.75}), false});
    runs.push_back({"arange 5 - 2 i", {7}, bytes_of(ctl_arange_attrs{CTL_ARANGE_ATTRS_STRUCT_SIZE, 5, -2}), false});
    runs.push_back(
        {"arange 0 + 1 i, 300 long", {300}, bytes_of(ctl_arange_attrs{CTL_ARANGE_ATTRS_STRUCT_SIZE, 0, 1}), false});
    runs.push_back({"arange empty", {0}, bytes_of(ctl_arange_attrs{CTL_ARANGE_ATTRS_STRUCT_SIZE, 0, 1}), false});
  } else {
    if (op == CTL_OP_RANDOM_NORMAL) tol = Tol::kNormal;
    for (uint64_t seed : {uint64_t{1234}, uint64_t{0}, ~uint64_t{0}}) {
      runs.push_back({"seed " + std::to_string(seed),
                      {1000},
                      bytes_of(ctl_random_attrs{CTL_RANDOM_ATTRS_STRUCT_SIZE, seed, 77, -2.0, 3.0}),
                      false});
    }
    runs.push_back({"shape [7,9] offset 2^40",
                    {7, 9},
                    bytes_of(ctl_random_attrs{CTL_RANDOM_ATTRS_STRUCT_SIZE, 42, uint64_t{1} << 40, 0.0, 1.0}),
                    false});
  }
  for (const auto& r : runs) {
    // The output, on each device: contiguous, or a transposed view (strided output).
    std::vector<int64_t> base = r.shape;
    if (r.strided) std::reverse(base.begin(), base.end());
    ctl_tensor *c = nullptr, *e = nullptr;
    CTL_ASSERT_OK(ctl_tensor_create_zeros(dev.cpu, d, base.size(), base.data(), &c));
    CTL_ASSERT_OK(ctl_tensor_create_zeros(dev.ref, d, base.size(), base.data(), &e));
    Tensor oc(c), oe(e);
    if (r.strided) {
      ctl_tensor *tc = nullptr, *te = nullptr;
      CTL_ASSERT_OK(ctl_tensor_transpose(c, 0, 1, &tc));
      CTL_ASSERT_OK(ctl_tensor_transpose(e, 0, 1, &te));
      oc.reset(tc);
      oe.reset(te);
      c = tc;
      e = te;
    }
    CTL_ASSERT_OK(ctl_op_run_into(op, 0, nullptr, r.attrs.data(), 1, &e));
    Status s(ctl_op_run_into(op, 0, nullptr, r.attrs.data(), 1, &c));
    ASSERT_EQ(s, nullptr) << ctl_op_name(op) << " " << ctl_dtype_name(d) << " [" << r.label
                          << "]: " << describe(s.get());
    compare(op, {r.label, {}}, 0, c, e, {tol});
  }
}

// ---- the test ---------------------------------------------------------------------------------

class CpuVsReference : public ::testing::TestWithParam<Param> {};

TEST_P(CpuVsReference, Matches) {
  const Param p = GetParam();
  Devices& dev = devices();
  ASSERT_NE(dev.cpu, nullptr) << "no CPU device from " << CTL_TEST_CPU_PLUGIN;
  ASSERT_NE(dev.ref, nullptr) << "no reference device";
  if (!(dev.cpu_mask & CTL_DTYPE_BIT(p.dtype))) {
    GTEST_SKIP() << "the CPU device does not report " << ctl_dtype_name(p.dtype) << " (optional dtype)";
  }
  g_seed = 0x5eed0000ull + static_cast<uint64_t>(p.op) * 16 + static_cast<uint64_t>(p.dtype);
  if (const char* env = std::getenv("CATALYST_TEST_SEED")) g_seed = std::strtoull(env, nullptr, 0);
  std::mt19937_64 rng(g_seed);
  SCOPED_TRACE("seed " + std::to_string(g_seed));
  switch (p.op) {
    case CTL_OP_ADD:
    case CTL_OP_SUB:
    case CTL_OP_MUL:
    case CTL_OP_DIV:
    case CTL_OP_POW:
    case CTL_OP_MAXIMUM:
    case CTL_OP_MINIMUM:
    case CTL_OP_EQ:
    case CTL_OP_NE:
    case CTL_OP_LT:
    case CTL_OP_LE:
    case CTL_OP_GT:
    case CTL_OP_GE:
      test_binary(p.op, p.dtype, rng);
      break;
    case CTL_OP_WHERE:
      test_where(p.dtype, rng);
      break;
    case CTL_OP_SUM:
    case CTL_OP_MEAN:
    case CTL_OP_MAX:
    case CTL_OP_MIN:
    case CTL_OP_ARGMAX:
    case CTL_OP_ARGMIN:
    case CTL_OP_LOGSUMEXP:
      test_reduce(p.op, p.dtype, rng);
      break;
    case CTL_OP_MATMUL:
      test_matmul(p.dtype, rng);
      break;
    case CTL_OP_SOFTMAX:
    case CTL_OP_LOG_SOFTMAX:
      test_softmax(p.op, p.dtype, rng);
      break;
    case CTL_OP_LAYER_NORM:
    case CTL_OP_RMS_NORM:
      test_norm(p.op, p.dtype, rng);
      break;
    case CTL_OP_COPY:
      test_copy(p.dtype, rng);
      break;
    case CTL_OP_CAST:
      test_cast(p.dtype, rng);
      break;
    case CTL_OP_CONCAT:
      test_concat(p.dtype, rng);
      break;
    case CTL_OP_GATHER:
      test_gather(p.dtype, rng);
      break;
    case CTL_OP_SCATTER_ADD:
      test_scatter_add(p.dtype, rng);
      break;
    case CTL_OP_FILL:
    case CTL_OP_ARANGE:
    case CTL_OP_RANDOM_UNIFORM:
    case CTL_OP_RANDOM_NORMAL:
      test_creation(p.op, p.dtype);
      break;
    default:
      test_unary(p.op, p.dtype, rng);
      break;
  }
}

INSTANTIATE_TEST_SUITE_P(OpSet, CpuVsReference, ::testing::ValuesIn(all_params()),
                         [](const ::testing::TestParamInfo<Param>& info) {
                           return std::string(ctl_op_name(info.param.op)) + "_" + ctl_dtype_name(info.param.dtype);
                         });

// Every op id the core knows is covered by kOpSet (a new op must get a test).
TEST(CpuVsReferenceCoverage, EveryKnownOpIsTested) {
  for (int id = 0; id < 512; ++id) {
    if (!ctl_op_name(static_cast<ctl_op_id>(id))) continue;
    bool found = false;
    for (const auto& spec : kOpSet) found = found || spec.op == id;
    EXPECT_TRUE(found) << "op " << ctl_op_name(static_cast<ctl_op_id>(id)) << " (" << id << ") has no comparison";
  }
}

}  // namespace
