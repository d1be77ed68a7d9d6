// op_registry.h — which ops the reference device knows, how many operands each takes and
// which dtypes docs/ops.md allows (op_registry.cpp); used by the dispatch in op_dispatch.cpp.
#pragma once

#include <cstdint>

#include "reference_kernels.h"

namespace catalyst::reference {

enum class Dtypes { kNumeric, kFloat, kAll, kMatmul };
constexpr uint32_t kMany = UINT32_MAX;

struct OpInfo {
  ctl_op_id id;
  const char* name;
  Dtypes dtypes;                 // of the primary operand (see op_registry.cpp)
  uint32_t required_in, max_in;  // inputs past required_in are optional (may be NULL)
  uint32_t required_out, max_out;
  ctl_status* (*kernel)(const Call&);
};

// The op with this id (read as a plain integer: a malformed call may hold any value), or
// nullptr for an unknown one.
const OpInfo* find_op(long long id);

// Dtypes the op does not cover are UNSUPPORTED; operands that disagree with each other
// get `mismatch` (UNSUPPORTED from op_supports, INVALID_ARGUMENT from op_execute).
ctl_status* check_dtypes(const Call& call, const OpInfo& info, ctl_status_code mismatch);

}  // namespace catalyst::reference
