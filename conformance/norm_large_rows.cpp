// norm_large_rows.cpp — layer_norm and rms_norm on rows far from the size of a normalised
// value: a large mean with a small spread, and a large magnitude.
//
// A row of mean 1e4 and spread 1 is what a one-pass variance, E[x^2] - E[x]^2, gets wrong:
// in f32 both terms are about 1e8 with an ulp of 8, and their difference, 1, is noise. A
// correct device (two passes, or Welford's update) is right only to the row's
// conditioning, K = mean|x| / sqrt(var + eps): its rounded mean moves every x - mean by
// (n + 1) u K relative to the spread. The cases give the kRowNorm tolerance that K per
// element (tolerance.h derives the bound and shows it still catches the one-pass form);
// the rows span K from about 1 to the most each dtype holds with a meaningful bound.
// Rows of large magnitude (squares near 1e34 in f32, 1e304 in f64, past f16's range in
// f16) check that the statistics are held relative to themselves, where the plain bound's
// absolute term would pass any tiny rstd.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "catalog.h"
#include "values.h"

namespace catalyst::conformance {
namespace {

constexpr int64_t kRowLength = 16;

struct Row {
  double mean;
  double spread;  // the standard deviation the values are drawn with
};

// Per dtype: rows of a large mean (K from about 1e3 to the most the dtype allows: see
// tolerance.h), then rows of large magnitude (K about 1 to 3).
std::vector<Row> rows_for(ctl_dtype d) {
  switch (d) {
    case CTL_DTYPE_F64:
      return {{1e10, 1}, {-1e8, 1e-2}, {1e6, 1}, {1e12, 1e3}, {0, 1e150}, {3e151, 1e151}};
    case CTL_DTYPE_F16:  // 11 bits: 30000 has an ulp of 16, 2000 of 1 (f16 max 65504)
      return {{3e4, 16}, {-2000, 4}, {2000, 16}, {-1000, 64}, {0, 3.5e4}, {4e4, 1e4}};
    case CTL_DTYPE_BF16:  // 8 bits: 1e4 has an ulp of 64; squares must stay in f32's range
      return {{1e4, 256}, {-1e3, 32}, {1e4, 1024}, {-3e5, 8192}, {0, 1e15}, {3e16, 1e16}};
    default:  // f32
      return {{1e4, 1}, {-1e3, 1e-1}, {1e4, 10}, {3e5, 100}, {0, 1e15}, {3e16, 1e16}};
  }
}

double rounded(ctl_dtype d, double v) {
  unsigned char bytes[8];
  store(bytes, d, v);
  return load(bytes, d);
}

}  // namespace

void norm_large_row_cases(Catalog& cat, ctl_op_id op, ctl_dtype d) {
  const bool layer = op == CTL_OP_LAYER_NORM;
  const std::vector<Row> rows = rows_for(d);
  const int64_t count = static_cast<int64_t>(rows.size());
  std::string label = "[" + std::to_string(count) + "," + std::to_string(kRowLength) + "] rows of mean±spread";
  for (const Row& r : rows) {
    char text[48];
    std::snprintf(text, sizeof text, " %.3g±%.3g", r.mean, r.spread);
    label += text;
  }
  label += layer ? ", weight and bias, every output" : ", weight, every output";
  cat.add_named(op, {d}, "large_rows", label, [=](Harness& h) {
    auto& rng = h.context().rng;
    std::uniform_real_distribution<double> unit(-std::sqrt(3.0), std::sqrt(3.0));  // variance 1
    const double eps = 1e-6;
    std::vector<double> x(static_cast<size_t>(count * kRowLength)), w(kRowLength), b(kRowLength);
    for (int64_t i = 0; i < kRowLength; ++i) {
      w[static_cast<size_t>(i)] = rounded(d, 0.5 + 0.25 * static_cast<double>(i % 7));
      b[static_cast<size_t>(i)] = rounded(d, 0.25 * static_cast<double>(i % 3 - 1));
    }
    for (int64_t r = 0; r < count; ++r) {
      for (int64_t i = 0; i < kRowLength; ++i) {
        x[static_cast<size_t>(r * kRowLength + i)] = rounded(d, rows[r].mean + rows[r].spread * unit(rng));
      }
    }
    // S per element of each output (tolerance.h), from the values as stored.
    std::vector<double> s_y(x.size()), s_mean(static_cast<size_t>(count)), s_rstd(static_cast<size_t>(count));
    const double n = static_cast<double>(kRowLength);
    for (int64_t r = 0; r < count; ++r) {
      const double* row = x.data() + r * kRowLength;
      double mean = 0, magnitude = 0, spread = 0;
      for (int64_t i = 0; i < kRowLength; ++i) mean += row[i] / n, magnitude += std::fabs(row[i]) / n;
      for (int64_t i = 0; i < kRowLength; ++i) {
        const double centred = layer ? row[i] - mean : row[i];
        spread += centred * centred / n;
      }
      const double sigma = std::sqrt(spread + eps), rstd = 1 / sigma;
      const double conditioning = layer ? magnitude / sigma : 0;
      for (int64_t i = 0; i < kRowLength; ++i) {
        const double xh = std::fabs((layer ? row[i] - mean : row[i]) * rstd);
        s_y[static_cast<size_t>(r * kRowLength + i)] =
            (1 + conditioning) * (1 + xh) * std::fabs(w[static_cast<size_t>(i)]) +
            (layer ? std::fabs(b[static_cast<size_t>(i)]) : 0);
      }
      s_mean[static_cast<size_t>(r)] = magnitude;
      s_rstd[static_cast<size_t>(r)] = (1 + conditioning) * rstd;
    }
    Operand xo = h.input_from(d, {count, kRowLength}, x);
    Operand wo = h.input_from(d, {kRowLength}, w);
    Operand bo = h.input_from(d, {kRowLength}, b);
    std::vector<const Operand*> ins = {&xo, &wo};
    if (layer) ins.push_back(&bo);
    ctl_norm_attrs attrs{CTL_NORM_ATTRS_STRUCT_SIZE, eps};
    auto tolerance = [&](std::vector<double> s) {
      Tolerance t(Tol::kRowNorm);
      t.n = n;
      t.scale = std::move(s);
      return t;
    };
    std::vector<Tolerance> tols = {tolerance(s_y)};
    if (layer) tols.push_back(tolerance(s_mean));
    tols.push_back(tolerance(s_rstd));
    h.run(op, ins, &attrs, layer ? 3 : 2, tols);
  });
}

}  // namespace catalyst::conformance
