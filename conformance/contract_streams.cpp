// contract_streams.cpp — the contract cases of streams and events: work on one stream runs in submission order with no
// synchronize in between, two streams do not disturb each other, and an event recorded on one stream orders work on
// another.
#include "contract_support.h"

namespace catalyst::conformance::contract {
namespace {

// ---- streams -----------------------------------------------------------------------------

void streams_ordered_ops_case(CaseContext& ctx) {
  constexpr int64_t kN = 4096;
  constexpr uint64_t kBytes = kN * sizeof(float);
  Resources res(ctx);
  ctl_plugin_stream* stream = res.stream("ordered ops");
  ctl_plugin_buffer* a = res.buffer(kBytes, "A");
  ctl_plugin_buffer* b = res.buffer(kBytes, "B");
  ctl_plugin_buffer* c = res.buffer(kBytes, "C");
  ctl_plugin_buffer* d = res.buffer(kBytes, "D");
  std::vector<float>& a0 = res.host<float>(kN);
  std::vector<float>& a1 = res.host<float>(kN);
  for (int64_t i = 0; i < kN; ++i) {
    a0[i] = static_cast<float>(i % 61 - 30);
    a1[i] = static_cast<float>((i * 7) % 53 - 26);
  }
  std::vector<float> want_b(kN), want_c(kN), want_d(kN), stale_b(kN), stale_d(kN);
  for (int64_t i = 0; i < kN; ++i) {
    want_b[i] = a0[i] + a0[i];
    want_c[i] = want_b[i] * want_b[i];
    want_d[i] = a1[i] + want_c[i];
    stale_b[i] = a1[i] + a1[i];      // B if the second write of A overtook the first ADD
    stale_d[i] = a0[i] + want_c[i];  // D if the last ADD overtook the second write of A
  }
  const ctl_tensor_view va = make_view(a, CTL_DTYPE_F32, {kN});
  const ctl_tensor_view vb = make_view(b, CTL_DTYPE_F32, {kN});
  const ctl_tensor_view vc = make_view(c, CTL_DTYPE_F32, {kN});
  const ctl_tensor_view vd = make_view(d, CTL_DTYPE_F32, {kN});

  res.write(stream, a, 0, a0.data(), kBytes, "A (first data)");
  run_op(res, stream, CTL_OP_ADD, va, &va, vb, "B = A + A");
  run_op(res, stream, CTL_OP_MUL, vb, &vb, vc, "C = B * B");
  res.write(stream, a, 0, a1.data(), kBytes, "A (second data, queued behind the ADD that reads A)");
  run_op(res, stream, CTL_OP_ADD, va, &vc, vd, "D = A + C");
  std::vector<float>& got_b = res.host<float>(kN);
  std::vector<float>& got_c = res.host<float>(kN);
  std::vector<float>& got_d = res.host<float>(kN);
  res.read(stream, b, 0, got_b.data(), kBytes, "B");
  res.read(stream, c, 0, got_c.data(), kBytes, "C");
  res.read(stream, d, 0, got_d.data(), kBytes, "D");
  res.synchronize(stream, "after write A, B = A + A, C = B * B, write A, D = A + C, reads");

  expect_values<float>(got_b.data(), want_b.data(), kN, "B = A + A (f32, first data of A)", [&](size_t i, float v) {
    return v == stale_b[i] ? std::string(
                                 "that is A + A with the second data: the second write "
                                 "of A overtook the ADD queued before it")
                           : std::string();
  });
  expect_values<float>(got_c.data(), want_c.data(), kN, "C = B * B (f32)");
  expect_values<float>(got_d.data(), want_d.data(), kN, "D = A + C (f32, second data of A)", [&](size_t i, float v) {
    return v == stale_d[i] ? std::string(
                                 "that is A + C with the first data of A: the ADD ran "
                                 "before the second write of A queued ahead of it")
                           : std::string();
  });
}

// Enqueues `count` ops x = x + one, ping-ponging between x[0] and x[1]; the result ends in
// x[count % 2].
void enqueue_increment_chain(const Resources& res, ctl_plugin_stream* stream, const ctl_tensor_view (&x)[2],
                             const ctl_tensor_view& one, int count, const std::string& what) {
  for (int k = 0; k < count; ++k) {
    run_op(res, stream, CTL_OP_ADD, x[k % 2], &one, x[(k + 1) % 2],
           format("op %d of %d of %s", k + 1, count, what.c_str()));
  }
}

std::function<std::string(size_t, int32_t)> chain_hint(const std::vector<int32_t>& initial, int count) {
  return [&initial, count](size_t i, int32_t v) {
    const int64_t steps = static_cast<int64_t>(v) - initial[i];
    if (steps >= 0 && steps < count) {
      return format(
          "that is the initial value + %lld: only %lld of the %d queued ops took effect before the read "
          "(work ran out of order or the read overtook it)",
          static_cast<long long>(steps), static_cast<long long>(steps), count);
    }
    return std::string();
  };
}

void streams_long_chain_case(CaseContext& ctx) {
  constexpr int64_t kN = 4096;
  constexpr int kOps = 256;
  constexpr uint64_t kBytes = kN * sizeof(int32_t);
  Resources res(ctx);
  ctl_plugin_stream* stream = res.stream("a long chain");
  ctl_plugin_buffer* x0 = res.buffer(kBytes, "x (even)");
  ctl_plugin_buffer* x1 = res.buffer(kBytes, "x (odd)");
  ctl_plugin_buffer* ones = res.buffer(kBytes, "ones");
  std::vector<int32_t>& initial = res.host<int32_t>(kN);
  std::vector<int32_t>& one = res.host<int32_t>(kN, 1);
  for (int64_t i = 0; i < kN; ++i) initial[i] = static_cast<int32_t>(i * 3 - 5000);
  const ctl_tensor_view x[2] = {make_view(x0, CTL_DTYPE_I32, {kN}), make_view(x1, CTL_DTYPE_I32, {kN})};
  const ctl_tensor_view vone = make_view(ones, CTL_DTYPE_I32, {kN});
  res.write(stream, x0, 0, initial.data(), kBytes, "x");
  res.write(stream, ones, 0, one.data(), kBytes, "ones");
  enqueue_increment_chain(res, stream, x, vone, kOps, "x = x + 1");
  std::vector<int32_t>& got = res.host<int32_t>(kN);
  res.read(stream, kOps % 2 ? x1 : x0, 0, got.data(), kBytes, "x after the chain");
  res.synchronize(stream, "after 256 queued ops and a read");
  std::vector<int32_t> want(kN);
  for (int64_t i = 0; i < kN; ++i) want[i] = initial[i] + kOps;
  expect_values<int32_t>(got.data(), want.data(), kN, "x after 256 ops x = x + 1 (i32) on one stream",
                         chain_hint(initial, kOps));
}

void streams_two_streams_case(CaseContext& ctx) {
  constexpr int64_t kN = 4096;
  constexpr int kOps = 64;
  constexpr uint64_t kBytes = kN * sizeof(int32_t);
  Resources res(ctx);
  struct Lane {
    ctl_plugin_stream* stream;
    ctl_tensor_view x[2];
    ctl_tensor_view step;
    std::vector<int32_t>* initial;
    std::vector<int32_t>* got;
    int32_t increment;
  };
  Lane lanes[2];
  for (int s = 0; s < 2; ++s) {
    Lane& lane = lanes[s];
    const std::string name = format("stream %d", s + 1);
    lane.stream = res.stream(name);
    lane.x[0] = make_view(res.buffer(kBytes, name + " x (even)"), CTL_DTYPE_I32, {kN});
    lane.x[1] = make_view(res.buffer(kBytes, name + " x (odd)"), CTL_DTYPE_I32, {kN});
    lane.step = make_view(res.buffer(kBytes, name + " increment"), CTL_DTYPE_I32, {kN});
    lane.increment = s == 0 ? 1 : -3;
    lane.initial = &res.host<int32_t>(kN);
    for (int64_t i = 0; i < kN; ++i) (*lane.initial)[i] = static_cast<int32_t>(s == 0 ? i : 100000 - 7 * i);
    std::vector<int32_t>& step = res.host<int32_t>(kN, lane.increment);
    lane.got = &res.host<int32_t>(kN);
    res.write(lane.stream, lane.x[0].buffer, 0, lane.initial->data(), kBytes, name + " x");
    res.write(lane.stream, lane.step.buffer, 0, step.data(), kBytes, name + " increment");
  }
  // Interleaved submission: op k of stream 1, then op k of stream 2.
  for (int k = 0; k < kOps; ++k) {
    for (int s = 0; s < 2; ++s) {
      Lane& lane = lanes[s];
      run_op(res, lane.stream, CTL_OP_ADD, lane.x[k % 2], &lane.step, lane.x[(k + 1) % 2],
             format("op %d of %d on stream %d", k + 1, kOps, s + 1));
    }
  }
  for (int s = 0; s < 2; ++s) {
    res.read(lanes[s].stream, lanes[s].x[kOps % 2].buffer, 0, lanes[s].got->data(), kBytes,
             format("stream %d's result", s + 1));
  }
  for (int s = 0; s < 2; ++s) res.synchronize(lanes[s].stream, format("stream %d", s + 1));
  for (int s = 0; s < 2; ++s) {
    const Lane& lane = lanes[s];
    std::vector<int32_t> want(kN);
    for (int64_t i = 0; i < kN; ++i) want[i] = (*lane.initial)[i] + kOps * lane.increment;
    expect_values<int32_t>(lane.got->data(), want.data(), kN,
                           format("stream %d: x after %d ops x = x + (%d) (i32), interleaved with stream %d's chain",
                                  s + 1, kOps, lane.increment, 2 - s));
  }
}

// ---- events ------------------------------------------------------------------------------

// Throws CaseUnsupported when no event entry is provided, CaseFailure when only some are.
void require_events(const ctl_plugin_api& api) {
  const struct {
    const char* name;
    bool present;
  } entries[] = {{"event_create", api.event_create != nullptr},
                 {"event_destroy", api.event_destroy != nullptr},
                 {"event_record", api.event_record != nullptr},
                 {"stream_wait_event", api.stream_wait_event != nullptr},
                 {"event_synchronize", api.event_synchronize != nullptr}};
  std::string have, lack;
  for (const auto& e : entries) {
    std::string& list = e.present ? have : lack;
    list += (list.empty() ? "" : ", ") + std::string(e.name);
  }
  if (have.empty()) {
    throw CaseUnsupported(
        "events are optional and not provided (the core default synchronizes the recording stream "
        "instead)");
  }
  if (!lack.empty()) {
    throw CaseFailure("the plugin provides " + have + " but not " + lack +
                      "; the event entries come as a set of five (all NULL selects the core default)");
  }
}

void events_cross_stream_case(CaseContext& ctx) {
  const ctl_plugin_api& api = ctx.plugin->api;
  require_events(api);
  constexpr int64_t kN = 4096;
  constexpr int kOps = 64;
  constexpr uint64_t kBytes = kN * sizeof(int32_t);
  Resources res(ctx);
  ctl_plugin_stream* s1 = res.stream("S1 (producer)");
  ctl_plugin_stream* s2 = res.stream("S2 (consumer)");
  ctl_plugin_event* event = res.event("S1 -> S2");
  const ctl_tensor_view x[2] = {make_view(res.buffer(kBytes, "X"), CTL_DTYPE_I32, {kN}),
                                make_view(res.buffer(kBytes, "X'"), CTL_DTYPE_I32, {kN})};
  const ctl_tensor_view one = make_view(res.buffer(kBytes, "ones"), CTL_DTYPE_I32, {kN});
  const ctl_tensor_view z = make_view(res.buffer(kBytes, "Z"), CTL_DTYPE_I32, {kN});
  std::vector<int32_t>& initial = res.host<int32_t>(kN);
  std::vector<int32_t>& ones = res.host<int32_t>(kN, 1);
  for (int64_t i = 0; i < kN; ++i) initial[i] = static_cast<int32_t>(7 * i - 9000);
  res.write(s1, x[0].buffer, 0, initial.data(), kBytes, "X on S1");
  res.write(s1, one.buffer, 0, ones.data(), kBytes, "ones on S1");
  enqueue_increment_chain(res, s1, x, one, kOps, "Y = X + 64 on S1");
  require_ok(api.event_record(event, s1), "event_record(E, S1) after the chain");
  require_ok(api.stream_wait_event(s2, event), "stream_wait_event(S2, E)");
  const ctl_tensor_view& y = x[kOps % 2];
  run_op(res, s2, CTL_OP_COPY, y, nullptr, z, "Z = copy(Y) on S2, behind the wait");
  std::vector<int32_t>& got = res.host<int32_t>(kN);
  res.read(s2, z.buffer, 0, got.data(), kBytes, "Z on S2");
  res.synchronize(s2, "S2 (only S2: the wait must make S2 run after S1's chain)");
  std::vector<int32_t> want(kN);
  for (int64_t i = 0; i < kN; ++i) want[i] = initial[i] + kOps;
  std::string failure;
  try {
    expect_values<int32_t>(got.data(), want.data(), kN,
                           "Z = copy(Y) on S2 after stream_wait_event on an event recorded behind S1's 64-op chain",
                           chain_hint(initial, kOps));
  } catch (const CaseFailure& e) {
    failure = e.what();
  }
  res.synchronize(s1, "S1 before freeing");
  if (!failure.empty()) throw CaseFailure(failure);
}

void events_synchronize_case(CaseContext& ctx) {
  const ctl_plugin_api& api = ctx.plugin->api;
  require_events(api);
  constexpr int64_t kN = 4096;
  constexpr int kOps = 16;
  constexpr uint64_t kBytes = kN * sizeof(int32_t);
  Resources res(ctx);
  ctl_plugin_stream* s1 = res.stream("S1 (producer)");
  ctl_plugin_stream* s2 = res.stream("S2 (reader)");
  ctl_plugin_event* event = res.event("after S1's work");
  const ctl_tensor_view x[2] = {make_view(res.buffer(kBytes, "X"), CTL_DTYPE_I32, {kN}),
                                make_view(res.buffer(kBytes, "X'"), CTL_DTYPE_I32, {kN})};
  const ctl_tensor_view one = make_view(res.buffer(kBytes, "ones"), CTL_DTYPE_I32, {kN});
  std::vector<int32_t>& initial = res.host<int32_t>(kN);
  std::vector<int32_t>& ones = res.host<int32_t>(kN, 1);
  for (int64_t i = 0; i < kN; ++i) initial[i] = static_cast<int32_t>(i * i % 10007);
  res.write(s1, x[0].buffer, 0, initial.data(), kBytes, "X on S1");
  res.write(s1, one.buffer, 0, ones.data(), kBytes, "ones on S1");
  enqueue_increment_chain(res, s1, x, one, kOps, "Y = X + 16 on S1");
  require_ok(api.event_record(event, s1), "event_record(E, S1) after the chain");
  require_ok(api.event_synchronize(event), "event_synchronize(E)");
  std::vector<int32_t>& got = res.host<int32_t>(kN);
  res.read(s2, x[kOps % 2].buffer, 0, got.data(), kBytes, "Y on S2");
  res.synchronize(s2, "S2");
  std::vector<int32_t> want(kN);
  for (int64_t i = 0; i < kN; ++i) want[i] = initial[i] + kOps;
  expect_values<int32_t>(got.data(), want.data(), kN,
                         "Y read on S2 after event_synchronize on an event recorded behind S1's 16-op chain",
                         chain_hint(initial, kOps));
}

}  // namespace

void add_stream_cases(std::vector<Case>& out) {
  add_case(out, "streams", "ordered_ops", "f32",
           "write A; B = A + A; C = B * B; write A; D = A + C on one stream with one synchronize",
           streams_ordered_ops_case);
  add_case(out, "streams", "long_chain", "i32", "256 queued ops x = x + 1 on one stream, one read, one synchronize",
           streams_long_chain_case);
  add_case(out, "streams", "two_streams_independent", "i32", "two streams each run their own interleaved 64-op chain",
           streams_two_streams_case);

  add_case(out, "events", "cross_stream", "i32",
           "an event recorded behind S1's chain makes S2's copy wait for it; only S2 is synchronized",
           events_cross_stream_case);
  add_case(out, "events", "synchronize", "i32", "event_synchronize makes S1's work visible to a read on S2",
           events_synchronize_case);
}

}  // namespace catalyst::conformance::contract
