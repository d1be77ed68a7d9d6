// sdk_host_walk_test.cpp — the SDK's loops over host memory (sdk/host_walk.hpp) on their own:
// the order and offsets walk_views visits for dense, transposed, broadcast, sliced, empty and
// rank-0 views, a normalisation's rows with one axis skipped, map_elements writing only its
// output's elements, typed loads and stores, and visit_dtype compiling only the claimed types.
#include <gtest/gtest.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "catalyst/sdk/host_walk.hpp"

namespace {

namespace sdk = catalyst::sdk;
using sdk::HostView;

HostView view(void* data, ctl_dtype dtype, size_t element_size, std::vector<int64_t> shape,
              std::vector<int64_t> strides, int64_t offset = 0) {
  HostView v;
  v.data = static_cast<char*>(data);
  v.dtype = dtype;
  v.element_size = element_size;
  v.offset = offset;
  v.rank = static_cast<uint32_t>(shape.size());
  for (uint32_t i = 0; i < v.rank; ++i) {
    v.shape[i] = shape[i];
    v.strides[i] = strides[i];
  }
  return v;
}

// Every (i, at[0], at[1]) walk_views visits for two views.
std::vector<std::vector<int64_t>> visits(const HostView& a, const HostView& b, uint32_t skip = CTL_MAX_RANK) {
  std::vector<std::vector<int64_t>> seen;
  const HostView* views[] = {&a, &b};
  sdk::walk_views(views, skip, [&](int64_t i, const int64_t(&at)[2]) { seen.push_back({i, at[0], at[1]}); });
  return seen;
}

TEST(HostWalk, VisitsRowMajorOrderWhateverTheStrides) {
  float storage[6] = {};
  const HostView contiguous = view(storage, CTL_DTYPE_F32, 4, {2, 3}, {3, 1});
  const HostView transposed = view(storage, CTL_DTYPE_F32, 4, {2, 3}, {1, 2});  // column-major
  const std::vector<std::vector<int64_t>> expected = {{0, 0, 0}, {1, 2, 1}, {2, 4, 2}, {3, 1, 3}, {4, 3, 4}, {5, 5, 5}};
  EXPECT_EQ(visits(transposed, contiguous), expected);
}

TEST(HostWalk, WalksEveryAxisOfAReversedView) {
  // (2, 3, 2) contiguous with its axes reversed: no two axes merge, so the walk carries over
  // two outer axes.
  float storage[12] = {};
  const HostView reversed = view(storage, CTL_DTYPE_F32, 4, {2, 3, 2}, {1, 2, 6});
  const HostView dense = view(storage, CTL_DTYPE_F32, 4, {2, 3, 2}, {6, 2, 1});
  std::vector<std::vector<int64_t>> expected;
  for (int64_t a = 0; a < 2; ++a) {
    for (int64_t b = 0; b < 3; ++b) {
      for (int64_t c = 0; c < 2; ++c) expected.push_back({a * 6 + b * 2 + c, a + 2 * b + 6 * c, a * 6 + b * 2 + c});
    }
  }
  EXPECT_EQ(visits(reversed, dense), expected);
}

TEST(HostWalk, BroadcastAxesStandStill) {
  float storage[6] = {};
  const HostView row = view(storage, CTL_DTYPE_F32, 4, {2, 3}, {0, 1});
  const HostView column = view(storage, CTL_DTYPE_F32, 4, {2, 3}, {1, 0});
  const std::vector<std::vector<int64_t>> expected = {{0, 0, 0}, {1, 1, 0}, {2, 2, 0}, {3, 0, 1}, {4, 1, 1}, {5, 2, 1}};
  EXPECT_EQ(visits(row, column), expected);
}

TEST(HostWalk, MergesAndDropsAxesWithoutChangingTheOrder) {
  float storage[64] = {};
  // (2, 1, 4) sliced out of rows of 8, and a dense one: offsets follow each view's strides.
  const HostView sliced = view(storage, CTL_DTYPE_F32, 4, {2, 1, 4}, {8, 99, 1});
  const HostView dense = view(storage, CTL_DTYPE_F32, 4, {2, 1, 4}, {4, 4, 1});
  const auto seen = visits(sliced, dense);
  ASSERT_EQ(seen.size(), 8u);
  for (int64_t i = 0; i < 8; ++i) {
    EXPECT_EQ(seen[i], (std::vector<int64_t>{i, i / 4 * 8 + i % 4, i})) << "element " << i;
  }
}

TEST(HostWalk, RankZeroIsOneElementAndEmptyIsNone) {
  float storage[1] = {};
  const HostView scalar = view(storage, CTL_DTYPE_F32, 4, {}, {});
  EXPECT_EQ(visits(scalar, scalar), (std::vector<std::vector<int64_t>>{{0, 0, 0}}));
  const HostView empty = view(storage, CTL_DTYPE_F32, 4, {3, 0, 2}, {0, 2, 1});
  EXPECT_TRUE(visits(empty, empty).empty());
}

TEST(HostWalk, SkippedAxisWalksRowsAndStatisticsOfAnotherShape) {
  float storage[24] = {};
  // x (2, 3, 4) contiguous, rows along axis 1: 8 rows starting at [0..3] and [12..15].
  const HostView x = view(storage, CTL_DTYPE_F32, 4, {2, 3, 4}, {12, 4, 1});
  const auto rows = visits(x, x, 1);
  ASSERT_EQ(rows.size(), 8u);
  for (int64_t r = 0; r < 8; ++r) EXPECT_EQ(rows[r][1], r / 4 * 12 + r % 4) << "row " << r;
  // layer_norm's statistics: x (2, 3) over its last axis, mean (2) with stride 5.
  const HostView x2 = view(storage, CTL_DTYPE_F32, 4, {2, 3}, {3, 1});
  HostView mean = view(storage, CTL_DTYPE_F32, 4, {2}, {5});
  EXPECT_EQ(visits(x2, mean, 1), (std::vector<std::vector<int64_t>>{{0, 0, 0}, {1, 3, 5}}));
}

TEST(HostWalk, MapElementsWritesOnlyTheOutputsElements) {
  int32_t a[3] = {1, 2, 3};
  int32_t b[2] = {10, 20};
  int32_t out[16];
  for (int32_t& v : out) v = -1;
  // a broadcast over rows, b over columns, out gapped (stride 2) and starting 1 element in.
  const HostView va = view(a, CTL_DTYPE_I32, 4, {2, 3}, {0, 1});
  const HostView vb = view(b, CTL_DTYPE_I32, 4, {2, 3}, {1, 0});
  const HostView vy = view(out, CTL_DTYPE_I32, 4, {2, 3}, {6, 2}, 1);
  sdk::map_elements<int32_t, int32_t>(vy, {&va, &vb}, [](int32_t p, int32_t q) { return p + q; });
  const int32_t expected[16] = {-1, 11, -1, 12, -1, 13, -1, 21, -1, 22, -1, 23, -1, -1, -1, -1};
  for (int i = 0; i < 16; ++i) EXPECT_EQ(out[i], expected[i]) << "slot " << i;
  // The result type decides the store: a comparison writes one bool byte per element.
  unsigned char flags[6];
  std::memset(flags, 0xA5, sizeof flags);
  const HostView vf = view(flags, CTL_DTYPE_BOOL, 1, {2, 3}, {3, 1});
  sdk::map_elements<int32_t, int32_t>(vf, {&va, &vb}, [](int32_t p, int32_t q) { return p * 10 > q; });
  const unsigned char expected_flags[6] = {0, 1, 1, 0, 0, 1};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(flags[i], expected_flags[i]) << "element " << i;
}

TEST(HostWalk, LoadsAndStoresTypedValues) {
  char bytes[16] = {};
  sdk::store<int64_t>(bytes + 3, -5);  // unaligned is fine
  EXPECT_EQ(sdk::load<int64_t>(bytes + 3), -5);
  bytes[0] = 2;  // a bool byte that is not 0 or 1 still loads as true
  EXPECT_TRUE(sdk::load<bool>(bytes));
  sdk::store(bytes, true);
  EXPECT_EQ(bytes[0], 1);
  float data[4] = {0, 1, 2, 3};
  const HostView v = view(data, CTL_DTYPE_F32, 4, {2}, {1}, 2);
  EXPECT_EQ(sdk::load<float>(v.at(1)), 3.0f);
}

TEST(HostWalk, VisitDtypeCallsOnlyForClaimedDtypes) {
  constexpr uint32_t kMask = CTL_DTYPE_BIT(CTL_DTYPE_F32) | CTL_DTYPE_BIT(CTL_DTYPE_BOOL);
  size_t size = 0;
  const auto size_of = [&](auto t) { size = sizeof t; };
  EXPECT_TRUE(sdk::visit_dtype<kMask>(CTL_DTYPE_F32, size_of));
  EXPECT_EQ(size, 4u);
  EXPECT_TRUE(sdk::visit_dtype<kMask>(CTL_DTYPE_BOOL, size_of));
  EXPECT_EQ(size, 1u);
  size = 0;
  EXPECT_FALSE(sdk::visit_dtype<kMask>(CTL_DTYPE_I64, size_of));            // not claimed
  EXPECT_FALSE(sdk::visit_dtype<sdk::kAllDtypes>(CTL_DTYPE_F16, size_of));  // no C++ type
  EXPECT_FALSE(sdk::visit_dtype<sdk::kAllDtypes>(static_cast<ctl_dtype>(42), size_of));
  EXPECT_EQ(size, 0u);
  EXPECT_TRUE(sdk::visit_dtype<sdk::kAllDtypes>(CTL_DTYPE_I64, size_of));
  EXPECT_EQ(size, 8u);
}

TEST(HostWalk, LoadIndexReadsI32AndI64) {
  int32_t narrow[3] = {5, -1, 7};
  int64_t wide[2] = {int64_t{1} << 40, -3};
  EXPECT_EQ(sdk::load_index(view(narrow, CTL_DTYPE_I32, 4, {3}, {1}), 1), -1);
  EXPECT_EQ(sdk::load_index(view(narrow, CTL_DTYPE_I32, 4, {2}, {1}, 1), 1), 7);
  EXPECT_EQ(sdk::load_index(view(wide, CTL_DTYPE_I64, 8, {2}, {1}), 0), int64_t{1} << 40);
}

// An op context with the call reader's fail(): records the status it would make.
struct FailRecorder {
  mutable ctl_status_code code = CTL_STATUS_OK;
  mutable std::string message;
  [[gnu::format(printf, 3, 4)]] ctl_status* fail(ctl_status_code c, const char* format, ...) const {
    char text[256];
    va_list args;
    va_start(args, format);
    std::vsnprintf(text, sizeof text, format, args);
    va_end(args);
    code = c;
    message = text;
    return reinterpret_cast<ctl_status*>(const_cast<FailRecorder*>(this));
  }
};

TEST(HostWalk, VisitDtypeInAnOpAnswersUnsupportedForOtherDtypes) {
  constexpr uint32_t kMask = CTL_DTYPE_BIT(CTL_DTYPE_I32);
  const FailRecorder ctx;
  int calls = 0;
  EXPECT_EQ(sdk::visit_dtype<kMask>(ctx, CTL_DTYPE_I32, [&](auto) { ++calls; }), nullptr);
  EXPECT_EQ(calls, 1);
  EXPECT_NE(sdk::visit_dtype<kMask>(ctx, CTL_DTYPE_F64, [&](auto) { ++calls; }), nullptr);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(ctx.code, CTL_STATUS_UNSUPPORTED);
  EXPECT_EQ(ctx.message, "no kernel for dtype f64");
}

}  // namespace
