// sdk_op_call_test.cpp — the SDK's op-call layer on its own, without a core or a device: the
// call reader (sdk/op_call.hpp) over a plugin-defined buffer, the axis merge, the host-side
// cast rules and the matmul binder. The plugins use these for every call; the conformance
// suite checks them there, and these cases name the helper when one goes wrong.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "catalyst/sdk/bind_matmul.hpp"
#include "catalyst/sdk/cast_rules.hpp"
#include "catalyst/sdk/merged_axes.hpp"
#include "catalyst/sdk/op_call.hpp"

// The plugin's own buffer type, as a vendor defines it.
struct ctl_plugin_buffer {
  uint64_t size;
};

namespace {

using catalyst::sdk::ViewShape;

// The host's status constructor records the last status instead of allocating one.
struct Recorder {
  ctl_status_code code = CTL_STATUS_OK;
  std::string message;
};

ctl_status* record_status(void* context, ctl_status_code code, const char* message) {
  auto* r = static_cast<Recorder*>(context);
  r->code = code;
  r->message = message;
  return reinterpret_cast<ctl_status*>(r);
}

struct TestView : ViewShape {
  const ctl_plugin_buffer* buffer = nullptr;
};

struct TestContext : catalyst::sdk::OpCall<TestContext, TestView> {
  using OpCall::OpCall;
  uint64_t buffer_size(const ctl_plugin_buffer* b) const { return b->size; }
  ctl_status* bind_buffer(const ctl_tensor_view& v, const catalyst::sdk::ViewFacts& facts,
                          const catalyst::sdk::ViewSlot& slot, TestView* out) const {
    out->buffer = v.buffer;
    return element_offset(v, facts, slot, &out->offset);
  }
};

ctl_tensor_view view(ctl_plugin_buffer* buffer, ctl_dtype dtype, std::initializer_list<int64_t> shape,
                     std::initializer_list<int64_t> strides, uint64_t byte_offset = 0) {
  ctl_tensor_view v{};
  v.struct_size = CTL_TENSOR_VIEW_STRUCT_SIZE;
  v.buffer = buffer;
  v.byte_offset = byte_offset;
  v.dtype = dtype;
  v.rank = static_cast<uint32_t>(shape.size());
  uint32_t i = 0;
  for (int64_t s : shape) v.shape[i++] = s;
  i = 0;
  for (int64_t s : strides) v.strides[i++] = s;
  return v;
}

class OpCallTest : public ::testing::Test {
 protected:
  OpCallTest() {
    host.struct_size = CTL_HOST_API_STRUCT_SIZE;
    host.context = &recorder;
    host.status_create = record_status;
    call.struct_size = CTL_OP_CALL_STRUCT_SIZE;
    call.op = CTL_OP_ADD;
  }
  TestContext context() { return TestContext(&host, &call, "add", "test plugin: "); }

  Recorder recorder;
  ctl_host_api host{};
  ctl_op_call call{};
  ctl_plugin_buffer buffer{1024};
};

TEST_F(OpCallTest, ReadsAViewWithItsElementOffset) {
  const ctl_tensor_view x = view(&buffer, CTL_DTYPE_F32, {2, 3}, {3, 1}, 8);
  const ctl_tensor_view* inputs[] = {&x};
  call.input_count = 1;
  call.inputs = inputs;
  TestView got;
  ASSERT_EQ(context().input(0, "x", &got), nullptr) << recorder.message;
  EXPECT_EQ(got.buffer, &buffer);
  EXPECT_EQ(got.offset, 2);  // 8 bytes of f32
  EXPECT_EQ(got.rank, 2u);
  EXPECT_EQ(got.numel(), 6);
  EXPECT_TRUE(got.contiguous());
}

TEST_F(OpCallTest, NamesTheArgumentOfEveryRefusal) {
  TestContext ctx = context();
  call.input_count = 1;
  EXPECT_NE(ctx.expect_counts(2, 2, 1, 1), nullptr);
  EXPECT_EQ(recorder.message, "test plugin: add: input_count is 1, expected 2 to 2");

  const ctl_tensor_view* inputs[] = {nullptr};
  call.inputs = inputs;
  TestView v;
  EXPECT_NE(ctx.input(0, "a", &v), nullptr);
  EXPECT_EQ(recorder.message, "test plugin: add: input 0 (a) is NULL");
  bool present = true;
  EXPECT_EQ(ctx.input(0, "a", &v, /*optional=*/true, &present), nullptr);
  EXPECT_FALSE(present);

  // Past the buffer's end, and not on an element boundary.
  const ctl_tensor_view far = view(&buffer, CTL_DTYPE_F32, {300}, {1});
  inputs[0] = &far;
  EXPECT_NE(ctx.input(0, "a", &v), nullptr);
  EXPECT_EQ(recorder.code, CTL_STATUS_OUT_OF_RANGE);
  EXPECT_EQ(recorder.message, "test plugin: add: input 0 (a): the view reaches byte 1200 of a 1024-byte buffer");
  const ctl_tensor_view odd = view(&buffer, CTL_DTYPE_F32, {4}, {1}, 2);
  inputs[0] = &odd;
  EXPECT_NE(ctx.input(0, "a", &v), nullptr);
  EXPECT_EQ(recorder.code, CTL_STATUS_UNSUPPORTED);
  EXPECT_EQ(recorder.message, "test plugin: add: input 0 (a): byte_offset 2 is not a multiple of the 4-byte element");

  TestView a, b;
  a.rank = b.rank = 1;
  a.shape[0] = 3;
  b.shape[0] = 4;
  EXPECT_NE(ctx.expect_same_shape(a, "input 0", b, "output 0 (y)"), nullptr);
  EXPECT_EQ(recorder.message, "test plugin: add: output 0 (y) has shape [4] but input 0 has shape [3]");
}

TEST(MergedAxes, MergesWhatEveryViewStepsThroughAsOne) {
  const int64_t shape[] = {2, 3, 4};
  const int64_t dense[] = {12, 4, 1};
  const int64_t transposed[] = {12, 1, 3};  // the last two axes swapped
  const int64_t* both_dense[] = {dense, dense};
  auto m = catalyst::sdk::merge_axes<2>(3, shape, both_dense, 2);
  EXPECT_EQ(m.rank, 1u);
  EXPECT_EQ(m.shape[0], 24);
  EXPECT_EQ(m.numel, 24);
  const int64_t* mixed[] = {dense, transposed};
  m = catalyst::sdk::merge_axes<2>(3, shape, mixed, 2);
  ASSERT_EQ(m.rank, 3u);
  EXPECT_EQ(m.shape[0], 4);  // innermost first
  EXPECT_EQ(m.strides[1][0], 3);
  // Rows of a normalisation: the last axis skipped; an absent view steps by 0.
  const int64_t* rows[] = {dense, nullptr};
  m = catalyst::sdk::merge_axes<2>(3, shape, rows, 2, /*skip=*/2);
  EXPECT_EQ(m.numel, 6);
  ASSERT_EQ(m.rank, 1u);  // both remaining axes step as one, for zeros as for dense's 12 and 4
  EXPECT_EQ(m.strides[0][0], 4);
  EXPECT_EQ(m.strides[1][0], 0);
  // An empty axis leaves nothing to walk.
  const int64_t empty[] = {2, 0, 4};
  m = catalyst::sdk::merge_axes<2>(3, empty, both_dense, 2);
  EXPECT_EQ(m.numel, 0);
}

TEST(CastRules, FloatToIntegerTruncatesAndSaturatesAndHalfRoundsOnce) {
  using catalyst::sdk::bits_from_double;
  EXPECT_EQ(bits_from_double(CTL_DTYPE_I8, 300.0), 127u);
  EXPECT_EQ(bits_from_double(CTL_DTYPE_I8, -1e30), 0x80u);
  EXPECT_EQ(bits_from_double(CTL_DTYPE_I32, -2.9), static_cast<uint32_t>(-2));
  EXPECT_EQ(bits_from_double(CTL_DTYPE_U8, -1.0), 0u);
  EXPECT_EQ(bits_from_double(CTL_DTYPE_I64, std::nan("")), 0u);
  EXPECT_EQ(bits_from_double(CTL_DTYPE_I64, 1e300), static_cast<uint64_t>(std::numeric_limits<int64_t>::max()));
  EXPECT_EQ(bits_from_double(CTL_DTYPE_BOOL, std::nan("")), 1u);
  // 1 + 2^-11 + 2^-30 is just above the f16 halfway point between 1 and 1 + 2^-10: rounding
  // through f32 first would land on the halfway point and round to even (1.0).
  EXPECT_EQ(bits_from_double(CTL_DTYPE_F16, 1.0 + 0x1p-11 + 0x1p-30), 0x3c01u);
}

TEST_F(OpCallTest, MatmulBindsBatchStridesTransposesAndRefusesAMismatchedDepth) {
  ctl_plugin_buffer big{1 << 20};
  // a: (2, 3, 4) f32, b: (4, 5) broadcast over the batch, out (2, 3, 5).
  const ctl_tensor_view a = view(&big, CTL_DTYPE_F32, {2, 3, 4}, {12, 4, 1});
  const ctl_tensor_view b = view(&big, CTL_DTYPE_F32, {4, 5}, {5, 1});
  const ctl_tensor_view out = view(&big, CTL_DTYPE_F32, {2, 3, 5}, {15, 5, 1});
  const ctl_tensor_view* inputs[] = {&a, &b, nullptr};
  const ctl_tensor_view* outputs[] = {&out};
  call.op = CTL_OP_MATMUL;
  call.input_count = 3;
  call.inputs = inputs;
  call.output_count = 1;
  call.outputs = outputs;
  TestContext ctx(&host, &call, "matmul", "test plugin: ");
  catalyst::sdk::MatmulProblem<TestView> mm;
  ASSERT_EQ(catalyst::sdk::bind_matmul(ctx, &mm), nullptr) << recorder.message;
  EXPECT_EQ(mm.M, 3);
  EXPECT_EQ(mm.N, 5);
  EXPECT_EQ(mm.K, 4);
  EXPECT_EQ(mm.batches, 2);
  EXPECT_FALSE(mm.has_bias);
  EXPECT_EQ(mm.batch_strides[0][0], 12);  // a steps through the batch
  EXPECT_EQ(mm.batch_strides[1][0], 0);   // b is broadcast
  EXPECT_EQ(mm.alpha, 1.0);

  // transpose_b set: b's last two axes swap, and K no longer matches.
  ctl_matmul_attrs attrs{};
  attrs.struct_size = CTL_MATMUL_ATTRS_STRUCT_SIZE;
  attrs.transpose_b = true;
  call.attrs = &attrs;
  EXPECT_NE(catalyst::sdk::bind_matmul(ctx, &mm), nullptr);
  EXPECT_EQ(recorder.message, "test plugin: matmul: a is (..., 3, 4) but b is (..., 5, 4)");
}

}  // namespace
