/* catalyst.h — the C ABI that programs embedding Catalyst call.
 *
 * Standalone C99. Everything here is versioned by CTL_ABI_VERSION_MAJOR/MINOR and changes
 * only by appending (see abi/CHANGELOG.md).
 *
 * Ownership, said once:
 *  - Every fallible call returns ctl_status*. NULL means success. A non-NULL status is
 *    owned by the caller and freed with ctl_status_free(). On failure no output parameter
 *    is written and no state is changed.
 *  - Functions named *_create, *_from_*, *_to_device and every ctl_op_* / view function
 *    that has an `out_tensor` return a NEW reference: the caller releases it.
 *  - Getters (ctl_runtime_device, ctl_tensor_device, ...) return BORROWED pointers, valid
 *    as long as the object they were obtained from.
 *  - *_release(NULL) is a harmless no-op. Handles are reference-counted; retain and release
 *    are thread-safe.
 *  - Strings returned through info structs are borrowed from their owner.
 */
#ifndef CATALYST_H_
#define CATALYST_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CTL_ABI_VERSION_MAJOR 1
#define CTL_ABI_VERSION_MINOR 6

/* Largest tensor rank the ABI carries. */
#define CTL_MAX_RANK 8

#if defined(_WIN32)
#define CTL_EXPORT __declspec(dllexport)
#else
#define CTL_EXPORT __attribute__((visibility("default")))
#endif

/* ----------------------------------------------------------------------------------------
 * Status
 * -------------------------------------------------------------------------------------- */

typedef enum ctl_status_code {
  CTL_STATUS_OK = 0,
  CTL_STATUS_INVALID_ARGUMENT = 1,   /* a bad handle, dtype, shape, axis or attribute */
  CTL_STATUS_OUT_OF_MEMORY = 2,      /* host or device allocation failed */
  CTL_STATUS_UNSUPPORTED = 3,        /* valid, but this device/plugin cannot do it */
  CTL_STATUS_NOT_FOUND = 4,          /* no such plugin, device or index */
  CTL_STATUS_DEVICE_LOST = 5,        /* the device stopped answering */
  CTL_STATUS_INTERNAL = 6,           /* a bug in Catalyst or a plugin */
  CTL_STATUS_OUT_OF_RANGE = 7,       /* an index, axis or size past its bound */
  CTL_STATUS_FAILED_PRECONDITION = 8 /* the object is in the wrong state for this call */
} ctl_status_code;

typedef struct ctl_status ctl_status;

/* The code of `status`; CTL_STATUS_OK for NULL. */
CTL_EXPORT ctl_status_code ctl_status_get_code(const ctl_status* status);
/* The message of `status`, borrowed from it; "" for NULL. Names the offending argument. */
CTL_EXPORT const char* ctl_status_get_message(const ctl_status* status);
/* Frees `status`. NULL is a no-op. */
CTL_EXPORT void ctl_status_free(ctl_status* status);
/* The fixed name of a code, e.g. "INVALID_ARGUMENT". */
CTL_EXPORT const char* ctl_status_code_name(ctl_status_code code);

/* ----------------------------------------------------------------------------------------
 * Data types
 * -------------------------------------------------------------------------------------- */

typedef enum ctl_dtype {
  CTL_DTYPE_F32 = 0,
  CTL_DTYPE_F64 = 1,
  CTL_DTYPE_F16 = 2,
  CTL_DTYPE_BF16 = 3,
  CTL_DTYPE_I8 = 4,
  CTL_DTYPE_U8 = 5,
  CTL_DTYPE_I32 = 6,
  CTL_DTYPE_I64 = 7,
  CTL_DTYPE_BOOL = 8, /* one byte, 0 or 1 */
  CTL_DTYPE_COUNT_ = 9
} ctl_dtype;

/* Bit for `dtype` in a dtype mask (ctl_device_info.dtype_mask). */
#define CTL_DTYPE_BIT(dtype) (1u << (unsigned)(dtype))

/* Size of one element in bytes; 0 for an unknown dtype. */
CTL_EXPORT size_t ctl_dtype_size(ctl_dtype dtype);
/* "f32", "bf16", ...; "unknown" for an unknown dtype. */
CTL_EXPORT const char* ctl_dtype_name(ctl_dtype dtype);

/* ----------------------------------------------------------------------------------------
 * Logging
 * -------------------------------------------------------------------------------------- */

typedef enum ctl_log_level {
  CTL_LOG_DEBUG = 0,
  CTL_LOG_INFO = 1,
  CTL_LOG_WARNING = 2,
  CTL_LOG_ERROR = 3,
  CTL_LOG_OFF = 4
} ctl_log_level;

/* Receives each log line (no trailing newline). May be called from any thread. */
typedef void (*ctl_log_fn)(void* user_data, ctl_log_level level, const char* message);

/* ----------------------------------------------------------------------------------------
 * Runtime
 * -------------------------------------------------------------------------------------- */

typedef struct ctl_runtime ctl_runtime;
typedef struct ctl_device ctl_device;
typedef struct ctl_tensor ctl_tensor;

typedef struct ctl_runtime_options {
  size_t struct_size; /* CTL_RUNTIME_OPTIONS_STRUCT_SIZE */
  const void* next;   /* extension chain; unknown entries are skipped */
  /* Plugin files to load before any discovered ones. May be NULL when count is 0. */
  const char* const* plugin_paths;
  size_t plugin_path_count;
  /* Skip CATALYST_PLUGINS, CATALYST_PLUGIN_PATH and the installed directories. */
  bool disable_discovery;
  /* Where log lines go. NULL: standard error. */
  ctl_log_fn log_fn;
  void* log_user_data;
  /* Lines below this level are dropped. CATALYST_LOG=debug|info|warning|error|off
   * overrides it. Zero-initialised options mean CTL_LOG_WARNING (see log_level_set). */
  ctl_log_level log_level;
  bool log_level_set; /* false: use CTL_LOG_WARNING */
  /* Adds the core's reference kernels as a device named "reference" (plain, slow,
   * obviously correct, accumulating in double): the oracle of the conformance suite. */
  bool enable_reference_device;
  /* since 1.3: list every candidate plugin file in the plugin report (accepted false,
   * reason "not loaded: discover_only") without loading any, so no plugin code runs and
   * the runtime has no devices. `catalyst devices` uses it to learn the candidates, then
   * loads each one in a child process first, so that a plugin that crashes while loading
   * is reported instead of killing the tool. */
  bool discover_only;
} ctl_runtime_options;
#define CTL_RUNTIME_OPTIONS_STRUCT_SIZE (offsetof(ctl_runtime_options, discover_only) + sizeof(bool))

/* Creates a runtime: loads plugins and enumerates their devices. `options` may be NULL.
 * A runtime with no devices is not an error. *out_runtime: new reference. */
CTL_EXPORT ctl_status* ctl_runtime_create(const ctl_runtime_options* options, ctl_runtime** out_runtime);
CTL_EXPORT void ctl_runtime_retain(ctl_runtime* runtime);
/* Drops a reference. The runtime lives on while tensors on its devices exist. */
CTL_EXPORT void ctl_runtime_release(ctl_runtime* runtime);

/* What discovery made of one candidate plugin file. */
typedef struct ctl_plugin_info {
  size_t struct_size; /* CTL_PLUGIN_INFO_STRUCT_SIZE */
  const void* next;
  const char* path;    /* borrowed from the runtime */
  const char* name;    /* the plugin's own name; "" when rejected before it was known */
  const char* version; /* the plugin's own version string; "" when unknown */
  bool accepted;
  const char* reason; /* why it was accepted or rejected, in words */
  const char* source; /* "options", "CATALYST_PLUGINS", "CATALYST_PLUGIN_PATH", "installed", "library" */
  uint32_t abi_major; /* negotiated ABI of an accepted plugin; 0 when rejected */
  uint32_t abi_minor;
  size_t device_count;
} ctl_plugin_info;
#define CTL_PLUGIN_INFO_STRUCT_SIZE (offsetof(ctl_plugin_info, device_count) + sizeof(size_t))

/* Number of candidate plugin files seen, accepted or rejected. */
CTL_EXPORT size_t ctl_runtime_plugin_count(const ctl_runtime* runtime);
/* Fills *out_info (caller sets out_info->struct_size). Strings are borrowed from runtime. */
CTL_EXPORT ctl_status* ctl_runtime_plugin_info(const ctl_runtime* runtime, size_t index, ctl_plugin_info* out_info);

CTL_EXPORT size_t ctl_runtime_device_count(const ctl_runtime* runtime);
/* *out_device: borrowed, valid as long as `runtime`. */
CTL_EXPORT ctl_status* ctl_runtime_device(const ctl_runtime* runtime, size_t index, ctl_device** out_device);
/* Device names. Every device has a name of the form "<plugin>:<n>" ("cpu:0", "opencl:1"):
 * the plugin's own name (ctl_device_info.plugin_name) and n, counting from 0 over that
 * plugin's devices in ctl_runtime_device order. A name may also be written as the plugin
 * alone ("opencl", meaning "opencl:0") or as the device's index ("2"). These are the names
 * `catalyst devices` prints and that CATALYST_DEVICE and the tools' --device take. */

/* The device `name` means (see "Device names" above). *out_device: borrowed, valid as long
 * as `runtime`. NOT_FOUND, with a message listing every device's name, when `name` names
 * no device; INVALID_ARGUMENT when it is NULL or not of that form. Since 1.3. */
CTL_EXPORT ctl_status* ctl_runtime_find_device(const ctl_runtime* runtime, const char* name, ctl_device** out_device);

/* The default device: the one the environment variable CATALYST_DEVICE names (read once,
 * when the runtime is created; e.g. CATALYST_DEVICE=opencl:0), else the first GPU or
 * accelerator, else the first device (the built-in reference device is never chosen
 * unless CATALYST_DEVICE names it). *out_device: borrowed. NOT_FOUND when the runtime has
 * no device, and also when CATALYST_DEVICE is set but names no device: the message names
 * the variable and its value and lists the valid names (there is no silent fallback).
 * The choice and its reason are logged at CTL_LOG_INFO when the runtime is created. */
CTL_EXPORT ctl_status* ctl_runtime_default_device(const ctl_runtime* runtime, ctl_device** out_device);

/* ----------------------------------------------------------------------------------------
 * Devices
 * -------------------------------------------------------------------------------------- */

typedef enum ctl_device_kind {
  CTL_DEVICE_KIND_CPU = 0,
  CTL_DEVICE_KIND_GPU = 1,
  CTL_DEVICE_KIND_ACCELERATOR = 2
} ctl_device_kind;

typedef struct ctl_device_info {
  size_t struct_size; /* CTL_DEVICE_INFO_STRUCT_SIZE */
  const void* next;
  const char* name; /* borrowed from the device */
  const char* vendor;
  const char* driver_version;
  const char* plugin_name;
  ctl_device_kind kind;
  uint64_t memory_total; /* bytes; 0 when unknown */
  uint64_t memory_free;  /* bytes at the time of the call; 0 when unknown */
  uint32_t compute_units;
  const char* pci_bus_id; /* "dddd:bb:dd.f" lower case, or "" */
  int32_t numa_node;      /* -1 when unknown */
  uint8_t uuid[16];
  bool has_uuid;
  uint32_t dtype_mask; /* CTL_DTYPE_BIT of each supported dtype */
  bool host_visible;   /* buffers are ordinary host memory (zero-copy DLPack) */
  uint32_t index;      /* position in ctl_runtime_device */
  /* since 1.2: the most work-items (threads) one work-group (block) may have; 0 when the
   * device has no such limit or the plugin does not say */
  uint32_t max_work_group_size;
} ctl_device_info;
#define CTL_DEVICE_INFO_STRUCT_SIZE (offsetof(ctl_device_info, max_work_group_size) + sizeof(uint32_t))

/* Fills *out_info; caller sets out_info->struct_size (an older, smaller size is accepted
 * and only its fields are written). */
CTL_EXPORT ctl_status* ctl_device_get_info(const ctl_device* device, ctl_device_info* out_info);
/* Waits for all work queued on the device by this runtime. */
CTL_EXPORT ctl_status* ctl_device_synchronize(ctl_device* device);

/* ----------------------------------------------------------------------------------------
 * Tensors
 *
 * A tensor is a view (dtype, shape, strides in elements, offset) of a reference-counted
 * storage on one device. Views share storage with their source.
 *
 * Every shape a call takes or makes (create, reshape, expand, an op's output) has at most
 * CTL_MAX_RANK axes, none negative, and spans at most 2^63 bytes with zero-sized axes
 * counted as 1: an empty tensor's strides must still be representable. Other shapes get
 * CTL_STATUS_INVALID_ARGUMENT.
 * -------------------------------------------------------------------------------------- */

/* Uninitialised contents. *out_tensor: new reference. rank 0 is a scalar. */
CTL_EXPORT ctl_status* ctl_tensor_create(ctl_device* device, ctl_dtype dtype, size_t rank, const int64_t* shape,
                                         ctl_tensor** out_tensor);
/* All zeros. *out_tensor: new reference. */
CTL_EXPORT ctl_status* ctl_tensor_create_zeros(ctl_device* device, ctl_dtype dtype, size_t rank, const int64_t* shape,
                                               ctl_tensor** out_tensor);
/* Every element `value` converted to dtype. *out_tensor: new reference. */
CTL_EXPORT ctl_status* ctl_tensor_create_full(ctl_device* device, ctl_dtype dtype, size_t rank, const int64_t* shape,
                                              double value, ctl_tensor** out_tensor);
/* Copies `data_bytes` bytes of contiguous row-major host data; data_bytes must equal the
 * tensor's size. *out_tensor: new reference. */
CTL_EXPORT ctl_status* ctl_tensor_from_host(ctl_device* device, ctl_dtype dtype, size_t rank, const int64_t* shape,
                                            const void* data, size_t data_bytes, ctl_tensor** out_tensor);
/* Copies the tensor's elements to `dst` as contiguous row-major data, waiting for pending
 * work. dst_bytes must be at least numel * dtype size. */
CTL_EXPORT ctl_status* ctl_tensor_to_host(const ctl_tensor* tensor, void* dst, size_t dst_bytes);
/* A contiguous copy on `device` (any plugin, any runtime). *out_tensor: new reference. */
CTL_EXPORT ctl_status* ctl_tensor_to_device(const ctl_tensor* tensor, ctl_device* device, ctl_tensor** out_tensor);

CTL_EXPORT void ctl_tensor_retain(ctl_tensor* tensor);
CTL_EXPORT void ctl_tensor_release(ctl_tensor* tensor);

typedef struct ctl_tensor_info {
  size_t struct_size; /* CTL_TENSOR_INFO_STRUCT_SIZE */
  const void* next;
  ctl_dtype dtype;
  size_t rank;
  int64_t shape[CTL_MAX_RANK];
  int64_t strides[CTL_MAX_RANK]; /* in elements */
  int64_t offset;                /* in elements from the start of storage */
  int64_t numel;
  bool contiguous;    /* row-major with no gaps */
  ctl_device* device; /* borrowed */
} ctl_tensor_info;
#define CTL_TENSOR_INFO_STRUCT_SIZE (offsetof(ctl_tensor_info, device) + sizeof(ctl_device*))

CTL_EXPORT ctl_status* ctl_tensor_get_info(const ctl_tensor* tensor, ctl_tensor_info* out_info);
/* Convenience getters; they return 0 / CTL_DTYPE_COUNT_ / NULL for a NULL tensor. */
CTL_EXPORT ctl_dtype ctl_tensor_dtype(const ctl_tensor* tensor);
CTL_EXPORT size_t ctl_tensor_rank(const ctl_tensor* tensor);
CTL_EXPORT int64_t ctl_tensor_dim(const ctl_tensor* tensor, int64_t axis); /* -1 if bad axis */
CTL_EXPORT int64_t ctl_tensor_numel(const ctl_tensor* tensor);
CTL_EXPORT ctl_device* ctl_tensor_device(const ctl_tensor* tensor); /* borrowed */

/* ---- Views: metadata only, never a copy, never a plugin call. out_tensor: new reference. */

/* New shape with the same number of elements; one entry may be -1 (inferred). Fails
 * with INVALID_ARGUMENT when the strides cannot express it; use ctl_tensor_contiguous. */
CTL_EXPORT ctl_status* ctl_tensor_reshape(ctl_tensor* tensor, size_t rank, const int64_t* shape,
                                          ctl_tensor** out_tensor);
/* Axis i of the result is axis perm[i] of the input; negative entries count from the end. */
CTL_EXPORT ctl_status* ctl_tensor_permute(ctl_tensor* tensor, size_t rank, const int64_t* perm,
                                          ctl_tensor** out_tensor);
CTL_EXPORT ctl_status* ctl_tensor_transpose(ctl_tensor* tensor, int64_t axis0, int64_t axis1, ctl_tensor** out_tensor);
/* Elements start, start+step, ... < stop along `axis` (Python semantics for negative start
 * and stop; step >= 1). */
CTL_EXPORT ctl_status* ctl_tensor_slice(ctl_tensor* tensor, int64_t axis, int64_t start, int64_t stop, int64_t step,
                                        ctl_tensor** out_tensor);
/* Broadcast to `shape` by NumPy rules (size-1 axes get stride 0; new leading axes). */
CTL_EXPORT ctl_status* ctl_tensor_expand(ctl_tensor* tensor, size_t rank, const int64_t* shape,
                                         ctl_tensor** out_tensor);
/* The tensor itself (retained) when contiguous, else a contiguous copy. */
CTL_EXPORT ctl_status* ctl_tensor_contiguous(ctl_tensor* tensor, ctl_tensor** out_tensor);

/* ----------------------------------------------------------------------------------------
 * Ops
 *
 * Ops are identified by ctl_op_id (append-only) and take an optional attribute struct
 * that starts with struct_size. Elementwise and `where` inputs broadcast by NumPy rules;
 * inputs of a binary op must share one dtype (no implicit promotion). Inputs may be any
 * strided view; outputs of ctl_op_run are new contiguous tensors.
 * -------------------------------------------------------------------------------------- */

typedef enum ctl_op_id {
  /* elementwise unary: 1 input, 1 output of the same shape and dtype */
  CTL_OP_NEG = 1,
  CTL_OP_ABS = 2,
  CTL_OP_EXP = 3,
  CTL_OP_LOG = 4,
  CTL_OP_SQRT = 5,
  CTL_OP_RSQRT = 6,
  CTL_OP_TANH = 7,
  CTL_OP_SIGMOID = 8,
  CTL_OP_RELU = 9,
  CTL_OP_GELU = 10,      /* x * Phi(x), erf form */
  CTL_OP_GELU_TANH = 11, /* tanh approximation */
  CTL_OP_SILU = 12,
  CTL_OP_SIN = 13,
  CTL_OP_COS = 14,
  CTL_OP_RECIPROCAL = 15,
  /* elementwise binary: 2 inputs, broadcast */
  CTL_OP_ADD = 32,
  CTL_OP_SUB = 33,
  CTL_OP_MUL = 34,
  CTL_OP_DIV = 35, /* integers: truncates toward zero; x / 0 is 0 */
  CTL_OP_POW = 36, /* integers: negative exponent gives 0 unless the base is 1 or -1 */
  CTL_OP_MAXIMUM = 37,
  CTL_OP_MINIMUM = 38,
  CTL_OP_EQ = 39, /* comparisons produce bool */
  CTL_OP_NE = 40,
  CTL_OP_LT = 41,
  CTL_OP_LE = 42,
  CTL_OP_GT = 43,
  CTL_OP_GE = 44,
  CTL_OP_WHERE = 45, /* inputs: cond (bool), a, b */
  /* reductions: attrs ctl_reduce_attrs */
  CTL_OP_SUM = 64,
  CTL_OP_MEAN = 65,
  CTL_OP_MAX = 66,
  CTL_OP_MIN = 67,
  CTL_OP_ARGMAX = 68, /* one axis; i64 output; first index wins ties, NaN wins */
  CTL_OP_ARGMIN = 69,
  CTL_OP_LOGSUMEXP = 70,
  /* linear algebra: inputs a (..., M, K), b (..., K, N), optional bias broadcast to
   * (..., M, N); attrs ctl_matmul_attrs */
  CTL_OP_MATMUL = 96,
  /* normalisation: attrs ctl_softmax_attrs / ctl_norm_attrs */
  CTL_OP_SOFTMAX = 128,
  CTL_OP_LOG_SOFTMAX = 129,
  CTL_OP_LAYER_NORM = 130, /* inputs x, weight|NULL, bias|NULL over the last axis;
                              outputs y and, optionally, mean and rstd (x.shape[:-1], f32
                              for f16/bf16, else x's dtype) */
  CTL_OP_RMS_NORM = 131,   /* inputs x, weight|NULL; outputs y and optionally rstd */
  /* data movement */
  CTL_OP_COPY = 160,           /* same dtype, any strides in and out */
  CTL_OP_CAST = 161,           /* attrs ctl_cast_attrs in ctl_op_run; output dtype otherwise */
  CTL_OP_CONCAT = 162,         /* n inputs; attrs ctl_axis_attrs */
  CTL_OP_GATHER = 163,         /* inputs x, index (i32|i64, any shape); attrs ctl_axis_attrs;
                                  out = x.shape[:axis] + index.shape + x.shape[axis+1:] */
  CTL_OP_SCATTER_ADD = 164,    /* inputs target, index, src (shaped as gather's output);
                                  out = target with src added at index along axis */
  CTL_OP_FILL = 165,           /* no inputs; attrs ctl_fill_attrs */
  CTL_OP_ARANGE = 166,         /* no inputs; 1-D output; attrs ctl_arange_attrs */
  CTL_OP_RANDOM_UNIFORM = 167, /* no inputs; attrs ctl_random_attrs; float dtypes */
  CTL_OP_RANDOM_NORMAL = 168,
  /* losses and optimizer steps (ABI 1.1) */
  CTL_OP_CROSS_ENTROPY = 192,          /* inputs logits (..., C) float, target (...) i32|i64 class
                                          ids; attrs ctl_cross_entropy_attrs; output loss: (...)
                                          for CTL_REDUCTION_NONE, else a scalar; logits' dtype */
  CTL_OP_CROSS_ENTROPY_BACKWARD = 193, /* inputs logits, target, grad_loss (shaped as the loss);
                                          same attrs; output grad_logits (..., C) */
  CTL_OP_ADAMW_STEP = 194,             /* input grad; outputs param, exp_avg, exp_avg_sq, read and
                                          updated in place (ctl_op_run_into only); one float
                                          dtype and shape; attrs ctl_adamw_attrs */
  CTL_OP_SGD_STEP = 195,               /* input grad; outputs param, momentum_buf (NULL when
                                          momentum is 0), read and updated in place
                                          (ctl_op_run_into only); attrs ctl_sgd_attrs (ABI 1.2) */
  /* backward forms that would be slow as compositions (ABI 1.1) */
  CTL_OP_SOFTMAX_BACKWARD = 224,     /* inputs y (softmax's output), dy; attrs ctl_axis_attrs
                                        (NULL: last axis); output dx = y * (dy - sum(dy * y)) */
  CTL_OP_LOG_SOFTMAX_BACKWARD = 225, /* inputs y (log_softmax's output), dy; attrs as softmax;
                                        output dx = dy - exp(y) * sum(dy) */
  CTL_OP_LAYER_NORM_BACKWARD = 226,  /* inputs dy, x, mean, rstd (layer_norm's outputs),
                                        weight|NULL; attrs ctl_norm_attrs (unused, may be NULL);
                                        outputs dx and, optionally, dweight and dbias (N) */
  CTL_OP_RMS_NORM_BACKWARD = 227,    /* inputs dy, x, rstd, weight|NULL; outputs dx and,
                                        optionally, dweight (N) */
  CTL_OP_GELU_BACKWARD = 228,        /* inputs dy, x (broadcast); output dx = dy * gelu'(x) */
  CTL_OP_GELU_TANH_BACKWARD = 229,   /* the same for the tanh approximation */
  /* convolution and pooling over NCHW tensors (ABI 1.1) */
  CTL_OP_CONV2D = 256,                 /* inputs x (N, C, H, W), weight (O, C / groups, KH, KW),
                                          bias (O)|NULL; attrs ctl_conv2d_attrs; output
                                          (N, O, OH, OW), OH = (H + 2 pad - dil (KH - 1) - 1) / stride + 1 */
  CTL_OP_CONV2D_BACKWARD_INPUT = 257,  /* inputs dy, x (for its shape), weight; same attrs; dx */
  CTL_OP_CONV2D_BACKWARD_WEIGHT = 258, /* inputs dy, x, weight (for its shape); same attrs; dweight */
  CTL_OP_MAX_POOL2D = 259,             /* input x (N, C, H, W); attrs ctl_pool2d_attrs; output y;
                                          padding never wins (it is -inf) */
  CTL_OP_MAX_POOL2D_BACKWARD = 260,    /* inputs dy, x; same attrs; dx: each dy goes to the first
                                          maximum of its window (NaN counts as the maximum) */
  CTL_OP_AVG_POOL2D = 261,             /* input x; attrs ctl_pool2d_attrs; output y */
  CTL_OP_AVG_POOL2D_BACKWARD = 262,    /* inputs dy, x (for its shape); same attrs; dx */
  /* ops made by graph passes (ABI 1.5) */
  CTL_OP_FUSED_ELEMENTWISE = 288 /* 1..CTL_FUSED_MAX_INPUTS inputs of one float dtype,
                                    broadcast; attrs ctl_fused_elementwise_attrs (a small
                                    program of elementwise ops); one output of that dtype */
} ctl_op_id;

/* The op's name ("add", "matmul", ...) or NULL for an unknown id. */
CTL_EXPORT const char* ctl_op_name(ctl_op_id op);

typedef struct ctl_reduce_attrs {
  size_t struct_size; /* CTL_REDUCE_ATTRS_STRUCT_SIZE */
  /* Axes to reduce, negative counts from the end; axis_count 0 reduces every axis. */
  uint32_t axis_count;
  int32_t axes[CTL_MAX_RANK];
  bool keepdims;
} ctl_reduce_attrs;
#define CTL_REDUCE_ATTRS_STRUCT_SIZE (offsetof(ctl_reduce_attrs, keepdims) + sizeof(bool))

typedef enum ctl_activation {
  CTL_ACTIVATION_NONE = 0,
  CTL_ACTIVATION_RELU = 1,
  CTL_ACTIVATION_GELU = 2,
  CTL_ACTIVATION_GELU_TANH = 3
} ctl_activation;

/* out = activation(alpha * op(a) @ op(b) + beta * out + bias). beta is only meaningful in
 * ctl_op_run_into; ctl_op_run requires beta == 0. */
typedef struct ctl_matmul_attrs {
  size_t struct_size; /* CTL_MATMUL_ATTRS_STRUCT_SIZE */
  bool transpose_a;
  bool transpose_b;
  double alpha; /* a zeroed struct means 1.0: see alpha_set */
  double beta;
  ctl_activation activation;
  bool alpha_set; /* false: alpha is 1 */
} ctl_matmul_attrs;
#define CTL_MATMUL_ATTRS_STRUCT_SIZE (offsetof(ctl_matmul_attrs, alpha_set) + sizeof(bool))

typedef struct ctl_axis_attrs {
  size_t struct_size; /* CTL_AXIS_ATTRS_STRUCT_SIZE */
  int32_t axis;       /* negative counts from the end */
} ctl_axis_attrs;
#define CTL_AXIS_ATTRS_STRUCT_SIZE (offsetof(ctl_axis_attrs, axis) + sizeof(int32_t))
/* softmax and log_softmax take ctl_axis_attrs; NULL attrs mean the last axis. */
typedef ctl_axis_attrs ctl_softmax_attrs;

typedef struct ctl_norm_attrs {
  size_t struct_size; /* CTL_NORM_ATTRS_STRUCT_SIZE */
  double epsilon;     /* 0 in a zeroed struct means 1e-5 */
} ctl_norm_attrs;
#define CTL_NORM_ATTRS_STRUCT_SIZE (offsetof(ctl_norm_attrs, epsilon) + sizeof(double))

typedef struct ctl_cast_attrs {
  size_t struct_size; /* CTL_CAST_ATTRS_STRUCT_SIZE */
  ctl_dtype dtype;
} ctl_cast_attrs;
#define CTL_CAST_ATTRS_STRUCT_SIZE (offsetof(ctl_cast_attrs, dtype) + sizeof(ctl_dtype))

typedef struct ctl_fill_attrs {
  size_t struct_size; /* CTL_FILL_ATTRS_STRUCT_SIZE */
  double value;
} ctl_fill_attrs;
#define CTL_FILL_ATTRS_STRUCT_SIZE (offsetof(ctl_fill_attrs, value) + sizeof(double))

typedef struct ctl_arange_attrs {
  size_t struct_size; /* CTL_ARANGE_ATTRS_STRUCT_SIZE */
  double start;       /* element i is start + i * step */
  double step;
} ctl_arange_attrs;
#define CTL_ARANGE_ATTRS_STRUCT_SIZE (offsetof(ctl_arange_attrs, step) + sizeof(double))

/* Counter-based (Philox-4x32-10) random numbers: element i of the contiguous output uses
 * counter offset + i and key seed, so one seed gives the same numbers on every device.
 * uniform: [a, b). normal: mean a, standard deviation b. */
typedef struct ctl_random_attrs {
  size_t struct_size; /* CTL_RANDOM_ATTRS_STRUCT_SIZE */
  uint64_t seed;
  uint64_t offset;
  double a;
  double b;
} ctl_random_attrs;
#define CTL_RANDOM_ATTRS_STRUCT_SIZE (offsetof(ctl_random_attrs, b) + sizeof(double))

/* How a loss over many elements is reduced. A zeroed struct means the mean. */
typedef enum ctl_reduction {
  CTL_REDUCTION_MEAN = 0, /* over the targets that are not ignored; NaN when all are */
  CTL_REDUCTION_SUM = 1,
  CTL_REDUCTION_NONE = 2 /* one loss per target */
} ctl_reduction;

/* Cross-entropy of softmax(logits) over the last axis against class ids (ABI 1.1). A target
 * outside [0, C) that is not ignored makes its loss, and its gradient row, NaN. */
typedef struct ctl_cross_entropy_attrs {
  size_t struct_size; /* CTL_CROSS_ENTROPY_ATTRS_STRUCT_SIZE */
  ctl_reduction reduction;
  int64_t ignore_index;  /* targets equal to it contribute no loss and no gradient ... */
  bool ignore_index_set; /* ... when this is true */
} ctl_cross_entropy_attrs;
#define CTL_CROSS_ENTROPY_ATTRS_STRUCT_SIZE (offsetof(ctl_cross_entropy_attrs, ignore_index_set) + sizeof(bool))

/* One AdamW update with decoupled weight decay (ABI 1.1), element by element:
 *   param -= lr * weight_decay * param
 *   exp_avg = beta1 * exp_avg + (1 - beta1) * grad
 *   exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * grad^2
 *   param -= lr * (exp_avg / (1 - beta1^step)) / (sqrt(exp_avg_sq / (1 - beta2^step)) + eps) */
typedef struct ctl_adamw_attrs {
  size_t struct_size; /* CTL_ADAMW_ATTRS_STRUCT_SIZE */
  double lr;
  double beta1;
  double beta2;
  double eps;
  double weight_decay;
  uint64_t step; /* 1 for the first update; 0 is invalid */
} ctl_adamw_attrs;
#define CTL_ADAMW_ATTRS_STRUCT_SIZE (offsetof(ctl_adamw_attrs, step) + sizeof(uint64_t))

/* One SGD update with momentum (ABI 1.2), element by element:
 *   g = grad + weight_decay * param
 *   momentum_buf = momentum * momentum_buf + (1 - dampening) * g   (when momentum != 0)
 *   d = nesterov ? g + momentum * momentum_buf : momentum_buf       (d = g when momentum is 0)
 *   param -= lr * d
 * PyTorch's SGD starts the buffer at g: a zeroed buffer and dampening 0 on the first step
 * does the same. All values finite, momentum >= 0, dampening in [0, 1]; nesterov needs
 * momentum > 0 and dampening 0. */
typedef struct ctl_sgd_attrs {
  size_t struct_size; /* CTL_SGD_ATTRS_STRUCT_SIZE */
  double lr;
  double momentum;
  double dampening;
  double weight_decay;
  bool nesterov;
} ctl_sgd_attrs;
#define CTL_SGD_ATTRS_STRUCT_SIZE (offsetof(ctl_sgd_attrs, nesterov) + sizeof(bool))

/* 2-D convolution over NCHW (cross-correlation, as in most frameworks) (ABI 1.1). A zeroed
 * struct means stride 1, no padding, dilation 1 and one group (see the zero rules). */
typedef struct ctl_conv2d_attrs {
  size_t struct_size;  /* CTL_CONV2D_ATTRS_STRUCT_SIZE */
  int64_t stride[2];   /* (height, width); 0 means 1 */
  int64_t padding[2];  /* zeros added on both sides */
  int64_t dilation[2]; /* 0 means 1 */
  int64_t groups;      /* 0 means 1; C and O must be multiples of it */
} ctl_conv2d_attrs;
#define CTL_CONV2D_ATTRS_STRUCT_SIZE (offsetof(ctl_conv2d_attrs, groups) + sizeof(int64_t))

/* 2-D max and average pooling windows (ABI 1.1). */
typedef struct ctl_pool2d_attrs {
  size_t struct_size; /* CTL_POOL2D_ATTRS_STRUCT_SIZE */
  int64_t kernel[2];  /* (height, width), at least 1 */
  int64_t stride[2];  /* 0 means the kernel size */
  int64_t padding[2]; /* at most half the kernel */
  bool exclude_padding; /* avg_pool2d: divide by the elements inside the input, not the window */
} ctl_pool2d_attrs;
#define CTL_POOL2D_ATTRS_STRUCT_SIZE (offsetof(ctl_pool2d_attrs, exclude_padding) + sizeof(bool))

/* Runs `op` on the device of its inputs and returns freshly allocated outputs: each
 * out_tensors[i] receives a new reference. Ops with no inputs (fill, arange, random) need
 * ctl_op_run_into. Inputs must live on one device. `attrs` may be NULL where the op's
 * defaults suffice. */
CTL_EXPORT ctl_status* ctl_op_run(ctl_op_id op, size_t input_count, ctl_tensor* const* inputs, const void* attrs,
                                  size_t output_count, ctl_tensor** out_tensors);
/* Runs `op` writing into existing `outputs` (any strides; the shape and dtype must be
 * exactly what the op produces). Outputs must not overlap inputs. */
CTL_EXPORT ctl_status* ctl_op_run_into(ctl_op_id op, size_t input_count, ctl_tensor* const* inputs, const void* attrs,
                                       size_t output_count, ctl_tensor* const* outputs);

/* Convenience forms of ctl_op_run. *out_tensor: new reference. */
CTL_EXPORT ctl_status* ctl_op_unary(ctl_op_id op, ctl_tensor* x, ctl_tensor** out_tensor);
CTL_EXPORT ctl_status* ctl_op_binary(ctl_op_id op, ctl_tensor* a, ctl_tensor* b, ctl_tensor** out_tensor);
CTL_EXPORT ctl_status* ctl_op_matmul(ctl_tensor* a, ctl_tensor* b, ctl_tensor** out_tensor);
CTL_EXPORT ctl_status* ctl_op_softmax(ctl_tensor* x, int64_t axis, ctl_tensor** out_tensor);
/* `axes` may be NULL when axis_count is 0 (reduce everything). */
CTL_EXPORT ctl_status* ctl_op_reduce(ctl_op_id op, ctl_tensor* x, size_t axis_count, const int64_t* axes, bool keepdims,
                                     ctl_tensor** out_tensor);
CTL_EXPORT ctl_status* ctl_op_cast(ctl_tensor* x, ctl_dtype dtype, ctl_tensor** out_tensor);

/* ----------------------------------------------------------------------------------------
 * Autograd (ABI 1.1)
 *
 * Reverse mode, recorded as ops. While gradients are enabled on a runtime (the default),
 * every ctl_op_run and every view whose float inputs require gradients records how to undo
 * itself; ctl_tensor_backward replays that record backwards as ordinary op calls, so it
 * works on any device whose plugin runs the ops. ctl_op_run_into, ctl_tensor_to_device and
 * DLPack are not recorded. A tensor's record lives as long as the tensor: backward may run
 * more than once, and gradients of leaves add up until ctl_tensor_zero_grad. Gradients
 * flow only through float tensors; comparisons, argmax/argmin and creation ops stop them.
 * One graph is built and backpropagated by one thread at a time: recording takes no locks,
 * so threads that share tensors which require gradients must take turns.
 * -------------------------------------------------------------------------------------- */

/* Marks a leaf (a tensor no recorded op produced) as needing a gradient. The dtype must be
 * f32, f64, f16 or bf16. Fails for a tensor an op produced: its gradient is derived. */
CTL_EXPORT ctl_status* ctl_tensor_set_requires_grad(ctl_tensor* tensor, bool requires_grad);
/* True for a leaf marked with ctl_tensor_set_requires_grad and for any tensor a recorded
 * op produced from one. False for NULL. */
CTL_EXPORT bool ctl_tensor_requires_grad(const ctl_tensor* tensor);
/* The gradient accumulated on a leaf by ctl_tensor_backward, shaped like it, on its device.
 * *out_grad: new reference, or NULL when there is none yet. */
CTL_EXPORT ctl_status* ctl_tensor_grad(const ctl_tensor* tensor, ctl_tensor** out_grad);
/* Drops a leaf's accumulated gradient (the next backward starts from zero). */
CTL_EXPORT ctl_status* ctl_tensor_zero_grad(ctl_tensor* tensor);
/* Backpropagates from `tensor`. grad_output is d(loss)/d(tensor), shaped like it; NULL means
 * 1 and needs a tensor of one element. Adds into the gradients of every leaf reached. */
CTL_EXPORT ctl_status* ctl_tensor_backward(ctl_tensor* tensor, ctl_tensor* grad_output);
/* The same data (shared storage) outside the record: no gradient flows through it.
 * *out_tensor: new reference. */
CTL_EXPORT ctl_status* ctl_tensor_detach(ctl_tensor* tensor, ctl_tensor** out_tensor);
/* Turns recording on or off for ops run on the runtime's devices (off: a no-grad mode for
 * evaluation and optimizer steps). *out_previous (may be NULL) receives the old setting. */
CTL_EXPORT ctl_status* ctl_runtime_set_grad_enabled(ctl_runtime* runtime, bool enabled, bool* out_previous);

/* ----------------------------------------------------------------------------------------
 * DLPack interchange (declared with incomplete types so this header needs no dlpack.h;
 * include <dlpack/dlpack.h> to use them).
 * -------------------------------------------------------------------------------------- */

struct DLManagedTensor;
struct DLManagedTensorVersioned;

/* Exports `tensor` without copying when its device is host-visible, else UNSUPPORTED.
 * The DLManagedTensor holds a reference to the storage; the consumer calls its deleter
 * exactly once. Strides are kept. */
CTL_EXPORT ctl_status* ctl_tensor_to_dlpack(ctl_tensor* tensor, struct DLManagedTensor** out_managed);
/* The same in DLPack 1.x's versioned form (version 1.0). */
CTL_EXPORT ctl_status* ctl_tensor_to_dlpack_versioned(ctl_tensor* tensor,
                                                      struct DLManagedTensorVersioned** out_managed);
/* Imports host memory (kDLCPU / kDLCUDAHost) onto `device`, which must be host-visible:
 * zero-copy, strides kept (an empty tensor's, which address nothing, become contiguous
 * ones). Byte offsets that wrap or are misaligned for the dtype, views spanning more
 * than 2^63 bytes and flag bits Catalyst does not know are refused, naming the field.
 * On success Catalyst owns `managed` and calls its deleter exactly once when the last
 * tensor using it is released; on failure ownership stays with the caller.
 * *out_tensor: new reference. */
CTL_EXPORT ctl_status* ctl_tensor_from_dlpack(ctl_device* device, struct DLManagedTensor* managed,
                                              ctl_tensor** out_tensor);
CTL_EXPORT ctl_status* ctl_tensor_from_dlpack_versioned(ctl_device* device, struct DLManagedTensorVersioned* managed,
                                                        ctl_tensor** out_tensor);

/* ----------------------------------------------------------------------------------------
 * Version
 * -------------------------------------------------------------------------------------- */

/* The ABI version the loaded library implements. */
CTL_EXPORT void ctl_abi_version(uint32_t* out_major, uint32_t* out_minor);

/* ---- Threads (since 1.4) ----
 *
 * What several threads may do at once, per handle. Nothing here takes a thread-local
 * state: a call may be made from any thread, and each call's result is its own status.
 *  - ctl_status: owned by the one caller that received it; it may be read and freed on any
 *    thread, not by two threads at once.
 *  - ctl_runtime: retain and release, the plugin and device queries (ctl_runtime_plugin_*,
 *    ctl_runtime_device*, ctl_runtime_find_device, ctl_runtime_default_device) and
 *    ctl_runtime_set_grad_enabled may be called from several threads at once. The grad
 *    switch belongs to the runtime, not to a thread: it turns recording on or off for every
 *    thread running ops on the runtime's devices, and ctl_tensor_backward turns recording
 *    off for the whole runtime while it runs. Threads that record must therefore not share
 *    a runtime with threads that run backward or switch the mode.
 *  - ctl_device: ctl_device_get_info, ctl_device_synchronize, creating tensors on it and
 *    running ops on it may happen on several threads at once; the core serialises what they
 *    submit to the device (plugins must allow it: the conformance suite's threads case).
 *  - ctl_tensor: retain, release and the getters (ctl_tensor_get_info, ctl_tensor_dtype,
 *    ctl_tensor_device, ...) may be called from several threads at once (a tensor's dtype,
 *    shape, strides and device never change). Several threads may read one tensor's
 *    elements at once (as op inputs, ctl_tensor_to_host, ctl_tensor_to_device) while no
 *    thread writes them; writes (ctl_op_run_into outputs, DLPack consumers writing the
 *    memory) need the caller's own ordering, as with any shared buffer. Autograd is the
 *    exception: one graph (the tensors that require gradients, every tensor a recorded op
 *    or view made from them, and their gradients) is recorded, backpropagated, marked
 *    (ctl_tensor_set_requires_grad), queried (ctl_tensor_requires_grad, ctl_tensor_grad)
 *    and cleared (ctl_tensor_zero_grad) by one thread at a time, since recording takes no
 *    locks and creates a tensor's autograd state when first needed. */

/* ---- Topology and device locality (since 1.4) ----
 *
 * Where each device sits on the host, and what lies between two devices, so that placement
 * (and a user reading `catalyst topology`) can prefer devices near the data. The core reads
 * the host with hwloc (packages, NUMA nodes, cores, caches, PCI devices) the first time one
 * of these functions is called on a runtime, never in ctl_runtime_create, and joins each
 * device to it: by the PCI bus id the plugin reports, else by its NUMA node, else (only on
 * a machine with a single NUMA node) to that node. A device that cannot be joined has
 * unknown locality; it is never given the whole machine. docs/topology.md states the rules,
 * the link classes and the default bandwidths.
 *
 * CATALYST_TOPOLOGY=<file> replaces detection: an hwloc XML file (as `lstopo --of xml`
 * writes, what HWLOC_XMLFILE reads) or Catalyst's JSON topology (docs/topology.md), which
 * can also place devices by name for VMs that report wrong nodes or bus ids. HWLOC_XMLFILE
 * and HWLOC_SYNTHETIC keep the meaning hwloc gives them. A topology that cannot be loaded
 * (a bad override file, a failing hwloc) is logged at CTL_LOG_WARNING and leaves every
 * device with unknown locality; these functions still succeed.
 *
 * Strings in the structs below are borrowed from the runtime and valid as long as it. */

typedef enum ctl_locality_join {
  CTL_LOCALITY_JOIN_NONE = 0,          /* not joined: `reason` says why */
  CTL_LOCALITY_JOIN_PCI_BUS_ID = 1,    /* by the device's PCI bus id */
  CTL_LOCALITY_JOIN_NUMA_NODE = 2,     /* by the NUMA node the plugin reports (no PCI bus id) */
  CTL_LOCALITY_JOIN_SOLE_NUMA_NODE = 3 /* the plugin reports neither; the machine has one NUMA node */
} ctl_locality_join;

typedef struct ctl_device_locality {
  size_t struct_size; /* CTL_DEVICE_LOCALITY_STRUCT_SIZE */
  const void* next;
  bool known; /* a package or NUMA node is known to be nearest to the device */
  ctl_locality_join joined_by;
  bool from_override;   /* CATALYST_TOPOLOGY's "devices" entry supplied the values joined */
  int32_t package;      /* index of the package (0, 1, ... in hwloc's logical order); -1 unknown */
  int32_t numa_node;    /* OS index of the NUMA node; -1 unknown */
  const char* pci_bus_id; /* the bus id joined by, "dddd:bb:dd.f"; "" when none */
  uint32_t core_count;  /* cores of that NUMA node (else of the package); 0 when unknown */
  uint32_t pu_count;    /* their processing units (hardware threads); 0 when unknown */
  const char* cpuset;   /* OS numbers of those processing units, "0-15,32-47"; "" when unknown */
  const char* reason;   /* how the device was joined, or why it could not be, in one sentence */
  const char* topology_source; /* "hwloc (this machine)", "JSON /etc/x.json (CATALYST_TOPOLOGY)", ... */
} ctl_device_locality;
#define CTL_DEVICE_LOCALITY_STRUCT_SIZE (offsetof(ctl_device_locality, topology_source) + sizeof(const char*))

/* Fills *out_locality (caller sets out_locality->struct_size; an older, smaller size gets
 * only its fields). Unknown locality is a successful answer with known == false. */
CTL_EXPORT ctl_status* ctl_device_get_locality(const ctl_device* device, ctl_device_locality* out_locality);

/* What lies between two devices, from the path a copy takes and the two localities. */
typedef enum ctl_device_link_class {
  CTL_DEVICE_LINK_SAME_DEVICE = 0,
  CTL_DEVICE_LINK_SAME_NUMA_NODE = 1,  /* a direct copy between devices near one NUMA node */
  CTL_DEVICE_LINK_SAME_PACKAGE = 2,    /* ... near different nodes of one package */
  CTL_DEVICE_LINK_CROSS_PACKAGE = 3,   /* ... near different packages */
  CTL_DEVICE_LINK_HOST_STAGED = 4,     /* read to host memory, then written to the other device */
  CTL_DEVICE_LINK_UNKNOWN_LOCALITY = 5 /* a direct copy, but a side's locality is unknown */
} ctl_device_link_class;

/* How the core moves bytes between the two devices. */
typedef enum ctl_device_copy_path {
  CTL_DEVICE_COPY_NONE = 0,        /* the same device */
  CTL_DEVICE_COPY_PEER = 1,        /* the plugin's buffer_copy_peer (both devices of one plugin) */
  CTL_DEVICE_COPY_HOST_MEMORY = 2, /* both devices are host-visible: one copy in host memory */
  CTL_DEVICE_COPY_HOST_STAGED = 3  /* through a host buffer (a side is not host-visible) */
} ctl_device_copy_path;

typedef struct ctl_device_link {
  size_t struct_size; /* CTL_DEVICE_LINK_STRUCT_SIZE */
  const void* next;
  ctl_device_link_class link_class;
  ctl_device_copy_path path;
  uint64_t bytes_per_second; /* copy bandwidth from `from` to `to` */
  bool measured;             /* true: timed on this machine; false: the class's default figure */
  const char* description;   /* the path, both localities and where the figure comes from */
} ctl_device_link;
#define CTL_DEVICE_LINK_STRUCT_SIZE (offsetof(ctl_device_link, description) + sizeof(const char*))

/* The link from `from` to `to` (both devices of `runtime`; they may be one device): a
 * measurement when this runtime made one or one is cached on disk, else the default figure
 * of its class. Never copies anything. INVALID_ARGUMENT for a NULL or dead handle or a
 * device of another runtime (the message names the argument and the device). */
CTL_EXPORT ctl_status* ctl_runtime_device_link(const ctl_runtime* runtime, const ctl_device* from,
                                               const ctl_device* to, ctl_device_link* out_link);
/* The same, measured: unless a measurement exists already, times an 8 MiB copy from `from`
 * to `to` as ctl_tensor_to_device makes it (one warm-up, best of three; a few milliseconds)
 * and keeps the figure for the runtime and on disk (<cache>/topology/links.tsv, <cache> as
 * for the OpenCL kernel cache: CATALYST_CACHE_DIR, else $XDG_CACHE_HOME/catalyst, else
 * ~/.cache/catalyst; CATALYST_CACHE_DIR=off keeps it in memory). A failing copy is returned
 * as its status and nothing is kept. */
CTL_EXPORT ctl_status* ctl_runtime_measure_device_link(ctl_runtime* runtime, ctl_device* from, ctl_device* to,
                                                       ctl_device_link* out_link);
/* "same_device", "same_numa_node", "same_package", "cross_package", "host_staged",
 * "unknown_locality"; NULL for a value that is not a ctl_device_link_class. */
CTL_EXPORT const char* ctl_device_link_class_name(ctl_device_link_class link_class);

typedef enum ctl_topology_format {
  CTL_TOPOLOGY_FORMAT_TEXT = 0, /* what `catalyst topology` prints */
  CTL_TOPOLOGY_FORMAT_JSON = 1  /* what `catalyst topology --json` prints (docs/topology.md) */
} ctl_topology_format;

/* The whole picture: the machine (packages, NUMA nodes, cores, caches, PCI devices), every
 * device with its locality and memory, the link matrix and the automatic placement order,
 * as text or JSON. snprintf-style: writes at most `capacity` bytes including a terminating
 * NUL (nothing when capacity is 0; `buffer` may then be NULL) and sets *out_length to the
 * full length without the NUL, so a caller whose buffer was too small calls again with
 * *out_length + 1. */
CTL_EXPORT ctl_status* ctl_runtime_topology_describe(const ctl_runtime* runtime, ctl_topology_format format,
                                                     char* buffer, size_t capacity, size_t* out_length);

/* ---- Placement and device-to-device movement (since 1.4) ----------------------------------
 *
 * By default every op runs on the device of its inputs; inputs on two devices and an op the
 * device cannot run are errors. A placement policy on the runtime can allow two things,
 * each counted so that nothing happens silently:
 *  - cross-device inputs: an op whose inputs live on several devices runs on one of them
 *    (the first input's device, or the output's for ctl_op_run_into; with
 *    CTL_PLACEMENT_AUTOMATIC, the policy device that ranks best for the op, as
 *    `catalyst topology` explains), the other inputs moved there first;
 *  - fallback: an op the device answers UNSUPPORTED for (the op, a dtype or a layout) runs
 *    on the best policy device that runs it; inputs are moved there and results moved back,
 *    so the caller sees them on the device it expected. Since 1.6, between devices of two
 *    plugins that both address host memory nothing moves: the other device reads and
 *    writes the same bytes. Otherwise a result's bytes move back only when something
 *    needs them on that device (an op there, a read, DLPack), so the next fallback to the
 *    same device reads them where they are and a chain of fallbacks moves only its ends. Autograd records the moves and the op where
 *    it ran, so its backward pass runs there too and gradients come back, likewise.
 * Placement does not nest: an op that fails on the device placement chose is an error. A
 * call that fails for any other reason (a bad argument) gets its error, unchanged.
 * Moves between two devices of one plugin use the plugin's buffer_copy_peer, ordered by
 * events: the copy waits only for the work that writes the source, and the caller does not
 * wait at all. Moves between plugins go through host memory and return when the data has
 * arrived. */

typedef enum ctl_placement_mode {
  CTL_PLACEMENT_EXPLICIT = 0, /* ops run where their inputs (or outputs) are */
  CTL_PLACEMENT_AUTOMATIC = 1 /* cross-device ops and fallbacks pick the best-ranked device */
} ctl_placement_mode;

typedef struct ctl_placement_policy {
  size_t struct_size; /* CTL_PLACEMENT_POLICY_STRUCT_SIZE */
  const void* next;
  /* The devices ops may be moved to, most preferred first; NULL with device_count 0 means
   * every device of the runtime, in ctl_runtime_device order. Borrowed during the call. */
  ctl_device* const* devices;
  size_t device_count;
  ctl_placement_mode mode;
  bool allow_cross_device_inputs; /* move inputs that live elsewhere to the op's device */
  bool allow_fallback;            /* run unsupported ops on another policy device */
} ctl_placement_policy;
#define CTL_PLACEMENT_POLICY_STRUCT_SIZE (offsetof(ctl_placement_policy, allow_fallback) + sizeof(bool))

/* Replaces the runtime's policy; NULL restores the default (explicit, nothing allowed).
 * Takes effect for ops that start after it returns. Devices must belong to `runtime`. */
CTL_EXPORT ctl_status* ctl_runtime_set_placement_policy(ctl_runtime* runtime, const ctl_placement_policy* policy);

/* Like ctl_tensor_to_device (a new contiguous tensor on `device`; *out_tensor: new
 * reference) but recorded by autograd: gradients that reach the result flow back to
 * `tensor` on its own device. Moving a tensor that requires gradients across devices in a
 * model (a pipeline split) is this call. The source is not waited for: on one plugin the
 * copy is ordered behind the work that writes it. */
CTL_EXPORT ctl_status* ctl_tensor_transfer(ctl_tensor* tensor, ctl_device* device, ctl_tensor** out_tensor);

typedef enum ctl_placement_event_kind {
  CTL_PLACEMENT_MOVE = 0,    /* bytes copied from one device to another */
  CTL_PLACEMENT_FALLBACK = 1 /* an op ran on another device than the one asked */
} ctl_placement_event_kind;

/* One line of the placement report: how often `kind` happened for `op` from `from` to `to`.
 * Moves made by ctl_tensor_to_device and ctl_tensor_transfer count under CTL_OP_COPY;
 * moves made for an op (cross-device inputs, fallback) under that op. */
typedef struct ctl_placement_record {
  size_t struct_size; /* CTL_PLACEMENT_RECORD_STRUCT_SIZE */
  ctl_placement_event_kind kind;
  ctl_op_id op;
  ctl_device* from; /* borrowed; for a fallback, the device the op was asked to run on */
  ctl_device* to;   /* where the bytes went, or where the op ran instead */
  uint64_t count;
  uint64_t bytes; /* moves: bytes copied; fallbacks: 0 */
  /* since 1.6: host-observed nanoseconds these events took. A fallback's time is the whole
   * call on the other device: moving its inputs there, the op (on an asynchronous device,
   * until it was queued) and moving its results back, so a move made for a fallback is
   * counted in both records. A caller whose struct ends before this field gets the rest. */
  uint64_t nanoseconds;
} ctl_placement_record;
#define CTL_PLACEMENT_RECORD_STRUCT_SIZE (offsetof(ctl_placement_record, nanoseconds) + sizeof(uint64_t))

/* Copies up to `capacity` records, in a stable order, into `records` (each with struct_size
 * set by the caller; records may be NULL when capacity is 0) and sets *out_count to the
 * number the runtime has. With reset, the counters start again from zero after the copy. */
CTL_EXPORT ctl_status* ctl_runtime_placement_report(ctl_runtime* runtime, ctl_placement_record* records,
                                                    size_t capacity, size_t* out_count, bool reset);

/* What a device has done since the runtime was created. */
typedef struct ctl_device_usage {
  size_t struct_size; /* CTL_DEVICE_USAGE_STRUCT_SIZE */
  const void* next;
  /* Host-observed busy time: nanoseconds spent submitting ops and waiting for them. For a
   * synchronous plugin (CPU) it is the time the device computed; for an asynchronous one it
   * is a lower bound that includes the waits. */
  uint64_t busy_ns;
  uint64_t ops; /* op calls run on the device */
  uint64_t memory_in_use; /* bytes of tensor storage allocated on it and alive now */
  uint64_t memory_peak;   /* the most memory_in_use has been */
  uint64_t bytes_in;      /* moved onto it from other devices */
  uint64_t bytes_out;     /* moved from it to other devices */
} ctl_device_usage;
#define CTL_DEVICE_USAGE_STRUCT_SIZE (offsetof(ctl_device_usage, bytes_out) + sizeof(uint64_t))

CTL_EXPORT ctl_status* ctl_device_get_usage(const ctl_device* device, ctl_device_usage* out_usage);

/* ---- Graphs (since 1.5) ----
 *
 * A step of ops (forward, autograd's backward, the optimizer's update) can be captured
 * once and launched many times. Between ctl_runtime_begin_capture and
 * ctl_runtime_end_capture, the calling thread's ops on the runtime's devices are checked
 * exactly as eager calls are (a bad call gets the same status, and is not recorded) and
 * their outputs are allocated, but nothing runs: each op, zero fill and host-to-device
 * write becomes a node of the graph. Reading a tensor's data back to the host, moving
 * tensors between devices and collective communication are refused while capturing
 * (CTL_STATUS_FAILED_PRECONDITION), because their result would be unknown.
 *
 * A graph owns the device memory its nodes use. Launching it runs the nodes in order on
 * the tensors captured, so a program writes fresh input data into the captured input
 * tensors (ctl_op_run_into with CTL_OP_COPY from a tensor made by ctl_tensor_from_host)
 * and launches again. Shapes are fixed: a new shape
 * needs a new capture. Other threads' ops run eagerly during a capture.
 *
 * ctl_graph_optimize runs named passes over the graph (docs/graphs.md): "dce" (dead
 * nodes), "fold" (constant folding), "cse" (common subexpressions), "fuse_elementwise",
 * "fuse_epilogue" (bias and relu into matmul) and "plan_memory" (buffers shared by
 * liveness). A graph launched without it runs the ops exactly as captured. */

typedef struct ctl_graph ctl_graph;

/* Starts capturing the calling thread's ops on `runtime`. FAILED_PRECONDITION when this
 * thread is already capturing. */
CTL_EXPORT ctl_status* ctl_runtime_begin_capture(ctl_runtime* runtime);
/* Ends this thread's capture on `runtime`. *out_graph: new reference (also on an empty
 * capture). FAILED_PRECONDITION when no capture was begun here. */
CTL_EXPORT ctl_status* ctl_runtime_end_capture(ctl_runtime* runtime, ctl_graph** out_graph);
/* The id the next node captured on this thread will get (ids count from 0 in capture
 * order and survive optimisation), so a program can find its nodes again, e.g. to update
 * an optimizer's learning rate with ctl_graph_set_node_attrs. FAILED_PRECONDITION when
 * not capturing. */
CTL_EXPORT ctl_status* ctl_runtime_capture_next_node(ctl_runtime* runtime, uint64_t* out_node);

CTL_EXPORT void ctl_graph_retain(ctl_graph* graph);
CTL_EXPORT void ctl_graph_release(ctl_graph* graph);

typedef struct ctl_graph_options {
  size_t struct_size; /* CTL_GRAPH_OPTIONS_STRUCT_SIZE */
  const void* next;
  /* Comma-separated pass names, run in the order written; NULL: the variable
   * CATALYST_GRAPH_PASSES if set, else every pass; "none": none. A name prefixed with '-'
   * removes that pass from the default list ("-cse,-plan_memory"). */
  const char* passes;
} ctl_graph_options;
#define CTL_GRAPH_OPTIONS_STRUCT_SIZE (offsetof(ctl_graph_options, passes) + sizeof(const char*))

/* Optimises `graph` in place; options may be NULL (the default passes). A graph is
 * optimised at most once (FAILED_PRECONDITION after that, and after its first launch). */
CTL_EXPORT ctl_status* ctl_graph_optimize(ctl_graph* graph, const ctl_graph_options* options);

/* Runs every node in order on its device's default stream and returns without waiting
 * (as eager ops do); read results with ctl_tensor_to_host or wait with
 * ctl_runtime_synchronize. A node that fails stops the launch with its status. */
CTL_EXPORT ctl_status* ctl_graph_launch(ctl_graph* graph);

/* Replaces the attributes of captured node `node` (an id from
 * ctl_runtime_capture_next_node) for later launches. Only ops whose attributes change no
 * shape may be updated: adamw_step, sgd_step and fill. The attrs are checked as the op
 * checks them; a bad value changes nothing. */
CTL_EXPORT ctl_status* ctl_graph_set_node_attrs(ctl_graph* graph, uint64_t node, const void* attrs);

typedef struct ctl_graph_stats {
  size_t struct_size;        /* CTL_GRAPH_STATS_STRUCT_SIZE */
  uint64_t captured_nodes;   /* nodes as captured */
  uint64_t nodes;            /* nodes now (after optimisation) */
  uint64_t launches_per_run; /* plugin calls one ctl_graph_launch makes */
  uint64_t unfused_nodes;    /* fused nodes that run as their separate ops, because the
                                device's plugin does not support the fused op */
  uint64_t device_bytes;     /* device memory the graph's intermediate buffers use */
  uint64_t captured_device_bytes; /* the same before memory planning */
  uint64_t runs;             /* completed ctl_graph_launch calls */
} ctl_graph_stats;
#define CTL_GRAPH_STATS_STRUCT_SIZE (offsetof(ctl_graph_stats, runs) + sizeof(uint64_t))

CTL_EXPORT ctl_status* ctl_graph_get_stats(const ctl_graph* graph, ctl_graph_stats* out_stats);

/* What one pass did, in the order the passes ran. */
typedef struct ctl_graph_pass_record {
  size_t struct_size; /* CTL_GRAPH_PASS_RECORD_STRUCT_SIZE */
  const char* name;   /* borrowed; static */
  uint64_t nodes_before;
  uint64_t nodes_after;
  uint64_t device_bytes_before;
  uint64_t device_bytes_after;
  uint64_t changes; /* nodes removed, merged or rewritten */
} ctl_graph_pass_record;
#define CTL_GRAPH_PASS_RECORD_STRUCT_SIZE (offsetof(ctl_graph_pass_record, changes) + sizeof(uint64_t))

/* Copies up to `capacity` records; *out_count: how many passes ran. */
CTL_EXPORT ctl_status* ctl_graph_pass_report(const ctl_graph* graph, size_t capacity, ctl_graph_pass_record* out_records,
                                             size_t* out_count);

typedef enum ctl_graph_stage {
  CTL_GRAPH_CAPTURED = 0, /* the nodes as captured */
  CTL_GRAPH_CURRENT = 1   /* the nodes as they run now */
} ctl_graph_stage;

/* Writes the graph at `stage` as Graphviz DOT to `path`: one box per node (op, shapes,
 * device), an edge per buffer read, and a header with the node counts. */
CTL_EXPORT ctl_status* ctl_graph_write_dot(const ctl_graph* graph, ctl_graph_stage stage, const char* path);

/* ---- The fused elementwise op (since 1.5) ----
 *
 * CTL_OP_FUSED_ELEMENTWISE runs a straight-line program per element. Registers
 * 0 .. input_count-1 hold the inputs' elements; instruction i writes register
 * input_count + i; the last instruction's register is the output. Each instruction is a
 * float elementwise op of the op set: unary (neg .. reciprocal) reads register `a`; binary
 * (add .. minimum, gelu_backward, gelu_tanh_backward) reads `a` and `b`. Every result is
 * rounded to the dtype as the separate op would round it, so a plugin that computes each
 * instruction as its own op does gives the unfused result bit for bit. Graph passes make
 * this op; programs may also call it. */
#define CTL_FUSED_MAX_INPUTS 8
#define CTL_FUSED_MAX_INSTRUCTIONS 16

typedef struct ctl_fused_instruction {
  ctl_op_id op;
  uint16_t a; /* operand registers */
  uint16_t b; /* unused by unary ops */
} ctl_fused_instruction;

typedef struct ctl_fused_elementwise_attrs {
  size_t struct_size; /* CTL_FUSED_ELEMENTWISE_ATTRS_STRUCT_SIZE */
  uint32_t instruction_count; /* 1 .. CTL_FUSED_MAX_INSTRUCTIONS */
  ctl_fused_instruction program[CTL_FUSED_MAX_INSTRUCTIONS];
} ctl_fused_elementwise_attrs;
#define CTL_FUSED_ELEMENTWISE_ATTRS_STRUCT_SIZE \
  (offsetof(ctl_fused_elementwise_attrs, program) + sizeof(ctl_fused_instruction[CTL_FUSED_MAX_INSTRUCTIONS]))

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CATALYST_H_ */
