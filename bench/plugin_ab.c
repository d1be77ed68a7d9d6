/* plugin_ab.c — matmul speed of two or more builds of a plugin, measured in one process.
 *
 * On a shared VM the same binary's speed moves by up to 2x within minutes, so two builds
 * timed one after the other cannot be told apart below about 15%. Loaded side by side
 * into one process (one runtime per build, each given only that plugin file), timed in
 * interleaved rounds and compared by their medians, they can: differences of 1-2% repeat.
 *
 * Usage: catalyst-plugin-ab [--sizes LIST] [--rounds R] [--seconds S] [--dtype f32|f16|bf16]
 *                           [--transpose a|b|ab] [--cpu-time] PLUGIN[:NAME=VALUE,...] PLUGIN[:...] ...
 *   LIST    comma-separated N (an N x N by N x N product) or MxNxK; default 256,1024
 *   --transpose  A stored K x M, B stored N x K, or both, passed with the matmul's
 *           transpose flags (as autograd's gradients X^T dY and dY W^T are)
 *   --cpu-time  times by the process's CPU time (every thread's) instead of the wall clock:
 *           GFLOP per CPU-second. While other programs share the cores (load above the core
 *           count) the wall clock mostly measures the scheduler; CPU time counts only the
 *           time this process ran (an A/A pair, 2 threads, at a load of 6.7 on 2 cores:
 *           0.983-1.002x). With several threads it also counts what they spend waiting for
 *           each other.
 *   R       rounds; each round times every variant once, in the order given (default 11)
 *   S       seconds each variant is timed per round (default 0.05), after an untimed
 *           warm-up of 1100 calls or S seconds, whichever ends first
 *   NAME=VALUE pairs are set in the environment (and the others' unset) while that variant
 *   runs, for plugins that read a setting on every call.
 * Threads: CATALYST_CPU_THREADS, as for any program. Prints, per size, each variant's median
 * GFLOP/s, its ratio to the first variant, and the largest difference of its result from the
 * first variant's (the builds should agree, or the comparison means little). */
#define _XOPEN_SOURCE 700 /* realpath, setenv */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "catalyst.h"

enum { kMaxVariants = 8, kMaxSizes = 16, kMaxSettings = 8, kMaxRounds = 1000, kWarmCalls = 1100 };

typedef struct {
  char* path;
  char* names[kMaxSettings];
  char* values[kMaxSettings];
  int settings;
  ctl_runtime* runtime;
  ctl_device* device;
} Variant;

static int use_cpu_time; /* --cpu-time */

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(use_cpu_time ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static void die(const char* what, ctl_status* status) {
  fprintf(stderr, "plugin_ab: %s: %s\n", what, status ? ctl_status_get_message(status) : "failed");
  exit(1);
}

static void usage(const char* program) {
  fprintf(stderr,
          "usage: %s [--sizes N|MxNxK,...] [--rounds R] [--seconds S] [--dtype f32|f16|bf16] [--transpose a|b|ab] "
          "[--cpu-time] PLUGIN[:NAME=VALUE,...] PLUGIN[:...] ...\n",
          program);
  exit(2);
}

/* PLUGIN[:NAME=VALUE,...] into *v; false when a setting has no '='. */
static int parse_variant(char* arg, Variant* v) {
  memset(v, 0, sizeof *v);
  v->path = arg;
  char* colon = strchr(arg, ':');
  if (!colon) return 1;
  *colon = '\0';
  for (char* item = strtok(colon + 1, ","); item; item = strtok(NULL, ",")) {
    char* eq = strchr(item, '=');
    if (!eq || eq == item || v->settings == kMaxSettings) return 0;
    *eq = '\0';
    v->names[v->settings] = item;
    v->values[v->settings] = eq + 1;
    ++v->settings;
  }
  return 1;
}

/* Sets this variant's settings and unsets every other variant's. */
static void apply_settings(const Variant* variants, int count, int current) {
  for (int v = 0; v < count; ++v) {
    for (int s = 0; s < variants[v].settings; ++s) unsetenv(variants[v].names[s]);
  }
  for (int s = 0; s < variants[current].settings; ++s) {
    setenv(variants[current].names[s], variants[current].values[s], 1);
  }
}

static ctl_tensor* random_matrix(ctl_device* device, ctl_dtype dtype, int64_t rows, int64_t cols, unsigned seed) {
  const size_t count = (size_t)(rows * cols);
  float* host = malloc(count * sizeof *host);
  if (!host) die("malloc", NULL);
  for (size_t i = 0; i < count; ++i) {
    seed = seed * 1664525u + 1013904223u;
    host[i] = (float)(seed >> 8) / 16777216.0f - 0.5f;
  }
  const int64_t shape[2] = {rows, cols};
  ctl_tensor* f32 = NULL;
  ctl_status* status = ctl_tensor_from_host(device, CTL_DTYPE_F32, 2, shape, host, count * sizeof *host, &f32);
  free(host);
  if (status) die("ctl_tensor_from_host", status);
  if (dtype == CTL_DTYPE_F32) return f32;
  ctl_cast_attrs cast = {CTL_CAST_ATTRS_STRUCT_SIZE, dtype};
  ctl_tensor* out = NULL;
  if ((status = ctl_op_run(CTL_OP_CAST, 1, &f32, &cast, 1, &out))) die("cast", status);
  ctl_tensor_release(f32);
  return out;
}

/* The product as f32 on the host (for comparing variants). */
static float* result_on_host(ctl_tensor* c, ctl_dtype dtype, size_t count) {
  ctl_tensor* f32 = c;
  ctl_status* status;
  if (dtype != CTL_DTYPE_F32) {
    ctl_cast_attrs cast = {CTL_CAST_ATTRS_STRUCT_SIZE, CTL_DTYPE_F32};
    f32 = NULL;
    if ((status = ctl_op_run(CTL_OP_CAST, 1, &c, &cast, 1, &f32))) die("cast", status);
  }
  float* host = malloc(count * sizeof *host);
  if (!host) die("malloc", NULL);
  if ((status = ctl_tensor_to_host(f32, host, count * sizeof *host))) die("ctl_tensor_to_host", status);
  if (f32 != c) ctl_tensor_release(f32);
  return host;
}

int main(int argc, char** argv) {
  int64_t ms[kMaxSizes], ns[kMaxSizes], ks[kMaxSizes];
  int sizes = 0;
  char default_sizes[] = "256,1024";
  char* size_list = default_sizes;
  int rounds = 11;
  double seconds = 0.05;
  ctl_dtype dtype = CTL_DTYPE_F32;
  ctl_matmul_attrs attrs;
  memset(&attrs, 0, sizeof attrs);
  attrs.struct_size = CTL_MATMUL_ATTRS_STRUCT_SIZE;
  Variant variants[kMaxVariants];
  int count = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
      size_list = argv[++i];
    } else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
      rounds = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
      seconds = atof(argv[++i]);
    } else if (!strcmp(argv[i], "--cpu-time")) {
      use_cpu_time = 1;
    } else if (!strcmp(argv[i], "--transpose") && i + 1 < argc) {
      const char* which = argv[++i];
      if (strcmp(which, "a") && strcmp(which, "b") && strcmp(which, "ab")) usage(argv[0]);
      attrs.transpose_a = strchr(which, 'a') != NULL;
      attrs.transpose_b = strchr(which, 'b') != NULL;
    } else if (!strcmp(argv[i], "--dtype") && i + 1 < argc) {
      const char* name = argv[++i];
      if (!strcmp(name, "f32")) {
        dtype = CTL_DTYPE_F32;
      } else if (!strcmp(name, "f16")) {
        dtype = CTL_DTYPE_F16;
      } else if (!strcmp(name, "bf16")) {
        dtype = CTL_DTYPE_BF16;
      } else {
        usage(argv[0]);
      }
    } else if (argv[i][0] == '-' || count == kMaxVariants || !parse_variant(argv[i], &variants[count++])) {
      usage(argv[0]);
    }
  }
  if (count < 1 || rounds < 1 || rounds > kMaxRounds || !(seconds > 0)) usage(argv[0]);
  for (char* item = strtok(size_list, ","); item; item = strtok(NULL, ",")) {
    long long m, n, k;
    if (sizes == kMaxSizes) usage(argv[0]);
    if (sscanf(item, "%lldx%lldx%lld", &m, &n, &k) != 3) m = n = k = atoll(item);
    if (m <= 0 || n <= 0 || k <= 0) usage(argv[0]);
    ms[sizes] = m;
    ns[sizes] = n;
    ks[sizes] = k;
    ++sizes;
  }

  for (int v = 0; v < count; ++v) {
    // A bare file name would make dlopen search the library path instead of this directory.
    char* resolved = realpath(variants[v].path, NULL);
    if (!resolved) {
      fprintf(stderr, "plugin_ab: %s: no such file\n", variants[v].path);
      return 1;
    }
    variants[v].path = resolved;
    ctl_runtime_options options;
    memset(&options, 0, sizeof options);
    options.struct_size = CTL_RUNTIME_OPTIONS_STRUCT_SIZE;
    const char* path = variants[v].path;
    options.plugin_paths = &path;
    options.plugin_path_count = 1;
    options.disable_discovery = true;
    ctl_status* status = ctl_runtime_create(&options, &variants[v].runtime);
    if (status) die(path, status);
    if ((status = ctl_runtime_default_device(variants[v].runtime, &variants[v].device))) die(path, status);
  }

  for (int v = 0; v < count; ++v) printf("v%d: %s\n", v, variants[v].path);
  printf("per size: each variant's median GFLOP/s%s over %d rounds, its ratio to v0, and max |C - C0|\n",
         use_cpu_time ? " per CPU-second" : "", rounds);
  for (int s = 0; s < sizes; ++s) {
    const int64_t M = ms[s], N = ns[s], K = ks[s];
    const double flops = 2.0 * (double)M * (double)N * (double)K;
    ctl_tensor *a[kMaxVariants], *b[kMaxVariants], *c[kMaxVariants];
    for (int v = 0; v < count; ++v) {
      a[v] = attrs.transpose_a ? random_matrix(variants[v].device, dtype, K, M, 1u)
                               : random_matrix(variants[v].device, dtype, M, K, 1u);
      b[v] = attrs.transpose_b ? random_matrix(variants[v].device, dtype, N, K, 2u)
                               : random_matrix(variants[v].device, dtype, K, N, 2u);
      const int64_t shape[2] = {M, N};
      ctl_status* status = ctl_tensor_create(variants[v].device, dtype, 2, shape, &c[v]);
      if (status) die("ctl_tensor_create", status);
    }
    double* times = calloc((size_t)(count * rounds), sizeof *times);
    if (!times) die("calloc", NULL);
    for (int r = 0; r < rounds; ++r) {
      for (int v = 0; v < count; ++v) {
        apply_settings(variants, count, v);
        ctl_tensor* inputs[2] = {a[v], b[v]};
        // Warm up, untimed, for kWarmCalls calls or `seconds`, whichever ends first: the
        // previous variant's pool workers spin a while after its last call, and a worker of
        // this one that they delay sleeps at once in its next 1000 waits (thread_pool.cpp),
        // which made the first of two identical variants up to 20% faster at 128^3 on 2
        // threads.
        ctl_status* status = NULL;
        long calls = 0;
        double start = now_seconds();
        do {
          if ((status = ctl_op_run_into(CTL_OP_MATMUL, 2, inputs, &attrs, 1, &c[v]))) die("matmul", status);
        } while (++calls < kWarmCalls && now_seconds() - start < seconds);
        calls = 0;
        start = now_seconds();
        double elapsed = 0;
        do {
          if ((status = ctl_op_run_into(CTL_OP_MATMUL, 2, inputs, &attrs, 1, &c[v]))) die("matmul", status);
          ++calls;
          elapsed = now_seconds() - start;
        } while (elapsed < seconds);
        times[v * rounds + r] = elapsed / (double)calls;
      }
    }
    const size_t elements = (size_t)(M * N);
    float* reference = result_on_host(c[0], dtype, elements);
    char label[64];
    snprintf(label, sizeof label, "%lldx%lldx%lld", (long long)M, (long long)N, (long long)K);
    printf("%-16s", label);
    double base = 0;
    for (int v = 0; v < count; ++v) {
      qsort(times + v * rounds, (size_t)rounds, sizeof *times, compare_doubles);
      const double gflops = flops / times[v * rounds + rounds / 2] / 1e9;
      if (v == 0) base = gflops;
      float* result = v == 0 ? reference : result_on_host(c[v], dtype, elements);
      double worst = 0;
      for (size_t i = 0; i < elements; ++i) worst = fmax(worst, fabs((double)result[i] - (double)reference[i]));
      if (result != reference) free(result);
      printf("  v%d %7.1f %.3fx %-8.2g", v, gflops, gflops / base, worst);
      ctl_tensor_release(a[v]);
      ctl_tensor_release(b[v]);
      ctl_tensor_release(c[v]);
    }
    printf("\n");
    fflush(stdout);
    free(reference);
    free(times);
  }
  for (int v = 0; v < count; ++v) {
    ctl_runtime_release(variants[v].runtime);
    free(variants[v].path);
  }
  return 0;
}
