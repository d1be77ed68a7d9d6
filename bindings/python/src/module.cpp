// module.cpp — catalyst._catalyst, the compiled half of the package `catalyst`: registers
// the exceptions, devices, Tensor, ops, DLPack and graphs (one file each).
#include "binding.h"

PYBIND11_MODULE(_catalyst, m) {
  m.doc() = "Catalyst's C ABI for Python (import `catalyst`, not this module).";
  catalyst_py::register_errors(m);
  catalyst_py::register_devices(m);
  pybind11::class_<catalyst_py::Tensor> tensor(m, "Tensor",
                                               "A tensor on a Catalyst device: a view of reference-counted storage.");
  catalyst_py::register_tensor(m, tensor);
  catalyst_py::register_ops(m, tensor);
  catalyst_py::register_dlpack(m, tensor);
  catalyst_py::register_graph(m);
  uint32_t major = 0, minor = 0;
  ctl_abi_version(&major, &minor);
  m.attr("abi_version") = pybind11::make_tuple(major, minor);
}
