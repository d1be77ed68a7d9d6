// op_context.cpp — checking op calls: views against their buffers, counts, attribute
// structs; every failure becomes a status that names the argument.
#include "op_context.h"

#include <cstdarg>
#include <cstdio>

#include "catalyst/sdk/view.hpp"
#include "plugin.h"

namespace catalyst::cpu {

const char* dtype_name(ctl_dtype dtype) {
  static const char* const names[] = {"f32", "f64", "f16", "bf16", "i8", "u8", "i32", "i64", "bool"};
  const auto index = static_cast<uint64_t>(raw_enum(dtype));
  return index < sizeof names / sizeof names[0] ? names[index] : "unknown";
}

ctl_status* OpContext::fail(ctl_status_code code, const char* format, ...) const {
  char text[448];
  va_list args;
  va_start(args, format);
  std::vsnprintf(text, sizeof text, format, args);
  va_end(args);
  char message[512];
  std::snprintf(message, sizeof message, "%s%s: %s", kLogPrefix, name, text);
  return host->status_create(host->context, code, message);
}

ctl_status* OpContext::expect_counts(uint32_t inputs_min, uint32_t inputs_max, uint32_t outputs_min,
                                     uint32_t outputs_max) const {
  if (call->input_count < inputs_min || call->input_count > inputs_max) {
    if (inputs_min == inputs_max) {
      return fail(CTL_STATUS_INVALID_ARGUMENT, "input_count is %u, expected %u", call->input_count, inputs_min);
    }
    return fail(CTL_STATUS_INVALID_ARGUMENT, "input_count is %u, expected %u to %u", call->input_count, inputs_min,
                inputs_max);
  }
  if (call->output_count < outputs_min || call->output_count > outputs_max) {
    if (outputs_min == outputs_max) {
      return fail(CTL_STATUS_INVALID_ARGUMENT, "output_count is %u, expected %u", call->output_count, outputs_min);
    }
    return fail(CTL_STATUS_INVALID_ARGUMENT, "output_count is %u, expected %u to %u", call->output_count, outputs_min,
                outputs_max);
  }
  if (call->input_count > 0 && !call->inputs) return fail(CTL_STATUS_INVALID_ARGUMENT, "inputs is NULL");
  if (call->output_count > 0 && !call->outputs) return fail(CTL_STATUS_INVALID_ARGUMENT, "outputs is NULL");
  return nullptr;
}

namespace {

ctl_status* read_view(const OpContext& ctx, const ctl_tensor_view* const* views, uint32_t count, uint32_t index,
                      const char* kind, const char* what, View* out, bool optional, bool* present) {
  if (present) *present = false;
  const ctl_tensor_view* v = (views && index < count) ? views[index] : nullptr;
  if (!v) {
    if (optional) return nullptr;
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "%s %u (%s) is NULL", kind, index, what);
  }
  if (v->struct_size < CTL_TENSOR_VIEW_STRUCT_SIZE) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "%s %u (%s): struct_size %zu is smaller than %zu", kind, index, what,
                    v->struct_size, static_cast<size_t>(CTL_TENSOR_VIEW_STRUCT_SIZE));
  }
  if (!v->buffer) return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "%s %u (%s): buffer is NULL", kind, index, what);
  const int64_t dtype = raw_enum(v->dtype);
  if (dtype < 0 || dtype >= CTL_DTYPE_COUNT_) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "%s %u (%s): unknown dtype %lld", kind, index, what,
                    static_cast<long long>(dtype));
  }
  const size_t element_size = sdk::dtype_size(v->dtype);
  if (v->rank > CTL_MAX_RANK) {
    return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "%s %u (%s): rank %u exceeds %d", kind, index, what, v->rank,
                    CTL_MAX_RANK);
  }
  // Every element must lie inside the buffer. The core promises it; checking costs a few
  // multiplications and turns a malformed call into an error instead of a wild write.
  int64_t numel = 1;
  unsigned __int128 last = 0;  // element offset of the last element
  for (uint32_t i = 0; i < v->rank; ++i) {
    if (v->shape[i] < 0) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "%s %u (%s): shape[%u] is negative (%lld)", kind, index, what, i,
                      static_cast<long long>(v->shape[i]));
    }
    if (v->strides[i] < 0) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "%s %u (%s): strides[%u] is negative (%lld)", kind, index, what, i,
                      static_cast<long long>(v->strides[i]));
    }
    if (!checked_mul(numel, v->shape[i], &numel)) {
      return ctx.fail(CTL_STATUS_INVALID_ARGUMENT, "%s %u (%s): element count overflows", kind, index, what);
    }
  }
  if (numel > 0) {
    for (uint32_t i = 0; i < v->rank; ++i) {
      last += static_cast<unsigned __int128>(v->shape[i] - 1) * static_cast<uint64_t>(v->strides[i]);
    }
    const unsigned __int128 end = static_cast<unsigned __int128>(v->byte_offset) + (last + 1) * element_size;
    if (end > v->buffer->size) {
      return ctx.fail(CTL_STATUS_OUT_OF_RANGE, "%s %u (%s): the view reaches byte %llu of a %llu-byte buffer", kind,
                      index, what, static_cast<unsigned long long>(end),
                      static_cast<unsigned long long>(v->buffer->size));
    }
  }
  out->data = static_cast<char*>(v->buffer->data) + (numel > 0 ? v->byte_offset : 0);
  out->dtype = v->dtype;
  out->element_size = element_size;
  out->rank = v->rank;
  for (uint32_t i = 0; i < v->rank; ++i) {
    out->shape[i] = v->shape[i];
    out->strides[i] = v->strides[i];
  }
  if (present) *present = true;
  return nullptr;
}

}  // namespace

ctl_status* OpContext::input(uint32_t index, const char* what, View* out, bool optional, bool* present) const {
  return read_view(*this, call->inputs, call->input_count, index, "input", what, out, optional, present);
}

ctl_status* OpContext::output(uint32_t index, const char* what, View* out, bool optional, bool* present) const {
  return read_view(*this, call->outputs, call->output_count, index, "output", what, out, optional, present);
}

ctl_status* OpContext::attrs(void* out, size_t out_size, size_t min_size, const char* struct_name, bool* given) const {
  std::memset(out, 0, out_size);
  *given = false;
  if (!call->attrs) return nullptr;
  const size_t size = *static_cast<const size_t*>(call->attrs);
  if (size < min_size) {
    return fail(CTL_STATUS_INVALID_ARGUMENT, "attrs: %s struct_size %zu is smaller than %zu", struct_name, size,
                min_size);
  }
  // A newer, larger struct: read only the fields this plugin knows.
  std::memcpy(out, call->attrs, size < out_size ? size : out_size);
  *given = true;
  return nullptr;
}

ctl_status* OpContext::expect_dtype(const View& v, const char* what, ctl_dtype dtype) const {
  if (raw_enum(v.dtype) == raw_enum(dtype)) return nullptr;
  return fail(CTL_STATUS_INVALID_ARGUMENT, "%s has dtype %s, expected %s", what, dtype_name(v.dtype),
              dtype_name(dtype));
}

ctl_status* OpContext::one_to_one(View* x, View* y, bool same_dtype) const {
  CTL_SDK_RETURN_IF_ERROR(expect_counts(1, 1, 1, 1));
  CTL_SDK_RETURN_IF_ERROR(input(0, "x", x));
  CTL_SDK_RETURN_IF_ERROR(output(0, "y", y));
  if (same_dtype) CTL_SDK_RETURN_IF_ERROR(expect_dtype(*y, "output 0 (y)", x->dtype));
  return expect_same_shape(*y, "output 0 (y)", *x, "input 0 (x)");
}

ctl_status* OpContext::expect_same_shape(const View& a, const char* a_name, const View& b, const char* b_name) const {
  if (a.same_shape(b)) return nullptr;
  char sa[160] = "", sb[160] = "";
  for (int pass = 0; pass < 2; ++pass) {
    const View& v = pass ? b : a;
    char* s = pass ? sb : sa;
    size_t used = 0;
    used += std::snprintf(s + used, 160 - used, "[");
    for (uint32_t i = 0; i < v.rank && used < 140; ++i) {
      used += std::snprintf(s + used, 160 - used, i ? ", %lld" : "%lld", static_cast<long long>(v.shape[i]));
    }
    std::snprintf(s + used, 160 - used, "]");
  }
  return fail(CTL_STATUS_INVALID_ARGUMENT, "%s has shape %s but %s has shape %s", b_name, sb, a_name, sa);
}

ctl_status* OpContext::expect_leading_shape(const View& v, const char* v_name, const View& x,
                                            const char* x_name) const {
  bool ok = x.rank >= 1 && v.rank + 1 == x.rank;
  for (uint32_t i = 0; ok && i < v.rank; ++i) ok = v.shape[i] == x.shape[i];
  if (ok) return nullptr;
  return fail(CTL_STATUS_INVALID_ARGUMENT, "%s must have the shape of %s without its last axis", v_name, x_name);
}

ctl_status* Scratch::allocate(const OpContext& ctx, size_t bytes) {
  if (pointer_) host_->free(host_->context, pointer_);
  pointer_ = host_->alloc(host_->context, bytes ? bytes : 1, 64);
  if (!pointer_) return ctx.fail(CTL_STATUS_OUT_OF_MEMORY, "could not allocate %zu bytes of scratch memory", bytes);
  return nullptr;
}

}  // namespace catalyst::cpu
