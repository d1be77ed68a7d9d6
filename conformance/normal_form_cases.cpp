// normal_form_cases.cpp — the normal form's answers (the comment above ctl_op_call in
// catalyst_plugin.h), each held by calls that only a plugin coded for that answer passes.
// Every call goes through the core, as a program's would, so the plugin sees exactly what
// the core makes of it:
//
//  - matmul: operands (and the bias) arrive at the output's rank, broadcast batch axes at
//    stride 0. "<matmul>.<dtype>.broadcast_*": a 2-D operand against a batched one, and
//    size-1 batch axes. The broken plugin matmul-dense-batch, which walks an operand at the
//    output's rank with packed batch strides, fails them.
//  - layer_norm, rms_norm and their backward forms: output_count is the caller's (1 up to
//    the full count; layer_norm 1 or 3, since mean and rstd come as a pair) and entries
//    below it may be NULL; an output is absent when its index
//    is at or past output_count or its entry is NULL. "output_count_<n>" cases give fewer
//    outputs, "null_*" cases the full count with NULL entries. norm-needs-full-output-count
//    fails the first kind, norm-outputs-unchecked the second.
//  - attrs: every op with an attribute struct receives it, the omitted ones filled with the
//    documented defaults. "<op>.f32.null_attrs" passes NULL for every op whose attrs may be
//    NULL (not cast, which ctl_op_run cannot size without them, nor the ops that require
//    theirs: arange, random, adamw_step, sgd_step, pooling, fused_elementwise). A plugin
//    coded for the other reading ("NULL means the defaults, apply them yourself") passes
//    them too, since it handles explicit structs anyway: these cases hold the core to its
//    answer. The plugin trusts-attrs, which reads attrs with no NULL check, passes them.
//  - a rank-0 tensor is never given an axis: the core refuses it for every op that takes
//    one, so no plugin sees such a call and no case here can show a plugin's reading.
#include <cmath>
#include <string>
#include <vector>

#include "catalog.h"
#include "values.h"

namespace catalyst::conformance {
namespace {

constexpr ctl_dtype kF32 = CTL_DTYPE_F32;

// ---- matmul operands at the output's rank -------------------------------------------------

// a @ b (+ bias) with attrs (NULL: the defaults), against the reference with the sum bound.
void run_matmul(Harness& h, const std::vector<int64_t>& a_shape, const std::vector<int64_t>& b_shape, bool bias,
                const ctl_matmul_attrs* attrs) {
  Operand a = h.input(kF32, a_shape, Layout::kContiguous, Values::kFinite);
  Operand b = h.input(kF32, b_shape, Layout::kContiguous, Values::kFinite);
  Operand c = h.input(kF32, {b_shape.back()}, Layout::kContiguous, Values::kFinite);
  std::vector<const Operand*> ins = {&a, &b};
  if (bias) ins.push_back(&c);
  Tolerance tol(Tol::kSum);
  tol.n = static_cast<double>(a_shape.back()) + 4;
  tol.scale = h.reference_abs_values(CTL_OP_MATMUL, ins, {}, attrs);
  h.run(CTL_OP_MATMUL, ins, attrs, 1, {tol});
}

void matmul_rank_cases(Catalog& cat) {
  struct Variant {
    const char* name;
    std::vector<int64_t> a, b;
    bool bias;
    const char* label;
  };
  const std::vector<Variant> variants = {
      {"broadcast_a_rank2", {3, 4}, {2, 4, 5}, false, "a [3,4] @ b [2,4,5]: a arrives as [2,3,4] with batch stride 0"},
      {"broadcast_b_rank2", {2, 3, 4}, {4, 5}, false, "a [2,3,4] @ b [4,5]: b arrives as [2,4,5] with batch stride 0"},
      {"broadcast_size1_batch",
       {2, 1, 3, 4},
       {3, 4, 5},
       true,
       "a [2,1,3,4] @ b [3,4,5] + bias [5]: every operand arrives as rank 4, stride 0 on a's axis 1, b's axis 0 "
       "and the bias's first three"},
  };
  for (const Variant& v : variants) {
    cat.add_named(CTL_OP_MATMUL, {kF32}, v.name, v.label, [=](Harness& h) {
      ctl_matmul_attrs attrs{};
      attrs.struct_size = CTL_MATMUL_ATTRS_STRUCT_SIZE;
      run_matmul(h, v.a, v.b, v.bias, &attrs);
    });
  }
}

// ---- the norms' outputs: fewer than all, or NULL entries ----------------------------------

// layer_norm / rms_norm of a [5,8] x with weight (and bias), output_count outputs of which
// those `requested` false are NULL entries.
void run_norm(Harness& h, ctl_op_id op, size_t output_count, const std::vector<bool>& requested,
              const ctl_norm_attrs* attrs) {
  const bool layer = op == CTL_OP_LAYER_NORM;
  Operand x = h.input(kF32, {5, 8}, Layout::kContiguous, Values::kFinite);
  Operand w = h.input(kF32, {8}, Layout::kContiguous, Values::kFinite);
  Operand b = h.input(kF32, {8}, Layout::kContiguous, Values::kFinite);
  std::vector<const Operand*> ins = {&x, &w};
  if (layer) ins.push_back(&b);
  Tolerance tol(Tol::kRowNorm);
  tol.n = 8;
  h.run(op, ins, attrs, output_count, {tol}, OutputLayout::kContiguous, {}, requested);
}

// layer_norm_backward / rms_norm_backward of [5,8] rows with weight, the statistics the
// forward op gives on the reference, and output_count outputs (`requested` false: NULL).
void run_norm_backward(Harness& h, ctl_op_id op, size_t output_count, const std::vector<bool>& requested,
                       const ctl_norm_attrs* attrs) {
  const bool layer = op == CTL_OP_LAYER_NORM_BACKWARD;
  const int64_t rows = 5, n = 8;
  Operand x = h.input(kF32, {rows, n}, Layout::kContiguous, Values::kFinite);
  std::vector<ctl_tensor*> fwd_in = {x.reference.get(), nullptr};
  if (layer) fwd_in.push_back(nullptr);
  const std::vector<TensorPtr> fwd =
      reference_run(layer ? CTL_OP_LAYER_NORM : CTL_OP_RMS_NORM, fwd_in, nullptr, layer ? 3 : 2);
  const std::vector<double> rstd = host_values(fwd.back().get());
  const std::vector<double> mean = layer ? host_values(fwd[1].get()) : std::vector<double>(rstd.size(), 0.0);
  Operand mean_in, rstd_in;
  if (layer) mean_in = h.input_from(kF32, {rows}, mean);
  rstd_in = h.input_from(kF32, {rows}, rstd);
  Operand dy = h.input(kF32, {rows, n}, Layout::kContiguous, Values::kFinite);
  Operand w = h.input(kF32, {n}, Layout::kContiguous, Values::kFinite);
  std::vector<const Operand*> ins = {&dy, &x};
  if (layer) ins.push_back(&mean_in);
  ins.push_back(&rstd_in);
  ins.push_back(&w);
  const std::vector<Tolerance> tols =
      norm_backward_tolerances(layer, rows, n, host_values(x.reference.get()), host_values(dy.reference.get()),
                               host_values(w.reference.get()), rstd, mean);
  h.run(op, ins, attrs, output_count, tols, OutputLayout::kContiguous, {}, requested);
}

void norm_output_cases(Catalog& forward, Catalog& backward) {
  struct Variant {
    ctl_op_id op;
    const char* name;
    size_t count;
    std::vector<bool> requested;
    const char* label;
  };
  const std::vector<Variant> variants = {
      {CTL_OP_LAYER_NORM, "output_count_1", 1, {}, "[5,8] with weight and bias; output_count 1 (y)"},
      {CTL_OP_LAYER_NORM,
       "null_mean",
       3,
       {true, false, true},
       "[5,8] with weight and bias; output_count 3 with mean NULL (y, rstd)"},
      {CTL_OP_LAYER_NORM,
       "null_statistics",
       3,
       {true, false, false},
       "[5,8] with weight and bias; output_count 3 with mean and rstd NULL (y)"},
      {CTL_OP_RMS_NORM, "output_count_1", 1, {}, "[5,8] with weight; output_count 1 (y)"},
      {CTL_OP_RMS_NORM, "null_rstd", 2, {true, false}, "[5,8] with weight; output_count 2 with rstd NULL (y)"},
      {CTL_OP_LAYER_NORM_BACKWARD, "output_count_1", 1, {}, "[5,8] with weight; output_count 1 (dx)"},
      {CTL_OP_LAYER_NORM_BACKWARD, "output_count_2", 2, {}, "[5,8] with weight; output_count 2 (dx, dweight)"},
      {CTL_OP_LAYER_NORM_BACKWARD,
       "null_dweight",
       3,
       {true, false, true},
       "[5,8] with weight; output_count 3 with dweight NULL (dx, dbias)"},
      {CTL_OP_RMS_NORM_BACKWARD, "output_count_1", 1, {}, "[5,8] with weight; output_count 1 (dx)"},
      {CTL_OP_RMS_NORM_BACKWARD,
       "null_dweight",
       2,
       {true, false},
       "[5,8] with weight; output_count 2 with dweight NULL (dx)"},
  };
  for (const Variant& v : variants) {
    const bool is_backward = v.op == CTL_OP_LAYER_NORM_BACKWARD || v.op == CTL_OP_RMS_NORM_BACKWARD;
    Catalog& cat = is_backward ? backward : forward;
    cat.add_named(v.op, {kF32}, v.name, v.label, [=](Harness& h) {
      const ctl_norm_attrs attrs{CTL_NORM_ATTRS_STRUCT_SIZE, 0.0};
      if (is_backward) {
        run_norm_backward(h, v.op, v.count, v.requested, &attrs);
      } else {
        run_norm(h, v.op, v.count, v.requested, &attrs);
      }
    });
  }
}

// ---- attrs NULL from the caller ------------------------------------------------------------

constexpr const char* kNullAttrs = "null_attrs";

void forward_null_attrs_cases(Catalog& cat) {
  for (ctl_op_id op : {CTL_OP_SUM, CTL_OP_MEAN, CTL_OP_MAX, CTL_OP_MIN, CTL_OP_LOGSUMEXP}) {
    cat.add_named(op, {kF32}, kNullAttrs, "[4,6] with attrs NULL: every axis", [=](Harness& h) {
      Operand x = h.input(kF32, {4, 6}, Layout::kContiguous, Values::kFinite);
      Tolerance tol(Tol::kExact);
      if (op == CTL_OP_SUM || op == CTL_OP_MEAN) {
        tol = Tolerance(Tol::kSum);
        tol.n = 24;
        tol.scale = h.reference_abs_values(op, {&x}, {}, nullptr);
      } else if (op == CTL_OP_LOGSUMEXP) {
        tol = Tolerance(Tol::kRowNorm);
        tol.n = 24;
      }
      h.run(op, {&x}, nullptr, 1, {tol});
    });
  }
  cat.add_named(CTL_OP_MATMUL, {kF32}, kNullAttrs, "[2,3,4] @ [4,5] + bias with attrs NULL: alpha 1, no transposes",
                [](Harness& h) {
                  run_matmul(h, {2, 3, 4}, {4, 5}, true, nullptr);
                });
  for (ctl_op_id op : {CTL_OP_SOFTMAX, CTL_OP_LOG_SOFTMAX}) {
    cat.add_named(op, {kF32}, kNullAttrs, "[3,4,5] with attrs NULL: the last axis", [=](Harness& h) {
      Operand x = h.input(kF32, {3, 4, 5}, Layout::kContiguous, Values::kFinite);
      Tolerance tol(Tol::kRowNorm);
      tol.n = 5;
      h.run(op, {&x}, nullptr, 1, {tol});
    });
  }
  cat.add_named(CTL_OP_LAYER_NORM, {kF32}, kNullAttrs, "[5,8] with weight and bias, attrs NULL: eps 1e-5, every output",
                [](Harness& h) { run_norm(h, CTL_OP_LAYER_NORM, 3, {}, nullptr); });
  cat.add_named(CTL_OP_RMS_NORM, {kF32}, kNullAttrs, "[5,8] with weight, attrs NULL: eps 1e-5, every output",
                [](Harness& h) { run_norm(h, CTL_OP_RMS_NORM, 2, {}, nullptr); });
  cat.add_named(CTL_OP_CONCAT, {kF32}, kNullAttrs, "[2,3] & [4,3] with attrs NULL: axis 0", [](Harness& h) {
    Operand a = h.input(kF32, {2, 3}, Layout::kContiguous, Values::kGeneral);
    Operand b = h.input(kF32, {4, 3}, Layout::kContiguous, Values::kGeneral);
    h.run(CTL_OP_CONCAT, {&a, &b}, nullptr, 1, {Tol::kExact});
  });
  cat.add_named(CTL_OP_GATHER, {kF32, CTL_DTYPE_I64}, kNullAttrs, "[6,3] by a [4] i64 index with attrs NULL: axis 0",
                [](Harness& h) {
                  Operand x = h.input(kF32, {6, 3}, Layout::kContiguous, Values::kGeneral);
                  Operand i = h.input(CTL_DTYPE_I64, {4}, Layout::kContiguous, Values::kIndex);
                  h.run(CTL_OP_GATHER, {&x, &i}, nullptr, 1, {Tol::kExact});
                });
  cat.add_named(CTL_OP_SCATTER_ADD, {kF32, CTL_DTYPE_I64}, kNullAttrs,
                "[6,3] target, 5 positions with attrs NULL: axis 0", [](Harness& h) {
                  Operand target = h.input(kF32, {6, 3}, Layout::kContiguous, Values::kFinite);
                  Operand i = h.input(CTL_DTYPE_I64, {5}, Layout::kContiguous, Values::kIndex);
                  Operand src = h.input(kF32, {5, 3}, Layout::kContiguous, Values::kFinite);
                  Tolerance tol(Tol::kSum);
                  tol.n = 5 + 1;
                  tol.scale.assign(18, 2.0 * (5 + 1));  // |values| <= 2, at most 5 terms and the target
                  h.run(CTL_OP_SCATTER_ADD, {&target, &i, &src}, nullptr, 1, {tol});
                });
  cat.add_named(CTL_OP_FILL, {kF32}, kNullAttrs, "[3,4] with attrs NULL: 0", [](Harness& h) {
    h.run_creation(CTL_OP_FILL, kF32, {3, 4}, nullptr, Tol::kExact, OutputLayout::kContiguous);
  });
}

// logits [R, C] in [-2, 2] and class ids in [0, C), on both devices.
struct CrossEntropyInputs {
  Operand logits, target;
};

CrossEntropyInputs cross_entropy_inputs(Harness& h, int64_t rows, int64_t classes) {
  auto& rng = h.context().rng;
  std::vector<double> ids(static_cast<size_t>(rows));
  for (double& t : ids) t = static_cast<double>(rng() % static_cast<uint64_t>(classes));
  return {h.input(kF32, {rows, classes}, Layout::kContiguous, Values::kFinite),
          h.input_from(CTL_DTYPE_I64, {rows}, ids)};
}

void training_null_attrs_cases(Catalog& cat) {
  constexpr int64_t kRows = 4, kClasses = 6;
  // The loss's S bound per row, 1 + |lse| + |z_t|, at most 1 + (2 + log C) + 2 for logits in
  // [-2, 2]: conformance/README.md's cross_entropy row, taken at its largest.
  const double row_scale = 5 + std::log(static_cast<double>(kClasses));
  cat.add_named(CTL_OP_CROSS_ENTROPY, {kF32, CTL_DTYPE_I64}, kNullAttrs,
                "[4,6] logits, i64 targets, attrs NULL: the mean, nothing ignored", [=](Harness& h) {
                  CrossEntropyInputs in = cross_entropy_inputs(h, kRows, kClasses);
                  const Tolerance tol = sum_tolerance(kRows + kClasses + 16, {row_scale});
                  h.run(CTL_OP_CROSS_ENTROPY, {&in.logits, &in.target}, nullptr, 1, {tol});
                });
  cat.add_named(CTL_OP_CROSS_ENTROPY_BACKWARD, {kF32, CTL_DTYPE_I64}, kNullAttrs,
                "[4,6] logits, i64 targets, grad_loss [] 1.5, attrs NULL: the mean", [=](Harness& h) {
                  CrossEntropyInputs in = cross_entropy_inputs(h, kRows, kClasses);
                  Operand g = h.input_from(kF32, {}, {1.5});
                  // |g| / R (p_i (1 + 2 (|z| + |lse|) / (C + 26)) + [i = t]) <= |g| / R * 3.
                  const std::vector<double> scale(kRows * kClasses, 1.5 / kRows * 3);
                  h.run(CTL_OP_CROSS_ENTROPY_BACKWARD, {&in.logits, &in.target, &g}, nullptr, 1,
                        {sum_tolerance(kClasses + 24, scale)});
                });
  for (ctl_op_id op : {CTL_OP_SOFTMAX_BACKWARD, CTL_OP_LOG_SOFTMAX_BACKWARD}) {
    cat.add_named(op, {kF32}, kNullAttrs, "[3,5] y and dy with attrs NULL: the last axis", [=](Harness& h) {
      const bool log = op == CTL_OP_LOG_SOFTMAX_BACKWARD;
      Operand x = h.input(kF32, {3, 5}, Layout::kContiguous, Values::kFinite);
      const std::vector<TensorPtr> fwd =
          reference_run(log ? CTL_OP_LOG_SOFTMAX : CTL_OP_SOFTMAX, {x.reference.get()}, nullptr, 1);
      const std::vector<double> yv = host_values(fwd[0].get());
      Operand y = h.input_from(kF32, {3, 5}, yv);
      Operand dy = h.input(kF32, {3, 5}, Layout::kContiguous, Values::kFinite);
      const std::vector<double> g = host_values(dy.reference.get());
      // conformance/README.md's softmax_backward and log_softmax_backward rows.
      std::vector<double> s(15);
      for (size_t r = 0; r < 3; ++r) {
        double line = 0;
        for (size_t k = 0; k < 5; ++k) line += log ? std::fabs(g[r * 5 + k]) : std::fabs(g[r * 5 + k] * yv[r * 5 + k]);
        for (size_t k = 0; k < 5; ++k) {
          const size_t e = r * 5 + k;
          s[e] = log ? std::fabs(g[e]) + std::exp(yv[e]) * line : yv[e] * (std::fabs(g[e]) + line);
        }
      }
      h.run(op, {&y, &dy}, nullptr, 1, {sum_tolerance(log ? 15 : 9, s)});
    });
  }
  cat.add_named(CTL_OP_LAYER_NORM_BACKWARD, {kF32}, kNullAttrs, "[5,8] with weight, attrs NULL (unused): every output",
                [](Harness& h) { run_norm_backward(h, CTL_OP_LAYER_NORM_BACKWARD, 3, {}, nullptr); });
  cat.add_named(CTL_OP_RMS_NORM_BACKWARD, {kF32}, kNullAttrs, "[5,8] with weight, attrs NULL (unused): every output",
                [](Harness& h) { run_norm_backward(h, CTL_OP_RMS_NORM_BACKWARD, 2, {}, nullptr); });
  // conv2d and its backward forms: x [2,3,6,6], weight [4,3,3,3], attrs NULL: stride 1, no
  // padding, dilation 1, one group; dy [2,4,4,4].
  for (ctl_op_id op : {CTL_OP_CONV2D, CTL_OP_CONV2D_BACKWARD_INPUT, CTL_OP_CONV2D_BACKWARD_WEIGHT}) {
    cat.add_named(
        op, {kF32}, kNullAttrs,
        "x [2,3,6,6], weight [4,3,3,3], attrs NULL: stride 1, no padding, dilation 1, one group", [=](Harness& h) {
          Operand x = h.input(kF32, {2, 3, 6, 6}, Layout::kContiguous, Values::kFinite);
          Operand w = h.input(kF32, {4, 3, 3, 3}, Layout::kContiguous, Values::kFinite);
          if (op == CTL_OP_CONV2D) {
            Operand bias = h.input(kF32, {4}, Layout::kContiguous, Values::kFinite);
            const std::vector<const Operand*> ins = {&x, &w, &bias};
            const Tolerance tol = sum_tolerance(3 * 9 + 1, h.reference_abs_values(op, ins, {}, nullptr));
            h.run(op, ins, nullptr, 1, {tol});
            return;
          }
          Operand dy = h.input(kF32, {2, 4, 4, 4}, Layout::kContiguous, Values::kFinite);
          const std::vector<const Operand*> ins = {&dy, &x, &w};
          const bool input = op == CTL_OP_CONV2D_BACKWARD_INPUT;
          // The abs of the operands that enter the products: dy and weight, or dy and x.
          const Tolerance tol =
              sum_tolerance(input ? 4 * 9 : 2 * 16, h.reference_abs_values(op, ins, {true, !input, input}, nullptr));
          h.run(op, ins, nullptr, 1, {tol});
        });
  }
}

}  // namespace

void add_normal_form_cases(std::vector<Case>& out) {
  Catalog core(out, Level::kCore);
  Catalog training(out, Level::kTraining);
  matmul_rank_cases(core);
  norm_output_cases(core, training);
  forward_null_attrs_cases(core);
  training_null_attrs_cases(training);
}

}  // namespace catalyst::conformance
