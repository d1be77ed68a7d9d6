// op_context.h — what every op family shares: the checked form of a tensor view on an
// OpenCL buffer, the per-call context (error messages, argument checks), and launching
// kernels from the kernel cache with typed arguments.
//
// Conventions shared with kernels/common.cl:
//  - a view reaches a kernel as two arguments, its cl_mem and the element offset of its
//    element [0, ...] (`__global T* x, long x_offset`);
//  - strided loops take an Iteration: `int rank, long8 shape` and one `long8 strides` per
//    view, innermost axis first (component s0), decoded with ctl_unravel / ctl_dot;
//  - a family's program is specialised by -D defines naming dtypes by their tag
//    (-DTA=f32 -DTB=i64), which common.cl turns into storage and compute types.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <type_traits>

#include "catalyst/sdk/merged_axes.hpp"
#include "catalyst/sdk/op_call.hpp"
#include "catalyst/sdk/raw_field.hpp"
#include "catalyst/sdk/status.hpp"
#include "catalyst_plugin.h"
#include "kernel_cache.h"
#include "opencl_api.h"
#include "plugin.h"

namespace catalyst::opencl {

// A validated ctl_tensor_view on an OpenCL buffer: offset (in elements) is where element
// [0, ...] lies in `mem`.
struct DeviceView : sdk::ViewShape {
  cl_mem mem = nullptr;
};

// The loop of a strided kernel over up to `Views` views that share one shape: adjacent
// axes merged where every view allows it, then reversed so that component s0 is the
// innermost axis. Most kernels take at most 4 views; the fused elementwise kernel up to 9.
template <size_t Views>
struct BasicIteration {
  cl_int rank = 0;
  cl_long8 shape{};
  cl_long8 strides[Views]{};
  int64_t numel = 1;
};
using Iteration = BasicIteration<4>;

// MergedAxes (sdk/merged_axes.hpp) as kernel arguments.
template <size_t Views>
BasicIteration<Views> to_iteration(const sdk::MergedAxes<Views>& m, size_t count) {
  BasicIteration<Views> it;
  it.rank = static_cast<cl_int>(m.rank);
  it.numel = m.numel;
  for (int i = 0; i < CTL_MAX_RANK; ++i) {
    it.shape.s[i] = m.shape[i];
    for (size_t v = 0; v < count; ++v) it.strides[v].s[i] = m.strides[v][i];
  }
  return it;
}

// `views` all have views[0]'s shape; at most `Views` of them.
template <size_t Views = 4>
BasicIteration<Views> make_iteration(const DeviceView* const* views, size_t count) {
  return to_iteration(sdk::merge_views<Views>(views, count), count);
}

// The rows of a normalisation: every axis of `shape` but `skip`, merged as make_iteration
// merges them; strides[v] are view v's over all `rank` axes, NULL for an absent view (zeros).
// numel is the number of rows.
template <size_t Views = 5>
BasicIteration<Views> make_rows(uint32_t rank, const int64_t* shape, uint32_t skip,
                                std::initializer_list<const int64_t*> strides) {
  return to_iteration(sdk::merge_axes<Views>(rank, shape, strides.begin(), strides.size(), skip), strides.size());
}

// The dtype's tag in kernels/common.cl ("f32", "bf16", ...), and its name in messages.
const char* dtype_tag(ctl_dtype dtype);
const char* dtype_name(ctl_dtype dtype);

// A value in a dtype's compute type (float for f32/f16/bf16, double for f64, int for
// i8/u8/i32/bool, long for i64): the C_(t) type of common.cl, for scalar kernel arguments.
struct Scalar {
  unsigned char bytes[8] = {};
  size_t size = 0;
};
Scalar compute_scalar(ctl_dtype dtype, double value);

// A __local buffer argument of `bytes` bytes.
struct LocalBytes {
  size_t bytes;
};

// A device buffer for intermediate results of one call. Releasing a cl_mem that queued
// commands still use is safe in OpenCL (the driver keeps it until they finish), so the
// destructor may run as soon as the last command using it is enqueued.
class Temporary {
 public:
  Temporary() = default;
  ~Temporary() {
    if (mem_) clReleaseMemObject(mem_);
  }
  Temporary(const Temporary&) = delete;
  Temporary& operator=(const Temporary&) = delete;
  cl_mem mem() const { return mem_; }
  void reset(cl_mem mem) {
    if (mem_) clReleaseMemObject(mem_);
    mem_ = mem;
  }

 private:
  cl_mem mem_ = nullptr;
};

using sdk::raw_enum;  // the integer in a caller's enum field (sdk/raw_field.hpp)

inline bool checked_mul(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}

// The per-call context: the call reader every plugin shares (sdk/op_call.hpp: arity, views,
// dtypes, shapes, attrs, messages "opencl plugin: <op>: ...") and this device's kernels.
struct OpContext : sdk::OpCall<OpContext, DeviceView> {
  OpContext(const ctl_host_api* host, ctl_plugin_device* device, ctl_plugin_stream* stream, const ctl_op_call* call,
            const char* name)
      : OpCall(host, call, name, kLogPrefix), device(device), stream(stream) {}

  ctl_plugin_device* device;
  ctl_plugin_stream* stream;

  // A status for a failed OpenCL call, naming the op, the call and the error.
  ctl_status* cl_failed(cl_int error, const char* cl_call) const;

  // ---- binding views (sdk/op_call.hpp) ----
  uint64_t buffer_size(const ctl_plugin_buffer* buffer) const { return buffer->size; }
  // Kernels index in elements: a view must start on an element boundary.
  ctl_status* bind_buffer(const ctl_tensor_view& v, const sdk::ViewFacts& facts, const sdk::ViewSlot& slot,
                          DeviceView* out) const {
    out->mem = v.buffer->mem;
    return element_offset(v, facts, slot, &out->offset);
  }

  // ---- kernels ----
  // `appendix`: generated source appended to the family's (kernel_cache.h).
  ctl_status* kernel(const char* family, const std::string& defines, const char* kernel_name, Kernel** out,
                     const std::string& appendix = {}) const {
    return device->kernels->kernel(family, defines, kernel_name, out, appendix);
  }
  // Enqueues `kernel` over a 1-D grid for a grid-stride loop over `work_items` items:
  // the kernel must loop `for (long i = get_global_id(0); i < n; i += get_global_size(0))`.
  // Does nothing when work_items is 0.
  template <class... Args>
  ctl_status* launch(Kernel* kernel, int64_t work_items, const Args&... args) const {
    if (work_items <= 0) return nullptr;
    const size_t local = loop_group_size(kernel);
    size_t groups = static_cast<size_t>((work_items + static_cast<int64_t>(local) - 1) / static_cast<int64_t>(local));
    const size_t most = static_cast<size_t>(device->compute_units) * 64;
    if (groups > most) groups = most;
    const size_t global = groups * local;
    return enqueue(kernel, 1, &global, &local, args...);
  }
  // Enqueues `kernel` over an explicit N-D range (work_dims 1..3); `local` may be NULL.
  template <class... Args>
  ctl_status* enqueue(Kernel* kernel, cl_uint work_dims, const size_t* global, const size_t* local,
                      const Args&... args) const {
    std::lock_guard lock(kernel->mutex);
    cl_uint index = 0;
    cl_int error = CL_SUCCESS;
    ((error == CL_SUCCESS ? (error = set_arg(kernel->kernel, index, args)) : error), ...);
    if (error != CL_SUCCESS) return cl_failed(error, "clSetKernelArg");
    error =
        clEnqueueNDRangeKernel(stream->queue, kernel->kernel, work_dims, nullptr, global, local, 0, nullptr, nullptr);
    return error == CL_SUCCESS ? nullptr : cl_failed(error, "clEnqueueNDRangeKernel");
  }
  // The work-group size launch() uses with `kernel`.
  size_t loop_group_size(const Kernel* kernel) const;

  // ---- device memory ----
  // A temporary buffer of `bytes` bytes (at least 1).
  ctl_status* temporary(uint64_t bytes, Temporary* out) const;
  // *out = v when v is contiguous; else a contiguous copy of v in *storage.
  ctl_status* make_contiguous(const DeviceView& v, Temporary* storage, DeviceView* out) const;
  // A contiguous view of `like`'s shape and dtype in a new temporary buffer.
  ctl_status* contiguous_like(const DeviceView& like, Temporary* storage, DeviceView* out) const;
  // dst = src element by element; same dtype and shape, any strides.
  ctl_status* copy_view(const DeviceView& src, const DeviceView& dst) const;

 private:
  static cl_int set_arg(cl_kernel k, cl_uint& index, const DeviceView& v) {
    const cl_long offset = v.offset;
    cl_int error = clSetKernelArg(k, index++, sizeof(cl_mem), &v.mem);
    return error == CL_SUCCESS ? clSetKernelArg(k, index++, sizeof offset, &offset) : error;
  }
  static cl_int set_arg(cl_kernel k, cl_uint& index, cl_mem mem) {
    return clSetKernelArg(k, index++, sizeof(cl_mem), &mem);
  }
  static cl_int set_arg(cl_kernel k, cl_uint& index, const Scalar& s) {
    return clSetKernelArg(k, index++, s.size, s.bytes);
  }
  static cl_int set_arg(cl_kernel k, cl_uint& index, const LocalBytes& l) {
    return clSetKernelArg(k, index++, l.bytes ? l.bytes : 1, nullptr);
  }
  static cl_int set_arg(cl_kernel k, cl_uint& index, const Iteration&) = delete;  // pass its fields
  template <class T>
  static cl_int set_arg(cl_kernel k, cl_uint& index, const T& value) {
    static_assert(std::is_trivially_copyable_v<T> && !std::is_pointer_v<T> && sizeof(T) != sizeof(bool),
                  "pass OpenCL scalar types (cl_int, cl_long, cl_float, cl_long8, cl_mem)");
    return clSetKernelArg(k, index++, sizeof(T), &value);
  }
};

}  // namespace catalyst::opencl
