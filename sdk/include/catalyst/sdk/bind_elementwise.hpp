// bind_elementwise.hpp — the elementwise family's calls read and checked: unary ops (the
// call reader's one_to_one), binary ops, comparisons, the gelu backward forms and where. The
// core has broadcast every input to the output's shape (stride 0 on broadcast axes), so the
// views share one shape and a kernel walks them together (merged_axes.hpp).
#pragma once

#include "catalyst/sdk/status.hpp"
#include "catalyst_plugin.h"

namespace catalyst::sdk {

// Two inputs of one dtype and one output of `out_dtype` (NULL: the inputs'), all of one
// shape. Binary ops name their inputs a and b; the gelu backward forms dy and x.
template <class Ctx, class View>
ctl_status* bind_binary(const Ctx& ctx, View* a, View* b, View* y, const char* a_name, const char* b_name,
                        const ctl_dtype* out_dtype) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(2, 2, 1, 1));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, a_name, a));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(1, b_name, b));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "y", y));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(*b, "input 1", a->dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(*y, "output 0 (y)", out_dtype ? *out_dtype : a->dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_same_shape(*y, "output 0 (y)", *a, "input 0"));
  return ctx.expect_same_shape(*y, "output 0 (y)", *b, "input 1");
}

// where: y = cond ? a : b, cond bool, a and b in y's dtype, all of one shape.
template <class Ctx, class View>
ctl_status* bind_where(const Ctx& ctx, View* cond, View* a, View* b, View* y) {
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_counts(3, 3, 1, 1));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(0, "cond", cond));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(1, "a", a));
  CTL_SDK_RETURN_IF_ERROR(ctx.input(2, "b", b));
  CTL_SDK_RETURN_IF_ERROR(ctx.output(0, "y", y));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(*cond, "input 0 (cond)", CTL_DTYPE_BOOL));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(*a, "input 1 (a)", y->dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_dtype(*b, "input 2 (b)", y->dtype));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_same_shape(*y, "output 0 (y)", *cond, "input 0 (cond)"));
  CTL_SDK_RETURN_IF_ERROR(ctx.expect_same_shape(*y, "output 0 (y)", *a, "input 1 (a)"));
  return ctx.expect_same_shape(*y, "output 0 (y)", *b, "input 2 (b)");
}

}  // namespace catalyst::sdk
