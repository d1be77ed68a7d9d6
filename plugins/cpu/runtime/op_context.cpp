// op_context.cpp — checking op calls: views against their buffers, counts, attribute
// structs; every failure becomes a status that names the argument.
#include "op_context.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

#include "buffer_cache.h"
#include "catalyst/sdk/attrs.hpp"
#include "catalyst/sdk/op_dtypes.hpp"
#include "catalyst/sdk/view_check.hpp"
#include "plugin.h"

namespace catalyst::cpu {

const char* dtype_name(ctl_dtype dtype) {
  return sdk::dtype_name(dtype);
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
  if (!v && optional) return nullptr;
  sdk::ViewFacts facts;
  CTL_SDK_RETURN_IF_ERROR(ctx.check(sdk::check_view(
      v, kind, index, what, [](const ctl_plugin_buffer* buffer) { return buffer->size; }, &facts)));
  out->data = static_cast<char*>(v->buffer->data) + (facts.numel > 0 ? v->byte_offset : 0);
  out->dtype = v->dtype;
  out->element_size = facts.element_size;
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
  return check(sdk::read_attrs(call->attrs, out, out_size, min_size, struct_name, given));
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
  release();
  if (ctx.cache && bytes <= BufferCache::kSmallBytes) {
    pointer_ = ctx.cache->take_small(bytes);
    if (pointer_) {
      small_ = true;
      cache_ = ctx.cache;
      return nullptr;
    }
  }
  if (ctx.cache && bytes >= BufferCache::kMinBytes) {
    pointer_ = ctx.cache->take(bytes, &cached_capacity_);  // page aligned
    if (pointer_) {
      cache_ = ctx.cache;
      return nullptr;
    }
  }
  pointer_ = host_->alloc(host_->context, bytes ? bytes : 1, 64);
  if (!pointer_) return ctx.fail(CTL_STATUS_OUT_OF_MEMORY, "could not allocate %zu bytes of scratch memory", bytes);
  return nullptr;
}

void Scratch::release() {
  if (small_) {
    cache_->give_small(pointer_);
    small_ = false;
    cache_ = nullptr;
  } else if (cache_) {
    cache_->give(pointer_, cached_capacity_);
    cache_ = nullptr;
  } else if (pointer_) {
    host_->free(host_->context, pointer_);
  }
  pointer_ = nullptr;
}

}  // namespace catalyst::cpu
