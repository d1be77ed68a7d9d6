// tensor.cpp — catalyst.Tensor's own methods: creation from host memory, facts (shape,
// dtype, device), copies to host, views, and autograd. Ops live in ops.cpp, DLPack in
// dlpack.cpp, the conveniences written in Python in catalyst/_tensor.py.
#include <pybind11/stl.h>

#include <cstring>

#include "binding.h"

namespace catalyst_py {

std::mutex& graph_mutex() {
  static std::mutex mutex;
  return mutex;
}

InputFacts facts_of(const std::vector<ctl_tensor*>& inputs) {
  InputFacts facts;
  for (ctl_tensor* t : inputs) {
    facts.elements += ctl_tensor_numel(t);
    facts.records = facts.records || ctl_tensor_requires_grad(t);
  }
  return facts;
}

namespace {

struct DtypeName {
  const char* name;
  ctl_dtype dtype;
};
// The ABI's names and numpy's, both accepted wherever a dtype is.
constexpr DtypeName kDtypeNames[] = {
    {"f32", CTL_DTYPE_F32},   {"float32", CTL_DTYPE_F32}, {"f64", CTL_DTYPE_F64},   {"float64", CTL_DTYPE_F64},
    {"f16", CTL_DTYPE_F16},   {"float16", CTL_DTYPE_F16}, {"bf16", CTL_DTYPE_BF16}, {"bfloat16", CTL_DTYPE_BF16},
    {"i8", CTL_DTYPE_I8},     {"int8", CTL_DTYPE_I8},     {"u8", CTL_DTYPE_U8},     {"uint8", CTL_DTYPE_U8},
    {"i32", CTL_DTYPE_I32},   {"int32", CTL_DTYPE_I32},   {"i64", CTL_DTYPE_I64},   {"int64", CTL_DTYPE_I64},
    {"bool", CTL_DTYPE_BOOL},
};

Device device_from(const py::handle& value) {
  if (value.is_none()) return default_device();
  if (py::isinstance<Device>(value)) return value.cast<Device>();
  if (py::isinstance<py::str>(value)) {
    ctl_device* d = nullptr;
    check(ctl_runtime_find_device(runtime(), value.cast<std::string>().c_str(), &d));
    return Device{d};
  }
  throw py::type_error("device must be a catalyst.Device, a device name such as 'cpu:0', or None, not " +
                       std::string(py::str(py::type::handle_of(value).attr("__name__"))));
}

std::vector<int64_t> shape_from(const py::handle& value) {
  if (py::isinstance<py::int_>(value)) return {value.cast<int64_t>()};
  return value.cast<std::vector<int64_t>>();
}

// `out` by reference: it is read after the call that fills it, whatever the order in which
// the arguments were evaluated.
Tensor wrap(ctl_status* status, ctl_tensor* const& out) {
  check(status);
  return Tensor(out);
}

ctl_tensor_info info_of(const Tensor& t) {
  ctl_tensor_info info{};
  info.struct_size = CTL_TENSOR_INFO_STRUCT_SIZE;
  check(ctl_tensor_get_info(t.get(), &info));
  return info;
}

py::tuple dims(const int64_t* values, size_t rank) {
  py::tuple out(rank);
  for (size_t i = 0; i < rank; ++i) out[i] = values[i];
  return out;
}

}  // namespace

ctl_dtype dtype_from(const py::handle& value) {
  if (py::isinstance<ctl_dtype>(value)) return value.cast<ctl_dtype>();
  if (value.ptr() == reinterpret_cast<PyObject*>(&PyFloat_Type)) return CTL_DTYPE_F32;
  if (value.ptr() == reinterpret_cast<PyObject*>(&PyLong_Type)) return CTL_DTYPE_I64;
  if (value.ptr() == reinterpret_cast<PyObject*>(&PyBool_Type)) return CTL_DTYPE_BOOL;
  std::string name;
  if (py::isinstance<py::str>(value)) {
    name = value.cast<std::string>();
  } else if (py::hasattr(value, "name") && py::hasattr(value, "kind")) {  // a numpy dtype
    name = py::str(value.attr("name"));
  } else if (py::hasattr(value, "dtype") && py::isinstance<py::type>(value)) {  // numpy.float32 and kin
    name = py::str(py::module_::import("numpy").attr("dtype")(value).attr("name"));
  } else {
    throw py::type_error("dtype must be a catalyst.dtype, a name such as 'float32' or a numpy dtype, not " +
                         std::string(py::str(py::type::handle_of(value).attr("__name__"))));
  }
  for (const DtypeName& d : kDtypeNames) {
    if (name == d.name) return d.dtype;
  }
  throw py::type_error("Catalyst has no dtype '" + name + "' (it has f32, f64, f16, bf16, i8, u8, i32, i64, bool)");
}

void register_tensor(py::module_& m, py::class_<Tensor>& cls) {
  py::enum_<ctl_dtype> dtype(m, "dtype", "Element types (the ABI's ctl_dtype).");
  dtype.value("float32", CTL_DTYPE_F32)
      .value("float64", CTL_DTYPE_F64)
      .value("float16", CTL_DTYPE_F16)
      .value("bfloat16", CTL_DTYPE_BF16)
      .value("int8", CTL_DTYPE_I8)
      .value("uint8", CTL_DTYPE_U8)
      .value("int32", CTL_DTYPE_I32)
      .value("int64", CTL_DTYPE_I64)
      .value("bool", CTL_DTYPE_BOOL)
      .export_values();
  dtype.def_property_readonly("itemsize", [](ctl_dtype d) { return ctl_dtype_size(d); });
  dtype.def_property_readonly("short_name", [](ctl_dtype d) { return std::string(ctl_dtype_name(d)); });
  m.def("_dtype", [](py::handle value) { return dtype_from(value); });

  // ---- creation
  m.def("_from_buffer", [](py::buffer data, py::handle dtype, py::handle device) {
    // `data` is C-contiguous (catalyst.tensor makes it so) and holds exactly the elements.
    const ctl_dtype d = dtype_from(dtype);
    const Device dev = device_from(device);
    py::buffer_info info = data.request();
    std::vector<int64_t> shape(info.shape.begin(), info.shape.end());
    const size_t bytes = static_cast<size_t>(info.size) * static_cast<size_t>(info.itemsize);
    ctl_tensor* out = nullptr;
    ctl_status* status = nullptr;
    if (info.size < kGilReleaseElements) {
      status = ctl_tensor_from_host(dev.handle, d, shape.size(), shape.data(), info.ptr, bytes, &out);
    } else {
      py::gil_scoped_release no_gil;
      status = ctl_tensor_from_host(dev.handle, d, shape.size(), shape.data(), info.ptr, bytes, &out);
    }
    return wrap(status, out);
  });
  m.def(
      "empty",
      [](py::handle shape, py::handle dtype, py::handle device) {
        const std::vector<int64_t> s = shape_from(shape);
        ctl_tensor* out = nullptr;
        return wrap(ctl_tensor_create(device_from(device).handle, dtype_from(dtype), s.size(), s.data(), &out), out);
      },
      py::arg("shape"), py::arg("dtype") = CTL_DTYPE_F32, py::arg("device") = py::none(), "Uninitialised contents.");
  m.def(
      "zeros",
      [](py::handle shape, py::handle dtype, py::handle device) {
        const std::vector<int64_t> s = shape_from(shape);
        ctl_tensor* out = nullptr;
        return wrap(ctl_tensor_create_zeros(device_from(device).handle, dtype_from(dtype), s.size(), s.data(), &out),
                    out);
      },
      py::arg("shape"), py::arg("dtype") = CTL_DTYPE_F32, py::arg("device") = py::none());
  m.def(
      "full",
      [](py::handle shape, double value, py::handle dtype, py::handle device) {
        const std::vector<int64_t> s = shape_from(shape);
        ctl_tensor* out = nullptr;
        return wrap(
            ctl_tensor_create_full(device_from(device).handle, dtype_from(dtype), s.size(), s.data(), value, &out),
            out);
      },
      py::arg("shape"), py::arg("fill_value"), py::arg("dtype") = CTL_DTYPE_F32, py::arg("device") = py::none());

  // ---- facts
  cls.def_property_readonly("shape",
                            [](const Tensor& t) {
                              const ctl_tensor_info info = info_of(t);
                              return dims(info.shape, info.rank);
                            })
      .def_property_readonly(
          "strides",
          [](const Tensor& t) {
            const ctl_tensor_info info = info_of(t);
            return dims(info.strides, info.rank);
          },
          "In elements, as the ABI gives them.")
      .def_property_readonly("offset", [](const Tensor& t) { return info_of(t).offset; })
      .def_property_readonly("dtype", [](const Tensor& t) { return info_of(t).dtype; })
      .def_property_readonly("ndim", [](const Tensor& t) { return info_of(t).rank; })
      .def_property_readonly("is_contiguous", [](const Tensor& t) { return info_of(t).contiguous; })
      .def_property_readonly("device", [](const Tensor& t) { return Device{info_of(t).device}; })
      .def_property_readonly("released", [](const Tensor& t) { return t.get() == nullptr; })
      .def("numel", [](const Tensor& t) { return info_of(t).numel; })
      .def("__len__",
           [](const Tensor& t) {
             const ctl_tensor_info info = info_of(t);
             if (info.rank == 0) throw py::type_error("len() of a 0-d tensor");
             return info.shape[0];
           })
      .def("release", &Tensor::release,
           "Drops the C handle now instead of when Python collects the object. Later calls that use this "
           "tensor fail with the ABI's error for a NULL tensor.");

  // ---- data
  cls.def("_to_host", [](const Tensor& t, py::buffer destination) {
    py::buffer_info info = destination.request(true);
    const size_t bytes = static_cast<size_t>(info.size) * static_cast<size_t>(info.itemsize);
    ctl_status* status = nullptr;
    {
      py::gil_scoped_release no_gil;
      status = ctl_tensor_to_host(t.get(), info.ptr, bytes);
    }
    check(status);
  });
  cls.def(
      "to",
      [](const Tensor& t, py::handle device) {
        ctl_tensor* out = nullptr;
        const Device dev = device_from(device);
        ctl_status* status = nullptr;
        {
          py::gil_scoped_release no_gil;
          status = ctl_tensor_to_device(t.get(), dev.handle, &out);
        }
        return wrap(status, out);
      },
      py::arg("device"), "A contiguous copy on `device` (a Device or a name such as 'cpu:0').");

  // ---- views (metadata only). Views of tensors that require gradients record too.
  cls.def("reshape",
          [](const Tensor& t, py::args shape) {
            std::vector<int64_t> s = shape.size() == 1 && !py::isinstance<py::int_>(shape[0])
                                         ? shape_from(shape[0])
                                         : shape.cast<std::vector<int64_t>>();
            ctl_tensor* out = nullptr;
            const bool records = ctl_tensor_requires_grad(t.get());
            return wrap(run_call(0, records, [&] { return ctl_tensor_reshape(t.get(), s.size(), s.data(), &out); }),
                        out);
          })
      .def("permute",
           [](const Tensor& t, py::args perm) {
             std::vector<int64_t> p = perm.size() == 1 && !py::isinstance<py::int_>(perm[0])
                                          ? shape_from(perm[0])
                                          : perm.cast<std::vector<int64_t>>();
             ctl_tensor* out = nullptr;
             const bool records = ctl_tensor_requires_grad(t.get());
             return wrap(run_call(0, records, [&] { return ctl_tensor_permute(t.get(), p.size(), p.data(), &out); }),
                         out);
           })
      .def(
          "transpose",
          [](const Tensor& t, int64_t a, int64_t b) {
            ctl_tensor* out = nullptr;
            const bool records = ctl_tensor_requires_grad(t.get());
            return wrap(run_call(0, records, [&] { return ctl_tensor_transpose(t.get(), a, b, &out); }), out);
          },
          py::arg("axis0") = -2, py::arg("axis1") = -1)
      .def(
          "slice",
          [](const Tensor& t, int64_t axis, int64_t start, int64_t stop, int64_t step) {
            ctl_tensor* out = nullptr;
            const bool records = ctl_tensor_requires_grad(t.get());
            return wrap(run_call(0, records, [&] { return ctl_tensor_slice(t.get(), axis, start, stop, step, &out); }),
                        out);
          },
          py::arg("axis"), py::arg("start"), py::arg("stop"), py::arg("step") = 1)
      .def("expand",
           [](const Tensor& t, py::args shape) {
             std::vector<int64_t> s = shape.size() == 1 && !py::isinstance<py::int_>(shape[0])
                                          ? shape_from(shape[0])
                                          : shape.cast<std::vector<int64_t>>();
             ctl_tensor* out = nullptr;
             const bool records = ctl_tensor_requires_grad(t.get());
             return wrap(run_call(0, records, [&] { return ctl_tensor_expand(t.get(), s.size(), s.data(), &out); }),
                         out);
           })
      .def("contiguous", [](const Tensor& t) {
        ctl_tensor* out = nullptr;
        const bool records = ctl_tensor_requires_grad(t.get());
        return wrap(run_call(ctl_tensor_numel(t.get()), records, [&] { return ctl_tensor_contiguous(t.get(), &out); }),
                    out);
      });

  // ---- autograd
  cls.def_property(
         "requires_grad", [](const Tensor& t) { return ctl_tensor_requires_grad(t.get()); },
         [](const Tensor& t, bool value) {
           std::lock_guard<std::mutex> lock(graph_mutex());
           check(ctl_tensor_set_requires_grad(t.get(), value));
         })
      .def(
          "requires_grad_",
          [](py::object self, bool value) {
            std::lock_guard<std::mutex> lock(graph_mutex());
            check(ctl_tensor_set_requires_grad(self.cast<const Tensor&>().get(), value));
            return self;
          },
          py::arg("requires_grad") = true, "Marks a leaf as needing a gradient; returns the tensor.")
      .def_property_readonly(
          "grad",
          [](const Tensor& t) -> py::object {
            ctl_tensor* out = nullptr;
            {
              std::lock_guard<std::mutex> lock(graph_mutex());
              check(ctl_tensor_grad(t.get(), &out));
            }
            if (!out) return py::none();
            return py::cast(Tensor(out));
          },
          "The gradient backward() accumulated on this leaf, or None.")
      .def("zero_grad",
           [](const Tensor& t) {
             std::lock_guard<std::mutex> lock(graph_mutex());
             check(ctl_tensor_zero_grad(t.get()));
           })
      .def(
          "backward",
          [](const Tensor& t, const Tensor* grad) {
            ctl_status* status = nullptr;
            {
              py::gil_scoped_release no_gil;
              std::lock_guard<std::mutex> lock(graph_mutex());
              status = ctl_tensor_backward(t.get(), handle_of(grad));
            }
            check(status);
          },
          py::arg("gradient") = nullptr, "Backpropagates; gradient None means 1 for a one-element tensor.")
      .def("detach", [](const Tensor& t) {
        ctl_tensor* out = nullptr;
        return wrap(ctl_tensor_detach(t.get(), &out), out);
      });
}

}  // namespace catalyst_py
