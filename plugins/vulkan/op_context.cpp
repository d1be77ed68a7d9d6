// op_context.cpp — what the call reader (sdk/op_call.hpp) leaves to this plugin: binding a
// view to its allocation, shader parameters, recording dispatches, and the device-memory
// helpers (temporaries, strided copies) every op family uses.
#include "op_context.h"

#include <algorithm>
#include <string>

#include "catalyst/sdk/op_dtypes.hpp"
#include "streams.h"

namespace catalyst::vulkan {

const char* dtype_name(ctl_dtype dtype) {
  return sdk::dtype_name(dtype);
}

namespace {

// MergedAxes (sdk/merged_axes.hpp) as shader words; bind_buffer keeps every size and stride a
// view can have below 2^32.
template <size_t Views>
Iteration to_words(const sdk::MergedAxes<Views>& m, size_t views) {
  Iteration it;
  it.rank = m.rank;
  it.numel = m.numel;
  for (uint32_t i = 0; i < CTL_MAX_RANK; ++i) {
    it.shape[i] = static_cast<uint32_t>(m.shape[i]);
    for (size_t v = 0; v < views; ++v) it.strides[v][i] = static_cast<uint32_t>(m.strides[v][i]);
  }
  return it;
}

}  // namespace

Iteration make_iteration(const DeviceView* const* views, size_t count) {
  return to_words(sdk::merge_views<4>(views, count), count);
}

Iteration make_rows(uint32_t rank, const int64_t* shape, uint32_t skip, std::initializer_list<const int64_t*> strides) {
  return to_words(sdk::merge_axes<6>(rank, shape, strides.begin(), strides.size(), skip), strides.size());
}

void Params::add_iteration(const Iteration& it, std::initializer_list<int64_t> offsets) {
  add(static_cast<uint32_t>(it.numel));
  add(it.rank);
  for (uint32_t i = 0; i < CTL_MAX_RANK; ++i) add(it.shape[i]);
  size_t v = 0;
  for (int64_t offset : offsets) {
    add(static_cast<uint32_t>(offset));
    for (uint32_t i = 0; i < CTL_MAX_RANK; ++i) add(it.strides[v][i]);
    ++v;
  }
}

void Params::add_iteration(const Iteration& it, const DeviceView* const* views, size_t count) {
  add(static_cast<uint32_t>(it.numel));
  add(it.rank);
  for (uint32_t i = 0; i < CTL_MAX_RANK; ++i) add(it.shape[i]);
  for (size_t v = 0; v < count; ++v) {
    add(static_cast<uint32_t>(views[v]->offset));
    for (uint32_t i = 0; i < CTL_MAX_RANK; ++i) add(it.strides[v][i]);
  }
}

ctl_status* OpContext::bind_buffer(const ctl_tensor_view& v, const sdk::ViewFacts& facts, const sdk::ViewSlot& slot,
                                   DeviceView* out) const {
  CTL_SDK_RETURN_IF_ERROR(element_offset(v, facts, slot, &out->offset));
  if (facts.numel > static_cast<int64_t>(UINT32_MAX)) {
    return fail(CTL_STATUS_UNSUPPORTED, "%s %u (%s): %lld elements; shaders index at most 2^32 - 1", slot.kind,
                slot.index, slot.what, static_cast<long long>(facts.numel));
  }
  const Allocation& a = v.buffer->allocation;
  out->buffer = a.buffer;
  out->base = a.offset;
  out->range = a.size;
  return nullptr;
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
