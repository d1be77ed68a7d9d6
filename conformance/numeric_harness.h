// numeric_harness.h — running one op call on the device under test and on the reference
// device, on the same inputs, and comparing what comes back.
//
// Inputs are made in the layout a case asks for (contiguous, permuted, sliced with a step,
// expanded with stride-0 axes, or a random mix of these) on both devices, holding the same
// bytes. Outputs are views into larger buffers: guard elements of a known byte pattern
// sit before and after every output, and, for gapped and transposed outputs, between its
// elements; a device that writes anywhere but the output's own elements is caught. The
// device under test is judged only on what it claims: a dtype outside its dtype_mask, or a
// call its op_supports (or, lacking one, op_execute) answers UNSUPPORTED, makes the case
// unsupported instead of failed. Results are read with exactly one synchronize after the
// op, as the asynchronous contract allows.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "case.h"
#include "tolerance.h"
#include "values.h"

namespace catalyst::conformance {

struct TensorReleaser {
  void operator()(ctl_tensor* t) const { ctl_tensor_release(t); }
};
using TensorPtr = std::unique_ptr<ctl_tensor, TensorReleaser>;

enum class Layout { kContiguous, kPermuted, kSliced, kExpanded, kRandom };
enum class OutputLayout { kContiguous, kTransposed, kGapped };

// One input, on both devices.
struct Operand {
  TensorPtr device;
  TensorPtr reference;
  std::string layout;  // how it was made, for the report
  // The whole tensor a view was cut from (NULL when the operand is not a view): after the
  // op, every byte of it must still be what was given, inside the view or not.
  TensorPtr device_base;
  TensorPtr reference_base;
};

struct Shaped {
  std::vector<int64_t> shape;
  Layout layout = Layout::kContiguous;
};

class Harness {
 public:
  explicit Harness(CaseContext& ctx) : ctx_(ctx) {}

  // Random values in `layout`. Throws CaseUnsupported for a dtype the device does not claim.
  Operand input(ctl_dtype dtype, const std::vector<int64_t>& shape, Layout layout, Values kind);
  // Exactly these values, contiguous.
  Operand input_from(ctl_dtype dtype, const std::vector<int64_t>& shape, const std::vector<double>& values);
  // Exactly these bytes (row-major elements of `dtype`), contiguous: values a double
  // cannot hold, such as i64 past 2^53.
  Operand input_bytes(ctl_dtype dtype, const std::vector<int64_t>& shape, const std::vector<unsigned char>& bytes);

  // Runs `op` on both devices into guarded outputs of the shapes and dtypes the op
  // produces, and compares output k with tols[k] (the last entry repeats). Every output up
  // to output_count is requested. `initial` gives output 0's starting contents (matmul
  // with beta), or nullptr for none.
  void run(ctl_op_id op, const std::vector<const Operand*>& inputs, const void* attrs, size_t output_count,
           const std::vector<Tolerance>& tols, OutputLayout out_layout = OutputLayout::kContiguous,
           const Operand* initial = nullptr);
  // The same with, per output k, initial[k]: its starting contents, or nullptr for none (an
  // op that updates its outputs in place, adamw_step, gives all of them: the outputs then
  // take their shapes and dtypes from these), and requested[k]: false passes NULL for an
  // optional output (empty: all requested).
  void run(ctl_op_id op, const std::vector<const Operand*>& inputs, const void* attrs, size_t output_count,
           const std::vector<Tolerance>& tols, OutputLayout out_layout, const std::vector<const Operand*>& initial,
           const std::vector<bool>& requested = {});
  // The same for ops without inputs (fill, arange, random): the outputs' shape and dtype
  // are given.
  void run_creation(ctl_op_id op, ctl_dtype dtype, const std::vector<int64_t>& shape, const void* attrs,
                    const Tolerance& tol, OutputLayout out_layout);

  // Runs `op` on the reference device only (ctl_op_run) and returns its single output's
  // values: tolerance scales such as the same sum over |x|.
  std::vector<double> reference_values(ctl_op_id op, const std::vector<ctl_tensor*>& reference_inputs,
                                       const void* attrs);
  // |x| of an operand on the reference device.
  TensorPtr reference_abs(const Operand& operand);
  // `op` on the reference over |input k| where abs_of[k] (all of them when abs_of is empty),
  // the input itself elsewhere: a sum's S, the same sum over magnitudes.
  std::vector<double> reference_abs_values(ctl_op_id op, const std::vector<const Operand*>& inputs,
                                           const std::vector<bool>& abs_of, const void* attrs);

  CaseContext& context() { return ctx_; }

 private:
  void require_dtype(ctl_dtype dtype, const char* what);
  void run_outputs(ctl_op_id op, const std::vector<const Operand*>& inputs, const void* attrs,
                   const std::vector<bool>& present, const std::vector<ctl_dtype>& dtypes,
                   const std::vector<std::vector<int64_t>>& shapes, const std::vector<Tolerance>& tols,
                   OutputLayout out_layout, const std::vector<const Operand*>& initial);

  CaseContext& ctx_;
};

// "f32 [3,4] strides [1,3] offset 2" for any tensor.
std::string describe_tensor(const ctl_tensor* tensor);
// Throws CaseFailure with `what` and the status message when status is not NULL (frees it).
void check_ok(ctl_status* status, const std::string& what);

}  // namespace catalyst::conformance
