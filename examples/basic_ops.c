/* basic_ops.c — the C example of the README: create tensors on the default device, run
 * matmul, softmax and a reduction, and print the results. Every call is checked. */
#include <stdio.h>
#include <stdlib.h>

#include "catalyst.h"

/* Prints the status and exits when a call fails. */
static void check(ctl_status* status, const char* what) {
  if (!status) return;
  fprintf(stderr, "%s failed: %s: %s\n", what, ctl_status_code_name(ctl_status_get_code(status)),
          ctl_status_get_message(status));
  ctl_status_free(status);
  exit(1);
}

static void print_matrix(const char* name, const float* values, int rows, int cols) {
  int r, c;
  printf("%s =\n", name);
  for (r = 0; r < rows; ++r) {
    printf("  [");
    for (c = 0; c < cols; ++c) printf(" %8.4f", values[r * cols + c]);
    printf(" ]\n");
  }
}

int main(void) {
  ctl_runtime* runtime = NULL;
  ctl_device* device = NULL;
  ctl_device_info info;
  const int64_t a_shape[2] = {2, 3};
  const int64_t b_shape[2] = {3, 2};
  const float a_values[6] = {1, 2, 3, 4, 5, 6};
  const float b_values[6] = {1, 0, 0, 1, 1, 1};
  ctl_tensor *a = NULL, *b = NULL, *product = NULL, *probabilities = NULL, *row_sums = NULL;
  float product_host[4], probabilities_host[4], row_sums_host[2];
  const int64_t last_axis = -1;

  check(ctl_runtime_create(NULL, &runtime), "ctl_runtime_create");
  check(ctl_runtime_default_device(runtime, &device), "ctl_runtime_default_device");
  info.struct_size = CTL_DEVICE_INFO_STRUCT_SIZE;
  check(ctl_device_get_info(device, &info), "ctl_device_get_info");
  printf("device: %s (plugin %s)\n", info.name, info.plugin_name);

  check(ctl_tensor_from_host(device, CTL_DTYPE_F32, 2, a_shape, a_values, sizeof a_values, &a), "a");
  check(ctl_tensor_from_host(device, CTL_DTYPE_F32, 2, b_shape, b_values, sizeof b_values, &b), "b");
  check(ctl_op_matmul(a, b, &product), "matmul");
  check(ctl_op_softmax(product, -1, &probabilities), "softmax");
  check(ctl_op_reduce(CTL_OP_SUM, probabilities, 1, &last_axis, false, &row_sums), "sum");

  check(ctl_tensor_to_host(product, product_host, sizeof product_host), "product to host");
  check(ctl_tensor_to_host(probabilities, probabilities_host, sizeof probabilities_host), "softmax to host");
  check(ctl_tensor_to_host(row_sums, row_sums_host, sizeof row_sums_host), "sum to host");
  print_matrix("a @ b", product_host, 2, 2);
  print_matrix("softmax(a @ b, axis=-1)", probabilities_host, 2, 2);
  print_matrix("sum(softmax, axis=-1)", row_sums_host, 1, 2);

  ctl_tensor_release(row_sums);
  ctl_tensor_release(probabilities);
  ctl_tensor_release(product);
  ctl_tensor_release(b);
  ctl_tensor_release(a);
  ctl_runtime_release(runtime);
  return 0;
}
