// comm_api.cpp — the extern "C" functions of catalyst_comm.h that programs call: making
// communicators, checking each call's arguments before anything is queued, and staging
// tensors of any device through host memory around the backend's call on the stream.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "c_guard.h"
#include "comm.h"
#include "comm_loader.h"
#include "enum_value.h"
#include "graph/capture.h"
#include "host_reduce.h"
#include "in_process.h"
#include "placement/lazy_move.h"
#include "runtime.h"
#include "status.h"
#include "tensor.h"

using namespace catalyst;
using namespace catalyst::comm;

ctl_comm::~ctl_comm() {
  stream.reset();  // finishes what is queued first
  if (!broken.empty() && backend) backend->mark_broken();
  backend.reset();
  magic = 0;
  ctl_runtime_release(runtime);
}

namespace catalyst::comm {

const char* op_name(ctl_comm_reduce_op op) {
  switch (op) {
    case CTL_COMM_SUM:
      return "sum";
    case CTL_COMM_MEAN:
      return "mean";
    case CTL_COMM_MAX:
      return "max";
    case CTL_COMM_MIN:
      return "min";
  }
  return "unknown op";
}

std::string describe_call(const ctl_comm_call& call) {
  static const char* const kinds[] = {"allreduce", "broadcast", "allgather", "reduce_scatter",
                                      "send",      "recv",      "barrier"};
  const unsigned kind = static_cast<unsigned>(call.kind);
  std::string text = kind < 7 ? kinds[kind] : "unknown call";
  if (call.kind == CTL_COMM_CALL_SEND || call.kind == CTL_COMM_CALL_RECV) {
    text += std::string(call.kind == CTL_COMM_CALL_SEND ? " to" : " from") + " rank " +
            std::to_string(call.root_or_peer) + " tag " + std::to_string(call.tag);
  } else {
    text += " #" + std::to_string(call.sequence);
  }
  if (call.kind == CTL_COMM_CALL_BARRIER) return text;
  text += std::string(" (") + ctl_dtype_name(call.dtype) + ", " + std::to_string(call.count) + " elements";
  if (call.kind == CTL_COMM_CALL_ALLREDUCE || call.kind == CTL_COMM_CALL_REDUCE_SCATTER) {
    text += std::string(", ") + op_name(call.op);
  }
  if (call.kind == CTL_COMM_CALL_BROADCAST) text += ", root " + std::to_string(call.root_or_peer);
  return text + ")";
}

}  // namespace catalyst::comm

namespace {

uint32_t timeout_from_environment() {
  const char* text = std::getenv("CATALYST_COMM_TIMEOUT_MS");
  if (!text || !*text) return CTL_COMM_DEFAULT_TIMEOUT_MS;
  char* end = nullptr;
  const unsigned long value = std::strtoul(text, &end, 10);
  return (*end == '\0' && value > 0 && value <= UINT32_MAX) ? static_cast<uint32_t>(value)
                                                            : CTL_COMM_DEFAULT_TIMEOUT_MS;
}

ctl_status* read_options(const ctl_comm_options* options, ctl_comm_options* out) {
  *out = ctl_comm_options{};
  out->struct_size = sizeof *out;
  if (!options) return nullptr;
  CTL_CHECK_ARG(options->struct_size >= offsetof(ctl_comm_options, default_timeout_ms),
                "options->struct_size is %zu; set it to CTL_COMM_OPTIONS_STRUCT_SIZE", options->struct_size);
  std::memcpy(out, options, std::min(options->struct_size, sizeof *out));
  return nullptr;
}

ctl_comm* new_comm(ctl_runtime* runtime, std::unique_ptr<Backend> backend, const ctl_comm_options& options) {
  auto comm = std::make_unique<ctl_comm>();
  ctl_runtime_retain(runtime);
  comm->runtime = runtime;
  comm->backend = std::move(backend);
  comm->default_timeout_ms = options.default_timeout_ms ? options.default_timeout_ms : timeout_from_environment();
  comm->stream = std::make_unique<CommStream>();
  return comm.release();
}

ctl_status* check_comm(const ctl_comm* comm) {
  if (!comm) return make_status(CTL_STATUS_INVALID_ARGUMENT, "argument 'comm' is NULL");
  if (comm->magic != kCommMagic)
    return make_status(CTL_STATUS_INVALID_ARGUMENT, "argument 'comm' is not a live ctl_comm");
  return nullptr;
}

// A tensor held by a queued call until the call has run.
struct HeldTensor {
  ctl_tensor* tensor = nullptr;
  explicit HeldTensor(ctl_tensor* t) : tensor(t) {
    if (t) ctl_tensor_retain(t);
  }
  ~HeldTensor() { ctl_tensor_release(tensor); }
  HeldTensor(const HeldTensor&) = delete;
  HeldTensor& operator=(const HeldTensor&) = delete;
};

ctl_status* stage_in(ctl_tensor* tensor, std::vector<uint8_t>* host) {
  host->resize(static_cast<size_t>(ctl_tensor_numel(tensor)) * ctl_dtype_size(ctl_tensor_dtype(tensor)));
  if (host->empty()) return nullptr;
  return ctl_tensor_to_host(tensor, host->data(), host->size());
}

// Writes `host` (contiguous) into `tensor` on its device, whatever its strides. A contiguous
// tensor is written in place through its plugin (no temporary tensor, no copy op: at hundreds
// of MiB those cost more than the communication).
ctl_status* stage_out(ctl_tensor* tensor, const std::vector<uint8_t>& host) {
  if (host.empty()) return nullptr;
  if (tensor->layout.is_contiguous()) {
    CTL_RETURN_IF_ERROR(fetch_if_pending(tensor));  // the write may cover part of the storage
    ctl_device* device = tensor->device();
    std::lock_guard lock(device->stream_mutex);
    CTL_RETURN_IF_ERROR(device->api().buffer_write(device->stream, tensor->storage->buffer, tensor->view.byte_offset,
                                                   host.data(), host.size()));
    return device->api().stream_synchronize(device->stream);  // `host` must outlive the write
  }
  ctl_tensor_info info{};
  info.struct_size = CTL_TENSOR_INFO_STRUCT_SIZE;
  CTL_RETURN_IF_ERROR(ctl_tensor_get_info(tensor, &info));
  ctl_tensor* staged = nullptr;
  CTL_RETURN_IF_ERROR(
      ctl_tensor_from_host(info.device, info.dtype, info.rank, info.shape, host.data(), host.size(), &staged));
  ctl_status* status = ctl_op_run_into(CTL_OP_COPY, 1, &staged, nullptr, 1, &tensor);
  ctl_tensor_release(staged);
  return status;
}

bool breaks_communicator(ctl_status_code code) {
  return code == CTL_STATUS_DEVICE_LOST || code == CTL_STATUS_FAILED_PRECONDITION || code == CTL_STATUS_INTERNAL;
}

// Checks `call` (tensors as given) and queues it; the stream stages, runs and writes back.
ctl_status* submit(ctl_comm* comm, ctl_comm_call call, ctl_tensor* in, ctl_tensor* out,
                   const ctl_comm_call_options* options, ctl_comm_request** out_request) {
  CTL_CHECK_ARG(out_request, "argument 'out_request' is NULL");
  // The call runs on the communicator's thread, which a capture does not see: refuse it on
  // the capturing thread, for any runtime.
  if (t_capture) return refused_while_capturing("communication between ranks");
  uint32_t timeout = comm->default_timeout_ms;
  if (options) {
    CTL_CHECK_ARG(options->struct_size >= CTL_COMM_CALL_OPTIONS_STRUCT_SIZE,
                  "options->struct_size is %zu; set it to CTL_COMM_CALL_OPTIONS_STRUCT_SIZE", options->struct_size);
    if (options->timeout_ms) timeout = options->timeout_ms;
  }
  call.struct_size = sizeof call;
  call.timeout_ms = timeout;
  auto held_in = std::make_shared<HeldTensor>(in);
  auto held_out = std::make_shared<HeldTensor>(out);
  auto state = comm->stream->submit([comm, call, held_in, held_out]() mutable -> ctl_status* {
    {
      std::lock_guard lock(comm->broken_mutex);
      if (!comm->broken.empty()) {
        return make_status_string(CTL_STATUS_FAILED_PRECONDITION,
                                  "the communicator failed earlier and takes no more calls: " + comm->broken);
      }
    }
    // The stream's own staging buffers, kept between calls: fresh ones of hundreds of MiB
    // would fault in every page on every call.
    std::vector<uint8_t>& a = comm->staging[0];
    std::vector<uint8_t>& b = comm->staging[1];
    ctl_tensor* in_tensor = held_in->tensor;
    ctl_tensor* out_tensor = held_out->tensor;
    switch (call.kind) {
      case CTL_COMM_CALL_ALLREDUCE:
      case CTL_COMM_CALL_BROADCAST:
        CTL_RETURN_IF_ERROR(stage_in(in_tensor, &a));
        call.data = a.data();
        break;
      case CTL_COMM_CALL_ALLGATHER:
      case CTL_COMM_CALL_REDUCE_SCATTER:
        CTL_RETURN_IF_ERROR(stage_in(in_tensor, &a));
        b.resize(static_cast<size_t>(ctl_tensor_numel(out_tensor)) * ctl_dtype_size(call.dtype));
        call.input = a.data();
        call.output = b.data();
        break;
      case CTL_COMM_CALL_SEND:
        CTL_RETURN_IF_ERROR(stage_in(in_tensor, &a));
        call.input = a.data();
        break;
      case CTL_COMM_CALL_RECV:
        b.resize(static_cast<size_t>(ctl_tensor_numel(out_tensor)) * ctl_dtype_size(call.dtype));
        call.output = b.data();
        break;
      default:
        break;
    }
    if (call.kind != CTL_COMM_CALL_SEND && call.kind != CTL_COMM_CALL_RECV) call.sequence = comm->sequence++;
    if (ctl_status* status = comm->backend->run(call)) {
      if (breaks_communicator(ctl_status_get_code(status))) {
        std::lock_guard lock(comm->broken_mutex);
        if (comm->broken.empty()) comm->broken = ctl_status_get_message(status);
      }
      return status;
    }
    if (call.kind == CTL_COMM_CALL_ALLREDUCE || call.kind == CTL_COMM_CALL_BROADCAST) {
      return stage_out(in_tensor, a);
    }
    if (out_tensor) return stage_out(out_tensor, b);
    return nullptr;
  });
  auto request = std::make_unique<ctl_comm_request>();
  request->state = std::move(state);
  *out_request = request.release();
  return nullptr;
}

ctl_status* check_data_tensor(ctl_tensor* tensor, const char* argument, bool reduce) {
  CTL_RETURN_IF_ERROR(check_tensor(tensor, argument));
  const ctl_dtype dtype = ctl_tensor_dtype(tensor);
  if (reduce && !reducible(dtype)) {
    return make_status(CTL_STATUS_INVALID_ARGUMENT,
                       "argument '%s' has dtype %s; reductions between ranks take f32, f64, f16, bf16, i32 or i64",
                       argument, ctl_dtype_name(dtype));
  }
  return nullptr;
}

// By reference: a C caller may pass any int, and loading an out-of-range value as the enum
// is undefined in C++ (enum_value.h).
ctl_status* check_op(const ctl_comm_reduce_op& op) {
  const int value = enum_value(op);
  CTL_CHECK_ARG(value >= CTL_COMM_SUM && value <= CTL_COMM_MIN, "argument 'op' is %d, not a ctl_comm_reduce_op", value);
  return nullptr;
}

ctl_status* check_rank(const ctl_comm* comm, uint32_t value, const char* argument) {
  if (value >= comm->backend->size()) {
    return make_status(CTL_STATUS_OUT_OF_RANGE, "argument '%s' is %u but the communicator has %u ranks", argument,
                       value, comm->backend->size());
  }
  return nullptr;
}

ctl_comm_call base_call(ctl_comm_call_kind kind) {
  ctl_comm_call call{};
  call.struct_size = sizeof call;
  call.kind = kind;
  return call;
}

ctl_status* wait_request(ctl_comm_request* request, uint32_t timeout_ms) {
  RequestState& state = *request->state;
  std::unique_lock lock(state.mutex);
  if (timeout_ms == 0) {
    state.done_cv.wait(lock, [&] { return state.done; });
  } else if (!state.done_cv.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return state.done; })) {
    return make_status(CTL_STATUS_DEVICE_LOST, "the communication request is still running after %u ms", timeout_ms);
  }
  if (state.code == CTL_STATUS_OK) return nullptr;
  return make_status_string(state.code, state.message);
}

// The blocking form of an asynchronous call.
template <typename Submit>
ctl_status* blocking(Submit&& submit_call) {
  ctl_comm_request* request = nullptr;
  CTL_RETURN_IF_ERROR(submit_call(&request));
  ctl_status* status = wait_request(request, 0);
  delete request;
  return status;
}

}  // namespace

extern "C" {

CTL_EXPORT ctl_status* ctl_comm_create_in_process(ctl_runtime* runtime, ctl_device* const* devices, size_t count,
                                                  const ctl_comm_options* options, ctl_comm** out_comms) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_runtime(runtime, "runtime"));
    CTL_CHECK_ARG(count >= 1 && count <= 4096, "argument 'count' is %zu; an in-process group has 1 to 4096 ranks",
                  count);
    CTL_CHECK_ARG(devices, "argument 'devices' is NULL");
    CTL_CHECK_ARG(out_comms, "argument 'out_comms' is NULL");
    for (size_t i = 0; i < count; ++i) {
      if (ctl_status* status = check_device(devices[i], "devices[i]")) {
        return annotate(status, "devices[" + std::to_string(i) + "]");
      }
      for (size_t j = 0; j < i; ++j) {
        CTL_CHECK_ARG(devices[i] != devices[j],
                      "devices[%zu] and devices[%zu] are the same device (%s); one rank per "
                      "device",
                      j, i, devices[i]->label.c_str());
      }
    }
    ctl_comm_options opts;
    CTL_RETURN_IF_ERROR(read_options(options, &opts));
    auto ranks = make_in_process_group(static_cast<uint32_t>(count));
    for (size_t i = 0; i < count; ++i) out_comms[i] = new_comm(runtime, std::move(ranks[i]), opts);
    return nullptr;
  });
}

CTL_EXPORT ctl_status* ctl_comm_create_from_plugin(ctl_runtime* runtime, const char* name,
                                                   const ctl_comm_options* options, ctl_comm** out_comm) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_runtime(runtime, "runtime"));
    CTL_CHECK_ARG(name && *name, "argument 'name' is NULL or empty");
    CTL_CHECK_ARG(out_comm, "argument 'out_comm' is NULL");
    ctl_comm_options opts;
    CTL_RETURN_IF_ERROR(read_options(options, &opts));
    std::unique_ptr<Backend> backend;
    CTL_RETURN_IF_ERROR(
        make_plugin_backend(name, opts.plugin_options ? opts.plugin_options : "", runtime->logger, &backend));
    *out_comm = new_comm(runtime, std::move(backend), opts);
    return nullptr;
  });
}

CTL_EXPORT void ctl_comm_retain(ctl_comm* comm) {
  if (comm && comm->magic == kCommMagic) comm->references.fetch_add(1);
}

CTL_EXPORT void ctl_comm_release(ctl_comm* comm) {
  if (!comm || comm->magic != kCommMagic) return;
  if (comm->references.fetch_sub(1) == 1) delete comm;
}

CTL_EXPORT ctl_status* ctl_comm_get_info(const ctl_comm* comm, ctl_comm_info* out_info) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_comm(comm));
    CTL_CHECK_ARG(out_info, "argument 'out_info' is NULL");
    CTL_CHECK_ARG(out_info->struct_size >= offsetof(ctl_comm_info, next),
                  "out_info->struct_size is %zu; set it to CTL_COMM_INFO_STRUCT_SIZE", out_info->struct_size);
    ctl_comm_info info{};
    info.struct_size = sizeof info;
    info.next = out_info->next;
    info.rank = comm->backend->rank();
    info.size = comm->backend->size();
    info.backend = comm->backend->name();
    info.default_timeout_ms = comm->default_timeout_ms;
    copy_out(&info, out_info);
    return nullptr;
  });
}

CTL_EXPORT int32_t ctl_comm_rank(const ctl_comm* comm) {
  return comm && comm->magic == kCommMagic ? static_cast<int32_t>(comm->backend->rank()) : -1;
}

CTL_EXPORT int32_t ctl_comm_size(const ctl_comm* comm) {
  return comm && comm->magic == kCommMagic ? static_cast<int32_t>(comm->backend->size()) : -1;
}

CTL_EXPORT ctl_status* ctl_comm_allreduce_async(ctl_comm* comm, ctl_tensor* tensor, ctl_comm_reduce_op op,
                                                const ctl_comm_call_options* options, ctl_comm_request** out_request) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_comm(comm));
    CTL_RETURN_IF_ERROR(check_data_tensor(tensor, "tensor", true));
    CTL_RETURN_IF_ERROR(check_op(op));
    ctl_comm_call call = base_call(CTL_COMM_CALL_ALLREDUCE);
    call.dtype = ctl_tensor_dtype(tensor);
    call.count = static_cast<uint64_t>(ctl_tensor_numel(tensor));
    call.op = op;
    return submit(comm, call, tensor, nullptr, options, out_request);
  });
}

CTL_EXPORT ctl_status* ctl_comm_broadcast_async(ctl_comm* comm, ctl_tensor* tensor, uint32_t root,
                                                const ctl_comm_call_options* options, ctl_comm_request** out_request) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_comm(comm));
    CTL_RETURN_IF_ERROR(check_data_tensor(tensor, "tensor", false));
    CTL_RETURN_IF_ERROR(check_rank(comm, root, "root"));
    ctl_comm_call call = base_call(CTL_COMM_CALL_BROADCAST);
    call.dtype = ctl_tensor_dtype(tensor);
    call.count = static_cast<uint64_t>(ctl_tensor_numel(tensor));
    call.root_or_peer = root;
    return submit(comm, call, tensor, nullptr, options, out_request);
  });
}

CTL_EXPORT ctl_status* ctl_comm_allgather_async(ctl_comm* comm, ctl_tensor* input, ctl_tensor* output,
                                                const ctl_comm_call_options* options, ctl_comm_request** out_request) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_comm(comm));
    CTL_RETURN_IF_ERROR(check_data_tensor(input, "input", false));
    CTL_RETURN_IF_ERROR(check_data_tensor(output, "output", false));
    CTL_CHECK_ARG(ctl_tensor_dtype(input) == ctl_tensor_dtype(output), "input is %s but output is %s",
                  ctl_dtype_name(ctl_tensor_dtype(input)), ctl_dtype_name(ctl_tensor_dtype(output)));
    const int64_t n = ctl_tensor_numel(input), ranks = comm->backend->size();
    CTL_CHECK_ARG(
        ctl_tensor_numel(output) == n * ranks, "output has %lld elements; allgather needs size (%lld) x input's %lld",
        static_cast<long long>(ctl_tensor_numel(output)), static_cast<long long>(ranks), static_cast<long long>(n));
    CTL_CHECK_ARG(input != output, "input and output are the same tensor");
    ctl_comm_call call = base_call(CTL_COMM_CALL_ALLGATHER);
    call.dtype = ctl_tensor_dtype(input);
    call.count = static_cast<uint64_t>(n);
    return submit(comm, call, input, output, options, out_request);
  });
}

CTL_EXPORT ctl_status* ctl_comm_reduce_scatter_async(ctl_comm* comm, ctl_tensor* input, ctl_tensor* output,
                                                     ctl_comm_reduce_op op, const ctl_comm_call_options* options,
                                                     ctl_comm_request** out_request) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_comm(comm));
    CTL_RETURN_IF_ERROR(check_data_tensor(input, "input", true));
    CTL_RETURN_IF_ERROR(check_data_tensor(output, "output", true));
    CTL_RETURN_IF_ERROR(check_op(op));
    CTL_CHECK_ARG(ctl_tensor_dtype(input) == ctl_tensor_dtype(output), "input is %s but output is %s",
                  ctl_dtype_name(ctl_tensor_dtype(input)), ctl_dtype_name(ctl_tensor_dtype(output)));
    const int64_t n = ctl_tensor_numel(output), ranks = comm->backend->size();
    CTL_CHECK_ARG(ctl_tensor_numel(input) == n * ranks,
                  "input has %lld elements; reduce_scatter needs size (%lld) x output's %lld",
                  static_cast<long long>(ctl_tensor_numel(input)), static_cast<long long>(ranks),
                  static_cast<long long>(n));
    CTL_CHECK_ARG(input != output, "input and output are the same tensor");
    ctl_comm_call call = base_call(CTL_COMM_CALL_REDUCE_SCATTER);
    call.dtype = ctl_tensor_dtype(input);
    call.count = static_cast<uint64_t>(n);
    call.op = op;
    return submit(comm, call, input, output, options, out_request);
  });
}

static ctl_status* point_to_point(ctl_comm* comm, ctl_tensor* tensor, uint32_t peer, uint32_t tag, bool send,
                                  const ctl_comm_call_options* options, ctl_comm_request** out_request) {
  CTL_RETURN_IF_ERROR(check_comm(comm));
  CTL_RETURN_IF_ERROR(check_data_tensor(tensor, "tensor", false));
  CTL_RETURN_IF_ERROR(check_rank(comm, peer, "peer"));
  CTL_CHECK_ARG(peer != comm->backend->rank(), "argument 'peer' is %u, this rank itself", peer);
  CTL_CHECK_ARG(tag < (1u << 30), "argument 'tag' is %u; tags are below 2^30", tag);
  ctl_comm_call call = base_call(send ? CTL_COMM_CALL_SEND : CTL_COMM_CALL_RECV);
  call.dtype = ctl_tensor_dtype(tensor);
  call.count = static_cast<uint64_t>(ctl_tensor_numel(tensor));
  call.root_or_peer = peer;
  call.tag = tag;
  return submit(comm, call, send ? tensor : nullptr, send ? nullptr : tensor, options, out_request);
}

CTL_EXPORT ctl_status* ctl_comm_send_async(ctl_comm* comm, ctl_tensor* tensor, uint32_t peer, uint32_t tag,
                                           const ctl_comm_call_options* options, ctl_comm_request** out_request) {
  return guard([&] { return point_to_point(comm, tensor, peer, tag, true, options, out_request); });
}

CTL_EXPORT ctl_status* ctl_comm_recv_async(ctl_comm* comm, ctl_tensor* tensor, uint32_t peer, uint32_t tag,
                                           const ctl_comm_call_options* options, ctl_comm_request** out_request) {
  return guard([&] { return point_to_point(comm, tensor, peer, tag, false, options, out_request); });
}

CTL_EXPORT ctl_status* ctl_comm_barrier_async(ctl_comm* comm, const ctl_comm_call_options* options,
                                              ctl_comm_request** out_request) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_comm(comm));
    ctl_comm_call call = base_call(CTL_COMM_CALL_BARRIER);
    call.dtype = CTL_DTYPE_U8;
    return submit(comm, call, nullptr, nullptr, options, out_request);
  });
}

CTL_EXPORT ctl_status* ctl_comm_request_wait(ctl_comm_request* request, uint32_t timeout_ms) {
  return guard([&]() -> ctl_status* {
    CTL_CHECK_ARG(request && request->magic == kRequestMagic, "argument 'request' is NULL or not a live request");
    return wait_request(request, timeout_ms);
  });
}

CTL_EXPORT ctl_status* ctl_comm_request_test(ctl_comm_request* request, bool* out_done) {
  return guard([&]() -> ctl_status* {
    CTL_CHECK_ARG(request && request->magic == kRequestMagic, "argument 'request' is NULL or not a live request");
    CTL_CHECK_ARG(out_done, "argument 'out_done' is NULL");
    std::lock_guard lock(request->state->mutex);
    *out_done = request->state->done;
    return nullptr;
  });
}

CTL_EXPORT void ctl_comm_request_release(ctl_comm_request* request) {
  if (!request || request->magic != kRequestMagic) return;
  request->magic = 0;
  delete request;
}

CTL_EXPORT ctl_status* ctl_comm_allreduce(ctl_comm* comm, ctl_tensor* tensor, ctl_comm_reduce_op op,
                                          const ctl_comm_call_options* options) {
  CTL_RETURN_IF_ERROR(check_op(op));  // before `op` is copied into the call below
  return blocking([&](ctl_comm_request** r) { return ctl_comm_allreduce_async(comm, tensor, op, options, r); });
}
CTL_EXPORT ctl_status* ctl_comm_broadcast(ctl_comm* comm, ctl_tensor* tensor, uint32_t root,
                                          const ctl_comm_call_options* options) {
  return blocking([&](ctl_comm_request** r) { return ctl_comm_broadcast_async(comm, tensor, root, options, r); });
}
CTL_EXPORT ctl_status* ctl_comm_allgather(ctl_comm* comm, ctl_tensor* input, ctl_tensor* output,
                                          const ctl_comm_call_options* options) {
  return blocking([&](ctl_comm_request** r) { return ctl_comm_allgather_async(comm, input, output, options, r); });
}
CTL_EXPORT ctl_status* ctl_comm_reduce_scatter(ctl_comm* comm, ctl_tensor* input, ctl_tensor* output,
                                               ctl_comm_reduce_op op, const ctl_comm_call_options* options) {
  CTL_RETURN_IF_ERROR(check_op(op));  // before `op` is copied into the call below
  return blocking(
      [&](ctl_comm_request** r) { return ctl_comm_reduce_scatter_async(comm, input, output, op, options, r); });
}
CTL_EXPORT ctl_status* ctl_comm_send(ctl_comm* comm, ctl_tensor* tensor, uint32_t peer, uint32_t tag,
                                     const ctl_comm_call_options* options) {
  return blocking([&](ctl_comm_request** r) { return ctl_comm_send_async(comm, tensor, peer, tag, options, r); });
}
CTL_EXPORT ctl_status* ctl_comm_recv(ctl_comm* comm, ctl_tensor* tensor, uint32_t peer, uint32_t tag,
                                     const ctl_comm_call_options* options) {
  return blocking([&](ctl_comm_request** r) { return ctl_comm_recv_async(comm, tensor, peer, tag, options, r); });
}
CTL_EXPORT ctl_status* ctl_comm_barrier(ctl_comm* comm, const ctl_comm_call_options* options) {
  return blocking([&](ctl_comm_request** r) { return ctl_comm_barrier_async(comm, options, r); });
}

CTL_EXPORT size_t ctl_runtime_comm_plugin_count(ctl_runtime* runtime) {
  if (!runtime || runtime->magic != kRuntimeMagic) return 0;
  try {
    return list_comm_plugins(runtime->logger).size();
  } catch (...) {
    return 0;
  }
}

CTL_EXPORT ctl_status* ctl_runtime_comm_plugin_info(ctl_runtime* runtime, size_t index, ctl_plugin_info* out_info) {
  return guard([&]() -> ctl_status* {
    CTL_RETURN_IF_ERROR(check_runtime(runtime, "runtime"));
    CTL_CHECK_ARG(out_info, "argument 'out_info' is NULL");
    CTL_CHECK_ARG(out_info->struct_size >= offsetof(ctl_plugin_info, next),
                  "out_info->struct_size is %zu; set it to CTL_PLUGIN_INFO_STRUCT_SIZE", out_info->struct_size);
    const auto plugins = list_comm_plugins(runtime->logger);
    if (index >= plugins.size()) {
      return make_status(CTL_STATUS_OUT_OF_RANGE, "argument 'index' is %zu but there are %zu communication plugins",
                         index, plugins.size());
    }
    // Records live for the whole process (plugins are never unloaded), so the strings stay valid.
    const CommPluginRecord& plugin = *plugins[index];
    ctl_plugin_info info{};
    info.struct_size = sizeof info;
    info.next = out_info->next;
    info.path = plugin.path.c_str();
    info.name = plugin.name.c_str();
    info.version = plugin.version.c_str();
    info.accepted = plugin.accepted;
    info.reason = plugin.reason.c_str();
    info.source = plugin.source.c_str();
    info.abi_major = plugin.abi_major;
    info.abi_minor = plugin.abi_minor;
    copy_out(&info, out_info);
    return nullptr;
  });
}

}  // extern "C"
