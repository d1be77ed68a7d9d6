// op_context.cpp — checking op calls against their buffers, recording dispatches, and the
// device-memory helpers (temporaries, strided copies) every op family uses.
#include "op_context.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <string>

#include "catalyst/sdk/attrs.hpp"
#include "catalyst/sdk/op_dtypes.hpp"
#include "catalyst/sdk/view_check.hpp"
#include "streams.h"

namespace catalyst::vulkan {

const char* dtype_name(ctl_dtype dtype) {
  return sdk::dtype_name(dtype);
}

Iteration make_iteration(const DeviceView* const* views, size_t count) {
  Iteration it;
  const DeviceView& first = *views[0];
  int64_t shape[CTL_MAX_RANK];
  int64_t strides[4][CTL_MAX_RANK];
  uint32_t rank = 0;
  for (uint32_t axis = first.rank; axis-- > 0;) {
    const int64_t size = first.shape[axis];
    if (size == 1) continue;
    bool merge = rank > 0;
    for (size_t v = 0; merge && v < count; ++v)
      merge = views[v]->strides[axis] == strides[v][rank - 1] * shape[rank - 1];
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
  for (uint32_t i = 0; i < CTL_MAX_RANK; ++i) {
    it.shape[i] = i < rank ? static_cast<uint32_t>(shape[i]) : 1;
    for (size_t v = 0; v < count; ++v) it.strides[v][i] = i < rank ? static_cast<uint32_t>(strides[v][i]) : 0;
  }
  return it;
}

Iteration make_rows(uint32_t rank, const int64_t* shape, uint32_t skip, std::initializer_list<const int64_t*> strides) {
  Iteration it;
  const size_t views = strides.size();
  const int64_t* const* s = strides.begin();
  int64_t merged_shape[CTL_MAX_RANK];
  int64_t merged[6][CTL_MAX_RANK];
  uint32_t r = 0;
  it.numel = 1;
  for (uint32_t axis = rank; axis-- > 0;) {
    if (axis == skip) continue;
    const int64_t size = shape[axis];
    it.numel *= size;
    if (size == 1) continue;
    bool merge = r > 0;
    for (size_t v = 0; merge && v < views; ++v) {
      const int64_t stride = s[v] ? s[v][axis] : 0;
      merge = stride == merged[v][r - 1] * merged_shape[r - 1];
    }
    if (merge) {
      merged_shape[r - 1] *= size;
      continue;
    }
    merged_shape[r] = size;
    for (size_t v = 0; v < views; ++v) merged[v][r] = s[v] ? s[v][axis] : 0;
    ++r;
  }
  it.rank = r;
  for (uint32_t i = 0; i < CTL_MAX_RANK; ++i) {
    it.shape[i] = i < r ? static_cast<uint32_t>(merged_shape[i]) : 1;
    for (size_t v = 0; v < views; ++v) it.strides[v][i] = i < r ? static_cast<uint32_t>(merged[v][i]) : 0;
  }
  return it;
}

void Params::add_iteration(const Iteration& it, std::initializer_list<uint32_t> offsets) {
  add(static_cast<uint32_t>(it.numel));
  add(it.rank);
  for (uint32_t i = 0; i < CTL_MAX_RANK; ++i) add(it.shape[i]);
  size_t v = 0;
  for (uint32_t offset : offsets) {
    add(offset);
    for (uint32_t i = 0; i < CTL_MAX_RANK; ++i) add(it.strides[v][i]);
    ++v;
  }
}

void Params::add_iteration(const Iteration& it, const DeviceView* const* views, size_t count) {
  add(static_cast<uint32_t>(it.numel));
  add(it.rank);
  for (uint32_t i = 0; i < CTL_MAX_RANK; ++i) add(it.shape[i]);
  for (size_t v = 0; v < count; ++v) {
    add(views[v]->offset);
    for (uint32_t i = 0; i < CTL_MAX_RANK; ++i) add(it.strides[v][i]);
  }
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

namespace {

ctl_status* read_view(const OpContext& ctx, const ctl_tensor_view* const* views, uint32_t count, uint32_t index,
                      const char* kind, const char* what, DeviceView* out, bool optional, bool* present) {
  if (present) *present = false;
  const ctl_tensor_view* v = (views && index < count) ? views[index] : nullptr;
  if (!v && optional) return nullptr;
  sdk::ViewFacts facts;
  CTL_SDK_RETURN_IF_ERROR(ctx.check(sdk::check_view(
      v, kind, index, what, [](const ctl_plugin_buffer* buffer) { return buffer->size; }, &facts)));
  if (facts.numel > 0 && v->byte_offset % facts.element_size != 0) {
    return ctx.fail(CTL_STATUS_UNSUPPORTED, "%s %u (%s): byte_offset %llu is not a multiple of the %zu-byte element",
                    kind, index, what, static_cast<unsigned long long>(v->byte_offset), facts.element_size);
  }
  if (facts.numel > static_cast<int64_t>(UINT32_MAX)) {
    return ctx.fail(CTL_STATUS_UNSUPPORTED, "%s %u (%s): %lld elements; shaders index at most 2^32 - 1", kind, index,
                    what, static_cast<long long>(facts.numel));
  }
  const Allocation& a = v->buffer->allocation;
  out->buffer = a.buffer;
  out->base = a.offset;
  out->range = a.size;
  out->offset = facts.numel > 0 ? static_cast<uint32_t>(v->byte_offset / facts.element_size) : 0;
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

std::string shape_text(const DeviceView& v) {
  std::string s = "[";
  for (uint32_t i = 0; i < v.rank; ++i) s += (i ? ", " : "") + std::to_string(v.shape[i]);
  return s + "]";
}

}  // namespace

ctl_status* OpContext::input(uint32_t index, const char* what, DeviceView* out, bool optional, bool* present) const {
  return read_view(*this, call->inputs, call->input_count, index, "input", what, out, optional, present);
}

ctl_status* OpContext::output(uint32_t index, const char* what, DeviceView* out, bool optional, bool* present) const {
  return read_view(*this, call->outputs, call->output_count, index, "output", what, out, optional, present);
}

ctl_status* OpContext::attrs(void* out, size_t out_size, size_t min_size, const char* struct_name, bool* given) const {
  return check(sdk::read_attrs(call->attrs, out, out_size, min_size, struct_name, given));
}

ctl_status* OpContext::expect_dtype(const DeviceView& v, const char* what, ctl_dtype dtype) const {
  if (raw_enum(v.dtype) == raw_enum(dtype)) return nullptr;
  return fail(CTL_STATUS_INVALID_ARGUMENT, "%s has dtype %s, expected %s", what, dtype_name(v.dtype),
              dtype_name(dtype));
}

ctl_status* OpContext::expect_same_shape(const DeviceView& a, const char* a_name, const DeviceView& b,
                                         const char* b_name) const {
  if (a.same_shape(b)) return nullptr;
  return fail(CTL_STATUS_INVALID_ARGUMENT, "%s has shape %s but %s has shape %s", b_name, shape_text(b).c_str(), a_name,
              shape_text(a).c_str());
}

ctl_status* OpContext::expect_leading_shape(const DeviceView& v, const char* v_name, const DeviceView& x,
                                            const char* x_name) const {
  bool ok = x.rank >= 1 && v.rank + 1 == x.rank;
  for (uint32_t i = 0; ok && i < v.rank; ++i) ok = v.shape[i] == x.shape[i];
  if (ok) return nullptr;
  return fail(CTL_STATUS_INVALID_ARGUMENT, "%s has shape %s; it must be %s's shape %s without its last axis", v_name,
              shape_text(v).c_str(), x_name, shape_text(x).c_str());
}

ctl_status* OpContext::one_to_one(DeviceView* x, DeviceView* y, bool same_dtype) const {
  CTL_SDK_RETURN_IF_ERROR(expect_counts(1, 1, 1, 1));
  CTL_SDK_RETURN_IF_ERROR(input(0, "x", x));
  CTL_SDK_RETURN_IF_ERROR(output(0, "y", y));
  if (same_dtype) CTL_SDK_RETURN_IF_ERROR(expect_dtype(*y, "output 0 (y)", x->dtype));
  return expect_same_shape(*y, "output 0 (y)", *x, "input 0 (x)");
}

uint32_t OpContext::loop_groups(int64_t n, uint32_t local) const {
  if (n <= 0) return 0;
  const int64_t groups = (n + local - 1) / local;
  // As many groups as the device takes: an invocation's share of a grid-stride loop, and so
  // its loop iterations (op_context.h, kLoopBudget), stays small for any tensor that fits.
  const int64_t most = device->max_group_count_x;
  return static_cast<uint32_t>(std::min<int64_t>(groups, most));
}

ctl_status* OpContext::dispatch(const std::string& variant, uint32_t local, std::initializer_list<int32_t> spec,
                                uint32_t groups_x, uint32_t groups_y, const Params& params,
                                std::initializer_list<Binding> bindings) const {
  if (groups_x == 0 || groups_y == 0) return nullptr;
  const uint32_t count = static_cast<uint32_t>(bindings.size()) + 1;
  if (count > kMaxBindings + 1) return fail(CTL_STATUS_INTERNAL, "%s binds %u buffers", variant.c_str(), count);
  const Pipeline* pipeline = nullptr;
  CTL_SDK_RETURN_IF_ERROR(device->pipelines->get(variant.c_str(), count, local, spec.begin(),
                                                 static_cast<uint32_t>(spec.size()), &pipeline));
  const DeviceFunctions& fn = device->fn;
  std::lock_guard lock(stream->mutex);
  Batch* batch = nullptr;
  CTL_SDK_RETURN_IF_ERROR(open_batch(stream, name, &batch));
  const uint64_t params_size = std::max<uint64_t>(params.words.size() * 4, 4);
  uint64_t params_offset = 0;
  if (!reserve_params(device, batch, params_size, &params_offset)) {
    CTL_SDK_RETURN_IF_ERROR(submit(stream, name));
    CTL_SDK_RETURN_IF_ERROR(open_batch(stream, name, &batch));
    if (!reserve_params(device, batch, params_size, &params_offset)) {
      return fail(CTL_STATUS_INTERNAL, "%llu bytes of parameters do not fit a batch",
                  static_cast<unsigned long long>(params_size));
    }
  }
  if (!params.words.empty())
    std::memcpy(batch->params.mapped + params_offset, params.words.data(), params.words.size() * 4);

  VkDescriptorBufferInfo infos[kMaxBindings + 1];
  VkWriteDescriptorSet descriptor_writes[kMaxBindings + 1];
  Range read_ranges[kMaxBindings], write_ranges[kMaxBindings];
  size_t read_count = 0, write_count = 0;
  infos[0] = {batch->params.buffer, params_offset, params_size};
  uint32_t i = 1;
  for (const Binding& b : bindings) {
    infos[i] = {b.buffer, b.base, b.range};
    (b.write ? write_ranges[write_count++] : read_ranges[read_count++]) = Range{b.buffer, b.base, b.range};
    ++i;
  }
  VkDescriptorSet set = VK_NULL_HANDLE;
  if (!device->has_push_descriptors) {
    VkDescriptorSetAllocateInfo alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    alloc.descriptorPool = batch->pool;
    alloc.descriptorSetCount = 1;
    alloc.pSetLayouts = &pipeline->set_layout;
    const VkResult r = fn.vkAllocateDescriptorSets(device->device, &alloc, &set);
    if (r != VK_SUCCESS) return vk_fail(device, r, "vkAllocateDescriptorSets", name);
    ++batch->sets_used;
  }
  for (uint32_t k = 0; k < count; ++k) {
    descriptor_writes[k] = VkWriteDescriptorSet{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    descriptor_writes[k].dstSet = set;
    descriptor_writes[k].dstBinding = k;
    descriptor_writes[k].descriptorCount = 1;
    descriptor_writes[k].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    descriptor_writes[k].pBufferInfo = &infos[k];
  }
  order_access(device, batch, read_ranges, read_count, write_ranges, write_count);
  fn.vkCmdBindPipeline(batch->commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline->pipeline);
  if (device->has_push_descriptors) {
    fn.vkCmdPushDescriptorSetKHR(batch->commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline->layout, 0, count,
                                 descriptor_writes);
  } else {
    fn.vkUpdateDescriptorSets(device->device, count, descriptor_writes, 0, nullptr);
    fn.vkCmdBindDescriptorSets(batch->commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline->layout, 0, 1, &set, 0,
                               nullptr);
  }
  fn.vkCmdDispatch(batch->commands, groups_x, groups_y, 1);
  if (batch->command_count >= kMaxCommands || (batch->pool && batch->sets_used >= kSetsPerPool)) {
    return submit(stream, name);
  }
  return nullptr;
}

Temporary::~Temporary() {
  if (allocation.block) ctx_.retire(allocation);
}

void OpContext::retire(const Allocation& a) const {
  std::lock_guard lock(stream->mutex);
  if (stream->open) {
    stream->open->temporaries.push_back(a);
  } else if (!stream->in_flight.empty()) {
    stream->in_flight.back()->temporaries.push_back(a);
  } else {
    device->memory->release_now(a);
  }
}

ctl_status* OpContext::temporary(uint64_t bytes, Temporary* out) const {
  return device->memory->allocate(bytes, name, &out->allocation);
}

ctl_status* OpContext::carry(bool split, uint64_t bytes, const DeviceView& unsplit, Temporary* storage,
                             DeviceView* out) const {
  *out = unsplit;
  if (!split) return nullptr;
  CTL_SDK_RETURN_IF_ERROR(temporary(bytes, storage));
  out->buffer = storage->allocation.buffer;
  out->base = storage->allocation.offset;
  out->range = storage->allocation.size;
  return nullptr;
}

ctl_status* OpContext::contiguous_like(const DeviceView& like, Temporary* storage, DeviceView* out) const {
  *out = like;
  out->offset = 0;
  int64_t stride = 1;
  for (uint32_t i = like.rank; i-- > 0;) {
    out->strides[i] = stride;
    stride *= like.shape[i];
  }
  CTL_SDK_RETURN_IF_ERROR(temporary(static_cast<uint64_t>(like.numel()) * like.element_size, storage));
  out->buffer = storage->allocation.buffer;
  out->base = storage->allocation.offset;
  out->range = storage->allocation.size;
  return nullptr;
}

ctl_status* OpContext::make_contiguous(const DeviceView& v, Temporary* storage, DeviceView* out) const {
  if (v.contiguous()) {
    *out = v;
    return nullptr;
  }
  CTL_SDK_RETURN_IF_ERROR(contiguous_like(v, storage, out));
  return copy_view(v, *out);
}

ctl_status* OpContext::copy_view(const DeviceView& src, const DeviceView& dst) const {
  const DeviceView* views[2] = {&src, &dst};
  const Iteration it = make_iteration(views, 2);
  if (it.numel == 0) return nullptr;
  Params p;
  p.add_iteration(it, views, 2);
  return dispatch(std::string("copy.") + dtype_name(src.dtype), kLoopLocal, {}, loop_groups(it.numel, kLoopLocal), 1, p,
                  {reads(src), writes(dst)});
}

}  // namespace catalyst::vulkan
