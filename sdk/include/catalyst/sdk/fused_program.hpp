// fused_program.hpp — checking the program of CTL_OP_FUSED_ELEMENTWISE (ctl_fused_elementwise_attrs)
// before it runs, so the core and every plugin refuse the same programs in the same words.
// A program is straight-line: registers 0 .. input_count-1 are the inputs, instruction i
// writes register input_count + i and reads only registers written before it.
#pragma once

#include <cstdint>
#include <cstring>

#include "catalyst/sdk/check.hpp"
#include "catalyst/sdk/raw_field.hpp"
#include "catalyst_plugin.h"

namespace catalyst::sdk {

// 1 for the unary ops a program may hold (neg .. reciprocal), 2 for the binary ones (add ..
// minimum, gelu_backward, gelu_tanh_backward: a = dy, b = x), 0 for any other value. `op` is
// read as a plain integer: a program from C may hold anything there.
inline uint32_t fused_instruction_arity(int64_t op) {
  if (op >= CTL_OP_NEG && op <= CTL_OP_RECIPROCAL) return 1;
  if (op >= CTL_OP_ADD && op <= CTL_OP_MINIMUM) return 2;
  if (op == CTL_OP_GELU_BACKWARD || op == CTL_OP_GELU_TANH_BACKWARD) return 2;
  return 0;
}

// Copies the caller's attrs into *out and checks the program for `input_count` inputs:
// attrs given and not smaller than the struct, 1 .. CTL_FUSED_MAX_INPUTS inputs,
// 1 .. CTL_FUSED_MAX_INSTRUCTIONS instructions, each an allowed op whose operands are
// registers already written. Every message names the instruction and the value at fault.
inline Check read_fused_program(const void* attrs, uint32_t input_count, ctl_fused_elementwise_attrs* out) {
  std::memset(out, 0, sizeof *out);
  if (!attrs) {
    return check_failed(CTL_STATUS_INVALID_ARGUMENT, "attrs is NULL; pass a ctl_fused_elementwise_attrs");
  }
  const size_t size = *static_cast<const size_t*>(attrs);
  if (size < CTL_FUSED_ELEMENTWISE_ATTRS_STRUCT_SIZE) {
    return check_failed(CTL_STATUS_INVALID_ARGUMENT,
                        "attrs: ctl_fused_elementwise_attrs struct_size %zu is smaller than %zu", size,
                        static_cast<size_t>(CTL_FUSED_ELEMENTWISE_ATTRS_STRUCT_SIZE));
  }
  std::memcpy(out, attrs, sizeof *out);  // a newer, larger struct: only the fields known here
  out->struct_size = CTL_FUSED_ELEMENTWISE_ATTRS_STRUCT_SIZE;
  if (input_count < 1 || input_count > CTL_FUSED_MAX_INPUTS) {
    return check_failed(CTL_STATUS_INVALID_ARGUMENT, "input_count is %u; the fused op takes 1 to %d inputs",
                        input_count, CTL_FUSED_MAX_INPUTS);
  }
  if (out->instruction_count < 1 || out->instruction_count > CTL_FUSED_MAX_INSTRUCTIONS) {
    return check_failed(CTL_STATUS_INVALID_ARGUMENT, "attrs->instruction_count is %u; it must be 1 to %d",
                        out->instruction_count, CTL_FUSED_MAX_INSTRUCTIONS);
  }
  for (uint32_t i = 0; i < out->instruction_count; ++i) {
    const ctl_fused_instruction& in = out->program[i];
    const int64_t op = raw_enum(in.op);
    const uint32_t arity = fused_instruction_arity(op);
    if (arity == 0) {
      return check_failed(CTL_STATUS_INVALID_ARGUMENT,
                          "attrs->program[%u].op is %lld; an instruction is a float elementwise op (neg .. "
                          "reciprocal, add .. minimum, gelu_backward, gelu_tanh_backward)",
                          i, static_cast<long long>(op));
    }
    const uint32_t written = input_count + i;  // registers 0 .. written-1 hold values
    if (in.a >= written) {
      return check_failed(CTL_STATUS_INVALID_ARGUMENT,
                          "attrs->program[%u].a is register %u; only registers 0 to %u are written before it "
                          "(%u inputs, %u instructions)",
                          i, static_cast<unsigned>(in.a), written - 1, input_count, i);
    }
    if (arity == 2 && in.b >= written) {
      return check_failed(CTL_STATUS_INVALID_ARGUMENT,
                          "attrs->program[%u].b is register %u; only registers 0 to %u are written before it "
                          "(%u inputs, %u instructions)",
                          i, static_cast<unsigned>(in.b), written - 1, input_count, i);
    }
  }
  return Check();
}

}  // namespace catalyst::sdk
