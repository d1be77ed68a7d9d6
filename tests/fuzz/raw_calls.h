// raw_calls.h — the C ABI's functions that take an enum, called with a plain integer. A C
// caller may pass any int where catalyst.h says ctl_op_id or ctl_dtype, but C++ code may
// not even hold such a value in the enum type (UBSan would report the harness, not the
// core), so the harnesses go through these C wrappers, as a C program would.
#pragma once

#include <stdint.h>

#include "catalyst.h"

#ifdef __cplusplus
extern "C" {
#endif

size_t fuzz_dtype_size(int32_t dtype);
ctl_status* fuzz_tensor_from_host(ctl_device* device, int32_t dtype, size_t rank, const int64_t* shape,
                                  const void* data, size_t data_bytes, ctl_tensor** out_tensor);
ctl_status* fuzz_op_run(uint32_t op, size_t input_count, ctl_tensor* const* inputs, const void* attrs,
                        size_t output_count, ctl_tensor** out_tensors);
ctl_status* fuzz_op_run_into(uint32_t op, size_t input_count, ctl_tensor* const* inputs, const void* attrs,
                             size_t output_count, ctl_tensor* const* outputs);
ctl_status* fuzz_op_unary(uint32_t op, ctl_tensor* x, ctl_tensor** out_tensor);
ctl_status* fuzz_op_binary(uint32_t op, ctl_tensor* a, ctl_tensor* b, ctl_tensor** out_tensor);
ctl_status* fuzz_op_reduce(uint32_t op, ctl_tensor* x, size_t axis_count, const int64_t* axes, bool keepdims,
                           ctl_tensor** out_tensor);
ctl_status* fuzz_op_cast(ctl_tensor* x, int32_t dtype, ctl_tensor** out_tensor);

#ifdef __cplusplus
}
#endif
