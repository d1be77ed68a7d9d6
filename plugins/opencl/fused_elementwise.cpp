// fused_elementwise.cpp — CTL_OP_FUSED_ELEMENTWISE (ABI 1.5): one generated kernel per distinct
// program and dtype, appended to kernels/elementwise.cl and built through the kernel cache
// (which keys programs by their source, so each program compiles once per process and is then
// loaded from the disk cache). Every instruction is written with the OP_<name> expression
// the separate op's kernel uses and its result is stored to and loaded from a private element
// of the dtype, exactly as the separate kernel's output is stored and the next op loads it:
// the fused result is the unfused one bit for bit where the device computes each expression
// the same way in both programs.
#include <string>
#include <utility>

#include "catalyst/sdk/fused_program.hpp"
#include "catalyst/sdk/op_dtypes.hpp"
#include "kernels.h"

namespace catalyst::opencl {
namespace {

constexpr size_t kMaxViews = CTL_FUSED_MAX_INPUTS + 1;

// The loop over all views (inputs, then the output), innermost axis first.
using FusedIteration = BasicIteration<kMaxViews>;

// The kernel "fused_elementwise" for this program, in the elementwise family's terms
// (T_, C_, LOAD, STORE and the OP_ expressions of kernels/elementwise.cl).
std::string generate(const ctl_fused_elementwise_attrs& program, uint32_t inputs) {
  std::string s = "#if IS_FLOAT(TA)\n__kernel void fused_elementwise(";
  for (uint32_t k = 0; k < inputs; ++k) {
    const std::string x = "x" + std::to_string(k);
    s += "__global const T_(TA)* " + x + ", long " + x + "_offset, ";
  }
  s += "__global T_(TA)* y, long y_offset, ";
  for (uint32_t k = 0; k < inputs; ++k) s += "long8 x" + std::to_string(k) + "_strides, ";
  s += "long8 y_strides, int rank, long8 shape, long n) {\n";
  s += "  FOR_EACH_ITEM(i, n) {\n    long8 index = ctl_unravel(i, rank, shape);\n";
  for (uint32_t k = 0; k < inputs; ++k) {
    const std::string x = "x" + std::to_string(k);
    s += "    C_(TA) r" + std::to_string(k) + " = LOAD(TA, " + x + ", " + x + "_offset + ctl_dot(index, " + x +
         "_strides));\n";
  }
  // One element of the dtype in private memory: each result is rounded through it.
  s += "    R_(TA) raw[1];\n    __private T_(TA)* s = (__private T_(TA)*)raw;\n";
  for (uint32_t i = 0; i < program.instruction_count; ++i) {
    const ctl_fused_instruction& in = program.program[i];
    const bool binary = sdk::fused_instruction_arity(in.op) == 2;
    // The op set's name is the suffix of the op's OP_ macro (the program is checked already).
    const std::string expr =
        std::string("OP_") + sdk::find_op_dtypes(sdk::raw_enum(in.op))->name + (binary ? "(p, q)" : "(v)");
    const std::string operands = binary ? "C_(TA) p = r" + std::to_string(in.a) + ", q = r" + std::to_string(in.b) + ";"
                                        : "C_(TA) v = r" + std::to_string(in.a) + ";";
    if (i + 1 == program.instruction_count) {
      s += "    { " + operands + " STORE(TA, y, y_offset + ctl_dot(index, y_strides), (" + expr + ")); }\n";
    } else {
      const std::string r = "r" + std::to_string(inputs + i);
      s += "    C_(TA) " + r + ";\n    { " + operands + " STORE(TA, s, 0, (" + expr + ")); " + r +
           " = LOAD(TA, s, 0); }\n";
    }
  }
  s += "  }\n}\n#endif\n";
  return s;
}

template <size_t N>
ctl_status* launch_inputs(const OpContext& ctx, Kernel* k, const DeviceView* const* views, const FusedIteration& it) {
  return [&]<size_t... I>(std::index_sequence<I...>) {
    const cl_long n = it.numel;
    // Every buffer and offset (inputs, then y), then every view's strides, then the loop.
    return ctx.launch(k, n, *views[I]..., *views[N], it.strides[I]..., it.strides[N], it.rank, it.shape, n);
  }
  (std::make_index_sequence<N>{});
}

}  // namespace

ctl_status* run_fused_elementwise(const OpContext& ctx) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(1, CTL_FUSED_MAX_INPUTS, 1, 1));
  const uint32_t inputs = ctx.call->input_count;
  ctl_fused_elementwise_attrs program;
  CTL_SDK_RETURN_IF_ERROR(ctx.check(sdk::read_fused_program(ctx.call->attrs, inputs, &program)));
  DeviceView views[kMaxViews];
  for (uint32_t k = 0; k < inputs; ++k) CTL_SDK_RETURN_IF_ERROR(ctx.input(k, "x", &views[k]));
  DeviceView& y = views[inputs];
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "y", &y));
  for (uint32_t k = 0; k < inputs; ++k) {
    CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(views[k], "an input", y.dtype));
    CTL_SDK_RETURN_IF_ERROR(ctx.expect_same_shape(y, "output 0 (y)", views[k], "an input"));
  }
  const DeviceView* pointers[kMaxViews];
  for (uint32_t k = 0; k <= inputs; ++k) pointers[k] = &views[k];
  const FusedIteration it = make_iteration<kMaxViews>(pointers, inputs + 1);
  if (it.numel == 0) return nullptr;
  Kernel* k = nullptr;
  // CTL_FUSED_PROGRAM leaves the family's separate kernels out of the build (elementwise.cl).
  CTL_SDK_RETURN_IF_ERROR(ctx.kernel("elementwise",
                                     std::string("-DTA=") + dtype_tag(y.dtype) + " -DCTL_FUSED_PROGRAM=1",
                                     "fused_elementwise", &k, generate(program, inputs)));
  switch (inputs) {
    case 1:
      return launch_inputs<1>(ctx, k, pointers, it);
    case 2:
      return launch_inputs<2>(ctx, k, pointers, it);
    case 3:
      return launch_inputs<3>(ctx, k, pointers, it);
    case 4:
      return launch_inputs<4>(ctx, k, pointers, it);
    case 5:
      return launch_inputs<5>(ctx, k, pointers, it);
    case 6:
      return launch_inputs<6>(ctx, k, pointers, it);
    case 7:
      return launch_inputs<7>(ctx, k, pointers, it);
    default:
      return launch_inputs<8>(ctx, k, pointers, it);
  }
}

}  // namespace catalyst::opencl
