// catalyst.hpp — a header-only C++20 binding over catalyst.h: RAII handles, exceptions on
// the C++ side only (every C status becomes catalyst::Error), ops as functions and
// operators, and autograd as methods. It uses nothing but the public C ABI, so what it does
// any C, Rust or Go program can do too.
//
//   catalyst::Runtime rt;                         // discovers plugins
//   auto dev = rt.default_device();
//   auto x = catalyst::Tensor::from_vector<float>(dev, {2, 3}, {1, 2, 3, 4, 5, 6});
//   x.set_requires_grad(true);
//   auto loss = catalyst::sum(catalyst::exp(x));
//   loss.backward();
//   std::vector<float> g = x.grad().to_vector<float>();
#pragma once

#include <catalyst.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace catalyst {

// A failed C call: the status code and its message.
class Error : public std::runtime_error {
 public:
  Error(ctl_status_code code, const std::string& message)
      : std::runtime_error(std::string(ctl_status_code_name(code)) + ": " + message), code_(code) {}
  ctl_status_code code() const { return code_; }

 private:
  ctl_status_code code_;
};

// Throws Error for a non-NULL status (and frees it).
inline void check(ctl_status* status) {
  if (!status) return;
  const ctl_status_code code = ctl_status_get_code(status);
  std::string message = ctl_status_get_message(status);
  ctl_status_free(status);
  throw Error(code, message);
}

using Shape = std::vector<int64_t>;

template <typename T>
constexpr ctl_dtype dtype_of();
template <>
constexpr ctl_dtype dtype_of<float>() {
  return CTL_DTYPE_F32;
}
template <>
constexpr ctl_dtype dtype_of<double>() {
  return CTL_DTYPE_F64;
}
template <>
constexpr ctl_dtype dtype_of<int32_t>() {
  return CTL_DTYPE_I32;
}
template <>
constexpr ctl_dtype dtype_of<int64_t>() {
  return CTL_DTYPE_I64;
}
template <>
constexpr ctl_dtype dtype_of<uint8_t>() {
  return CTL_DTYPE_U8;
}
template <>
constexpr ctl_dtype dtype_of<int8_t>() {
  return CTL_DTYPE_I8;
}

// A device, borrowed from its runtime (valid while the runtime lives).
class Device {
 public:
  Device() = default;
  explicit Device(ctl_device* device) : device_(device) {}
  ctl_device* get() const { return device_; }
  explicit operator bool() const { return device_ != nullptr; }

  ctl_device_info info() const {
    ctl_device_info info{};
    info.struct_size = CTL_DEVICE_INFO_STRUCT_SIZE;
    check(ctl_device_get_info(device_, &info));
    return info;
  }
  std::string name() const { return info().name; }
  std::string plugin() const { return info().plugin_name; }
  bool supports(ctl_dtype dtype) const { return info().dtype_mask & CTL_DTYPE_BIT(dtype); }
  void synchronize() const { check(ctl_device_synchronize(device_)); }
  // Busy time, ops, memory and bytes moved since the runtime started (ctl_device_get_usage).
  ctl_device_usage usage() const {
    ctl_device_usage u{};
    u.struct_size = CTL_DEVICE_USAGE_STRUCT_SIZE;
    check(ctl_device_get_usage(device_, &u));
    return u;
  }
  bool operator==(const Device& other) const { return device_ == other.device_; }
  bool operator!=(const Device& other) const { return device_ != other.device_; }

 private:
  ctl_device* device_ = nullptr;
};

// Where ops may go when they cannot run as asked (catalyst.h, "Placement").
struct PlacementPolicy {
  std::vector<Device> devices;  // empty: every device of the runtime
  ctl_placement_mode mode = CTL_PLACEMENT_EXPLICIT;
  bool allow_cross_device_inputs = false;
  bool allow_fallback = false;
};

struct RuntimeOptions {
  std::vector<std::string> plugin_paths;
  bool disable_discovery = false;
  bool enable_reference_device = false;
};

// A runtime: loaded plugins and their devices. Copies share one runtime.
class Runtime {
 public:
  explicit Runtime(const RuntimeOptions& options = {}) {
    std::vector<const char*> paths;
    for (const auto& p : options.plugin_paths) paths.push_back(p.c_str());
    ctl_runtime_options o{};
    o.struct_size = CTL_RUNTIME_OPTIONS_STRUCT_SIZE;
    o.plugin_paths = paths.empty() ? nullptr : paths.data();
    o.plugin_path_count = paths.size();
    o.disable_discovery = options.disable_discovery;
    o.enable_reference_device = options.enable_reference_device;
    check(ctl_runtime_create(&o, &runtime_));
  }
  Runtime(const Runtime& other) : runtime_(other.runtime_) { ctl_runtime_retain(runtime_); }
  Runtime& operator=(Runtime other) {
    std::swap(runtime_, other.runtime_);
    return *this;
  }
  ~Runtime() { ctl_runtime_release(runtime_); }
  ctl_runtime* get() const { return runtime_; }

  std::vector<Device> devices() const {
    std::vector<Device> out;
    for (size_t i = 0; i < ctl_runtime_device_count(runtime_); ++i) {
      ctl_device* d = nullptr;
      check(ctl_runtime_device(runtime_, i, &d));
      out.emplace_back(d);
    }
    return out;
  }
  Device default_device() const {
    ctl_device* d = nullptr;
    check(ctl_runtime_default_device(runtime_, &d));
    return Device(d);
  }
  // "cpu", "cpu:1", "opencl:0", "reference", or a device index ("0"): the core's one parser
  // (ctl_runtime_find_device), so --device and CATALYST_DEVICE read names alike.
  Device device(const std::string& spec) const {
    ctl_device* d = nullptr;
    check(ctl_runtime_find_device(runtime_, spec.c_str(), &d));
    return Device(d);
  }
  void set_placement_policy(const PlacementPolicy& policy) const {
    std::vector<ctl_device*> devices;
    for (const Device& d : policy.devices) devices.push_back(d.get());
    ctl_placement_policy p{};
    p.struct_size = CTL_PLACEMENT_POLICY_STRUCT_SIZE;
    p.devices = devices.empty() ? nullptr : devices.data();
    p.device_count = devices.size();
    p.mode = policy.mode;
    p.allow_cross_device_inputs = policy.allow_cross_device_inputs;
    p.allow_fallback = policy.allow_fallback;
    check(ctl_runtime_set_placement_policy(runtime_, &p));
  }
  // Every move and fallback so far (ctl_runtime_placement_report); `reset` starts again.
  std::vector<ctl_placement_record> placement_report(bool reset = false) const {
    size_t count = 0;
    check(ctl_runtime_placement_report(runtime_, nullptr, 0, &count, false));
    std::vector<ctl_placement_record> records(count + 8);  // room for records added meanwhile
    for (auto& r : records) r.struct_size = CTL_PLACEMENT_RECORD_STRUCT_SIZE;
    check(ctl_runtime_placement_report(runtime_, records.data(), records.size(), &count, reset));
    records.resize(std::min(count, records.size()));
    return records;
  }
  // Returns the previous setting.
  bool set_grad_enabled(bool enabled) const {
    bool previous = true;
    check(ctl_runtime_set_grad_enabled(runtime_, enabled, &previous));
    return previous;
  }

 private:
  ctl_runtime* runtime_ = nullptr;
};

// Recording off for a scope (evaluation, optimizer steps).
class NoGrad {
 public:
  explicit NoGrad(const Runtime& runtime) : runtime_(runtime), previous_(runtime.set_grad_enabled(false)) {}
  ~NoGrad() { runtime_.set_grad_enabled(previous_); }
  NoGrad(const NoGrad&) = delete;
  NoGrad& operator=(const NoGrad&) = delete;

 private:
  const Runtime& runtime_;
  bool previous_;
};

// An owning tensor handle. Copies share the tensor (a new reference), like the C API's
// retain; views share storage.
class Tensor {
 public:
  Tensor() = default;
  // Takes ownership of a new reference.
  explicit Tensor(ctl_tensor* tensor) : tensor_(tensor) {}
  Tensor(const Tensor& other) : tensor_(other.tensor_) {
    if (tensor_) ctl_tensor_retain(tensor_);
  }
  Tensor(Tensor&& other) noexcept : tensor_(std::exchange(other.tensor_, nullptr)) {}
  Tensor& operator=(Tensor other) noexcept {
    std::swap(tensor_, other.tensor_);
    return *this;
  }
  ~Tensor() { ctl_tensor_release(tensor_); }

  ctl_tensor* get() const { return tensor_; }
  explicit operator bool() const { return tensor_ != nullptr; }

  // ---- creation
  static Tensor empty(Device device, ctl_dtype dtype, const Shape& shape) {
    ctl_tensor* t = nullptr;
    check(ctl_tensor_create(device.get(), dtype, shape.size(), shape.data(), &t));
    return Tensor(t);
  }
  static Tensor zeros(Device device, ctl_dtype dtype, const Shape& shape) {
    ctl_tensor* t = nullptr;
    check(ctl_tensor_create_zeros(device.get(), dtype, shape.size(), shape.data(), &t));
    return Tensor(t);
  }
  static Tensor full(Device device, ctl_dtype dtype, const Shape& shape, double value) {
    ctl_tensor* t = nullptr;
    check(ctl_tensor_create_full(device.get(), dtype, shape.size(), shape.data(), value, &t));
    return Tensor(t);
  }
  static Tensor from_host(Device device, ctl_dtype dtype, const Shape& shape, const void* data, size_t bytes) {
    ctl_tensor* t = nullptr;
    check(ctl_tensor_from_host(device.get(), dtype, shape.size(), shape.data(), data, bytes, &t));
    return Tensor(t);
  }
  template <typename T>
  static Tensor from_vector(Device device, const Shape& shape, const std::vector<T>& values) {
    return from_host(device, dtype_of<T>(), shape, values.data(), values.size() * sizeof(T));
  }

  // ---- facts
  ctl_dtype dtype() const { return ctl_tensor_dtype(tensor_); }
  size_t rank() const { return ctl_tensor_rank(tensor_); }
  int64_t dim(int64_t axis) const { return ctl_tensor_dim(tensor_, axis); }
  int64_t numel() const { return ctl_tensor_numel(tensor_); }
  Shape shape() const {
    Shape s(rank());
    for (size_t i = 0; i < s.size(); ++i) s[i] = dim(static_cast<int64_t>(i));
    return s;
  }
  Device device() const { return Device(ctl_tensor_device(tensor_)); }

  // ---- data
  void to_host(void* destination, size_t bytes) const { check(ctl_tensor_to_host(tensor_, destination, bytes)); }
  template <typename T>
  std::vector<T> to_vector() const {
    if (dtype() != dtype_of<T>()) {
      throw Error(CTL_STATUS_INVALID_ARGUMENT,
                  std::string("to_vector: the tensor is ") + ctl_dtype_name(dtype()) + ", not the requested type");
    }
    std::vector<T> v(static_cast<size_t>(numel()));
    to_host(v.data(), v.size() * sizeof(T));
    return v;
  }
  // The value of a one-element tensor, as a double.
  double item() const;
  Tensor to(Device device) const {
    ctl_tensor* t = nullptr;
    check(ctl_tensor_to_device(tensor_, device.get(), &t));
    return Tensor(t);
  }
  // A move to `device` that autograd records: gradients flow back (ctl_tensor_transfer).
  Tensor transfer(Device device) const {
    ctl_tensor* t = nullptr;
    check(ctl_tensor_transfer(tensor_, device.get(), &t));
    return Tensor(t);
  }

  // ---- views (no copies)
  Tensor reshape(const Shape& shape) const {
    ctl_tensor* t = nullptr;
    check(ctl_tensor_reshape(tensor_, shape.size(), shape.data(), &t));
    return Tensor(t);
  }
  Tensor permute(const Shape& perm) const {
    ctl_tensor* t = nullptr;
    check(ctl_tensor_permute(tensor_, perm.size(), perm.data(), &t));
    return Tensor(t);
  }
  Tensor transpose(int64_t a, int64_t b) const {
    ctl_tensor* t = nullptr;
    check(ctl_tensor_transpose(tensor_, a, b, &t));
    return Tensor(t);
  }
  Tensor slice(int64_t axis, int64_t start, int64_t stop, int64_t step = 1) const {
    ctl_tensor* t = nullptr;
    check(ctl_tensor_slice(tensor_, axis, start, stop, step, &t));
    return Tensor(t);
  }
  Tensor expand(const Shape& shape) const {
    ctl_tensor* t = nullptr;
    check(ctl_tensor_expand(tensor_, shape.size(), shape.data(), &t));
    return Tensor(t);
  }
  Tensor contiguous() const {
    ctl_tensor* t = nullptr;
    check(ctl_tensor_contiguous(tensor_, &t));
    return Tensor(t);
  }

  // ---- autograd
  Tensor& set_requires_grad(bool requires_grad = true) {
    check(ctl_tensor_set_requires_grad(tensor_, requires_grad));
    return *this;
  }
  bool requires_grad() const { return ctl_tensor_requires_grad(tensor_); }
  // The accumulated gradient; an empty Tensor when there is none.
  Tensor grad() const {
    ctl_tensor* t = nullptr;
    check(ctl_tensor_grad(tensor_, &t));
    return Tensor(t);
  }
  void zero_grad() const { check(ctl_tensor_zero_grad(tensor_)); }
  void backward() const { check(ctl_tensor_backward(tensor_, nullptr)); }
  void backward(const Tensor& grad_output) const { check(ctl_tensor_backward(tensor_, grad_output.get())); }
  Tensor detach() const {
    ctl_tensor* t = nullptr;
    check(ctl_tensor_detach(tensor_, &t));
    return Tensor(t);
  }

 private:
  ctl_tensor* tensor_ = nullptr;
};

// ---- ops -----------------------------------------------------------------------------------

inline std::vector<Tensor> run(ctl_op_id op, const std::vector<const Tensor*>& inputs, const void* attrs,
                               size_t outputs) {
  std::vector<ctl_tensor*> in;
  for (const Tensor* t : inputs) in.push_back(t && *t ? t->get() : nullptr);
  std::vector<ctl_tensor*> out(outputs, nullptr);
  check(ctl_op_run(op, in.size(), in.data(), attrs, outputs, out.data()));
  std::vector<Tensor> result;
  for (ctl_tensor* t : out) result.emplace_back(t);
  return result;
}
inline Tensor run1(ctl_op_id op, const std::vector<const Tensor*>& inputs, const void* attrs = nullptr) {
  return std::move(run(op, inputs, attrs, 1)[0]);
}
// Runs `op` writing into existing outputs (not recorded by autograd).
inline void run_into(ctl_op_id op, const std::vector<const Tensor*>& inputs, const void* attrs,
                     const std::vector<const Tensor*>& outputs) {
  std::vector<ctl_tensor*> in, out;
  for (const Tensor* t : inputs) in.push_back(t && *t ? t->get() : nullptr);
  for (const Tensor* t : outputs) out.push_back(t && *t ? t->get() : nullptr);
  check(ctl_op_run_into(op, in.size(), in.data(), attrs, out.size(), out.data()));
}

#define CATALYST_UNARY(name, id)        \
  inline Tensor name(const Tensor& x) { \
    return run1(id, {&x});              \
  }
CATALYST_UNARY(neg, CTL_OP_NEG)
CATALYST_UNARY(abs, CTL_OP_ABS)
CATALYST_UNARY(exp, CTL_OP_EXP)
CATALYST_UNARY(log, CTL_OP_LOG)
CATALYST_UNARY(sqrt, CTL_OP_SQRT)
CATALYST_UNARY(rsqrt, CTL_OP_RSQRT)
CATALYST_UNARY(tanh, CTL_OP_TANH)
CATALYST_UNARY(sigmoid, CTL_OP_SIGMOID)
CATALYST_UNARY(relu, CTL_OP_RELU)
CATALYST_UNARY(gelu, CTL_OP_GELU)
CATALYST_UNARY(gelu_tanh, CTL_OP_GELU_TANH)
CATALYST_UNARY(silu, CTL_OP_SILU)
CATALYST_UNARY(sin, CTL_OP_SIN)
CATALYST_UNARY(cos, CTL_OP_COS)
CATALYST_UNARY(reciprocal, CTL_OP_RECIPROCAL)
#undef CATALYST_UNARY

#define CATALYST_BINARY(name, id)                        \
  inline Tensor name(const Tensor& a, const Tensor& b) { \
    return run1(id, {&a, &b});                           \
  }
CATALYST_BINARY(add, CTL_OP_ADD)
CATALYST_BINARY(sub, CTL_OP_SUB)
CATALYST_BINARY(mul, CTL_OP_MUL)
CATALYST_BINARY(div, CTL_OP_DIV)
CATALYST_BINARY(pow, CTL_OP_POW)
CATALYST_BINARY(maximum, CTL_OP_MAXIMUM)
CATALYST_BINARY(minimum, CTL_OP_MINIMUM)
CATALYST_BINARY(eq, CTL_OP_EQ)
CATALYST_BINARY(ne, CTL_OP_NE)
CATALYST_BINARY(lt, CTL_OP_LT)
CATALYST_BINARY(le, CTL_OP_LE)
CATALYST_BINARY(gt, CTL_OP_GT)
CATALYST_BINARY(ge, CTL_OP_GE)
#undef CATALYST_BINARY

// A rank-0 tensor of x's dtype on x's device, for mixing tensors with numbers.
inline Tensor scalar_like(const Tensor& x, double value) {
  return Tensor::full(x.device(), x.dtype(), {}, value);
}

inline Tensor operator+(const Tensor& a, const Tensor& b) {
  return add(a, b);
}
inline Tensor operator-(const Tensor& a, const Tensor& b) {
  return sub(a, b);
}
inline Tensor operator*(const Tensor& a, const Tensor& b) {
  return mul(a, b);
}
inline Tensor operator/(const Tensor& a, const Tensor& b) {
  return div(a, b);
}
inline Tensor operator-(const Tensor& x) {
  return neg(x);
}
inline Tensor operator+(const Tensor& a, double b) {
  return add(a, scalar_like(a, b));
}
inline Tensor operator-(const Tensor& a, double b) {
  return sub(a, scalar_like(a, b));
}
inline Tensor operator*(const Tensor& a, double b) {
  return mul(a, scalar_like(a, b));
}
inline Tensor operator/(const Tensor& a, double b) {
  return div(a, scalar_like(a, b));
}
inline Tensor operator*(double a, const Tensor& b) {
  return mul(scalar_like(b, a), b);
}

inline Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b) {
  return run1(CTL_OP_WHERE, {&condition, &a, &b});
}

inline Tensor reduce(ctl_op_id op, const Tensor& x, const std::vector<int64_t>& axes = {}, bool keepdims = false) {
  ctl_tensor* t = nullptr;
  check(ctl_op_reduce(op, x.get(), axes.size(), axes.empty() ? nullptr : axes.data(), keepdims, &t));
  return Tensor(t);
}
inline Tensor sum(const Tensor& x, const std::vector<int64_t>& axes = {}, bool keepdims = false) {
  return reduce(CTL_OP_SUM, x, axes, keepdims);
}
inline Tensor mean(const Tensor& x, const std::vector<int64_t>& axes = {}, bool keepdims = false) {
  return reduce(CTL_OP_MEAN, x, axes, keepdims);
}
inline Tensor max(const Tensor& x, const std::vector<int64_t>& axes = {}, bool keepdims = false) {
  return reduce(CTL_OP_MAX, x, axes, keepdims);
}
inline Tensor argmax(const Tensor& x, int64_t axis, bool keepdims = false) {
  return reduce(CTL_OP_ARGMAX, x, {axis}, keepdims);
}
inline Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& axes, bool keepdims = false) {
  return reduce(CTL_OP_LOGSUMEXP, x, axes, keepdims);
}

struct MatmulOptions {
  bool transpose_a = false;
  bool transpose_b = false;
  double alpha = 1.0;
  ctl_activation activation = CTL_ACTIVATION_NONE;
};
// activation(alpha * op(a) @ op(b) + bias); bias may be empty.
inline Tensor matmul(const Tensor& a, const Tensor& b, const Tensor& bias = {}, const MatmulOptions& o = {}) {
  ctl_matmul_attrs m{};
  m.struct_size = CTL_MATMUL_ATTRS_STRUCT_SIZE;
  m.transpose_a = o.transpose_a;
  m.transpose_b = o.transpose_b;
  m.alpha = o.alpha;
  m.alpha_set = true;
  m.activation = o.activation;
  if (bias) return run1(CTL_OP_MATMUL, {&a, &b, &bias}, &m);
  return run1(CTL_OP_MATMUL, {&a, &b}, &m);
}

inline Tensor softmax(const Tensor& x, int32_t axis = -1) {
  ctl_axis_attrs a{CTL_AXIS_ATTRS_STRUCT_SIZE, axis};
  return run1(CTL_OP_SOFTMAX, {&x}, &a);
}
inline Tensor log_softmax(const Tensor& x, int32_t axis = -1) {
  ctl_axis_attrs a{CTL_AXIS_ATTRS_STRUCT_SIZE, axis};
  return run1(CTL_OP_LOG_SOFTMAX, {&x}, &a);
}
inline Tensor layer_norm(const Tensor& x, const Tensor& weight = {}, const Tensor& bias = {}, double eps = 1e-5) {
  ctl_norm_attrs a{CTL_NORM_ATTRS_STRUCT_SIZE, eps};
  return run1(CTL_OP_LAYER_NORM, {&x, &weight, &bias}, &a);
}
inline Tensor rms_norm(const Tensor& x, const Tensor& weight = {}, double eps = 1e-5) {
  ctl_norm_attrs a{CTL_NORM_ATTRS_STRUCT_SIZE, eps};
  return run1(CTL_OP_RMS_NORM, {&x, &weight}, &a);
}
inline Tensor cast(const Tensor& x, ctl_dtype dtype) {
  ctl_cast_attrs a{CTL_CAST_ATTRS_STRUCT_SIZE, dtype};
  return run1(CTL_OP_CAST, {&x}, &a);
}
inline Tensor concat(const std::vector<Tensor>& parts, int32_t axis) {
  std::vector<const Tensor*> in;
  for (const Tensor& t : parts) in.push_back(&t);
  ctl_axis_attrs a{CTL_AXIS_ATTRS_STRUCT_SIZE, axis};
  return run1(CTL_OP_CONCAT, in, &a);
}
// Rows of `table` chosen by `index` along `axis` (an embedding lookup with axis 0).
inline Tensor gather(const Tensor& table, const Tensor& index, int32_t axis = 0) {
  ctl_axis_attrs a{CTL_AXIS_ATTRS_STRUCT_SIZE, axis};
  return run1(CTL_OP_GATHER, {&table, &index}, &a);
}
inline Tensor scatter_add(const Tensor& target, const Tensor& index, const Tensor& source, int32_t axis = 0) {
  ctl_axis_attrs a{CTL_AXIS_ATTRS_STRUCT_SIZE, axis};
  return run1(CTL_OP_SCATTER_ADD, {&target, &index, &source}, &a);
}

struct CrossEntropyOptions {
  ctl_reduction reduction = CTL_REDUCTION_MEAN;
  std::optional<int64_t> ignore_index;
};
// Cross-entropy of softmax(logits) over the last axis against class ids.
inline Tensor cross_entropy(const Tensor& logits, const Tensor& target, const CrossEntropyOptions& o = {}) {
  ctl_cross_entropy_attrs a{};
  a.struct_size = CTL_CROSS_ENTROPY_ATTRS_STRUCT_SIZE;
  a.reduction = o.reduction;
  a.ignore_index = o.ignore_index.value_or(0);
  a.ignore_index_set = o.ignore_index.has_value();
  return run1(CTL_OP_CROSS_ENTROPY, {&logits, &target}, &a);
}

struct Conv2dOptions {
  int64_t stride = 1;
  int64_t padding = 0;
  int64_t dilation = 1;
  int64_t groups = 1;
};
// 2-D convolution of x (N, C, H, W) with weight (O, C / groups, KH, KW); bias may be empty.
inline Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias = {}, const Conv2dOptions& o = {}) {
  ctl_conv2d_attrs a{};
  a.struct_size = CTL_CONV2D_ATTRS_STRUCT_SIZE;
  a.stride[0] = a.stride[1] = o.stride;
  a.padding[0] = a.padding[1] = o.padding;
  a.dilation[0] = a.dilation[1] = o.dilation;
  a.groups = o.groups;
  return run1(CTL_OP_CONV2D, {&x, &weight, &bias}, &a);
}
// Square pooling windows; stride 0 means the kernel size.
inline Tensor max_pool2d(const Tensor& x, int64_t kernel, int64_t stride = 0, int64_t padding = 0) {
  ctl_pool2d_attrs a{};
  a.struct_size = CTL_POOL2D_ATTRS_STRUCT_SIZE;
  a.kernel[0] = a.kernel[1] = kernel;
  a.stride[0] = a.stride[1] = stride;
  a.padding[0] = a.padding[1] = padding;
  return run1(CTL_OP_MAX_POOL2D, {&x}, &a);
}
inline Tensor avg_pool2d(const Tensor& x, int64_t kernel, int64_t stride = 0, int64_t padding = 0,
                         bool exclude_padding = false) {
  ctl_pool2d_attrs a{};
  a.struct_size = CTL_POOL2D_ATTRS_STRUCT_SIZE;
  a.kernel[0] = a.kernel[1] = kernel;
  a.stride[0] = a.stride[1] = stride;
  a.padding[0] = a.padding[1] = padding;
  a.exclude_padding = exclude_padding;
  return run1(CTL_OP_AVG_POOL2D, {&x}, &a);
}

// Fills existing tensors (not recorded by autograd).
inline void fill_(const Tensor& out, double value) {
  ctl_fill_attrs a{CTL_FILL_ATTRS_STRUCT_SIZE, value};
  run_into(CTL_OP_FILL, {}, &a, {&out});
}
inline void copy_(const Tensor& destination, const Tensor& source) {
  run_into(CTL_OP_COPY, {&source}, nullptr, {&destination});
}
inline Tensor arange(Device device, ctl_dtype dtype, int64_t count, double start = 0, double step = 1) {
  Tensor out = Tensor::empty(device, dtype, {count});
  ctl_arange_attrs a{CTL_ARANGE_ATTRS_STRUCT_SIZE, start, step};
  run_into(CTL_OP_ARANGE, {}, &a, {&out});
  return out;
}
// Counter-based random numbers: the same (seed, offset) gives the same numbers on every
// device. uniform in [a, b); normal with mean a and standard deviation b.
inline Tensor random(Device device, ctl_dtype dtype, const Shape& shape, bool normal, uint64_t seed, uint64_t offset,
                     double a, double b) {
  Tensor out = Tensor::empty(device, dtype, shape);
  ctl_random_attrs r{CTL_RANDOM_ATTRS_STRUCT_SIZE, seed, offset, a, b};
  run_into(normal ? CTL_OP_RANDOM_NORMAL : CTL_OP_RANDOM_UNIFORM, {}, &r, {&out});
  return out;
}

inline double Tensor::item() const {
  if (numel() != 1) throw Error(CTL_STATUS_INVALID_ARGUMENT, "item() needs a tensor of one element");
  // Read in a dtype the device computes in and widen on the host: a device without f64 (which
  // only f64 tensors need) can still report a loss. f32 and f64 as they are, f16 and bf16
  // through f32, integers and bool through i64: each step is exact, as a cast to f64 was.
  switch (dtype()) {
    case CTL_DTYPE_F64: {
      double v = 0;
      to_host(&v, sizeof v);
      return v;
    }
    case CTL_DTYPE_F32:
    case CTL_DTYPE_F16:
    case CTL_DTYPE_BF16: {
      const Tensor as_float = dtype() == CTL_DTYPE_F32 ? *this : cast(*this, CTL_DTYPE_F32);
      float v = 0;
      as_float.to_host(&v, sizeof v);
      return v;
    }
    default: {
      const Tensor as_long = dtype() == CTL_DTYPE_I64 ? *this : cast(*this, CTL_DTYPE_I64);
      int64_t v = 0;
      as_long.to_host(&v, sizeof v);
      return static_cast<double>(v);
    }
  }
}

}  // namespace catalyst
