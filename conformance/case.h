// case.h — one conformance case: an id a vendor can rerun, the level it belongs to, and the
// code that runs it against the device under test.
//
// A case is one op call (numerics) or one contract check. Cases are grouped; every group
// runs in a child process of its own (supervisor.h), so a plugin that crashes or hangs in
// one case costs that case, not the run. Case ids are stable for a given build: they never
// depend on the plugin, the seed or the filter, so the rerun line of a report selects
// exactly the case that failed.
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "catalyst.h"

struct ctl_runtime;
struct ctl_device;

namespace catalyst {
struct LoadedPlugin;
}

namespace catalyst::conformance {

// What a plugin must pass. core: inference (the required dtypes f32, i32, i64, bool of the
// op set, and the contract); training: core plus the backward and fused training ops;
// full: everything the plugin claims. Each level includes the ones before it.
enum class Level { kCore = 0, kTraining = 1, kFull = 2 };
const char* level_name(Level level);
bool parse_level(const std::string& text, Level* out);

// Thrown by a case: the device computed something wrong or broke the contract. The message
// says what, in words, with the values involved.
class CaseFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Thrown by a case: the plugin does not claim what the case needs (a dtype outside its
// dtype_mask, an op its op_supports or op_execute answers UNSUPPORTED, an optional entry it
// leaves NULL). Not a failure; the coverage table counts it.
class CaseUnsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One output as the device under test computed it: its dtype and the bytes of its whole
// guarded buffer.
struct SeenOutput {
  ctl_dtype dtype = CTL_DTYPE_F32;
  std::vector<unsigned char> bytes;
  bool operator==(const SeenOutput&) const = default;
};

// What a running case gets. Everything lives in the worker process.
struct CaseContext {
  ctl_runtime* runtime = nullptr;            // holds the plugin under test and the reference device
  ctl_device* device = nullptr;              // the device under test
  ctl_device* reference = nullptr;           // the core's reference kernels (the oracle)
  catalyst::LoadedPlugin* plugin = nullptr;  // the plugin under test, for direct calls
  uint32_t dtype_mask = 0;                   // what the device under test claims
  uint64_t seed = 0;                         // the run's seed
  std::mt19937_64 rng;                       // seeded from (seed, case id): filtering never shifts it
  // Set for the worker's judged rerun: Harness::input takes its values from here (another
  // seed), while rng still draws the same shapes and layouts as on the case's first run.
  std::mt19937_64* fresh_values = nullptr;
  // Set for the judged rerun's run with other strides: with fresh_values, every input takes
  // another view layout and every output another output layout (same shapes).
  bool other_layouts = false;
  // When set, the bytes of every output the device under test computed are appended here
  // (its whole guarded buffer, call by call): the judged rerun compares a repeat with the
  // same inputs against them bit for bit.
  std::vector<SeenOutput>* outputs_seen = nullptr;
  std::string note;  // optional detail a passing case reports (e.g. "events: core default")
};

struct Case {
  std::string id;     // "add.f32.3", "contract.events.cross_stream"
  std::string group;  // the child process it runs in: the op name, or "contract.<area>"
  std::string op;     // op name, or "contract"
  std::string dtype;  // dtype name, or "-" where none applies
  Level level = Level::kCore;
  std::string label;  // the variant in words: shapes, layouts, attributes
  std::function<void(CaseContext&)> run;
};

// The catalog, in a fixed order. Numeric cases: numeric_cases.cpp; the training ops' cases
// (ABI 1.1): training_cases.cpp; convolution and pooling (ABI 1.1): conv_pool_cases.cpp;
// contract: contract_cases.cpp.
void add_numeric_cases(std::vector<Case>& out);
void add_training_cases(std::vector<Case>& out);
void add_conv_pool_cases(std::vector<Case>& out);
// The ulp sweep of the elementwise transcendentals: math_cases.cpp.
void add_math_cases(std::vector<Case>& out);
// The fused elementwise op (ABI 1.5), at level full: fused_cases.cpp.
void add_fused_cases(std::vector<Case>& out);
// The normal form's answers (catalyst_plugin.h, above ctl_op_call): normal_form_cases.cpp.
void add_normal_form_cases(std::vector<Case>& out);
void add_contract_cases(std::vector<Case>& out);
std::vector<Case> all_cases();

}  // namespace catalyst::conformance
