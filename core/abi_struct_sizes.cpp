// abi_struct_sizes.cpp — compile-time checks that every *_STRUCT_SIZE constant in abi/
// names the last field of its struct. Appending a field without updating the constant
// fails the build here instead of silently breaking older plugins and programs.
#include "catalyst_comm.h"
#include "catalyst_plugin.h"

namespace {

template <typename T>
constexpr bool size_names_last_field(size_t struct_size) {
  // Only tail padding may follow the field the constant names.
  return struct_size <= sizeof(T) && sizeof(T) - struct_size < alignof(T);
}

#define CTL_CHECK_STRUCT_SIZE(type, constant) \
  static_assert(size_names_last_field<type>(constant), #constant " does not end at the last field of " #type)

CTL_CHECK_STRUCT_SIZE(ctl_runtime_options, CTL_RUNTIME_OPTIONS_STRUCT_SIZE);
CTL_CHECK_STRUCT_SIZE(ctl_plugin_info, CTL_PLUGIN_INFO_STRUCT_SIZE);
CTL_CHECK_STRUCT_SIZE(ctl_device_info, CTL_DEVICE_INFO_STRUCT_SIZE);
CTL_CHECK_STRUCT_SIZE(ctl_placement_policy, CTL_PLACEMENT_POLICY_STRUCT_SIZE);
CTL_CHECK_STRUCT_SIZE(ctl_placement_record, CTL_PLACEMENT_RECORD_STRUCT_SIZE);
CTL_CHECK_STRUCT_SIZE(ctl_device_usage, CTL_DEVICE_USAGE_STRUCT_SIZE);
CTL_CHECK_STRUCT_SIZE(ctl_graph_options, CTL_GRAPH_OPTIONS_STRUCT_SIZE);
CTL_CHECK_STRUCT_SIZE(ctl_graph_stats, CTL_GRAPH_STATS_STRUCT_SIZE);
CTL_CHECK_STRUCT_SIZE(ctl_graph_pass_record, CTL_GRAPH_PASS_RECORD_STRUCT_SIZE);
CTL_CHECK_STRUCT_SIZE(ctl_fused_elementwise_attrs, CTL_FUSED_ELEMENTWISE_ATTRS_STRUCT_SIZE);
CTL_CHECK_STRUCT_SIZE(ctl_tensor_info, CTL_TENSOR_INFO_STRUCT_SIZE);
CTL_CHECK_STRUCT_SIZE(ctl_reduce_attrs, CTL_REDUCE_ATTRS_STRUCT_SIZE);
CTL_CHECK_STRUCT_SIZE(ctl_matmul_attrs, CTL_MATMUL_ATTRS_STRUCT_SIZE);
CTL_CHECK_STRUCT_SIZE(ctl_axis_attrs, CTL_AXIS_ATTRS_STRUCT_SIZE);
CTL_CHECK_STRUCT_SIZE(ctl_norm_attrs, CTL_NORM_ATTRS_STRUCT_SIZE);
CTL_CHECK_STRUCT_SIZE(ctl_cast_attrs, CTL_CAST_ATTRS_STRUCT_SIZE);
CTL_CHECK_STRUCT_SIZE(ctl_fill_attrs, CTL_FILL_ATTRS_STRUCT_SIZE);
CTL_CHECK_STRUCT_SIZE(ctl_arange_attrs, CTL_ARANGE_ATTRS_STRUCT_SIZE);
CTL_CHECK_STRUCT_SIZE(ctl_random_attrs, CTL_RANDOM_ATTRS_STRUCT_SIZE);
CTL_CHECK_STRUCT_SIZE(ctl_adamw_attrs, CTL_ADAMW_ATTRS_STRUCT_SIZE);
CTL_CHECK_STRUCT_SIZE(ctl_sgd_attrs, CTL_SGD_ATTRS_STRUCT_SIZE);
CTL_CHECK_STRUCT_SIZE(ctl_host_api, CTL_HOST_API_STRUCT_SIZE);
CTL_CHECK_STRUCT_SIZE(ctl_plugin_device_properties, CTL_PLUGIN_DEVICE_PROPERTIES_STRUCT_SIZE);
CTL_CHECK_STRUCT_SIZE(ctl_tensor_view, CTL_TENSOR_VIEW_STRUCT_SIZE);
CTL_CHECK_STRUCT_SIZE(ctl_op_call, CTL_OP_CALL_STRUCT_SIZE);
CTL_CHECK_STRUCT_SIZE(ctl_plugin_api, CTL_PLUGIN_API_STRUCT_SIZE);
CTL_CHECK_STRUCT_SIZE(ctl_device_locality, CTL_DEVICE_LOCALITY_STRUCT_SIZE);
CTL_CHECK_STRUCT_SIZE(ctl_device_link, CTL_DEVICE_LINK_STRUCT_SIZE);
CTL_CHECK_STRUCT_SIZE(ctl_comm_options, CTL_COMM_OPTIONS_STRUCT_SIZE);
CTL_CHECK_STRUCT_SIZE(ctl_comm_call_options, CTL_COMM_CALL_OPTIONS_STRUCT_SIZE);
CTL_CHECK_STRUCT_SIZE(ctl_comm_info, CTL_COMM_INFO_STRUCT_SIZE);
CTL_CHECK_STRUCT_SIZE(ctl_comm_call, CTL_COMM_CALL_STRUCT_SIZE);
CTL_CHECK_STRUCT_SIZE(ctl_comm_plugin_api, CTL_COMM_PLUGIN_API_STRUCT_SIZE);

}  // namespace
