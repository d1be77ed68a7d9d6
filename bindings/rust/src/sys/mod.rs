//! The raw C ABI of `abi/catalyst.h`, declared by hand: every type, constant and function,
//! named as in C. Nothing here is safe to call without reading catalyst.h; the rest of the
//! crate wraps it. `tests/abi_sync.rs` compiles a C++ program against catalyst.h that checks
//! every declaration below (sizes, offsets, field and argument types, constant values) and
//! that nothing in the header is missing here.
#![allow(non_camel_case_types, non_upper_case_globals, non_snake_case, missing_docs)]

#[macro_use]
mod macros;

use std::os::raw::{c_char, c_int, c_uint, c_void};

/// One struct as this compiler lays it out (for tests/abi_sync.rs).
#[derive(Debug)]
pub struct StructLayout {
    pub name: &'static str,
    pub size: usize,
    pub align: usize,
    /// Where the last field ends: the value of C's `*_STRUCT_SIZE` for the struct.
    pub abi_size: usize,
    pub fields: Vec<FieldLayout>,
}

/// One field of a [`StructLayout`].
#[derive(Debug)]
pub struct FieldLayout {
    pub name: &'static str,
    pub offset: usize,
    /// The Rust type as written in the declaration.
    pub rust_type: &'static str,
}

/// One declared function: its name and Rust types as written.
#[derive(Debug)]
pub struct AbiFunction {
    pub name: &'static str,
    pub args: &'static [&'static str],
    pub ret: &'static str,
}

abi_opaque_types! {
    /// An error: code and message. Freed with `ctl_status_free`.
    ctl_status;
    ctl_runtime;
    ctl_device;
    ctl_tensor;
    /// A captured graph of ops (since 1.5).
    ctl_graph;
}

// C enums are `unsigned int` here (GCC and Clang on every target Catalyst builds for pick it
// for enums without negative values); tests/abi_sync.rs checks size and signedness.
abi_type_aliases! {
    ctl_status_code = c_uint;
    ctl_dtype = c_uint;
    ctl_log_level = c_uint;
    ctl_device_kind = c_uint;
    ctl_op_id = c_uint;
    ctl_activation = c_uint;
    ctl_reduction = c_uint;
    ctl_locality_join = c_uint;
    ctl_device_link_class = c_uint;
    ctl_device_copy_path = c_uint;
    ctl_topology_format = c_uint;
    ctl_placement_mode = c_uint;
    ctl_placement_event_kind = c_uint;
    ctl_graph_stage = c_uint;
    ctl_log_fn = Option<unsafe extern "C" fn(*mut c_void, ctl_log_level, *const c_char)>;
    ctl_softmax_attrs = ctl_axis_attrs;
    // DLPack's (dlpack/dlpack.h), which catalyst.h names but does not define.
    DLDeviceType = c_uint;
}

abi_constants! {
    CTL_ABI_VERSION_MAJOR: u32 = 1;
    CTL_ABI_VERSION_MINOR: u32 = 6;
    CTL_MAX_RANK: usize = 8;

    CTL_STATUS_OK: ctl_status_code = 0;
    CTL_STATUS_INVALID_ARGUMENT: ctl_status_code = 1;
    CTL_STATUS_OUT_OF_MEMORY: ctl_status_code = 2;
    CTL_STATUS_UNSUPPORTED: ctl_status_code = 3;
    CTL_STATUS_NOT_FOUND: ctl_status_code = 4;
    CTL_STATUS_DEVICE_LOST: ctl_status_code = 5;
    CTL_STATUS_INTERNAL: ctl_status_code = 6;
    CTL_STATUS_OUT_OF_RANGE: ctl_status_code = 7;
    CTL_STATUS_FAILED_PRECONDITION: ctl_status_code = 8;

    CTL_DTYPE_F32: ctl_dtype = 0;
    CTL_DTYPE_F64: ctl_dtype = 1;
    CTL_DTYPE_F16: ctl_dtype = 2;
    CTL_DTYPE_BF16: ctl_dtype = 3;
    CTL_DTYPE_I8: ctl_dtype = 4;
    CTL_DTYPE_U8: ctl_dtype = 5;
    CTL_DTYPE_I32: ctl_dtype = 6;
    CTL_DTYPE_I64: ctl_dtype = 7;
    CTL_DTYPE_BOOL: ctl_dtype = 8;
    CTL_DTYPE_COUNT_: ctl_dtype = 9;

    CTL_LOG_DEBUG: ctl_log_level = 0;
    CTL_LOG_INFO: ctl_log_level = 1;
    CTL_LOG_WARNING: ctl_log_level = 2;
    CTL_LOG_ERROR: ctl_log_level = 3;
    CTL_LOG_OFF: ctl_log_level = 4;

    CTL_DEVICE_KIND_CPU: ctl_device_kind = 0;
    CTL_DEVICE_KIND_GPU: ctl_device_kind = 1;
    CTL_DEVICE_KIND_ACCELERATOR: ctl_device_kind = 2;

    CTL_OP_NEG: ctl_op_id = 1;
    CTL_OP_ABS: ctl_op_id = 2;
    CTL_OP_EXP: ctl_op_id = 3;
    CTL_OP_LOG: ctl_op_id = 4;
    CTL_OP_SQRT: ctl_op_id = 5;
    CTL_OP_RSQRT: ctl_op_id = 6;
    CTL_OP_TANH: ctl_op_id = 7;
    CTL_OP_SIGMOID: ctl_op_id = 8;
    CTL_OP_RELU: ctl_op_id = 9;
    CTL_OP_GELU: ctl_op_id = 10;
    CTL_OP_GELU_TANH: ctl_op_id = 11;
    CTL_OP_SILU: ctl_op_id = 12;
    CTL_OP_SIN: ctl_op_id = 13;
    CTL_OP_COS: ctl_op_id = 14;
    CTL_OP_RECIPROCAL: ctl_op_id = 15;
    CTL_OP_ADD: ctl_op_id = 32;
    CTL_OP_SUB: ctl_op_id = 33;
    CTL_OP_MUL: ctl_op_id = 34;
    CTL_OP_DIV: ctl_op_id = 35;
    CTL_OP_POW: ctl_op_id = 36;
    CTL_OP_MAXIMUM: ctl_op_id = 37;
    CTL_OP_MINIMUM: ctl_op_id = 38;
    CTL_OP_EQ: ctl_op_id = 39;
    CTL_OP_NE: ctl_op_id = 40;
    CTL_OP_LT: ctl_op_id = 41;
    CTL_OP_LE: ctl_op_id = 42;
    CTL_OP_GT: ctl_op_id = 43;
    CTL_OP_GE: ctl_op_id = 44;
    CTL_OP_WHERE: ctl_op_id = 45;
    CTL_OP_SUM: ctl_op_id = 64;
    CTL_OP_MEAN: ctl_op_id = 65;
    CTL_OP_MAX: ctl_op_id = 66;
    CTL_OP_MIN: ctl_op_id = 67;
    CTL_OP_ARGMAX: ctl_op_id = 68;
    CTL_OP_ARGMIN: ctl_op_id = 69;
    CTL_OP_LOGSUMEXP: ctl_op_id = 70;
    CTL_OP_MATMUL: ctl_op_id = 96;
    CTL_OP_SOFTMAX: ctl_op_id = 128;
    CTL_OP_LOG_SOFTMAX: ctl_op_id = 129;
    CTL_OP_LAYER_NORM: ctl_op_id = 130;
    CTL_OP_RMS_NORM: ctl_op_id = 131;
    CTL_OP_COPY: ctl_op_id = 160;
    CTL_OP_CAST: ctl_op_id = 161;
    CTL_OP_CONCAT: ctl_op_id = 162;
    CTL_OP_GATHER: ctl_op_id = 163;
    CTL_OP_SCATTER_ADD: ctl_op_id = 164;
    CTL_OP_FILL: ctl_op_id = 165;
    CTL_OP_ARANGE: ctl_op_id = 166;
    CTL_OP_RANDOM_UNIFORM: ctl_op_id = 167;
    CTL_OP_RANDOM_NORMAL: ctl_op_id = 168;
    CTL_OP_CROSS_ENTROPY: ctl_op_id = 192;
    CTL_OP_CROSS_ENTROPY_BACKWARD: ctl_op_id = 193;
    CTL_OP_ADAMW_STEP: ctl_op_id = 194;
    CTL_OP_SGD_STEP: ctl_op_id = 195;
    CTL_OP_SOFTMAX_BACKWARD: ctl_op_id = 224;
    CTL_OP_LOG_SOFTMAX_BACKWARD: ctl_op_id = 225;
    CTL_OP_LAYER_NORM_BACKWARD: ctl_op_id = 226;
    CTL_OP_RMS_NORM_BACKWARD: ctl_op_id = 227;
    CTL_OP_GELU_BACKWARD: ctl_op_id = 228;
    CTL_OP_GELU_TANH_BACKWARD: ctl_op_id = 229;
    CTL_OP_CONV2D: ctl_op_id = 256;
    CTL_OP_CONV2D_BACKWARD_INPUT: ctl_op_id = 257;
    CTL_OP_CONV2D_BACKWARD_WEIGHT: ctl_op_id = 258;
    CTL_OP_MAX_POOL2D: ctl_op_id = 259;
    CTL_OP_MAX_POOL2D_BACKWARD: ctl_op_id = 260;
    CTL_OP_AVG_POOL2D: ctl_op_id = 261;
    CTL_OP_AVG_POOL2D_BACKWARD: ctl_op_id = 262;
    CTL_OP_FUSED_ELEMENTWISE: ctl_op_id = 288;

    CTL_ACTIVATION_NONE: ctl_activation = 0;
    CTL_ACTIVATION_RELU: ctl_activation = 1;
    CTL_ACTIVATION_GELU: ctl_activation = 2;
    CTL_ACTIVATION_GELU_TANH: ctl_activation = 3;

    CTL_REDUCTION_MEAN: ctl_reduction = 0;
    CTL_REDUCTION_SUM: ctl_reduction = 1;
    CTL_REDUCTION_NONE: ctl_reduction = 2;

    // Topology and device locality (since 1.4).
    CTL_LOCALITY_JOIN_NONE: ctl_locality_join = 0;
    CTL_LOCALITY_JOIN_PCI_BUS_ID: ctl_locality_join = 1;
    CTL_LOCALITY_JOIN_NUMA_NODE: ctl_locality_join = 2;
    CTL_LOCALITY_JOIN_SOLE_NUMA_NODE: ctl_locality_join = 3;
    CTL_DEVICE_LINK_SAME_DEVICE: ctl_device_link_class = 0;
    CTL_DEVICE_LINK_SAME_NUMA_NODE: ctl_device_link_class = 1;
    CTL_DEVICE_LINK_SAME_PACKAGE: ctl_device_link_class = 2;
    CTL_DEVICE_LINK_CROSS_PACKAGE: ctl_device_link_class = 3;
    CTL_DEVICE_LINK_HOST_STAGED: ctl_device_link_class = 4;
    CTL_DEVICE_LINK_UNKNOWN_LOCALITY: ctl_device_link_class = 5;
    CTL_DEVICE_COPY_NONE: ctl_device_copy_path = 0;
    CTL_DEVICE_COPY_PEER: ctl_device_copy_path = 1;
    CTL_DEVICE_COPY_HOST_MEMORY: ctl_device_copy_path = 2;
    CTL_DEVICE_COPY_HOST_STAGED: ctl_device_copy_path = 3;
    CTL_TOPOLOGY_FORMAT_TEXT: ctl_topology_format = 0;
    CTL_TOPOLOGY_FORMAT_JSON: ctl_topology_format = 1;

    // Placement and device-to-device movement (since 1.4).
    CTL_PLACEMENT_EXPLICIT: ctl_placement_mode = 0;
    CTL_PLACEMENT_AUTOMATIC: ctl_placement_mode = 1;
    CTL_PLACEMENT_MOVE: ctl_placement_event_kind = 0;
    CTL_PLACEMENT_FALLBACK: ctl_placement_event_kind = 1;

    // Graphs (since 1.5).
    CTL_GRAPH_CAPTURED: ctl_graph_stage = 0;
    CTL_GRAPH_CURRENT: ctl_graph_stage = 1;

    // The fused elementwise op (since 1.5).
    CTL_FUSED_MAX_INPUTS: usize = 8;
    CTL_FUSED_MAX_INSTRUCTIONS: usize = 16;

    // DLPack's: device types, dtype codes and DLManagedTensorVersioned flags.
    kDLCPU: DLDeviceType = 1;
    kDLCUDA: DLDeviceType = 2;
    kDLCUDAHost: DLDeviceType = 3;
    kDLInt: u8 = 0;
    kDLUInt: u8 = 1;
    kDLFloat: u8 = 2;
    kDLBfloat: u8 = 4;
    DLPACK_FLAG_BITMASK_READ_ONLY: u64 = 1 << 0;
    DLPACK_FLAG_BITMASK_IS_COPIED: u64 = 1 << 1;
    DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED: u64 = 1 << 2;
}

/// DLPack's bool dtype code (DLPack 1.0; Debian 12's 0.6 header predates it, so it is not
/// in `CONSTANTS`, whose values the C++ compiler checks).
pub const kDLBool: u8 = 6;

/// `CTL_DTYPE_BIT(dtype)`: the bit for `dtype` in `ctl_device_info.dtype_mask`.
pub const fn CTL_DTYPE_BIT(dtype: ctl_dtype) -> u32 {
    1u32 << dtype
}

abi_structs! {
    pub struct ctl_runtime_options {
        pub struct_size: usize,
        pub next: *const c_void,
        pub plugin_paths: *const *const c_char,
        pub plugin_path_count: usize,
        pub disable_discovery: bool,
        pub log_fn: ctl_log_fn,
        pub log_user_data: *mut c_void,
        pub log_level: ctl_log_level,
        pub log_level_set: bool,
        pub enable_reference_device: bool,
        pub discover_only: bool,
    }

    pub struct ctl_plugin_info {
        pub struct_size: usize,
        pub next: *const c_void,
        pub path: *const c_char,
        pub name: *const c_char,
        pub version: *const c_char,
        pub accepted: bool,
        pub reason: *const c_char,
        pub source: *const c_char,
        pub abi_major: u32,
        pub abi_minor: u32,
        pub device_count: usize,
    }

    pub struct ctl_device_info {
        pub struct_size: usize,
        pub next: *const c_void,
        pub name: *const c_char,
        pub vendor: *const c_char,
        pub driver_version: *const c_char,
        pub plugin_name: *const c_char,
        pub kind: ctl_device_kind,
        pub memory_total: u64,
        pub memory_free: u64,
        pub compute_units: u32,
        pub pci_bus_id: *const c_char,
        pub numa_node: i32,
        pub uuid: [u8; 16],
        pub has_uuid: bool,
        pub dtype_mask: u32,
        pub host_visible: bool,
        pub index: u32,
        pub max_work_group_size: u32,
    }

    pub struct ctl_tensor_info {
        pub struct_size: usize,
        pub next: *const c_void,
        pub dtype: ctl_dtype,
        pub rank: usize,
        pub shape: [i64; CTL_MAX_RANK],
        pub strides: [i64; CTL_MAX_RANK],
        pub offset: i64,
        pub numel: i64,
        pub contiguous: bool,
        pub device: *mut ctl_device,
    }

    pub struct ctl_reduce_attrs {
        pub struct_size: usize,
        pub axis_count: u32,
        pub axes: [i32; CTL_MAX_RANK],
        pub keepdims: bool,
    }

    pub struct ctl_matmul_attrs {
        pub struct_size: usize,
        pub transpose_a: bool,
        pub transpose_b: bool,
        pub alpha: f64,
        pub beta: f64,
        pub activation: ctl_activation,
        pub alpha_set: bool,
    }

    pub struct ctl_axis_attrs {
        pub struct_size: usize,
        pub axis: i32,
    }

    pub struct ctl_norm_attrs {
        pub struct_size: usize,
        pub epsilon: f64,
    }

    pub struct ctl_cast_attrs {
        pub struct_size: usize,
        pub dtype: ctl_dtype,
    }

    pub struct ctl_fill_attrs {
        pub struct_size: usize,
        pub value: f64,
    }

    pub struct ctl_arange_attrs {
        pub struct_size: usize,
        pub start: f64,
        pub step: f64,
    }

    pub struct ctl_random_attrs {
        pub struct_size: usize,
        pub seed: u64,
        pub offset: u64,
        pub a: f64,
        pub b: f64,
    }

    pub struct ctl_cross_entropy_attrs {
        pub struct_size: usize,
        pub reduction: ctl_reduction,
        pub ignore_index: i64,
        pub ignore_index_set: bool,
    }

    pub struct ctl_adamw_attrs {
        pub struct_size: usize,
        pub lr: f64,
        pub beta1: f64,
        pub beta2: f64,
        pub eps: f64,
        pub weight_decay: f64,
        pub step: u64,
    }

    pub struct ctl_sgd_attrs {
        pub struct_size: usize,
        pub lr: f64,
        pub momentum: f64,
        pub dampening: f64,
        pub weight_decay: f64,
        pub nesterov: bool,
    }

    pub struct ctl_conv2d_attrs {
        pub struct_size: usize,
        pub stride: [i64; 2],
        pub padding: [i64; 2],
        pub dilation: [i64; 2],
        pub groups: i64,
    }

    pub struct ctl_pool2d_attrs {
        pub struct_size: usize,
        pub kernel: [i64; 2],
        pub stride: [i64; 2],
        pub padding: [i64; 2],
        pub exclude_padding: bool,
    }

    pub struct ctl_device_locality {
        pub struct_size: usize,
        pub next: *const c_void,
        pub known: bool,
        pub joined_by: ctl_locality_join,
        pub from_override: bool,
        pub package: i32,
        pub numa_node: i32,
        pub pci_bus_id: *const c_char,
        pub core_count: u32,
        pub pu_count: u32,
        pub cpuset: *const c_char,
        pub reason: *const c_char,
        pub topology_source: *const c_char,
    }

    pub struct ctl_device_link {
        pub struct_size: usize,
        pub next: *const c_void,
        pub link_class: ctl_device_link_class,
        pub path: ctl_device_copy_path,
        pub bytes_per_second: u64,
        pub measured: bool,
        pub description: *const c_char,
    }

    pub struct ctl_placement_policy {
        pub struct_size: usize,
        pub next: *const c_void,
        pub devices: *const *mut ctl_device,
        pub device_count: usize,
        pub mode: ctl_placement_mode,
        pub allow_cross_device_inputs: bool,
        pub allow_fallback: bool,
    }

    pub struct ctl_placement_record {
        pub struct_size: usize,
        pub kind: ctl_placement_event_kind,
        pub op: ctl_op_id,
        pub from: *mut ctl_device,
        pub to: *mut ctl_device,
        pub count: u64,
        pub bytes: u64,
        pub nanoseconds: u64,
    }

    pub struct ctl_device_usage {
        pub struct_size: usize,
        pub next: *const c_void,
        pub busy_ns: u64,
        pub ops: u64,
        pub memory_in_use: u64,
        pub memory_peak: u64,
        pub bytes_in: u64,
        pub bytes_out: u64,
    }

    // Graphs (since 1.5).
    pub struct ctl_graph_options {
        pub struct_size: usize,
        pub next: *const c_void,
        pub passes: *const c_char,
    }

    pub struct ctl_graph_stats {
        pub struct_size: usize,
        pub captured_nodes: u64,
        pub nodes: u64,
        pub launches_per_run: u64,
        pub unfused_nodes: u64,
        pub device_bytes: u64,
        pub captured_device_bytes: u64,
        pub runs: u64,
    }

    pub struct ctl_graph_pass_record {
        pub struct_size: usize,
        pub name: *const c_char,
        pub nodes_before: u64,
        pub nodes_after: u64,
        pub device_bytes_before: u64,
        pub device_bytes_after: u64,
        pub changes: u64,
    }

    // The fused elementwise op (since 1.5). An instruction has no struct_size: it is an
    // element of the attrs' fixed array, whose size the attrs' struct_size covers.
    pub struct ctl_fused_instruction {
        pub op: ctl_op_id,
        pub a: u16,
        pub b: u16,
    }

    pub struct ctl_fused_elementwise_attrs {
        pub struct_size: usize,
        pub instruction_count: u32,
        pub program: [ctl_fused_instruction; CTL_FUSED_MAX_INSTRUCTIONS],
    }

    pub struct DLDevice {
        pub device_type: DLDeviceType,
        pub device_id: c_int,
    }

    pub struct DLDataType {
        pub code: u8,
        pub bits: u8,
        pub lanes: u16,
    }

    pub struct DLTensor {
        pub data: *mut c_void,
        pub device: DLDevice,
        pub ndim: c_int,
        pub dtype: DLDataType,
        pub shape: *mut i64,
        pub strides: *mut i64,
        pub byte_offset: u64,
    }

    pub struct DLManagedTensor {
        pub dl_tensor: DLTensor,
        pub manager_ctx: *mut c_void,
        pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
    }

    pub struct DLPackVersion {
        pub major: u32,
        pub minor: u32,
    }

    pub struct DLManagedTensorVersioned {
        pub version: DLPackVersion,
        pub manager_ctx: *mut c_void,
        pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
        pub flags: u64,
        pub dl_tensor: DLTensor,
    }
}

abi_functions! {
    pub fn ctl_status_get_code(status: *const ctl_status) -> ctl_status_code;
    pub fn ctl_status_get_message(status: *const ctl_status) -> *const c_char;
    pub fn ctl_status_free(status: *mut ctl_status) -> ();
    pub fn ctl_status_code_name(code: ctl_status_code) -> *const c_char;

    pub fn ctl_dtype_size(dtype: ctl_dtype) -> usize;
    pub fn ctl_dtype_name(dtype: ctl_dtype) -> *const c_char;

    pub fn ctl_runtime_create(options: *const ctl_runtime_options, out_runtime: *mut *mut ctl_runtime) -> *mut ctl_status;
    pub fn ctl_runtime_retain(runtime: *mut ctl_runtime) -> ();
    pub fn ctl_runtime_release(runtime: *mut ctl_runtime) -> ();
    pub fn ctl_runtime_plugin_count(runtime: *const ctl_runtime) -> usize;
    pub fn ctl_runtime_plugin_info(runtime: *const ctl_runtime, index: usize, out_info: *mut ctl_plugin_info) -> *mut ctl_status;
    pub fn ctl_runtime_device_count(runtime: *const ctl_runtime) -> usize;
    pub fn ctl_runtime_device(runtime: *const ctl_runtime, index: usize, out_device: *mut *mut ctl_device) -> *mut ctl_status;
    pub fn ctl_runtime_find_device(runtime: *const ctl_runtime, name: *const c_char, out_device: *mut *mut ctl_device) -> *mut ctl_status;
    pub fn ctl_runtime_default_device(runtime: *const ctl_runtime, out_device: *mut *mut ctl_device) -> *mut ctl_status;

    pub fn ctl_device_get_info(device: *const ctl_device, out_info: *mut ctl_device_info) -> *mut ctl_status;
    pub fn ctl_device_synchronize(device: *mut ctl_device) -> *mut ctl_status;

    pub fn ctl_tensor_create(device: *mut ctl_device, dtype: ctl_dtype, rank: usize, shape: *const i64, out_tensor: *mut *mut ctl_tensor) -> *mut ctl_status;
    pub fn ctl_tensor_create_zeros(device: *mut ctl_device, dtype: ctl_dtype, rank: usize, shape: *const i64, out_tensor: *mut *mut ctl_tensor) -> *mut ctl_status;
    pub fn ctl_tensor_create_full(device: *mut ctl_device, dtype: ctl_dtype, rank: usize, shape: *const i64, value: f64, out_tensor: *mut *mut ctl_tensor) -> *mut ctl_status;
    pub fn ctl_tensor_from_host(device: *mut ctl_device, dtype: ctl_dtype, rank: usize, shape: *const i64, data: *const c_void, data_bytes: usize, out_tensor: *mut *mut ctl_tensor) -> *mut ctl_status;
    pub fn ctl_tensor_to_host(tensor: *const ctl_tensor, dst: *mut c_void, dst_bytes: usize) -> *mut ctl_status;
    pub fn ctl_tensor_to_device(tensor: *const ctl_tensor, device: *mut ctl_device, out_tensor: *mut *mut ctl_tensor) -> *mut ctl_status;
    pub fn ctl_tensor_retain(tensor: *mut ctl_tensor) -> ();
    pub fn ctl_tensor_release(tensor: *mut ctl_tensor) -> ();
    pub fn ctl_tensor_get_info(tensor: *const ctl_tensor, out_info: *mut ctl_tensor_info) -> *mut ctl_status;
    pub fn ctl_tensor_dtype(tensor: *const ctl_tensor) -> ctl_dtype;
    pub fn ctl_tensor_rank(tensor: *const ctl_tensor) -> usize;
    pub fn ctl_tensor_dim(tensor: *const ctl_tensor, axis: i64) -> i64;
    pub fn ctl_tensor_numel(tensor: *const ctl_tensor) -> i64;
    pub fn ctl_tensor_device(tensor: *const ctl_tensor) -> *mut ctl_device;

    pub fn ctl_tensor_reshape(tensor: *mut ctl_tensor, rank: usize, shape: *const i64, out_tensor: *mut *mut ctl_tensor) -> *mut ctl_status;
    pub fn ctl_tensor_permute(tensor: *mut ctl_tensor, rank: usize, perm: *const i64, out_tensor: *mut *mut ctl_tensor) -> *mut ctl_status;
    pub fn ctl_tensor_transpose(tensor: *mut ctl_tensor, axis0: i64, axis1: i64, out_tensor: *mut *mut ctl_tensor) -> *mut ctl_status;
    pub fn ctl_tensor_slice(tensor: *mut ctl_tensor, axis: i64, start: i64, stop: i64, step: i64, out_tensor: *mut *mut ctl_tensor) -> *mut ctl_status;
    pub fn ctl_tensor_expand(tensor: *mut ctl_tensor, rank: usize, shape: *const i64, out_tensor: *mut *mut ctl_tensor) -> *mut ctl_status;
    pub fn ctl_tensor_contiguous(tensor: *mut ctl_tensor, out_tensor: *mut *mut ctl_tensor) -> *mut ctl_status;

    pub fn ctl_op_name(op: ctl_op_id) -> *const c_char;
    pub fn ctl_op_run(op: ctl_op_id, input_count: usize, inputs: *const *mut ctl_tensor, attrs: *const c_void, output_count: usize, out_tensors: *mut *mut ctl_tensor) -> *mut ctl_status;
    pub fn ctl_op_run_into(op: ctl_op_id, input_count: usize, inputs: *const *mut ctl_tensor, attrs: *const c_void, output_count: usize, outputs: *const *mut ctl_tensor) -> *mut ctl_status;
    pub fn ctl_op_unary(op: ctl_op_id, x: *mut ctl_tensor, out_tensor: *mut *mut ctl_tensor) -> *mut ctl_status;
    pub fn ctl_op_binary(op: ctl_op_id, a: *mut ctl_tensor, b: *mut ctl_tensor, out_tensor: *mut *mut ctl_tensor) -> *mut ctl_status;
    pub fn ctl_op_matmul(a: *mut ctl_tensor, b: *mut ctl_tensor, out_tensor: *mut *mut ctl_tensor) -> *mut ctl_status;
    pub fn ctl_op_softmax(x: *mut ctl_tensor, axis: i64, out_tensor: *mut *mut ctl_tensor) -> *mut ctl_status;
    pub fn ctl_op_reduce(op: ctl_op_id, x: *mut ctl_tensor, axis_count: usize, axes: *const i64, keepdims: bool, out_tensor: *mut *mut ctl_tensor) -> *mut ctl_status;
    pub fn ctl_op_cast(x: *mut ctl_tensor, dtype: ctl_dtype, out_tensor: *mut *mut ctl_tensor) -> *mut ctl_status;

    pub fn ctl_tensor_set_requires_grad(tensor: *mut ctl_tensor, requires_grad: bool) -> *mut ctl_status;
    pub fn ctl_tensor_requires_grad(tensor: *const ctl_tensor) -> bool;
    pub fn ctl_tensor_grad(tensor: *const ctl_tensor, out_grad: *mut *mut ctl_tensor) -> *mut ctl_status;
    pub fn ctl_tensor_zero_grad(tensor: *mut ctl_tensor) -> *mut ctl_status;
    pub fn ctl_tensor_backward(tensor: *mut ctl_tensor, grad_output: *mut ctl_tensor) -> *mut ctl_status;
    pub fn ctl_tensor_detach(tensor: *mut ctl_tensor, out_tensor: *mut *mut ctl_tensor) -> *mut ctl_status;
    pub fn ctl_runtime_set_grad_enabled(runtime: *mut ctl_runtime, enabled: bool, out_previous: *mut bool) -> *mut ctl_status;

    pub fn ctl_tensor_to_dlpack(tensor: *mut ctl_tensor, out_managed: *mut *mut DLManagedTensor) -> *mut ctl_status;
    pub fn ctl_tensor_to_dlpack_versioned(tensor: *mut ctl_tensor, out_managed: *mut *mut DLManagedTensorVersioned) -> *mut ctl_status;
    pub fn ctl_tensor_from_dlpack(device: *mut ctl_device, managed: *mut DLManagedTensor, out_tensor: *mut *mut ctl_tensor) -> *mut ctl_status;
    pub fn ctl_tensor_from_dlpack_versioned(device: *mut ctl_device, managed: *mut DLManagedTensorVersioned, out_tensor: *mut *mut ctl_tensor) -> *mut ctl_status;

    pub fn ctl_abi_version(out_major: *mut u32, out_minor: *mut u32) -> ();

    // Topology and device locality (since 1.4).
    pub fn ctl_device_get_locality(device: *const ctl_device, out_locality: *mut ctl_device_locality) -> *mut ctl_status;
    pub fn ctl_runtime_device_link(runtime: *const ctl_runtime, from: *const ctl_device, to: *const ctl_device, out_link: *mut ctl_device_link) -> *mut ctl_status;
    pub fn ctl_runtime_measure_device_link(runtime: *mut ctl_runtime, from: *mut ctl_device, to: *mut ctl_device, out_link: *mut ctl_device_link) -> *mut ctl_status;
    pub fn ctl_device_link_class_name(link_class: ctl_device_link_class) -> *const c_char;
    // Placement and device-to-device movement (since 1.4).
    pub fn ctl_runtime_set_placement_policy(runtime: *mut ctl_runtime, policy: *const ctl_placement_policy) -> *mut ctl_status;
    pub fn ctl_tensor_transfer(tensor: *mut ctl_tensor, device: *mut ctl_device, out_tensor: *mut *mut ctl_tensor) -> *mut ctl_status;
    pub fn ctl_runtime_placement_report(runtime: *mut ctl_runtime, records: *mut ctl_placement_record, capacity: usize, out_count: *mut usize, reset: bool) -> *mut ctl_status;
    pub fn ctl_device_get_usage(device: *const ctl_device, out_usage: *mut ctl_device_usage) -> *mut ctl_status;
    pub fn ctl_runtime_topology_describe(runtime: *const ctl_runtime, format: ctl_topology_format, buffer: *mut c_char, capacity: usize, out_length: *mut usize) -> *mut ctl_status;

    // Graphs (since 1.5).
    pub fn ctl_runtime_begin_capture(runtime: *mut ctl_runtime) -> *mut ctl_status;
    pub fn ctl_runtime_end_capture(runtime: *mut ctl_runtime, out_graph: *mut *mut ctl_graph) -> *mut ctl_status;
    pub fn ctl_runtime_capture_next_node(runtime: *mut ctl_runtime, out_node: *mut u64) -> *mut ctl_status;
    pub fn ctl_graph_retain(graph: *mut ctl_graph) -> ();
    pub fn ctl_graph_release(graph: *mut ctl_graph) -> ();
    pub fn ctl_graph_optimize(graph: *mut ctl_graph, options: *const ctl_graph_options) -> *mut ctl_status;
    pub fn ctl_graph_launch(graph: *mut ctl_graph) -> *mut ctl_status;
    pub fn ctl_graph_set_node_attrs(graph: *mut ctl_graph, node: u64, attrs: *const c_void) -> *mut ctl_status;
    pub fn ctl_graph_get_stats(graph: *const ctl_graph, out_stats: *mut ctl_graph_stats) -> *mut ctl_status;
    pub fn ctl_graph_pass_report(graph: *const ctl_graph, capacity: usize, out_records: *mut ctl_graph_pass_record, out_count: *mut usize) -> *mut ctl_status;
    pub fn ctl_graph_write_dot(graph: *const ctl_graph, stage: ctl_graph_stage, path: *const c_char) -> *mut ctl_status;
}
