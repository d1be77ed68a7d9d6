/* consumer.c — a C99 program built against an installed Catalyst with pkg-config only:
 * creates tensors on the default device (found without any CATALYST_* variable), runs a
 * matmul, a softmax and a sum reduction, and checks the numbers. Exit status 0 on success. */
#include <catalyst.h>
#include <math.h>
#include <stdio.h>

static int failed(ctl_status* status, const char* what) {
  if (!status) return 0;
  fprintf(stderr, "%s failed: %s: %s\n", what, ctl_status_code_name(ctl_status_get_code(status)),
          ctl_status_get_message(status));
  ctl_status_free(status);
  return 1;
}

int main(void) {
  static const float a_data[6] = {1, 2, 3, 4, 5, 6};    /* 2x3 */
  static const float b_data[6] = {7, 8, 9, 10, 11, 12}; /* 3x2 */
  static const float expected_product[4] = {58, 64, 139, 154};
  const int64_t a_shape[2] = {2, 3}, b_shape[2] = {3, 2};
  ctl_runtime* runtime = NULL;
  ctl_device* device = NULL;
  ctl_tensor *a = NULL, *b = NULL, *c = NULL, *s = NULL, *total = NULL;
  float product[4], soft[4], sum = 0;
  int errors = 0, i;

  if (failed(ctl_runtime_create(NULL, &runtime), "ctl_runtime_create")) return 1;
  if (failed(ctl_runtime_default_device(runtime, &device), "ctl_runtime_default_device")) return 1;
  if (failed(ctl_tensor_from_host(device, CTL_DTYPE_F32, 2, a_shape, a_data, sizeof a_data, &a), "from_host a") ||
      failed(ctl_tensor_from_host(device, CTL_DTYPE_F32, 2, b_shape, b_data, sizeof b_data, &b), "from_host b") ||
      failed(ctl_op_matmul(a, b, &c), "matmul") || failed(ctl_op_softmax(c, -1, &s), "softmax") ||
      failed(ctl_op_reduce(CTL_OP_SUM, a, 0, NULL, false, &total), "sum") ||
      failed(ctl_tensor_to_host(c, product, sizeof product), "to_host product") ||
      failed(ctl_tensor_to_host(s, soft, sizeof soft), "to_host softmax") ||
      failed(ctl_tensor_to_host(total, &sum, sizeof sum), "to_host sum")) {
    return 1;
  }
  for (i = 0; i < 4; ++i) {
    if (product[i] != expected_product[i]) {
      fprintf(stderr, "matmul[%d] = %g, expected %g\n", i, product[i], expected_product[i]);
      ++errors;
    }
  }
  for (i = 0; i < 2; ++i) {
    /* softmax of (58, 64) and (139, 154) along the last axis */
    const double d = i == 0 ? 6.0 : 15.0;
    const double hi = 1.0 / (1.0 + exp(-d)), lo = 1.0 - hi;
    if (fabs(soft[2 * i] - lo) > 1e-6 || fabs(soft[2 * i + 1] - hi) > 1e-6) {
      fprintf(stderr, "softmax row %d = (%g, %g), expected (%g, %g)\n", i, soft[2 * i], soft[2 * i + 1], lo, hi);
      ++errors;
    }
  }
  if (sum != 21.0f) {
    fprintf(stderr, "sum = %g, expected 21\n", sum);
    ++errors;
  }
  ctl_tensor_release(total);
  ctl_tensor_release(s);
  ctl_tensor_release(c);
  ctl_tensor_release(b);
  ctl_tensor_release(a);
  ctl_runtime_release(runtime);
  if (!errors) printf("consumer: matmul, softmax and sum are correct\n");
  return errors ? 1 : 0;
}
