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
#include <string>
#include <type_traits>

#include "catalyst/sdk/check.hpp"
#include "catalyst/sdk/raw_field.hpp"
#include "catalyst/sdk/status.hpp"
#include "catalyst_plugin.h"
#include "kernel_cache.h"
#include "opencl_api.h"
#include "plugin.h"

namespace catalyst::opencl {

// A validated ctl_tensor_view on an OpenCL buffer.
struct DeviceView {
  cl_mem mem = nullptr;
  int64_t offset = 0;  // in elements: where element [0, ...] lies in `mem`
  ctl_dtype dtype = CTL_DTYPE_F32;
  size_t element_size = 0;
  uint32_t rank = 0;
  int64_t shape[CTL_MAX_RANK] = {};
  int64_t strides[CTL_MAX_RANK] = {};

  int64_t numel() const {
    int64_t n = 1;
    for (uint32_t i = 0; i < rank; ++i) n *= shape[i];
    return n;
  }
  bool same_shape(const DeviceView& other) const {
    if (rank != other.rank) return false;
    for (uint32_t i = 0; i < rank; ++i) {
      if (shape[i] != other.shape[i]) return false;
    }
    return true;
  }
  // Row-major with no gaps (size-1 axes may have any stride).
  bool contiguous() const {
    int64_t expected = 1;
    for (uint32_t i = rank; i-- > 0;) {
      if (shape[i] != 1 && strides[i] != expected) return false;
      expected *= shape[i];
    }
    return true;
  }
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

// `views` all have views[0]'s shape; at most `Views` of them.
template <size_t Views = 4>
BasicIteration<Views> make_iteration(const DeviceView* const* views, size_t count) {
  BasicIteration<Views> it;
  const DeviceView& first = *views[0];
  int64_t shape[CTL_MAX_RANK];
  int64_t strides[Views][CTL_MAX_RANK];
  int rank = 0;
  // Walk from the innermost axis outwards, dropping size-1 axes and merging an axis into
  // the previous (inner) one when every view steps through both as one.
  for (uint32_t axis = first.rank; axis-- > 0;) {
    const int64_t size = first.shape[axis];
    if (size == 1) continue;
    bool merge = rank > 0;
    for (size_t v = 0; merge && v < count; ++v) {
      merge = views[v]->strides[axis] == strides[v][rank - 1] * shape[rank - 1];
    }
    if (merge) {
      shape[rank - 1] *= size;
      continue;
    }
    shape[rank] = size;
    for (size_t v = 0; v < count; ++v) strides[v][rank] = views[v]->strides[axis];
    ++rank;
  }
  it.rank = rank;
  it.numel = first.numel();
  for (int i = 0; i < CTL_MAX_RANK; ++i) {
    it.shape.s[i] = i < rank ? shape[i] : 1;
    for (size_t v = 0; v < count; ++v) it.strides[v].s[i] = i < rank ? strides[v][i] : 0;
  }
  return it;
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

struct OpContext {
  const ctl_host_api* host;
  ctl_plugin_device* device;
  ctl_plugin_stream* stream;
  const ctl_op_call* call;
  const char* name;  // the op's name, for messages

  // A status whose message reads "opencl plugin: <op>: <formatted text>".
  [[gnu::format(printf, 3, 4)]] ctl_status* fail(ctl_status_code code, const char* format, ...) const;
  // NULL when an sdk check passed; else its status, with the same prefix.
  ctl_status* check(const sdk::Check& c) const { return c.ok() ? nullptr : fail(c.code, "%s", c.message); }
  // A status for a failed OpenCL call, naming the op, the call and the error.
  ctl_status* cl_failed(cl_int error, const char* cl_call) const;

  // ---- argument checks (each failure is a status naming the argument) ----
  ctl_status* expect_counts(uint32_t inputs_min, uint32_t inputs_max, uint32_t outputs_min, uint32_t outputs_max) const;
  ctl_status* input(uint32_t index, const char* what, DeviceView* out, bool optional = false,
                    bool* present = nullptr) const;
  ctl_status* output(uint32_t index, const char* what, DeviceView* out, bool optional = false,
                     bool* present = nullptr) const;
  // Copies the attribute struct into *out (zeroed first); fails when it is smaller than
  // `min_size`. Leaves *given false (and *out zeroed) when attrs is NULL.
  ctl_status* attrs(void* out, size_t out_size, size_t min_size, const char* struct_name, bool* given) const;
  ctl_status* expect_dtype(const DeviceView& v, const char* what, ctl_dtype dtype) const;
  ctl_status* expect_same_shape(const DeviceView& a, const char* a_name, const DeviceView& b, const char* b_name) const;
  // v has x's shape without its last axis (a norm's statistics, class ids).
  ctl_status* expect_leading_shape(const DeviceView& v, const char* v_name, const DeviceView& x,
                                   const char* x_name) const;
  // One input x, one output y of x's shape (and dtype unless same_dtype is false).
  ctl_status* one_to_one(DeviceView* x, DeviceView* y, bool same_dtype = true) const;

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
