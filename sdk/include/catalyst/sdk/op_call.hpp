// op_call.hpp — reading a ctl_op_call, once for every plugin: the common shape of a checked
// tensor view, and OpCall, the per-call reader that checks arity, NULL slots, views against
// their buffers, dtypes, shapes and attribute structs, with the messages every plugin gives
// ("<plugin> plugin: <op>: input 1 (b) has dtype i32, expected f32").
//
// A plugin's view is a ViewShape plus its handle (a host pointer, a cl_mem, a VkBuffer
// range); its op context derives from OpCall<Context, View> and says, in one function, how
// a checked ctl_tensor_view becomes that handle:
//
//   ctl_status* bind_buffer(const ctl_tensor_view& v, const sdk::ViewFacts& facts,
//                           const sdk::ViewSlot& slot, View* out) const;
//
// It is called after sdk::check_view passed and the shape fields of *out are filled; it sets
// the handle (and offset), or refuses a view its kernels cannot address with a status from
// fail(). `buffer_size(const ctl_plugin_buffer*)` gives the size check_view compares against.
#pragma once

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <string>

#include "catalyst/sdk/attrs.hpp"
#include "catalyst/sdk/check.hpp"
#include "catalyst/sdk/op_dtypes.hpp"
#include "catalyst/sdk/raw_field.hpp"
#include "catalyst/sdk/status.hpp"
#include "catalyst/sdk/view_check.hpp"
#include "catalyst_plugin.h"

namespace catalyst::sdk {

// What every plugin's view of a tensor holds besides its handle.
struct ViewShape {
  int64_t offset = 0;  // in elements: where element [0, ...] lies in the buffer (0 where the handle points there)
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
  bool same_shape(const ViewShape& other) const {
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

// "[2, 3, 4]", for messages.
inline std::string shape_text(const ViewShape& v) {
  std::string s = "[";
  for (uint32_t i = 0; i < v.rank; ++i) s += (i ? ", " : "") + std::to_string(v.shape[i]);
  return s + "]";
}

// Where a view stands in the call, for messages: "input 1 (b)".
struct ViewSlot {
  const char* kind;  // "input" or "output"
  uint32_t index;
  const char* what;  // the operand's name in docs/ops.md
};

template <class Context, class View>
class OpCall {
 public:
  OpCall(const ctl_host_api* host_api, const ctl_op_call* op_call, const char* op_name, const char* log_prefix)
      : host(host_api), call(op_call), name(op_name), prefix(log_prefix) {}

  const ctl_host_api* host;
  const ctl_op_call* call;
  const char* name;    // the op's name, for messages
  const char* prefix;  // "<plugin> plugin: "

  // A status whose message reads "<prefix><op>: <formatted text>".
  [[gnu::format(printf, 3, 4)]] ctl_status* fail(ctl_status_code code, const char* format, ...) const {
    char text[448];
    va_list args;
    va_start(args, format);
    std::vsnprintf(text, sizeof text, format, args);
    va_end(args);
    char message[512];
    std::snprintf(message, sizeof message, "%s%s: %s", prefix, name, text);
    return host->status_create(host->context, code, message);
  }
  // NULL when an sdk check passed; else its status, with the same prefix.
  ctl_status* check(const Check& c) const { return c.ok() ? nullptr : fail(c.code, "%s", c.message); }

  // Checks the counts of inputs and outputs against [min, max], and that the arrays exist.
  ctl_status* expect_counts(uint32_t inputs_min, uint32_t inputs_max, uint32_t outputs_min,
                            uint32_t outputs_max) const {
    if (call->input_count < inputs_min || call->input_count > inputs_max) {
      return fail(CTL_STATUS_INVALID_ARGUMENT, "input_count is %u, expected %u to %u", call->input_count, inputs_min,
                  inputs_max);
    }
    if (call->output_count < outputs_min || call->output_count > outputs_max) {
      return fail(CTL_STATUS_INVALID_ARGUMENT, "output_count is %u, expected %u to %u", call->output_count, outputs_min,
                  outputs_max);
    }
    if (call->input_count > 0 && !call->inputs) return fail(CTL_STATUS_INVALID_ARGUMENT, "inputs is NULL");
    if (call->output_count > 0 && !call->outputs) return fail(CTL_STATUS_INVALID_ARGUMENT, "outputs is NULL");
    return nullptr;
  }

  // Reads input / output `index` into *out. With `optional`, a NULL (or missing) entry sets
  // *present to false instead of failing.
  ctl_status* input(uint32_t index, const char* what, View* out, bool optional = false, bool* present = nullptr) const {
    return read_view(call->inputs, call->input_count, {"input", index, what}, out, optional, present);
  }
  ctl_status* output(uint32_t index, const char* what, View* out, bool optional = false,
                     bool* present = nullptr) const {
    return read_view(call->outputs, call->output_count, {"output", index, what}, out, optional, present);
  }

  // Copies the attribute struct into *out (zeroed first); fails when it is smaller than
  // `min_size`. Leaves *given false (and *out zeroed) when attrs is NULL.
  ctl_status* attrs(void* out, size_t out_size, size_t min_size, const char* struct_name, bool* given) const {
    return check(read_attrs(call->attrs, out, out_size, min_size, struct_name, given));
  }

  ctl_status* expect_dtype(const ViewShape& v, const char* what, ctl_dtype dtype) const {
    if (raw_enum(v.dtype) == raw_enum(dtype)) return nullptr;
    return fail(CTL_STATUS_INVALID_ARGUMENT, "%s has dtype %s, expected %s", what, dtype_name(v.dtype),
                dtype_name(dtype));
  }
  ctl_status* expect_same_shape(const ViewShape& a, const char* a_name, const ViewShape& b, const char* b_name) const {
    if (a.same_shape(b)) return nullptr;
    return fail(CTL_STATUS_INVALID_ARGUMENT, "%s has shape %s but %s has shape %s", b_name, shape_text(b).c_str(),
                a_name, shape_text(a).c_str());
  }
  // v has x's shape without its last axis (a norm's statistics, class ids).
  ctl_status* expect_leading_shape(const ViewShape& v, const char* v_name, const ViewShape& x,
                                   const char* x_name) const {
    bool ok = x.rank >= 1 && v.rank + 1 == x.rank;
    for (uint32_t i = 0; ok && i < v.rank; ++i) ok = v.shape[i] == x.shape[i];
    if (ok) return nullptr;
    return fail(CTL_STATUS_INVALID_ARGUMENT, "%s has shape %s; it must be %s's shape %s without its last axis", v_name,
                shape_text(v).c_str(), x_name, shape_text(x).c_str());
  }
  // The ops with one input x and one output y of x's shape (and of x's dtype unless
  // `same_dtype` is false): checks counts, reads both views.
  ctl_status* one_to_one(View* x, View* y, bool same_dtype = true) const {
    CTL_SDK_RETURN_IF_ERROR(expect_counts(1, 1, 1, 1));
    CTL_SDK_RETURN_IF_ERROR(input(0, "x", x));
    CTL_SDK_RETURN_IF_ERROR(output(0, "y", y));
    if (same_dtype) CTL_SDK_RETURN_IF_ERROR(expect_dtype(*y, "output 0 (y)", x->dtype));
    return expect_same_shape(*y, "output 0 (y)", *x, "input 0 (x)");
  }

  // For a bind_buffer whose kernels index in elements: the view's byte offset as an element
  // offset, refused (UNSUPPORTED) when it does not start on an element boundary.
  ctl_status* element_offset(const ctl_tensor_view& v, const ViewFacts& facts, const ViewSlot& slot,
                             int64_t* out) const {
    *out = 0;
    if (facts.numel == 0) return nullptr;
    if (v.byte_offset % facts.element_size != 0) {
      return fail(CTL_STATUS_UNSUPPORTED, "%s %u (%s): byte_offset %llu is not a multiple of the %zu-byte element",
                  slot.kind, slot.index, slot.what, static_cast<unsigned long long>(v.byte_offset), facts.element_size);
    }
    *out = static_cast<int64_t>(v.byte_offset / facts.element_size);
    return nullptr;
  }

 private:
  ctl_status* read_view(const ctl_tensor_view* const* views, uint32_t count, const ViewSlot& slot, View* out,
                        bool optional, bool* present) const {
    if (present) *present = false;
    const ctl_tensor_view* v = (views && slot.index < count) ? views[slot.index] : nullptr;
    if (!v && optional) return nullptr;
    const Context& self = static_cast<const Context&>(*this);
    ViewFacts facts;
    CTL_SDK_RETURN_IF_ERROR(check(check_view(
        v, slot.kind, slot.index, slot.what,
        [&self](const ctl_plugin_buffer* buffer) { return self.buffer_size(buffer); }, &facts)));
    *out = View{};
    out->dtype = v->dtype;
    out->element_size = facts.element_size;
    out->rank = v->rank;
    for (uint32_t i = 0; i < v->rank; ++i) {
      out->shape[i] = v->shape[i];
      out->strides[i] = v->strides[i];
    }
    CTL_SDK_RETURN_IF_ERROR(self.bind_buffer(*v, facts, slot, out));
    if (present) *present = true;
    return nullptr;
  }
};

}  // namespace catalyst::sdk
