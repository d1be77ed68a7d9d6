// cpu_column_sum_test.cpp — f32 sums and means over the leading axis of a matrix (the
// bias gradient of a matmul) on the CPU plugin. That path cuts the rows into bands and
// wide rows into column blocks, sums each band into its own partial row, then adds the
// partials in band order. The shapes here give one band, many bands, several column
// blocks, a tail band of one row, and rows that do not follow each other in memory (a
// column slice). Each result is checked against a double sum of the same floats, and
// must be bit for bit the same on 1, 2 and 3 threads, also for inputs whose double sums
// show the grouping of the rows. f16 and bf16 take the same path through rows widened to
// f32, and are checked the same way against the double sum of their values.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "catalyst/sdk/half.hpp"
#include "test_support.hpp"

using namespace ctltest;

namespace {

struct Case {
  int64_t rows, cols;
  int64_t stored_cols;  // > cols: the input is columns [0, cols) of a wider matrix
};

// 2048 x 384 is the benchmark GPT's attention bias; 300 x 2100 has two column blocks and
// nineteen bands; 4097 x 8 is narrower than the path's minimum (a plain reduction), and
// 6145 x 16 has a last band of one row.
constexpr Case kCases[] = {{7, 40, 40},  {2048, 384, 384}, {300, 2100, 2100}, {6145, 16, 16},
                           {4097, 8, 8}, {999, 70, 96},    {65, 4100, 4100}};

// Sums and means of x = columns [0, c.cols) of `stored`, in the dtype of its elements
// (float, or uint16_t bits of f16/bf16 when dtype says so). The outputs start as `unset`
// (a NaN), so an output the plugin never writes shows.
template <class T>
struct SumsOf {
  std::vector<T> sum, mean;
  std::string error;
};
using Sums = SumsOf<float>;

template <class T>
SumsOf<T> column_sums_of(const Case& c, ctl_dtype dtype, const std::vector<T>& stored, unsigned threads, T unset) {
  setenv("CATALYST_CPU_THREADS", std::to_string(threads).c_str(), 1);
  std::vector<const char*> paths = {CTL_TEST_CPU_PLUGIN};
  const ctl_runtime_options opts = options(&paths);
  ctl_runtime* raw = nullptr;
  Status created(ctl_runtime_create(&opts, &raw));
  if (created) return {{}, {}, describe(created.get())};
  Runtime runtime(raw);
  ctl_device* device = find_device(runtime.get(), "cpu");
  if (!device) return {{}, {}, "no cpu device"};
  Tensor whole = from_vector<T>(device, dtype, {c.rows, c.stored_cols}, stored);
  ctl_tensor* view = nullptr;
  Status sliced(ctl_tensor_slice(whole.get(), 1, 0, c.cols, 1, &view));
  if (sliced) return {{}, {}, describe(sliced.get())};
  Tensor x(view);

  ctl_reduce_attrs attrs{};
  attrs.struct_size = CTL_REDUCE_ATTRS_STRUCT_SIZE;
  attrs.axis_count = 1;
  attrs.axes[0] = 0;
  SumsOf<T> result;
  for (ctl_op_id op : {CTL_OP_SUM, CTL_OP_MEAN}) {
    Tensor out = from_vector<T>(device, dtype, {c.cols}, std::vector<T>(c.cols, unset));
    ctl_tensor* inputs[1] = {x.get()};
    ctl_tensor* outputs[1] = {out.get()};
    Status status(ctl_op_run_into(op, 1, inputs, &attrs, 1, outputs));
    if (status) return {{}, {}, describe(status.get())};
    (op == CTL_OP_SUM ? result.sum : result.mean) = to_vector<T>(out.get());
  }
  return result;
}

Sums column_sums(const Case& c, const std::vector<float>& stored, unsigned threads) {
  return column_sums_of<float>(c, CTL_DTYPE_F32, stored, threads, NAN);
}

TEST(CpuColumnSum, MatchesADoubleSumAndNeverDependsOnTheThreadCount) {
  std::mt19937 rng(2026);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (const Case& c : kCases) {
    SCOPED_TRACE(std::to_string(c.rows) + " x " + std::to_string(c.cols) + " of " + std::to_string(c.stored_cols));
    std::vector<float> stored(static_cast<size_t>(c.rows * c.stored_cols));
    for (float& v : stored) v = dist(rng);
    // Every sum in double; with |x| <= 1 the f32 result is within one rounding of it, and
    // the double sum's own error (rows * 2^-53 per term) is far below that.
    std::vector<double> exact(static_cast<size_t>(c.cols), 0.0);
    for (int64_t r = 0; r < c.rows; ++r) {
      for (int64_t j = 0; j < c.cols; ++j) exact[j] += stored[r * c.stored_cols + j];
    }
    const Sums one = column_sums(c, stored, 1);
    ASSERT_EQ(one.error, "");
    ASSERT_EQ(one.sum.size(), static_cast<size_t>(c.cols));
    ASSERT_EQ(one.mean.size(), static_cast<size_t>(c.cols));
    for (int64_t j = 0; j < c.cols; ++j) {
      const double bound = std::ldexp(std::fabs(exact[j]), -24) + 1e-12 * static_cast<double>(c.rows);
      ASSERT_NEAR(one.sum[j], exact[j], bound) << "sum, column " << j;
      const double mean = exact[j] / static_cast<double>(c.rows);
      ASSERT_NEAR(one.mean[j], mean, std::ldexp(std::fabs(mean), -24) + 1e-15) << "mean, column " << j;
    }
    // Bit for bit on more threads: the order of additions is the shape's, not the
    // threads'. With 2^60 added to the first row and taken from the last, in every other
    // column, what a double keeps of the small values between them depends on how the rows
    // are grouped, so a grouping that followed the thread count would show.
    std::vector<float> cancelling = stored;
    for (int64_t j = 0; j < c.cols; j += 2) {
      cancelling[j] += 0x1p60f;
      cancelling[(c.rows - 1) * c.stored_cols + j] -= 0x1p60f;
    }
    const Sums base = column_sums(c, cancelling, 1);
    ASSERT_EQ(base.error, "");
    for (unsigned threads : {2u, 3u}) {
      for (const auto& [input, expected] : {std::pair{&stored, &one}, std::pair{&cancelling, &base}}) {
        const Sums many = column_sums(c, *input, threads);
        ASSERT_EQ(many.error, "");
        for (int64_t j = 0; j < c.cols; ++j) {
          ASSERT_EQ(std::bit_cast<uint32_t>(many.sum[j]), std::bit_cast<uint32_t>(expected->sum[j]))
              << threads << " threads, column " << j;
          ASSERT_EQ(std::bit_cast<uint32_t>(many.mean[j]), std::bit_cast<uint32_t>(expected->mean[j]))
              << threads << " threads, column " << j;
        }
      }
    }
  }
}

// f16 and bf16: each result is the double sum of the 16-bit values, rounded to f32 and
// then to the dtype (as the plugin's other sums round), so it is within one rounding of the
// dtype (plus the f32 step) of the exact sum; and bit for bit the same on 1, 2 and 3 threads.
TEST(CpuColumnSum, HalfSumsMatchADoubleSumAndNeverDependOnTheThreadCount) {
  struct Dtype {
    ctl_dtype dtype;
    uint16_t (*narrow)(float);
    float (*widen)(uint16_t);
    int mantissa_bits;
    uint16_t nan;
  };
  const Dtype dtypes[] = {
      {CTL_DTYPE_BF16, [](float f) { return catalyst::sdk::float_to_bf16(f); },
       [](uint16_t h) { return catalyst::sdk::bf16_to_float(h); }, 8, 0x7fc0},
      {CTL_DTYPE_F16, [](float f) { return catalyst::sdk::float_to_half(f); },
       [](uint16_t h) { return catalyst::sdk::half_to_float(h); }, 11, 0x7e00},
  };
  std::mt19937 rng(2027);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (const Dtype& d : dtypes) {
    for (const Case& c : kCases) {
      SCOPED_TRACE(std::string(ctl_dtype_name(d.dtype)) + " " + std::to_string(c.rows) + " x " +
                   std::to_string(c.cols) + " of " + std::to_string(c.stored_cols));
      std::vector<uint16_t> stored(static_cast<size_t>(c.rows * c.stored_cols));
      for (uint16_t& v : stored) v = d.narrow(dist(rng));
      std::vector<double> exact(static_cast<size_t>(c.cols), 0.0);
      for (int64_t r = 0; r < c.rows; ++r) {
        for (int64_t j = 0; j < c.cols; ++j) exact[j] += d.widen(stored[r * c.stored_cols + j]);
      }
      const SumsOf<uint16_t> one = column_sums_of<uint16_t>(c, d.dtype, stored, 1, d.nan);
      ASSERT_EQ(one.error, "");
      ASSERT_EQ(one.sum.size(), static_cast<size_t>(c.cols));
      for (int64_t j = 0; j < c.cols; ++j) {
        // f16 sums of thousands of values overflow nothing here (|sum| < 6145 < 65504).
        const double mean = exact[j] / static_cast<double>(c.rows);
        ASSERT_NEAR(d.widen(one.sum[j]), exact[j], std::ldexp(std::fabs(exact[j]), -d.mantissa_bits) + 1e-7)
            << "sum, column " << j;
        ASSERT_NEAR(d.widen(one.mean[j]), mean, std::ldexp(std::fabs(mean), -d.mantissa_bits) + 1e-7)
            << "mean, column " << j;
      }
      for (unsigned threads : {2u, 3u}) {
        const SumsOf<uint16_t> many = column_sums_of<uint16_t>(c, d.dtype, stored, threads, d.nan);
        ASSERT_EQ(many.error, "");
        ASSERT_EQ(many.sum, one.sum) << threads << " threads";
        ASSERT_EQ(many.mean, one.mean) << threads << " threads";
      }
    }
  }
}

}  // namespace
