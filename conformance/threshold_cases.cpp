// threshold_cases.cpp — cases on both sides of every size at which a plugin's kernel changes
// path: GEMM depth blocks, steps and tiles, chunked and work-group reductions, grid-stride
// and work-group limits, thread splits, vector widths and their remainders, streamed stores.
//
// A kernel that is right below such a size and wrong above it passes every case that stays
// on one side, however large. conformance/size_thresholds.md lists each threshold of the
// cpu, opencl and vulkan plugins (where it is, its value in the op's own terms, the dtypes
// that take the path) and names the cases here on either side of it: add a row there and
// its cases here together when a plugin gains a path.
//
// Cases are named, not numbered ("<op>.<dtype>.<name>", the name from the sizes it crosses:
// k2049 is a matmul depth, row_65536 a reduced row, rows_4097 a count of rows, n16385 an
// element count), so they never renumber the numeric cases. Shapes are the smallest that
// cross; the few of 4M elements and more (about half a second of reference time) run at
// full only. Values and tolerances are those of the op's own cases (numeric_cases.cpp,
// training_cases.cpp, conv_pool_cases.cpp).
#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "catalog.h"

namespace catalyst::conformance {
namespace {

// "n16385" and the like.
std::string sized(const char* prefix, int64_t n) {
  return prefix + std::to_string(n);
}

// ---- matmul -------------------------------------------------------------------------------

struct Gemm {
  std::vector<int64_t> a, b;  // a (..., M, K), b (K, N)
  Layout a_layout = Layout::kContiguous, b_layout = Layout::kContiguous;
  bool epilogue = false;  // alpha, beta with out's old contents, and a bias
  OutputLayout out = OutputLayout::kContiguous;
};

std::string gemm_label(const Gemm& g) {
  std::string label = shaped_label({{g.a, g.a_layout}, {g.b, g.b_layout}});
  if (g.epilogue) label += std::string(" + bias, alpha, beta * old out, ") + output_word(g.out);
  return label;
}

// a @ b on values in [-2, 2] with run_matmul's tolerance (numeric_cases.cpp): floats kSum
// over K + 4 terms, S = |alpha| |a| @ |b| + |bias| on the reference plus |beta| times
// out's bound of 2; integers exact.
void run_gemm(Harness& h, ctl_dtype d, const Gemm& g) {
  Operand a = h.input(d, g.a, g.a_layout, Values::kFinite);
  Operand b = h.input(d, g.b, g.b_layout, Values::kFinite);
  const int64_t m = g.a[g.a.size() - 2], k = g.a.back(), n = g.b.back();
  ctl_matmul_attrs attrs{};
  attrs.struct_size = CTL_MATMUL_ATTRS_STRUCT_SIZE;
  std::vector<const Operand*> ins = {&a, &b};
  Operand bias, out;
  if (g.epilogue) {
    // Applied once, after the last depth block: a kernel that scales, adds or reads out
    // again per block is wrong only past the first block. Integers need whole scales.
    attrs.alpha = is_float(d) ? 0.75 : 3;
    attrs.alpha_set = true;
    attrs.beta = is_float(d) ? 0.5 : 2;
    bias = h.input(d, {n}, Layout::kContiguous, Values::kFinite);
    out = h.input(d, {m, n}, Layout::kContiguous, Values::kFinite);
    ins.push_back(&bias);
  }
  Tolerance tol;
  if (is_float(d)) {
    ctl_matmul_attrs abs_attrs = attrs;
    abs_attrs.alpha = std::fabs(attrs.alpha);
    abs_attrs.beta = 0;  // the reference's output has no old contents: beta's term is added below
    std::vector<double> scale = h.reference_abs_values(CTL_OP_MATMUL, ins, {}, &abs_attrs);
    for (double& s : scale) s += 2 * std::fabs(attrs.beta);
    tol = sum_tolerance(static_cast<double>(k) + 4, std::move(scale));
  }
  h.run(CTL_OP_MATMUL, ins, &attrs, 1, {tol}, g.out, g.epilogue ? &out : nullptr);
}

void matmul_threshold_cases(Catalog& cat, ctl_dtype d) {
  const auto add = [&](const std::string& name, const Gemm& g) {
    cat.add_named(CTL_OP_MATMUL, {d}, name, gemm_label(g), [=](Harness& h) { run_gemm(h, d, g); });
  };
  // Depths on each side of every depth block and step: cpu 256 (f32, f64, and f16/bf16
  // converted to f32), 2048 in pairs (bf16 dot product), AMX 128 and 512 source depths and
  // f16's three planes from 1024; opencl steps of 256 (CPU drivers) or 16 (GPUs); vulkan
  // steps of 16 (GPUs). M and N are small and odd: the depth is nearly all the cost.
  struct Depth {
    int64_t k, m, n;
  };
  const Depth depths[] = {{16, 9, 13},    {17, 9, 13},    {128, 11, 17}, {129, 11, 17},  {255, 13, 29},
                          {256, 13, 29},  {257, 13, 29},  {511, 7, 33},  {512, 7, 33},   {513, 7, 33},
                          {1023, 11, 17}, {1024, 11, 17}, {2047, 5, 9},  {2048, 5, 9},   {2049, 5, 9},
                          {4095, 3, 33},  {4096, 3, 33},  {4097, 3, 33}, {16384, 17, 33}};
  for (const Depth& s : depths) add(sized("k", s.k), Gemm{{s.m, s.k}, {s.k, s.n}});
  // Output tiles and blocks: cpu register tiles (up to 12 x 32), sharing a product between
  // threads past 48^3 multiply-adds, A read in place up to N = 512, column blocks of 1024,
  // row chunks of 1536; opencl and vulkan-GPU tiles of 64, vulkan-CPU tiles of 32.
  struct Tile {
    const char* name;
    int64_t m, k, n;
  };
  const Tile tiles[] = {{"mn32", 32, 300, 32},    {"mn33", 33, 300, 33},  {"mn64", 64, 300, 64},
                        {"mn65", 65, 300, 65},    {"mnk48", 48, 48, 48},  {"m49_nk48", 49, 48, 48},
                        {"n512", 13, 300, 512},   {"n513", 13, 300, 513}, {"n1024", 13, 300, 1024},
                        {"n1025", 13, 300, 1025}, {"m256", 256, 300, 40}, {"m257", 257, 300, 40},
                        {"m1536", 1536, 11, 9},   {"m1537", 1537, 11, 9}};
  for (const Tile& t : tiles) add(t.name, Gemm{{t.m, t.k}, {t.k, t.n}});
  // Many products: the cpu gives each thread whole products from 2 x threads of them.
  add("batch4_k300", Gemm{{4, 9, 300}, {300, 13}});
  // A strided output: the cpu's f32 and f64 sums go through scratch C and an epilogue pass
  // in parts of 16384 / N rows (one part for k1025_epilogue's 7 rows, two here).
  Gemm strided_out{{257, 11}, {11, 65}};
  strided_out.out = OutputLayout::kTransposed;
  add("m257_n65_out_transposed", strided_out);
  // alpha, beta and the bias past the first depth block, through each output path (in the
  // kernel; scratch C and an epilogue pass; a merge into f16/bf16).
  const std::pair<int64_t, OutputLayout> epilogues[] = {{257, OutputLayout::kContiguous},
                                                        {1025, OutputLayout::kTransposed},
                                                        {2049, OutputLayout::kContiguous},
                                                        {4097, OutputLayout::kGapped}};
  for (const auto& e : epilogues) {
    Gemm g{{7, e.first}, {e.first, 19}};
    g.epilogue = true;
    g.out = e.second;
    add(sized("k", e.first) + "_epilogue", g);
  }
  // Transposed operands take other packing and staging paths across the same blocks.
  for (int64_t k : {int64_t{257}, int64_t{2049}}) {
    Gemm at{{5, k}, {k, 9}};
    at.a_layout = Layout::kPermuted;
    add(sized("k", k) + "_at", at);
    Gemm bt{{5, k}, {k, 9}};
    bt.b_layout = Layout::kPermuted;
    add(sized("k", k) + "_bt", bt);
  }
  // The cpu's independent cells (A read in place, M <= 256, M * K * sizeof(panel value) at
  // most 1 MiB): f32 and bf16 on AVX-512 only, the only kernels that read A in place.
  if (d == CTL_DTYPE_F32 || d == CTL_DTYPE_BF16) {
    const int64_t m = d == CTL_DTYPE_F32 ? 64 : 128;  // M * 4096 * (4 or 2) bytes = 1 MiB
    for (int64_t k : {int64_t{4096}, int64_t{4097}}) {
      add(sized("m", m) + sized("_k", k), Gemm{{m, k}, {k, 9}});
    }
  }
  if (is_float(d)) {
    // All ones: every output is exactly 4096 in any summation order, so a dropped or
    // repeated stretch of the depth shows however the device sums: in f32 and f64 however
    // short, in f16 from 3 terms and in bf16 from 17, past their rounding at 4096.
    cat.add_named(CTL_OP_MATMUL, {d}, "ones_k4096", "[3,4096] @ [4096,5] of ones: exactly 4096", [=](Harness& h) {
      Operand a = h.input_from(d, {3, 4096}, std::vector<double>(3 * 4096, 1.0));
      Operand b = h.input_from(d, {4096, 5}, std::vector<double>(4096 * 5, 1.0));
      h.run(CTL_OP_MATMUL, {&a, &b}, nullptr, 1, {Tol::kExact});
    });
  }
}

// ---- reductions ---------------------------------------------------------------------------

// One reduction over one axis (keepdims false) of values in [-2, 2], with run_reduce's
// tolerance (numeric_cases.cpp). Finite values keep max and argmax meaningful over long
// rows (a NaN would win them all), and their many ties in f16, bf16 and the integers test
// that partial results merge to the first index.
void run_reduction(Harness& h, ctl_op_id op, ctl_dtype d, const std::vector<int64_t>& shape, int32_t axis) {
  Operand x = h.input(d, shape, Layout::kContiguous, Values::kFinite);
  run_reduce(h, op, d, x, shape, {axis}, false);
}

struct Reduction {
  const char* name;
  std::vector<int64_t> shape;
  int32_t axis;
};

void reduce_threshold_cases(Catalog& cat, ctl_op_id op, ctl_dtype d) {
  const auto add = [&](const Reduction& r, Level level) {
    const std::string label = shape_label(r.shape) + " over axis " + std::to_string(r.axis);
    cat.add_named(
        op, {d}, r.name, label, [=](Harness& h) { run_reduction(h, op, d, r.shape, r.axis); }, level);
  };
  const std::vector<Reduction> cases = {
      // Row lengths: cpu f32 vector lanes (16, 8, 4; loops of one and two vectors, then a
      // remainder); vulkan's 128 invocations per output; opencl groups of a power of two up
      // to 256; cpu and opencl chunks of 32768 from 65536 (the last one element long at 65537).
      {"row_15", {3, 15}, 1},
      {"row_16", {3, 16}, 1},
      {"row_17", {3, 17}, 1},
      {"row_31", {3, 31}, 1},
      {"row_32", {3, 32}, 1},
      {"row_33", {3, 33}, 1},
      {"row_128", {3, 128}, 1},
      {"row_129", {3, 129}, 1},
      {"row_256", {3, 256}, 1},
      {"row_257", {3, 257}, 1},
      {"row_65535", {3, 65535}, 1},
      {"row_65536", {3, 65536}, 1},
      {"row_65537", {3, 65537}, 1},
      // Row counts: opencl's compute units x 256 groups (512 on 2 cores), vulkan's 4096
      // groups, past which groups loop over outputs; cpu parts of 16384 / n outputs.
      {"rows_512", {512, 5}, 1},
      {"rows_513", {513, 5}, 1},
      {"rows_4096", {4096, 5}, 1},
      {"rows_4097", {4097, 5}, 1},
      // Columns (axis 0, outputs side by side): cpu column sums from 16 outputs (f32, f16,
      // bf16 sum and mean), in blocks of 2048 columns and bands of max(32768 / width,
      // count / 32) rows; opencl one work-item per output from 1024 outputs; vulkan's 4096
      // groups; cpu and opencl chunks along a strided column.
      {"cols_15", {40, 15}, 0},
      {"cols_16", {40, 16}, 0},
      {"cols_2048", {17, 2048}, 0},
      {"cols_2049", {17, 2049}, 0},
      {"col_2048_cols_16", {2048, 16}, 0},
      {"col_2049_cols_16", {2049, 16}, 0},
      {"col_2_cols_1023", {2, 1023}, 0},
      {"col_2_cols_1024", {2, 1024}, 0},
      {"cols_4096", {3, 4096}, 0},
      {"cols_4097", {3, 4097}, 0},
      {"col_65535", {65535, 3}, 0},
      {"col_65536", {65536, 3}, 0},
      {"col_65537", {65537, 3}, 0},
  };
  for (const Reduction& r : cases) add(r, Level::kCore);
  // cpu column sums: at most 32 bands, so past 32 x 2048 rows the bands grow.
  if ((op == CTL_OP_SUM || op == CTL_OP_MEAN) && (d == CTL_DTYPE_F32 || d == CTL_DTYPE_F16 || d == CTL_DTYPE_BF16)) {
    add({"col_65536_cols_16", {65536, 16}, 0}, Level::kCore);
    add({"col_65537_cols_16", {65537, 16}, 0}, Level::kCore);
  }
  // The two thresholds that need 4M elements: chunks only below 64 outputs (cpu, opencl),
  // and opencl's one item per output only up to 4096 reduced elements. Both are decided in
  // host code shared by every op and dtype, whose kernels run on both sides in the cases
  // above; sum and argmax (a value and an index) in f32 and i32 pin the boundaries.
  if ((op == CTL_OP_SUM || op == CTL_OP_ARGMAX) && (d == CTL_DTYPE_F32 || d == CTL_DTYPE_I32)) {
    const std::vector<Reduction> heavy = {
        {"rows_63_row_65536", {63, 65536}, 1},
        {"rows_64_row_65536", {64, 65536}, 1},
        {"col_4096_cols_1024", {4096, 1024}, 0},
        {"col_4097_cols_1024", {4097, 1024}, 0},
    };
    for (const Reduction& r : heavy) add(r, Level::kFull);
  }
}

// ---- normalisation ------------------------------------------------------------------------

// softmax / log_softmax along the last axis, layer_norm / rms_norm with weight (and bias)
// and every output: norm_cases' and tail_cases' calls and tolerance (numeric_cases.cpp).
void run_normalisation(Harness& h, ctl_op_id op, ctl_dtype d, const std::vector<int64_t>& shape) {
  const int64_t n = shape.back();
  Operand x = h.input(d, shape, Layout::kContiguous, Values::kFinite);
  Tolerance tol(Tol::kRowNorm);
  tol.n = static_cast<double>(n);
  if (op == CTL_OP_SOFTMAX || op == CTL_OP_LOG_SOFTMAX) {
    ctl_softmax_attrs attrs{CTL_AXIS_ATTRS_STRUCT_SIZE, -1};
    h.run(op, {&x}, &attrs, 1, {tol});
    return;
  }
  const bool layer = op == CTL_OP_LAYER_NORM;
  Operand w = h.input(d, {n}, Layout::kContiguous, Values::kFinite);
  std::vector<const Operand*> ins = {&x, &w};
  Operand b;
  if (layer) {
    b = h.input(d, {n}, Layout::kContiguous, Values::kFinite);
    ins.push_back(&b);
  }
  ctl_norm_attrs attrs{CTL_NORM_ATTRS_STRUCT_SIZE, 1e-5};
  h.run(op, ins, &attrs, layer ? 3 : 2, {tol});
}

void norm_threshold_cases(Catalog& cat, ctl_op_id op, ctl_dtype d) {
  const auto add = [&](const std::string& name, std::vector<int64_t> shape, Level level) {
    cat.add_named(
        op, {d}, name, shape_label(shape) + " along the last axis",
        [=](Harness& h) { run_normalisation(h, op, d, shape); }, level);
  };
  // Row lengths: cpu f32 vector lanes; vulkan's 128 invocations per row; opencl's local
  // size, the least power of two >= n up to 256.
  for (int64_t n : {15, 16, 17, 31, 32, 33, 128, 129, 256, 257}) add(sized("row_", n), {3, n}, Level::kCore);
  // Row counts: opencl's compute units x 256 groups (512 on 2 cores), vulkan's 4096; cpu
  // parts of 8192 / n rows.
  for (int64_t rows : {512, 513, 4096, 4097}) add(sized("rows_", rows), {rows, 5}, Level::kCore);
  // cpu f32: outputs of 32 MiB and more are written with streaming stores (softmax then
  // pipelines whole rows): 2048 rows of 4096 floats are exactly 32 MiB, the least that
  // streams; every case above is below it.
  if (d == CTL_DTYPE_F32) add("rows_2048_row_4096", {2048, 4096}, Level::kFull);
}

// ---- elementwise --------------------------------------------------------------------------

// exp (unary), add (binary), lt (comparison) and where stand for their kernel families;
// each crosses its own cpu grain, the cpu vector widths where it has a vector form, and the
// grid-stride limits every opencl and vulkan elementwise kernel shares: opencl groups of
// 128 up to compute units x 64 (16384 items on 2 cores); vulkan groups of 128, up to 4096
// of them before its loop budget (524288 items, kept as a size on both sides), now up to
// 65535 (8388480 items: add.f32.n8388608 below is past it).
constexpr int64_t kOpenclItems = 16384;
constexpr int64_t kVulkanItems = 524288;

void elementwise_threshold_cases(Catalog& cat) {
  for (ctl_dtype d : kFloat) {
    // cpu: vector lanes, f16/bf16 chunks of 256 widened to f32, parts of 4096 (costly ops).
    for (int64_t n :
         {int64_t{15}, int64_t{16}, int64_t{17}, int64_t{31}, int64_t{32}, int64_t{33}, int64_t{256}, int64_t{257},
          int64_t{4096}, int64_t{4097}, kOpenclItems, kOpenclItems + 1, kVulkanItems, kVulkanItems + 1}) {
      cat.add_named(CTL_OP_EXP, {d}, sized("n", n), shape_label({n}) + " contiguous", [=](Harness& h) {
        Operand x = h.input(d, {n}, Layout::kContiguous, Values::kGeneral);
        h.run(CTL_OP_EXP, {&x}, nullptr, 1, {Tol::kTranscendental});
      });
    }
  }
  for (ctl_dtype d : kNumeric) {
    // cpu: parts of 32768 (cheap ops).
    for (int64_t n : {32768, 32769}) {
      cat.add_named(CTL_OP_NEG, {d}, sized("n", n), shape_label({n}) + " contiguous", [=](Harness& h) {
        Operand x = h.input(d, {n}, Layout::kContiguous, Values::kGeneral);
        h.run(CTL_OP_NEG, {&x}, nullptr, 1, {Tol::kExact});
      });
    }
    // cpu: vector lanes, f16/bf16 chunks of 256, the small dense f32 path up to 32768
    // elements, parts of 32768; opencl and vulkan grid strides.
    for (int64_t n :
         {int64_t{15}, int64_t{16}, int64_t{17}, int64_t{31}, int64_t{32}, int64_t{33}, int64_t{256}, int64_t{257},
          kOpenclItems, kOpenclItems + 1, int64_t{32768}, int64_t{32769}, kVulkanItems, kVulkanItems + 1}) {
      cat.add_named(CTL_OP_ADD, {d}, sized("n", n), shape_label({n}) + " & " + shape_label({n}), [=](Harness& h) {
        Operand a = h.input(d, {n}, Layout::kContiguous, Values::kGeneral);
        Operand b = h.input(d, {n}, Layout::kContiguous, Values::kGeneral);
        h.run(CTL_OP_ADD, {&a, &b}, nullptr, 1, {Tol::kArith});
      });
    }
    // cpu: a broadcast operand is a stride-0 span, widened once per chunk in f16/bf16.
    for (int64_t n : {33, 257}) {
      cat.add_named(CTL_OP_ADD, {d}, sized("n", n) + "_scalar", shape_label({n}) + " & [1] broadcast", [=](Harness& h) {
        Operand a = h.input(d, {n}, Layout::kContiguous, Values::kGeneral);
        Operand b = h.input(d, {1}, Layout::kContiguous, Values::kGeneral);
        h.run(CTL_OP_ADD, {&a, &b}, nullptr, 1, {Tol::kArith});
      });
    }
    // cpu: pow's parts of 4096.
    for (int64_t n : {4096, 4097}) {
      cat.add_named(CTL_OP_POW, {d}, sized("n", n), shape_label({n}) + " & " + shape_label({n}), [=](Harness& h) {
        Operand a = h.input(d, {n}, Layout::kContiguous, Values::kSmallInt);
        Operand b = h.input(d, {n}, Layout::kContiguous, Values::kSmallInt);
        h.run(CTL_OP_POW, {&a, &b}, nullptr, 1, {Tol::kTranscendental});
      });
    }
  }
  // cpu f32 add, sub, mul, div: outputs of 32 MiB and more are written with streaming
  // stores; 8388608 floats are the least that stream, every case above is below.
  {
    const ctl_dtype f = CTL_DTYPE_F32;
    const int64_t n = 8388608;
    cat.add_named(
        CTL_OP_ADD, {f}, sized("n", n), shape_label({n}) + " & " + shape_label({n}),
        [=](Harness& h) {
          Operand a = h.input(f, {n}, Layout::kContiguous, Values::kGeneral);
          Operand b = h.input(f, {n}, Layout::kContiguous, Values::kGeneral);
          h.run(CTL_OP_ADD, {&a, &b}, nullptr, 1, {Tol::kArith});
        },
        Level::kFull);
  }
  for (ctl_dtype d : kAll) {
    // cpu: parts of 32768; opencl and vulkan grid strides.
    for (int64_t n : {kOpenclItems, kOpenclItems + 1, int64_t{32768}, int64_t{32769}, kVulkanItems, kVulkanItems + 1}) {
      cat.add_named(CTL_OP_LT, {d}, sized("n", n), shape_label({n}) + " < " + shape_label({n}), [=](Harness& h) {
        Operand a = h.input(d, {n}, Layout::kContiguous, Values::kGeneral);
        Operand b = h.input(d, {n}, Layout::kContiguous, Values::kGeneral);
        h.run(CTL_OP_LT, {&a, &b}, nullptr, 1, {Tol::kExact});
      });
      cat.add_named(CTL_OP_WHERE, {d, CTL_DTYPE_BOOL}, sized("n", n), "where of three " + shape_label({n}),
                    [=](Harness& h) {
                      Operand c = h.input(CTL_DTYPE_BOOL, {n}, Layout::kContiguous, Values::kGeneral);
                      Operand a = h.input(d, {n}, Layout::kContiguous, Values::kGeneral);
                      Operand b = h.input(d, {n}, Layout::kContiguous, Values::kGeneral);
                      h.run(CTL_OP_WHERE, {&c, &a, &b}, nullptr, 1, {Tol::kExact});
                    });
    }
  }
  // The fused op (optional, so at full as in fused_cases.cpp): cpu tiles of 1024 and parts
  // of 8 tiles; opencl's grid stride. One add: one rounding, as the separate op.
  for (ctl_dtype d : kFloat) {
    for (int64_t n : {int64_t{1024}, int64_t{1025}, int64_t{8192}, int64_t{8193}, kOpenclItems, kOpenclItems + 1}) {
      cat.add_named(
          CTL_OP_FUSED_ELEMENTWISE, {d}, sized("n", n), "add of two " + shape_label({n}),
          [=](Harness& h) {
            Operand a = h.input(d, {n}, Layout::kContiguous, Values::kGeneral);
            Operand b = h.input(d, {n}, Layout::kContiguous, Values::kGeneral);
            ctl_fused_elementwise_attrs attrs{};
            attrs.struct_size = CTL_FUSED_ELEMENTWISE_ATTRS_STRUCT_SIZE;
            attrs.instruction_count = 1;
            attrs.program[0] = ctl_fused_instruction{CTL_OP_ADD, 0, 1};
            h.run(CTL_OP_FUSED_ELEMENTWISE, {&a, &b}, &attrs, 1, {Tol::kArith});
          },
          Level::kFull);
    }
  }
}

// ---- data movement and creation -----------------------------------------------------------

void movement_threshold_cases(Catalog& cat) {
  for (ctl_dtype d : kAll) {
    // cpu: a contiguous copy is memcpy in parts of 262144 elements; opencl and vulkan
    // grid strides.
    for (int64_t n :
         {kOpenclItems, kOpenclItems + 1, int64_t{262144}, int64_t{262145}, kVulkanItems, kVulkanItems + 1}) {
      cat.add_named(CTL_OP_COPY, {d}, sized("n", n), shape_label({n}) + " contiguous", [=](Harness& h) {
        Operand x = h.input(d, {n}, Layout::kContiguous, Values::kGeneral);
        h.run(CTL_OP_COPY, {&x}, nullptr, 1, {Tol::kExact});
      });
    }
    // cpu: a strided copy runs in parts of 32768.
    for (int64_t rows : {256, 257}) {
      cat.add_named(CTL_OP_COPY, {d}, sized("permuted_", rows * 128), shape_label({rows, 128}) + " permuted",
                    [=](Harness& h) {
                      Operand x = h.input(d, {rows, 128}, Layout::kPermuted, Values::kGeneral);
                      h.run(CTL_OP_COPY, {&x}, nullptr, 1, {Tol::kExact});
                    });
    }
    // cpu: parts of 32768 (f32 <-> f16/bf16 through span conversions); opencl grid stride.
    std::vector<ctl_dtype> targets = {CTL_DTYPE_F32};
    if (d == CTL_DTYPE_F32) targets = {CTL_DTYPE_F32, CTL_DTYPE_F16, CTL_DTYPE_BF16};
    for (ctl_dtype to : targets) {
      for (int64_t n : {kOpenclItems, kOpenclItems + 1, int64_t{32768}, int64_t{32769}}) {
        cat.add_named(CTL_OP_CAST, {d, to}, std::string("to_") + ctl_dtype_name(to) + sized("_n", n),
                      shape_label({n}) + " to " + ctl_dtype_name(to), [=](Harness& h) {
                        Operand x = h.input(d, {n}, Layout::kContiguous, Values::kGeneral);
                        ctl_cast_attrs attrs{CTL_CAST_ATTRS_STRUCT_SIZE, to};
                        h.run(CTL_OP_CAST, {&x}, &attrs, 1, {Tol::kExact});
                      });
      }
    }
    // cpu: parts of 32768; opencl grid stride.
    for (int64_t n : {kOpenclItems, kOpenclItems + 1, int64_t{32768}, int64_t{32769}}) {
      cat.add_named(CTL_OP_FILL, {d}, sized("n", n), "fill 2.5 into " + shape_label({n}), [=](Harness& h) {
        ctl_fill_attrs attrs{CTL_FILL_ATTRS_STRUCT_SIZE, 2.5};
        h.run_creation(CTL_OP_FILL, d, {n}, &attrs, Tol::kExact, OutputLayout::kContiguous);
      });
    }
    // cpu: parts of 16384 index positions (one element each); opencl grid stride.
    for (int64_t n : {kOpenclItems, kOpenclItems + 1}) {
      cat.add_named(CTL_OP_GATHER, {d, CTL_DTYPE_I64}, sized("index_", n),
                    "[7,1] by a " + shape_label({n}) + " i64 index along axis 0", [=](Harness& h) {
                      Operand x = h.input(d, {7, 1}, Layout::kContiguous, Values::kGeneral);
                      Operand i = h.input(CTL_DTYPE_I64, {n}, Layout::kContiguous, Values::kIndex);
                      ctl_axis_attrs axis{CTL_AXIS_ATTRS_STRUCT_SIZE, 0};
                      h.run(CTL_OP_GATHER, {&x, &i}, &axis, 1, {Tol::kExact});
                    });
    }
  }
  for (ctl_dtype d : kNumeric) {
    // cpu: parts of 32768; opencl grid stride.
    for (int64_t n : {kOpenclItems, kOpenclItems + 1, int64_t{32768}, int64_t{32769}}) {
      cat.add_named(CTL_OP_ARANGE, {d}, sized("n", n), "-5 + 0.5 i into " + shape_label({n}), [=](Harness& h) {
        ctl_arange_attrs attrs{CTL_ARANGE_ATTRS_STRUCT_SIZE, -5, 0.5};
        h.run_creation(CTL_OP_ARANGE, d, {n}, &attrs, Tol::kExact, OutputLayout::kContiguous);
      });
    }
    // cpu: parts of 16384 columns (one index position); opencl's column kernel grid stride.
    for (int64_t n : {kOpenclItems, kOpenclItems + 1}) {
      cat.add_named(CTL_OP_SCATTER_ADD, {d, CTL_DTYPE_I64}, sized("cols_", n),
                    shape_label({7, n}) + " target, one i64 position along axis 0", [=](Harness& h) {
                      Operand target = h.input(d, {7, n}, Layout::kContiguous, Values::kFinite);
                      Operand i = h.input(CTL_DTYPE_I64, {1}, Layout::kContiguous, Values::kIndex);
                      Operand src = h.input(d, {1, n}, Layout::kContiguous, Values::kFinite);
                      ctl_axis_attrs attrs{CTL_AXIS_ATTRS_STRUCT_SIZE, 0};
                      Tolerance tol;
                      if (is_float(d)) tol = sum_tolerance(2, std::vector<double>(static_cast<size_t>(7 * n), 4.0));
                      h.run(CTL_OP_SCATTER_ADD, {&target, &i, &src}, &attrs, 1, {tol});
                    });
    }
  }
  for (ctl_dtype d : kFloat) {
    // cpu: parts of 1024 (kCostlyGrain / 4); opencl grid stride.
    for (ctl_op_id op : {CTL_OP_RANDOM_UNIFORM, CTL_OP_RANDOM_NORMAL}) {
      for (int64_t n : {int64_t{1024}, int64_t{1025}, kOpenclItems, kOpenclItems + 1}) {
        cat.add_named(op, {d}, sized("n", n), "seed 5, " + shape_label({n}), [=](Harness& h) {
          ctl_random_attrs attrs{CTL_RANDOM_ATTRS_STRUCT_SIZE, 5, 0, -1.0, 2.0};
          h.run_creation(op, d, {n}, &attrs, op == CTL_OP_RANDOM_NORMAL ? Tol::kNormal : Tol::kExact,
                         OutputLayout::kContiguous);
        });
      }
    }
  }
}

// ---- training ops, convolution and pooling ------------------------------------------------
//
// The calls and tolerances of training_cases.cpp and conv_pool_cases.cpp (whose helpers are
// local to those files), for contiguous operands. At training in f32, full otherwise. Their
// vulkan loops are common.glsl's FOR_EACH_ITEM over loop_groups, as elementwise's: the
// elementwise cases above cross its 524288 items for them all.

// adamw_step (step 3, random state) and sgd_step (momentum 0.9, random buffer) of n
// parameters in [-2, 2]: kTranscendental, as run_adamw and run_sgd.
void run_optimizer(Harness& h, ctl_op_id op, ctl_dtype d, int64_t n) {
  auto& rng = h.context().rng;
  std::uniform_real_distribution<double> unit(-2.0, 2.0);
  std::vector<double> p(static_cast<size_t>(n)), m(p.size()), v(p.size());
  for (size_t i = 0; i < p.size(); ++i) {
    p[i] = unit(rng);
    m[i] = unit(rng);
    v[i] = m[i] * m[i] + 0.25 * (unit(rng) + 2);  // exp_avg^2 <= exp_avg_sq, as real states
  }
  Operand grad = h.input(d, {n}, Layout::kContiguous, Values::kFinite);
  Operand param = h.input_from(d, {n}, p);
  Operand state = h.input_from(d, {n}, m);
  if (op == CTL_OP_ADAMW_STEP) {
    Operand state_sq = h.input_from(d, {n}, v);
    ctl_adamw_attrs attrs{};
    attrs.struct_size = CTL_ADAMW_ATTRS_STRUCT_SIZE;
    attrs.lr = 1e-3;
    attrs.beta1 = 0.9;
    attrs.beta2 = 0.999;
    attrs.eps = 1e-8;
    attrs.weight_decay = 0.01;
    attrs.step = 3;
    h.run(op, {&grad}, &attrs, 3, {Tol::kTranscendental}, OutputLayout::kContiguous, {&param, &state, &state_sq});
    return;
  }
  ctl_sgd_attrs attrs{};
  attrs.struct_size = CTL_SGD_ATTRS_STRUCT_SIZE;
  attrs.lr = 0.01;
  attrs.momentum = 0.9;
  attrs.weight_decay = 0.01;
  h.run(op, {&grad}, &attrs, 2, {Tol::kTranscendental}, OutputLayout::kContiguous, {&param, &state});
}

// gelu_backward / gelu_tanh_backward: run_gelu_backward's kSum with S from the inputs.
void run_gelu_grad(Harness& h, ctl_op_id op, ctl_dtype d, int64_t n) {
  Operand dy = h.input(d, {n}, Layout::kContiguous, Values::kGeneral);
  Operand x = h.input(d, {n}, Layout::kContiguous, Values::kGeneral);
  const std::vector<double> g = host_values(dy.reference.get()), xv = host_values(x.reference.get());
  std::vector<double> s(g.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const double v = xv[i];
    if (op == CTL_OP_GELU_BACKWARD) {
      const double phi = std::exp(-0.5 * v * v) / std::sqrt(2 * std::numbers::pi);
      s[i] = std::fabs(g[i]) * (1 + std::fabs(v) * phi * (1 + v * v));
    } else {
      s[i] = std::fabs(g[i]) * (1 + std::fabs(v) * (1 + 3 * 0.044715 * v * v));
    }
  }
  h.run(op, {&dy, &x}, nullptr, 1, {sum_tolerance(op == CTL_OP_GELU_BACKWARD ? 10 : 8, s)});
}

// softmax_backward / log_softmax_backward along the last axis, y the forward op's result
// on the reference: run_softmax_backward's kSum with S per element.
void run_softmax_grad(Harness& h, ctl_op_id op, ctl_dtype d, const std::vector<int64_t>& shape) {
  const bool log = op == CTL_OP_LOG_SOFTMAX_BACKWARD;
  const int64_t n = shape.back(), rows = numel_of(shape) / n;
  Operand x = h.input(d, shape, Layout::kContiguous, Values::kFinite);
  ctl_axis_attrs attrs{CTL_AXIS_ATTRS_STRUCT_SIZE, -1};
  const std::vector<TensorPtr> fwd =
      reference_run(log ? CTL_OP_LOG_SOFTMAX : CTL_OP_SOFTMAX, {x.reference.get()}, &attrs, 1);
  const std::vector<double> yv = host_values(fwd[0].get());
  Operand y = h.input_from(d, shape, yv);
  Operand dy = h.input(d, shape, Layout::kContiguous, Values::kFinite);
  const std::vector<double> g = host_values(dy.reference.get());
  std::vector<double> s(g.size());
  for (int64_t r = 0; r < rows; ++r) {
    const size_t row = static_cast<size_t>(r * n);
    double line = 0;
    for (size_t e = row; e < row + static_cast<size_t>(n); ++e) line += log ? std::fabs(g[e]) : std::fabs(g[e] * yv[e]);
    for (size_t e = row; e < row + static_cast<size_t>(n); ++e) {
      s[e] = log ? std::fabs(g[e]) + std::exp(yv[e]) * line : yv[e] * (std::fabs(g[e]) + line);
    }
  }
  h.run(op, {&y, &dy}, &attrs, 1, {sum_tolerance(static_cast<double>(n) + (log ? 10 : 4), s)});
}

// layer_norm_backward / rms_norm_backward with weight and every output, mean and rstd the
// forward op's on the reference: run_norm_backward's kSum tolerances.
void run_norm_grad(Harness& h, ctl_op_id op, ctl_dtype d, const std::vector<int64_t>& shape) {
  const bool layer = op == CTL_OP_LAYER_NORM_BACKWARD;
  const int64_t n = shape.back(), rows = numel_of(shape) / n;
  const ctl_dtype stat_dtype = d == CTL_DTYPE_F16 || d == CTL_DTYPE_BF16 ? CTL_DTYPE_F32 : d;
  Operand x = h.input(d, shape, Layout::kContiguous, Values::kFinite);
  ctl_norm_attrs norm{CTL_NORM_ATTRS_STRUCT_SIZE, 1e-5};
  std::vector<ctl_tensor*> fwd_in = {x.reference.get(), nullptr};
  if (layer) fwd_in.push_back(nullptr);
  const std::vector<TensorPtr> fwd =
      reference_run(layer ? CTL_OP_LAYER_NORM : CTL_OP_RMS_NORM, fwd_in, &norm, layer ? 3 : 2);
  const std::vector<double> rstd = host_values(fwd.back().get());
  const std::vector<double> mean = layer ? host_values(fwd[1].get()) : std::vector<double>(rstd.size(), 0.0);
  Operand mean_in, rstd_in = h.input_from(stat_dtype, {rows}, rstd);
  if (layer) mean_in = h.input_from(stat_dtype, {rows}, mean);
  Operand dy = h.input(d, shape, Layout::kContiguous, Values::kFinite);
  Operand w = h.input(d, {n}, Layout::kContiguous, Values::kFinite);
  std::vector<const Operand*> ins = {&dy, &x};
  if (layer) ins.push_back(&mean_in);
  ins.push_back(&rstd_in);
  ins.push_back(&w);
  const std::vector<double> xv = host_values(x.reference.get()), gv = host_values(dy.reference.get());
  const std::vector<double> wv = host_values(w.reference.get());
  std::vector<Tolerance> tols = norm_backward_tolerances(layer, rows, n, xv, gv, wv, rstd, mean);
  if (!layer) tols.pop_back();  // rms_norm_backward has no dbias
  h.run(op, ins, &norm, tols.size(), tols);
}

// cross_entropy / cross_entropy_backward with MEAN over rows of valid i64 class ids:
// run_cross_entropy's tolerances.
void run_cross_entropy_rows(Harness& h, ctl_op_id op, ctl_dtype d, int64_t rows, int64_t classes) {
  auto& rng = h.context().rng;
  Operand logits = h.input(d, {rows, classes}, Layout::kContiguous, Values::kFinite);
  std::vector<double> t(static_cast<size_t>(rows));
  for (double& id : t) id = static_cast<double>(rng() % static_cast<uint64_t>(classes));
  Operand target = h.input_from(CTL_DTYPE_I64, {rows}, t);
  ctl_cross_entropy_attrs attrs{};
  attrs.struct_size = CTL_CROSS_ENTROPY_ATTRS_STRUCT_SIZE;
  attrs.reduction = CTL_REDUCTION_MEAN;
  const std::vector<double> z = host_values(logits.reference.get());
  std::vector<double> lse(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    const double* row = z.data() + r * classes;
    double m = -INFINITY, sum = 0;
    for (int64_t i = 0; i < classes; ++i) m = std::max(m, row[i]);
    for (int64_t i = 0; i < classes; ++i) sum += std::exp(row[i] - m);
    lse[static_cast<size_t>(r)] = m + std::log(sum);
  }
  std::vector<const Operand*> ins = {&logits, &target};
  if (op == CTL_OP_CROSS_ENTROPY) {
    double total = 0;
    for (int64_t r = 0; r < rows; ++r) {
      total += 1 + std::fabs(lse[static_cast<size_t>(r)]) +
               std::fabs(z[static_cast<size_t>(r * classes) + static_cast<size_t>(t[static_cast<size_t>(r)])]);
    }
    const Tolerance tol = sum_tolerance(static_cast<double>(rows + classes) + 16, {total / static_cast<double>(rows)});
    h.run(op, ins, &attrs, 1, {tol});
    return;
  }
  Operand grad = h.input(d, {}, Layout::kContiguous, Values::kFinite);
  ins.push_back(&grad);
  const double gr = host_values(grad.reference.get())[0] / static_cast<double>(rows);
  std::vector<double> s(z.size());
  for (int64_t r = 0; r < rows; ++r) {
    const double l = lse[static_cast<size_t>(r)];
    for (int64_t i = 0; i < classes; ++i) {
      const size_t e = static_cast<size_t>(r * classes + i);
      const double p = std::exp(z[e] - l);
      const double budget = p * (1 + 2 * (std::fabs(z[e]) + std::fabs(l)) / (static_cast<double>(classes) + 26));
      s[e] = std::fabs(gr) * (budget + (i == static_cast<int64_t>(t[static_cast<size_t>(r)]) ? 1 : 0));
    }
  }
  h.run(op, ins, &attrs, 1, {sum_tolerance(static_cast<double>(classes) + 24, s)});
}

// conv2d and its backward forms with a 1x1 kernel and one input channel (NULL attrs:
// stride 1, no padding): x [batch, 1, 1, width], weight [out_channels, 1, 1, 1]. run_conv's
// tolerance: kSum with S the same op on the reference on |inputs|.
void run_conv_rows(Harness& h, ctl_op_id op, ctl_dtype d, int64_t batch, int64_t out_channels, int64_t width) {
  Operand x = h.input(d, {batch, 1, 1, width}, Layout::kContiguous, Values::kFinite);
  Operand w = h.input(d, {out_channels, 1, 1, 1}, Layout::kContiguous, Values::kFinite);
  Operand dy;
  std::vector<const Operand*> ins = {&x, &w};
  std::vector<bool> abs_of = {true, true};  // whether input k enters S as |input| (else it is only a shape)
  double n_terms = 2;                       // one product and the bias
  if (op != CTL_OP_CONV2D) {
    dy = h.input(d, {batch, out_channels, 1, width}, Layout::kContiguous, Values::kFinite);
    ins = {&dy, &x, &w};
    const bool input_grad = op == CTL_OP_CONV2D_BACKWARD_INPUT;
    abs_of = {true, !input_grad, input_grad};
    n_terms = static_cast<double>(input_grad ? out_channels : batch * width);
  }
  h.run(op, ins, nullptr, 1, {sum_tolerance(n_terms, h.reference_abs_values(op, ins, abs_of, nullptr))});
}

// The pooling ops over 1x1 windows of x [2, 1, 1, width]: run_pool's tolerances.
void run_pool_rows(Harness& h, ctl_op_id op, ctl_dtype d, int64_t width) {
  ctl_pool2d_attrs attrs{};
  attrs.struct_size = CTL_POOL2D_ATTRS_STRUCT_SIZE;
  attrs.kernel[0] = attrs.kernel[1] = 1;
  attrs.stride[0] = attrs.stride[1] = 1;
  Operand x = h.input(d, {2, 1, 1, width}, Layout::kContiguous, Values::kFinite);
  if (op == CTL_OP_MAX_POOL2D) {
    h.run(op, {&x}, &attrs, 1, {Tol::kExact});
    return;
  }
  if (op == CTL_OP_AVG_POOL2D) {
    TensorPtr ax = h.reference_abs(x);
    h.run(op, {&x}, &attrs, 1, {sum_tolerance(1, h.reference_values(op, {ax.get()}, &attrs))});
    return;
  }
  Operand dy = h.input(d, {2, 1, 1, width}, Layout::kContiguous, Values::kFinite);
  TensorPtr ady = h.reference_abs(dy);
  const std::vector<double> scale = h.reference_values(op, {ady.get(), x.reference.get()}, &attrs);
  h.run(op, {&dy, &x}, &attrs, 1, {sum_tolerance(1, scale)});
}

void training_threshold_cases(Catalog& cat) {
  const Level level = Level::kTraining;
  const std::vector<int64_t> lanes = {15, 16, 17, 31, 32, 33};
  for (ctl_dtype d : kFloat) {
    // cpu: f32 vector lanes, parts of 32768; opencl grid stride.
    for (ctl_op_id op : {CTL_OP_ADAMW_STEP, CTL_OP_SGD_STEP}) {
      std::vector<int64_t> sizes = lanes;
      sizes.insert(sizes.end(), {kOpenclItems, kOpenclItems + 1, 32768, 32769});
      for (int64_t n : sizes) {
        cat.add_named(
            op, {d}, sized("n", n), shape_label({n}) + " parameters", [=](Harness& h) { run_optimizer(h, op, d, n); },
            level);
      }
    }
    // cpu: f32 vector forms (f16/bf16 through chunks of 256), parts of 4096; opencl grid
    // stride.
    for (ctl_op_id op : {CTL_OP_GELU_BACKWARD, CTL_OP_GELU_TANH_BACKWARD}) {
      std::vector<int64_t> sizes = lanes;
      sizes.insert(sizes.end(), {256, 257, 4096, 4097, kOpenclItems, kOpenclItems + 1});
      for (int64_t n : sizes) {
        cat.add_named(
            op, {d}, sized("n", n), shape_label({n}) + " dy & x", [=](Harness& h) { run_gelu_grad(h, op, d, n); },
            level);
      }
    }
    // Row lengths (cpu f32 lanes, vulkan's 128 invocations, opencl's local size up to 256)
    // and row counts (opencl's 512 groups, vulkan's 4096; cpu parts of 8192 / n rows).
    for (ctl_op_id op : {CTL_OP_SOFTMAX_BACKWARD, CTL_OP_LOG_SOFTMAX_BACKWARD}) {
      std::vector<int64_t> widths = lanes;
      widths.insert(widths.end(), {128, 129, 256, 257});
      for (int64_t n : widths) {
        cat.add_named(
            op, {d}, sized("row_", n), shape_label({3, n}) + " along the last axis",
            [=](Harness& h) {
              run_softmax_grad(h, op, d, {3, n});
            },
            level);
      }
      for (int64_t rows : {512, 513, 4096, 4097}) {
        cat.add_named(
            op, {d}, sized("rows_", rows), shape_label({rows, 5}) + " along the last axis",
            [=](Harness& h) {
              run_softmax_grad(h, op, d, {rows, 5});
            },
            level);
      }
    }
    // As above, and dweight / dbias over rows in blocks of 1024 (cpu, opencl), columns in
    // tasks of 256 (cpu) and groups of 64 (vulkan).
    for (ctl_op_id op : {CTL_OP_LAYER_NORM_BACKWARD, CTL_OP_RMS_NORM_BACKWARD}) {
      std::vector<int64_t> widths = lanes;
      widths.insert(widths.end(), {64, 65, 128, 129, 256, 257});
      for (int64_t n : widths) {
        cat.add_named(
            op, {d}, sized("row_", n), shape_label({3, n}) + " with weight, every output",
            [=](Harness& h) {
              run_norm_grad(h, op, d, {3, n});
            },
            level);
      }
      for (int64_t rows : {512, 513, 1024, 1025, 4096, 4097}) {
        cat.add_named(
            op, {d}, sized("rows_", rows), shape_label({rows, 5}) + " with weight, every output",
            [=](Harness& h) {
              run_norm_grad(h, op, d, {rows, 5});
            },
            level);
      }
    }
    // Classes (cpu f32 lanes; opencl and vulkan groups of 128 over a row's classes), rows
    // (opencl's compute units x 64 groups and its total folded by one group of 128, 128 on
    // 2 cores; vulkan's 4096 groups; cpu loss blocks of 32768 / C rows, rows counted in parts
    // of 32768).
    for (ctl_op_id op : {CTL_OP_CROSS_ENTROPY, CTL_OP_CROSS_ENTROPY_BACKWARD}) {
      const auto add = [&](const std::string& name, int64_t rows, int64_t classes) {
        cat.add_named(
            op, {d, CTL_DTYPE_I64}, name, shape_label({rows, classes}) + " logits, i64 target, mean",
            [=](Harness& h) { run_cross_entropy_rows(h, op, d, rows, classes); }, level);
      };
      std::vector<int64_t> classes = lanes;
      classes.insert(classes.end(), {128, 129});
      for (int64_t c : classes) add(sized("classes_", c), 3, c);
      for (int64_t rows : {128, 129, 4096, 4097, 6553, 6554}) add(sized("rows_", rows), rows, 5);
      for (int64_t rows : {32768, 32769}) add(sized("rows_", rows) + "_classes_2", rows, 2);
    }
    // Output elements: cpu parts of 8192 multiply-adds (one row of `width` per (n, o) or
    // (n, c) plane, one weight per output channel); opencl grid stride.
    for (ctl_op_id op : {CTL_OP_CONV2D, CTL_OP_CONV2D_BACKWARD_INPUT}) {
      for (int64_t width : {4096, 4097, 8192, 8193}) {
        cat.add_named(
            op, {d}, sized("width_", width), "x [2,1,1," + std::to_string(width) + "], 1x1 kernel, one channel",
            [=](Harness& h) { run_conv_rows(h, op, d, 2, 1, width); }, level);
      }
    }
    for (int64_t o : {8192, 8193, 16384, 16385}) {
      cat.add_named(
          CTL_OP_CONV2D_BACKWARD_WEIGHT, {d}, sized("out_channels_", o),
          "x [1,1,1,1], weight [" + std::to_string(o) + ",1,1,1]",
          [=](Harness& h) { run_conv_rows(h, CTL_OP_CONV2D_BACKWARD_WEIGHT, d, 1, o, 1); }, level);
    }
    for (ctl_op_id op :
         {CTL_OP_MAX_POOL2D, CTL_OP_MAX_POOL2D_BACKWARD, CTL_OP_AVG_POOL2D, CTL_OP_AVG_POOL2D_BACKWARD}) {
      for (int64_t width : {4096, 4097, 8192, 8193}) {
        cat.add_named(
            op, {d}, sized("width_", width), "x [2,1,1," + std::to_string(width) + "], 1x1 windows",
            [=](Harness& h) { run_pool_rows(h, op, d, width); }, level);
      }
    }
  }
}

// ---- lavapipe's loop limiter ---------------------------------------------------------------
//
// Mesa's lavapipe silently ends every loop of a shader invocation once 65,535 loop iterations
// have run in it (plugins/vulkan/README.md, "Loop budget"): a kernel whose per-invocation
// loop grows with a size is right below that and wrong above it, whatever the dtype. The
// Vulkan plugin splits such loops into parts of at most kLoopBudget (16,384) iterations;
// these cases cross both the split and the limit itself, for each kernel that splits.
//
// A dropped tail of 5% of 70,000 random terms is within the sum bound (n + 2) u S, which
// grows with n: these cases hold values in {-1, 0, 1}, whose sums every correct device
// computes exactly (partial sums stay far below 2^24), so the results are compared bit for
// bit and a dropped term shows.

// `count` values in {-1, 0, 1} from the case's generator, as an input of `shape`.
Operand unit_values(Harness& h, ctl_dtype d, const std::vector<int64_t>& shape) {
  auto& rng = h.context().rng;
  std::vector<double> v(static_cast<size_t>(numel_of(shape)));
  for (double& x : v) x = static_cast<double>(static_cast<int>(rng() % 3) - 1);
  return h.input_from(d, shape, v);
}

void loop_budget_cases(Catalog& cat) {
  for (ctl_dtype d : kMatmul) {
    // K: parts of 16384 (16385 is two), and one product past the limit (70000 gave 65535).
    for (auto [k, m, n] : {std::array<int64_t, 3>{16385, 3, 5}, std::array<int64_t, 3>{70000, 2, 3}}) {
      cat.add_named(CTL_OP_MATMUL, {d}, sized("k", k),
                    shape_label({m, k}) + " @ " + shape_label({k, n}) + " of values in {-1, 0, 1}: exact",
                    [=](Harness& h) {
                      Operand a = unit_values(h, d, {m, k});
                      Operand b = unit_values(h, d, {k, n});
                      h.run(CTL_OP_MATMUL, {&a, &b}, nullptr, 1, {Tol::kExact});
                    });
    }
  }
  // One output over a long row: 600000 crosses a part (523264 elements of a rank-1 row);
  // 4194305 is past where the unsplit kernel stopped (a sum of 2^22 ones gave 65532).
  // logsumexp of zeros is log(n) from exp(0) = 1, so a dropped term shows there too.
  const auto long_row = [&](ctl_op_id op, ctl_dtype d, int64_t n, Level level) {
    const std::string values = op == CTL_OP_LOGSUMEXP ? "zeros"
                               : op == CTL_OP_SUM || op == CTL_OP_MEAN ? "values in {-1, 0, 1}"
                                                                       : "values in [-2, 2]";
    cat.add_named(
        op, {d}, sized("row_", n), shape_label({1, n}) + " of " + values + " along axis 1",
        [=](Harness& h) {
          // max, min and their indices are exact on any values: random ones, whose maximum
          // lies anywhere along the row.
          const bool extreme = op == CTL_OP_MAX || op == CTL_OP_MIN || op == CTL_OP_ARGMAX || op == CTL_OP_ARGMIN;
          Operand x = op == CTL_OP_LOGSUMEXP ? h.input_from(d, {1, n}, std::vector<double>(static_cast<size_t>(n), 0.0))
                      : extreme             ? h.input(d, {1, n}, Layout::kContiguous, Values::kFinite)
                                            : unit_values(h, d, {1, n});
          ctl_reduce_attrs attrs{};
          attrs.struct_size = CTL_REDUCE_ATTRS_STRUCT_SIZE;
          attrs.axis_count = 1;
          attrs.axes[0] = 1;
          const Tol tol = op == CTL_OP_MEAN ? Tol::kArith : op == CTL_OP_LOGSUMEXP ? Tol::kTranscendental : Tol::kExact;
          h.run(op, {&x}, &attrs, 1, {tol});
        },
        level);
  };
  for (ctl_op_id op : {CTL_OP_SUM, CTL_OP_MAX, CTL_OP_MIN, CTL_OP_ARGMAX, CTL_OP_ARGMIN}) {
    for (ctl_dtype d : kNumeric) long_row(op, d, 600000, Level::kCore);
  }
  for (ctl_op_id op : {CTL_OP_MEAN, CTL_OP_LOGSUMEXP}) {
    for (ctl_dtype d : kFloat) long_row(op, d, 600000, Level::kCore);
  }
  for (ctl_op_id op : {CTL_OP_SUM, CTL_OP_MEAN, CTL_OP_ARGMAX, CTL_OP_LOGSUMEXP}) {
    long_row(op, CTL_DTYPE_F32, 4194305, Level::kFull);
  }
  long_row(CTL_OP_SUM, CTL_DTYPE_I32, 4194305, Level::kFull);
  for (ctl_dtype d : kFloat) {
    // dweight and dbias: one invocation walks every row of its column (about 2730 rows a
    // part, and past the limit from about 11000 rows).
    for (ctl_op_id op : {CTL_OP_LAYER_NORM_BACKWARD, CTL_OP_RMS_NORM_BACKWARD}) {
      cat.add_named(
          op, {d}, "rows_12000", shape_label({12000, 4}) + " with weight, every output",
          [=](Harness& h) { run_norm_grad(h, op, d, {12000, 4}); }, Level::kTraining);
    }
    // conv2d_backward_weight: a weight element's sum runs over N x OH x OW terms, 90000 here.
    cat.add_named(
        CTL_OP_CONV2D_BACKWARD_WEIGHT, {d}, "terms_90000",
        "dy [300,1,1,300] and x [300,1,1,300] of values in {-1, 0, 1}, weight [1,1,1,1]: exact",
        [=](Harness& h) {
          Operand dy = unit_values(h, d, {300, 1, 1, 300});
          Operand x = unit_values(h, d, {300, 1, 1, 300});
          Operand w = unit_values(h, d, {1, 1, 1, 1});
          h.run(CTL_OP_CONV2D_BACKWARD_WEIGHT, {&dy, &x, &w}, nullptr, 1, {Tol::kExact});
        },
        Level::kTraining);
  }
  for (ctl_dtype d : kNumeric) {
    // scatter_add: each column walks every index position (2048 a part; past the limit from
    // about 15000).
    cat.add_named(CTL_OP_SCATTER_ADD, {d, CTL_DTYPE_I64}, "positions_30000",
                  "[16] target, 30000 i64 positions along axis 0, values in {-1, 0, 1}: exact", [=](Harness& h) {
                    Operand target = unit_values(h, d, {16});
                    Operand i = h.input(CTL_DTYPE_I64, {30000}, Layout::kContiguous, Values::kIndex);
                    Operand src = unit_values(h, d, {30000});
                    ctl_axis_attrs attrs{CTL_AXIS_ATTRS_STRUCT_SIZE, 0};
                    h.run(CTL_OP_SCATTER_ADD, {&target, &i, &src}, &attrs, 1, {Tol::kExact});
                  });
  }
}

}  // namespace

void threshold_cases(Catalog& cat) {
  for (ctl_dtype d : kMatmul) matmul_threshold_cases(cat, d);
  for (ctl_op_id op : {CTL_OP_SUM, CTL_OP_MAX, CTL_OP_MIN, CTL_OP_ARGMAX, CTL_OP_ARGMIN}) {
    for (ctl_dtype d : kNumeric) reduce_threshold_cases(cat, op, d);
  }
  for (ctl_op_id op : {CTL_OP_MEAN, CTL_OP_LOGSUMEXP}) {
    for (ctl_dtype d : kFloat) reduce_threshold_cases(cat, op, d);
  }
  for (ctl_op_id op : {CTL_OP_SOFTMAX, CTL_OP_LOG_SOFTMAX, CTL_OP_LAYER_NORM, CTL_OP_RMS_NORM}) {
    for (ctl_dtype d : kFloat) norm_threshold_cases(cat, op, d);
  }
  elementwise_threshold_cases(cat);
  movement_threshold_cases(cat);
  training_threshold_cases(cat);
  loop_budget_cases(cat);
}

}  // namespace catalyst::conformance
