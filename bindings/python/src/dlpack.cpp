// dlpack.cpp — the DLPack protocol both ways: Tensor.__dlpack__ / __dlpack_device__ (so
// numpy.from_dlpack and torch.from_dlpack take Catalyst tensors without a copy on
// host-visible devices) and catalyst.from_dlpack (any producer's capsule, or the capsule
// itself). Capsules follow the protocol's naming: "dltensor" / "dltensor_versioned" until
// a consumer takes them, "used_..." after; an unconsumed capsule calls the deleter when
// Python collects it.
#include <dlpack/dlpack.h>
#include <pybind11/stl.h>

#include <atomic>

#include "binding.h"

// DLPack 1.0's versioned struct, for dlpack.h headers older than 1.0 (Debian 12 has 0.6);
// Catalyst's ABI takes it by its struct tag, declared in catalyst.h.
#if !defined(DLPACK_MAJOR_VERSION) || DLPACK_MAJOR_VERSION < 1
extern "C" {
struct DLManagedTensorVersioned {
  struct {
    uint32_t major;
    uint32_t minor;
  } version;
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};
}
#endif
#ifndef DLPACK_FLAG_BITMASK_IS_COPIED
#define DLPACK_FLAG_BITMASK_IS_COPIED (1ULL << 1)
#endif

namespace catalyst_py {
namespace {

constexpr const char* kLegacyName = "dltensor";
constexpr const char* kVersionedName = "dltensor_versioned";

// Exports whose deleter has not run yet: the leak tests read it (catalyst._live_exports()).
std::atomic<int64_t> g_live_exports{0};

// Every exported DLManagedTensor's deleter is wrapped so that the count above is exact:
// the wrapper puts the ABI's own manager_ctx and deleter back, then calls it.
template <typename Managed>
struct Wrapped {
  void* manager_ctx;
  void (*deleter)(Managed*);
};
template <typename Managed>
void counting_deleter(Managed* self) {
  auto* wrapped = static_cast<Wrapped<Managed>*>(self->manager_ctx);
  self->manager_ctx = wrapped->manager_ctx;
  self->deleter = wrapped->deleter;
  delete wrapped;
  g_live_exports.fetch_sub(1, std::memory_order_relaxed);
  if (self->deleter) self->deleter(self);
}
template <typename Managed>
void wrap_deleter(Managed* managed) {
  managed->manager_ctx = new Wrapped<Managed>{managed->manager_ctx, managed->deleter};
  managed->deleter = &counting_deleter<Managed>;
  g_live_exports.fetch_add(1, std::memory_order_relaxed);
}

// Called when Python collects a capsule; consumers rename what they took.
void capsule_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, kLegacyName)) {
    auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kLegacyName));
    if (managed && managed->deleter) managed->deleter(managed);
  } else if (PyCapsule_IsValid(capsule, kVersionedName)) {
    auto* managed = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, kVersionedName));
    if (managed && managed->deleter) managed->deleter(managed);
  }
}

ctl_device_info info_of(ctl_device* device) {
  ctl_device_info info{};
  info.struct_size = CTL_DEVICE_INFO_STRUCT_SIZE;
  check(ctl_device_get_info(device, &info));
  return info;
}

// Where host memory goes: the default device when it is host-visible, else the first one.
ctl_device* host_visible_device() {
  ctl_device* d = nullptr;
  if (!ctl_runtime_default_device(runtime(), &d) && info_of(d).host_visible) return d;
  for (size_t i = 0; i < ctl_runtime_device_count(runtime()); ++i) {
    check(ctl_runtime_device(runtime(), i, &d));
    if (info_of(d).host_visible) return d;
  }
  raise(CTL_STATUS_NOT_FOUND, "no host-visible device: DLPack needs one (e.g. the CPU plugin's)");
}

// DLPack's (device_type, device_id): kDLCPU for host memory; for other devices the type
// DLPack names for the plugin's API and the device's number within its plugin.
std::pair<int, int> dlpack_device(ctl_device* device) {
  const ctl_device_info info = info_of(device);
  if (info.host_visible) return {kDLCPU, 0};
  int n = 0;
  for (uint32_t i = 0; i < info.index; ++i) {
    ctl_device* other = nullptr;
    check(ctl_runtime_device(runtime(), i, &other));
    if (std::string(info_of(other).plugin_name) == info.plugin_name) ++n;
  }
  const std::string plugin = info.plugin_name;
  if (plugin == "opencl") return {kDLOpenCL, n};
  if (plugin == "vulkan") return {kDLVulkan, n};
  return {kDLExtDev, n};
}

void raise_dlpack(const std::string& message) {
  py::object cls = py::module_::import("catalyst._errors").attr("DLPackError");
  PyErr_SetObject(cls.ptr(), cls(message, "UNSUPPORTED").ptr());
  throw py::error_already_set();
}

py::object export_tensor(const Tensor& self, py::object stream, py::object max_version, py::object dl_device,
                         py::object copy) {
  if (!stream.is_none() && !(py::isinstance<py::int_>(stream) && stream.cast<int64_t>() == -1)) {
    throw py::value_error("stream must be None for Catalyst tensors (host memory has no stream to order on)");
  }
  ctl_tensor* source = self.get();
  Tensor copied;
  const bool want_copy = !copy.is_none() && copy.cast<bool>();
  const bool forbid_copy = !copy.is_none() && !copy.cast<bool>();
  ctl_device* device = ctl_tensor_device(source);  // NULL for a released tensor: the export says so
  const bool host_visible = device && info_of(device).host_visible;
  bool copy_to_host = want_copy;
  if (!dl_device.is_none()) {
    auto target = dl_device.cast<std::pair<int, int>>();
    if (target.first != kDLCPU) {
      raise_dlpack("dl_device (" + std::to_string(target.first) + ", " + std::to_string(target.second) +
                   ") is not a device Catalyst exports to; only kDLCPU (1, 0)");
    }
    if (!host_visible) {
      if (forbid_copy) raise_dlpack("dl_device asks for host memory, which needs a copy, and copy=False forbids it");
      copy_to_host = true;
    }
  }
  if (copy_to_host && device) {
    ctl_tensor* out = nullptr;
    ctl_device* target = host_visible_device();
    ctl_status* status = nullptr;
    {
      py::gil_scoped_release no_gil;
      status = ctl_tensor_to_device(source, target, &out);
    }
    check(status);
    copied = Tensor(out);
    source = out;
  }
  const bool versioned = !max_version.is_none() && max_version.cast<std::pair<int, int>>().first >= 1;
  void* managed = nullptr;
  ctl_status* status = nullptr;
  if (versioned) {
    DLManagedTensorVersioned* m = nullptr;
    status = ctl_tensor_to_dlpack_versioned(source, &m);
    if (!status) {
      if (copy_to_host) m->flags |= DLPACK_FLAG_BITMASK_IS_COPIED;
      wrap_deleter(m);
    }
    managed = m;
  } else {
    DLManagedTensor* m = nullptr;
    status = ctl_tensor_to_dlpack(source, &m);
    if (!status) wrap_deleter(m);
    managed = m;
  }
  if (status && ctl_status_get_code(status) == CTL_STATUS_UNSUPPORTED) {
    // A device that is not host-visible: BufferError, as the protocol's consumers expect.
    std::string message = ctl_status_get_message(status);
    ctl_status_free(status);
    raise_dlpack(message + " (pass copy=True, or move it with .to('cpu'))");
  }
  check(status);
  PyObject* capsule = PyCapsule_New(managed, versioned ? kVersionedName : kLegacyName, capsule_destructor);
  if (!capsule) {
    if (versioned) {
      auto* m = static_cast<DLManagedTensorVersioned*>(managed);
      m->deleter(m);
    } else {
      auto* m = static_cast<DLManagedTensor*>(managed);
      m->deleter(m);
    }
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::object>(capsule);
}

Tensor import_capsule(py::object source, py::object device, py::object copy) {
  py::object capsule = source;
  if (!PyCapsule_CheckExact(source.ptr())) {
    if (!py::hasattr(source, "__dlpack__")) {
      throw py::type_error("from_dlpack needs an object with __dlpack__ or a DLPack capsule, not " +
                           std::string(py::str(py::type::handle_of(source).attr("__name__"))));
    }
    try {
      capsule = source.attr("__dlpack__")(py::arg("max_version") = py::make_tuple(1, 0));
    } catch (py::error_already_set& e) {
      if (!e.matches(PyExc_TypeError)) throw;
      capsule = source.attr("__dlpack__")();  // a producer from before DLPack 1.0 (numpy 1.24, torch 1.13)
    }
    if (!PyCapsule_CheckExact(capsule.ptr())) throw py::type_error("__dlpack__ did not return a capsule");
  }
  const char* raw_name = PyCapsule_GetName(capsule.ptr());
  const std::string name = raw_name ? raw_name : "";
  if (name == "used_dltensor" || name == "used_dltensor_versioned") {
    throw py::value_error("this DLPack capsule was already consumed (its name is '" + name +
                          "'); a capsule can be imported once");
  }
  if (name != kLegacyName && name != kVersionedName) {
    throw py::type_error("not a DLPack capsule: its name is '" + name + "', not 'dltensor' or 'dltensor_versioned'");
  }
  ctl_device* target = nullptr;
  if (device.is_none()) {
    target = host_visible_device();
  } else if (py::isinstance<Device>(device)) {
    target = device.cast<Device>().handle;
  } else {
    check(ctl_runtime_find_device(runtime(), device.cast<std::string>().c_str(), &target));
  }
  ctl_tensor* out = nullptr;
  if (name == kVersionedName) {
    auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule.ptr(), kVersionedName));
    check(ctl_tensor_from_dlpack_versioned(target, m, &out));
    PyCapsule_SetName(capsule.ptr(), "used_dltensor_versioned");
  } else {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), kLegacyName));
    check(ctl_tensor_from_dlpack(target, m, &out));
    PyCapsule_SetName(capsule.ptr(), "used_dltensor");
  }
  Tensor imported(out);
  if (copy.is_none() || !copy.cast<bool>()) return imported;
  ctl_tensor* copied = nullptr;
  ctl_status* status = nullptr;
  {
    py::gil_scoped_release no_gil;
    status = ctl_tensor_to_device(imported.get(), target, &copied);
  }
  check(status);
  return Tensor(copied);
}

}  // namespace

void register_dlpack(py::module_& m, py::class_<Tensor>& cls) {
  cls.def("__dlpack__", &export_tensor, py::kw_only(), py::arg("stream") = py::none(),
          py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(), py::arg("copy") = py::none(),
          "A DLPack capsule of this tensor: zero-copy on a host-visible device; BufferError (DLPackError) "
          "on others unless copy=True, which copies to a host-visible device first.");
  cls.def("__dlpack_device__", [](const Tensor& t) {
    ctl_tensor_info info{};
    info.struct_size = CTL_TENSOR_INFO_STRUCT_SIZE;
    check(ctl_tensor_get_info(t.get(), &info));
    return dlpack_device(info.device);
  });
  m.def("from_dlpack", &import_capsule, py::arg("x"), py::kw_only(), py::arg("device") = py::none(),
        py::arg("copy") = py::none(),
        "A Catalyst tensor sharing the memory of `x` (anything with __dlpack__, or a capsule) on a "
        "host-visible device; copy=True gives it its own memory.");
  m.def(
      "_live_exports", [] { return g_live_exports.load(); },
      "DLPack exports whose deleter has not run yet (for leak tests).");
}

}  // namespace catalyst_py
