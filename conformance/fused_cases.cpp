// fused_cases.cpp — CTL_OP_FUSED_ELEMENTWISE (ABI 1.5): fixed programs (a chain of unary
// ops, a binary tree, the gelu backward forms inside, broadcast inputs, strided inputs and
// outputs, special values, the functions of positive arguments) in every float dtype, compared
// with the reference's fused op, whose result is the reference's unfused chain bit for bit.
//
// The op is optional (graph passes make it; the core runs the separate ops where a plugin
// does not claim it), so every case is at level full and a plugin that answers UNSUPPORTED
// has the case counted as unsupported, not failed. The bad programs are contract cases
// (contract_cases.cpp, bad_calls.fused_*).
//
// Tolerance: a device computes each instruction within that op's own bound, and the error
// of each result flows into the next. The programs use ops whose derivatives are bounded on
// the values they meet (or, for exp, div, pow and the reciprocals, whose error is relative
// to a result the scale holds), so the error of the output stays within a few ulps per
// instruction of the size of the values on the way: kSum with n = 8 per instruction and
// S = r (1 + sum over the instructions of |result|), the results taken from the reference's
// separate ops, and r = u / u_acc, so that f16 and bf16, which round every result to their
// own precision, get their own ulps rather than f32's.
#include <cmath>
#include <string>
#include <vector>

#include "catalog.h"

namespace catalyst::conformance {
namespace {

struct Program {
  const char* name;
  const char* words;  // the program in words, for the label
  std::vector<ctl_fused_instruction> code;
};

ctl_fused_elementwise_attrs attrs_of(const Program& p) {
  ctl_fused_elementwise_attrs a{};
  a.struct_size = CTL_FUSED_ELEMENTWISE_ATTRS_STRUCT_SIZE;
  a.instruction_count = static_cast<uint32_t>(p.code.size());
  for (size_t i = 0; i < p.code.size(); ++i) a.program[i] = p.code[i];
  return a;
}

bool binary(ctl_op_id op) {
  return (op >= CTL_OP_ADD && op <= CTL_OP_MINIMUM) || op == CTL_OP_GELU_BACKWARD || op == CTL_OP_GELU_TANH_BACKWARD;
}

std::vector<int64_t> shape_of(const ctl_tensor* t) {
  std::vector<int64_t> s(ctl_tensor_rank(t));
  for (size_t i = 0; i < s.size(); ++i) s[i] = ctl_tensor_dim(t, static_cast<int64_t>(i));
  return s;
}

// Values of t (shape `have`) at every row-major element of `want` (NumPy broadcasting).
std::vector<double> broadcast_values(const ctl_tensor* t, const std::vector<int64_t>& want) {
  const ctl_dtype d = ctl_tensor_dtype(t);
  ctl_tensor* dense = nullptr;
  check_ok(ctl_tensor_contiguous(const_cast<ctl_tensor*>(t), &dense), "internal: a reference intermediate");
  TensorPtr owner(dense);
  std::vector<unsigned char> bytes(static_cast<size_t>(ctl_tensor_numel(dense)) * ctl_dtype_size(d));
  check_ok(ctl_tensor_to_host(dense, bytes.data(), bytes.size()), "internal: reading a reference intermediate");
  const std::vector<int64_t> have = shape_of(t);
  const size_t lead = want.size() - have.size();
  std::vector<double> out(static_cast<size_t>(numel_of(want)));
  for (size_t e = 0; e < out.size(); ++e) {
    int64_t rest = static_cast<int64_t>(e), index = 0, stride = 1;
    for (size_t axis = want.size(); axis-- > 0;) {
      const int64_t i = rest % want[axis];
      rest /= want[axis];
      if (axis >= lead) {
        const int64_t size = have[axis - lead];
        index += (size == 1 ? 0 : i) * stride;
        stride *= size;
      }
    }
    out[e] = load(bytes.data() + static_cast<size_t>(index) * ctl_dtype_size(d), d);
  }
  return out;
}

// The case's tolerance (see the top of the file), from the program run as separate ops on
// the reference device.
Tolerance fused_tolerance(const std::vector<const Operand*>& inputs, const Program& p, ctl_dtype d) {
  std::vector<TensorPtr> owned;
  std::vector<ctl_tensor*> regs;
  std::vector<int64_t> shape;
  for (const Operand* in : inputs) {
    regs.push_back(in->reference.get());
    const std::vector<int64_t> s = shape_of(in->reference.get());
    // The output's shape: every input broadcast together.
    if (s.size() > shape.size()) shape.insert(shape.begin(), s.size() - shape.size(), 1);
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& have = shape[shape.size() - s.size() + i];
      if (have == 1) have = s[i];
    }
  }
  std::vector<double> scale(static_cast<size_t>(numel_of(shape)), 1.0);
  for (const ctl_fused_instruction& in : p.code) {
    ctl_tensor* args[2] = {regs[in.a], regs[in.b]};
    ctl_tensor* out = nullptr;
    check_ok(ctl_op_run(in.op, binary(in.op) ? 2 : 1, args, nullptr, 1, &out),
             std::string("internal: the reference's ") + ctl_op_name(in.op));
    owned.emplace_back(out);
    regs.push_back(out);
    const std::vector<double> v = broadcast_values(out, shape);
    for (size_t e = 0; e < scale.size(); ++e) {
      if (std::isfinite(v[e])) scale[e] += std::fabs(v[e]);
    }
  }
  const double r = unit_roundoff(d) / accumulator_roundoff(d);
  for (double& s : scale) s *= r;
  return sum_tolerance(8.0 * static_cast<double>(p.code.size()), std::move(scale));
}

void run_program(Harness& h, const Program& p, const std::vector<Operand>& inputs, ctl_dtype d, OutputLayout out) {
  std::vector<const Operand*> pointers;
  for (const Operand& in : inputs) pointers.push_back(&in);
  const ctl_fused_elementwise_attrs attrs = attrs_of(p);
  const Tolerance tol = fused_tolerance(pointers, p, d);
  h.run(CTL_OP_FUSED_ELEMENTWISE, pointers, &attrs, 1, {tol}, out);
}

// Registers as I/O: r0.. are the inputs, then one per instruction.
const Program kUnaryChain{"unary_chain",
                          "x -> tanh -> sigmoid -> silu -> gelu -> gelu_tanh -> sin -> neg -> abs -> relu -> cos -> "
                          "exp (11 instructions, one input)",
                          {{CTL_OP_TANH, 0, 0},
                           {CTL_OP_SIGMOID, 1, 0},
                           {CTL_OP_SILU, 2, 0},
                           {CTL_OP_GELU, 3, 0},
                           {CTL_OP_GELU_TANH, 4, 0},
                           {CTL_OP_SIN, 5, 0},
                           {CTL_OP_NEG, 6, 0},
                           {CTL_OP_ABS, 7, 0},
                           {CTL_OP_RELU, 8, 0},
                           {CTL_OP_COS, 9, 0},
                           {CTL_OP_EXP, 10, 0}}};
const Program kBinaryTree{"binary_tree",
                          "m = max(a b, c - d), n = min(a b, c - d), tanh(m + n) c / exp(d) (4 inputs)",
                          {{CTL_OP_MUL, 0, 1},
                           {CTL_OP_SUB, 2, 3},
                           {CTL_OP_MAXIMUM, 4, 5},
                           {CTL_OP_MINIMUM, 4, 5},
                           {CTL_OP_ADD, 6, 7},
                           {CTL_OP_TANH, 8, 0},
                           {CTL_OP_MUL, 9, 2},
                           {CTL_OP_EXP, 3, 0},
                           {CTL_OP_DIV, 10, 11}}};
const Program kGeluBackward{
    "gelu_backward",
    "g = gelu_backward(dy, x), sigmoid(gelu_tanh_backward(g, x) + dy) (2 inputs)",
    {{CTL_OP_GELU_BACKWARD, 0, 1}, {CTL_OP_GELU_TANH_BACKWARD, 2, 1}, {CTL_OP_ADD, 3, 0}, {CTL_OP_SIGMOID, 4, 0}}};
const Program kBroadcast{
    "broadcast",
    "silu(max((a + b) c, d) - a) with a [3,4], b [4], c [3,1], d [] (4 inputs)",
    {{CTL_OP_ADD, 0, 1}, {CTL_OP_MUL, 4, 2}, {CTL_OP_MAXIMUM, 5, 3}, {CTL_OP_SUB, 6, 0}, {CTL_OP_SILU, 7, 0}}};
const Program kSpecials{"specials",
                        "relu(tanh(max(a, b) * a) + min(exp(b), a)) over NaN, ±inf, ±0, ±1, subnormals (2 inputs)",
                        {{CTL_OP_MAXIMUM, 0, 1},
                         {CTL_OP_MUL, 2, 0},
                         {CTL_OP_TANH, 3, 0},
                         {CTL_OP_EXP, 1, 0},
                         {CTL_OP_MINIMUM, 5, 0},
                         {CTL_OP_ADD, 4, 6},
                         {CTL_OP_RELU, 7, 0}}};
const Program kPositive{"positive",
                        "log(sqrt(a)) + 1 / (pow(a, b) rsqrt(a)) with a > 0, b in [-3, 3] (2 inputs)",
                        {{CTL_OP_SQRT, 0, 0},
                         {CTL_OP_LOG, 2, 0},
                         {CTL_OP_POW, 0, 1},
                         {CTL_OP_RSQRT, 0, 0},
                         {CTL_OP_MUL, 4, 5},
                         {CTL_OP_RECIPROCAL, 6, 0},
                         {CTL_OP_ADD, 7, 3}}};

void fused_cases(Catalog& cat, ctl_dtype d) {
  using L = Layout;
  const ctl_op_id op = CTL_OP_FUSED_ELEMENTWISE;
  auto add = [&](const char* name, const Program& p, std::string label, Body body) {
    cat.add_named(op, {d}, name, std::string(p.words) + "; " + label, std::move(body), Level::kFull);
  };
  add("unary_chain", kUnaryChain, "[5,67] contiguous", [=](Harness& h) {
    std::vector<Operand> in;
    in.push_back(h.input(d, {5, 67}, L::kContiguous, Values::kGeneral));
    run_program(h, kUnaryChain, in, d, OutputLayout::kContiguous);
  });
  add("binary_tree", kBinaryTree, "[2,3,130] contiguous, transposed output", [=](Harness& h) {
    std::vector<Operand> in;
    for (int k = 0; k < 4; ++k) in.push_back(h.input(d, {2, 3, 130}, L::kContiguous, Values::kFinite));
    run_program(h, kBinaryTree, in, d, OutputLayout::kTransposed);
  });
  add("gelu_backward", kGeluBackward, "[1031] contiguous", [=](Harness& h) {
    std::vector<Operand> in;
    in.push_back(h.input(d, {1031}, L::kContiguous, Values::kGeneral));
    in.push_back(h.input(d, {1031}, L::kContiguous, Values::kGeneral));
    run_program(h, kGeluBackward, in, d, OutputLayout::kContiguous);
  });
  add("broadcast", kBroadcast, "[3,4] & [4] & [3,1] & [] contiguous, gapped output", [=](Harness& h) {
    std::vector<Operand> in;
    in.push_back(h.input(d, {3, 4}, L::kContiguous, Values::kGeneral));
    in.push_back(h.input(d, {4}, L::kContiguous, Values::kGeneral));
    in.push_back(h.input(d, {3, 1}, L::kContiguous, Values::kGeneral));
    in.push_back(h.input(d, {}, L::kContiguous, Values::kGeneral));
    run_program(h, kBroadcast, in, d, OutputLayout::kGapped);
  });
  add("strided", kBinaryTree, "[37,45] permuted, sliced, expanded and mixed inputs, gapped output", [=](Harness& h) {
    std::vector<Operand> in;
    const L layouts[] = {L::kPermuted, L::kSliced, L::kExpanded, L::kRandom};
    for (L layout : layouts) in.push_back(h.input(d, {37, 45}, layout, Values::kFinite));
    run_program(h, kBinaryTree, in, d, OutputLayout::kGapped);
  });
  add("strided_broadcast", kGeluBackward, "dy [6,1,40] sliced & x [5,40] permuted, transposed output", [=](Harness& h) {
    std::vector<Operand> in;
    in.push_back(h.input(d, {6, 1, 40}, L::kSliced, Values::kGeneral));
    in.push_back(h.input(d, {5, 40}, L::kPermuted, Values::kGeneral));
    run_program(h, kGeluBackward, in, d, OutputLayout::kTransposed);
  });
  add("specials", kSpecials, "every pair of NaN, ±inf, ±0, ±1, ±subnormal, 2.5, -3", [=](Harness& h) {
    const double sub = smallest_subnormal(d);
    const std::vector<double> xs = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1.0, -1.0, sub, -sub, 2.5, -3.0};
    std::vector<double> a, b;
    for (double x : xs) {
      for (double y : xs) a.push_back(x), b.push_back(y);
    }
    const int64_t n = static_cast<int64_t>(xs.size());
    std::vector<Operand> in;
    in.push_back(h.input_from(d, {n, n}, a));
    in.push_back(h.input_from(d, {n, n}, b));
    run_program(h, kSpecials, in, d, OutputLayout::kContiguous);
  });
  add("positive", kPositive, "a [300] positive, b [300] small integers", [=](Harness& h) {
    std::vector<Operand> in;
    in.push_back(h.input(d, {300}, L::kContiguous, Values::kPositive));
    in.push_back(h.input(d, {300}, L::kContiguous, Values::kSmallInt));
    run_program(h, kPositive, in, d, OutputLayout::kContiguous);
  });
  add("empty", kUnaryChain, "[0,5]", [=](Harness& h) {
    std::vector<Operand> in;
    in.push_back(h.input(d, {0, 5}, L::kContiguous, Values::kGeneral));
    run_program(h, kUnaryChain, in, d, OutputLayout::kContiguous);
  });
}

}  // namespace

void add_fused_cases(std::vector<Case>& out) {
  Catalog cat(out, Level::kFull);
  for (ctl_dtype d : kFloat) fused_cases(cat, d);
}

}  // namespace catalyst::conformance
