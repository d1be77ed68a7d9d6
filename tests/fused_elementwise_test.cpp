// fused_elementwise_test.cpp — CTL_OP_FUSED_ELEMENTWISE (ABI 1.5) through the public C API.
//
// The op's promise (catalyst.h) is that a device computing each instruction as its own op
// does gives the unfused result bit for bit. So the main test runs random programs on every
// device here (the reference device, the CPU plugin, the OpenCL plugin where it is built)
// and compares the fused output with the same program run as separate ctl_op_run calls on
// the same device: every bit, with broadcast, strided and special-valued inputs, in each
// float dtype the device claims. The other tests pin the statuses the core gives bad
// programs and a call that autograd would have to record.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "catalyst/sdk/half.hpp"
#include "test_support.hpp"

using namespace ctltest;

namespace {

constexpr ctl_op_id kUnary[] = {CTL_OP_NEG,       CTL_OP_ABS,  CTL_OP_EXP,     CTL_OP_LOG,  CTL_OP_SQRT,
                                CTL_OP_RSQRT,     CTL_OP_TANH, CTL_OP_SIGMOID, CTL_OP_RELU, CTL_OP_GELU,
                                CTL_OP_GELU_TANH, CTL_OP_SILU, CTL_OP_SIN,     CTL_OP_COS,  CTL_OP_RECIPROCAL};
constexpr ctl_op_id kBinary[] = {CTL_OP_ADD,     CTL_OP_SUB,           CTL_OP_MUL,
                                 CTL_OP_DIV,     CTL_OP_POW,           CTL_OP_MAXIMUM,
                                 CTL_OP_MINIMUM, CTL_OP_GELU_BACKWARD, CTL_OP_GELU_TANH_BACKWARD};

bool is_binary(ctl_op_id op) {
  for (ctl_op_id b : kBinary) {
    if (b == op) return true;
  }
  return false;
}

ctl_fused_elementwise_attrs make_attrs(const std::vector<ctl_fused_instruction>& program) {
  ctl_fused_elementwise_attrs a{};
  a.struct_size = CTL_FUSED_ELEMENTWISE_ATTRS_STRUCT_SIZE;
  a.instruction_count = static_cast<uint32_t>(program.size());
  for (size_t i = 0; i < program.size() && i < CTL_FUSED_MAX_INSTRUCTIONS; ++i) a.program[i] = program[i];
  return a;
}

// A random program over `inputs` registers: every instruction reads registers written
// before it; most read the latest one, so chains are long, and some reach back (trees).
std::vector<ctl_fused_instruction> random_program(std::mt19937_64& rng, uint32_t inputs, uint32_t count) {
  std::vector<ctl_fused_instruction> program;
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t written = inputs + i;
    auto pick = [&] {
      const bool latest = written > inputs && rng() % 3 != 0;
      return static_cast<uint16_t>(latest ? written - 1 : rng() % written);
    };
    ctl_fused_instruction in{};
    const bool binary = rng() % 2 == 0;
    in.op = binary ? kBinary[rng() % std::size(kBinary)] : kUnary[rng() % std::size(kUnary)];
    in.a = pick();
    in.b = binary ? static_cast<uint16_t>(rng() % written) : 0;
    program.push_back(in);
  }
  return program;
}

// Bytes of one element of `dtype` holding v (rounded to nearest even).
void put(ctl_dtype dtype, double v, unsigned char* p) {
  switch (dtype) {
    case CTL_DTYPE_F32: {
      const float f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
      break;
    }
    case CTL_DTYPE_F64:
      std::memcpy(p, &v, 8);
      break;
    case CTL_DTYPE_F16: {
      const uint16_t h = catalyst::sdk::double_to_half(v);
      std::memcpy(p, &h, 2);
      break;
    }
    default: {
      const uint16_t h = catalyst::sdk::double_to_bf16(v);
      std::memcpy(p, &h, 2);
      break;
    }
  }
}

bool is_nan(ctl_dtype dtype, const unsigned char* p) {
  switch (dtype) {
    case CTL_DTYPE_F32: {
      float f;
      std::memcpy(&f, p, 4);
      return std::isnan(f);
    }
    case CTL_DTYPE_F64: {
      double d;
      std::memcpy(&d, p, 8);
      return std::isnan(d);
    }
    case CTL_DTYPE_F16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
    }
    default: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return (h & 0x7f80) == 0x7f80 && (h & 0x7f) != 0;
    }
  }
}

std::string hex(const unsigned char* p, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s = "0x";
  for (size_t i = n; i-- > 0;) {
    s += digits[p[i] >> 4];
    s += digits[p[i] & 15];
  }
  return s;
}

Tensor from_bytes(ctl_device* device, ctl_dtype dtype, const std::vector<int64_t>& shape,
                  const std::vector<unsigned char>& bytes) {
  ctl_tensor* t = nullptr;
  Status s(ctl_tensor_from_host(device, dtype, shape.size(), shape.data(), bytes.data(), bytes.size(), &t));
  EXPECT_EQ(s, nullptr) << describe(s.get());
  return Tensor(t);
}

std::vector<unsigned char> to_bytes(ctl_tensor* tensor) {
  ctl_tensor* contiguous = nullptr;
  Status s(ctl_tensor_contiguous(tensor, &contiguous));
  EXPECT_EQ(s, nullptr) << describe(s.get());
  Tensor owner(contiguous);
  std::vector<unsigned char> out(static_cast<size_t>(ctl_tensor_numel(contiguous)) *
                                 ctl_dtype_size(info_of(contiguous).dtype));
  Status s2(ctl_tensor_to_host(contiguous, out.data(), out.size()));
  EXPECT_EQ(s2, nullptr) << describe(s2.get());
  return out;
}

// Random values, about 1 in 12 special (±0, ±inf, NaN, a subnormal, a large value).
std::vector<unsigned char> random_bytes(std::mt19937_64& rng, ctl_dtype dtype, int64_t n) {
  const size_t size = ctl_dtype_size(dtype);
  std::vector<unsigned char> bytes(static_cast<size_t>(n) * size);
  std::uniform_real_distribution<double> dist(-3.0, 3.0);
  const double specials[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1e-40, -6e4, 0.5, -0.7518};
  for (int64_t i = 0; i < n; ++i) {
    const double v = rng() % 12 == 0 ? specials[rng() % std::size(specials)] : dist(rng);
    put(dtype, v, &bytes[static_cast<size_t>(i) * size]);
  }
  return bytes;
}

struct Devices {
  Runtime runtime;
  std::vector<std::pair<std::string, ctl_device*>> list;  // plugin name, device
};

Devices make_devices() {
  std::vector<const char*> paths = {CTL_TEST_CPU_PLUGIN};
#ifdef CTL_TEST_OPENCL_PLUGIN
  paths.push_back(CTL_TEST_OPENCL_PLUGIN);
#endif
  ctl_runtime_options o = options(&paths, nullptr, true);
  ctl_runtime* runtime = nullptr;
  Status s(ctl_runtime_create(&o, &runtime));
  EXPECT_EQ(s, nullptr) << describe(s.get());
  Devices d{Runtime(runtime), {}};
  for (const char* name : {"reference", "cpu", "opencl"}) {
    if (ctl_device* device = find_device(runtime, name)) d.list.emplace_back(name, device);
  }
  return d;
}

bool claims(ctl_device* device, ctl_dtype dtype) {
  ctl_device_info info{};
  info.struct_size = CTL_DEVICE_INFO_STRUCT_SIZE;
  Status s(ctl_device_get_info(device, &info));
  return !s && (info.dtype_mask & CTL_DTYPE_BIT(dtype));
}

// How input k of a trial is shaped and laid out.
enum class Shape { kFull, kRow, kColumn, kScalar, kTransposed, kSliced };

// One input as a tensor of `rows` x `cols` (or a broadcastable shape) in the given form.
Tensor make_input(ctl_device* device, ctl_dtype dtype, Shape form, int64_t rows, int64_t cols, std::mt19937_64& rng) {
  switch (form) {
    case Shape::kRow:
      return from_bytes(device, dtype, {cols}, random_bytes(rng, dtype, cols));
    case Shape::kColumn:
      return from_bytes(device, dtype, {rows, 1}, random_bytes(rng, dtype, rows));
    case Shape::kScalar:
      return from_bytes(device, dtype, {}, random_bytes(rng, dtype, 1));
    case Shape::kTransposed: {
      Tensor base = from_bytes(device, dtype, {cols, rows}, random_bytes(rng, dtype, rows * cols));
      ctl_tensor* t = nullptr;
      Status s(ctl_tensor_transpose(base.get(), 0, 1, &t));
      EXPECT_EQ(s, nullptr) << describe(s.get());
      return Tensor(t);
    }
    case Shape::kSliced: {
      Tensor base = from_bytes(device, dtype, {rows, 2 * cols + 1}, random_bytes(rng, dtype, rows * (2 * cols + 1)));
      ctl_tensor* t = nullptr;
      Status s(ctl_tensor_slice(base.get(), 1, 1, 2 * cols + 1, 2, &t));
      EXPECT_EQ(s, nullptr) << describe(s.get());
      return Tensor(t);
    }
    case Shape::kFull:
      break;
  }
  return from_bytes(device, dtype, {rows, cols}, random_bytes(rng, dtype, rows * cols));
}

// The program as separate ops: each instruction one ctl_op_run on the registers so far.
// Returns the last register (broadcast as the ops broadcast, so maybe smaller than rows x cols).
Tensor run_unfused(const std::vector<ctl_tensor*>& inputs, const std::vector<ctl_fused_instruction>& program,
                   std::string* error) {
  std::vector<Tensor> owned;
  std::vector<ctl_tensor*> registers(inputs);
  for (const ctl_fused_instruction& in : program) {
    ctl_tensor* args[2] = {registers[in.a], registers[in.b]};
    ctl_tensor* out = nullptr;
    Status s(ctl_op_run(in.op, is_binary(in.op) ? 2 : 1, args, nullptr, 1, &out));
    if (s) {
      *error = describe(s.get());
      return nullptr;
    }
    owned.emplace_back(out);
    registers.push_back(out);
  }
  ctl_tensor* last = registers.back();
  ctl_tensor_retain(last);
  return Tensor(last);
}

std::string program_text(const std::vector<ctl_fused_instruction>& program, uint32_t inputs) {
  std::string s;
  for (size_t i = 0; i < program.size(); ++i) {
    const ctl_fused_instruction& in = program[i];
    s += "r" + std::to_string(inputs + i) + " = " + ctl_op_name(in.op) + "(r" + std::to_string(in.a);
    if (is_binary(in.op)) s += ", r" + std::to_string(in.b);
    s += "); ";
  }
  return s;
}

// Every element of `fused` (rows x cols) against `unfused`, which may be broadcast-smaller
// ([cols], [rows, 1], []): equal bits, or NaN on both sides (no op defines a NaN's payload).
void compare(ctl_tensor* fused, ctl_tensor* unfused, int64_t rows, int64_t cols, ctl_dtype dtype,
             const std::string& context) {
  ASSERT_EQ(ctl_tensor_rank(fused), 2u);
  ASSERT_EQ(ctl_tensor_dim(fused, 0), rows);
  ASSERT_EQ(ctl_tensor_dim(fused, 1), cols);
  const std::vector<unsigned char> got = to_bytes(fused), want = to_bytes(unfused);
  const int64_t want_rank = static_cast<int64_t>(ctl_tensor_rank(unfused));
  const int64_t want_rows = want_rank == 2 ? ctl_tensor_dim(unfused, 0) : 1;
  const int64_t want_cols = want_rank >= 1 ? ctl_tensor_dim(unfused, want_rank - 1) : 1;
  const size_t size = ctl_dtype_size(dtype);
  int mismatches = 0;
  for (int64_t r = 0; r < rows && mismatches < 3; ++r) {
    for (int64_t c = 0; c < cols && mismatches < 3; ++c) {
      const unsigned char* g = &got[static_cast<size_t>(r * cols + c) * size];
      const int64_t wi = (want_rows == 1 ? 0 : r) * want_cols + (want_cols == 1 ? 0 : c);
      const unsigned char* w = &want[static_cast<size_t>(wi) * size];
      if (std::memcmp(g, w, size) == 0 || (is_nan(dtype, g) && is_nan(dtype, w))) continue;
      ++mismatches;
      ADD_FAILURE() << context << "\n  " << rows << "x" << cols << " " << ctl_dtype_name(dtype) << ": element [" << r
                    << "," << c << "] fused " << hex(g, size) << ", unfused " << hex(w, size);
    }
  }
}

// Random programs on `device` in `dtype`: fused and unfused agree in every bit (any NaN
// matches any NaN: no op defines a payload). Returns the number of programs run.
int check_bit_identity(ctl_device* device, ctl_dtype dtype, uint64_t seed, int trials) {
  std::mt19937_64 rng(seed);
  int run = 0;
  for (int trial = 0; trial < trials; ++trial) {
    const int64_t rows = 1 + static_cast<int64_t>(rng() % 40), cols = 1 + static_cast<int64_t>(rng() % 90);
    const uint32_t input_count = 1 + static_cast<uint32_t>(rng() % 4);
    const uint32_t count = 1 + static_cast<uint32_t>(rng() % CTL_FUSED_MAX_INSTRUCTIONS);
    std::vector<Tensor> owned;
    std::vector<ctl_tensor*> inputs;
    for (uint32_t k = 0; k < input_count; ++k) {
      // Input 0 is always full size, so the output is rows x cols.
      const Shape form = k == 0 ? (rng() % 2 ? Shape::kFull : Shape::kTransposed) : static_cast<Shape>(rng() % 6);
      owned.push_back(make_input(device, dtype, form, rows, cols, rng));
      inputs.push_back(owned.back().get());
    }
    const std::vector<ctl_fused_instruction> program = random_program(rng, input_count, count);
    const ctl_fused_elementwise_attrs attrs = make_attrs(program);
    ctl_tensor* fused_raw = nullptr;
    Status s(ctl_op_run(CTL_OP_FUSED_ELEMENTWISE, inputs.size(), inputs.data(), &attrs, 1, &fused_raw));
    if (s && ctl_status_get_code(s.get()) == CTL_STATUS_UNSUPPORTED) continue;  // dtype not on this device
    EXPECT_EQ(s, nullptr) << describe(s.get());
    if (s) return run;
    Tensor fused(fused_raw);
    std::string error;
    Tensor unfused = run_unfused(inputs, program, &error);
    EXPECT_TRUE(unfused) << error;
    if (!unfused) return run;
    compare(fused.get(), unfused.get(), rows, cols, dtype,
            "seed " + std::to_string(seed) + " trial " + std::to_string(trial) + ", " + std::to_string(input_count) +
                " inputs, program: " + program_text(program, input_count));
    ++run;
  }
  return run;
}

class FusedElementwise : public ::testing::Test {
 protected:
  void SetUp() override {
    devices_ = make_devices();
    ASSERT_NE(devices_.runtime, nullptr);
    // No recording: the fused op has no gradient rule (see the autograd test below).
    CTL_ASSERT_OK(ctl_runtime_set_grad_enabled(devices_.runtime.get(), false, nullptr));
  }
  ctl_device* device(const std::string& name) {
    for (auto& [n, d] : devices_.list) {
      if (n == name) return d;
    }
    return nullptr;
  }
  Devices devices_;
};

TEST_F(FusedElementwise, RandomProgramsMatchTheUnfusedOpsBitForBit) {
  for (auto& [name, dev] : devices_.list) {
    for (ctl_dtype dtype : {CTL_DTYPE_F32, CTL_DTYPE_BF16, CTL_DTYPE_F16, CTL_DTYPE_F64}) {
      // f32 and bf16 on every device; f16 and f64 where the device claims them.
      if (!claims(dev, dtype)) {
        EXPECT_TRUE(dtype == CTL_DTYPE_F16 || dtype == CTL_DTYPE_F64) << name << " lacks " << ctl_dtype_name(dtype);
        continue;
      }
      SCOPED_TRACE(name + " " + ctl_dtype_name(dtype));
      // OpenCL builds a program per distinct program (seconds each on PoCL): fewer there.
      const int trials = name == "opencl" ? 8 : 40;
      const int run = check_bit_identity(dev, dtype, 1000 + static_cast<uint64_t>(dtype), trials);
      EXPECT_EQ(run, trials) << name << " ran " << run << " of " << trials << " programs in " << ctl_dtype_name(dtype);
    }
  }
}

// A larger tensor than any tile, with every input broadcast a different way.
TEST_F(FusedElementwise, LargeBroadcastChainOnEveryDevice) {
  for (auto& [name, dev] : devices_.list) {
    SCOPED_TRACE(name);
    std::mt19937_64 rng(7);
    const int64_t rows = 65, cols = 1031;
    Tensor x = make_input(dev, CTL_DTYPE_F32, Shape::kTransposed, rows, cols, rng);
    Tensor row = make_input(dev, CTL_DTYPE_F32, Shape::kRow, rows, cols, rng);
    Tensor column = make_input(dev, CTL_DTYPE_F32, Shape::kColumn, rows, cols, rng);
    Tensor scalar = make_input(dev, CTL_DTYPE_F32, Shape::kScalar, rows, cols, rng);
    std::vector<ctl_tensor*> inputs = {x.get(), row.get(), column.get(), scalar.get()};
    // gelu_backward(dy = x * row + column, x) / scalar, then tanh
    const std::vector<ctl_fused_instruction> program = {
        {CTL_OP_MUL, 0, 1}, {CTL_OP_ADD, 4, 2}, {CTL_OP_GELU_BACKWARD, 5, 0}, {CTL_OP_DIV, 6, 3}, {CTL_OP_TANH, 7, 0}};
    const ctl_fused_elementwise_attrs attrs = make_attrs(program);
    ctl_tensor* fused = nullptr;
    CTL_ASSERT_OK(ctl_op_run(CTL_OP_FUSED_ELEMENTWISE, inputs.size(), inputs.data(), &attrs, 1, &fused));
    Tensor owner(fused);
    std::string error;
    Tensor unfused = run_unfused(inputs, program, &error);
    ASSERT_TRUE(unfused) << error;
    compare(fused, unfused.get(), rows, cols, CTL_DTYPE_F32, "gelu_backward chain");
  }
}

// The core's checks: each bad program gets INVALID_ARGUMENT naming the instruction and value.
// The CPU plugin runs exp, tanh, sigmoid, silu, gelu_tanh and gelu_tanh_backward in f16
// and bf16 through its f32 vector kernels where the operands are contiguous along the run,
// and per element in double elsewhere; the two differ in the last bit now and then. A
// transposed input or a broadcast row sends the separate op down the per-element path,
// while the fused op gathers both into contiguous tiles: its plan must still take that
// path. Large enough (265K elements) that the two paths would differ somewhere.
TEST_F(FusedElementwise, CpuHalfVectorOpsTakeTheSeparateOpsPathOnStridedInputs) {
  ctl_device* dev = device("cpu");
  ASSERT_NE(dev, nullptr);
  for (ctl_dtype dtype : {CTL_DTYPE_BF16, CTL_DTYPE_F16}) {
    std::mt19937_64 rng(11);
    const int64_t rows = 257, cols = 1031;
    Tensor x = make_input(dev, dtype, Shape::kTransposed, rows, cols, rng);
    Tensor row = make_input(dev, dtype, Shape::kRow, rows, cols, rng);
    std::vector<ctl_tensor*> inputs = {x.get(), row.get()};
    for (ctl_op_id op : {CTL_OP_EXP, CTL_OP_TANH, CTL_OP_SIGMOID, CTL_OP_SILU, CTL_OP_GELU_TANH,
                         CTL_OP_GELU_TANH_BACKWARD, CTL_OP_GELU, CTL_OP_GELU_BACKWARD}) {
      // gelu_tanh_backward and gelu_backward(dy = row, x); the unary ops of x.
      const std::vector<ctl_fused_instruction> program = {{op, static_cast<uint16_t>(is_binary(op) ? 1 : 0), 0}};
      const ctl_fused_elementwise_attrs attrs = make_attrs(program);
      ctl_tensor* fused = nullptr;
      CTL_ASSERT_OK(ctl_op_run(CTL_OP_FUSED_ELEMENTWISE, inputs.size(), inputs.data(), &attrs, 1, &fused));
      Tensor owner(fused);
      std::string error;
      Tensor unfused = run_unfused(inputs, program, &error);
      ASSERT_TRUE(unfused) << error;
      compare(fused, unfused.get(), rows, cols, dtype, ctl_op_name(op));
    }
  }
}

TEST_F(FusedElementwise, BadProgramsGetClearStatuses) {
  ctl_device* dev = device("reference");
  ASSERT_NE(dev, nullptr);
  std::mt19937_64 rng(3);
  Tensor a = make_input(dev, CTL_DTYPE_F32, Shape::kFull, 3, 4, rng);
  Tensor b = make_input(dev, CTL_DTYPE_F32, Shape::kRow, 3, 4, rng);
  std::vector<ctl_tensor*> two = {a.get(), b.get()};
  struct BadCase {
    std::string what;
    ctl_fused_elementwise_attrs attrs;
    std::string needle;
  };
  std::vector<BadCase> cases;
  auto program = [](std::vector<ctl_fused_instruction> p) { return make_attrs(p); };
  cases.push_back({"no instructions", program({}), "instruction_count is 0"});
  {
    ctl_fused_elementwise_attrs many = program({{CTL_OP_NEG, 0, 0}});
    many.instruction_count = CTL_FUSED_MAX_INSTRUCTIONS + 1;
    cases.push_back({"17 instructions", many, "instruction_count is 17"});
  }
  cases.push_back({"a comparison", program({{CTL_OP_NEG, 0, 0}, {CTL_OP_EQ, 2, 1}}), "program[1].op is 39"});
  cases.push_back({"an unknown op", program({{static_cast<ctl_op_id>(999), 0, 0}}), "program[0].op is 999"});
  cases.push_back({"where", program({{CTL_OP_WHERE, 0, 1}}), "program[0].op is 45"});
  cases.push_back({"softmax_backward", program({{CTL_OP_SOFTMAX_BACKWARD, 0, 1}}), "program[0].op is 224"});
  cases.push_back({"a register not yet written", program({{CTL_OP_EXP, 2, 0}}), "program[0].a is register 2"});
  cases.push_back(
      {"b reads its own result", program({{CTL_OP_NEG, 0, 0}, {CTL_OP_ADD, 0, 3}}), "program[1].b is register 3"});
  cases.push_back({"b far out of range", program({{CTL_OP_MUL, 1, 60000}}), "program[0].b is register 60000"});
  {
    ctl_fused_elementwise_attrs small = program({{CTL_OP_NEG, 0, 0}});
    small.struct_size = sizeof(size_t) + sizeof(uint32_t);
    cases.push_back({"a short struct", small, "struct_size"});
  }
  for (const BadCase& c : cases) {
    ctl_tensor* out = nullptr;
    Status s(ctl_op_run(CTL_OP_FUSED_ELEMENTWISE, two.size(), two.data(), &c.attrs, 1, &out));
    ASSERT_NE(s, nullptr) << c.what << " was accepted";
    EXPECT_EQ(out, nullptr) << c.what;
    EXPECT_EQ(ctl_status_get_code(s.get()), CTL_STATUS_INVALID_ARGUMENT) << c.what << ": " << describe(s.get());
    EXPECT_NE(std::string(ctl_status_get_message(s.get())).find(c.needle), std::string::npos)
        << c.what << ": " << describe(s.get()) << " does not say '" << c.needle << "'";
  }
  // NULL attrs, no inputs, nine inputs.
  const ctl_fused_elementwise_attrs neg = program({{CTL_OP_NEG, 0, 0}});
  struct ArityCase {
    std::string what;
    std::vector<ctl_tensor*> inputs;
    const void* attrs;
    std::string needle;
  };
  const std::vector<ArityCase> arity = {
      {"NULL attrs", two, nullptr, "attrs is NULL"},
      {"no inputs", {}, &neg, "input_count is 0"},
      {"nine inputs", std::vector<ctl_tensor*>(9, a.get()), &neg, "input_count is 9"},
  };
  for (const ArityCase& c : arity) {
    ctl_tensor* out = nullptr;
    Status s(ctl_op_run(CTL_OP_FUSED_ELEMENTWISE, c.inputs.size(), c.inputs.data(), c.attrs, 1, &out));
    ASSERT_NE(s, nullptr) << c.what << " was accepted";
    EXPECT_EQ(ctl_status_get_code(s.get()), CTL_STATUS_INVALID_ARGUMENT) << c.what << ": " << describe(s.get());
    EXPECT_NE(std::string(ctl_status_get_message(s.get())).find(c.needle), std::string::npos)
        << c.what << ": " << describe(s.get());
  }
}

TEST_F(FusedElementwise, DtypesAndShapesAreChecked) {
  ctl_device* dev = device("reference");
  ASSERT_NE(dev, nullptr);
  const ctl_fused_elementwise_attrs add = make_attrs({{CTL_OP_ADD, 0, 1}});
  Tensor f32 = from_vector<float>(dev, CTL_DTYPE_F32, {2, 3}, std::vector<float>(6, 1.0f));
  Tensor f64 = from_vector<double>(dev, CTL_DTYPE_F64, {2, 3}, std::vector<double>(6, 1.0));
  Tensor i32 = from_vector<int32_t>(dev, CTL_DTYPE_I32, {2, 3}, std::vector<int32_t>(6, 1));
  Tensor wrong = from_vector<float>(dev, CTL_DTYPE_F32, {4}, std::vector<float>(4, 1.0f));
  struct DtypeCase {
    std::string what;
    std::vector<ctl_tensor*> inputs;
    std::string needle;
  };
  const std::vector<DtypeCase> cases = {
      {"mixed dtypes", {f32.get(), f64.get()}, "inputs[1] is f64 but inputs[0] is f32"},
      {"an integer dtype", {i32.get(), i32.get()}, "inputs[0] has dtype i32"},
      {"shapes that do not broadcast", {f32.get(), wrong.get()}, "does not broadcast"},
  };
  for (const DtypeCase& c : cases) {
    ctl_tensor* out = nullptr;
    Status s(ctl_op_run(CTL_OP_FUSED_ELEMENTWISE, c.inputs.size(), c.inputs.data(), &add, 1, &out));
    ASSERT_NE(s, nullptr) << c.what << " was accepted";
    EXPECT_EQ(ctl_status_get_code(s.get()), CTL_STATUS_INVALID_ARGUMENT) << c.what;
    EXPECT_NE(std::string(ctl_status_get_message(s.get())).find(c.needle), std::string::npos)
        << c.what << ": " << describe(s.get());
  }
}

// With recording on and an input that requires a gradient, the call is refused (it has no
// gradient rule) instead of recording a node that backward could not run.
TEST_F(FusedElementwise, RecordedCallsAreUnsupported) {
  ctl_device* dev = device("reference");
  ASSERT_NE(dev, nullptr);
  CTL_ASSERT_OK(ctl_runtime_set_grad_enabled(devices_.runtime.get(), true, nullptr));
  Tensor x = from_vector<float>(dev, CTL_DTYPE_F32, {4}, {1.0f, 2.0f, 3.0f, 4.0f});
  CTL_ASSERT_OK(ctl_tensor_set_requires_grad(x.get(), true));
  const ctl_fused_elementwise_attrs attrs = make_attrs({{CTL_OP_EXP, 0, 0}, {CTL_OP_NEG, 1, 0}});
  ctl_tensor* inputs[1] = {x.get()};
  ctl_tensor* out = nullptr;
  Status s(ctl_op_run(CTL_OP_FUSED_ELEMENTWISE, 1, inputs, &attrs, 1, &out));
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(out, nullptr);
  EXPECT_EQ(ctl_status_get_code(s.get()), CTL_STATUS_UNSUPPORTED) << describe(s.get());
  EXPECT_NE(std::string(ctl_status_get_message(s.get())).find("no gradient rule"), std::string::npos)
      << describe(s.get());
  // With recording off the same call runs.
  CTL_ASSERT_OK(ctl_runtime_set_grad_enabled(devices_.runtime.get(), false, nullptr));
  CTL_ASSERT_OK(ctl_op_run(CTL_OP_FUSED_ELEMENTWISE, 1, inputs, &attrs, 1, &out));
  Tensor owner(out);
  const std::vector<float> got = to_vector<float>(out);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_NEAR(got[0], -std::exp(1.0), 1e-6);
}

}  // namespace
