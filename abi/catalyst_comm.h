/* catalyst_comm.h — communication between ranks (since ABI 1.4): what programs call to
 * reduce, broadcast, gather and exchange Catalyst tensors across devices and processes, and
 * what a communication plugin implements.
 *
 * Standalone C99 beside catalyst.h and catalyst_plugin.h, with the same rules: statuses,
 * struct_size first, append-only tables, no abort across the boundary.
 *
 * A communicator (ctl_comm) is one rank of a group of `size` ranks. Two kinds exist:
 *  - in-process: ctl_comm_create_in_process makes one communicator per device of this
 *    process; each rank is used from its own thread (threads are the ranks);
 *  - plugin: ctl_comm_create_from_plugin asks a communication plugin
 *    (libcatalyst-comm-<name>.so, e.g. "mpi") for this process's rank of a group the
 *    plugin forms (MPI forms it from the environment mpirun sets).
 *
 * Ordering and asynchrony. Each communicator has one communication stream: its calls run
 * one after another, in the order this rank issued them, on a thread of the core, so the
 * caller's thread is free while they run. Every call has an asynchronous form (*_async)
 * that returns a ctl_comm_request to wait on, and a blocking form that is the same call
 * followed by the wait. A call reads its tensors after all work already queued on their
 * devices (the core waits for the device), and its results are on the device when its
 * request completes. Between the call and the completion the caller must neither read nor
 * write the tensors it passed. Every rank must issue the same collectives in the same order
 * (send and recv pair up by peer and tag instead).
 *
 * Data path. The core hands plugins host memory only: it copies a tensor of any device to
 * a contiguous host buffer, calls the plugin, and copies the result back. A plugin thus never
 * sees a device buffer, needs no knowledge of any device plugin, and works with every device
 * Catalyst has, at the price of one host round trip per call (device-visible transports can
 * come later as an appended, optional entry).
 *
 * Results. Reductions are computed once per element in a fixed order and the result is then
 * copied to every rank, so every rank gets bit-identical results. f16 and bf16 add in f32 and
 * round once per step; integers wrap; MEAN divides the sum by the number of ranks (integers
 * truncate toward zero). MAX and MIN propagate NaN.
 *
 * Failure. Every call has a deadline (ctl_comm_call_options.timeout_ms). A peer that does not
 * arrive in time, or that calls a different collective, makes the call fail with a status
 * that names the rank, the call and what was expected (DEVICE_LOST for a timeout,
 * FAILED_PRECONDITION for a mismatch) — never a hang. After such a failure the communicator
 * is broken: every later call fails at once with FAILED_PRECONDITION quoting the first error.
 * Release it and make a new one.
 */
#ifndef CATALYST_COMM_H_
#define CATALYST_COMM_H_

#include "catalyst_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ----------------------------------------------------------------------------------------
 * What programs call (exported by libcatalyst)
 * -------------------------------------------------------------------------------------- */

typedef struct ctl_comm ctl_comm;
typedef struct ctl_comm_request ctl_comm_request;

typedef enum ctl_comm_reduce_op {
  CTL_COMM_SUM = 0,
  CTL_COMM_MEAN = 1, /* the sum divided by the number of ranks */
  CTL_COMM_MAX = 2,
  CTL_COMM_MIN = 3
} ctl_comm_reduce_op;

/* The deadline used when a call's options leave timeout_ms 0: 300 seconds, or the value of
 * CATALYST_COMM_TIMEOUT_MS read when the communicator is created. */
#define CTL_COMM_DEFAULT_TIMEOUT_MS 300000u

/* How a communicator is made. NULL options mean all defaults. */
typedef struct ctl_comm_options {
  size_t struct_size; /* CTL_COMM_OPTIONS_STRUCT_SIZE */
  const void* next;   /* extension chain; unknown entries are skipped */
  /* The deadline of calls whose own options say 0; 0 here means the default above. */
  uint32_t default_timeout_ms;
  /* Text handed to the plugin's communicator_create (plugin communicators only); NULL or
   * "" for none. The MPI plugin takes none today. */
  const char* plugin_options;
} ctl_comm_options;
#define CTL_COMM_OPTIONS_STRUCT_SIZE (offsetof(ctl_comm_options, plugin_options) + sizeof(const char*))

/* Options of one call. NULL means the communicator's default timeout. */
typedef struct ctl_comm_call_options {
  size_t struct_size; /* CTL_COMM_CALL_OPTIONS_STRUCT_SIZE */
  const void* next;
  uint32_t timeout_ms; /* 0: the communicator's default */
} ctl_comm_call_options;
#define CTL_COMM_CALL_OPTIONS_STRUCT_SIZE (offsetof(ctl_comm_call_options, timeout_ms) + sizeof(uint32_t))

typedef struct ctl_comm_info {
  size_t struct_size; /* CTL_COMM_INFO_STRUCT_SIZE */
  const void* next;
  uint32_t rank;
  uint32_t size;
  const char* backend; /* "in-process" or the plugin's name; borrowed from the communicator */
  uint32_t default_timeout_ms;
} ctl_comm_info;
#define CTL_COMM_INFO_STRUCT_SIZE (offsetof(ctl_comm_info, default_timeout_ms) + sizeof(uint32_t))

/* One communicator per device: out_comms[i] is rank i of `count` ranks (count >= 1), each a
 * new reference. Each rank is used from its own thread. The devices may belong to any
 * plugins; one device may appear once only. out_comms must have room for count entries. */
CTL_EXPORT ctl_status* ctl_comm_create_in_process(ctl_runtime* runtime, ctl_device* const* devices, size_t count,
                                                  const ctl_comm_options* options, ctl_comm** out_comms);
/* This process's rank of the group the communication plugin `name` forms ("mpi" loads
 * libcatalyst-comm-mpi.so from the plugin search path; a path to a file also works).
 * NOT_FOUND names the directories searched. *out_comm: new reference. */
CTL_EXPORT ctl_status* ctl_comm_create_from_plugin(ctl_runtime* runtime, const char* name,
                                                   const ctl_comm_options* options, ctl_comm** out_comm);
CTL_EXPORT void ctl_comm_retain(ctl_comm* comm);
/* Drops a reference; the last one waits for the communicator's calls still running. */
CTL_EXPORT void ctl_comm_release(ctl_comm* comm);

/* Fills *out_info (caller sets out_info->struct_size). */
CTL_EXPORT ctl_status* ctl_comm_get_info(const ctl_comm* comm, ctl_comm_info* out_info);
/* Convenience getters; -1 for a NULL or foreign handle. */
CTL_EXPORT int32_t ctl_comm_rank(const ctl_comm* comm);
CTL_EXPORT int32_t ctl_comm_size(const ctl_comm* comm);

/* ---- Asynchronous calls. *out_request: new reference, released with
 * ctl_comm_request_release (releasing it before it completes does not cancel the call).
 * Arguments are checked before anything is queued: a bad argument returns its status and
 * queues nothing (other ranks will then time out waiting for this one). */

/* `tensor` (any device, any dtype but bool, contiguous or not) becomes the reduction over
 * all ranks of every rank's `tensor`. Every rank passes the same dtype and element count. */
CTL_EXPORT ctl_status* ctl_comm_allreduce_async(ctl_comm* comm, ctl_tensor* tensor, ctl_comm_reduce_op op,
                                                const ctl_comm_call_options* options, ctl_comm_request** out_request);
/* Every rank's `tensor` becomes rank `root`'s. */
CTL_EXPORT ctl_status* ctl_comm_broadcast_async(ctl_comm* comm, ctl_tensor* tensor, uint32_t root,
                                                const ctl_comm_call_options* options, ctl_comm_request** out_request);
/* `output` (numel = size * numel(input), same dtype) receives every rank's `input` in rank
 * order, as if concatenated along a new leading axis. */
CTL_EXPORT ctl_status* ctl_comm_allgather_async(ctl_comm* comm, ctl_tensor* input, ctl_tensor* output,
                                                const ctl_comm_call_options* options, ctl_comm_request** out_request);
/* `input` (numel = size * numel(output)) is reduced over ranks; rank r's `output` receives
 * block r of the result (the r-th numel(output) elements in row-major order). */
CTL_EXPORT ctl_status* ctl_comm_reduce_scatter_async(ctl_comm* comm, ctl_tensor* input, ctl_tensor* output,
                                                     ctl_comm_reduce_op op, const ctl_comm_call_options* options,
                                                     ctl_comm_request** out_request);
/* Point to point: `tensor`'s bytes to rank `peer`, matched by a recv on `peer` naming this
 * rank and the same tag (tag < 2^30), dtype and element count. */
CTL_EXPORT ctl_status* ctl_comm_send_async(ctl_comm* comm, ctl_tensor* tensor, uint32_t peer, uint32_t tag,
                                           const ctl_comm_call_options* options, ctl_comm_request** out_request);
CTL_EXPORT ctl_status* ctl_comm_recv_async(ctl_comm* comm, ctl_tensor* tensor, uint32_t peer, uint32_t tag,
                                           const ctl_comm_call_options* options, ctl_comm_request** out_request);
/* Completes when every rank has reached it. */
CTL_EXPORT ctl_status* ctl_comm_barrier_async(ctl_comm* comm, const ctl_comm_call_options* options,
                                              ctl_comm_request** out_request);

/* Waits up to timeout_ms (0: until the call's own deadline has passed, which it always
 * does) for the request; returns the call's status (a copy: each wait may be asked again).
 * DEVICE_LOST "still running after N ms" when this wait's own timeout passed first. */
CTL_EXPORT ctl_status* ctl_comm_request_wait(ctl_comm_request* request, uint32_t timeout_ms);
/* *out_done: whether the request has completed (its status is then ctl_comm_request_wait's). */
CTL_EXPORT ctl_status* ctl_comm_request_test(ctl_comm_request* request, bool* out_done);
CTL_EXPORT void ctl_comm_request_release(ctl_comm_request* request);

/* ---- Blocking forms: the asynchronous call followed by ctl_comm_request_wait. */
CTL_EXPORT ctl_status* ctl_comm_allreduce(ctl_comm* comm, ctl_tensor* tensor, ctl_comm_reduce_op op,
                                          const ctl_comm_call_options* options);
CTL_EXPORT ctl_status* ctl_comm_broadcast(ctl_comm* comm, ctl_tensor* tensor, uint32_t root,
                                          const ctl_comm_call_options* options);
CTL_EXPORT ctl_status* ctl_comm_allgather(ctl_comm* comm, ctl_tensor* input, ctl_tensor* output,
                                          const ctl_comm_call_options* options);
CTL_EXPORT ctl_status* ctl_comm_reduce_scatter(ctl_comm* comm, ctl_tensor* input, ctl_tensor* output,
                                               ctl_comm_reduce_op op, const ctl_comm_call_options* options);
CTL_EXPORT ctl_status* ctl_comm_send(ctl_comm* comm, ctl_tensor* tensor, uint32_t peer, uint32_t tag,
                                     const ctl_comm_call_options* options);
CTL_EXPORT ctl_status* ctl_comm_recv(ctl_comm* comm, ctl_tensor* tensor, uint32_t peer, uint32_t tag,
                                     const ctl_comm_call_options* options);
CTL_EXPORT ctl_status* ctl_comm_barrier(ctl_comm* comm, const ctl_comm_call_options* options);

/* Communication plugins discovery saw, in the same search path and order as device plugins
 * (file names libcatalyst-comm-<name>.so, which device discovery skips). Listing loads
 * each file and asks its query symbol for a table but makes no communicator (no MPI_Init).
 * ctl_plugin_info.device_count is 0 for them. */
CTL_EXPORT size_t ctl_runtime_comm_plugin_count(ctl_runtime* runtime);
CTL_EXPORT ctl_status* ctl_runtime_comm_plugin_info(ctl_runtime* runtime, size_t index, ctl_plugin_info* out_info);

/* ----------------------------------------------------------------------------------------
 * What a communication plugin implements
 *
 * libcatalyst-comm-<name>.so exports one symbol, ctl_comm_plugin_query. The core calls each
 * entry of one communicator from one thread at a time (its communication stream), so a
 * plugin needs no threads of its own and MPI_THREAD_SERIALIZED suffices. Entries block until
 * the operation is done or its deadline (timeout_ms, never 0 here) has passed; a deadline
 * that passes is a DEVICE_LOST status naming the peer and step that did not answer, never a
 * hang. Buffers are host memory the core owns; counts are elements of `dtype` (never bool)
 * and byte counts are bytes. Each collective carries `sequence`, the number of collectives
 * this communicator ran before it, so a plugin can report a mismatch between ranks with both
 * calls named.
 * -------------------------------------------------------------------------------------- */

typedef struct ctl_comm_plugin_communicator ctl_comm_plugin_communicator;

/* One collective or point-to-point operation, described as data (it can be logged and
 * compared between ranks). Pointers not used by `kind` are NULL. */
typedef enum ctl_comm_call_kind {
  CTL_COMM_CALL_ALLREDUCE = 0,      /* data (in place), count, dtype, op */
  CTL_COMM_CALL_BROADCAST = 1,      /* data (in place), count, dtype, root */
  CTL_COMM_CALL_ALLGATHER = 2,      /* input (count), output (size * count) */
  CTL_COMM_CALL_REDUCE_SCATTER = 3, /* input (size * count), output (count), op */
  CTL_COMM_CALL_SEND = 4,           /* input (count), peer, tag */
  CTL_COMM_CALL_RECV = 5,           /* output (count), peer, tag */
  CTL_COMM_CALL_BARRIER = 6
} ctl_comm_call_kind;

typedef struct ctl_comm_call {
  size_t struct_size; /* CTL_COMM_CALL_STRUCT_SIZE */
  const void* next;
  ctl_comm_call_kind kind;
  ctl_dtype dtype;
  uint64_t count; /* elements per rank (see kind) */
  ctl_comm_reduce_op op;
  uint32_t root_or_peer;
  uint32_t tag;
  void* data;          /* allreduce, broadcast: read and written */
  const void* input;   /* allgather, reduce_scatter, send */
  void* output;        /* allgather, reduce_scatter, recv */
  uint32_t timeout_ms; /* > 0 */
  uint64_t sequence;   /* collectives only: how many this communicator ran before */
} ctl_comm_call;
#define CTL_COMM_CALL_STRUCT_SIZE (offsetof(ctl_comm_call, sequence) + sizeof(uint64_t))

typedef struct ctl_comm_plugin_api {
  size_t struct_size; /* CTL_COMM_PLUGIN_API_STRUCT_SIZE of the version the plugin was built for */
  uint32_t abi_major;
  uint32_t abi_minor;
  const char* name;    /* short name, e.g. "mpi" */
  const char* version; /* the plugin's own version string */

  /* ---- Required entries. ---- */

  /* This process's member of the group the plugin forms. `host` stays valid until
   * communicator_destroy; `options` is the program's ctl_comm_options.plugin_options ("" when
   * none). A second communicator in one process may be refused with UNSUPPORTED. */
  ctl_status* (*communicator_create)(const ctl_host_api* host, const char* options,
                                     ctl_comm_plugin_communicator** out_communicator);
  /* After a failure (`broken` true) the plugin must not wait for peers while tearing down. */
  void (*communicator_destroy)(ctl_comm_plugin_communicator* communicator, bool broken);
  ctl_status* (*communicator_rank_size)(ctl_comm_plugin_communicator* communicator, uint32_t* out_rank,
                                        uint32_t* out_size);
  /* Runs `call` to completion or to its deadline. The core has checked it: kind, dtype and
   * op are known, pointers are set as the kind needs, root and peer are below size. A kind
   * the plugin cannot run gets UNSUPPORTED. */
  ctl_status* (*communicator_run)(ctl_comm_plugin_communicator* communicator, const ctl_comm_call* call);

  /* ---- Optional entries: NULL (or past struct_size) means not provided. ---- */
} ctl_comm_plugin_api;
#define CTL_COMM_PLUGIN_API_STRUCT_SIZE (offsetof(ctl_comm_plugin_api, communicator_run) + sizeof(void*))

/* The one symbol a communication plugin exports: the table for the richest version both
 * sides understand (same major, minor <= core_abi_minor), or NULL after logging why through
 * host->log. `host` is valid only during this call. */
typedef const ctl_comm_plugin_api* (*ctl_comm_plugin_query_fn)(uint32_t core_abi_major, uint32_t core_abi_minor,
                                                               const ctl_host_api* host);
#define CTL_COMM_PLUGIN_QUERY_SYMBOL "ctl_comm_plugin_query"

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CATALYST_COMM_H_ */
