// contract_threads.cpp — the contract cases of threads: several threads may drive one device at once, each with its own
// stream.
#include "contract_support.h"

namespace catalyst::conformance::contract {
namespace {

// ---- threads -----------------------------------------------------------------------------

// One thread's work: 100 iterations of e = (a + b) * b - a on its own stream and buffers.
// The threads start their iterations together; one that fails before then still counts
// down the latch, so the others never wait for it.
// Marks a thread's error text as "the check needs an op the plugin does not run".
constexpr const char* kUnsupportedMark = "unsupported: ";

void thread_body(CaseContext& ctx, int thread, std::latch& start, std::string* error) {
  bool arrived = false;
  constexpr int64_t kN = 1024;
  constexpr int kIterations = 100;
  constexpr uint64_t kBytes = kN * sizeof(int32_t);
  try {
    Resources res(ctx);
    const std::string name = format("thread %d", thread);
    ctl_plugin_stream* stream = res.stream(name);
    const ctl_tensor_view a = make_view(res.buffer(kBytes, name + " a"), CTL_DTYPE_I32, {kN});
    const ctl_tensor_view b = make_view(res.buffer(kBytes, name + " b"), CTL_DTYPE_I32, {kN});
    const ctl_tensor_view c = make_view(res.buffer(kBytes, name + " c"), CTL_DTYPE_I32, {kN});
    const ctl_tensor_view d = make_view(res.buffer(kBytes, name + " d"), CTL_DTYPE_I32, {kN});
    const ctl_tensor_view e = make_view(res.buffer(kBytes, name + " e"), CTL_DTYPE_I32, {kN});
    std::vector<int32_t>& ha = res.host<int32_t>(kN);
    std::vector<int32_t>& hb = res.host<int32_t>(kN);
    std::vector<int32_t>& got = res.host<int32_t>(kN);
    std::vector<int32_t> want(kN);
    arrived = true;
    start.arrive_and_wait();
    for (int iteration = 0; iteration < kIterations; ++iteration) {
      for (int64_t i = 0; i < kN; ++i) {
        ha[i] = static_cast<int32_t>((thread + 1) * 1000 + i + iteration);
        hb[i] = static_cast<int32_t>((i + iteration) % 17 - 8 + thread);
        want[i] = (ha[i] + hb[i]) * hb[i] - ha[i];
      }
      std::fill(got.begin(), got.end(), 0);
      const std::string where = format("%s iteration %d", name.c_str(), iteration);
      res.write(stream, a.buffer, 0, ha.data(), kBytes, where + " a");
      res.write(stream, b.buffer, 0, hb.data(), kBytes, where + " b");
      run_op(res, stream, CTL_OP_ADD, a, &b, c, where + " c = a + b");
      run_op(res, stream, CTL_OP_MUL, c, &b, d, where + " d = c * b");
      run_op(res, stream, CTL_OP_SUB, d, &a, e, where + " e = d - a");
      res.read(stream, e.buffer, 0, got.data(), kBytes, where + " e");
      res.synchronize(stream, where);
      expect_values<int32_t>(got.data(), want.data(), kN, where + ": e = (a + b) * b - a (i32)");
    }
  } catch (const CaseUnsupported& e) {
    *error = std::string(kUnsupportedMark) + e.what();
  } catch (const std::exception& e) {
    *error = e.what();
  } catch (...) {
    *error = format("thread %d: unknown exception", thread);
  }
  if (!arrived) start.count_down();
}

void threads_concurrent_case(CaseContext& ctx) {
  constexpr int kThreads = 4;
  std::latch start(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  std::string spawn_error;
  for (int t = 0; t < kThreads && spawn_error.empty(); ++t) {
    try {
      threads.emplace_back(thread_body, std::ref(ctx), t, std::ref(start), &errors[t]);
    } catch (const std::exception& e) {
      spawn_error = format("could not start thread %d: %s", t, e.what());
      start.count_down(kThreads - t);  // release the threads already waiting
    }
  }
  for (std::thread& thread : threads) thread.join();
  if (!spawn_error.empty()) throw CaseFailure(spawn_error);
  std::string message;
  int failed = 0;
  for (const std::string& error : errors) {
    if (error.rfind(kUnsupportedMark, 0) == 0) throw CaseUnsupported(error.substr(std::strlen(kUnsupportedMark)));
  }
  for (const std::string& error : errors) {
    if (error.empty()) continue;
    ++failed;
    message += (message.empty() ? "" : "; ") + error;
  }
  if (failed) {
    throw CaseFailure(format("%d of %d threads (each with its own stream and buffers on one device) failed: %s", failed,
                             kThreads, message.c_str()));
  }
  ctx.note = "4 threads x 100 iterations";
}

}  // namespace

void add_thread_cases(std::vector<Case>& out) {
  add_case(out, "threads", "concurrent", "i32",
           "4 threads, each with its own stream and buffers, run 100 iterations of an i32 op chain at once",
           threads_concurrent_case);
}

}  // namespace catalyst::conformance::contract
