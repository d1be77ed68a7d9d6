// op_dispatch.cpp — how an op call reaches a reference kernel: the structural checks every
// call passes first (counts, non-NULL required views, view fields, every element inside
// its buffer, dtypes), attribute reading, and the try/catch that keeps exceptions from
// crossing the ABI.
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <new>

#include "catalyst/sdk/status.hpp"
#include "catalyst/sdk/view.hpp"
#include "op_registry.h"

namespace catalyst::reference {
namespace {

// Checks one view's fields and, when `resolve` is given, that every element lies inside
// its buffer; fills *out.
ctl_status* resolve_view(const Call& call, const char* role, uint32_t index, const ctl_tensor_view* view,
                         BufferResolver resolve, Operand* out) {
  if (view->struct_size < CTL_TENSOR_VIEW_STRUCT_SIZE)
    return call.invalid("%s[%u]: struct_size %zu is below %zu", role, index, view->struct_size,
                        static_cast<size_t>(CTL_TENSOR_VIEW_STRUCT_SIZE));
  const long long dtype = raw_enum(view->dtype);
  if (dtype < 0 || dtype >= CTL_DTYPE_COUNT_) return call.invalid("%s[%u]: unknown dtype %lld", role, index, dtype);
  if (view->rank > CTL_MAX_RANK)
    return call.invalid("%s[%u]: rank %u exceeds %d", role, index, view->rank, CTL_MAX_RANK);
  const size_t element_size = sdk::dtype_size(view->dtype);
  uint64_t numel = 1;
  uint64_t last = 0;  // element offset of the last element
  for (uint32_t i = 0; i < view->rank; ++i) {
    if (view->shape[i] < 0 || view->strides[i] < 0)
      return call.invalid("%s[%u]: axis %u has shape %lld and stride %lld (must be >= 0)", role, index, i,
                          static_cast<long long>(view->shape[i]), static_cast<long long>(view->strides[i]));
    uint64_t span = 0;
    if (__builtin_mul_overflow(static_cast<uint64_t>(view->shape[i]), numel, &numel) ||
        numel > static_cast<uint64_t>(INT64_MAX) ||
        (view->shape[i] > 0 && (__builtin_mul_overflow(static_cast<uint64_t>(view->shape[i] - 1),
                                                       static_cast<uint64_t>(view->strides[i]), &span) ||
                                __builtin_add_overflow(last, span, &last))))
      return call.invalid("%s[%u]: size overflows", role, index);
  }
  *out = Operand{};
  out->view = view;
  out->dtype = view->dtype;
  out->element_size = element_size;
  out->rank = view->rank;
  out->shape = view->shape;
  out->strides = view->strides;
  if (!resolve) return nullptr;
  unsigned char* data = nullptr;
  uint64_t size = 0;
  if (!view->buffer || !resolve(view->buffer, &data, &size))
    return call.invalid("%s[%u]: buffer is NULL or not a reference buffer", role, index);
  uint64_t end = 0;  // one past the last byte touched
  if (numel > 0 && (__builtin_add_overflow(last, uint64_t{1}, &end) ||
                    __builtin_mul_overflow(end, static_cast<uint64_t>(element_size), &end) ||
                    __builtin_add_overflow(end, view->byte_offset, &end) || end > size))
    return call.invalid("%s[%u]: view reaches past the end of its %llu-byte buffer", role, index,
                        static_cast<unsigned long long>(size));
  // A wrapped empty buffer may have no memory at all; then nothing is ever dereferenced.
  out->base = data ? data + view->byte_offset : nullptr;
  return nullptr;
}

// Validates counts and views and fills *out. `resolve` is NULL for op_supports.
ctl_status* build_call(const ctl_host_api* host, const ctl_op_call* raw, BufferResolver resolve,
                       const OpInfo** out_info, Call* out) {
  out->host = host;
  if (!raw) return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "op call is NULL");
  if (raw->struct_size < CTL_OP_CALL_STRUCT_SIZE)
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "op call struct_size %zu is below %zu", raw->struct_size,
                            static_cast<size_t>(CTL_OP_CALL_STRUCT_SIZE));
  const long long id = raw_enum(raw->op);
  const OpInfo* info = find_op(id);
  if (!info) return sdk::make_status(host, CTL_STATUS_UNSUPPORTED, "unknown op id %lld", id);
  *out_info = info;
  out->op = info->id;
  out->name = info->name;
  out->attrs = raw->attrs;
  struct Side {
    const char* role;
    uint32_t count, required, max;
    const ctl_tensor_view* const* views;
    std::vector<Operand>* operands;
  };
  const Side sides[] = {{"input", raw->input_count, info->required_in, info->max_in, raw->inputs, &out->in},
                        {"output", raw->output_count, info->required_out, info->max_out, raw->outputs, &out->out}};
  for (const Side& side : sides) {
    if (side.count < side.required || side.count > side.max)
      return out->invalid("%u %ss given, expected %u to %u", side.count, side.role, side.required, side.max);
    if (side.count > 0 && !side.views) return out->invalid("%s array is NULL", side.role);
    side.operands->assign(side.count, Operand{});
    for (uint32_t i = 0; i < side.count; ++i) {
      if (!side.views[i]) {
        if (i < side.required) return out->invalid("%s[%u] is NULL", side.role, i);
        continue;
      }
      CTL_SDK_RETURN_IF_ERROR(resolve_view(*out, side.role, i, side.views[i], resolve, &(*side.operands)[i]));
    }
  }
  return nullptr;
}

ctl_status* vformat_status(const Call& call, ctl_status_code code, const char* format, va_list args) {
  char message[400];
  std::vsnprintf(message, sizeof message, format, args);
  return sdk::make_status(call.host, code, "%s: %s", call.name, message);
}

}  // namespace

ctl_status* Call::invalid(const char* format, ...) const {
  va_list args;
  va_start(args, format);
  ctl_status* status = vformat_status(*this, CTL_STATUS_INVALID_ARGUMENT, format, args);
  va_end(args);
  return status;
}

ctl_status* Call::unsupported(const char* format, ...) const {
  va_list args;
  va_start(args, format);
  ctl_status* status = vformat_status(*this, CTL_STATUS_UNSUPPORTED, format, args);
  va_end(args);
  return status;
}

ctl_status* read_attrs_bytes(const Call& call, size_t needed, void* out, size_t out_size, bool* present) {
  *present = call.attrs != nullptr;
  if (!call.attrs) return nullptr;
  const size_t given = *static_cast<const size_t*>(call.attrs);
  if (given < needed) return call.invalid("attrs struct_size %zu is below %zu", given, needed);
  std::memcpy(out, call.attrs, given < out_size ? given : out_size);
  return nullptr;
}

ctl_status* op_supports(const ctl_host_api* host, const ctl_op_call* raw) {
  try {
    Call call;
    const OpInfo* info = nullptr;
    CTL_SDK_RETURN_IF_ERROR(build_call(host, raw, nullptr, &info, &call));
    return check_dtypes(call, *info, CTL_STATUS_UNSUPPORTED);
  } catch (const std::bad_alloc&) {
    return sdk::make_status(host, CTL_STATUS_OUT_OF_MEMORY, "reference: out of host memory");
  } catch (...) {
    return sdk::make_status(host, CTL_STATUS_INTERNAL, "reference: unexpected exception");
  }
}

ctl_status* op_execute(const ctl_host_api* host, const ctl_op_call* raw, BufferResolver resolve) {
  try {
    Call call;
    const OpInfo* info = nullptr;
    CTL_SDK_RETURN_IF_ERROR(build_call(host, raw, resolve, &info, &call));
    CTL_SDK_RETURN_IF_ERROR(check_dtypes(call, *info, CTL_STATUS_INVALID_ARGUMENT));
    return info->kernel(call);
  } catch (const std::bad_alloc&) {
    return sdk::make_status(host, CTL_STATUS_OUT_OF_MEMORY, "reference: out of host memory");
  } catch (const std::exception& e) {
    return sdk::make_status(host, CTL_STATUS_INTERNAL, "reference: %s", e.what());
  } catch (...) {
    return sdk::make_status(host, CTL_STATUS_INTERNAL, "reference: unexpected exception");
  }
}

}  // namespace catalyst::reference
