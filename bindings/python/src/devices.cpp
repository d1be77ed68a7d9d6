// devices.cpp — the process-wide runtime and catalyst.Device: names, facts, the default
// device, and the switch autograd's no_grad() turns.
#include <pybind11/stl.h>

#include "binding.h"

namespace catalyst_py {

ctl_runtime* runtime() {
  // Created on first use, under the GIL (every caller holds it). Never released: devices
  // handed to Python are borrowed from it, and tensors may outlive the module at exit.
  static ctl_runtime* instance = nullptr;
  if (!instance) {
    ctl_runtime* created = nullptr;
    check(ctl_runtime_create(nullptr, &created));
    instance = created;
  }
  return instance;
}

Device default_device() {
  ctl_device* d = nullptr;
  check(ctl_runtime_default_device(runtime(), &d));
  return Device{d};
}

namespace {

ctl_device_info info_of(const Device& d) {
  ctl_device_info info{};
  info.struct_size = CTL_DEVICE_INFO_STRUCT_SIZE;
  check(ctl_device_get_info(d.handle, &info));
  return info;
}

std::string label_of(const Device& d) {
  // The "<plugin>:<n>" name catalyst.h defines: n counts this plugin's devices in order.
  const ctl_device_info info = info_of(d);
  size_t n = 0;
  for (size_t i = 0; i < info.index; ++i) {
    ctl_device* other = nullptr;
    check(ctl_runtime_device(runtime(), i, &other));
    if (std::string(info_of(Device{other}).plugin_name) == info.plugin_name) ++n;
  }
  return std::string(info.plugin_name) + ":" + std::to_string(n);
}

}  // namespace

void register_devices(py::module_& m) {
  py::class_<Device>(m, "Device", "A device of the runtime: where tensors live and ops run.")
      .def_property_readonly("name", &label_of, "The name catalyst.device() takes, e.g. 'cpu:0'.")
      .def_property_readonly("description", [](const Device& d) { return std::string(info_of(d).name); })
      .def_property_readonly("plugin", [](const Device& d) { return std::string(info_of(d).plugin_name); })
      .def_property_readonly("vendor", [](const Device& d) { return std::string(info_of(d).vendor); })
      .def_property_readonly("kind",
                             [](const Device& d) {
                               switch (info_of(d).kind) {
                                 case CTL_DEVICE_KIND_CPU:
                                   return "cpu";
                                 case CTL_DEVICE_KIND_GPU:
                                   return "gpu";
                                 default:
                                   return "accelerator";
                               }
                             })
      .def_property_readonly(
          "host_visible", [](const Device& d) { return info_of(d).host_visible; },
          "Buffers are host memory: DLPack export and import are zero-copy.")
      .def_property_readonly("index", [](const Device& d) { return info_of(d).index; })
      .def_property_readonly("memory_total", [](const Device& d) { return info_of(d).memory_total; })
      .def_property_readonly("dtypes",
                             [](const Device& d) {
                               std::vector<std::string> names;
                               const uint32_t mask = info_of(d).dtype_mask;
                               for (int i = 0; i < CTL_DTYPE_COUNT_; ++i) {
                                 if (mask & CTL_DTYPE_BIT(i))
                                   names.emplace_back(ctl_dtype_name(static_cast<ctl_dtype>(i)));
                               }
                               return names;
                             })
      .def("synchronize",
           [](const Device& d) {
             ctl_status* status = nullptr;
             {
               py::gil_scoped_release no_gil;
               status = ctl_device_synchronize(d.handle);
             }
             check(status);
           })
      .def(
          "__eq__", [](const Device& a, const Device& b) { return a.handle == b.handle; }, py::is_operator())
      .def("__hash__", [](const Device& d) { return std::hash<const void*>()(d.handle); })
      .def("__repr__", [](const Device& d) { return "catalyst.device('" + label_of(d) + "')"; });

  m.def(
      "devices",
      [] {
        std::vector<Device> out;
        for (size_t i = 0; i < ctl_runtime_device_count(runtime()); ++i) {
          ctl_device* d = nullptr;
          check(ctl_runtime_device(runtime(), i, &d));
          out.push_back(Device{d});
        }
        return out;
      },
      "Every device the runtime found, in order.");
  m.def(
      "device",
      [](const std::string& name) {
        ctl_device* d = nullptr;
        check(ctl_runtime_find_device(runtime(), name.c_str(), &d));
        return Device{d};
      },
      py::arg("name"), "The device `name` means: 'cpu:0', 'opencl', or an index such as '1'.");
  m.def("default_device", &default_device,
        "CATALYST_DEVICE's device, else the first GPU or accelerator, else the first device.");
  m.def("_set_grad_enabled", [](bool enabled) {
    bool previous = true;
    check(ctl_runtime_set_grad_enabled(runtime(), enabled, &previous));
    return previous;
  });
}

}  // namespace catalyst_py
