// in_process_comm_test.cpp — the in-process communicator: every collective x dtype x size
// against a reference on 2, 3 and 4 ranks (threads), all ranks bit-identical; a rank that
// never arrives and mismatched collectives give clear errors on every rank within the
// timeout; bad arguments queue nothing. Ranks are reference devices of separate runtimes,
// so no plugin is needed.
#include <gtest/gtest.h>

#include <functional>
#include <thread>

#include "catalyst_comm.h"
#include "comm_test_support.hpp"
#include "test_support.hpp"

namespace {

using ctltest::describe;
using ctltest::Status;
using ctltest::Tensor;

struct CommDeleter {
  void operator()(ctl_comm* c) const { ctl_comm_release(c); }
};
using Comm = std::unique_ptr<ctl_comm, CommDeleter>;

// `size` ranks, each the reference device of a runtime of its own.
struct Group {
  std::vector<ctltest::Runtime> runtimes;
  std::vector<ctl_device*> devices;
  std::vector<Comm> comms;

  explicit Group(uint32_t size, uint32_t timeout_ms = 0) {
    for (uint32_t r = 0; r < size; ++r) {
      ctl_runtime_options o{};
      o.struct_size = CTL_RUNTIME_OPTIONS_STRUCT_SIZE;
      o.disable_discovery = true;
      o.enable_reference_device = true;
      ctl_runtime* rt = nullptr;
      Status s(ctl_runtime_create(&o, &rt));
      EXPECT_EQ(s, nullptr) << describe(s.get());
      runtimes.emplace_back(rt);
      ctl_device* d = nullptr;
      Status ds(ctl_runtime_device(rt, 0, &d));
      EXPECT_EQ(ds, nullptr);
      devices.push_back(d);
    }
    ctl_comm_options options{};
    options.struct_size = CTL_COMM_OPTIONS_STRUCT_SIZE;
    options.default_timeout_ms = timeout_ms;
    std::vector<ctl_comm*> raw(size);
    Status s(ctl_comm_create_in_process(runtimes[0].get(), devices.data(), size, &options, raw.data()));
    EXPECT_EQ(s, nullptr) << describe(s.get());
    for (ctl_comm* c : raw) comms.emplace_back(c);
  }
  uint32_t size() const { return uint32_t(comms.size()); }
};

// Runs body(rank) on one thread per rank.
void each_rank(uint32_t size, const std::function<void(uint32_t)>& body) {
  std::vector<std::thread> threads;
  for (uint32_t r = 0; r < size; ++r) threads.emplace_back(body, r);
  for (auto& t : threads) t.join();
}

Tensor tensor_from(ctl_device* device, ctl_dtype dtype, int64_t n, const std::vector<uint8_t>& bytes) {
  ctl_tensor* t = nullptr;
  Status s(ctl_tensor_from_host(device, dtype, 1, &n, bytes.data(), bytes.size(), &t));
  EXPECT_EQ(s, nullptr) << describe(s.get());
  return Tensor(t);
}

std::vector<uint8_t> bytes_of(ctl_tensor* t) {
  std::vector<uint8_t> out(size_t(ctl_tensor_numel(t)) * ctl_dtype_size(ctl_tensor_dtype(t)));
  Status s(ctl_tensor_to_host(t, out.data(), out.size()));
  EXPECT_EQ(s, nullptr) << describe(s.get());
  return out;
}

const ctl_comm_reduce_op kOps[] = {CTL_COMM_SUM, CTL_COMM_MEAN, CTL_COMM_MAX, CTL_COMM_MIN};

TEST(InProcessComm, AllreduceEveryOpDtypeAndSizeMatchesTheReferenceOnEveryRank) {
  for (uint32_t p : {2u, 3u, 4u}) {
    Group g(p);
    for (ctl_dtype dtype : commtest::reduce_dtypes()) {
      for (int64_t n : commtest::sizes()) {
        for (ctl_comm_reduce_op op : kOps) {
          for (bool exact : {true, false}) {
            std::vector<std::vector<uint8_t>> results(p);
            std::vector<std::string> errors(p);
            each_rank(p, [&](uint32_t r) {
              Tensor t = tensor_from(g.devices[r], dtype, n, commtest::make_bytes(dtype, n, r, exact));
              Status s(ctl_comm_allreduce(g.comms[r].get(), t.get(), op, nullptr));
              errors[r] = describe(s.get());
              results[r] = bytes_of(t.get());
            });
            const std::string where = std::string("p=") + std::to_string(p) + " " + ctl_dtype_name(dtype) +
                                      " n=" + std::to_string(n) + " " + commtest::op_label(op) +
                                      (exact ? " exact" : " random");
            for (uint32_t r = 0; r < p; ++r) {
              ASSERT_EQ(errors[r], "") << where << " rank " << r;
              ASSERT_EQ(results[r], results[0]) << where << ": rank " << r << " differs from rank 0";
            }
            const size_t es = ctl_dtype_size(dtype);
            if (exact) {
              ASSERT_EQ(results[0], commtest::exact_reference(dtype, op, n, p)) << where;
            } else {
              for (int64_t i = 0; i < n; ++i) {
                double expected, tolerance;
                commtest::random_reference(dtype, op, i, p, &expected, &tolerance);
                ASSERT_NEAR(commtest::load(dtype, results[0].data() + i * es), expected, tolerance)
                    << where << " element " << i;
              }
            }
          }
        }
      }
    }
  }
}

TEST(InProcessComm, BroadcastAllgatherAndReduceScatterMatchTheReference) {
  for (uint32_t p : {2u, 4u}) {
    Group g(p);
    for (ctl_dtype dtype : commtest::reduce_dtypes()) {
      for (int64_t n : commtest::sizes()) {
        const size_t es = ctl_dtype_size(dtype);
        const uint32_t root = p - 1;
        std::vector<std::vector<uint8_t>> broadcast(p), gathered(p);
        std::vector<std::vector<std::vector<uint8_t>>> scattered(p, std::vector<std::vector<uint8_t>>(4));
        each_rank(p, [&](uint32_t r) {
          ctl_comm* c = g.comms[r].get();
          Tensor b = tensor_from(g.devices[r], dtype, n, commtest::make_bytes(dtype, n, r, false));
          Status s1(ctl_comm_broadcast(c, b.get(), root, nullptr));
          EXPECT_EQ(s1, nullptr) << describe(s1.get());
          broadcast[r] = bytes_of(b.get());
          Tensor in = tensor_from(g.devices[r], dtype, n, commtest::make_bytes(dtype, n, r, false));
          Tensor out = tensor_from(g.devices[r], dtype, n * p, std::vector<uint8_t>(size_t(n) * p * es));
          Status s2(ctl_comm_allgather(c, in.get(), out.get(), nullptr));
          EXPECT_EQ(s2, nullptr) << describe(s2.get());
          gathered[r] = bytes_of(out.get());
          for (int k = 0; k < 4; ++k) {
            Tensor whole = tensor_from(g.devices[r], dtype, n * p, commtest::make_bytes(dtype, n * p, r, true));
            Tensor part = tensor_from(g.devices[r], dtype, n, std::vector<uint8_t>(size_t(n) * es));
            Status s3(ctl_comm_reduce_scatter(c, whole.get(), part.get(), kOps[k], nullptr));
            EXPECT_EQ(s3, nullptr) << describe(s3.get());
            scattered[r][k] = bytes_of(part.get());
          }
        });
        const std::string where =
            std::string("p=") + std::to_string(p) + " " + ctl_dtype_name(dtype) + " n=" + std::to_string(n);
        for (uint32_t r = 0; r < p; ++r) {
          EXPECT_EQ(broadcast[r], commtest::make_bytes(dtype, n, root, false)) << where << " broadcast rank " << r;
          std::vector<uint8_t> expected;
          for (uint32_t q = 0; q < p; ++q) {
            const auto part = commtest::make_bytes(dtype, n, q, false);
            expected.insert(expected.end(), part.begin(), part.end());
          }
          EXPECT_EQ(gathered[r], expected) << where << " allgather rank " << r;
          for (int k = 0; k < 4; ++k) {
            const auto whole = commtest::exact_reference(dtype, kOps[k], n * p, p);
            const std::vector<uint8_t> block(whole.begin() + r * n * es, whole.begin() + (r + 1) * n * es);
            EXPECT_EQ(scattered[r][k], block)
                << where << " reduce_scatter " << commtest::op_label(kOps[k]) << " rank " << r;
          }
        }
      }
    }
  }
}

TEST(InProcessComm, SendAndRecvAroundTheRingAndAsyncCallsCompleteInOrder) {
  const uint32_t p = 3;
  Group g(p);
  std::vector<std::vector<uint8_t>> got(p), first(p), second(p);
  each_rank(p, [&](uint32_t r) {
    ctl_comm* c = g.comms[r].get();
    Tensor out = tensor_from(g.devices[r], CTL_DTYPE_I64, 5, commtest::make_bytes(CTL_DTYPE_I64, 5, r, true));
    Tensor in = tensor_from(g.devices[r], CTL_DTYPE_I64, 5, std::vector<uint8_t>(40));
    Status s1(ctl_comm_send(c, out.get(), (r + 1) % p, 7, nullptr));
    EXPECT_EQ(s1, nullptr) << describe(s1.get());
    Status s2(ctl_comm_recv(c, in.get(), (r + p - 1) % p, 7, nullptr));
    EXPECT_EQ(s2, nullptr) << describe(s2.get());
    got[r] = bytes_of(in.get());
    // Two allreduces in flight at once: each request completes with its own result.
    Tensor a = tensor_from(g.devices[r], CTL_DTYPE_F32, 3, commtest::make_bytes(CTL_DTYPE_F32, 3, r, true));
    Tensor b = tensor_from(g.devices[r], CTL_DTYPE_F32, 3, commtest::make_bytes(CTL_DTYPE_F32, 3, r, true));
    ctl_comm_request *ra = nullptr, *rb = nullptr;
    Status sa(ctl_comm_allreduce_async(c, a.get(), CTL_COMM_SUM, nullptr, &ra));
    Status sb(ctl_comm_allreduce_async(c, b.get(), CTL_COMM_MAX, nullptr, &rb));
    EXPECT_EQ(sa, nullptr);
    EXPECT_EQ(sb, nullptr);
    Status wb(ctl_comm_request_wait(rb, 0));
    EXPECT_EQ(wb, nullptr) << describe(wb.get());
    bool done = false;
    Status t(ctl_comm_request_test(ra, &done));
    EXPECT_TRUE(done) << "the first call completes before the second";
    Status wa(ctl_comm_request_wait(ra, 0));
    EXPECT_EQ(wa, nullptr) << describe(wa.get());
    ctl_comm_request_release(ra);
    ctl_comm_request_release(rb);
    first[r] = bytes_of(a.get());
    second[r] = bytes_of(b.get());
  });
  for (uint32_t r = 0; r < p; ++r) {
    EXPECT_EQ(got[r], commtest::make_bytes(CTL_DTYPE_I64, 5, (r + p - 1) % p, true)) << "rank " << r;
    EXPECT_EQ(first[r], commtest::exact_reference(CTL_DTYPE_F32, CTL_COMM_SUM, 3, p));
    EXPECT_EQ(second[r], commtest::exact_reference(CTL_DTYPE_F32, CTL_COMM_MAX, 3, p));
  }
}

TEST(InProcessComm, ARankThatNeverArrivesIsAnErrorOnEveryOtherRankAndBreaksTheGroup) {
  const uint32_t p = 3;
  Group g(p, 200);
  std::vector<std::string> errors(p), after(p);
  each_rank(p, [&](uint32_t r) {
    if (r == 2) return;  // rank 2 never calls
    Tensor t = tensor_from(g.devices[r], CTL_DTYPE_F32, 4, commtest::make_bytes(CTL_DTYPE_F32, 4, r, true));
    Status s(ctl_comm_allreduce(g.comms[r].get(), t.get(), CTL_COMM_SUM, nullptr));
    errors[r] = describe(s.get());
    Status again(ctl_comm_barrier(g.comms[r].get(), nullptr));
    after[r] = describe(again.get());
  });
  for (uint32_t r = 0; r < 2; ++r) {
    EXPECT_NE(errors[r].find("DEVICE_LOST"), std::string::npos) << errors[r];
    EXPECT_NE(errors[r].find("rank 2 did not arrive"), std::string::npos) << errors[r];
    EXPECT_NE(errors[r].find("allreduce #0"), std::string::npos) << errors[r];
    EXPECT_NE(after[r].find("FAILED_PRECONDITION"), std::string::npos) << after[r];
    EXPECT_NE(after[r].find("failed earlier"), std::string::npos) << after[r];
  }
}

TEST(InProcessComm, MismatchedCollectivesAreAnErrorNamingBothOnEveryRank) {
  Group g(2, 5000);
  std::vector<std::string> errors(2);
  each_rank(2, [&](uint32_t r) {
    Tensor t = tensor_from(g.devices[r], CTL_DTYPE_F32, 4, commtest::make_bytes(CTL_DTYPE_F32, 4, r, true));
    Status s(r == 0 ? ctl_comm_allreduce(g.comms[r].get(), t.get(), CTL_COMM_SUM, nullptr)
                    : ctl_comm_broadcast(g.comms[r].get(), t.get(), 0, nullptr));
    errors[r] = describe(s.get());
  });
  for (uint32_t r = 0; r < 2; ++r) {
    EXPECT_NE(errors[r].find("FAILED_PRECONDITION: mismatched collectives: rank 0 called allreduce #0 (f32, 4 "
                             "elements, sum), rank 1 called broadcast #0 (f32, 4 elements, root 0)"),
              std::string::npos)
        << errors[r];
  }
}

TEST(InProcessComm, BadArgumentsAreRefusedAndQueueNothing) {
  Group g(2, 300);
  ctl_comm* c = g.comms[0].get();
  Tensor f = tensor_from(g.devices[0], CTL_DTYPE_F32, 4, commtest::make_bytes(CTL_DTYPE_F32, 4, 0, true));
  Tensor flag = tensor_from(g.devices[0], CTL_DTYPE_BOOL, 4, std::vector<uint8_t>(4, 1));
  ctl_comm_request* request = nullptr;
  auto code = [](ctl_status* s) {
    Status owned(s);
    return ctl_status_get_code(owned.get());
  };
  EXPECT_EQ(code(ctl_comm_allreduce(nullptr, f.get(), CTL_COMM_SUM, nullptr)), CTL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(code(ctl_comm_allreduce(c, nullptr, CTL_COMM_SUM, nullptr)), CTL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(code(ctl_comm_allreduce(c, flag.get(), CTL_COMM_SUM, nullptr)), CTL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(code(ctl_comm_allreduce(c, f.get(), static_cast<ctl_comm_reduce_op>(9), nullptr)),
            CTL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(code(ctl_comm_broadcast(c, f.get(), 2, nullptr)), CTL_STATUS_OUT_OF_RANGE);
  EXPECT_EQ(code(ctl_comm_allgather(c, f.get(), f.get(), nullptr)), CTL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(code(ctl_comm_send(c, f.get(), 0, 1, nullptr)), CTL_STATUS_INVALID_ARGUMENT);  // itself
  EXPECT_EQ(code(ctl_comm_send(c, f.get(), 1, 1u << 30, nullptr)), CTL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(code(ctl_comm_allreduce_async(c, f.get(), CTL_COMM_SUM, nullptr, nullptr)), CTL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(request, nullptr);
  ctl_device* same[2] = {g.devices[0], g.devices[0]};
  ctl_comm* out[2] = {nullptr, nullptr};
  EXPECT_EQ(code(ctl_comm_create_in_process(g.runtimes[0].get(), same, 2, nullptr, out)), CTL_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(out[0], nullptr);
  EXPECT_EQ(ctl_comm_rank(nullptr), -1);
  EXPECT_EQ(ctl_comm_size(c), 2);
  // Nothing was queued: both ranks still agree on their first collective.
  std::vector<std::string> errors(2);
  each_rank(2, [&](uint32_t r) {
    Status s(ctl_comm_barrier(g.comms[r].get(), nullptr));
    errors[r] = describe(s.get());
  });
  EXPECT_EQ(errors[0], "");
  EXPECT_EQ(errors[1], "");
}

}  // namespace

namespace {

// Communication plugins by name or path: a missing one and a file that is no communication
// plugin are NOT_FOUND with the reason, and nothing is made.
TEST(CommPlugins, AMissingOrForeignPluginIsNotFoundWithTheReason) {
  Group g(1);
  ctl_runtime* rt = g.runtimes[0].get();
  ctl_comm* comm = nullptr;
  auto message = [&](const char* name) {
    Status s(ctl_comm_create_from_plugin(rt, name, nullptr, &comm));
    EXPECT_EQ(ctl_status_get_code(s.get()), CTL_STATUS_NOT_FOUND) << name;
    return describe(s.get());
  };
  EXPECT_NE(message("nosuch").find("no libcatalyst-comm-nosuch.so in CATALYST_PLUGINS or in the directories searched"),
            std::string::npos);
  EXPECT_NE(message("/nonexistent/libcatalyst-comm-x.so").find("does not exist"), std::string::npos);
  EXPECT_NE(message(CTL_TEST_NO_ENTRY_PLUGIN).find("missing entry symbol ctl_comm_plugin_query"), std::string::npos);
  EXPECT_EQ(comm, nullptr);
  Status s(ctl_comm_create_from_plugin(rt, "", nullptr, &comm));
  EXPECT_EQ(ctl_status_get_code(s.get()), CTL_STATUS_INVALID_ARGUMENT);
}

}  // namespace
