// binding.h — what the files of the Python extension share: the owning tensor handle the
// Python `Tensor` wraps, the runtime every call goes through, turning a C status into the
// matching Python exception, and the rules for when a call may run without the GIL.
#pragma once

#include <catalyst.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace catalyst_py {

namespace py = pybind11;

// Raises the Python exception for a non-NULL status (freeing it): the class follows the
// status code (errors.cpp, catalyst/_errors.py), the message is the ABI's.
void check(ctl_status* status);
// Raises the exception class for `code` with a message of the binding's own, for the few
// checks that happen before any C call (a consumed DLPack capsule, an index past the end).
[[noreturn]] void raise(ctl_status_code code, const std::string& message);
void register_errors(py::module_& m);

// The process-wide runtime, created on first use with the default discovery (installed
// plugins, CATALYST_PLUGINS, CATALYST_PLUGIN_PATH, CATALYST_DEVICE). Lives until exit.
ctl_runtime* runtime();

// A borrowed device handle; devices live as long as the runtime, i.e. the process.
struct Device {
  ctl_device* handle = nullptr;
};
Device default_device();
void register_devices(py::module_& m);

// The owning handle behind catalyst.Tensor. `handle` is NULL after release(): calls then
// hand the C ABI a NULL tensor, and its status says so.
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(ctl_tensor* owned) : handle_(owned) {}
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
  Tensor(Tensor&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Tensor& operator=(Tensor&& other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  ~Tensor() { ctl_tensor_release(handle_); }
  ctl_tensor* get() const { return handle_; }
  void release() { ctl_tensor_release(std::exchange(handle_, nullptr)); }

 private:
  ctl_tensor* handle_ = nullptr;
};

// The handle of an optional tensor argument (None → NULL).
inline ctl_tensor* handle_of(const Tensor* t) {
  return t ? t->get() : nullptr;
}

// Calls that may take long run without the GIL. Autograd records without locks and one
// graph must be built and backpropagated by one thread at a time (catalyst.h), so calls
// that record or backpropagate also hold graph_mutex(); nothing holds it while waiting for
// the GIL, so the two cannot deadlock.
std::mutex& graph_mutex();
// Below this many input elements an op runs with the GIL held: releasing and retaking it
// would cost more than the op.
constexpr int64_t kGilReleaseElements = 1 << 15;

// Runs `call` for inputs totalling `elements` elements, which record into a graph when
// `records` is true: with the GIL released when it is long, and under graph_mutex() when it
// records.
template <typename Call>
ctl_status* run_call(int64_t elements, bool records, Call&& call) {
  if (!records) {
    if (elements < kGilReleaseElements) return call();
    py::gil_scoped_release no_gil;
    return call();
  }
  std::unique_lock<std::mutex> lock(graph_mutex(), std::try_to_lock);
  if (lock.owns_lock() && elements < kGilReleaseElements) return call();
  ctl_status* status = nullptr;
  {
    py::gil_scoped_release no_gil;
    if (!lock.owns_lock()) lock.lock();
    status = call();
    lock.unlock();  // before the GIL is taken back
  }
  return status;
}

// Total elements and whether any of `inputs` requires a gradient (so the op records).
struct InputFacts {
  int64_t elements = 0;
  bool records = false;
};
InputFacts facts_of(const std::vector<ctl_tensor*>& inputs);

// dtype names ("f32", "float32", numpy dtypes, catalyst.dtype members) to ctl_dtype.
ctl_dtype dtype_from(const py::handle& value);

void register_tensor(py::module_& m, py::class_<Tensor>& cls);
void register_ops(py::module_& m, py::class_<Tensor>& cls);
void register_dlpack(py::module_& m, py::class_<Tensor>& cls);
// catalyst.Graph and capture_next_node (graph.cpp; ABI 1.5's graphs).
void register_graph(py::module_& m);

// Builds an op's attribute struct from keyword arguments (attrs.cpp): the op's family
// decides the struct. `storage` must outlive the call; returns NULL when the op takes none.
struct AttrStorage {
  alignas(16) unsigned char bytes[256];
};
const void* build_attrs(ctl_op_id op, const py::dict& kwargs, AttrStorage& storage);
ctl_op_id op_from(const py::handle& name_or_id);

}  // namespace catalyst_py
