// contract_bad_calls.cpp — the contract cases of bad calls: a malformed op call gets an error status, no crash, no
// write to its output, and leaves the stream usable.
#include "contract_support.h"

namespace catalyst::conformance::contract {
namespace {

// ---- bad calls ---------------------------------------------------------------------------

// What a malformed call may be answered with.
bool acceptable_refusal(ctl_status_code code) {
  return code == CTL_STATUS_INVALID_ARGUMENT || code == CTL_STATUS_UNSUPPORTED || code == CTL_STATUS_OUT_OF_RANGE;
}

// The buffers every bad call is built over; each holds 64 elements of 8 bytes at most.
struct BadCallBuffers {
  static constexpr int64_t kElements = 64;
  static constexpr uint64_t kBytes = 512;
  ctl_plugin_buffer* a;    // f32 input data
  ctl_plugin_buffer* b;    // f32 input data
  ctl_plugin_buffer* ai;   // i32 input data
  ctl_plugin_buffer* out;  // the output under watch: 0xA5 before and after
};

// One malformed call: storage for its views and arrays, and what it is in words.
struct BadCall {
  ctl_tensor_view views[3];  // a, b, out unless a case says otherwise
  const ctl_tensor_view* inputs[3];
  const ctl_tensor_view* outputs[1];
  ctl_matmul_attrs matmul;
  ctl_fused_elementwise_attrs fused;  // the fused_* cases' program
  ctl_op_call call;
  std::string what;

  BadCall() = default;
  BadCall(const BadCall&) = delete;
  BadCall& operator=(const BadCall&) = delete;

  // A valid f32 add of two [4, 5] inputs into out [4, 5]; cases break one thing.
  void valid_add(const BadCallBuffers& buffers) {
    views[0] = make_view(buffers.a, CTL_DTYPE_F32, {4, 5});
    views[1] = make_view(buffers.b, CTL_DTYPE_F32, {4, 5});
    views[2] = make_view(buffers.out, CTL_DTYPE_F32, {4, 5});
    inputs[0] = &views[0];
    inputs[1] = &views[1];
    inputs[2] = nullptr;
    outputs[0] = &views[2];
    matmul = {};
    call = make_call(CTL_OP_ADD, inputs, 2, outputs, 1);
  }
};

struct BadCallSpec {
  const char* name;
  const char* label;
  std::function<void(const BadCallBuffers&, BadCall*)> build;
};

void run_bad_call(CaseContext& ctx, const BadCallSpec& spec) {
  constexpr uint8_t kWatch = 0xA5;
  constexpr int64_t kN = BadCallBuffers::kElements;
  constexpr uint64_t kBytes = BadCallBuffers::kBytes;
  const ctl_plugin_api& api = ctx.plugin->api;
  Resources res(ctx);
  ctl_plugin_stream* stream = res.stream("a malformed op call");
  BadCallBuffers buffers{res.buffer(kBytes, "input a"), res.buffer(kBytes, "input b"),
                         res.buffer(kBytes, "input (i32)"), res.buffer(kBytes, "the output")};
  ctl_plugin_buffer* good_out = res.buffer(kBytes, "the follow-up add's output");
  std::vector<float>& ha = res.host<float>(kBytes / sizeof(float));
  std::vector<float>& hb = res.host<float>(kBytes / sizeof(float));
  std::vector<int32_t>& hi = res.host<int32_t>(kBytes / sizeof(int32_t));
  std::vector<uint8_t>& watch = res.host<uint8_t>(kBytes, kWatch);
  for (size_t i = 0; i < ha.size(); ++i) {
    ha[i] = static_cast<float>(static_cast<int>(i) - 10);
    hb[i] = static_cast<float>(2 * static_cast<int>(i) + 1);
    hi[i] = static_cast<int32_t>(i * 3);
  }
  res.write(stream, buffers.a, 0, ha.data(), kBytes, "input a");
  res.write(stream, buffers.b, 0, hb.data(), kBytes, "input b");
  res.write(stream, buffers.ai, 0, hi.data(), kBytes, "the i32 input");
  res.write(stream, buffers.out, 0, watch.data(), kBytes, "the output (0xA5 bytes)");

  BadCall bad;
  bad.valid_add(buffers);
  spec.build(buffers, &bad);

  Status executed(api.op_execute(stream, &bad.call));
  if (executed.ok()) {
    throw CaseFailure(
        format("op_execute returned success for %s; it must return an error status (INVALID_ARGUMENT, "
               "UNSUPPORTED or OUT_OF_RANGE)",
               bad.what.c_str()));
  }
  if (!acceptable_refusal(executed.code())) {
    throw CaseFailure(format("op_execute returned %s for %s; expected INVALID_ARGUMENT, UNSUPPORTED or OUT_OF_RANGE",
                             executed.text().c_str(), bad.what.c_str()));
  }
  if (executed.message().empty()) {
    throw CaseFailure(
        format("op_execute refused %s with %s but an empty message; the message must name the offending "
               "argument",
               bad.what.c_str(), ctl_status_code_name(executed.code())));
  }

  // The output is unchanged and the stream still runs a good op.
  std::vector<uint8_t>& after = res.host<uint8_t>(kBytes, 0);
  res.read(stream, buffers.out, 0, after.data(), kBytes, "the output after the refused call");
  const ctl_tensor_view ga = make_view(buffers.a, CTL_DTYPE_F32, {kN});
  const ctl_tensor_view gb = make_view(buffers.b, CTL_DTYPE_F32, {kN});
  const ctl_tensor_view gout = make_view(good_out, CTL_DTYPE_F32, {kN});
  bool follow_up = true;
  {
    const ctl_tensor_view* inputs[2] = {&ga, &gb};
    const ctl_tensor_view* outputs[1] = {&gout};
    const ctl_op_call call = make_call(CTL_OP_ADD, inputs, 2, outputs, 1);
    ctl_status* status = api.op_execute(stream, &call);
    if (status && ctl_status_get_code(status) == CTL_STATUS_UNSUPPORTED) {
      follow_up = false;  // a plugin without add: the refusal is judged, the stream's health is not
      ctl_status_free(status);
    } else if (status) {
      const std::string text = describe(status);
      ctl_status_free(status);
      throw CaseFailure(
          format("after refusing %s, the stream no longer works: a valid add (f32 [%lld]) on it returned "
                 "%s",
                 bad.what.c_str(), static_cast<long long>(kN), text.c_str()));
    }
  }
  std::vector<float>& good = res.host<float>(kN);
  if (follow_up) res.read(stream, good_out, 0, good.data(), kN * sizeof(float), "the follow-up add's output");
  ctl_status* synced = api.stream_synchronize(stream);
  if (synced) {
    const std::string text = describe(synced);
    ctl_status_free(synced);
    throw CaseFailure(format("after refusing %s, stream_synchronize returned %s", bad.what.c_str(), text.c_str()));
  }
  expect_bytes(after.data(), watch.data(), kBytes,
               format("op_execute refused %s with %s but changed its output buffer (filled with 0xA5 before)",
                      bad.what.c_str(), ctl_status_code_name(executed.code())));
  if (follow_up) {
    std::vector<float> want(kN);
    for (int64_t i = 0; i < kN; ++i) want[i] = ha[i] + hb[i];
    expect_values<float>(
        good.data(), want.data(), kN,
        format("a valid add (f32 [%lld]) on the stream after the refused call", static_cast<long long>(kN)));
  }

  ctx.note = format("op_execute: %s", executed.text().c_str());
  if (!follow_up) ctx.note += "; the follow-up add is unsupported, so the stream's health was not checked";
  if (api.op_supports) {
    // op_supports is the ahead-of-time capability query for calls in the normalised form
    // (catalyst_plugin.h); on a malformed call it may answer NULL and leave the verdict to
    // op_execute, but it must not crash and a refusal must carry a fitting code.
    Status supported(api.op_supports(ctx.device->handle, &bad.call));
    if (!supported.ok() && !acceptable_refusal(supported.code())) {
      throw CaseFailure(
          format("op_supports returned %s for %s; expected NULL, UNSUPPORTED, INVALID_ARGUMENT or "
                 "OUT_OF_RANGE",
                 supported.text().c_str(), bad.what.c_str()));
    }
    ctx.note += format("; op_supports: %s", supported.ok() ? "NULL (left to op_execute)" : supported.text().c_str());
  } else {
    ctx.note += "; op_supports: not provided";
  }
}

std::vector<BadCallSpec> bad_call_specs() {
  using B = const BadCallBuffers&;
  // A fused elementwise call of add's views running `program` (r2 = a + b unless broken).
  auto fused = [](BadCall* c, std::vector<ctl_fused_instruction> program, const std::string& what) {
    c->fused = {};
    c->fused.struct_size = CTL_FUSED_ELEMENTWISE_ATTRS_STRUCT_SIZE;
    c->fused.instruction_count = static_cast<uint32_t>(program.size());
    for (size_t i = 0; i < program.size() && i < CTL_FUSED_MAX_INSTRUCTIONS; ++i) c->fused.program[i] = program[i];
    c->call.op = CTL_OP_FUSED_ELEMENTWISE;
    c->call.attrs = &c->fused;
    c->what = "fused_elementwise of f32 a [4, 5], b [4, 5] -> [4, 5] " + what;
  };
  return {
      {"unknown_op_id", "op id 9999 with the views of a valid f32 add",
       [](B, BadCall* c) {
         set_raw_enum(&c->call.op, 9999);
         c->what = "op id 9999 (unknown) with the views of a valid f32 add";
       }},
      {"op_id_zero", "op id 0 with the views of a valid f32 add",
       [](B, BadCall* c) {
         set_raw_enum(&c->call.op, 0);
         c->what = "op id 0 (no op has it) with the views of a valid f32 add";
       }},
      {"add_wrong_input_count", "add with input_count 1",
       [](B, BadCall* c) {
         c->call.input_count = 1;
         c->what = "add with input_count 1 (add takes 2 inputs)";
       }},
      {"add_null_inputs_array", "add with input_count 2 and inputs NULL",
       [](B, BadCall* c) {
         c->call.inputs = nullptr;
         c->what = "add with input_count 2 and inputs == NULL";
       }},
      {"add_null_input_view", "add with inputs[1] NULL",
       [](B, BadCall* c) {
         c->inputs[1] = nullptr;
         c->what = "add with inputs[1] == NULL (add has no optional input)";
       }},
      {"add_null_buffer", "add whose second input view has buffer NULL",
       [](B, BadCall* c) {
         c->views[1].buffer = nullptr;
         c->what = "add whose inputs[1] view has buffer == NULL";
       }},
      {"add_mixed_dtypes", "add of f32 [4, 5] + i32 [4, 5] -> f32 [4, 5]",
       [](B buffers, BadCall* c) {
         c->views[1] = make_view(buffers.ai, CTL_DTYPE_I32, {4, 5});
         c->what = "add of f32 [4, 5] + i32 [4, 5] -> f32 [4, 5] (the inputs of a binary op share one dtype)";
       }},
      {"add_output_wrong_dtype", "add of f32 + f32 -> i32 output",
       [](B buffers, BadCall* c) {
         c->views[2] = make_view(buffers.out, CTL_DTYPE_I32, {4, 5});
         c->what = "add of f32 [4, 5] + f32 [4, 5] into an i32 [4, 5] output";
       }},
      {"add_mismatched_shapes", "add of [4, 5] + [5, 4] -> [4, 5]",
       [](B buffers, BadCall* c) {
         c->views[1] = make_view(buffers.b, CTL_DTYPE_F32, {5, 4});
         c->what = "add of f32 [4, 5] + f32 [5, 4] -> [4, 5] (normalised elementwise views share one shape)";
       }},
      {"rank_too_large", "add with views of rank CTL_MAX_RANK + 1",
       [](B, BadCall* c) {
         for (ctl_tensor_view& view : c->views) {
           view.rank = CTL_MAX_RANK + 1;
           for (int i = 0; i < CTL_MAX_RANK; ++i) view.shape[i] = view.strides[i] = 1;
         }
         c->what = format("add with views of rank %d (CTL_MAX_RANK is %d; shape and strides hold %d entries)",
                          CTL_MAX_RANK + 1, CTL_MAX_RANK, CTL_MAX_RANK);
       }},
      {"negative_dimension", "add with shape [-1]",
       [](B buffers, BadCall* c) {
         c->views[0] = make_view(buffers.a, CTL_DTYPE_F32, {-1});
         c->views[1] = make_view(buffers.b, CTL_DTYPE_F32, {-1});
         c->views[2] = make_view(buffers.out, CTL_DTYPE_F32, {-1});
         c->what = "add of f32 views of shape [-1] (a negative dimension)";
       }},
      {"matmul_inner_mismatch", "matmul of a [3, 4] by b [5, 2] -> [3, 2]",
       [](B buffers, BadCall* c) {
         c->views[0] = make_view(buffers.a, CTL_DTYPE_F32, {3, 4});
         c->views[1] = make_view(buffers.b, CTL_DTYPE_F32, {5, 2});
         c->views[2] = make_view(buffers.out, CTL_DTYPE_F32, {3, 2});
         c->matmul.struct_size = CTL_MATMUL_ATTRS_STRUCT_SIZE;
         c->matmul.alpha = 1.0;
         c->matmul.alpha_set = true;
         c->matmul.beta = 0.0;
         c->matmul.activation = CTL_ACTIVATION_NONE;
         c->call.op = CTL_OP_MATMUL;
         c->call.attrs = &c->matmul;
         c->what = "matmul of f32 a [3, 4] by b [5, 2] -> [3, 2] (inner dimensions 4 and 5 differ)";
       }},
      {"reduce_null_attrs", "sum of x [4, 5] -> [4, 1] with attrs NULL",
       [](B buffers, BadCall* c) {
         c->views[2] = make_view(buffers.out, CTL_DTYPE_F32, {4, 1});
         c->call.op = CTL_OP_SUM;
         c->call.input_count = 1;
         c->call.attrs = nullptr;
         c->what =
             "sum of f32 x [4, 5] into out [4, 1] with attrs == NULL (a normalised reduction names its axes in "
             "ctl_reduce_attrs)";
       }},
      {"call_struct_size_zero", "a valid add whose ctl_op_call.struct_size is 0",
       [](B, BadCall* c) {
         c->call.struct_size = 0;
         c->what = "an otherwise valid f32 add whose ctl_op_call.struct_size is 0";
       }},
      {"view_struct_size_zero", "a valid add whose first input view has struct_size 0",
       [](B, BadCall* c) {
         c->views[0].struct_size = 0;
         c->what = "an otherwise valid f32 add whose inputs[0] view has struct_size 0";
       }},
      // ABI 1.5: a plugin without the fused op answers UNSUPPORTED, which passes.
      {"fused_no_instructions", "fused_elementwise with instruction_count 0",
       [fused](B, BadCall* c) { fused(c, {}, "with instruction_count 0 (a program has 1 to 16)"); }},
      {"fused_17_instructions", "fused_elementwise with instruction_count 17",
       [fused](B, BadCall* c) {
         fused(c, {{CTL_OP_ADD, 0, 1}}, "with instruction_count 17 (a program has 1 to 16)");
         c->fused.instruction_count = CTL_FUSED_MAX_INSTRUCTIONS + 1;
       }},
      {"fused_comparison_instruction", "fused_elementwise whose instruction is eq",
       [fused](B, BadCall* c) {
         fused(c, {{CTL_OP_EQ, 0, 1}}, "whose program[0] is eq (not a float elementwise op)");
       }},
      {"fused_unknown_instruction", "fused_elementwise whose instruction is op 9999",
       [fused](B, BadCall* c) {
         fused(c, {{CTL_OP_ADD, 0, 1}}, "whose program[0] is op 9999");
         set_raw_enum(&c->fused.program[0].op, 9999);
       }},
      {"fused_register_not_written", "fused_elementwise reading a register not yet written",
       [fused](B, BadCall* c) {
         fused(c, {{CTL_OP_ADD, 0, 2}}, "whose program[0] reads register 2, its own result");
       }},
      {"fused_register_out_of_range", "fused_elementwise reading register 65535",
       [fused](B, BadCall* c) {
         fused(c, {{CTL_OP_NEG, 0, 0}, {CTL_OP_MUL, 65535, 2}}, "whose program[1] reads register 65535");
       }},
      {"fused_null_attrs", "fused_elementwise with attrs NULL",
       [fused](B, BadCall* c) {
         fused(c, {{CTL_OP_ADD, 0, 1}}, "with attrs == NULL (the program is required)");
         c->call.attrs = nullptr;
       }},
      {"fused_mixed_dtypes", "fused_elementwise of f32 a and i32 b",
       [fused](B buffers, BadCall* c) {
         fused(c, {{CTL_OP_ADD, 0, 1}}, "");
         c->views[1] = make_view(buffers.ai, CTL_DTYPE_I32, {4, 5});
         c->what = "fused_elementwise of f32 a [4, 5] and i32 b [4, 5] -> f32 [4, 5] (one float dtype)";
       }},
      {"fused_integer_dtype", "fused_elementwise of i32 inputs and output",
       [fused](B buffers, BadCall* c) {
         fused(c, {{CTL_OP_ADD, 0, 1}}, "");
         c->views[0] = make_view(buffers.ai, CTL_DTYPE_I32, {4, 5});
         c->views[1] = make_view(buffers.ai, CTL_DTYPE_I32, {4, 5});
         c->views[2] = make_view(buffers.out, CTL_DTYPE_I32, {4, 5});
         c->what = "fused_elementwise of i32 [4, 5] inputs into i32 [4, 5] (float dtypes only)";
       }},
  };
}

}  // namespace

void add_bad_call_cases(std::vector<Case>& out) {
  for (const BadCallSpec& spec : bad_call_specs()) {
    add_case(out, "bad_calls", spec.name, "f32",
             std::string(spec.label) + ": an error status, the output untouched, the stream still usable",
             [spec](CaseContext& ctx) { run_bad_call(ctx, spec); });
  }
}

}  // namespace catalyst::conformance::contract
