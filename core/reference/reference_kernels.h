// reference_kernels.h — what the reference kernels share: a resolved operand (a validated
// view plus its host address), the call a kernel receives, attribute reading, and the
// kernel entry points that op_dispatch.cpp calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "catalyst/sdk/status.hpp"
#include "catalyst_plugin.h"
#include "value_access.h"

namespace catalyst::reference {

// One validated tensor view whose buffer is host memory. An absent optional operand has
// view == nullptr and must not be touched.
struct Operand {
  const ctl_tensor_view* view = nullptr;
  unsigned char* base = nullptr;  // address of element [0, 0, ...]
  ctl_dtype dtype = CTL_DTYPE_F32;
  size_t element_size = 0;
  uint32_t rank = 0;
  const int64_t* shape = nullptr;
  const int64_t* strides = nullptr;

  bool present() const { return view != nullptr; }
  int64_t numel() const {
    int64_t n = 1;
    for (uint32_t i = 0; i < rank; ++i) n *= shape[i];
    return n;
  }
  // `offset` is in elements from element [0, 0, ...], as strides give it.
  unsigned char* at(int64_t offset) const { return base + offset * static_cast<int64_t>(element_size); }
  double load(int64_t offset) const { return load_double(at(offset), dtype); }
  int64_t load_i(int64_t offset) const { return load_int(at(offset), dtype); }
  void store(int64_t offset, double v) const { store_double(at(offset), dtype, v); }
  void store_i(int64_t offset, int64_t v) const { store_int(at(offset), dtype, v); }
};

// What a kernel gets: validated operands (counts, non-null required views, dtypes already
// checked against docs/ops.md) and the raw attrs. Shapes are for the kernel to check.
struct Call {
  const ctl_host_api* host = nullptr;
  ctl_op_id op{};
  const char* name = "";
  std::vector<Operand> in;
  std::vector<Operand> out;
  const void* attrs = nullptr;

  // Statuses whose message starts with the op's name.
  [[gnu::format(printf, 2, 3)]] ctl_status* invalid(const char* format, ...) const;
  [[gnu::format(printf, 2, 3)]] ctl_status* unsupported(const char* format, ...) const;
};

// Copies the caller's attribute struct into *out (zeroed first), reading only the bytes
// both sides know. Sets *present to false for NULL attrs; an error when the caller's
// struct_size is below `needed`.
ctl_status* read_attrs_bytes(const Call& call, size_t needed, void* out, size_t out_size, bool* present);
template <typename T>
ctl_status* read_attrs(const Call& call, size_t needed, T* out, bool* present) {
  *out = T{};
  return read_attrs_bytes(call, needed, out, sizeof(T), present);
}

// "[2, 3, 4]" for messages.
std::string shape_string(const Operand& operand);
bool same_shape(const Operand& a, const Operand& b);
const char* dtype_name(ctl_dtype dtype);

// The kernels, one per family; each checks shapes and attributes it relies on.
ctl_status* run_unary(const Call& call);
ctl_status* run_binary(const Call& call);  // arithmetic and comparisons
ctl_status* run_where(const Call& call);
ctl_status* run_reduce(const Call& call);  // sum, mean, max, min, logsumexp
ctl_status* run_arg_reduce(const Call& call);
ctl_status* run_matmul(const Call& call);
ctl_status* run_softmax(const Call& call);  // softmax and log_softmax
ctl_status* run_layer_norm(const Call& call);
ctl_status* run_rms_norm(const Call& call);
ctl_status* run_copy(const Call& call);
ctl_status* run_cast(const Call& call);
ctl_status* run_concat(const Call& call);
ctl_status* run_gather(const Call& call);
ctl_status* run_scatter_add(const Call& call);
ctl_status* run_fill(const Call& call);
ctl_status* run_arange(const Call& call);
ctl_status* run_random(const Call& call);  // uniform and normal
// ABI 1.1 (training.cpp)
ctl_status* run_cross_entropy(const Call& call);  // forward and backward
ctl_status* run_adamw_step(const Call& call);
ctl_status* run_sgd_step(const Call& call);
ctl_status* run_softmax_backward(const Call& call);  // softmax and log_softmax
ctl_status* run_norm_backward(const Call& call);     // layer_norm and rms_norm
ctl_status* run_gelu_backward(const Call& call);     // erf and tanh forms
// ABI 1.1 (conv_pool.cpp)
ctl_status* run_conv2d(const Call& call);  // conv2d and its backward forms for the input and the weight
ctl_status* run_pool2d(const Call& call);  // max and avg pooling, forward and backward
// ABI 1.5 (fused_elementwise.cpp)
ctl_status* run_fused_elementwise(const Call& call);  // each instruction through its own op's kernel

// Entry points of op_dispatch.cpp, used by the plugin table. `resolve` maps a buffer handle to
// its host address and size (false for a handle that is not a reference buffer).
using BufferResolver = bool (*)(ctl_plugin_buffer* buffer, unsigned char** data, uint64_t* size);
ctl_status* op_supports(const ctl_host_api* host, const ctl_op_call* call);
ctl_status* op_execute(const ctl_host_api* host, const ctl_op_call* call, BufferResolver resolve);

// The gelu forms, shared by the elementwise kernels and matmul's fused activation.
double gelu_erf(double x);
double gelu_tanh(double x);
// IEEE 754-2019 maximum/minimum (NaN propagates, -0 < +0), shared by the elementwise
// kernels and the max/min reductions.
double float_maximum(double a, double b);
double float_minimum(double a, double b);

}  // namespace catalyst::reference
