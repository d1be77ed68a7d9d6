// case.cpp — levels and the whole catalog.
#include "case.h"

namespace catalyst::conformance {

const char* level_name(Level level) {
  switch (level) {
    case Level::kCore:
      return "core";
    case Level::kTraining:
      return "training";
    case Level::kFull:
      return "full";
  }
  return "?";
}

bool parse_level(const std::string& text, Level* out) {
  for (Level l : {Level::kCore, Level::kTraining, Level::kFull}) {
    if (text == level_name(l)) {
      *out = l;
      return true;
    }
  }
  return false;
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  add_contract_cases(cases);
  add_numeric_cases(cases);
  add_training_cases(cases);
  add_conv_pool_cases(cases);
  add_math_cases(cases);
  add_fused_cases(cases);
  add_normal_form_cases(cases);
  return cases;
}

}  // namespace catalyst::conformance
