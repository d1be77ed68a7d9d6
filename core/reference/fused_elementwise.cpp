// fused_elementwise.cpp — the reference kernel of CTL_OP_FUSED_ELEMENTWISE (ABI 1.5): each
// instruction of the program runs as its own reference op, through the very kernel that op
// uses, into a whole temporary tensor of the output's dtype, and the last one into the
// output. Every intermediate is therefore rounded to the dtype exactly as the separate op's
// output is, and the fused result equals the unfused chain of reference ops bit for bit by
// construction; that is the definition of the op (catalyst.h), and the suite holds devices
// to it. Speed is not the point here: the plugins run the program in one pass.
#include <vector>

#include "catalyst/sdk/fused_program.hpp"
#include "op_registry.h"

namespace catalyst::reference {

ctl_status* run_fused_elementwise(const Call& call) {
  ctl_fused_elementwise_attrs program;
  const sdk::Check check = sdk::read_fused_program(call.attrs, static_cast<uint32_t>(call.in.size()), &program);
  if (!check.ok()) {
    return check.code == CTL_STATUS_UNSUPPORTED ? call.unsupported("%s", check.message)
                                                : call.invalid("%s", check.message);
  }
  const Operand& out = call.out[0];
  for (size_t i = 0; i < call.in.size(); ++i) {
    if (!same_shape(call.in[i], out)) {
      return call.invalid(
          "input[%zu] has shape %s but the output has %s (inputs must be broadcast to the output shape)", i,
          shape_string(call.in[i]).c_str(), shape_string(out).c_str());
    }
  }
  const uint32_t inputs = static_cast<uint32_t>(call.in.size());
  const uint32_t count = program.instruction_count;

  // Register r's last reader, so that a temporary is freed once nothing needs it.
  std::vector<uint32_t> last_use(inputs + count, 0);
  for (uint32_t i = 0; i < count; ++i) {
    const ctl_fused_instruction& in = program.program[i];
    last_use[in.a] = i;
    if (sdk::fused_instruction_arity(raw_enum(in.op)) == 2) last_use[in.b] = i;
  }

  // Temporaries are contiguous tensors of the output's shape and dtype.
  std::vector<int64_t> strides(out.rank);
  int64_t stride = 1;
  for (uint32_t d = out.rank; d-- > 0;) {
    strides[d] = stride;
    stride *= out.shape[d];
  }
  const size_t bytes = static_cast<size_t>(out.numel()) * out.element_size;
  std::vector<std::vector<unsigned char>> storage(count);
  std::vector<Operand> registers(call.in.begin(), call.in.end());
  registers.resize(inputs + count);

  for (uint32_t i = 0; i < count; ++i) {
    const ctl_fused_instruction& instruction = program.program[i];
    const OpInfo* info = find_op(raw_enum(instruction.op));
    if (!info) return call.invalid("program[%u]: op %lld has no reference kernel", i, raw_enum(instruction.op));
    Operand& result = registers[inputs + i];
    if (i + 1 == count) {
      result = out;
    } else {
      storage[i].resize(bytes);
      result = out;
      result.base = storage[i].data();
      result.strides = strides.data();
    }
    Call step;
    step.host = call.host;
    step.op = info->id;
    step.name = info->name;
    step.in.push_back(registers[instruction.a]);
    if (info->required_in == 2) step.in.push_back(registers[instruction.b]);
    step.out.push_back(result);
    if (ctl_status* status = info->kernel(step)) return status;
    // Free the temporaries this instruction read for the last time.
    const uint32_t operands[2] = {instruction.a, info->required_in == 2 ? instruction.b : instruction.a};
    for (uint32_t r : operands) {
      if (r >= inputs && last_use[r] == i) std::vector<unsigned char>().swap(storage[r - inputs]);
    }
  }
  return nullptr;
}

}  // namespace catalyst::reference
