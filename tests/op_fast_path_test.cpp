// op_fast_path_test.cpp — the short way of small elementwise ops through the C ABI
// (core/elementwise_fast_path.h): it computes what the general path computes, declines
// every call it cannot prove valid (which then gets the general path's error, naming the
// argument, with nothing changed), records autograd when it must, and a small op run into
// a preallocated output allocates nothing on the C++ heap.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "test_support.hpp"

// Counts operator new calls in this process (the core library's included: the replacement
// is global; every form of new and delete is replaced, aligned ones aside, which nothing
// here uses). Only the counter is ours; allocation itself is malloc's.
namespace {
std::atomic<long> g_news{0};
}

void* operator new(size_t size) {
  g_news.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t size) {
  return ::operator new(size);
}
// The nothrow forms too (the core makes statuses with them): every form must allocate from
// malloc, or a sanitizer sees memory from its own operator new given back to free.
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  g_news.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size ? size : 1);
}
void* operator new[](size_t size, const std::nothrow_t&) noexcept {
  return ::operator new(size, std::nothrow);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p, size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}

namespace {

using ctltest::describe;
using ctltest::from_vector;
using ctltest::Status;
using ctltest::Tensor;
using ctltest::to_vector;

class OpFastPath : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<const char*> paths = {CTL_TEST_CPU_PLUGIN};
    const ctl_runtime_options o = ctltest::options(&paths);
    ctl_runtime* r = nullptr;
    CTL_ASSERT_OK(ctl_runtime_create(&o, &r));
    runtime_.reset(r);
    device_ = ctltest::find_device(r, "cpu");
    ASSERT_NE(device_, nullptr);
  }
  Tensor f32(const std::vector<int64_t>& shape, const std::vector<float>& data) {
    return from_vector(device_, CTL_DTYPE_F32, shape, data);
  }
  // The message of a call that must fail; "" (and a test failure) when it succeeds.
  static std::string error_of(ctl_status* raw) {
    Status s(raw);
    EXPECT_NE(s, nullptr) << "the call succeeded";
    return s ? ctl_status_get_message(s.get()) : "";
  }

  ctltest::Runtime runtime_;
  ctl_device* device_ = nullptr;
};

TEST_F(OpFastPath, ComputesWhatTheOpMeansIntoAndAllocating) {
  Tensor a = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = f32({2, 3}, {10, 20, 30, 40, 50, 60});
  Tensor out = f32({2, 3}, {0, 0, 0, 0, 0, 0});
  ctl_tensor* inputs[2] = {a.get(), b.get()};
  ctl_tensor* outputs[1] = {out.get()};
  CTL_ASSERT_OK(ctl_op_run_into(CTL_OP_SUB, 2, inputs, nullptr, 1, outputs));
  EXPECT_EQ(to_vector<float>(out.get()), (std::vector<float>{-9, -18, -27, -36, -45, -54}));
  ctl_tensor* raw = nullptr;
  CTL_ASSERT_OK(ctl_op_binary(CTL_OP_MUL, a.get(), b.get(), &raw));
  Tensor product(raw);
  EXPECT_EQ(to_vector<float>(product.get()), (std::vector<float>{10, 40, 90, 160, 250, 360}));
  CTL_ASSERT_OK(ctl_op_unary(CTL_OP_NEG, a.get(), &raw));
  Tensor negated(raw);
  EXPECT_EQ(to_vector<float>(negated.get()), (std::vector<float>{-1, -2, -3, -4, -5, -6}));
  // A strided (transposed) input takes the short way too; the plugin follows its strides.
  ctl_tensor* t = nullptr;
  Tensor square = f32({2, 2}, {1, 2, 3, 4});
  CTL_ASSERT_OK(ctl_tensor_transpose(square.get(), 0, 1, &t));
  Tensor transposed(t);
  CTL_ASSERT_OK(ctl_op_binary(CTL_OP_ADD, transposed.get(), square.get(), &raw));
  Tensor sum(raw);
  EXPECT_EQ(to_vector<float>(sum.get()), (std::vector<float>{2, 5, 5, 8}));
}

TEST_F(OpFastPath, DeclinedCallsGetTheGeneralPathsErrorAndChangeNothing) {
  Tensor a = f32({2}, {1, 2});
  Tensor b = f32({2}, {3, 4});
  Tensor out = f32({2}, {7, 7});
  Tensor wide = f32({3}, {7, 7, 7});
  Tensor i32 = from_vector<int32_t>(device_, CTL_DTYPE_I32, {2}, {1, 2});
  ctl_tensor* inputs[2] = {a.get(), b.get()};
  ctl_tensor* into_a[1] = {a.get()};
  ctl_tensor* into_wide[1] = {wide.get()};
  ctl_tensor* into_i32[1] = {i32.get()};
  ctl_tensor* into_null[1] = {nullptr};
  EXPECT_NE(error_of(ctl_op_run_into(CTL_OP_ADD, 2, inputs, nullptr, 1, into_a)).find("overlaps inputs[0]"),
            std::string::npos);
  EXPECT_NE(error_of(ctl_op_run_into(CTL_OP_ADD, 2, inputs, nullptr, 1, into_wide)).find("outputs[0] has shape [3]"),
            std::string::npos);
  EXPECT_NE(error_of(ctl_op_run_into(CTL_OP_ADD, 2, inputs, nullptr, 1, into_i32)).find("outputs[0] has dtype i32"),
            std::string::npos);
  EXPECT_NE(error_of(ctl_op_run_into(CTL_OP_ADD, 2, inputs, nullptr, 1, into_null)).find("'outputs[0]' is NULL"),
            std::string::npos);
  ctl_tensor* mixed[2] = {a.get(), i32.get()};
  ctl_tensor* outputs[1] = {out.get()};
  EXPECT_NE(error_of(ctl_op_run_into(CTL_OP_ADD, 2, mixed, nullptr, 1, outputs)).find("no implicit promotion"),
            std::string::npos);
  ctl_tensor* with_null[2] = {a.get(), nullptr};
  EXPECT_NE(error_of(ctl_op_run_into(CTL_OP_ADD, 2, with_null, nullptr, 1, outputs)).find("'inputs[1]' is NULL"),
            std::string::npos);
  EXPECT_NE(error_of(ctl_op_run_into(CTL_OP_ADD, 1, inputs, nullptr, 1, outputs)).find("input_count is 1"),
            std::string::npos);
  EXPECT_NE(error_of(ctl_op_run_into(CTL_OP_EXP, 1, into_i32, nullptr, 1, outputs)).find("needs a floating dtype"),
            std::string::npos);
  // A broadcast output (stride 0) is refused.
  Tensor one = f32({1}, {0});
  ctl_tensor* expanded = nullptr;
  const int64_t two[1] = {2};
  CTL_ASSERT_OK(ctl_tensor_expand(one.get(), 1, two, &expanded));
  Tensor broadcast(expanded);
  ctl_tensor* into_broadcast[1] = {broadcast.get()};
  EXPECT_NE(error_of(ctl_op_run_into(CTL_OP_ADD, 2, inputs, nullptr, 1, into_broadcast)).find("broadcast view"),
            std::string::npos);
  // Nothing was written by any refused call.
  EXPECT_EQ(to_vector<float>(out.get()), (std::vector<float>{7, 7}));
  EXPECT_EQ(to_vector<float>(a.get()), (std::vector<float>{1, 2}));
  EXPECT_EQ(to_vector<float>(wide.get()), (std::vector<float>{7, 7, 7}));
  EXPECT_EQ(to_vector<float>(one.get()), (std::vector<float>{0}));
}

TEST_F(OpFastPath, InputsThatNeedGradientsAreStillRecorded) {
  Tensor a = f32({3}, {1, 2, 3});
  Tensor b = f32({3}, {4, 5, 6});
  CTL_ASSERT_OK(ctl_tensor_set_requires_grad(a.get(), true));
  ctl_tensor* raw = nullptr;
  CTL_ASSERT_OK(ctl_op_binary(CTL_OP_MUL, a.get(), b.get(), &raw));
  Tensor product(raw);
  EXPECT_TRUE(ctl_tensor_requires_grad(product.get()));
  ctl_tensor* ones = nullptr;
  const int64_t shape[1] = {3};
  CTL_ASSERT_OK(ctl_tensor_create_full(device_, CTL_DTYPE_F32, 1, shape, 1.0, &ones));
  Tensor seed(ones);
  CTL_ASSERT_OK(ctl_tensor_backward(product.get(), seed.get()));
  ctl_tensor* grad = nullptr;
  CTL_ASSERT_OK(ctl_tensor_grad(a.get(), &grad));
  Tensor g(grad);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(to_vector<float>(g.get()), (std::vector<float>{4, 5, 6}));
  // With recording off, the same call makes an untracked result.
  bool previous = false;
  CTL_ASSERT_OK(ctl_runtime_set_grad_enabled(runtime_.get(), false, &previous));
  CTL_ASSERT_OK(ctl_op_binary(CTL_OP_MUL, a.get(), b.get(), &raw));
  Tensor untracked(raw);
  EXPECT_FALSE(ctl_tensor_requires_grad(untracked.get()));
  CTL_ASSERT_OK(ctl_runtime_set_grad_enabled(runtime_.get(), previous, nullptr));
}

TEST_F(OpFastPath, ASmallOpIntoAPreallocatedOutputAllocatesNothing) {
  Tensor a = f32({1}, {1});
  Tensor b = f32({1}, {2});
  Tensor out = f32({1}, {0});
  ctl_tensor* inputs[2] = {a.get(), b.get()};
  ctl_tensor* outputs[1] = {out.get()};
  CTL_ASSERT_OK(ctl_op_run_into(CTL_OP_ADD, 2, inputs, nullptr, 1, outputs));  // warm-up
  const long before = g_news.load();
  for (int i = 0; i < 1000; ++i) {
    ctl_status* s = ctl_op_run_into(CTL_OP_ADD, 2, inputs, nullptr, 1, outputs);
    if (s) {
      ADD_FAILURE() << describe(s);
      ctl_status_free(s);
      break;
    }
  }
  EXPECT_EQ(g_news.load() - before, 0) << "operator new calls in 1000 ctl_op_run_into calls";
  EXPECT_EQ(to_vector<float>(out.get()), (std::vector<float>{3}));
}

}  // namespace
