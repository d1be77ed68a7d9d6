// conformance_test.cpp — the conformance suite catches each deliberately broken plugin of
// tests/conformance/ (one defect each, everything else the real CPU plugin), names the op
// and the reason, survives crashes and hangs, reruns a failing case exactly from the
// command it prints, and judges a plugin that claims part of the op set only on its claims.
//
// Each test runs `catalyst conformance` as a user would and reads its summary (stdout),
// exit status and JSON/Markdown reports.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct SuiteRun {
  int exit_code = -1;
  std::string out;   // the summary on stdout
  std::string json;  // the JSON report
  std::string markdown;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs a shell command and returns its exit status and stdout.
SuiteRun run_command(const std::string& command) {
  SuiteRun r;
  FILE* pipe = popen((command + " 2>/dev/null").c_str(), "r");
  if (!pipe) return r;
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, pipe)) > 0) r.out.append(chunk, n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string temp_dir() {
  char dir[] = "/tmp/catalyst-conformance-test-XXXXXX";
  return mkdtemp(dir) ? dir : "/tmp";
}

std::string broken(const std::string& defect) {
  return std::string(CTL_BROKEN_PLUGIN_DIR) + "/libcatalyst-broken-" + defect + ".so";
}

// `catalyst conformance --plugin PLUGIN ARGS` with JSON and Markdown reports.
SuiteRun conformance(const std::string& plugin, const std::string& args) {
  const std::string dir = temp_dir();
  const std::string json = dir + "/report.json", md = dir + "/report.md";
  SuiteRun r = run_command(std::string(CTL_CATALYST_TOOL) + " conformance --plugin " + plugin + " --jobs 2 --report " +
                           json + " --markdown " + md + " " + args);
  r.json = read_file(json);
  r.markdown = read_file(md);
  return r;
}

// The status the JSON report gives case `id` ("" when absent).
std::string status_of(const SuiteRun& r, const std::string& id) {
  const size_t at = r.json.find("\"id\": \"" + id + "\"");
  if (at == std::string::npos) return "";
  const std::string key = "\"status\": \"";
  const size_t s = r.json.find(key, at);
  if (s == std::string::npos) return "";
  const size_t begin = s + key.size();
  return r.json.substr(begin, r.json.find('"', begin) - begin);
}

// Ids of the cases the summary reports as FAIL, CRASH or TIMEOUT.
std::vector<std::string> failed_ids(const std::string& out) {
  std::vector<std::string> ids;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    for (const char* word : {"FAIL ", "CRASH ", "TIMEOUT "}) {
      if (line.rfind(word, 0) == 0) {
        const size_t begin = std::string(word).size();
        ids.push_back(line.substr(begin, line.find(' ', begin) - begin));
      }
    }
  }
  return ids;
}

// The lines of the summary's block for case `id`, from its header to its rerun line.
std::string block_of(const std::string& out, const std::string& id) {
  const size_t at = out.find(" " + id + " [");
  if (at == std::string::npos) return "";
  const size_t end = out.find("\n  rerun: ", at);
  return out.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

std::string rerun_line(const std::string& out, const std::string& id) {
  const size_t at = out.find(" " + id + " [");
  if (at == std::string::npos) return "";
  const std::string key = "\n  rerun: ";
  const size_t r = out.find(key, at);
  if (r == std::string::npos) return "";
  return out.substr(r + key.size(), out.find('\n', r + key.size()) - r - key.size());
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

// --exclude leaves out what it matches (here the only wrong cases), in the supervisor and its
// workers alike, and the run is a subset: it passes without claiming a level.
TEST(Conformance, ExcludedCasesAreNotRunAndTheSubsetReachesNoLevel) {
  const SuiteRun r = conformance(broken("wrong-result"), "--filter 'exp.*' --exclude 'exp.f32.*'");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.json.find("\"id\": \"exp.f32."), std::string::npos) << r.json.substr(0, 2000);
  EXPECT_EQ(status_of(r, "exp.f64.0"), "pass");
  EXPECT_NE(r.json.find("\"level_reached\": \"n/a (filtered run)\""), std::string::npos);
  EXPECT_NE(r.json.find("\"exclude\": \"exp.f32.*\""), std::string::npos);
}

TEST(Conformance, WrongResultInOneOpAndDtypeIsNamedAndRerunsExactly) {
  const SuiteRun r = conformance(broken("wrong-result"), "--filter 'exp.*'");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const auto failed = failed_ids(r.out);
  ASSERT_FALSE(failed.empty()) << r.out;
  for (const auto& id : failed) EXPECT_TRUE(starts_with(id, "exp.f32.")) << id << " failed\n" << r.out;
  EXPECT_EQ(status_of(r, "exp.f64.0"), "pass");
  EXPECT_EQ(status_of(r, "exp.f16.0"), "pass");
  const std::string block = block_of(r.out, failed.front());
  EXPECT_NE(block.find("elements differ from the reference"), std::string::npos) << block;
  EXPECT_NE(block.find("worst element"), std::string::npos) << block;
  EXPECT_NE(block.find("expected"), std::string::npos) << block;
  EXPECT_NE(block.find("strides"), std::string::npos) << block;

  // The printed command reruns exactly that case, with the same verdict and numbers.
  const std::string rerun = rerun_line(r.out, failed.front());
  ASSERT_NE(rerun.find("--filter"), std::string::npos) << rerun;
  const SuiteRun again = run_command(rerun);
  EXPECT_EQ(again.exit_code, 1) << again.out;
  EXPECT_EQ(failed_ids(again.out), std::vector<std::string>{failed.front()}) << again.out;
  EXPECT_EQ(block_of(again.out, failed.front()), block);
}

TEST(Conformance, IgnoredInputStridesFailOnlyTheStridedCases) {
  const SuiteRun r = conformance(broken("ignores-strides"), "--filter 'add.f32.*,sub.f32.*'");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(status_of(r, "add.f32.0"), "pass") << "contiguous operands of one shape must still pass";
  EXPECT_EQ(status_of(r, "add.f32.1"), "fail") << "a permuted input with a broadcast partner must fail";
  // sub is right; add's judged rerun in other strides fails too (add.rerun).
  for (const auto& id : failed_ids(r.out)) EXPECT_TRUE(starts_with(id, "add.f32.") || id == "add.rerun") << id;
  EXPECT_NE(block_of(r.out, "add.f32.1").find("permuted"), std::string::npos) << r.out;
}

TEST(Conformance, WritePastTheOutputIsCaughtByTheGuard) {
  const SuiteRun r = conformance(broken("writes-past-end"), "--filter 'mul.i32.*'");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const auto failed = failed_ids(r.out);
  ASSERT_FALSE(failed.empty()) << r.out;
  EXPECT_NE(block_of(r.out, failed.front()).find("past the output's last element"), std::string::npos) << r.out;
}

TEST(Conformance, LeakedHostAllocationsAreReportedWithTheOp) {
  const SuiteRun r = conformance(broken("leaks"), "--filter 'sub.f32.*,add.f32.0'");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(status_of(r, "sub.leaks"), "fail") << r.json;
  EXPECT_EQ(status_of(r, "add.f32.0"), "pass");
  const std::string block = block_of(r.out, "sub.leaks");
  EXPECT_NE(block.find("still live after instance_destroy"), std::string::npos) << r.out;
  EXPECT_NE(block.find("sub.f32."), std::string::npos) << "the cases that leaked are named: " << block;
  EXPECT_EQ(r.out.find("add.leaks"), std::string::npos);
}

TEST(Conformance, ASegfaultInOneOpIsReportedAndTheRunGoesOn) {
  const SuiteRun r = conformance(broken("segfault"), "--filter 'div.f32.0,div.f32.1,div.f64.0,exp.f32.0'");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(status_of(r, "div.f32.0"), "crash");
  EXPECT_EQ(status_of(r, "div.f32.1"), "crash") << "the group resumes after the crashing case";
  EXPECT_EQ(status_of(r, "div.f64.0"), "pass");
  EXPECT_EQ(status_of(r, "exp.f32.0"), "pass");
  EXPECT_NE(block_of(r.out, "div.f32.0").find("SIGSEGV"), std::string::npos) << r.out;
}

TEST(Conformance, AHangIsReportedAsATimeout) {
  const SuiteRun r = conformance(broken("hangs"), "--filter 'sqrt.f32.0,exp.f32.0' --timeout 3");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(status_of(r, "sqrt.f32.0"), "timeout");
  EXPECT_EQ(status_of(r, "exp.f32.0"), "pass");
  const std::string block = block_of(r.out, "sqrt.f32.0");
  EXPECT_NE(block.find("timeout"), std::string::npos) << r.out;
  // The message gives the limit it applied and why: the plain --timeout on an idle machine,
  // or that limit scaled by the load average (a slow case on a busy machine is not a hang).
  const bool plain = block.find("no answer within 3 s (the machine was not loaded)") != std::string::npos;
  const bool scaled = block.find("s (--timeout 3 s scaled by ") != std::string::npos;
  EXPECT_TRUE(plain || scaled) << block;
}

TEST(Conformance, SuccessForAnInvalidCallFails) {
  const SuiteRun r = conformance(broken("accepts-invalid"), "--filter 'contract.bad_calls.*'");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(status_of(r, "contract.bad_calls.unknown_op_id"), "fail") << r.out;
  EXPECT_EQ(status_of(r, "contract.bad_calls.add_mixed_dtypes"), "fail") << r.out;
  EXPECT_NE(block_of(r.out, "contract.bad_calls.unknown_op_id").find("9999"), std::string::npos) << r.out;
}

TEST(Conformance, ResultsThatNeedAnExtraSynchronizeFail) {
  const SuiteRun r = conformance(broken("needs-extra-sync"), "--filter 'exp.f32.0,contract.streams.ordered_ops'");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(status_of(r, "exp.f32.0"), "fail") << r.out;
  EXPECT_EQ(status_of(r, "contract.streams.ordered_ops"), "fail") << r.out;
}

TEST(Conformance, RandomNormalAllowsLibmErrorButNotMore) {
  const SuiteRun r = conformance(broken("normal-error"), "--filter 'random_normal.*'");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const auto failed = failed_ids(r.out);
  ASSERT_FALSE(failed.empty()) << r.out;
  for (const auto& id : failed) EXPECT_TRUE(starts_with(id, "random_normal.f32.")) << id << " failed\n" << r.out;
  // 16u in f64: what OpenCL's log, sqrt and cos may add up to, seen from NVIDIA's driver.
  EXPECT_EQ(status_of(r, "random_normal.f64.0"), "pass") << r.out;
  EXPECT_EQ(status_of(r, "random_normal.f64.1"), "pass") << r.out;
  EXPECT_EQ(status_of(r, "random_normal.f16.0"), "pass") << r.out;
}

// The ulp sweep: tanh that cancels near zero on contiguous input (as the CPU plugin's
// vector code did) passes the numeric cases' absolute floor but not the sweep; the strided
// sweep, which reaches the scalar path, passes.
TEST(Conformance, TanhThatCancelsNearZeroIsCaughtByTheUlpSweep) {
  const SuiteRun r = conformance(broken("tanh-cancels"), "--filter 'tanh.f32.*'");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(failed_ids(r.out), std::vector<std::string>{"tanh.f32.ulp_sweep"}) << r.out;
  EXPECT_EQ(status_of(r, "tanh.f32.ulp_sweep_strided"), "pass") << r.out;
  EXPECT_EQ(status_of(r, "tanh.f32.0"), "pass") << r.out;
  const std::string block = block_of(r.out, "tanh.f32.ulp_sweep");
  EXPECT_NE(block.find("past the bound of"), std::string::npos) << block;
  EXPECT_NE(block.find("worst at x = "), std::string::npos) << block;
  EXPECT_NE(block.find("expected"), std::string::npos) << block;
}

// pow as exp(y log x) in f32 is within the numeric cases' bound for small bases and
// exponents; the sweep's grid of bases and exponents finds it on dense inputs only (and
// the large_tail case, whose results reach 1e35).
TEST(Conformance, PowAsExpOfYLogXIsCaughtByThePowGrid) {
  const SuiteRun r = conformance(broken("pow-exp-log"), "--filter 'pow.f32.*'");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(status_of(r, "pow.f32.ulp_sweep"), "fail") << r.out;
  // The large_tail case's results reach 1e35, and the dense threshold cases of 4096 and 4097
  // elements (conformance/threshold_cases.cpp) draw exponents up to 3: they may see it too.
  for (const auto& id : failed_ids(r.out)) {
    EXPECT_TRUE(id == "pow.f32.ulp_sweep" || id == "pow.f32.large_tail" || id == "pow.f32.n4096" ||
                id == "pow.f32.n4097")
        << id << " failed\n"
        << r.out;
  }
  EXPECT_EQ(status_of(r, "pow.f32.ulp_sweep_strided"), "pass") << r.out;
  EXPECT_EQ(status_of(r, "pow.f32.0"), "pass") << r.out;
  const std::string block = block_of(r.out, "pow.f32.ulp_sweep");
  EXPECT_NE(block.find("past the bound of 16"), std::string::npos) << block;
  EXPECT_NE(block.find(", y = "), std::string::npos) << block;
}

// gelu_backward with docs/ops.md's old 0.5 (1 + erf(x / sqrt 2)) in f32, dense inputs: the
// numeric cases' scale counts the formula's 1, so they pass it; the sweep, in ulps of the
// result, fails it far left of 0 (where 1 + erf is 0 and the derivative is x phi(x) and
// still a normal f32). The strided sweep reaches the CPU plugin's own code and passes.
TEST(Conformance, GeluBackwardWithOnePlusErfIsCaughtByTheUlpSweep) {
  const SuiteRun r = conformance(broken("gelu-backward-erf-cancels"), "--filter 'gelu_backward.f32.*'");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(failed_ids(r.out), std::vector<std::string>{"gelu_backward.f32.ulp_sweep"}) << r.out;
  EXPECT_EQ(status_of(r, "gelu_backward.f32.ulp_sweep_strided"), "pass") << r.out;
  EXPECT_EQ(status_of(r, "gelu_backward.f32.0"), "pass") << r.out;
  const std::string block = block_of(r.out, "gelu_backward.f32.ulp_sweep");
  EXPECT_NE(block.find("past the bound of"), std::string::npos) << block;
  EXPECT_NE(block.find("ulp of the terms"), std::string::npos) << block;
  EXPECT_NE(block.find("worst at dy = "), std::string::npos) << block;
  EXPECT_NE(block.find(", x = -"), std::string::npos) << block;
}

TEST(Conformance, APartialPluginIsJudgedOnlyOnItsClaims) {
  const SuiteRun r = conformance(broken("partial"), "--level full");
  // Nothing it claims fails, but it cannot reach core: inference needs the whole op set.
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(failed_ids(r.out).empty()) << r.out;
  EXPECT_EQ(status_of(r, "add.f32.0"), "pass");
  EXPECT_EQ(status_of(r, "add.i32.0"), "pass");
  EXPECT_EQ(status_of(r, "matmul.f32.0"), "unsupported");
  EXPECT_EQ(status_of(r, "add.f64.0"), "unsupported") << "f64 is not in its dtype_mask";
  EXPECT_NE(r.json.find("\"level_reached\": \"none\""), std::string::npos);
  EXPECT_NE(r.markdown.find("| add | ✅"), std::string::npos) << r.markdown;
  EXPECT_NE(r.markdown.find("| matmul | ➖"), std::string::npos) << r.markdown;
  EXPECT_NE(r.out.find("level reached: none"), std::string::npos) << r.out;
}

// ---- issue 20's further checks: each has a plugin that only it catches ------------------

TEST(Conformance, AWriteIntoAnInputIsNamedWithTheElement) {
  const SuiteRun r = conformance(broken("writes-into-input"), "--filter 'maximum.f32.0,maximum.f32.1,add.f32.0'");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(status_of(r, "add.f32.0"), "pass");
  EXPECT_EQ(status_of(r, "maximum.f32.1"), "fail") << "a permuted input is re-read as a whole";
  const std::string block = block_of(r.out, "maximum.f32.0");
  EXPECT_NE(block.find("maximum: input 0 was written by the op"), std::string::npos) << r.out;
  EXPECT_NE(block.find("the first is element [0,0]: was "), std::string::npos) << block;
  EXPECT_EQ(block.find("differ from the reference"), std::string::npos) << "the output itself is right: " << block;
}

TEST(Conformance, ALargeOutputWithItsRaggedChunkUnwrittenFailsTheTailCases) {
  const SuiteRun r = conformance(broken("partial-large-output"), "--filter 'exp.f32.large*,matmul.f32.large_tail'");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  // 4096 x 4096 divides into whole chunks: the old large case cannot see it.
  EXPECT_EQ(status_of(r, "exp.f32.large"), "pass") << r.out;
  EXPECT_EQ(status_of(r, "exp.f32.large_tail"), "fail") << r.out;
  EXPECT_EQ(status_of(r, "matmul.f32.large_tail"), "fail") << r.out;
  const std::string block = block_of(r.out, "exp.f32.large_tail");
  EXPECT_NE(block.find("got nan (unexpected NaN)"), std::string::npos) << "unwritten outputs start as NaN: " << block;
}

TEST(Conformance, MemoryTakenFromMallocOnEveryCallIsCaughtByTheWatch) {
  const SuiteRun r = conformance(broken("leaks-system-malloc"), "--filter 'mul.f32.*,add.f32.0'");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(status_of(r, "mul.memory"), "fail") << r.out;
  EXPECT_EQ(status_of(r, "mul.leaks"), "") << "the host table saw nothing: " << r.out;
  EXPECT_EQ(status_of(r, "add.memory"), "") << r.out;
  for (const auto& id : failed_ids(r.out)) EXPECT_EQ(id, "mul.memory") << r.out;
  const std::string block = block_of(r.out, "mul.memory");
  EXPECT_NE(block.find("memory grew while case mul.f32.0 ran"), std::string::npos) << block;
}

TEST(Conformance, SoftmaxWithoutTheMaxSubtractedFailsOnLargeFiniteLogits) {
  const SuiteRun r = conformance(broken("softmax-no-max"), "--filter 'softmax.f32.[0-9]*,log_softmax.f32.[0-9]*'");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  // Only the large finite logits: logits of order 1 and the rows with infinities pass.
  EXPECT_EQ(failed_ids(r.out), (std::vector<std::string>{"softmax.f32.9", "log_softmax.f32.9"})) << r.out;
  EXPECT_EQ(status_of(r, "softmax.f32.8"), "pass") << "rows of ±inf and NaN" << r.out;
  EXPECT_NE(block_of(r.out, "softmax.f32.9").find("large finite logits"), std::string::npos) << r.out;
}

// A one-pass variance is right on rows of order 1 (every older layer_norm case, the
// large_tail one included, passes) and wrong only on rows of a large mean and a small
// spread, where the tolerance scales with the row's conditioning and still holds it. bf16
// is left right (its 8 bits cannot show the defect: tolerance.h), and rms_norm has no mean.
TEST(Conformance, LayerNormWithAOnePassVarianceFailsOnlyTheLargeRows) {
  const SuiteRun r = conformance(broken("norm-one-pass-variance"), "--level full --filter 'layer_norm.*,rms_norm.*'");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  // Every large_rows case of layer_norm fails but bf16's; of the threshold cases only those
  // of thousands of random rows fail, where some row happens to have a small spread.
  const std::vector<std::string> failed = failed_ids(r.out);
  for (const char* id : {"layer_norm.f32.large_rows", "layer_norm.f64.large_rows", "layer_norm.f16.large_rows"}) {
    EXPECT_NE(std::find(failed.begin(), failed.end(), id), failed.end()) << id << "\n" << r.out;
  }
  for (const auto& id : failed) {
    EXPECT_TRUE(id.ends_with(".large_rows") || id.ends_with(".rows_4096") || id.ends_with(".rows_4097")) << id;
    EXPECT_TRUE(starts_with(id, "layer_norm.")) << id;
  }
  EXPECT_EQ(status_of(r, "layer_norm.f32.large_tail"), "pass") << r.out;
  EXPECT_EQ(status_of(r, "rms_norm.f32.large_rows"), "pass") << r.out;
  const std::string block = block_of(r.out, "layer_norm.f32.large_rows");
  EXPECT_NE(block.find("rows of mean±spread 1e+04±1"), std::string::npos) << block;
  EXPECT_NE(block.find("tolerance (row normalisation)"), std::string::npos) << block;
}

// A plugin that returns an earlier sigmoid call's result for a call with the same views
// passes every case on its first run (no two share a signature); the judged rerun of a
// passing case with the same shapes and fresh values, in the same worker, fails and says
// why. Correct groups (exp) pass their rerun.
TEST(Conformance, AResultLeftFromThePreviousCallIsCaughtByTheJudgedRerun) {
  const SuiteRun r = conformance(broken("reuses-last-result"), "--filter 'sigmoid.*,exp.f32.*'");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(failed_ids(r.out), std::vector<std::string>{"sigmoid.rerun"}) << r.out;
  EXPECT_EQ(status_of(r, "sigmoid.f32.0"), "pass") << r.out;
  EXPECT_EQ(status_of(r, "exp.rerun"), "") << r.out;
  const std::string block = block_of(r.out, "sigmoid.rerun");
  EXPECT_NE(block.find("case sigmoid.f32."), std::string::npos) << block;
  EXPECT_NE(block.find("passed, then failed when run again"), std::string::npos) << block;
  EXPECT_NE(block.find("fresh input values (seed 2)"), std::string::npos) << block;
}

// A sum whose order moves every time a signature comes again stays within the sum bound
// on every call; only the judged rerun with the same inputs, compared bit for bit, shows
// it. A correct sum group (mean) passes its rerun.
TEST(Conformance, ASumWhoseBitsChangeFromRunToRunIsCaughtByTheBitCompare) {
  const SuiteRun r = conformance(broken("sum-order-varies"), "--filter 'sum.f32.*,mean.f32.*'");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(failed_ids(r.out), std::vector<std::string>{"sum.rerun"}) << r.out;
  EXPECT_EQ(status_of(r, "sum.f32.0"), "pass") << r.out;
  const std::string block = block_of(r.out, "sum.rerun");
  EXPECT_NE(block.find("gave other bits when run again with the same inputs"), std::string::npos) << block;
  EXPECT_NE(block.find("element slot(s) differ"), std::string::npos) << block;
}

// A softmax that caches its row length by element count is right for the first shape of
// each count; the same_count case calls it again with other rows of that count.
TEST(Conformance, APlanKeyedByElementCountIsCaughtByTheSameCountCase) {
  const SuiteRun r = conformance(broken("softmax-plan-by-count"), "--filter 'softmax.f32.*'");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(status_of(r, "softmax.f32.same_count"), "fail") << r.out;
  EXPECT_EQ(status_of(r, "softmax.f32.0"), "pass") << r.out;
}

// A matmul that drops the ragged part of K past 4096 is right at K <= 4096 and at every
// multiple of 4096 (16384 included); the threshold cases just past it fail, and only they.
TEST(Conformance, APathWrongOnlyPastASizeThresholdIsCaughtOnItsFarSide) {
  const SuiteRun r = conformance(broken("matmul-split-k-tail"), "--filter 'matmul.f32.*'");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(failed_ids(r.out),
            (std::vector<std::string>{"matmul.f32.k4097", "matmul.f32.k4097_epilogue", "matmul.f32.m64_k4097",
                                      "matmul.f32.k16385", "matmul.f32.k70000"}))
      << r.out;
  for (const char* id : {"matmul.f32.k4095", "matmul.f32.k4096", "matmul.f32.k16384", "matmul.f32.ones_k4096"}) {
    EXPECT_EQ(status_of(r, id), "pass") << id << "\n" << r.out;
  }
}

// ---- issue 33: the normal form's answers, each held against a plugin coded for the other --

// Answer 1: matmul operands arrive at the output's rank, a broadcast batch axis at stride 0.
// A plugin that walks a full-rank operand at packed batch strides (M*K per batch), as if
// broadcasting showed as a lower rank, fails every case with a broadcast batch axis and
// nothing else.
TEST(Conformance, MatmulOperandsAtTheOutputsRankWithStrideZeroBatchesFailAPackedWalk) {
  const SuiteRun r = conformance(broken("matmul-dense-batch"),
                                 "--filter 'matmul.f32.0,matmul.f32.1,matmul.f32.2,matmul.f32.broadcast_*'");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(failed_ids(r.out),
            (std::vector<std::string>{"matmul.f32.1", "matmul.f32.broadcast_a_rank2", "matmul.f32.broadcast_b_rank2",
                                      "matmul.f32.broadcast_size1_batch"}))
      << r.out;
  EXPECT_EQ(status_of(r, "matmul.f32.0"), "pass") << "no batch: " << r.out;
  EXPECT_EQ(status_of(r, "matmul.f32.2"), "pass") << "transposed views, no batch: " << r.out;
  EXPECT_NE(block_of(r.out, "matmul.f32.broadcast_a_rank2").find("differ from the reference"), std::string::npos)
      << r.out;
}

// Answer 2: the norms' output_count is the caller's, and an entry below it may be NULL.
// A plugin that takes the count to be always the full one (and checks it) fails the
// output_count_<n> cases; one that takes a smaller count to be the only way to leave an
// output out, and writes every output below it, crashes on the null_* cases. Each passes
// the other kind.
const char* const kNormCountCases =
    "layer_norm.f32.output_count_1,rms_norm.f32.output_count_1,"
    "layer_norm_backward.f32.output_count_1,layer_norm_backward.f32.output_count_2,"
    "rms_norm_backward.f32.output_count_1";
const char* const kNormNullCases =
    "layer_norm.f32.null_mean,layer_norm.f32.null_statistics,rms_norm.f32.null_rstd,"
    "layer_norm_backward.f32.null_dweight,rms_norm_backward.f32.null_dweight";

TEST(Conformance, ANormOutputCountBelowTheFullCountFailsAPluginThatNeedsAllOutputs) {
  const SuiteRun r = conformance(broken("norm-needs-full-output-count"),
                                 std::string("--filter '") + kNormCountCases + "," + kNormNullCases + "'");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const std::vector<std::string> failed = failed_ids(r.out);
  for (const char* id :
       {"layer_norm.f32.output_count_1", "rms_norm.f32.output_count_1", "layer_norm_backward.f32.output_count_1",
        "layer_norm_backward.f32.output_count_2", "rms_norm_backward.f32.output_count_1"}) {
    EXPECT_EQ(status_of(r, id), "fail") << id << "\n" << r.out;
  }
  EXPECT_EQ(failed.size(), 5u) << "the null_* cases give every output slot: " << r.out;
  EXPECT_NE(block_of(r.out, "layer_norm_backward.f32.output_count_2").find("output_count is 2"), std::string::npos)
      << r.out;
}

TEST(Conformance, ANullNormOutputBelowTheCountCrashesAPluginThatWritesItUnchecked) {
  const SuiteRun r = conformance(broken("norm-outputs-unchecked"),
                                 std::string("--filter '") + kNormCountCases + "," + kNormNullCases + "'");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  for (const char* id : {"layer_norm.f32.null_mean", "layer_norm.f32.null_statistics", "rms_norm.f32.null_rstd",
                         "layer_norm_backward.f32.null_dweight", "rms_norm_backward.f32.null_dweight"}) {
    EXPECT_EQ(status_of(r, id), "crash") << id << "\n" << r.out;
  }
  EXPECT_EQ(failed_ids(r.out).size(), 5u) << "a smaller output_count leaves no NULL below it: " << r.out;
  EXPECT_NE(block_of(r.out, "layer_norm.f32.null_mean").find("SIGSEGV"), std::string::npos) << r.out;
}

// Answer 3: every op with an attribute struct gets it, NULL from the caller filled with the
// defaults. A plugin coded for the other reading ("NULL means the defaults") handles filled
// structs as well, so no plugin can fail for it; instead a plugin that reads attrs with no
// NULL check must pass every null_attrs case (the core keeps its answer: layer_norm_backward
// and rms_norm_backward were passed NULL before) and fail only the bad calls the suite makes
// directly with attrs NULL, which op_execute must answer, not crash on.
TEST(Conformance, APluginThatTrustsAttrsPassesEveryNullAttrsCaseThroughTheCore) {
  const SuiteRun r = conformance(broken("trusts-attrs"), "--filter '*.null_attrs,contract.bad_calls.*'");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(failed_ids(r.out),
            (std::vector<std::string>{"contract.bad_calls.reduce_null_attrs", "contract.bad_calls.fused_null_attrs"}))
      << r.out;
  for (const char* id : {"layer_norm_backward.f32.null_attrs", "rms_norm_backward.f32.null_attrs", "sum.f32.null_attrs",
                         "matmul.f32.null_attrs", "softmax.f32.null_attrs", "cross_entropy.f32.null_attrs",
                         "conv2d.f32.null_attrs", "fill.f32.null_attrs"}) {
    EXPECT_EQ(status_of(r, id), "pass") << id << "\n" << r.out;
  }
}

TEST(Conformance, AnOutputReadWhenBetaIsZeroShowsNaN) {
  const SuiteRun r = conformance(broken("reads-output"), "--filter 'matmul.f32.0,matmul.f32.13'");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(status_of(r, "matmul.f32.0"), "fail") << r.out;
  EXPECT_EQ(status_of(r, "matmul.f32.13"), "pass") << "with beta 0.5 the output must be read: " << r.out;
  EXPECT_NE(block_of(r.out, "matmul.f32.0").find("got nan (unexpected NaN)"), std::string::npos) << r.out;
}

TEST(Conformance, TheLevelNoteListsEveryUnclaimedPair) {
  const SuiteRun r = conformance(broken("partial"), "--level core");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  // The last ops of the catalog are listed too, grouped by op, with the count.
  EXPECT_NE(r.out.find("matmul f32 i32 i64;"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("random_normal f32 (81 pairs)"), std::string::npos) << r.out;
  EXPECT_NE(r.json.find("random_normal f32 (81 pairs)"), std::string::npos) << r.json;
}

TEST(Conformance, UnknownPluginAndBadOptionsAreUsageErrors) {
  EXPECT_EQ(run_command(std::string(CTL_CATALYST_TOOL) + " conformance --plugin /nonexistent/libx.so").exit_code, 3);
  EXPECT_EQ(run_command(std::string(CTL_CATALYST_TOOL) + " conformance --plugin cpu --level fastest").exit_code, 3);
  EXPECT_EQ(run_command(std::string(CTL_CATALYST_TOOL) + " conformance").exit_code, 3);
  const SuiteRun list = run_command(std::string(CTL_CATALYST_TOOL) + " conformance --list --filter 'matmul.f16.*'");
  EXPECT_EQ(list.exit_code, 0);
  EXPECT_NE(list.out.find("matmul.f16.0"), std::string::npos) << list.out;
  EXPECT_EQ(list.out.find("matmul.f32.0"), std::string::npos) << list.out;
}

}  // namespace
