/* op_overhead_bench.c — the cost of one tiny op through the C ABI (peer: torch_op_overhead_bench.py).
 *
 * Adds two 1-element f32 tensors on the default device, in two forms: ctl_op_run_into
 * with a preallocated output (the pure per-op overhead: validation, op-call construction,
 * plugin dispatch, kernel) and ctl_op_binary (which also creates and releases the output
 * tensor each call). Written in C so that what it measures is the ABI a C caller sees.
 *
 * Usage: catalyst-op-overhead-bench [--calls N] [--repeats R]
 * Prints one JSON line: the median over R repeats of the nanoseconds per call (wall clock
 * and the thread's CPU time), each repeat timing N back-to-back calls. */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "catalyst.h"

static double clock_seconds(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Wall time is what a caller waits; this thread's CPU time is the same on an idle machine
 * and leaves out the time the thread waited for a CPU on a busy one. */
static double now_seconds(void) {
  return clock_seconds(CLOCK_MONOTONIC);
}
static double cpu_seconds(void) {
  return clock_seconds(CLOCK_THREAD_CPUTIME_ID);
}

static int fail(const char* what, ctl_status* status) {
  fprintf(stderr, "op_overhead_bench: %s: %s\n", what, ctl_status_get_message(status));
  ctl_status_free(status);
  return 1;
}

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double median(double* values, int count) {
  qsort(values, (size_t)count, sizeof *values, compare_doubles);
  return count % 2 ? values[count / 2] : 0.5 * (values[count / 2 - 1] + values[count / 2]);
}

int main(int argc, char** argv) {
  long calls = 200000;
  int repeats = 7;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--calls") && i + 1 < argc) {
      calls = strtol(argv[++i], NULL, 10);
    } else if (!strcmp(argv[i], "--repeats") && i + 1 < argc) {
      repeats = (int)strtol(argv[++i], NULL, 10);
    } else {
      fprintf(stderr, "usage: %s [--calls N] [--repeats R]\n", argv[0]);
      return 2;
    }
  }
  if (calls <= 0 || repeats <= 0 || repeats > 1000) {
    fprintf(stderr, "op_overhead_bench: --calls and --repeats must be positive (repeats at most 1000)\n");
    return 2;
  }
  ctl_runtime* runtime = NULL;
  ctl_status* status = ctl_runtime_create(NULL, &runtime);
  if (status) return fail("ctl_runtime_create", status);
  ctl_device* device = NULL;
  status = ctl_runtime_default_device(runtime, &device);
  if (status) return fail("ctl_runtime_default_device", status);

  const int64_t shape[1] = {1};
  const float one = 1.0f, two = 2.0f;
  ctl_tensor *a = NULL, *b = NULL, *c = NULL;
  if ((status = ctl_tensor_from_host(device, CTL_DTYPE_F32, 1, shape, &one, sizeof one, &a))) return fail("a", status);
  if ((status = ctl_tensor_from_host(device, CTL_DTYPE_F32, 1, shape, &two, sizeof two, &b))) return fail("b", status);
  if ((status = ctl_tensor_create(device, CTL_DTYPE_F32, 1, shape, &c))) return fail("c", status);
  ctl_tensor* inputs[2] = {a, b};

  double* into = calloc((size_t)repeats, sizeof(double));
  double* binary = calloc((size_t)repeats, sizeof(double));
  double* into_cpu = calloc((size_t)repeats, sizeof(double));
  double* binary_cpu = calloc((size_t)repeats, sizeof(double));
  if (!into || !binary || !into_cpu || !binary_cpu) return 1;
  /* Warm-up: first calls fault in pages and fill caches. */
  for (long i = 0; i < 1000; ++i) {
    if ((status = ctl_op_run_into(CTL_OP_ADD, 2, inputs, NULL, 1, &c))) return fail("warm-up", status);
  }
  for (int r = 0; r < repeats; ++r) {
    double start = now_seconds(), start_cpu = cpu_seconds();
    for (long i = 0; i < calls; ++i) {
      if ((status = ctl_op_run_into(CTL_OP_ADD, 2, inputs, NULL, 1, &c))) return fail("ctl_op_run_into", status);
    }
    into[r] = (now_seconds() - start) * 1e9 / (double)calls;
    into_cpu[r] = (cpu_seconds() - start_cpu) * 1e9 / (double)calls;
    start = now_seconds();
    start_cpu = cpu_seconds();
    for (long i = 0; i < calls; ++i) {
      ctl_tensor* out = NULL;
      if ((status = ctl_op_binary(CTL_OP_ADD, a, b, &out))) return fail("ctl_op_binary", status);
      ctl_tensor_release(out);
    }
    binary[r] = (now_seconds() - start) * 1e9 / (double)calls;
    binary_cpu[r] = (cpu_seconds() - start_cpu) * 1e9 / (double)calls;
  }
  float result = 0.0f;
  if ((status = ctl_tensor_to_host(c, &result, sizeof result))) return fail("ctl_tensor_to_host", status);
  if (result != 3.0f) {
    fprintf(stderr, "op_overhead_bench: 1 + 2 gave %g\n", (double)result);
    return 1;
  }
  printf(
      "{\"framework\": \"catalyst\", \"op\": \"add\", \"elements\": 1, \"calls\": %ld, \"repeats\": %d, "
      "\"run_into_ns_per_call\": %.1f, \"binary_ns_per_call\": %.1f, \"run_into_cpu_ns_per_call\": %.1f, "
      "\"binary_cpu_ns_per_call\": %.1f}\n",
      calls, repeats, median(into, repeats), median(binary, repeats), median(into_cpu, repeats),
      median(binary_cpu, repeats));
  free(into);
  free(binary);
  free(into_cpu);
  free(binary_cpu);
  ctl_tensor_release(a);
  ctl_tensor_release(b);
  ctl_tensor_release(c);
  ctl_runtime_release(runtime);
  return 0;
}
