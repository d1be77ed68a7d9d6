// errors.cpp — a C status becomes the Python exception of its code (catalyst/_errors.py
// holds the classes and the table), carrying the ABI's message unchanged.
#include "binding.h"

namespace catalyst_py {
namespace {

// The classes, looked up once at import; kept alive for the life of the process.
PyObject* g_classes[16] = {};
PyObject* g_internal = nullptr;

}  // namespace

[[noreturn]] void raise(ctl_status_code code, const std::string& message) {
  const auto index = static_cast<size_t>(code);
  PyObject* cls = index < 16 && g_classes[index] ? g_classes[index] : g_internal;
  py::object exc = py::reinterpret_borrow<py::object>(cls)(message, ctl_status_code_name(code));
  PyErr_SetObject(cls, exc.ptr());
  throw py::error_already_set();
}

void check(ctl_status* status) {
  if (!status) return;
  const ctl_status_code code = ctl_status_get_code(status);
  std::string message = ctl_status_get_message(status);
  ctl_status_free(status);
  raise(code, message);
}

void register_errors(py::module_& m) {
  py::module_ errors = py::module_::import("catalyst._errors");
  py::tuple by_code = errors.attr("BY_CODE");
  for (size_t i = 1; i < by_code.size() && i < 16; ++i) g_classes[i] = py::object(by_code[i]).release().ptr();
  g_internal = py::object(errors.attr("InternalError")).release().ptr();
  m.def("_status_code_name",
        [](int code) { return std::string(ctl_status_code_name(static_cast<ctl_status_code>(code))); });
}

}  // namespace catalyst_py
