// dlpack_test.cpp — DLPack interchange through the C ABI, on every host-visible device
// (the CPU plugin when built, and the reference device): export -> import round trips in
// both the 0.x and the versioned 1.x form are zero-copy, keep non-contiguous strides and
// byte offsets, call the producer's deleter exactly once after the last tensor or view is
// released, and leave ownership with the caller (deleter not called) when import fails.
#include <dlpack/dlpack.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <numeric>

#include "dlpack_versioned.h"  // from core/: the versioned struct exactly as the core sees it
#include "test_support.hpp"

using namespace ctltest;

namespace {

// A DLPack producer the test controls: memory, shape and strides it owns, and a deleter
// that counts its calls.
struct Producer {
  std::vector<float> data;
  std::array<int64_t, 8> shape{};
  std::array<int64_t, 8> strides{};
  int deleted = 0;
  DLManagedTensor managed{};
  DLManagedTensorVersioned versioned{};

  Producer(std::vector<int64_t> dims, std::vector<int64_t> element_strides, size_t storage_elements) {
    data.resize(storage_elements);
    std::iota(data.begin(), data.end(), 0.0f);
    DLTensor dl{};
    dl.data = data.data();
    dl.device = {kDLCPU, 0};
    dl.ndim = static_cast<int32_t>(dims.size());
    dl.dtype = {kDLFloat, 32, 1};
    std::copy(dims.begin(), dims.end(), shape.begin());
    std::copy(element_strides.begin(), element_strides.end(), strides.begin());
    dl.shape = shape.data();
    dl.strides = element_strides.empty() ? nullptr : strides.data();
    dl.byte_offset = 0;
    managed.dl_tensor = dl;
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensor* self) { ++static_cast<Producer*>(self->manager_ctx)->deleted; };
    versioned.version = {1, 0};
    versioned.dl_tensor = dl;
    versioned.manager_ctx = this;
    versioned.flags = 0;
    versioned.deleter = [](DLManagedTensorVersioned* self) { ++static_cast<Producer*>(self->manager_ctx)->deleted; };
  }
};

std::vector<std::string> devices_under_test() {
  std::vector<std::string> names = {"reference"};
  if (std::string(CTL_TEST_CPU_PLUGIN).size()) names.push_back("cpu");
  return names;
}

class DLPack : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (std::string(CTL_TEST_CPU_PLUGIN).size()) paths_.push_back(CTL_TEST_CPU_PLUGIN);
    ctl_runtime_options o = options(&paths_, &log_, /*reference=*/true);
    ctl_runtime* r = nullptr;
    CTL_ASSERT_OK(ctl_runtime_create(&o, &r));
    runtime_.reset(r);
    device_ = find_device(r, GetParam());
    ASSERT_NE(device_, nullptr) << "no device from plugin " << GetParam() << "; log:\n" << log_.all();
    ctl_device_info info{};
    info.struct_size = CTL_DEVICE_INFO_STRUCT_SIZE;
    CTL_ASSERT_OK(ctl_device_get_info(device_, &info));
    ASSERT_TRUE(info.host_visible) << GetParam() << " must be host-visible for DLPack";
  }

  // A 3x4 f32 tensor holding 0..11.
  Tensor matrix() {
    std::vector<float> v(12);
    std::iota(v.begin(), v.end(), 0.0f);
    return from_vector(device_, CTL_DTYPE_F32, {3, 4}, v);
  }

  std::vector<const char*> paths_;
  LogSink log_;
  Runtime runtime_;
  ctl_device* device_ = nullptr;
};

const void* address_of(const DLTensor& dl) {
  return static_cast<const char*>(dl.data) + dl.byte_offset;
}

TEST_P(DLPack, ExportDescribesTheTensor) {
  auto t = matrix();
  DLManagedTensor* m = nullptr;
  CTL_ASSERT_OK(ctl_tensor_to_dlpack(t.get(), &m));
  ASSERT_NE(m, nullptr);
  ASSERT_NE(m->deleter, nullptr);
  const DLTensor& dl = m->dl_tensor;
  EXPECT_EQ(dl.device.device_type, kDLCPU);
  EXPECT_EQ(dl.ndim, 2);
  EXPECT_EQ(dl.dtype.code, kDLFloat);
  EXPECT_EQ(dl.dtype.bits, 32);
  EXPECT_EQ(dl.dtype.lanes, 1);
  EXPECT_EQ(dl.shape[0], 3);
  EXPECT_EQ(dl.shape[1], 4);
  ASSERT_NE(dl.strides, nullptr);
  EXPECT_EQ(dl.strides[0], 4);
  EXPECT_EQ(dl.strides[1], 1);
  const float* values = static_cast<const float*>(address_of(dl));
  for (int i = 0; i < 12; ++i) EXPECT_EQ(values[i], static_cast<float>(i));
  // The export holds its own reference: the memory outlives the tensor handle.
  t.reset();
  EXPECT_EQ(values[11], 11.0f);
  m->deleter(m);
}

TEST_P(DLPack, RoundTripIsZeroCopyBothForms) {
  auto t = matrix();
  for (bool versioned : {false, true}) {
    SCOPED_TRACE(versioned ? "versioned" : "0.x");
    const void* exported = nullptr;
    ctl_tensor* back = nullptr;
    if (versioned) {
      DLManagedTensorVersioned* m = nullptr;
      CTL_ASSERT_OK(ctl_tensor_to_dlpack_versioned(t.get(), &m));
      EXPECT_EQ(m->version.major, 1u);
      EXPECT_EQ(m->flags & DLPACK_FLAG_BITMASK_READ_ONLY, 0u);
      exported = address_of(m->dl_tensor);
      CTL_ASSERT_OK(ctl_tensor_from_dlpack_versioned(device_, m, &back));
    } else {
      DLManagedTensor* m = nullptr;
      CTL_ASSERT_OK(ctl_tensor_to_dlpack(t.get(), &m));
      exported = address_of(m->dl_tensor);
      CTL_ASSERT_OK(ctl_tensor_from_dlpack(device_, m, &back));
    }
    Tensor imported(back);
    EXPECT_EQ(to_vector<float>(back), to_vector<float>(t.get()));
    // Same memory: export the import again and compare addresses, then write through one
    // tensor and read through the other.
    DLManagedTensor* again = nullptr;
    CTL_ASSERT_OK(ctl_tensor_to_dlpack(back, &again));
    EXPECT_EQ(address_of(again->dl_tensor), exported);
    static_cast<float*>(const_cast<void*>(address_of(again->dl_tensor)))[5] = 500.0f;
    EXPECT_EQ(to_vector<float>(t.get())[5], 500.0f);
    again->deleter(again);
    auto source = from_vector(device_, CTL_DTYPE_F32, {3, 4}, std::vector<float>(12, 2.0f));
    ctl_tensor* outputs[] = {back};
    ctl_tensor* inputs[] = {source.get()};
    CTL_ASSERT_OK(ctl_op_run_into(CTL_OP_COPY, 1, inputs, nullptr, 1, outputs));
    EXPECT_EQ(to_vector<float>(t.get()), std::vector<float>(12, 2.0f));
    std::vector<float> v(12);
    std::iota(v.begin(), v.end(), 0.0f);
    auto original = from_vector(device_, CTL_DTYPE_F32, {3, 4}, v);
    inputs[0] = original.get();
    CTL_ASSERT_OK(ctl_op_run_into(CTL_OP_COPY, 1, inputs, nullptr, 1, outputs));
  }
}

TEST_P(DLPack, NonContiguousStridesAndOffsetsAreKept) {
  auto t = matrix();
  ctl_tensor* tr = nullptr;
  CTL_ASSERT_OK(ctl_tensor_transpose(t.get(), 0, 1, &tr));  // 4x3, strides {1, 4}
  Tensor transposed(tr);
  ctl_tensor* sl = nullptr;
  CTL_ASSERT_OK(ctl_tensor_slice(t.get(), 1, 1, 4, 2, &sl));  // 3x2, strides {4, 2}, offset 1
  Tensor sliced(sl);
  for (ctl_tensor* view : {tr, sl}) {
    const ctl_tensor_info before = info_of(view);
    for (bool versioned : {false, true}) {
      SCOPED_TRACE(std::string(view == tr ? "transposed" : "sliced") + (versioned ? " versioned" : " 0.x"));
      ctl_tensor* back = nullptr;
      const DLTensor* dl = nullptr;
      if (versioned) {
        DLManagedTensorVersioned* m = nullptr;
        CTL_ASSERT_OK(ctl_tensor_to_dlpack_versioned(view, &m));
        dl = &m->dl_tensor;
        ASSERT_NE(dl->strides, nullptr);
        for (size_t d = 0; d < before.rank; ++d) {
          EXPECT_EQ(dl->shape[d], before.shape[d]);
          EXPECT_EQ(dl->strides[d], before.strides[d]);
        }
        EXPECT_EQ(dl->byte_offset, static_cast<uint64_t>(before.offset) * 4);
        CTL_ASSERT_OK(ctl_tensor_from_dlpack_versioned(device_, m, &back));
      } else {
        DLManagedTensor* m = nullptr;
        CTL_ASSERT_OK(ctl_tensor_to_dlpack(view, &m));
        dl = &m->dl_tensor;
        ASSERT_NE(dl->strides, nullptr);
        for (size_t d = 0; d < before.rank; ++d) {
          EXPECT_EQ(dl->shape[d], before.shape[d]);
          EXPECT_EQ(dl->strides[d], before.strides[d]);
        }
        EXPECT_EQ(dl->byte_offset, static_cast<uint64_t>(before.offset) * 4);
        CTL_ASSERT_OK(ctl_tensor_from_dlpack(device_, m, &back));
      }
      Tensor imported(back);
      const ctl_tensor_info after = info_of(back);
      EXPECT_EQ(after.rank, before.rank);
      EXPECT_FALSE(after.contiguous);
      for (size_t d = 0; d < before.rank; ++d) {
        EXPECT_EQ(after.shape[d], before.shape[d]);
        EXPECT_EQ(after.strides[d], before.strides[d]) << "axis " << d;
      }
      EXPECT_EQ(to_vector<float>(back), to_vector<float>(view));
    }
  }
  EXPECT_EQ(to_vector<float>(tr), (std::vector<float>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  EXPECT_EQ(to_vector<float>(sl), (std::vector<float>{1, 3, 5, 7, 9, 11}));
}

TEST_P(DLPack, ImportCallsTheDeleterOnceAfterTheLastView) {
  for (bool versioned : {false, true}) {
    SCOPED_TRACE(versioned ? "versioned" : "0.x");
    // A 4x3 column-major (transposed) producer tensor over 12 floats.
    Producer p({4, 3}, {1, 4}, 12);
    ctl_tensor* t = nullptr;
    if (versioned) {
      CTL_ASSERT_OK(ctl_tensor_from_dlpack_versioned(device_, &p.versioned, &t));
    } else {
      CTL_ASSERT_OK(ctl_tensor_from_dlpack(device_, &p.managed, &t));
    }
    const ctl_tensor_info info = info_of(t);
    EXPECT_EQ(info.strides[0], 1);
    EXPECT_EQ(info.strides[1], 4);
    EXPECT_EQ(to_vector<float>(t), (std::vector<float>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
    // Zero-copy: a write into the producer's memory shows through.
    p.data[4] = -1.0f;
    EXPECT_EQ(to_vector<float>(t)[1], -1.0f);
    ctl_tensor *v1 = nullptr, *v2 = nullptr;
    CTL_ASSERT_OK(ctl_tensor_transpose(t, 0, 1, &v1));
    CTL_ASSERT_OK(ctl_tensor_slice(t, 0, 1, 3, 1, &v2));
    ctl_tensor_retain(t);
    ctl_tensor_release(t);
    ctl_tensor_release(t);
    EXPECT_EQ(p.deleted, 0) << "deleter ran while views were alive";
    EXPECT_EQ(to_vector<float>(v1)[0], 0.0f);
    ctl_tensor_release(v1);
    EXPECT_EQ(p.deleted, 0);
    ctl_tensor_release(v2);
    EXPECT_EQ(p.deleted, 1) << "deleter must run exactly once after the last view";
  }
}

TEST_P(DLPack, FailedImportsLeaveOwnershipWithTheCaller) {
  ctl_tensor* const sentinel = reinterpret_cast<ctl_tensor*>(0x5e5e);
  struct Case {
    const char* what;
    std::function<void(Producer&)> spoil;
    ctl_status_code code;
  };
  const std::vector<Case> cases = {
      {"CUDA device memory",
       [](Producer& p) {
         p.managed.dl_tensor.device = {kDLCUDA, 0};
       },
       CTL_STATUS_UNSUPPORTED},
      {"two lanes", [](Producer& p) { p.managed.dl_tensor.dtype.lanes = 2; }, CTL_STATUS_UNSUPPORTED},
      {"complex dtype",
       [](Producer& p) {
         p.managed.dl_tensor.dtype = {kDLComplex, 64, 1};
       },
       CTL_STATUS_UNSUPPORTED},
      {"rank 9", [](Producer& p) { p.managed.dl_tensor.ndim = 9; }, CTL_STATUS_INVALID_ARGUMENT},
      {"negative ndim", [](Producer& p) { p.managed.dl_tensor.ndim = -1; }, CTL_STATUS_INVALID_ARGUMENT},
      {"negative stride", [](Producer& p) { p.strides[0] = -1; }, CTL_STATUS_UNSUPPORTED},
      {"negative dim", [](Producer& p) { p.shape[0] = -4; }, CTL_STATUS_INVALID_ARGUMENT},
      {"NULL data", [](Producer& p) { p.managed.dl_tensor.data = nullptr; }, CTL_STATUS_INVALID_ARGUMENT},
      {"NULL shape", [](Producer& p) { p.managed.dl_tensor.shape = nullptr; }, CTL_STATUS_INVALID_ARGUMENT},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    Producer p({4, 3}, {1, 4}, 12);
    c.spoil(p);
    ctl_tensor* out = sentinel;
    Status s(ctl_tensor_from_dlpack(device_, &p.managed, &out));
    EXPECT_EQ(ctl_status_get_code(s.get()), c.code) << describe(s.get());
    EXPECT_EQ(out, sentinel);
    EXPECT_EQ(p.deleted, 0) << "a failed import must not call the deleter";
  }
  // Versioned-only failures.
  {
    Producer p({4}, {}, 4);
    p.versioned.version = {2, 0};
    ctl_tensor* out = sentinel;
    Status s(ctl_tensor_from_dlpack_versioned(device_, &p.versioned, &out));
    EXPECT_EQ(ctl_status_get_code(s.get()), CTL_STATUS_UNSUPPORTED) << describe(s.get());
    EXPECT_EQ(out, sentinel);
    EXPECT_EQ(p.deleted, 0);
  }
  {
    Producer p({4}, {}, 4);
    p.versioned.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
    ctl_tensor* out = sentinel;
    Status s(ctl_tensor_from_dlpack_versioned(device_, &p.versioned, &out));
    EXPECT_EQ(ctl_status_get_code(s.get()), CTL_STATUS_UNSUPPORTED) << describe(s.get());
    EXPECT_NE(std::string(ctl_status_get_message(s.get())).find("read-only"), std::string::npos);
    EXPECT_EQ(out, sentinel);
    EXPECT_EQ(p.deleted, 0);
  }
  // NULL arguments.
  {
    Producer p({4}, {}, 4);
    ctl_tensor* out = sentinel;
    Status s1(ctl_tensor_from_dlpack(nullptr, &p.managed, &out));
    EXPECT_EQ(ctl_status_get_code(s1.get()), CTL_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::string(ctl_status_get_message(s1.get())).find("device"), std::string::npos);
    Status s2(ctl_tensor_from_dlpack(device_, &p.managed, nullptr));
    EXPECT_EQ(ctl_status_get_code(s2.get()), CTL_STATUS_INVALID_ARGUMENT);
    Status s3(ctl_tensor_from_dlpack(device_, nullptr, &out));
    EXPECT_EQ(ctl_status_get_code(s3.get()), CTL_STATUS_INVALID_ARGUMENT);
    Status s4(ctl_tensor_from_dlpack_versioned(nullptr, &p.versioned, &out));
    EXPECT_EQ(ctl_status_get_code(s4.get()), CTL_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(out, sentinel);
    EXPECT_EQ(p.deleted, 0);
    DLManagedTensor* m = reinterpret_cast<DLManagedTensor*>(0x77);
    Status s5(ctl_tensor_to_dlpack(nullptr, &m));
    EXPECT_EQ(ctl_status_get_code(s5.get()), CTL_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(m, reinterpret_cast<DLManagedTensor*>(0x77));
    auto t = matrix();
    Status s6(ctl_tensor_to_dlpack(t.get(), nullptr));
    EXPECT_EQ(ctl_status_get_code(s6.get()), CTL_STATUS_INVALID_ARGUMENT);
    Status s7(ctl_tensor_to_dlpack_versioned(t.get(), nullptr));
    EXPECT_EQ(ctl_status_get_code(s7.get()), CTL_STATUS_INVALID_ARGUMENT);
  }
}

// Import checks the memory a producer describes before trusting it: a byte_offset that
// wraps the pointer (issue 20: UINT64_MAX - 3 read 4 bytes before the buffer), one whose
// view would run past the end of the address space, one misaligned for the dtype, strides
// whose span overflows, a host device id other than 0, and versioned flag bits from a
// newer DLPack. Each gets a status naming the field and its value; nothing is created and
// the deleter is not called.
TEST_P(DLPack, ImportRefusesMemoryItCannotAddress) {
  ctl_tensor* const sentinel = reinterpret_cast<ctl_tensor*>(0x5e5e);
  struct Case {
    const char* what;
    std::function<void(DLTensor&)> spoil;
    ctl_status_code code;
    std::vector<std::string> message_has;
  };
  const std::vector<Case> cases = {
      {"byte_offset wraps the pointer",
       [](DLTensor& dl) { dl.byte_offset = UINT64_MAX - 3; },
       CTL_STATUS_INVALID_ARGUMENT,
       {"byte_offset", "18446744073709551612"}},
      {"the view wraps past the end of memory",
       [](DLTensor& dl) {
         // data + byte_offset is the last 4-aligned address: the view's 48 bytes wrap.
         dl.byte_offset = UINTPTR_MAX - reinterpret_cast<uintptr_t>(dl.data) - 3;
       },
       CTL_STATUS_INVALID_ARGUMENT,
       {"byte_offset", "wrap"}},
      {"byte_offset misaligned for f32",
       [](DLTensor& dl) { dl.byte_offset = 2; },
       CTL_STATUS_INVALID_ARGUMENT,
       {"byte_offset is 2", "aligned", "f32"}},
      {"a stride times its extent overflows",
       [](DLTensor& dl) { dl.strides[0] = INT64_MAX / 2; },
       CTL_STATUS_INVALID_ARGUMENT,
       {"strides[0]", std::to_string(INT64_MAX / 2)}},
      {"the strides' sum overflows",
       [](DLTensor& dl) {
         dl.shape[0] = 2;
         dl.shape[1] = 2;
         // Each axis spans 2^60 elements; together 2^61, past the 2^63 bytes of f32.
         dl.strides[0] = int64_t{1} << 60;
         dl.strides[1] = int64_t{1} << 60;
       },
       CTL_STATUS_INVALID_ARGUMENT,
       {"strides[1]", std::to_string(int64_t{1} << 60)}},
      {"the span in bytes overflows",
       [](DLTensor& dl) {
         dl.shape[0] = 2;
         dl.shape[1] = 1;
         dl.strides[0] = int64_t{1} << 62;  // 2^62 + 1 elements of 4 bytes
       },
       CTL_STATUS_INVALID_ARGUMENT,
       {"strides[0]", "2^63 bytes"}},
      {"device_id 1 on the CPU",
       [](DLTensor& dl) { dl.device.device_id = 1; },
       CTL_STATUS_INVALID_ARGUMENT,
       {"device_id is 1"}},
      {"device_id -1 in pinned memory",
       [](DLTensor& dl) {
         dl.device = {kDLCUDAHost, -1};
       },
       CTL_STATUS_INVALID_ARGUMENT,
       {"device_id is -1"}},
      {"a device type no DLPack has (any int, as C may store)",
       [](DLTensor& dl) {
         const int32_t type = 64767;  // the fuzzer's value; UBSan reported loading it as the enum
         std::memcpy(&dl.device.device_type, &type, sizeof type);
       },
       CTL_STATUS_UNSUPPORTED,
       {"device type 64767"}},
      {"NULL data with elements",
       [](DLTensor& dl) { dl.data = nullptr; },
       CTL_STATUS_INVALID_ARGUMENT,
       {"data is NULL", "48 bytes"}},
  };
  for (const auto& c : cases) {
    for (bool versioned : {false, true}) {
      SCOPED_TRACE(std::string(c.what) + (versioned ? " (versioned)" : " (0.x)"));
      Producer p({4, 3}, {1, 4}, 12);
      c.spoil(versioned ? p.versioned.dl_tensor : p.managed.dl_tensor);
      ctl_tensor* out = sentinel;
      Status s(versioned ? ctl_tensor_from_dlpack_versioned(device_, &p.versioned, &out)
                         : ctl_tensor_from_dlpack(device_, &p.managed, &out));
      EXPECT_EQ(ctl_status_get_code(s.get()), c.code) << describe(s.get());
      for (const auto& part : c.message_has) {
        EXPECT_NE(describe(s.get()).find(part), std::string::npos) << "no '" << part << "' in: " << describe(s.get());
      }
      EXPECT_EQ(p.deleted, 0) << "a failed import must not call the deleter";
      EXPECT_EQ(out, sentinel);
      if (out != sentinel) ctl_tensor_release(out);  // accepted by mistake: do not leak it
    }
  }
}

TEST_P(DLPack, ImportRefusesFlagBitsItDoesNotKnow) {
  for (const uint64_t flags : {uint64_t{1} << 3, uint64_t{1} << 63, ~uint64_t{0} & ~uint64_t{1}}) {
    SCOPED_TRACE(flags);
    Producer p({4, 3}, {1, 4}, 12);
    p.versioned.flags = flags;
    ctl_tensor* out = reinterpret_cast<ctl_tensor*>(0x5e5e);
    Status s(ctl_tensor_from_dlpack_versioned(device_, &p.versioned, &out));
    EXPECT_EQ(ctl_status_get_code(s.get()), CTL_STATUS_UNSUPPORTED) << describe(s.get());
    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(flags));
    EXPECT_NE(describe(s.get()).find(std::string("flags is ") + hex), std::string::npos) << describe(s.get());
    if (out != reinterpret_cast<ctl_tensor*>(0x5e5e)) ctl_tensor_release(out);
    EXPECT_EQ(out, reinterpret_cast<ctl_tensor*>(0x5e5e));
  }
  // The informational bits of DLPack 1.0 and 1.1 are accepted.
  for (const uint64_t flags : {DLPACK_FLAG_BITMASK_IS_COPIED, DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED}) {
    SCOPED_TRACE(flags);
    Producer p({4, 3}, {1, 4}, 12);
    p.versioned.flags = flags;
    ctl_tensor* out = nullptr;
    CTL_ASSERT_OK(ctl_tensor_from_dlpack_versioned(device_, &p.versioned, &out));
    EXPECT_EQ(to_vector<float>(out), (std::vector<float>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
    ctl_tensor_release(out);
    EXPECT_EQ(p.deleted, 1);
  }
}

// What the checks must still let through: an aligned offset into the buffer, pinned host
// memory, huge strides on axes of size 1 (never stepped over), and an empty tensor
// without data.
TEST_P(DLPack, ImportAcceptsEveryAddressableView) {
  {
    Producer p({2, 3}, {}, 12);
    p.managed.dl_tensor.byte_offset = 6 * sizeof(float);
    p.managed.dl_tensor.device = {kDLCUDAHost, 0};
    ctl_tensor* out = nullptr;
    CTL_ASSERT_OK(ctl_tensor_from_dlpack(device_, &p.managed, &out));
    EXPECT_EQ(to_vector<float>(out), (std::vector<float>{6, 7, 8, 9, 10, 11}));
    ctl_tensor_release(out);
  }
  {
    Producer p({1, 3}, {INT64_MAX, 1}, 3);
    ctl_tensor* out = nullptr;
    CTL_ASSERT_OK(ctl_tensor_from_dlpack(device_, &p.managed, &out));
    EXPECT_EQ(to_vector<float>(out), (std::vector<float>{0, 1, 2}));
    ctl_tensor_release(out);
  }
  {
    Producer p({0, 3}, {}, 0);
    p.managed.dl_tensor.data = nullptr;
    ctl_tensor* out = nullptr;
    CTL_ASSERT_OK(ctl_tensor_from_dlpack(device_, &p.managed, &out));
    EXPECT_EQ(ctl_tensor_numel(out), 0);
    ctl_tensor_release(out);
  }
  {
    // An empty view's strides address nothing, so huge ones are accepted, and replaced by
    // contiguous ones: a plugin that merged axes multiplied them (2^62 x 3 overflowed in the
    // CPU plugin's copy, found by the DLPack fuzzer under UBSan).
    Producer p({0, 3, 2}, {int64_t{1} << 62, int64_t{1} << 62, 1}, 0);
    ctl_tensor* out = nullptr;
    CTL_ASSERT_OK(ctl_tensor_from_dlpack(device_, &p.managed, &out));
    ctl_tensor_info info{};
    info.struct_size = CTL_TENSOR_INFO_STRUCT_SIZE;
    CTL_ASSERT_OK(ctl_tensor_get_info(out, &info));
    EXPECT_EQ(info.strides[0], 6);
    EXPECT_EQ(info.strides[1], 2);
    EXPECT_EQ(info.strides[2], 1);
    ctl_tensor* copy = nullptr;
    CTL_EXPECT_OK(ctl_tensor_contiguous(out, &copy));
    ctl_tensor_release(copy);
    ctl_tensor_release(out);
  }
}

TEST_P(DLPack, EveryDtypeExportsWithItsDLPackCode) {
  struct Expect {
    ctl_dtype dtype;
    uint8_t code, bits;
  };
  const Expect expects[] = {
      {CTL_DTYPE_F32, kDLFloat, 32},   {CTL_DTYPE_F64, kDLFloat, 64}, {CTL_DTYPE_F16, kDLFloat, 16},
      {CTL_DTYPE_BF16, kDLBfloat, 16}, {CTL_DTYPE_I8, kDLInt, 8},     {CTL_DTYPE_U8, kDLUInt, 8},
      {CTL_DTYPE_I32, kDLInt, 32},     {CTL_DTYPE_I64, kDLInt, 64},   {CTL_DTYPE_BOOL, 6 /* kDLBool */, 8}};
  ctl_device_info info{};
  info.struct_size = CTL_DEVICE_INFO_STRUCT_SIZE;
  CTL_ASSERT_OK(ctl_device_get_info(device_, &info));
  for (const auto& e : expects) {
    if (!(info.dtype_mask & CTL_DTYPE_BIT(e.dtype))) continue;
    SCOPED_TRACE(ctl_dtype_name(e.dtype));
    const int64_t shape[] = {2};
    ctl_tensor* t = nullptr;
    CTL_ASSERT_OK(ctl_tensor_create_zeros(device_, e.dtype, 1, shape, &t));
    Tensor owner(t);
    DLManagedTensor* m = nullptr;
    CTL_ASSERT_OK(ctl_tensor_to_dlpack(t, &m));
    EXPECT_EQ(m->dl_tensor.dtype.code, e.code);
    EXPECT_EQ(m->dl_tensor.dtype.bits, e.bits);
    ctl_tensor* back = nullptr;
    CTL_ASSERT_OK(ctl_tensor_from_dlpack(device_, m, &back));
    EXPECT_EQ(ctl_tensor_dtype(back), e.dtype);
    ctl_tensor_release(back);
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, DLPack, ::testing::ValuesIn(devices_under_test()),
                         [](const auto& info) { return info.param; });

}  // namespace
