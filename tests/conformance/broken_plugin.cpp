// broken_plugin.cpp — deliberately broken device plugins, the conformance suite's own test.
//
// These are TEST plugins, never installed. Each one built from this file wraps the real CPU
// plugin (dlopened at query time from CTL_INNER_PLUGIN), forwards every entry to it, and
// injects exactly one defect, chosen at compile time by CTL_BROKEN_DEFECT (a string, see
// CMakeLists.txt here). Every other op and entry is the CPU plugin's, so a suite that passes
// the CPU plugin must fail each of these and name the op (or entry) at fault.
//
// None of the defects shows when a plugin is only checked against itself (the same op run
// twice, a result compared with one computed by the same plugin another way): each broken
// plugin is deterministic and self-consistent. Only an independent oracle or an outside
// observation finds them:
//   wrong-result      exp on f32: element [0, ...] of the output is 0.1% too large. Stable
//                     and repeatable; only the reference kernels show it.
//   ignores-strides   add: reads each input as if it were row-major contiguous, as a naive
//                     kernel would. Contiguous inputs are right; a permuted or sliced input
//                     checked against the reference shows it.
//   writes-past-end   mul: also writes one element just past the last element of output 0.
//                     The output itself is right; only guard bytes around it show it.
//   leaks             sub: one host allocation per call, never freed. Results are right;
//                     only the host allocator's live count shows it.
//   segfault          div on f32: a real SIGSEGV. The suite must survive it (a child
//                     process) and name the op.
//   hangs             sqrt: never returns. The suite needs a timeout per op.
//   accepts-invalid   op_execute and op_supports answer success, doing nothing, for op ids
//                     that catalyst.h does not define and for binary ops whose input dtypes
//                     differ. Only invalid calls with a known right answer (an error) show it.
//   needs-extra-sync  op_execute only queues the call (per stream) until stream_synchronize,
//                     event_record or stream_wait_event, while buffer transfers run at once:
//                     execute; read; synchronize reads stale data. Anything read after a
//                     synchronize is right, so only a read ordered behind an op without a
//                     synchronize in between shows it.
//   normal-error      random_normal: every f64 result 16u too large (u = 2^-53), within
//                     the 18u that OpenCL lets log, sqrt and cos add up to (NVIDIA's driver
//                     was seen this far off), which must pass; every f32 result 64u too
//                     large (u = 2^-24), past it, which must fail. f16 and bf16 are right.
//   partial           not broken but honest: reports the required dtypes (f32, i32, i64,
//                     bool) only, and answers
//                     UNSUPPORTED (op_supports and op_execute) outside neg, abs, exp, relu,
//                     add, sub, mul, maximum, eq, lt, sum, copy, fill. The suite must report
//                     the coverage, not failures.
// Defects of the ulp sweep (conformance/math_cases.cpp):
//   tanh-cancels      tanh on f32 with a contiguous input: (1 - e) / (1 + e), e = exp(-2|x|)
//                     in f32 below |x| = 0.4, as the CPU plugin's vector code had it: 0 for
//                     |x| <= 1e-8, 11% off at 1e-7, yet within the numeric cases' absolute
//                     floor (32u). Strided inputs stay right.
//   gelu-backward-erf-cancels  gelu_backward on f32 with dense inputs: dy (0.5 (1 + erf(x /
//                     sqrt 2)) + x phi(x)) in f32, the formula docs/ops.md once gave, whose
//                     1 + erf cancels for x < 0 (0 from x = -5.5, where the derivative is
//                     -2e-7). Within the numeric cases' bound, whose scale counts the 1;
//                     only the sweep, in ulps of the result, shows it. Strided inputs stay right.
// Defects of issue 20's further checks (harness, worker and tail cases):
//   writes-into-input maximum: after computing, flips the lowest bit of input 0's first
//                     element, as a kernel that used its input as scratch would. The output
//                     is right; only re-reading the inputs after the op shows it.
//   partial-large-output  every op on an output of more than 65536 dense elements leaves
//                     the last, ragged 4096-element chunk unwritten, as a thread split that
//                     rounds its chunk count down does. The 4096 x 4096 large cases divide
//                     evenly and pass; only odd large sizes (the large_tail cases) show it.
//   leaks-system-malloc  mul: each call takes 1 MiB from malloc (touched, so resident)
//                     and never frees it. The host table's count stays right; only the
//                     process's memory over repeated runs shows it.
//   softmax-no-max    softmax and log_softmax on f32, last axis, rows without ±inf or NaN:
//                     recomputed as exp(x) / sum(exp(x)) without subtracting the row's
//                     maximum. Right for logits of order 1 and for rows with infinities;
//                     only large finite logits show it.
//   reads-output      matmul on f32 with beta 0 adds 0 * (the output's old contents), as
//                     a GEMM that always reads C does. Harmless on a finite old value; only
//                     an output that starts as NaN shows it.
//   pow-exp-log       pow on f32, dense inputs: exp(y log x) in f32 for x > 0, the classic
//                     shortcut, whose error grows as |y log x| u (hundreds of ulp for large
//                     results). Within the numeric cases' bound for bases and exponents of
//                     order 1; only the ulp sweep's grid shows it.
//   norm-one-pass-variance  layer_norm on f32, f64 and f16, dense rows: the variance as
//                     E[x^2] - E[x]^2 in one pass, in the compute precision (f32 for f32
//                     and f16, f64 for f64), clamped at 0, as a fused kernel that wants a
//                     single read of the row does. Right to a few ulp for rows of order 1;
//                     only rows of a large mean and a small spread (large_rows) show it.
//   reuses-last-result  sigmoid on a dense output of 8 elements or more: when a call's
//                     views (dtypes, shapes, strides, offsets) are those of an earlier
//                     sigmoid call, that call's output is copied out again instead of
//                     computing, as a result cache keyed on the call's signature rather than
//                     its data would do. No two of the suite's sigmoid cases of that size
//                     share a signature, so each passes on its first run; only the judged
//                     rerun of a case with the same shapes and fresh values
//                     (conformance/worker.cpp) shows it.
// Defects of issue 32's checks (size thresholds, bit-identical reruns, plans keyed by less
// than the shape):
//   matmul-split-k-tail  matmul on every float dtype with K past 4096 and not a multiple of
//                     it: the products of the last, ragged part of K are dropped, as a
//                     split-K kernel that rounds its chunk count down does. Right at K <=
//                     4096 and at every multiple of 4096 (16384 included); only a case just
//                     past the threshold (K = 4097) shows it.
//   sum-order-varies  sum on f32, dense input and output: each call of a signature it has
//                     seen before starts each output's sum one term later than the call
//                     before it did, as an autotuner that tries a new split every time
//                     would. Every result is within the sum bound; only the judged rerun with
//                     the same inputs, compared bit for bit, shows it.
//   softmax-plan-by-count  softmax on f32, dense rows along the last axis: the row length
//                     is cached by the call's element count at its first call, and a later
//                     call of the same count takes the cached length, whatever its shape.
//                     Only a case that calls it again with another shape of the same count
//                     shows it.
// Defects of issue 33's normal form (the comment above ctl_op_call): each plugin is coded
// for the other reading of one answer, as a vendor who guessed it would be
// (conformance/normal_form_cases.cpp):
//   matmul-dense-batch  matmul: an operand with a broadcast batch axis (stride 0, size > 1)
//                     is walked at packed batch strides (M*K per batch of a), as by a plugin
//                     that takes a broadcast operand to arrive at its own lower rank and one
//                     at the output's rank to hold a matrix per batch. Reads past the
//                     operand's buffer give 0 (robust buffer access). Every matmul without a
//                     broadcast batch axis stays right.
//   norm-needs-full-output-count  layer_norm, rms_norm and their backward forms: a call with
//                     fewer outputs than the op's full count (3, 2, 3, 2) is refused with
//                     INVALID_ARGUMENT, as by a plugin that takes "output_count is always
//                     the full count, absent outputs are NULL entries" and checks it.
//   norm-outputs-unchecked  the same ops: every output below output_count is written with
//                     no NULL check (a real SIGSEGV on a NULL entry), as by a plugin that
//                     takes a smaller output_count to be the only way to leave one out.
//   trusts-attrs      not wrong about the normal form: reads the attribute struct of every
//                     op that has one with no NULL check (a real SIGSEGV on NULL), as the
//                     normal form allows for the core's calls. The suite must pass its
//                     null_attrs cases (the core fills what the user left NULL) and fail
//                     only the bad calls made directly with attrs NULL.
//
// The injected defects stay memory-safe inside the test process: ignores-strides keeps an
// input's strides when a contiguous read would leave its buffer, and writes-past-end writes
// only where the stray element still lies inside output 0's buffer (a suite sees it through
// guard bytes placed after the output in a larger buffer).
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <mutex>
#include <new>
#include <string_view>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "catalyst/sdk/half.hpp"
#include "catalyst/sdk/status.hpp"
#include "catalyst/sdk/view.hpp"
#include "catalyst_plugin.h"

#ifndef CTL_BROKEN_DEFECT
#error "CTL_BROKEN_DEFECT must name the defect, e.g. -DCTL_BROKEN_DEFECT=\"wrong-result\""
#endif
#ifndef CTL_INNER_PLUGIN
#error "CTL_INNER_PLUGIN must be the path of the real CPU plugin"
#endif

namespace {

namespace sdk = catalyst::sdk;

// ---- which defect ------------------------------------------------------------------------

enum class Defect {
  kUnknown,
  kWrongResult,
  kIgnoresStrides,
  kWritesPastEnd,
  kLeaks,
  kSegfault,
  kHangs,
  kAcceptsInvalid,
  kNeedsExtraSync,
  kNormalError,
  kPartial,
  // Defects of the ulp sweep (conformance/math_cases.cpp).
  kTanhCancels,
  kGeluBackwardErfCancels,
  // Defects of issue 20's further checks.
  kWritesIntoInput,
  kPartialLargeOutput,
  kLeaksSystemMalloc,
  kSoftmaxNoMax,
  kReadsOutput,
  kNormOnePassVariance,
  kPowExpLog,
  kReusesLastResult,
  // Defects of issue 32's checks.
  kMatmulSplitKTail,
  kSumOrderVaries,
  kSoftmaxPlanByCount,
  // Defects of issue 33's normal form.
  kMatmulDenseBatch,
  kNormNeedsFullOutputCount,
  kNormOutputsUnchecked,
  kTrustsAttrs,
};

constexpr std::string_view kDefectNames[] = {
    "",
    "wrong-result",
    "ignores-strides",
    "writes-past-end",
    "leaks",
    "segfault",
    "hangs",
    "accepts-invalid",
    "needs-extra-sync",
    "normal-error",
    "partial",
    // Defects of the ulp sweep (conformance/math_cases.cpp).
    "tanh-cancels",
    "gelu-backward-erf-cancels",
    // Defects of issue 20's further checks.
    "writes-into-input",
    "partial-large-output",
    "leaks-system-malloc",
    "softmax-no-max",
    "reads-output",
    "norm-one-pass-variance",
    "pow-exp-log",
    "reuses-last-result",
    // Defects of issue 32's checks.
    "matmul-split-k-tail",
    "sum-order-varies",
    "softmax-plan-by-count",
    // Defects of issue 33's normal form.
    "matmul-dense-batch",
    "norm-needs-full-output-count",
    "norm-outputs-unchecked",
    "trusts-attrs",
};

constexpr Defect defect_named(std::string_view name) {
  for (size_t i = 1; i < std::size(kDefectNames); ++i) {
    if (kDefectNames[i] == name) return static_cast<Defect>(i);
  }
  return Defect::kUnknown;
}

constexpr Defect kDefect = defect_named(CTL_BROKEN_DEFECT);
static_assert(kDefect != Defect::kUnknown, "CTL_BROKEN_DEFECT names no defect this file knows");
constexpr const char* kPluginName = "broken-" CTL_BROKEN_DEFECT;

// ---- the real plugin ---------------------------------------------------------------------

std::mutex g_query_mutex;
const ctl_plugin_api* g_inner = nullptr;  // the CPU plugin's table, set once
ctl_plugin_api g_api{};                   // ours: a copy of it with some entries replaced

// Closes the CPU plugin when this library is unloaded.
struct Library {
  void* handle = nullptr;
  ~Library() {
    if (handle) dlclose(handle);
  }
} g_library;

// ---- bookkeeping: which host, device and size belong to each handle ---------------------

struct Registry {
  std::mutex mutex;
  std::unordered_map<ctl_plugin_instance*, const ctl_host_api*> instance_hosts;
  std::unordered_map<ctl_plugin_device*, const ctl_host_api*> device_hosts;
  std::unordered_map<ctl_plugin_stream*, ctl_plugin_device*> stream_devices;
  std::unordered_map<ctl_plugin_buffer*, uint64_t> buffer_sizes;
};

Registry& registry() {
  static Registry instance;
  return instance;
}

ctl_plugin_device* device_of(ctl_plugin_stream* stream) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.stream_devices.find(stream);
  return it == r.stream_devices.end() ? nullptr : it->second;
}

const ctl_host_api* host_of(ctl_plugin_device* device) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.device_hosts.find(device);
  return it == r.device_hosts.end() ? nullptr : it->second;
}

const ctl_host_api* host_of(ctl_plugin_stream* stream) {
  ctl_plugin_device* device = device_of(stream);
  return device ? host_of(device) : nullptr;
}

// The size of a buffer this plugin allocated or wrapped; false when unknown.
bool buffer_size(ctl_plugin_buffer* buffer, uint64_t* out_size) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto it = r.buffer_sizes.find(buffer);
  if (it == r.buffer_sizes.end()) return false;
  *out_size = it->second;
  return true;
}

// ---- reading calls safely ----------------------------------------------------------------

// The raw value of an enum field, which may hold a value outside the enum.
template <typename E>
int64_t raw(const E& value) {
  std::underlying_type_t<E> r;
  std::memcpy(&r, &value, sizeof r);
  return static_cast<int64_t>(r);
}

bool call_ok(const ctl_op_call* call) {
  return call && call->struct_size >= CTL_OP_CALL_STRUCT_SIZE;
}

// The op id of a well-formed call header, else -1.
int64_t op_of(const ctl_op_call* call) {
  return call_ok(call) ? raw(call->op) : -1;
}

bool view_ok(const ctl_tensor_view* view) {
  return view && view->struct_size >= CTL_TENSOR_VIEW_STRUCT_SIZE && view->rank <= CTL_MAX_RANK;
}

const ctl_tensor_view* input_of(const ctl_op_call* call, uint32_t index) {
  if (!call_ok(call) || index >= call->input_count || !call->inputs) return nullptr;
  return view_ok(call->inputs[index]) ? call->inputs[index] : nullptr;
}

const ctl_tensor_view* output_of(const ctl_op_call* call, uint32_t index) {
  if (!call_ok(call) || index >= call->output_count || !call->outputs) return nullptr;
  return view_ok(call->outputs[index]) ? call->outputs[index] : nullptr;
}

size_t element_size(const ctl_tensor_view& view) {
  const int64_t dtype = raw(view.dtype);
  return dtype >= 0 && dtype < CTL_DTYPE_COUNT_ ? sdk::dtype_size(static_cast<ctl_dtype>(dtype)) : 0;
}

// Number of elements, or -1 for a negative or overflowing shape.
int64_t element_count(const ctl_tensor_view& view) {
  int64_t n = 1;
  for (uint32_t i = 0; i < view.rank; ++i) {
    if (view.shape[i] < 0 || __builtin_mul_overflow(n, view.shape[i], &n)) return -1;
  }
  return n;
}

// Waits for `stream`, then finds the host address of `view`'s buffer (the CPU device is
// host-visible). *out_base stays NULL when there is no way to get it.
ctl_status* host_base(ctl_plugin_stream* stream, const ctl_tensor_view& view, unsigned char** out_base) {
  *out_base = nullptr;
  ctl_plugin_device* device = device_of(stream);
  if (!device || !g_inner->buffer_host_pointer) return nullptr;
  CTL_SDK_RETURN_IF_ERROR(g_inner->stream_synchronize(stream));
  void* pointer = nullptr;
  CTL_SDK_RETURN_IF_ERROR(g_inner->buffer_host_pointer(device, view.buffer, &pointer));
  *out_base = static_cast<unsigned char*>(pointer);
  return nullptr;
}

// ---- forwarding entries that keep the bookkeeping ----------------------------------------

ctl_status* instance_create(const ctl_host_api* host, ctl_plugin_instance** out_instance) {
  ctl_status* status = g_inner->instance_create(host, out_instance);
  if (!status) {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    r.instance_hosts[*out_instance] = host;
  }
  return status;
}

void instance_destroy(ctl_plugin_instance* instance) {
  {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    auto it = r.instance_hosts.find(instance);
    if (it != r.instance_hosts.end()) {
      const ctl_host_api* host = it->second;
      std::erase_if(r.device_hosts, [host](const auto& entry) { return entry.second == host; });
      r.instance_hosts.erase(it);
    }
  }
  g_inner->instance_destroy(instance);
}

ctl_status* device_get(ctl_plugin_instance* instance, uint32_t index, ctl_plugin_device** out_device) {
  ctl_status* status = g_inner->device_get(instance, index, out_device);
  if (!status) {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    auto it = r.instance_hosts.find(instance);
    if (it != r.instance_hosts.end()) r.device_hosts[*out_device] = it->second;
  }
  return status;
}

ctl_status* buffer_allocate(ctl_plugin_device* device, uint64_t size, ctl_plugin_buffer** out_buffer) {
  ctl_status* status = g_inner->buffer_allocate(device, size, out_buffer);
  if (!status) {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    r.buffer_sizes[*out_buffer] = size;
  }
  return status;
}

ctl_status* buffer_wrap_host(ctl_plugin_device* device, void* pointer, uint64_t size, ctl_plugin_buffer** out_buffer) {
  ctl_status* status = g_inner->buffer_wrap_host(device, pointer, size, out_buffer);
  if (!status) {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    r.buffer_sizes[*out_buffer] = size;
  }
  return status;
}

void forget_buffer(ctl_plugin_buffer* buffer) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.buffer_sizes.erase(buffer);
}

void buffer_free(ctl_plugin_device* device, ctl_plugin_buffer* buffer);  // below: defect 8 hooks into it

ctl_status* stream_create(ctl_plugin_device* device, ctl_plugin_stream** out_stream) {
  ctl_status* status = g_inner->stream_create(device, out_stream);
  if (!status) {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    r.stream_devices[*out_stream] = device;
  }
  return status;
}

void drop_pending(ctl_plugin_stream* stream);  // below: defect 8

void stream_destroy(ctl_plugin_stream* stream) {
  if constexpr (kDefect == Defect::kNeedsExtraSync) drop_pending(stream);
  {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    r.stream_devices.erase(stream);
  }
  g_inner->stream_destroy(stream);
}

// ---- 1 wrong-result: exp on f32 is 0.1% high at element [0, ...] -------------------------

ctl_status* execute_wrong_result(ctl_plugin_stream* stream, const ctl_op_call* call) {
  CTL_SDK_RETURN_IF_ERROR(g_inner->op_execute(stream, call));
  if (op_of(call) != CTL_OP_EXP) return nullptr;
  const ctl_tensor_view* out = output_of(call, 0);
  if (!out || raw(out->dtype) != CTL_DTYPE_F32 || element_count(*out) < 1) return nullptr;
  unsigned char* base = nullptr;
  CTL_SDK_RETURN_IF_ERROR(host_base(stream, *out, &base));
  if (!base) return nullptr;
  float value;
  std::memcpy(&value, base + out->byte_offset, sizeof value);
  value *= 1.001f;
  std::memcpy(base + out->byte_offset, &value, sizeof value);
  return nullptr;
}

// ---- 2 ignores-strides: add reads its inputs as row-major contiguous ---------------------

// True when reading `view` row-major contiguous from its byte_offset stays in its buffer.
bool contiguous_read_fits(const ctl_tensor_view& view) {
  const size_t size = element_size(view);
  const int64_t count = element_count(view);
  uint64_t buffer_bytes = 0;
  if (size == 0 || count < 0 || !buffer_size(view.buffer, &buffer_bytes)) return false;
  const uint64_t bytes = static_cast<uint64_t>(count) * size;
  return view.byte_offset <= buffer_bytes && bytes <= buffer_bytes - view.byte_offset;
}

ctl_status* execute_ignores_strides(ctl_plugin_stream* stream, const ctl_op_call* call) {
  if (op_of(call) != CTL_OP_ADD || call->input_count != 2 || !call->inputs) return g_inner->op_execute(stream, call);
  ctl_tensor_view views[2] = {};
  const ctl_tensor_view* inputs[2] = {};
  for (uint32_t i = 0; i < 2; ++i) {
    inputs[i] = call->inputs[i];
    if (!view_ok(call->inputs[i])) continue;  // malformed: the CPU plugin rejects it
    std::memcpy(&views[i], call->inputs[i], sizeof views[i]);
    views[i].struct_size = sizeof views[i];
    if (contiguous_read_fits(views[i])) {
      int64_t stride = 1;
      for (uint32_t axis = views[i].rank; axis-- > 0;) {
        views[i].strides[axis] = stride;
        stride *= views[i].shape[axis];
      }
    }
    inputs[i] = &views[i];
  }
  ctl_op_call copy = *call;
  copy.struct_size = sizeof copy;
  copy.inputs = inputs;
  return g_inner->op_execute(stream, &copy);
}

// ---- 3 writes-past-end: mul writes one element past output 0 -----------------------------

ctl_status* execute_writes_past_end(ctl_plugin_stream* stream, const ctl_op_call* call) {
  CTL_SDK_RETURN_IF_ERROR(g_inner->op_execute(stream, call));
  if (op_of(call) != CTL_OP_MUL) return nullptr;
  const ctl_tensor_view* out = output_of(call, 0);
  if (!out) return nullptr;
  const size_t size = element_size(*out);
  if (size == 0 || element_count(*out) < 1) return nullptr;
  int64_t last = 0;  // element offset of the last element
  for (uint32_t i = 0; i < out->rank; ++i) {
    if (out->strides[i] < 0) return nullptr;
    last += (out->shape[i] - 1) * out->strides[i];
  }
  const uint64_t past = out->byte_offset + static_cast<uint64_t>(last + 1) * size;
  uint64_t buffer_bytes = 0;
  // Inside the buffer only: past its end this would corrupt the test process's heap.
  if (!buffer_size(out->buffer, &buffer_bytes) || past > buffer_bytes || size > buffer_bytes - past) return nullptr;
  unsigned char* base = nullptr;
  CTL_SDK_RETURN_IF_ERROR(host_base(stream, *out, &base));
  if (!base) return nullptr;
  for (size_t k = 0; k < size; ++k) base[past + k] = base[out->byte_offset + k] ^ 0x5A;
  return nullptr;
}

// ---- 4 leaks: sub allocates host memory it never frees -----------------------------------

ctl_status* execute_leaks(ctl_plugin_stream* stream, const ctl_op_call* call) {
  if (op_of(call) == CTL_OP_SUB) {
    if (const ctl_host_api* host = host_of(stream)) (void)host->alloc(host->context, 256, 64);
  }
  return g_inner->op_execute(stream, call);
}

// ---- 5 segfault: div on f32 dies of SIGSEGV ----------------------------------------------

// An address in the never-mapped first page. Not NULL itself, so that UBSan does not end
// the process with a diagnostic first; volatile, so that the compiler cannot know it.
volatile uintptr_t g_bad_address = 16;

// A real invalid write, as a buggy kernel would make: the process dies of SIGSEGV (in an
// AddressSanitizer build, ASan's handler reports it and exits instead). Handlers the
// process installed are left alone.
[[noreturn]] void crash() {
  *reinterpret_cast<volatile int*>(g_bad_address) = 1;
  std::raise(SIGSEGV);  // should a handler have returned
  std::abort();
}

ctl_status* execute_segfault(ctl_plugin_stream* stream, const ctl_op_call* call) {
  if (op_of(call) == CTL_OP_DIV) {
    const ctl_tensor_view* out = output_of(call, 0);
    if (out && raw(out->dtype) == CTL_DTYPE_F32) crash();
  }
  return g_inner->op_execute(stream, call);
}

// ---- 6 hangs: sqrt never returns ----------------------------------------------------------

ctl_status* execute_hangs(ctl_plugin_stream* stream, const ctl_op_call* call) {
  if (op_of(call) == CTL_OP_SQRT) {
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  return g_inner->op_execute(stream, call);
}

// ---- 7 accepts-invalid: unknown ops and mismatched binary dtypes "succeed" ---------------

bool known_op(int64_t op) {
  return (op >= CTL_OP_NEG && op <= CTL_OP_RECIPROCAL) || (op >= CTL_OP_ADD && op <= CTL_OP_WHERE) ||
         (op >= CTL_OP_SUM && op <= CTL_OP_LOGSUMEXP) || op == CTL_OP_MATMUL ||
         (op >= CTL_OP_SOFTMAX && op <= CTL_OP_RMS_NORM) || (op >= CTL_OP_COPY && op <= CTL_OP_RANDOM_NORMAL);
}

// True for a call the real plugin would refuse that this one waves through.
bool wrongly_accepted(const ctl_op_call* call) {
  if (!call_ok(call)) return false;
  const int64_t op = op_of(call);
  if (!known_op(op)) return true;
  if (op >= CTL_OP_ADD && op <= CTL_OP_GE) {  // binary ops: both inputs share one dtype
    const ctl_tensor_view* a = input_of(call, 0);
    const ctl_tensor_view* b = input_of(call, 1);
    return a && b && raw(a->dtype) != raw(b->dtype);
  }
  return false;
}

ctl_status* execute_accepts_invalid(ctl_plugin_stream* stream, const ctl_op_call* call) {
  if (wrongly_accepted(call)) return nullptr;
  return g_inner->op_execute(stream, call);
}

ctl_status* supports_accepts_invalid(ctl_plugin_device* device, const ctl_op_call* call) {
  if (wrongly_accepted(call)) return nullptr;
  return g_inner->op_supports ? g_inner->op_supports(device, call) : nullptr;
}

// ---- 8 needs-extra-sync: ops wait for a synchronize, transfers do not --------------------

// Every attribute struct of catalyst.h; a pending call keeps its own copy.
union AttrStorage {
  size_t struct_size;
  ctl_reduce_attrs reduce;
  ctl_matmul_attrs matmul;
  ctl_axis_attrs axis;
  ctl_norm_attrs norm;
  ctl_cast_attrs cast;
  ctl_fill_attrs fill;
  ctl_arange_attrs arange;
  ctl_random_attrs random;
};

// Size of the op's attribute struct; 0 for ops without one.
size_t attrs_size(int64_t op) {
  switch (op) {
    case CTL_OP_SUM:
    case CTL_OP_MEAN:
    case CTL_OP_MAX:
    case CTL_OP_MIN:
    case CTL_OP_ARGMAX:
    case CTL_OP_ARGMIN:
    case CTL_OP_LOGSUMEXP:
      return sizeof(ctl_reduce_attrs);
    case CTL_OP_MATMUL:
      return sizeof(ctl_matmul_attrs);
    case CTL_OP_SOFTMAX:
    case CTL_OP_LOG_SOFTMAX:
    case CTL_OP_CONCAT:
    case CTL_OP_GATHER:
    case CTL_OP_SCATTER_ADD:
      return sizeof(ctl_axis_attrs);
    case CTL_OP_LAYER_NORM:
    case CTL_OP_RMS_NORM:
      return sizeof(ctl_norm_attrs);
    case CTL_OP_CAST:
      return sizeof(ctl_cast_attrs);
    case CTL_OP_FILL:
      return sizeof(ctl_fill_attrs);
    case CTL_OP_ARANGE:
      return sizeof(ctl_arange_attrs);
    case CTL_OP_RANDOM_UNIFORM:
    case CTL_OP_RANDOM_NORMAL:
      return sizeof(ctl_random_attrs);
    default:
      return 0;
  }
}

// A deep copy of an op call; it does not move once made (the call points into it).
struct PendingOp {
  std::vector<ctl_tensor_view> views;  // inputs, then outputs
  std::vector<const ctl_tensor_view*> inputs;
  std::vector<const ctl_tensor_view*> outputs;
  AttrStorage attrs{};
  ctl_op_call call{};

  bool uses(const ctl_plugin_buffer* buffer) const {
    return std::any_of(views.begin(), views.end(), [buffer](const ctl_tensor_view& v) { return v.buffer == buffer; });
  }
};

// A view copied the way a receiver copies a struct: no more than both sides know.
void copy_view(const ctl_tensor_view* source, ctl_tensor_view* out, const ctl_tensor_view** out_pointer) {
  if (!source) {
    *out_pointer = nullptr;
    return;
  }
  const size_t size = std::min(source->struct_size, sizeof *out);
  *out = ctl_tensor_view{};
  std::memcpy(out, source, std::max(size, sizeof(size_t)));
  out->struct_size = size;
  *out_pointer = out;
}

std::unique_ptr<PendingOp> deep_copy(const ctl_op_call* call) {
  auto op = std::make_unique<PendingOp>();
  op->views.resize(static_cast<size_t>(call->input_count) + call->output_count);
  op->inputs.resize(call->input_count);
  op->outputs.resize(call->output_count);
  for (uint32_t i = 0; i < call->input_count; ++i) copy_view(call->inputs[i], &op->views[i], &op->inputs[i]);
  for (uint32_t i = 0; i < call->output_count; ++i) {
    copy_view(call->outputs[i], &op->views[call->input_count + i], &op->outputs[i]);
  }
  op->call.struct_size = sizeof op->call;
  op->call.next = nullptr;  // ABI 1.0 defines no extension of ctl_op_call
  op->call.op = call->op;
  op->call.input_count = call->input_count;
  op->call.inputs = op->inputs.data();
  op->call.output_count = call->output_count;
  op->call.outputs = op->outputs.data();
  const size_t known = attrs_size(raw(call->op));
  if (call->attrs && known) {
    size_t given;
    std::memcpy(&given, call->attrs, sizeof given);
    const size_t size = std::min(given, known);
    std::memcpy(&op->attrs, call->attrs, std::max(size, sizeof(size_t)));
    op->attrs.struct_size = size;
    op->call.attrs = &op->attrs;
  }
  return op;
}

struct PendingState {
  std::mutex mutex;  // guards the maps
  std::unordered_map<ctl_plugin_stream*, std::vector<std::unique_ptr<PendingOp>>> ops;
  // An error from running a stream's ops outside a synchronize (in buffer_free), returned
  // by its next synchronize.
  std::unordered_map<ctl_plugin_stream*, ctl_status*> errors;
  std::mutex run_mutex;  // one flush at a time, so that a stream's ops run in order
};

PendingState& pending() {
  static PendingState instance;
  return instance;
}

void drop_pending(ctl_plugin_stream* stream) {
  PendingState& p = pending();
  std::lock_guard lock(p.mutex);
  p.ops.erase(stream);
  // A status stashed here can no longer be handed back; the host table cannot free it.
  p.errors.erase(stream);
}

// Runs the stream's queued ops in order; stops at, and returns, the first error (the
// remaining ops are dropped, as a failed device would).
ctl_status* flush(ctl_plugin_stream* stream) {
  PendingState& p = pending();
  std::lock_guard run_lock(p.run_mutex);
  std::vector<std::unique_ptr<PendingOp>> ops;
  {
    std::lock_guard lock(p.mutex);
    auto it = p.ops.find(stream);
    if (it != p.ops.end()) ops.swap(it->second);
  }
  for (const auto& op : ops) CTL_SDK_RETURN_IF_ERROR(g_inner->op_execute(stream, &op->call));
  return nullptr;
}

ctl_status* execute_needs_extra_sync(ctl_plugin_stream* stream, const ctl_op_call* call) {
  // What cannot be copied safely, the real plugin answers at once (with an error).
  if (!call_ok(call) || (call->input_count && !call->inputs) || (call->output_count && !call->outputs)) {
    return g_inner->op_execute(stream, call);
  }
  // Report at once what the real plugin's capability check would have refused.
  ctl_plugin_device* device = device_of(stream);
  if (device && g_inner->op_supports) CTL_SDK_RETURN_IF_ERROR(g_inner->op_supports(device, call));
  std::unique_ptr<PendingOp> op;
  try {
    op = deep_copy(call);
  } catch (const std::bad_alloc&) {
    const ctl_host_api* host = host_of(stream);
    if (!host) return g_inner->op_execute(stream, call);
    return sdk::make_status(host, CTL_STATUS_OUT_OF_MEMORY, "%s: out of memory queueing an op", kPluginName);
  }
  PendingState& p = pending();
  std::lock_guard lock(p.mutex);
  p.ops[stream].push_back(std::move(op));
  return nullptr;
}

ctl_status* synchronize_needs_extra_sync(ctl_plugin_stream* stream) {
  ctl_status* stashed = nullptr;
  {
    PendingState& p = pending();
    std::lock_guard lock(p.mutex);
    auto it = p.errors.find(stream);
    if (it != p.errors.end()) {
      stashed = it->second;
      p.errors.erase(it);
    }
  }
  if (stashed) {
    drop_pending(stream);
    return stashed;
  }
  CTL_SDK_RETURN_IF_ERROR(flush(stream));
  return g_inner->stream_synchronize(stream);
}

ctl_status* event_record_needs_extra_sync(ctl_plugin_event* event, ctl_plugin_stream* stream) {
  CTL_SDK_RETURN_IF_ERROR(flush(stream));
  return g_inner->event_record(event, stream);
}

// The recording stream was flushed by event_record, so the event covers its ops.
ctl_status* stream_wait_event_needs_extra_sync(ctl_plugin_stream* stream, ctl_plugin_event* event) {
  CTL_SDK_RETURN_IF_ERROR(flush(stream));
  return g_inner->stream_wait_event(stream, event);
}

// A buffer may be freed while ops that use it are queued (the core frees without waiting):
// run those streams' ops first so that nothing touches freed memory.
[[maybe_unused]] void flush_users_of(ctl_plugin_device* device, ctl_plugin_buffer* buffer) {
  std::vector<ctl_plugin_stream*> streams;
  {
    PendingState& p = pending();
    std::lock_guard lock(p.mutex);
    for (const auto& [stream, ops] : p.ops) {
      if (std::any_of(ops.begin(), ops.end(), [buffer](const auto& op) { return op->uses(buffer); })) {
        streams.push_back(stream);
      }
    }
  }
  for (ctl_plugin_stream* stream : streams) {
    if (device_of(stream) != device) continue;
    if (ctl_status* status = flush(stream)) {
      PendingState& p = pending();
      std::lock_guard lock(p.mutex);
      p.errors.emplace(stream, status);  // a second error before a synchronize is lost: the first wins
    }
  }
}

void buffer_free(ctl_plugin_device* device, ctl_plugin_buffer* buffer) {
  if constexpr (kDefect == Defect::kNeedsExtraSync) flush_users_of(device, buffer);
  forget_buffer(buffer);
  g_inner->buffer_free(device, buffer);
}

// ---- 9 normal-error: random_normal within OpenCL's libm error in f64, past it in f32 ---

// Multiplies every element of `view` (strides in elements) by `factor`.
template <typename T>
void scale_elements(unsigned char* base, const ctl_tensor_view& view, T factor) {
  const int64_t count = element_count(view);
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i, offset = 0;
    for (uint32_t axis = view.rank; axis-- > 0;) {
      offset += rest % view.shape[axis] * view.strides[axis];
      rest /= view.shape[axis];
    }
    unsigned char* at = base + view.byte_offset + offset * static_cast<int64_t>(sizeof(T));
    T value;
    std::memcpy(&value, at, sizeof value);
    value *= factor;
    std::memcpy(at, &value, sizeof value);
  }
}

ctl_status* execute_normal_error(ctl_plugin_stream* stream, const ctl_op_call* call) {
  CTL_SDK_RETURN_IF_ERROR(g_inner->op_execute(stream, call));
  if (op_of(call) != CTL_OP_RANDOM_NORMAL) return nullptr;
  const ctl_tensor_view* out = output_of(call, 0);
  if (!out || element_count(*out) < 1) return nullptr;
  const int64_t dtype = raw(out->dtype);
  if (dtype != CTL_DTYPE_F64 && dtype != CTL_DTYPE_F32) return nullptr;
  unsigned char* base = nullptr;
  CTL_SDK_RETURN_IF_ERROR(host_base(stream, *out, &base));
  if (!base) return nullptr;
  if (dtype == CTL_DTYPE_F64) {
    scale_elements(base, *out, 1.0 + 16 * 0x1.0p-53);
  } else {
    scale_elements(base, *out, 1.0f + 64 * 0x1.0p-24f);
  }
  return nullptr;
}

// ---- 10 partial: the required dtypes, and a small op set, honestly reported ------------

constexpr uint32_t kPartialDtypes = CTL_DTYPE_BIT(CTL_DTYPE_F32) | CTL_DTYPE_BIT(CTL_DTYPE_I32) |
                                    CTL_DTYPE_BIT(CTL_DTYPE_I64) | CTL_DTYPE_BIT(CTL_DTYPE_BOOL);
constexpr ctl_op_id kPartialOps[] = {CTL_OP_NEG, CTL_OP_ABS,  CTL_OP_EXP,     CTL_OP_RELU, CTL_OP_ADD,
                                     CTL_OP_SUB, CTL_OP_MUL,  CTL_OP_MAXIMUM, CTL_OP_EQ,   CTL_OP_LT,
                                     CTL_OP_SUM, CTL_OP_COPY, CTL_OP_FILL};
constexpr const char* kPartialOpList = "neg, abs, exp, relu, add, sub, mul, maximum, eq, lt, sum, copy, fill";

const char* dtype_name(int64_t dtype) {
  static constexpr const char* kNames[] = {"f32", "f64", "f16", "bf16", "i8", "u8", "i32", "i64", "bool"};
  return dtype >= 0 && dtype < CTL_DTYPE_COUNT_ ? kNames[dtype] : "unknown";
}

// NULL when this plugin claims the call; else why not. Dtypes are those of the inputs (of
// output 0 for fill, which has none): comparisons still produce bool.
ctl_status* partial_check(const ctl_host_api* host, const ctl_op_call* call) {
  if (!call_ok(call)) return nullptr;  // malformed: the real plugin says so
  const int64_t op = op_of(call);
  if (std::find(std::begin(kPartialOps), std::end(kPartialOps), op) == std::end(kPartialOps)) {
    return sdk::make_status(host, CTL_STATUS_UNSUPPORTED,
                            "%s: op id %lld is not implemented (this plugin runs %s only)", kPluginName,
                            static_cast<long long>(op), kPartialOpList);
  }
  auto refuse_dtype = [&](const ctl_tensor_view* view, const char* which, uint32_t index) -> ctl_status* {
    const int64_t dtype = view ? raw(view->dtype) : int64_t{CTL_DTYPE_F32};
    if (dtype >= 0 && dtype < CTL_DTYPE_COUNT_ && (kPartialDtypes & CTL_DTYPE_BIT(dtype))) return nullptr;
    return sdk::make_status(host, CTL_STATUS_UNSUPPORTED,
                            "%s: %s[%u] has dtype %s; this plugin computes in f32, i32, i64 and bool only", kPluginName,
                            which, index, dtype_name(dtype));
  };
  for (uint32_t i = 0; i < call->input_count && call->inputs; ++i) {
    CTL_SDK_RETURN_IF_ERROR(refuse_dtype(input_of(call, i), "inputs", i));
  }
  if (op == CTL_OP_FILL) CTL_SDK_RETURN_IF_ERROR(refuse_dtype(output_of(call, 0), "outputs", 0));
  return nullptr;
}

ctl_status* supports_partial(ctl_plugin_device* device, const ctl_op_call* call) {
  if (const ctl_host_api* host = host_of(device)) CTL_SDK_RETURN_IF_ERROR(partial_check(host, call));
  return g_inner->op_supports ? g_inner->op_supports(device, call) : nullptr;
}

ctl_status* execute_partial(ctl_plugin_stream* stream, const ctl_op_call* call) {
  if (const ctl_host_api* host = host_of(stream)) CTL_SDK_RETURN_IF_ERROR(partial_check(host, call));
  return g_inner->op_execute(stream, call);
}

ctl_status* device_properties_partial(ctl_plugin_device* device, ctl_plugin_device_properties* out) {
  CTL_SDK_RETURN_IF_ERROR(g_inner->device_properties(device, out));
  if (out->struct_size >= offsetof(ctl_plugin_device_properties, dtype_mask) + sizeof out->dtype_mask) {
    out->dtype_mask = kPartialDtypes;
  }
  return nullptr;
}

// ---- ulp sweep defects (conformance/math_cases.cpp) ---------------------------------------

// True when `view` is dense in row-major order.
bool row_major_dense(const ctl_tensor_view& view) {
  int64_t expected = 1;
  for (uint32_t i = view.rank; i-- > 0;) {
    if (view.shape[i] != 1 && view.strides[i] != expected) return false;
    expected *= view.shape[i];
  }
  return true;
}

// tanh-cancels: below |x| = 0.4, contiguous f32 tanh is recomputed in the cancelling form.
ctl_status* execute_tanh_cancels(ctl_plugin_stream* stream, const ctl_op_call* call) {
  CTL_SDK_RETURN_IF_ERROR(g_inner->op_execute(stream, call));
  if (op_of(call) != CTL_OP_TANH || call->input_count != 1 || !call->inputs || !view_ok(call->inputs[0])) {
    return nullptr;
  }
  const ctl_tensor_view& x = *call->inputs[0];
  const ctl_tensor_view* y = output_of(call, 0);
  if (!y || raw(x.dtype) != CTL_DTYPE_F32 || raw(y->dtype) != CTL_DTYPE_F32 || !row_major_dense(x) ||
      !row_major_dense(*y)) {
    return nullptr;
  }
  unsigned char *xb = nullptr, *yb = nullptr;
  CTL_SDK_RETURN_IF_ERROR(host_base(stream, x, &xb));
  CTL_SDK_RETURN_IF_ERROR(host_base(stream, *y, &yb));
  if (!xb || !yb) return nullptr;
  for (int64_t i = 0, n = element_count(*y); i < n; ++i) {
    float v, r;
    std::memcpy(&v, xb + x.byte_offset + static_cast<uint64_t>(i) * 4, 4);
    if (!(std::fabs(v) < 0.4f)) continue;
    const float e = std::exp(-2.0f * std::fabs(v));
    r = std::copysign((1.0f - e) / (1.0f + e), v);
    std::memcpy(yb + y->byte_offset + static_cast<uint64_t>(i) * 4, &r, 4);
  }
  return nullptr;
}

// gelu-backward-erf-cancels: dense f32 gelu_backward recomputed with 1 + erf, in f32.
ctl_status* execute_gelu_backward_erf_cancels(ctl_plugin_stream* stream, const ctl_op_call* call) {
  CTL_SDK_RETURN_IF_ERROR(g_inner->op_execute(stream, call));
  if (op_of(call) != CTL_OP_GELU_BACKWARD || call->input_count != 2 || !call->inputs || !view_ok(call->inputs[0]) ||
      !view_ok(call->inputs[1])) {
    return nullptr;
  }
  const ctl_tensor_view& dy = *call->inputs[0];
  const ctl_tensor_view& x = *call->inputs[1];
  const ctl_tensor_view* dx = output_of(call, 0);
  if (!dx || raw(x.dtype) != CTL_DTYPE_F32 || raw(dy.dtype) != CTL_DTYPE_F32 || raw(dx->dtype) != CTL_DTYPE_F32 ||
      !row_major_dense(x) || !row_major_dense(dy) || !row_major_dense(*dx)) {
    return nullptr;
  }
  unsigned char *xb = nullptr, *dyb = nullptr, *dxb = nullptr;
  CTL_SDK_RETURN_IF_ERROR(host_base(stream, x, &xb));
  CTL_SDK_RETURN_IF_ERROR(host_base(stream, dy, &dyb));
  CTL_SDK_RETURN_IF_ERROR(host_base(stream, *dx, &dxb));
  if (!xb || !dyb || !dxb) return nullptr;
  for (int64_t i = 0, n = element_count(*dx); i < n; ++i) {
    float v, g;
    std::memcpy(&v, xb + x.byte_offset + static_cast<uint64_t>(i) * 4, 4);
    std::memcpy(&g, dyb + dy.byte_offset + static_cast<uint64_t>(i) * 4, 4);
    const float cdf = 0.5f * (1.0f + std::erf(v * 0.70710678f));
    const float r = g * (cdf + v * std::exp(-0.5f * v * v) * 0.39894228f);
    std::memcpy(dxb + dx->byte_offset + static_cast<uint64_t>(i) * 4, &r, 4);
  }
  return nullptr;
}

// ---- issue 20's further checks ---------------------------------------------------------

// writes-into-input: maximum flips the lowest bit of input 0's first element.
ctl_status* execute_writes_into_input(ctl_plugin_stream* stream, const ctl_op_call* call) {
  CTL_SDK_RETURN_IF_ERROR(g_inner->op_execute(stream, call));
  if (op_of(call) != CTL_OP_MAXIMUM) return nullptr;
  const ctl_tensor_view* x = input_of(call, 0);
  if (!x || element_count(*x) < 1 || element_size(*x) == 0) return nullptr;
  unsigned char* base = nullptr;
  CTL_SDK_RETURN_IF_ERROR(host_base(stream, *x, &base));
  if (base) base[x->byte_offset] ^= 1;  // little-endian: the lowest bit of the element
  return nullptr;
}

// partial-large-output: the ragged last chunk of a large dense output 0 is left as it was.
ctl_status* execute_partial_large_output(ctl_plugin_stream* stream, const ctl_op_call* call) {
  constexpr int64_t kChunk = 4096, kLargeFrom = 65536;
  const ctl_tensor_view* out = output_of(call, 0);
  const int64_t count = out ? element_count(*out) : -1;
  const size_t size = out ? element_size(*out) : 0;
  if (!out || size == 0 || count <= kLargeFrom || count % kChunk == 0 || !row_major_dense(*out)) {
    return g_inner->op_execute(stream, call);
  }
  unsigned char* base = nullptr;
  CTL_SDK_RETURN_IF_ERROR(host_base(stream, *out, &base));
  if (!base) return g_inner->op_execute(stream, call);
  const uint64_t from = out->byte_offset + static_cast<uint64_t>(count / kChunk * kChunk) * size;
  const uint64_t to = out->byte_offset + static_cast<uint64_t>(count) * size;
  std::vector<unsigned char> kept(base + from, base + to);
  CTL_SDK_RETURN_IF_ERROR(g_inner->op_execute(stream, call));
  CTL_SDK_RETURN_IF_ERROR(g_inner->stream_synchronize(stream));
  std::memcpy(base + from, kept.data(), kept.size());
  return nullptr;
}

// leaks-system-malloc: mul takes 1 MiB from malloc per call and keeps it.
std::vector<void*> g_taken;  // reachable, so that the compiler keeps the allocations
std::mutex g_taken_mutex;

ctl_status* execute_leaks_system_malloc(ctl_plugin_stream* stream, const ctl_op_call* call) {
  if (op_of(call) == CTL_OP_MUL) {
    constexpr size_t kBytes = size_t{1} << 20;
    if (void* p = std::malloc(kBytes)) {
      std::memset(p, 0x3C, kBytes);
      std::lock_guard lock(g_taken_mutex);
      g_taken.push_back(p);
    }
  }
  return g_inner->op_execute(stream, call);
}

// softmax-no-max: f32 softmax and log_softmax along the last axis, on dense rows without
// ±inf or NaN, recomputed without subtracting the row's maximum.
ctl_status* execute_softmax_no_max(ctl_plugin_stream* stream, const ctl_op_call* call) {
  CTL_SDK_RETURN_IF_ERROR(g_inner->op_execute(stream, call));
  const int64_t op = op_of(call);
  if (op != CTL_OP_SOFTMAX && op != CTL_OP_LOG_SOFTMAX) return nullptr;
  const ctl_tensor_view* x = input_of(call, 0);
  const ctl_tensor_view* y = output_of(call, 0);
  if (!x || !y || raw(x->dtype) != CTL_DTYPE_F32 || raw(y->dtype) != CTL_DTYPE_F32 || x->rank < 1 ||
      !row_major_dense(*x) || !row_major_dense(*y) || element_count(*x) < 1) {
    return nullptr;
  }
  int32_t axis = -1;
  if (call->attrs) std::memcpy(&axis, static_cast<const unsigned char*>(call->attrs) + sizeof(size_t), sizeof axis);
  if (axis != -1 && axis != static_cast<int32_t>(x->rank) - 1) return nullptr;
  unsigned char *xb = nullptr, *yb = nullptr;
  CTL_SDK_RETURN_IF_ERROR(host_base(stream, *x, &xb));
  CTL_SDK_RETURN_IF_ERROR(host_base(stream, *y, &yb));
  if (!xb || !yb) return nullptr;
  const int64_t n = x->shape[x->rank - 1], rows = element_count(*x) / n;
  std::vector<float> row(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(row.data(), xb + x->byte_offset + static_cast<uint64_t>(r * n) * 4, static_cast<size_t>(n) * 4);
    if (!std::all_of(row.begin(), row.end(), [](float v) { return std::isfinite(v); })) continue;
    float sum = 0;
    for (float v : row) sum += std::exp(v);
    for (float& v : row) v = op == CTL_OP_SOFTMAX ? std::exp(v) / sum : v - std::log(sum);
    std::memcpy(yb + y->byte_offset + static_cast<uint64_t>(r * n) * 4, row.data(), static_cast<size_t>(n) * 4);
  }
  return nullptr;
}

// reads-output: f32 matmul with beta 0 adds 0 * the output's old contents.
ctl_status* execute_reads_output(ctl_plugin_stream* stream, const ctl_op_call* call) {
  const ctl_tensor_view* out = output_of(call, 0);
  double beta = 0;
  if (op_of(call) == CTL_OP_MATMUL && call->attrs) {
    ctl_matmul_attrs attrs{};
    std::memcpy(&attrs, call->attrs, std::min(sizeof attrs, *static_cast<const size_t*>(call->attrs)));
    beta = attrs.beta;
  }
  if (op_of(call) != CTL_OP_MATMUL || beta != 0 || !out || raw(out->dtype) != CTL_DTYPE_F32 ||
      element_count(*out) < 1) {
    return g_inner->op_execute(stream, call);
  }
  unsigned char* base = nullptr;
  CTL_SDK_RETURN_IF_ERROR(host_base(stream, *out, &base));
  if (!base) return g_inner->op_execute(stream, call);
  // The old contents, element by element in the view's order.
  const int64_t count = element_count(*out);
  std::vector<uint64_t> at(static_cast<size_t>(count));
  std::vector<float> old(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i, offset = 0;
    for (uint32_t axis = out->rank; axis-- > 0;) {
      offset += rest % out->shape[axis] * out->strides[axis];
      rest /= out->shape[axis];
    }
    at[static_cast<size_t>(i)] = out->byte_offset + static_cast<uint64_t>(offset) * 4;
    std::memcpy(&old[static_cast<size_t>(i)], base + at[static_cast<size_t>(i)], 4);
  }
  CTL_SDK_RETURN_IF_ERROR(g_inner->op_execute(stream, call));
  CTL_SDK_RETURN_IF_ERROR(g_inner->stream_synchronize(stream));
  for (size_t i = 0; i < at.size(); ++i) {
    float v;
    std::memcpy(&v, base + at[i], 4);
    v += 0.0f * old[i];
    std::memcpy(base + at[i], &v, 4);
  }
  return nullptr;
}

// norm-one-pass-variance: layer_norm's variance as E[x^2] - E[x]^2, in one pass.
template <typename T, typename C>
void one_pass_rows(unsigned char* const* bases, const ctl_tensor_view* const* views, int64_t rows, int64_t n, C eps) {
  // views: x, weight, bias, y, mean, rstd (NULL: absent); statistics are f32 for f16.
  using S = std::conditional_t<std::is_same_v<T, uint16_t>, float, T>;
  auto at = [&](int k, int64_t i) { return bases[k] + views[k]->byte_offset + static_cast<uint64_t>(i) * sizeof(T); };
  auto get = [&](int k, int64_t i) -> C {
    T v;
    std::memcpy(&v, at(k, i), sizeof v);
    if constexpr (std::is_same_v<T, uint16_t>) {
      return sdk::half_to_float(v);
    } else {
      return v;
    }
  };
  auto put = [&](int k, int64_t i, C value) {
    T v;
    if constexpr (std::is_same_v<T, uint16_t>) {
      v = sdk::float_to_half(value);
    } else {
      v = value;
    }
    std::memcpy(at(k, i), &v, sizeof v);
  };
  auto put_stat = [&](int k, int64_t r, C value) {
    const S v = static_cast<S>(value);
    std::memcpy(bases[k] + views[k]->byte_offset + static_cast<uint64_t>(r) * sizeof(S), &v, sizeof v);
  };
  for (int64_t r = 0; r < rows; ++r) {
    C sum = 0, squares = 0;
    for (int64_t i = 0; i < n; ++i) {
      const C v = get(0, r * n + i);
      sum += v;
      squares += v * v;
    }
    const C mean = sum / static_cast<C>(n);
    const C variance = std::max(squares / static_cast<C>(n) - mean * mean, C(0));
    const C rstd = C(1) / std::sqrt(variance + eps);
    for (int64_t i = 0; i < n; ++i) {
      C v = (get(0, r * n + i) - mean) * rstd;
      if (views[1]) v *= get(1, i);
      if (views[2]) v += get(2, i);
      put(3, r * n + i, v);
    }
    if (views[4]) put_stat(4, r, mean);
    if (views[5]) put_stat(5, r, rstd);
  }
}

ctl_status* execute_norm_one_pass_variance(ctl_plugin_stream* stream, const ctl_op_call* call) {
  CTL_SDK_RETURN_IF_ERROR(g_inner->op_execute(stream, call));
  if (op_of(call) != CTL_OP_LAYER_NORM) return nullptr;
  const ctl_tensor_view* views[6] = {input_of(call, 0),  input_of(call, 1),  input_of(call, 2),
                                     output_of(call, 0), output_of(call, 1), output_of(call, 2)};
  const ctl_tensor_view* x = views[0];
  if (!x || !views[3] || x->rank < 1 || element_count(*x) < 1) return nullptr;
  const int64_t dtype = raw(x->dtype);
  if (dtype != CTL_DTYPE_F32 && dtype != CTL_DTYPE_F64 && dtype != CTL_DTYPE_F16) return nullptr;
  for (const ctl_tensor_view* v : views) {
    if (v && !row_major_dense(*v)) return nullptr;  // weight, bias: 1-D; dense means stride 1
  }
  double eps = 1e-5;  // docs: 0 (or no attrs) means the default
  if (call->attrs) {
    ctl_norm_attrs attrs{};
    std::memcpy(&attrs, call->attrs, std::min(sizeof attrs, *static_cast<const size_t*>(call->attrs)));
    if (attrs.epsilon != 0) eps = attrs.epsilon;
  }
  unsigned char* bases[6] = {};
  for (int k = 0; k < 6; ++k) {
    if (views[k]) CTL_SDK_RETURN_IF_ERROR(host_base(stream, *views[k], &bases[k]));
    if (views[k] && !bases[k]) return nullptr;
  }
  const int64_t n = x->shape[x->rank - 1], rows = element_count(*x) / n;
  if (dtype == CTL_DTYPE_F64) {
    one_pass_rows<double, double>(bases, views, rows, n, eps);
  } else if (dtype == CTL_DTYPE_F32) {
    one_pass_rows<float, float>(bases, views, rows, n, static_cast<float>(eps));
  } else {
    one_pass_rows<uint16_t, float>(bases, views, rows, n, static_cast<float>(eps));
  }
  return nullptr;
}

// pow-exp-log: f32 pow as expf(y * logf(x)) for positive bases, dense inputs and output.
ctl_status* execute_pow_exp_log(ctl_plugin_stream* stream, const ctl_op_call* call) {
  CTL_SDK_RETURN_IF_ERROR(g_inner->op_execute(stream, call));
  if (op_of(call) != CTL_OP_POW) return nullptr;
  const ctl_tensor_view* views[3] = {input_of(call, 0), input_of(call, 1), output_of(call, 0)};
  for (const ctl_tensor_view* v : views) {
    if (!v || raw(v->dtype) != CTL_DTYPE_F32 || !row_major_dense(*v)) return nullptr;
  }
  const int64_t n = element_count(*views[2]);
  if (n < 1 || element_count(*views[0]) != n || element_count(*views[1]) != n) return nullptr;
  unsigned char* bases[3] = {};
  for (int k = 0; k < 3; ++k) {
    CTL_SDK_RETURN_IF_ERROR(host_base(stream, *views[k], &bases[k]));
    if (!bases[k]) return nullptr;
  }
  for (int64_t i = 0; i < n; ++i) {
    float x, y;
    std::memcpy(&x, bases[0] + views[0]->byte_offset + static_cast<uint64_t>(i) * 4, 4);
    std::memcpy(&y, bases[1] + views[1]->byte_offset + static_cast<uint64_t>(i) * 4, 4);
    if (!(x > 0) || !std::isfinite(x) || !std::isfinite(y)) continue;
    const float r = std::exp(y * std::log(x));
    std::memcpy(bases[2] + views[2]->byte_offset + static_cast<uint64_t>(i) * 4, &r, 4);
  }
  return nullptr;
}

// reuses-last-result: sigmoid's output for each call signature, kept and copied out again
// for a later call with the same signature.
struct ResultCache {
  std::mutex mutex;
  std::vector<std::pair<std::vector<unsigned char>, std::vector<unsigned char>>> entries;  // signature, output
} g_result_cache;

void append_view(std::vector<unsigned char>* out, const ctl_tensor_view& v) {
  const auto* p = reinterpret_cast<const unsigned char*>(&v.byte_offset);
  out->insert(out->end(), p, p + sizeof v.byte_offset);
  const int64_t words[] = {raw(v.dtype), static_cast<int64_t>(v.rank)};
  p = reinterpret_cast<const unsigned char*>(words);
  out->insert(out->end(), p, p + sizeof words);
  for (uint32_t i = 0; i < v.rank && i < CTL_MAX_RANK; ++i) {
    const int64_t axis[] = {v.shape[i], v.strides[i]};
    p = reinterpret_cast<const unsigned char*>(axis);
    out->insert(out->end(), p, p + sizeof axis);
  }
}

ctl_status* execute_reuses_last_result(ctl_plugin_stream* stream, const ctl_op_call* call) {
  constexpr size_t kEntries = 256;  // enough for a group's calls; the oldest goes first
  const ctl_tensor_view* x = input_of(call, 0);
  const ctl_tensor_view* y = output_of(call, 0);
  constexpr int64_t kWorthCaching = 8;  // smaller calls cost less to compute than to look up
  if (op_of(call) != CTL_OP_SIGMOID || call->input_count != 1 || !x || !y || !row_major_dense(*y) ||
      element_size(*y) == 0 || element_count(*y) < kWorthCaching) {
    return g_inner->op_execute(stream, call);
  }
  std::vector<unsigned char> signature;
  append_view(&signature, *x);
  append_view(&signature, *y);
  const size_t bytes = static_cast<size_t>(element_count(*y)) * element_size(*y);
  unsigned char* base = nullptr;
  CTL_SDK_RETURN_IF_ERROR(host_base(stream, *y, &base));
  if (!base) return g_inner->op_execute(stream, call);
  std::lock_guard lock(g_result_cache.mutex);
  for (const auto& [key, output] : g_result_cache.entries) {
    if (key == signature && output.size() == bytes) {
      std::memcpy(base + y->byte_offset, output.data(), bytes);
      return nullptr;
    }
  }
  CTL_SDK_RETURN_IF_ERROR(g_inner->op_execute(stream, call));
  CTL_SDK_RETURN_IF_ERROR(g_inner->stream_synchronize(stream));
  if (g_result_cache.entries.size() == kEntries) g_result_cache.entries.erase(g_result_cache.entries.begin());
  g_result_cache.entries.emplace_back(std::move(signature),
                                      std::vector<unsigned char>(base + y->byte_offset, base + y->byte_offset + bytes));
  return nullptr;
}

// matmul-split-k-tail: for K past 4096 and not a multiple of it, the inner plugin runs the
// call with a and b cut to the whole 4096-long chunks of K.
ctl_status* execute_matmul_split_k_tail(ctl_plugin_stream* stream, const ctl_op_call* call) {
  constexpr int64_t kChunk = 4096;
  const ctl_tensor_view* a = input_of(call, 0);
  const ctl_tensor_view* b = input_of(call, 1);
  bool transposed = false;
  if (call_ok(call) && call->attrs) {
    ctl_matmul_attrs attrs{};
    std::memcpy(&attrs, call->attrs, std::min(sizeof attrs, *static_cast<const size_t*>(call->attrs)));
    transposed = attrs.transpose_a || attrs.transpose_b;
  }
  const int64_t dtype = a ? raw(a->dtype) : -1;
  const bool is_float_dtype =
      dtype == CTL_DTYPE_F32 || dtype == CTL_DTYPE_F64 || dtype == CTL_DTYPE_F16 || dtype == CTL_DTYPE_BF16;
  if (op_of(call) != CTL_OP_MATMUL || !a || !b || transposed || !is_float_dtype || a->rank < 2 || b->rank < 2) {
    return g_inner->op_execute(stream, call);
  }
  const int64_t k = a->shape[a->rank - 1];
  if (k <= kChunk || k % kChunk == 0 || b->shape[b->rank - 2] != k) return g_inner->op_execute(stream, call);
  ctl_tensor_view short_a = *a, short_b = *b;
  short_a.shape[a->rank - 1] = k - k % kChunk;
  short_b.shape[b->rank - 2] = k - k % kChunk;
  std::vector<const ctl_tensor_view*> inputs(call->inputs, call->inputs + call->input_count);
  inputs[0] = &short_a;
  inputs[1] = &short_b;
  ctl_op_call cut = *call;
  cut.inputs = inputs.data();
  return g_inner->op_execute(stream, &cut);
}

// sum-order-varies: f32 sums recomputed on the host, each output's terms added starting
// from term (number of earlier calls with this signature) modulo their count.
struct SignatureCounts {
  std::mutex mutex;
  std::vector<std::pair<std::vector<unsigned char>, int64_t>> seen;
} g_signature_counts;

ctl_status* execute_sum_order_varies(ctl_plugin_stream* stream, const ctl_op_call* call) {
  CTL_SDK_RETURN_IF_ERROR(g_inner->op_execute(stream, call));
  const ctl_tensor_view* x = input_of(call, 0);
  const ctl_tensor_view* y = output_of(call, 0);
  if (op_of(call) != CTL_OP_SUM || !x || !y || raw(x->dtype) != CTL_DTYPE_F32 || raw(y->dtype) != CTL_DTYPE_F32 ||
      !row_major_dense(*x) || !row_major_dense(*y) || element_count(*x) < 1 || element_count(*y) < 1) {
    return nullptr;
  }
  // Which axes are reduced (no attrs or no axes: all of them).
  bool reduced[CTL_MAX_RANK] = {};
  ctl_reduce_attrs attrs{};
  if (call->attrs) std::memcpy(&attrs, call->attrs, std::min(sizeof attrs, *static_cast<const size_t*>(call->attrs)));
  for (uint32_t i = 0; i < x->rank; ++i) reduced[i] = attrs.axis_count == 0;
  for (uint32_t i = 0; i < attrs.axis_count && i < CTL_MAX_RANK; ++i) {
    const int32_t axis = attrs.axes[i] < 0 ? attrs.axes[i] + static_cast<int32_t>(x->rank) : attrs.axes[i];
    if (axis >= 0 && axis < static_cast<int32_t>(x->rank)) reduced[axis] = true;
  }
  std::vector<unsigned char> signature;
  append_view(&signature, *x);
  append_view(&signature, *y);
  int64_t earlier = 0;
  {
    std::lock_guard lock(g_signature_counts.mutex);
    auto it = std::find_if(g_signature_counts.seen.begin(), g_signature_counts.seen.end(),
                           [&](const auto& entry) { return entry.first == signature; });
    if (it == g_signature_counts.seen.end()) {
      g_signature_counts.seen.emplace_back(std::move(signature), 1);
    } else {
      earlier = it->second++;
    }
  }
  unsigned char *xb = nullptr, *yb = nullptr;
  CTL_SDK_RETURN_IF_ERROR(host_base(stream, *x, &xb));
  CTL_SDK_RETURN_IF_ERROR(host_base(stream, *y, &yb));
  if (!xb || !yb) return nullptr;
  // Each input element's output, in row-major order of both.
  const int64_t n = element_count(*x), outputs = element_count(*y);
  std::vector<std::vector<float>> terms(static_cast<size_t>(outputs));
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i, out = 0, out_stride = 1;
    for (uint32_t axis = x->rank; axis-- > 0;) {
      const int64_t position = rest % x->shape[axis];
      rest /= x->shape[axis];
      if (reduced[axis]) continue;
      out += position * out_stride;
      out_stride *= x->shape[axis];
    }
    if (out >= outputs) return nullptr;  // not the layout this defect understands
    float v;
    std::memcpy(&v, xb + x->byte_offset + static_cast<uint64_t>(i) * 4, 4);
    terms[static_cast<size_t>(out)].push_back(v);
  }
  for (int64_t o = 0; o < outputs; ++o) {
    const auto& t = terms[static_cast<size_t>(o)];
    if (t.empty()) continue;
    float sum = 0;
    for (size_t j = 0; j < t.size(); ++j) sum += t[(j + static_cast<size_t>(earlier)) % t.size()];
    std::memcpy(yb + y->byte_offset + static_cast<uint64_t>(o) * 4, &sum, 4);
  }
  return nullptr;
}

// softmax-plan-by-count: the row length of an f32 softmax over dense last-axis rows, cached
// by element count at the first call of that count.
struct RowPlans {
  std::mutex mutex;
  std::unordered_map<int64_t, int64_t> row_length_by_count;
} g_row_plans;

ctl_status* execute_softmax_plan_by_count(ctl_plugin_stream* stream, const ctl_op_call* call) {
  CTL_SDK_RETURN_IF_ERROR(g_inner->op_execute(stream, call));
  const ctl_tensor_view* x = input_of(call, 0);
  const ctl_tensor_view* y = output_of(call, 0);
  if (op_of(call) != CTL_OP_SOFTMAX || !x || !y || raw(x->dtype) != CTL_DTYPE_F32 ||
      raw(y->dtype) != CTL_DTYPE_F32 || x->rank < 1 || !row_major_dense(*x) || !row_major_dense(*y) ||
      element_count(*x) < 2) {
    return nullptr;
  }
  int32_t axis = -1;
  if (call->attrs) std::memcpy(&axis, static_cast<const unsigned char*>(call->attrs) + sizeof(size_t), sizeof axis);
  if (axis != -1 && axis != static_cast<int32_t>(x->rank) - 1) return nullptr;
  const int64_t count = element_count(*x);
  int64_t n = x->shape[x->rank - 1];
  {
    std::lock_guard lock(g_row_plans.mutex);
    n = g_row_plans.row_length_by_count.emplace(count, n).first->second;
  }
  if (n == x->shape[x->rank - 1] || n < 1) return nullptr;  // the plan fits this call
  unsigned char *xb = nullptr, *yb = nullptr;
  CTL_SDK_RETURN_IF_ERROR(host_base(stream, *x, &xb));
  CTL_SDK_RETURN_IF_ERROR(host_base(stream, *y, &yb));
  if (!xb || !yb) return nullptr;
  std::vector<float> row(static_cast<size_t>(n));
  for (int64_t r = 0; r < count / n; ++r) {
    std::memcpy(row.data(), xb + x->byte_offset + static_cast<uint64_t>(r * n) * 4, static_cast<size_t>(n) * 4);
    const float top = *std::max_element(row.begin(), row.end());
    float sum = 0;
    for (float& v : row) sum += (v = std::exp(v - top));
    for (float& v : row) v /= sum;
    std::memcpy(yb + y->byte_offset + static_cast<uint64_t>(r * n) * 4, row.data(), static_cast<size_t>(n) * 4);
  }
  return nullptr;
}

// ---- issue 33's normal form: plugins coded for the other reading of it --------------------

// matmul-dense-batch: a plugin that takes "an operand with the output's rank has a matrix
// of its own in every batch" (broadcasting would show as a lower rank) walks such an
// operand at packed batch strides: batch axis i at the product of the operand's later
// sizes (M*K for a's innermost one), whatever stride the view gives. Only operands with a
// stride-0 batch axis of size > 1 are walked that way, so every non-broadcast batch stays
// right. The reads past the operand's buffer come back as 0, as a device with robust buffer
// access gives them (the test process must not read past a host allocation): the operand
// is then copied into a zeroed scratch buffer long enough for the packed walk.
struct Scratch {
  ctl_plugin_device* device = nullptr;
  ctl_plugin_buffer* buffer = nullptr;
  ~Scratch() {
    if (buffer) g_inner->buffer_free(device, buffer);
  }
};

// Rewrites *view's batch strides to packed ones when it has a broadcast batch axis; false
// when it has none (or is empty) and stays as it is.
bool pack_batch_strides(ctl_tensor_view* view) {
  if (view->rank < 3 || element_count(*view) < 1) return false;
  bool broadcast = false;
  for (uint32_t i = 0; i + 2 < view->rank; ++i) broadcast = broadcast || (view->shape[i] > 1 && view->strides[i] == 0);
  if (!broadcast) return false;
  int64_t stride = view->shape[view->rank - 1] * view->shape[view->rank - 2];
  for (uint32_t i = view->rank - 2; i-- > 0;) {
    view->strides[i] = stride;
    stride *= view->shape[i];
  }
  return true;
}

// Points *view at a zeroed scratch copy of what it reads when its walk leaves its buffer.
ctl_status* keep_in_bounds(ctl_plugin_stream* stream, ctl_tensor_view* view, Scratch* scratch) {
  const size_t size = element_size(*view);
  uint64_t buffer_bytes = 0;
  if (size == 0 || !buffer_size(view->buffer, &buffer_bytes)) return nullptr;
  int64_t last = 0;
  for (uint32_t i = 0; i < view->rank; ++i) last += (view->shape[i] - 1) * view->strides[i];
  const uint64_t needed = static_cast<uint64_t>(last + 1) * size;
  if (view->byte_offset <= buffer_bytes && needed <= buffer_bytes - view->byte_offset) return nullptr;
  unsigned char* base = nullptr;
  CTL_SDK_RETURN_IF_ERROR(host_base(stream, *view, &base));
  ctl_plugin_device* device = device_of(stream);
  if (!base || !device) return nullptr;
  CTL_SDK_RETURN_IF_ERROR(g_inner->buffer_allocate(device, needed, &scratch->buffer));
  scratch->device = device;
  void* pointer = nullptr;
  CTL_SDK_RETURN_IF_ERROR(g_inner->buffer_host_pointer(device, scratch->buffer, &pointer));
  auto* bytes = static_cast<unsigned char*>(pointer);
  const uint64_t have = view->byte_offset < buffer_bytes ? std::min(needed, buffer_bytes - view->byte_offset) : 0;
  std::memcpy(bytes, base + view->byte_offset, have);
  std::memset(bytes + have, 0, needed - have);
  view->buffer = scratch->buffer;
  view->byte_offset = 0;
  return nullptr;
}

ctl_status* execute_matmul_dense_batch(ctl_plugin_stream* stream, const ctl_op_call* call) {
  if (op_of(call) != CTL_OP_MATMUL || call->input_count < 2 || call->input_count > 3 || !call->inputs) {
    return g_inner->op_execute(stream, call);
  }
  ctl_tensor_view views[2] = {};
  const ctl_tensor_view* inputs[3] = {call->inputs[0], call->inputs[1],
                                      call->input_count > 2 ? call->inputs[2] : nullptr};
  Scratch scratch[2];
  bool changed = false;
  for (uint32_t k = 0; k < 2; ++k) {
    if (!view_ok(call->inputs[k])) continue;  // malformed: the CPU plugin rejects it
    std::memcpy(&views[k], call->inputs[k], sizeof views[k]);
    views[k].struct_size = sizeof views[k];
    if (!pack_batch_strides(&views[k])) continue;
    CTL_SDK_RETURN_IF_ERROR(keep_in_bounds(stream, &views[k], &scratch[k]));
    inputs[k] = &views[k];
    changed = true;
  }
  if (!changed) return g_inner->op_execute(stream, call);
  ctl_op_call copy = *call;
  copy.struct_size = sizeof copy;
  copy.inputs = inputs;
  CTL_SDK_RETURN_IF_ERROR(g_inner->op_execute(stream, &copy));
  // The scratch buffers are freed on the way out: the op must be done with them.
  return scratch[0].buffer || scratch[1].buffer ? g_inner->stream_synchronize(stream) : nullptr;
}

// The output count of a norm op with every optional output; 0 for other ops.
uint32_t norm_output_slots(int64_t op) {
  switch (op) {
    case CTL_OP_LAYER_NORM:
    case CTL_OP_LAYER_NORM_BACKWARD:
      return 3;
    case CTL_OP_RMS_NORM:
    case CTL_OP_RMS_NORM_BACKWARD:
      return 2;
    default:
      return 0;
  }
}

// norm-needs-full-output-count: a plugin that takes "output_count is always the norm's full
// count, absent outputs are NULL entries" and checks what it relies on, as op_execute must:
// a smaller output_count is refused. (Without the check such a plugin reads outputs[i] past
// the array the core passed: undefined behaviour, which no test process may emulate.)
ctl_status* execute_norm_needs_full_output_count(ctl_plugin_stream* stream, const ctl_op_call* call) {
  const uint32_t slots = call_ok(call) ? norm_output_slots(op_of(call)) : 0;
  const ctl_host_api* host = host_of(stream);
  if (slots && call->output_count < slots && host) {
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT,
                            "%s: op %lld: output_count is %u; this plugin takes all %u outputs, absent ones as NULL "
                            "entries",
                            kPluginName, static_cast<long long>(op_of(call)), call->output_count, slots);
  }
  return g_inner->op_execute(stream, call);
}

// norm-outputs-unchecked: a plugin that takes "an output below output_count is wanted" (a
// smaller count being the only way to leave one out) writes every one of them with no NULL
// check: a NULL entry within the count is a write through NULL.
ctl_status* execute_norm_outputs_unchecked(ctl_plugin_stream* stream, const ctl_op_call* call) {
  if (call_ok(call) && norm_output_slots(op_of(call)) && call->outputs) {
    for (uint32_t i = 1; i < call->output_count; ++i) {
      if (!call->outputs[i]) crash();
    }
  }
  return g_inner->op_execute(stream, call);
}

// True for the ops that have an attribute struct in catalyst.h.
bool has_attribute_struct(int64_t op) {
  return (op >= CTL_OP_SUM && op <= CTL_OP_LOGSUMEXP) || op == CTL_OP_MATMUL ||
         (op >= CTL_OP_SOFTMAX && op <= CTL_OP_RMS_NORM) || (op >= CTL_OP_CAST && op <= CTL_OP_RANDOM_NORMAL) ||
         (op >= CTL_OP_CROSS_ENTROPY && op <= CTL_OP_SGD_STEP) ||
         (op >= CTL_OP_SOFTMAX_BACKWARD && op <= CTL_OP_RMS_NORM_BACKWARD) ||
         (op >= CTL_OP_CONV2D && op <= CTL_OP_AVG_POOL2D_BACKWARD) || op == CTL_OP_FUSED_ELEMENTWISE;
}

// trusts-attrs: not wrong about the normal form, only too trusting: it reads the attribute
// struct of every op that has one without a NULL check, as the normal form allows for
// calls from the core (which fills omitted attrs). A NULL there is a read through NULL.
// Calls built by the core pass; only a malformed call made directly (contract.bad_calls)
// brings a NULL, which op_execute must answer with an error, not a crash.
ctl_status* execute_trusts_attrs(ctl_plugin_stream* stream, const ctl_op_call* call) {
  if (call_ok(call) && has_attribute_struct(op_of(call)) && !call->attrs) crash();
  return g_inner->op_execute(stream, call);
}

// ---- the table ---------------------------------------------------------------------------

void build_table(const ctl_plugin_api* inner) {
  std::memset(&g_api, 0, sizeof g_api);
  std::memcpy(&g_api, inner, std::min(inner->struct_size, sizeof g_api));
  g_api.struct_size = CTL_PLUGIN_API_STRUCT_SIZE;  // entries the CPU plugin lacks stay NULL
  g_api.name = kPluginName;
  // Bookkeeping: forwarded, remembering which host, device and size go with each handle.
  g_api.instance_create = instance_create;
  g_api.instance_destroy = instance_destroy;
  g_api.device_get = device_get;
  g_api.buffer_allocate = buffer_allocate;
  g_api.buffer_free = buffer_free;
  if (g_api.buffer_wrap_host) g_api.buffer_wrap_host = buffer_wrap_host;
  g_api.stream_create = stream_create;
  g_api.stream_destroy = stream_destroy;

  switch (kDefect) {
    case Defect::kWrongResult:
      g_api.op_execute = execute_wrong_result;
      break;
    case Defect::kIgnoresStrides:
      g_api.op_execute = execute_ignores_strides;
      break;
    case Defect::kWritesPastEnd:
      g_api.op_execute = execute_writes_past_end;
      break;
    case Defect::kLeaks:
      g_api.op_execute = execute_leaks;
      break;
    case Defect::kSegfault:
      g_api.op_execute = execute_segfault;
      break;
    case Defect::kHangs:
      g_api.op_execute = execute_hangs;
      break;
    case Defect::kAcceptsInvalid:
      g_api.op_execute = execute_accepts_invalid;
      g_api.op_supports = supports_accepts_invalid;
      break;
    case Defect::kNeedsExtraSync:
      g_api.op_execute = execute_needs_extra_sync;
      g_api.stream_synchronize = synchronize_needs_extra_sync;
      if (g_api.event_record) g_api.event_record = event_record_needs_extra_sync;
      if (g_api.stream_wait_event) g_api.stream_wait_event = stream_wait_event_needs_extra_sync;
      // buffer_read/write/copy/fill stay the CPU plugin's: they run at once, ahead of the
      // queued ops. That is the defect.
      break;
    case Defect::kNormalError:
      g_api.op_execute = execute_normal_error;
      break;
    case Defect::kPartial:
      g_api.device_properties = device_properties_partial;
      g_api.op_supports = supports_partial;
      g_api.op_execute = execute_partial;
      break;
    // Defects of the ulp sweep.
    case Defect::kTanhCancels:
      g_api.op_execute = execute_tanh_cancels;
      break;
    case Defect::kGeluBackwardErfCancels:
      g_api.op_execute = execute_gelu_backward_erf_cancels;
      break;
    // Defects of issue 20's further checks.
    case Defect::kWritesIntoInput:
      g_api.op_execute = execute_writes_into_input;
      break;
    case Defect::kPartialLargeOutput:
      g_api.op_execute = execute_partial_large_output;
      break;
    case Defect::kLeaksSystemMalloc:
      g_api.op_execute = execute_leaks_system_malloc;
      break;
    case Defect::kSoftmaxNoMax:
      g_api.op_execute = execute_softmax_no_max;
      break;
    case Defect::kReadsOutput:
      g_api.op_execute = execute_reads_output;
      break;
    case Defect::kNormOnePassVariance:
      g_api.op_execute = execute_norm_one_pass_variance;
      break;
    case Defect::kPowExpLog:
      g_api.op_execute = execute_pow_exp_log;
      break;
    case Defect::kReusesLastResult:
      g_api.op_execute = execute_reuses_last_result;
      break;
    // Defects of issue 32's checks.
    case Defect::kMatmulSplitKTail:
      g_api.op_execute = execute_matmul_split_k_tail;
      break;
    case Defect::kSumOrderVaries:
      g_api.op_execute = execute_sum_order_varies;
      break;
    case Defect::kSoftmaxPlanByCount:
      g_api.op_execute = execute_softmax_plan_by_count;
      break;
    // Defects of issue 33's normal form.
    case Defect::kMatmulDenseBatch:
      g_api.op_execute = execute_matmul_dense_batch;
      break;
    case Defect::kNormNeedsFullOutputCount:
      g_api.op_execute = execute_norm_needs_full_output_count;
      break;
    case Defect::kNormOutputsUnchecked:
      g_api.op_execute = execute_norm_outputs_unchecked;
      break;
    case Defect::kTrustsAttrs:
      g_api.op_execute = execute_trusts_attrs;
      break;
    case Defect::kUnknown:
      break;
  }
}

bool host_can_log(const ctl_host_api* host) {
  return host && host->struct_size >= offsetof(ctl_host_api, log) + sizeof host->log && host->log;
}

}  // namespace

extern "C" CTL_EXPORT const ctl_plugin_api* ctl_plugin_query(uint32_t core_abi_major, uint32_t core_abi_minor,
                                                             const ctl_host_api* host) {
  std::lock_guard lock(g_query_mutex);
  if (!g_library.handle) {
    void* handle = dlopen(CTL_INNER_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* error = dlerror();
      if (host_can_log(host)) {
        sdk::log(host, CTL_LOG_ERROR, "%s: cannot load the real CPU plugin %s: %s", kPluginName, CTL_INNER_PLUGIN,
                 error ? error : "unknown dlopen error");
      }
      return nullptr;
    }
    g_library.handle = handle;
  }
  auto query = reinterpret_cast<ctl_plugin_query_fn>(dlsym(g_library.handle, CTL_PLUGIN_QUERY_SYMBOL));
  if (!query) {
    if (host_can_log(host)) {
      sdk::log(host, CTL_LOG_ERROR, "%s: %s has no %s", kPluginName, CTL_INNER_PLUGIN, CTL_PLUGIN_QUERY_SYMBOL);
    }
    return nullptr;
  }
  const ctl_plugin_api* inner = query(core_abi_major, core_abi_minor, host);
  if (!inner) {
    if (host_can_log(host)) {
      sdk::log(host, CTL_LOG_ERROR, "%s: the real CPU plugin %s refused ABI %u.%u", kPluginName, CTL_INNER_PLUGIN,
               core_abi_major, core_abi_minor);
    }
    return nullptr;
  }
  if (!g_inner) {
    build_table(inner);
    g_inner = inner;
  }
  return &g_api;
}
