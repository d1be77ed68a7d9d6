// ops.cpp — ops as functions of the module and methods of Tensor, Python's operators, and
// the generic call catalyst.op(name, *inputs, outputs=1, into=None, **attrs) that reaches
// every op of the ABI. Numbers mixed with tensors become 0-d tensors of the tensor's dtype
// (the ABI has no implicit type promotion, and neither does the binding).
#include <pybind11/stl.h>

#include "binding.h"

namespace catalyst_py {
namespace {

constexpr std::pair<const char*, ctl_op_id> kUnary[] = {{"neg", CTL_OP_NEG},
                                                        {"abs", CTL_OP_ABS},
                                                        {"exp", CTL_OP_EXP},
                                                        {"log", CTL_OP_LOG},
                                                        {"sqrt", CTL_OP_SQRT},
                                                        {"rsqrt", CTL_OP_RSQRT},
                                                        {"tanh", CTL_OP_TANH},
                                                        {"sigmoid", CTL_OP_SIGMOID},
                                                        {"relu", CTL_OP_RELU},
                                                        {"gelu", CTL_OP_GELU},
                                                        {"gelu_tanh", CTL_OP_GELU_TANH},
                                                        {"silu", CTL_OP_SILU},
                                                        {"sin", CTL_OP_SIN},
                                                        {"cos", CTL_OP_COS},
                                                        {"reciprocal", CTL_OP_RECIPROCAL}};

constexpr std::pair<const char*, ctl_op_id> kBinary[] = {
    {"add", CTL_OP_ADD}, {"sub", CTL_OP_SUB},         {"mul", CTL_OP_MUL},         {"div", CTL_OP_DIV},
    {"pow", CTL_OP_POW}, {"maximum", CTL_OP_MAXIMUM}, {"minimum", CTL_OP_MINIMUM}, {"eq", CTL_OP_EQ},
    {"ne", CTL_OP_NE},   {"lt", CTL_OP_LT},           {"le", CTL_OP_LE},           {"gt", CTL_OP_GT},
    {"ge", CTL_OP_GE}};

constexpr std::pair<const char*, ctl_op_id> kReductions[] = {
    {"sum", CTL_OP_SUM},      {"mean", CTL_OP_MEAN},           {"max", CTL_OP_MAX},
    {"min", CTL_OP_MIN},      {"logsumexp", CTL_OP_LOGSUMEXP}, {"argmax", CTL_OP_ARGMAX},
    {"argmin", CTL_OP_ARGMIN}};

Tensor unary(ctl_op_id op, const Tensor& x) {
  ctl_tensor* out = nullptr;
  ctl_tensor* in = x.get();
  check(run_call(ctl_tensor_numel(in), ctl_tensor_requires_grad(in), [&] { return ctl_op_unary(op, in, &out); }));
  return Tensor(out);
}

// The handle of `other` as an operand beside `self`: a Tensor's own, or a new 0-d tensor of
// self's dtype for a number (kept alive by `holder`). NULL when `other` is neither, so the
// operator can answer NotImplemented.
bool operand(const Tensor& self, py::handle other, Tensor& holder, ctl_tensor*& out) {
  if (py::isinstance<Tensor>(other)) {
    out = other.cast<const Tensor&>().get();
    return true;
  }
  if (!py::isinstance<py::float_>(other) && !py::isinstance<py::int_>(other)) return false;
  ctl_tensor* scalar = nullptr;
  check(ctl_tensor_create_full(ctl_tensor_device(self.get()), ctl_tensor_dtype(self.get()), 0, nullptr,
                               other.cast<double>(), &scalar));
  holder = Tensor(scalar);
  out = scalar;
  return true;
}

Tensor binary_handles(ctl_op_id op, ctl_tensor* a, ctl_tensor* b) {
  ctl_tensor* out = nullptr;
  const int64_t elements = ctl_tensor_numel(a) + ctl_tensor_numel(b);
  const bool records = ctl_tensor_requires_grad(a) || ctl_tensor_requires_grad(b);
  check(run_call(elements, records, [&] { return ctl_op_binary(op, a, b, &out); }));
  return Tensor(out);
}

// a <op> b with either side possibly a number; NotImplemented for anything else.
py::object binary(ctl_op_id op, const Tensor& self, py::handle other, bool reflected) {
  Tensor holder;
  ctl_tensor* o = nullptr;
  if (!operand(self, other, holder, o)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
  return py::cast(reflected ? binary_handles(op, o, self.get()) : binary_handles(op, self.get(), o));
}

ctl_tensor* input_handle(py::handle value, size_t index) {
  if (value.is_none()) return nullptr;
  if (py::isinstance<Tensor>(value)) return value.cast<const Tensor&>().get();
  throw py::type_error("op input " + std::to_string(index) + " must be a catalyst.Tensor or None, not " +
                       std::string(py::str(py::type::handle_of(value).attr("__name__"))));
}

// Runs `op` on `inputs` with attrs from `kwargs`: `outputs` new tensors (one Tensor, or a
// tuple when more than one), or into existing ones (returns None).
py::object run_op(ctl_op_id op, const std::vector<ctl_tensor*>& inputs, const py::dict& kwargs, size_t outputs,
                  py::handle into) {
  AttrStorage storage;
  const void* attrs = build_attrs(op, kwargs, storage);
  const InputFacts facts = facts_of(inputs);
  if (!into.is_none()) {
    std::vector<ctl_tensor*> targets;
    py::sequence seq = py::isinstance<Tensor>(into) ? py::sequence(py::make_tuple(into)) : into.cast<py::sequence>();
    for (size_t i = 0; i < seq.size(); ++i) targets.push_back(input_handle(seq[i], i));
    // run_into is not recorded, so it never touches a graph.
    check(run_call(facts.elements, false, [&] {
      return ctl_op_run_into(op, inputs.size(), inputs.data(), attrs, targets.size(), targets.data());
    }));
    return py::none();
  }
  std::vector<ctl_tensor*> out(outputs, nullptr);
  check(run_call(facts.elements, facts.records,
                 [&] { return ctl_op_run(op, inputs.size(), inputs.data(), attrs, out.size(), out.data()); }));
  if (outputs == 1) return py::cast(Tensor(out[0]));
  py::tuple result(outputs);
  for (size_t i = 0; i < outputs; ++i) result[i] = out[i] ? py::cast(Tensor(out[i])) : py::none();
  return result;
}

py::object run_named(ctl_op_id op, std::initializer_list<ctl_tensor*> inputs, const py::dict& kwargs,
                     size_t outputs = 1) {
  return run_op(op, std::vector<ctl_tensor*>(inputs), kwargs, outputs, py::none());
}

}  // namespace

void register_ops(py::module_& m, py::class_<Tensor>& cls) {
  for (const auto& [name, op] : kUnary) {
    const ctl_op_id id = op;
    m.def(
        name, [id](const Tensor& x) { return unary(id, x); }, py::arg("x"));
    cls.def(name, [id](const Tensor& x) { return unary(id, x); });
  }
  for (const auto& [name, op] : kBinary) {
    const ctl_op_id id = op;
    m.def(
        name, [id](const Tensor& a, py::handle b) { return binary(id, a, b, false); }, py::arg("a"), py::arg("b"));
  }
  for (const auto& [name, op] : kReductions) {
    const ctl_op_id id = op;
    auto reduce = [id](const Tensor& x, py::object axis, bool keepdims) {
      py::dict kwargs;
      kwargs["axis"] = axis;
      kwargs["keepdims"] = keepdims;
      return run_named(id, {x.get()}, kwargs);
    };
    m.def(name, reduce, py::arg("x"), py::arg("axis") = py::none(), py::arg("keepdims") = false);
    cls.def(name, reduce, py::arg("axis") = py::none(), py::arg("keepdims") = false);
  }

  // Python's operators.
  cls.def(
         "__add__", [](const Tensor& a, py::handle b) { return binary(CTL_OP_ADD, a, b, false); }, py::is_operator())
      .def(
          "__radd__", [](const Tensor& a, py::handle b) { return binary(CTL_OP_ADD, a, b, true); }, py::is_operator())
      .def(
          "__sub__", [](const Tensor& a, py::handle b) { return binary(CTL_OP_SUB, a, b, false); }, py::is_operator())
      .def(
          "__rsub__", [](const Tensor& a, py::handle b) { return binary(CTL_OP_SUB, a, b, true); }, py::is_operator())
      .def(
          "__mul__", [](const Tensor& a, py::handle b) { return binary(CTL_OP_MUL, a, b, false); }, py::is_operator())
      .def(
          "__rmul__", [](const Tensor& a, py::handle b) { return binary(CTL_OP_MUL, a, b, true); }, py::is_operator())
      .def(
          "__truediv__", [](const Tensor& a, py::handle b) { return binary(CTL_OP_DIV, a, b, false); },
          py::is_operator())
      .def(
          "__rtruediv__", [](const Tensor& a, py::handle b) { return binary(CTL_OP_DIV, a, b, true); },
          py::is_operator())
      .def(
          "__pow__", [](const Tensor& a, py::handle b) { return binary(CTL_OP_POW, a, b, false); }, py::is_operator())
      .def(
          "__rpow__", [](const Tensor& a, py::handle b) { return binary(CTL_OP_POW, a, b, true); }, py::is_operator())
      .def(
          "__eq__", [](const Tensor& a, py::handle b) { return binary(CTL_OP_EQ, a, b, false); }, py::is_operator())
      .def(
          "__ne__", [](const Tensor& a, py::handle b) { return binary(CTL_OP_NE, a, b, false); }, py::is_operator())
      .def(
          "__lt__", [](const Tensor& a, py::handle b) { return binary(CTL_OP_LT, a, b, false); }, py::is_operator())
      .def(
          "__le__", [](const Tensor& a, py::handle b) { return binary(CTL_OP_LE, a, b, false); }, py::is_operator())
      .def(
          "__gt__", [](const Tensor& a, py::handle b) { return binary(CTL_OP_GT, a, b, false); }, py::is_operator())
      .def(
          "__ge__", [](const Tensor& a, py::handle b) { return binary(CTL_OP_GE, a, b, false); }, py::is_operator())
      .def("__neg__", [](const Tensor& x) { return unary(CTL_OP_NEG, x); })
      .def("__abs__", [](const Tensor& x) { return unary(CTL_OP_ABS, x); })
      .def(
          "__matmul__",
          [](const Tensor& a, const Tensor& b) {
            return run_named(CTL_OP_MATMUL, {a.get(), b.get()}, {});
          },
          py::is_operator())
      // Tensors compare elementwise, so they hash by identity (as numpy arrays cannot and
      // torch tensors do).
      .def("__hash__", [](py::handle self) { return std::hash<const void*>()(self.ptr()); });

  m.def(
      "matmul",
      [](const Tensor& a, const Tensor& b, const Tensor* bias, bool transpose_a, bool transpose_b, double alpha,
         py::object activation) {
        py::dict kwargs;
        kwargs["transpose_a"] = transpose_a;
        kwargs["transpose_b"] = transpose_b;
        kwargs["alpha"] = alpha;
        kwargs["activation"] = activation;
        if (bias) return run_named(CTL_OP_MATMUL, {a.get(), b.get(), bias->get()}, kwargs);
        return run_named(CTL_OP_MATMUL, {a.get(), b.get()}, kwargs);
      },
      py::arg("a"), py::arg("b"), py::arg("bias") = nullptr, py::arg("transpose_a") = false,
      py::arg("transpose_b") = false, py::arg("alpha") = 1.0, py::arg("activation") = "none",
      "activation(alpha * op(a) @ op(b) + bias), batched over leading axes.");
  for (auto [name, op] : {std::pair{"softmax", CTL_OP_SOFTMAX}, std::pair{"log_softmax", CTL_OP_LOG_SOFTMAX}}) {
    const ctl_op_id id = op;
    auto f = [id](const Tensor& x, int axis) {
      py::dict kwargs;
      kwargs["axis"] = axis;
      return run_named(id, {x.get()}, kwargs);
    };
    m.def(name, f, py::arg("x"), py::arg("axis") = -1);
    cls.def(name, f, py::arg("axis") = -1);
  }
  m.def(
      "layer_norm",
      [](const Tensor& x, const Tensor* weight, const Tensor* bias, double eps) {
        py::dict kwargs;
        kwargs["eps"] = eps;
        return run_named(CTL_OP_LAYER_NORM, {x.get(), handle_of(weight), handle_of(bias)}, kwargs);
      },
      py::arg("x"), py::arg("weight") = nullptr, py::arg("bias") = nullptr, py::arg("eps") = 1e-5);
  m.def(
      "rms_norm",
      [](const Tensor& x, const Tensor* weight, double eps) {
        py::dict kwargs;
        kwargs["eps"] = eps;
        return run_named(CTL_OP_RMS_NORM, {x.get(), handle_of(weight)}, kwargs);
      },
      py::arg("x"), py::arg("weight") = nullptr, py::arg("eps") = 1e-5);
  auto cast = [](const Tensor& x, py::handle dtype) {
    py::dict kwargs;
    kwargs["dtype"] = dtype;
    return run_named(CTL_OP_CAST, {x.get()}, kwargs);
  };
  m.def("cast", cast, py::arg("x"), py::arg("dtype"));
  cls.def("cast", cast, py::arg("dtype"));
  cls.def("astype", cast, py::arg("dtype"));
  m.def(
      "where",
      [](const Tensor& c, const Tensor& a, const Tensor& b) {
        return run_named(CTL_OP_WHERE, {c.get(), a.get(), b.get()}, {});
      },
      py::arg("condition"), py::arg("a"), py::arg("b"));
  m.def(
      "concat",
      [](const std::vector<const Tensor*>& parts, int axis) {
        std::vector<ctl_tensor*> inputs;
        for (const Tensor* t : parts) inputs.push_back(handle_of(t));
        py::dict kwargs;
        kwargs["axis"] = axis;
        return run_op(CTL_OP_CONCAT, inputs, kwargs, 1, py::none());
      },
      py::arg("tensors"), py::arg("axis") = 0);
  m.def(
      "gather",
      [](const Tensor& x, const Tensor& index, int axis) {
        py::dict kwargs;
        kwargs["axis"] = axis;
        return run_named(CTL_OP_GATHER, {x.get(), index.get()}, kwargs);
      },
      py::arg("x"), py::arg("index"), py::arg("axis") = 0);
  m.def(
      "scatter_add",
      [](const Tensor& target, const Tensor& index, const Tensor& source, int axis) {
        py::dict kwargs;
        kwargs["axis"] = axis;
        return run_named(CTL_OP_SCATTER_ADD, {target.get(), index.get(), source.get()}, kwargs);
      },
      py::arg("target"), py::arg("index"), py::arg("source"), py::arg("axis") = 0);
  m.def(
      "cross_entropy",
      [](const Tensor& logits, const Tensor& target, py::object reduction, py::object ignore_index) {
        py::dict kwargs;
        kwargs["reduction"] = reduction;
        kwargs["ignore_index"] = ignore_index;
        return run_named(CTL_OP_CROSS_ENTROPY, {logits.get(), target.get()}, kwargs);
      },
      py::arg("logits"), py::arg("target"), py::arg("reduction") = "mean", py::arg("ignore_index") = py::none(),
      "Cross-entropy of softmax(logits) over the last axis against class ids.");

  m.def(
      "op",
      [](py::handle name, py::args inputs, py::kwargs kwargs) {
        const ctl_op_id op = op_from(name);
        size_t outputs = 1;
        py::object into = py::none();
        py::dict attrs;
        for (auto item : kwargs) {
          const std::string key = py::str(item.first);
          if (key == "outputs") {
            outputs = item.second.cast<size_t>();
          } else if (key == "into") {
            into = py::reinterpret_borrow<py::object>(item.second);
          } else {
            attrs[item.first] = item.second;
          }
        }
        std::vector<ctl_tensor*> handles;
        for (size_t i = 0; i < inputs.size(); ++i) handles.push_back(input_handle(inputs[i], i));
        return run_op(op, handles, attrs, outputs, into);
      },
      py::arg("op"),
      "Any op of the ABI by name ('adamw_step') or id: op(name, *inputs, outputs=1, into=None, **attrs). "
      "Inputs may be None (an absent optional input). With into=[tensors] it writes into them "
      "(ctl_op_run_into, not recorded by autograd) and returns None; else it returns the new output "
      "(a tuple when outputs > 1). Keywords are the fields of the op's attribute struct.");
  m.def("op_name", [](int id) -> py::object {
    const char* name = ctl_op_name(static_cast<ctl_op_id>(id));
    if (!name) return py::none();
    return py::str(name);
  });
}

}  // namespace catalyst_py
