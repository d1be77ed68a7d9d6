/* catalyst_plugin.h — what a device plugin implements.
 *
 * A plugin is a shared library libcatalyst-<name>.so that exports exactly one symbol,
 * ctl_plugin_query. The core calls it with its ABI version and a host table; the plugin
 * answers with the richest function table both sides understand, or NULL after saying
 * why through host->log.
 *
 * Devices are asynchronous by contract: buffer transfers and op_execute may return before
 * the work is done. Results are visible after stream_synchronize, or after waiting on an
 * event recorded behind the work. A plugin may run everything synchronously.
 *
 * Ownership: objects a plugin creates (instances, devices, buffers, streams, events) are
 * destroyed by the matching *_destroy / *_free entry, called exactly once by the core.
 * The core never passes a NULL or destroyed object handle to an entry; what it passes in
 * an op call (views, counts, attributes) may still be malformed and must be checked.
 * Statuses are always created through the host table, so the core frees them.
 */
#ifndef CATALYST_PLUGIN_H_
#define CATALYST_PLUGIN_H_

#include "catalyst.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque plugin-side objects. */
typedef struct ctl_plugin_instance ctl_plugin_instance;
typedef struct ctl_plugin_device ctl_plugin_device;
typedef struct ctl_plugin_buffer ctl_plugin_buffer;
typedef struct ctl_plugin_stream ctl_plugin_stream;
typedef struct ctl_plugin_event ctl_plugin_event;

/* ----------------------------------------------------------------------------------------
 * What the core gives a plugin
 * -------------------------------------------------------------------------------------- */

typedef struct ctl_host_api {
  size_t struct_size; /* CTL_HOST_API_STRUCT_SIZE */
  uint32_t abi_major; /* the core's ABI version */
  uint32_t abi_minor;
  void* context; /* pass back as the first argument of every entry below */
  /* Host memory. alignment is a power of two (at least sizeof(void*)). The core counts
   * every allocation so that the conformance suite can find leaks. */
  void* (*alloc)(void* context, size_t size, size_t alignment);
  void (*free)(void* context, void* pointer);
  /* One log line, without a trailing newline. */
  void (*log)(void* context, ctl_log_level level, const char* message);
  /* A status the core owns; message is copied. */
  ctl_status* (*status_create)(void* context, ctl_status_code code, const char* message);
} ctl_host_api;
#define CTL_HOST_API_STRUCT_SIZE (offsetof(ctl_host_api, status_create) + sizeof(void*))

/* ----------------------------------------------------------------------------------------
 * Device properties, as the plugin reports them
 * -------------------------------------------------------------------------------------- */

typedef struct ctl_plugin_device_properties {
  size_t struct_size; /* set by the core; fill only what fits */
  const void* next;
  const char* name; /* strings stay valid as long as the device */
  const char* vendor;
  const char* driver_version;
  ctl_device_kind kind;
  uint64_t memory_total; /* bytes; 0 when unknown */
  /* bytes free now; 0 when unknown (as in ctl_device_info). A plugin that has no way to
   * ask (core OpenCL has none) reports 0, never memory_total: the caller must be able to
   * tell "unknown" from "all of it is free". */
  uint64_t memory_free;
  uint32_t compute_units;
  const char* pci_bus_id; /* "dddd:bb:dd.f" lower case, or NULL */
  int32_t numa_node;      /* -1 when unknown */
  uint8_t uuid[16];
  bool has_uuid;
  uint32_t dtype_mask; /* CTL_DTYPE_BIT of each dtype the device computes in */
  bool host_visible;   /* buffer_host_pointer works for every buffer */
  uint32_t max_work_group_size; /* since 1.2: work-items per work-group at most, or 0 */
} ctl_plugin_device_properties;
#define CTL_PLUGIN_DEVICE_PROPERTIES_STRUCT_SIZE \
  (offsetof(ctl_plugin_device_properties, max_work_group_size) + sizeof(uint32_t))

/* ----------------------------------------------------------------------------------------
 * Op calls: ops as data
 * -------------------------------------------------------------------------------------- */

/* A strided view of a device buffer. Strides are in elements and never negative; 0 means
 * the axis is broadcast. The core has checked that every element lies inside the buffer. */
typedef struct ctl_tensor_view {
  size_t struct_size; /* CTL_TENSOR_VIEW_STRUCT_SIZE */
  ctl_plugin_buffer* buffer;
  uint64_t byte_offset; /* of element [0, 0, ...] */
  ctl_dtype dtype;
  uint32_t rank;
  int64_t shape[CTL_MAX_RANK];
  int64_t strides[CTL_MAX_RANK];
} ctl_tensor_view;
#define CTL_TENSOR_VIEW_STRUCT_SIZE (offsetof(ctl_tensor_view, strides) + sizeof(int64_t[CTL_MAX_RANK]))

/* What the core hands to supports() and execute(). Before a call reaches a plugin the core
 * has validated and normalised it:
 *  - elementwise, where: every input is already broadcast to the output shape (stride 0 on
 *    broadcast axes), so all views share one shape;
 *  - reductions: the output view has the input's rank with size 1 on reduced axes; attrs
 *    hold non-negative, sorted, distinct axes (all of them when reducing everything);
 *  - matmul: a is (..., M, K) and b is (..., K, N) with batch axes broadcast to the
 *    output's; transposes are applied as strides and the transpose flags are false;
 *    alpha_set is true; the optional bias (inputs[2], may be NULL) is broadcast to the
 *    output shape;
 *  - softmax / log_softmax / gather / scatter_add / concat: axis is non-negative;
 *  - layer_norm / rms_norm: epsilon is set; absent optional inputs and outputs are NULL
 *    or past the count (rule 2 below);
 *  - gelu_backward / gelu_tanh_backward (1.1): broadcast like elementwise binary ops;
 *  - softmax_backward / log_softmax_backward (1.1): y and dy share one shape; axis is
 *    non-negative;
 *  - layer_norm_backward / rms_norm_backward (1.1): dy and x share one shape; mean and rstd
 *    are x.shape[:-1] (f32 for f16/bf16 x); absent weight and outputs are NULL or past the
 *    count (rule 2); epsilon is set as layer_norm's (it is unused);
 *  - cross_entropy / cross_entropy_backward (1.1): target is logits.shape[:-1] (i32 or
 *    i64); attrs are always present;
 *  - adamw_step (1.1): the three outputs are read and written in place; attrs are present
 *    and checked (step >= 1, betas in [0, 1), eps > 0);
 *  - sgd_step (1.2): param and momentum_buf are read and written in place; momentum_buf is
 *    NULL exactly when momentum is 0; attrs are present and checked (see ctl_sgd_attrs);
 *  - conv2d and its backward forms (1.1): every tensor is rank 4; stride, dilation and
 *    groups are at least 1 and padding at least 0 (zeros replaced); the bias is NULL or (O);
 *  - pooling (1.1): rank 4; kernel >= 1, stride >= 1 (0 replaced by the kernel), padding
 *    in [0, kernel / 2];
 *  - outputs never overlap inputs.
 * And four rules hold for every op:
 *  1. Ranks. Every input view of an op that broadcasts has the output's rank, and so does
 *     each matmul operand and its bias: broadcasting shows in strides, never in a lower
 *     rank. a (M, K) against b (B, K, N) arrives as a (B, M, K) whose batch stride is 0; a
 *     batch axis an operand lacked or had with size 1 has stride 0, and a batch axis of
 *     stride 0 may sit in any operand, so batch offsets come from the strides, never from
 *     M * K.
 *  2. Counts. input_count and output_count are the caller's, between the op's least and
 *     full counts: layer_norm may arrive with output_count 1 (y) or 3 (y, mean, rstd),
 *     layer_norm_backward with 1, 2 or 3, and an entry below the count may be NULL
 *     (layer_norm with output_count 3 and outputs[1] NULL wants y and rstd). An optional input or output is absent when its index is at or
 *     past the count or its entry is NULL; read neither past the count nor through a NULL.
 *     The same holds for rms_norm (2), layer_norm_backward (3), rms_norm_backward (2), the
 *     norms' inputs and the bias of matmul and conv2d.
 *  3. Attributes. An op with an attribute struct in catalyst.h always gets it (attrs is
 *     never NULL), with the op's documented defaults applied: a NULL from the caller arrives
 *     as that filled struct (softmax, log_softmax and their backward forms: the last axis;
 *     cast: the output's dtype; every other op: what a zeroed struct means, its zero rules
 *     applied as above), or is refused where the struct is required (arange, random,
 *     adamw_step, sgd_step, pooling, fused_elementwise). Ops without one (elementwise,
 *     where, copy, the gelu backward forms) get NULL. (Cores of ABI 1.5 and before passed
 *     layer_norm_backward and rms_norm_backward a caller's NULL as it was; their epsilon is
 *     unused either way.)
 *  4. Rank 0. No op gets an axis of a rank-0 tensor: softmax, log_softmax, their backward
 *     forms, argmax, argmin, concat, gather, scatter_add, cross_entropy and the norms refuse
 *     a rank-0 input in the core, so every axis a plugin sees is in [0, rank). A reduction
 *     of a rank-0 tensor arrives with axis_count 0: there is no axis to reduce.
 * The core validates every call it makes; a call built otherwise (the conformance suite's
 * bad calls) may break any of these, and op_execute answers it with an error, never a crash.
 * Attribute structs are exactly the ones of catalyst.h. */
typedef struct ctl_op_call {
  size_t struct_size; /* CTL_OP_CALL_STRUCT_SIZE */
  const void* next;
  ctl_op_id op;
  uint32_t input_count;
  const ctl_tensor_view* const* inputs; /* an entry may be NULL for an absent optional input */
  uint32_t output_count;
  const ctl_tensor_view* const* outputs;
  const void* attrs; /* the op's attribute struct; NULL exactly for ops without one */
} ctl_op_call;
#define CTL_OP_CALL_STRUCT_SIZE (offsetof(ctl_op_call, attrs) + sizeof(void*))

/* ----------------------------------------------------------------------------------------
 * What a plugin gives the core. Entries marked optional may be NULL.
 * -------------------------------------------------------------------------------------- */

typedef struct ctl_plugin_api {
  size_t struct_size; /* CTL_PLUGIN_API_STRUCT_SIZE of the version the plugin was built for */
  uint32_t abi_major; /* the version this table implements */
  uint32_t abi_minor;
  const char* name;    /* short name, e.g. "cpu" */
  const char* version; /* the plugin's own version string */

  /* ---- Required entries (through op_execute). ---- */

  /* One instance per runtime; `host` stays valid until instance_destroy. */
  ctl_status* (*instance_create)(const ctl_host_api* host, ctl_plugin_instance** out_instance);
  void (*instance_destroy)(ctl_plugin_instance* instance);

  /* Devices. A device lives as long as its instance; *out_device is borrowed. */
  ctl_status* (*device_count)(ctl_plugin_instance* instance, uint32_t* out_count);
  ctl_status* (*device_get)(ctl_plugin_instance* instance, uint32_t index, ctl_plugin_device** out_device);
  /* Fills *out_properties, writing only fields that fit in out_properties->struct_size.
   * The core pre-fills defaults (numa_node -1, required dtypes, ...) for what an older
   * plugin does not know. */
  ctl_status* (*device_properties)(ctl_plugin_device* device, ctl_plugin_device_properties* out_properties);

  /* Buffers: `size` bytes, at least 64-byte aligned. size 0 is allowed. */
  ctl_status* (*buffer_allocate)(ctl_plugin_device* device, uint64_t size, ctl_plugin_buffer** out_buffer);
  void (*buffer_free)(ctl_plugin_device* device, ctl_plugin_buffer* buffer);
  /* Host -> device. `source` must stay valid until the stream has passed this point. */
  ctl_status* (*buffer_write)(ctl_plugin_stream* stream, ctl_plugin_buffer* buffer, uint64_t offset, const void* source,
                              uint64_t size);
  /* Device -> host. `destination` is written by the time the stream has passed this point. */
  ctl_status* (*buffer_read)(ctl_plugin_stream* stream, ctl_plugin_buffer* buffer, uint64_t offset, void* destination,
                             uint64_t size);

  /* Streams: work submitted to one stream runs in order. */
  ctl_status* (*stream_create)(ctl_plugin_device* device, ctl_plugin_stream** out_stream);
  void (*stream_destroy)(ctl_plugin_stream* stream);
  ctl_status* (*stream_synchronize)(ctl_plugin_stream* stream);

  /* Enqueues `call` on `stream`. It validates what it relies on and returns an error
   * status (INVALID_ARGUMENT, UNSUPPORTED, ...) rather than crashing on a malformed call;
   * a call it cannot run gets UNSUPPORTED and changes nothing. Ordinary dispatch calls it
   * directly, without asking op_supports first. */
  ctl_status* (*op_execute)(ctl_plugin_stream* stream, const ctl_op_call* call);

  /* ---- Optional entries: NULL (or past struct_size) means the core's default. ---- */

  /* NULL when the device can run `call`, else an UNSUPPORTED status saying why. The core
   * asks it when it must know ahead of running (coverage reports, placement), not on every
   * op, and only with validated calls; for a malformed call it may answer NULL (op_execute
   * has the last word) but must not crash. Default: every call is assumed supported and
   * op_execute has the last word. */
  ctl_status* (*op_supports)(ctl_plugin_device* device, const ctl_op_call* call);
  /* Device -> device on one device; regions do not overlap. Default: through the host. */
  ctl_status* (*buffer_copy)(ctl_plugin_stream* stream, ctl_plugin_buffer* source, uint64_t source_offset,
                             ctl_plugin_buffer* destination, uint64_t destination_offset, uint64_t size);
  /* Repeats a pattern of 1, 2, 4 or 8 bytes over `size` bytes (a multiple of it).
   * Default: buffer_write of a host copy. */
  ctl_status* (*buffer_fill)(ctl_plugin_stream* stream, ctl_plugin_buffer* buffer, uint64_t offset, uint64_t size,
                             const void* pattern, uint32_t pattern_size);
  /* The host address of a buffer's first byte, for host-visible devices. Default: none,
   * so DLPack export copies are refused and import is unsupported. */
  ctl_status* (*buffer_host_pointer)(ctl_plugin_device* device, ctl_plugin_buffer* buffer, void** out_pointer);
  /* Wraps `size` bytes of host memory the caller keeps alive (DLPack import);
   * buffer_free must then not free the memory itself. */
  ctl_status* (*buffer_wrap_host)(ctl_plugin_device* device, void* pointer, uint64_t size,
                                  ctl_plugin_buffer** out_buffer);
  /* Events: record marks a point in a stream; stream_wait_event makes another stream wait
   * for it. Default (all five NULL): the core synchronizes the recording stream instead. */
  ctl_status* (*event_create)(ctl_plugin_device* device, ctl_plugin_event** out_event);
  void (*event_destroy)(ctl_plugin_event* event);
  ctl_status* (*event_record)(ctl_plugin_event* event, ctl_plugin_stream* stream);
  ctl_status* (*stream_wait_event)(ctl_plugin_stream* stream, ctl_plugin_event* event);
  ctl_status* (*event_synchronize)(ctl_plugin_event* event);

  /* ---- Since 1.4 (optional). ---- */

  /* Device -> device between two devices of this plugin: `source` lives on `source_device`,
   * `destination` on the device of `stream`, which orders the copy. Before calling, the core
   * has made `stream` wait for the work that writes `source` (stream_wait_event with an
   * event recorded on the source device's stream, or a synchronize when the plugin has no
   * events). A plugin that provides this entry accepts, in stream_wait_event, an event
   * recorded on any of its devices. Regions do not overlap. Default: the core copies through
   * host memory (buffer_read on the source device, buffer_write on the destination). */
  ctl_status* (*buffer_copy_peer)(ctl_plugin_stream* stream, ctl_plugin_device* source_device,
                                  ctl_plugin_buffer* source, uint64_t source_offset, ctl_plugin_buffer* destination,
                                  uint64_t destination_offset, uint64_t size);
} ctl_plugin_api;
/* The smallest table the core accepts: everything through op_execute. */
#define CTL_PLUGIN_API_MIN_STRUCT_SIZE (offsetof(ctl_plugin_api, op_execute) + sizeof(void*))
#define CTL_PLUGIN_API_STRUCT_SIZE (offsetof(ctl_plugin_api, buffer_copy_peer) + sizeof(void*))
/* The table of a 1.2 or 1.3 plugin, which ends at event_synchronize. */
#define CTL_PLUGIN_API_1_2_STRUCT_SIZE (offsetof(ctl_plugin_api, event_synchronize) + sizeof(void*))

/* The one symbol a plugin exports. Returns the table for the richest version both sides
 * understand (same major, minor <= core_abi_minor), or NULL after logging why. `host` is
 * valid only during this call (for logging); instances get their own in instance_create. */
typedef const ctl_plugin_api* (*ctl_plugin_query_fn)(uint32_t core_abi_major, uint32_t core_abi_minor,
                                                     const ctl_host_api* host);
#define CTL_PLUGIN_QUERY_SYMBOL "ctl_plugin_query"

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CATALYST_PLUGIN_H_ */
