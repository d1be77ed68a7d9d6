// raw_calls.c — see raw_calls.h: integer-to-enum conversion is defined in C, so any value
// reaches the core exactly as a C program would pass it.
#include "raw_calls.h"

size_t fuzz_dtype_size(int32_t dtype) {
  return ctl_dtype_size((ctl_dtype)dtype);
}

ctl_status* fuzz_tensor_from_host(ctl_device* device, int32_t dtype, size_t rank, const int64_t* shape,
                                  const void* data, size_t data_bytes, ctl_tensor** out_tensor) {
  return ctl_tensor_from_host(device, (ctl_dtype)dtype, rank, shape, data, data_bytes, out_tensor);
}

ctl_status* fuzz_op_run(uint32_t op, size_t input_count, ctl_tensor* const* inputs, const void* attrs,
                        size_t output_count, ctl_tensor** out_tensors) {
  return ctl_op_run((ctl_op_id)op, input_count, inputs, attrs, output_count, out_tensors);
}

ctl_status* fuzz_op_run_into(uint32_t op, size_t input_count, ctl_tensor* const* inputs, const void* attrs,
                             size_t output_count, ctl_tensor* const* outputs) {
  return ctl_op_run_into((ctl_op_id)op, input_count, inputs, attrs, output_count, outputs);
}

ctl_status* fuzz_op_unary(uint32_t op, ctl_tensor* x, ctl_tensor** out_tensor) {
  return ctl_op_unary((ctl_op_id)op, x, out_tensor);
}

ctl_status* fuzz_op_binary(uint32_t op, ctl_tensor* a, ctl_tensor* b, ctl_tensor** out_tensor) {
  return ctl_op_binary((ctl_op_id)op, a, b, out_tensor);
}

ctl_status* fuzz_op_reduce(uint32_t op, ctl_tensor* x, size_t axis_count, const int64_t* axes, bool keepdims,
                           ctl_tensor** out_tensor) {
  return ctl_op_reduce((ctl_op_id)op, x, axis_count, axes, keepdims, out_tensor);
}

ctl_status* fuzz_op_cast(ctl_tensor* x, int32_t dtype, ctl_tensor** out_tensor) {
  return ctl_op_cast(x, (ctl_dtype)dtype, out_tensor);
}
