// ops_fuzzer.cpp — libFuzzer harness for op execution through catalyst.h: ctl_op_run,
// ctl_op_run_into and the convenience forms, on the CPU plugin, with op ids (known and
// not), inputs of every dtype and small shapes (strided, broadcast and empty views among
// them, NULL now and then), input and output counts, and attribute structs whose size and
// every byte come from the input (struct_size always tells the truth about the buffer, as
// the ABI asks of callers).
//
// Besides the sanitizers, every call is checked against the ABI's promises: a failure
// leaves out-parameters alone and carries a message; a success returns a tensor per
// output; inputs are unchanged afterwards (bit for bit); bool outputs hold only 0 and 1.
// Outputs join the pool, so ops chain.
#include <array>
#include <cstddef>
#include <vector>

#include "fuzz_support.h"
#include "raw_calls.h"

namespace {

using fuzz::Input;

constexpr uint32_t kOps[] = {CTL_OP_NEG,
                             CTL_OP_ABS,
                             CTL_OP_EXP,
                             CTL_OP_LOG,
                             CTL_OP_SQRT,
                             CTL_OP_RSQRT,
                             CTL_OP_TANH,
                             CTL_OP_SIGMOID,
                             CTL_OP_RELU,
                             CTL_OP_GELU,
                             CTL_OP_GELU_TANH,
                             CTL_OP_SILU,
                             CTL_OP_SIN,
                             CTL_OP_COS,
                             CTL_OP_RECIPROCAL,
                             CTL_OP_ADD,
                             CTL_OP_SUB,
                             CTL_OP_MUL,
                             CTL_OP_DIV,
                             CTL_OP_POW,
                             CTL_OP_MAXIMUM,
                             CTL_OP_MINIMUM,
                             CTL_OP_EQ,
                             CTL_OP_NE,
                             CTL_OP_LT,
                             CTL_OP_LE,
                             CTL_OP_GT,
                             CTL_OP_GE,
                             CTL_OP_WHERE,
                             CTL_OP_SUM,
                             CTL_OP_MEAN,
                             CTL_OP_MAX,
                             CTL_OP_MIN,
                             CTL_OP_ARGMAX,
                             CTL_OP_ARGMIN,
                             CTL_OP_LOGSUMEXP,
                             CTL_OP_MATMUL,
                             CTL_OP_SOFTMAX,
                             CTL_OP_LOG_SOFTMAX,
                             CTL_OP_LAYER_NORM,
                             CTL_OP_RMS_NORM,
                             CTL_OP_COPY,
                             CTL_OP_CAST,
                             CTL_OP_CONCAT,
                             CTL_OP_GATHER,
                             CTL_OP_SCATTER_ADD,
                             CTL_OP_FILL,
                             CTL_OP_ARANGE,
                             CTL_OP_RANDOM_UNIFORM,
                             CTL_OP_RANDOM_NORMAL,
                             CTL_OP_CROSS_ENTROPY,
                             CTL_OP_CROSS_ENTROPY_BACKWARD,
                             CTL_OP_ADAMW_STEP,
                             CTL_OP_SGD_STEP,
                             CTL_OP_SOFTMAX_BACKWARD,
                             CTL_OP_LOG_SOFTMAX_BACKWARD,
                             CTL_OP_LAYER_NORM_BACKWARD,
                             CTL_OP_RMS_NORM_BACKWARD,
                             CTL_OP_GELU_BACKWARD,
                             CTL_OP_GELU_TANH_BACKWARD,
                             CTL_OP_CONV2D,
                             CTL_OP_CONV2D_BACKWARD_INPUT,
                             CTL_OP_CONV2D_BACKWARD_WEIGHT,
                             CTL_OP_MAX_POOL2D,
                             CTL_OP_MAX_POOL2D_BACKWARD,
                             CTL_OP_AVG_POOL2D,
                             CTL_OP_AVG_POOL2D_BACKWARD};
constexpr size_t kOpCount = sizeof kOps / sizeof kOps[0];

// The sizes of every attribute struct: a size near one of them is the likeliest to matter.
constexpr size_t kAttrSizes[] = {
    CTL_REDUCE_ATTRS_STRUCT_SIZE, CTL_MATMUL_ATTRS_STRUCT_SIZE, CTL_AXIS_ATTRS_STRUCT_SIZE,
    CTL_NORM_ATTRS_STRUCT_SIZE,   CTL_CAST_ATTRS_STRUCT_SIZE,   CTL_FILL_ATTRS_STRUCT_SIZE,
    CTL_ARANGE_ATTRS_STRUCT_SIZE, CTL_RANDOM_ATTRS_STRUCT_SIZE, CTL_CROSS_ENTROPY_ATTRS_STRUCT_SIZE,
    CTL_ADAMW_ATTRS_STRUCT_SIZE,  CTL_SGD_ATTRS_STRUCT_SIZE,    CTL_CONV2D_ATTRS_STRUCT_SIZE,
    CTL_POOL2D_ATTRS_STRUCT_SIZE};

// An attribute struct the input wrote: exactly `size` bytes (at least the struct_size
// field), so AddressSanitizer sees any read past what the caller said it gave.
struct Attrs {
  std::vector<size_t> storage;  // size_t-aligned, as a real struct would be
  size_t size = 0;
  const void* get() const { return storage.empty() ? nullptr : storage.data(); }
};

// Where the attribute struct of `op` keeps its bool fields.
std::vector<size_t> bool_offsets(uint32_t op) {
  switch (op) {
    case CTL_OP_SUM:
    case CTL_OP_MEAN:
    case CTL_OP_MAX:
    case CTL_OP_MIN:
    case CTL_OP_ARGMAX:
    case CTL_OP_ARGMIN:
    case CTL_OP_LOGSUMEXP:
      return {offsetof(ctl_reduce_attrs, keepdims)};
    case CTL_OP_MATMUL:
      return {offsetof(ctl_matmul_attrs, transpose_a), offsetof(ctl_matmul_attrs, transpose_b),
              offsetof(ctl_matmul_attrs, alpha_set)};
    case CTL_OP_CROSS_ENTROPY:
    case CTL_OP_CROSS_ENTROPY_BACKWARD:
      return {offsetof(ctl_cross_entropy_attrs, ignore_index_set)};
    case CTL_OP_SGD_STEP:
      return {offsetof(ctl_sgd_attrs, nesterov)};
    case CTL_OP_MAX_POOL2D:
    case CTL_OP_MAX_POOL2D_BACKWARD:
    case CTL_OP_AVG_POOL2D:
    case CTL_OP_AVG_POOL2D_BACKWARD:
      return {offsetof(ctl_pool2d_attrs, exclude_padding)};
    default:
      return {};
  }
}

Attrs take_attrs(Input& in, uint32_t op) {
  Attrs a;
  const uint8_t mode = in.byte();
  if (mode < 40) return a;  // NULL attrs
  const size_t known = kAttrSizes[in.below(sizeof kAttrSizes / sizeof kAttrSizes[0])];
  size_t size = mode < 200 ? known : mode < 230 ? known + in.below(17) - 8 : in.below(200);
  size = std::max(size, sizeof(size_t));
  a.size = size;
  // The allocation is exactly `size` bytes rounded to size_t; the bytes past `size` are
  // never read by a core that honours struct_size, and ASan cannot see a few bytes of
  // rounding, so keep the rounding at zero where we can.
  a.storage.resize((size + sizeof(size_t) - 1) / sizeof(size_t));
  std::vector<uint8_t> body = in.bytes(size);
  std::memcpy(a.storage.data(), body.data(), size);
  a.storage[0] = in.byte() < 230 ? size : in.below(static_cast<uint32_t>(size) + 1);
  // A bool field holds 0 or 1: even a C caller cannot store another value without undefined
  // behaviour (unlike an enum field, which may hold any int and is fuzzed so).
  for (const size_t at : bool_offsets(op)) {
    if (at < size) reinterpret_cast<uint8_t*>(a.storage.data())[at] &= 1;
  }
  // conv2d's padding may be up to 2^30, which asks for outputs of gigabytes: valid, but not
  // small. Keep padding in [0, 64] unless it is past the limit the core must refuse.
  if (op == CTL_OP_CONV2D || op == CTL_OP_CONV2D_BACKWARD_INPUT || op == CTL_OP_CONV2D_BACKWARD_WEIGHT) {
    for (size_t k = 0; k < 2; ++k) {
      const size_t at = offsetof(ctl_conv2d_attrs, padding) + k * sizeof(int64_t);
      if (at + sizeof(int64_t) > size) break;
      int64_t padding = 0;
      std::memcpy(&padding, reinterpret_cast<uint8_t*>(a.storage.data()) + at, sizeof padding);
      if (padding > 64 && padding <= (int64_t{1} << 30)) padding %= 65;
      std::memcpy(reinterpret_cast<uint8_t*>(a.storage.data()) + at, &padding, sizeof padding);
    }
  }
  return a;
}

// A dtype as an int (see raw_calls.h): mostly a real one, now and then anything.
int32_t take_dtype(Input& in) {
  const uint8_t b = in.byte();
  return b < 250 ? b % CTL_DTYPE_COUNT_ : in.raw<int32_t>();
}

// A small tensor with contents from the input, sometimes viewed as strided or broadcast.
ctl_tensor* take_tensor(Input& in, ctl_device* device) {
  const int32_t dtype = take_dtype(in);
  std::array<int64_t, 4> shape{};
  const size_t rank = in.below(5);
  int64_t numel = 1;
  for (size_t i = 0; i < rank; ++i) numel *= (shape[i] = in.byte() % 4);
  const size_t element = fuzz_dtype_size(dtype);
  std::vector<uint8_t> bytes = in.bytes(static_cast<size_t>(numel) * element + 1);
  if (dtype == CTL_DTYPE_BOOL) {
    for (auto& b : bytes) b &= 1;  // a bool is one byte, 0 or 1
  }
  ctl_tensor* t = nullptr;
  if (!fuzz::ok(fuzz_tensor_from_host(device, dtype, rank, shape.data(), bytes.data(), bytes.size() - 1, &t))) {
    return nullptr;
  }
  ctl_tensor* view = nullptr;
  switch (in.below(4)) {
    case 1:
      if (rank >= 2 && fuzz::ok(ctl_tensor_transpose(t, 0, -1, &view))) std::swap(t, view);
      break;
    case 2:
      if (rank >= 1 && fuzz::ok(ctl_tensor_slice(t, -1, in.below(3), 4, 1 + in.below(2), &view))) std::swap(t, view);
      break;
    case 3: {
      std::array<int64_t, 5> wide{};
      wide[0] = in.below(3);
      for (size_t i = 0; i < rank; ++i) wide[i + 1] = shape[i] == 1 ? in.below(4) : shape[i];
      if (fuzz::ok(ctl_tensor_expand(t, rank + 1, wide.data(), &view))) std::swap(t, view);
      break;
    }
    default:
      break;
  }
  if (view) ctl_tensor_release(view);  // the source; the view keeps its storage
  return t;
}

void check_bools(const ctl_tensor* t, const std::vector<uint8_t>& bytes) {
  if (ctl_tensor_dtype(t) != CTL_DTYPE_BOOL) return;
  for (uint8_t b : bytes) {
    if (b > 1) fuzz::fail("a bool output holds a byte other than 0 and 1");
  }
}

// Runs one call and checks what the ABI promises of it.
void run_one(Input& in, fuzz::Pool& pool) {
  const uint8_t which = in.byte();
  const uint32_t op = which < 245 ? kOps[which % kOpCount] : in.raw<uint32_t>();
  std::vector<ctl_tensor*> inputs(in.below(5));
  for (auto& input : inputs) input = in.byte() < 250 ? pool.pick(in) : nullptr;
  const Attrs attrs = take_attrs(in, op);
  const size_t output_count = in.below(4);
  std::vector<std::vector<uint8_t>> before;
  for (ctl_tensor* input : inputs) before.push_back(input ? fuzz::host_bytes(input) : std::vector<uint8_t>{});

  std::vector<ctl_tensor*> outputs(output_count + 1, fuzz::sentinel());
  const uint8_t form = in.byte();
  ctl_status* status = nullptr;
  size_t made = output_count;
  if (form < 150) {
    status = fuzz_op_run(op, inputs.size(), inputs.data(), attrs.get(), output_count, outputs.data());
  } else if (form < 200) {
    // Into tensors of the pool (in-place ops, fill, arange and random need this form).
    for (size_t i = 0; i < output_count; ++i) outputs[i] = pool.pick(in);
    made = 0;
    status = fuzz_op_run_into(op, inputs.size(), inputs.data(), attrs.get(), output_count, outputs.data());
  } else {
    made = 1;
    ctl_tensor* a = inputs.empty() ? nullptr : inputs[0];
    ctl_tensor* b = inputs.size() < 2 ? pool.pick(in) : inputs[1];
    switch (form % 6) {
      case 0:
        status = fuzz_op_unary(op, a, &outputs[0]);
        break;
      case 1:
        status = fuzz_op_binary(op, a, b, &outputs[0]);
        break;
      case 2:
        status = ctl_op_matmul(a, b, &outputs[0]);
        break;
      case 3:
        status = ctl_op_softmax(a, in.integer(), &outputs[0]);
        break;
      case 4: {
        std::vector<int64_t> axes(in.below(10));
        for (auto& axis : axes) axis = in.integer();
        status = fuzz_op_reduce(op, a, axes.size(), axes.empty() && in.byte() & 1 ? nullptr : axes.data(),
                                in.byte() & 1, &outputs[0]);
        break;
      }
      default:
        status = fuzz_op_cast(a, take_dtype(in), &outputs[0]);
        break;
    }
  }
  const bool succeeded = fuzz::ok(status);
  if (outputs[output_count] != fuzz::sentinel() && made <= output_count) {
    fuzz::fail("an op wrote past the outputs it was given");
  }
  for (size_t i = 0; i < made; ++i) {
    if (!succeeded && outputs[i] != fuzz::sentinel()) fuzz::fail("a failed op wrote an out-parameter");
    if (succeeded && (!outputs[i] || outputs[i] == fuzz::sentinel())) fuzz::fail("an op succeeded without an output");
    if (succeeded) pool.add(outputs[i]);
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] && fuzz::host_bytes(inputs[i]) != before[i]) fuzz::fail("an op changed one of its inputs");
  }
  if (succeeded) {
    for (size_t i = 0; i < output_count || (made == 1 && i < 1); ++i) {
      if (outputs[i] && outputs[i] != fuzz::sentinel()) check_bools(outputs[i], fuzz::host_bytes(outputs[i]));
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Runtime& rt = fuzz::Runtime::get();
  Input in(data, size);
  fuzz::Pool pool;
  const size_t count = 1 + in.below(4);
  for (size_t i = 0; i < count; ++i) {
    if (ctl_tensor* t = take_tensor(in, rt.cpu)) pool.add(t);
  }
  for (int step = 0; step < 6 && !in.empty(); ++step) run_one(in, pool);
  return 0;
}
