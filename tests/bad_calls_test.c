/* bad_calls_test.c — bad calls through the public C ABI (DESIGN.md rule 8: "bad input never
 * crashes ... each gets a status with a clear message, and no state is changed").
 *
 * Table-driven: each row makes one bad call and states the exact ctl_status_code and a
 * substring its message must contain (naming the offending argument). For every row the
 * harness also checks that
 *  - no output parameter was written: every out-param lives in one Outs struct filled with a
 *    sentinel byte pattern before the call and compared byte for byte after it;
 *  - no state changed: the contents (via ctl_tensor_to_host), dtype, shape, strides and
 *    offset of every fixture tensor are what they were, the runtime has the same devices,
 *    and each fixture tensor still has exactly one reference (released once in teardown,
 *    the core then reports it as released — it quarantines released handles, so this reads
 *    no freed memory).
 * Runs on the CPU plugin's device when it is built, else on the reference device. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <dlpack/dlpack.h>

#include "catalyst.h"

/* ---- fixture -------------------------------------------------------------------------- */

enum { kMaxBytes = 256 };

typedef struct Fixture {
  ctl_tensor* a;        /* f32 [2,3] = 0..5 */
  ctl_tensor* b;        /* f32 [2,3] = 10..15 */
  ctl_tensor* c4;       /* f32 [4] */
  ctl_tensor* i;        /* i32 [2,3] */
  ctl_tensor* m;        /* f32 [2,2] (matmul with a [2,3]: inner dims differ) */
  ctl_tensor* out;      /* f32 [2,3], the output of run_into rows */
  ctl_tensor* out_i;    /* i32 [2,3] */
  ctl_tensor* idx_f;    /* f32 [2] used as a gather index */
  ctl_tensor* empty;    /* f32 [0,3] */
  ctl_tensor* released; /* released in setup: every use must be refused */
} Fixture;

#define FIXTURE_TENSORS 9 /* a .. empty; `released` is not one */

typedef struct Snapshot {
  ctl_tensor_info info;
  unsigned char bytes[kMaxBytes];
} Snapshot;

static ctl_runtime* g_runtime;
static ctl_device* g_device;
static Fixture g_fx;
static Snapshot g_snap[FIXTURE_TENSORS];

static ctl_tensor** fixture_tensor(int k) {
  ctl_tensor** list[FIXTURE_TENSORS] = {&g_fx.a,   &g_fx.b,     &g_fx.c4,    &g_fx.i,    &g_fx.m,
                                        &g_fx.out, &g_fx.out_i, &g_fx.idx_f, &g_fx.empty};
  return list[k];
}

static void ok(ctl_status* status, const char* what) {
  if (status) {
    fprintf(stderr, "%s failed: %s\n", what, ctl_status_get_message(status));
    ctl_status_free(status);
    fail_msg("setup call failed: %s", what);
  }
}

static ctl_tensor* make(ctl_dtype dtype, size_t rank, const int64_t* shape, const void* data, size_t bytes) {
  ctl_tensor* t = NULL;
  ok(ctl_tensor_from_host(g_device, dtype, rank, shape, data, bytes, &t), "ctl_tensor_from_host");
  return t;
}

static void snapshot(const ctl_tensor* t, Snapshot* s) {
  memset(s, 0, sizeof *s);
  s->info.struct_size = CTL_TENSOR_INFO_STRUCT_SIZE;
  ok(ctl_tensor_get_info(t, &s->info), "ctl_tensor_get_info");
  ok(ctl_tensor_to_host(t, s->bytes, sizeof s->bytes), "ctl_tensor_to_host");
}

static int group_setup(void** state) {
  const char* cpu = CTL_TEST_CPU_PLUGIN;
  const char* paths[1];
  ctl_runtime_options o;
  size_t k;
  (void)state;
  memset(&o, 0, sizeof o);
  o.struct_size = CTL_RUNTIME_OPTIONS_STRUCT_SIZE;
  paths[0] = cpu;
  o.plugin_paths = paths;
  o.plugin_path_count = cpu[0] ? 1 : 0;
  o.disable_discovery = true;
  o.enable_reference_device = true;
  ok(ctl_runtime_create(&o, &g_runtime), "ctl_runtime_create");
  for (k = 0; k < ctl_runtime_device_count(g_runtime); ++k) {
    ctl_device* d = NULL;
    ctl_device_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = CTL_DEVICE_INFO_STRUCT_SIZE;
    ok(ctl_runtime_device(g_runtime, k, &d), "ctl_runtime_device");
    ok(ctl_device_get_info(d, &info), "ctl_device_get_info");
    if (strcmp(info.plugin_name, cpu[0] ? "cpu" : "reference") == 0) g_device = d;
  }
  if (!g_device) {
    fprintf(stderr, "no %s device\n", cpu[0] ? "cpu" : "reference");
    return -1;
  }
  return 0;
}

static int group_teardown(void** state) {
  (void)state;
  ctl_runtime_release(g_runtime);
  return 0;
}

static int setup(void** state) {
  static const float f6[6] = {0, 1, 2, 3, 4, 5}, g6[6] = {10, 11, 12, 13, 14, 15};
  static const float f4[4] = {1, 2, 3, 4}, z6[6] = {-1, -1, -1, -1, -1, -1}, idx[2] = {0, 1};
  static const int32_t i6[6] = {1, 2, 3, 4, 5, 6}, j6[6] = {-7, -7, -7, -7, -7, -7};
  static const int64_t s23[2] = {2, 3}, s4[1] = {4}, s22[2] = {2, 2}, s2[1] = {2}, s03[2] = {0, 3};
  int k;
  (void)state;
  g_fx.a = make(CTL_DTYPE_F32, 2, s23, f6, sizeof f6);
  g_fx.b = make(CTL_DTYPE_F32, 2, s23, g6, sizeof g6);
  g_fx.c4 = make(CTL_DTYPE_F32, 1, s4, f4, sizeof f4);
  g_fx.i = make(CTL_DTYPE_I32, 2, s23, i6, sizeof i6);
  g_fx.m = make(CTL_DTYPE_F32, 2, s22, f4, sizeof f4);
  g_fx.out = make(CTL_DTYPE_F32, 2, s23, z6, sizeof z6);
  g_fx.out_i = make(CTL_DTYPE_I32, 2, s23, j6, sizeof j6);
  g_fx.idx_f = make(CTL_DTYPE_F32, 1, s2, idx, sizeof idx);
  g_fx.empty = make(CTL_DTYPE_F32, 2, s03, NULL, 0);
  g_fx.released = make(CTL_DTYPE_F32, 1, s4, f4, sizeof f4);
  ctl_tensor_release(g_fx.released);
  for (k = 0; k < FIXTURE_TENSORS; ++k) snapshot(*fixture_tensor(k), &g_snap[k]);
  return 0;
}

/* Releases each fixture tensor once; each must then be dead, i.e. the bad call left its
 * reference count at exactly one. */
static int teardown(void** state) {
  int k;
  (void)state;
  for (k = 0; k < FIXTURE_TENSORS; ++k) {
    ctl_tensor* t = *fixture_tensor(k);
    ctl_tensor_info info;
    ctl_status* s;
    ctl_tensor_release(t);
    memset(&info, 0, sizeof info);
    info.struct_size = CTL_TENSOR_INFO_STRUCT_SIZE;
    s = ctl_tensor_get_info(t, &info);
    if (!s || !strstr(ctl_status_get_message(s), "released")) {
      fprintf(stderr, "fixture tensor %d is still alive after its one release: a reference leaked\n", k);
      ctl_status_free(s);
      return -1;
    }
    ctl_status_free(s);
  }
  return 0;
}

/* ---- out-params ------------------------------------------------------------------------- */

typedef struct Outs {
  ctl_runtime* runtime;
  ctl_device* device;
  ctl_tensor* tensor;
  ctl_tensor* tensors[3];
  DLManagedTensor* managed;
  ctl_device_info device_info;
  ctl_plugin_info plugin_info;
  ctl_tensor_info tensor_info;
  unsigned char host[kMaxBytes];
} Outs;

static void fill_outs(Outs* o) {
  memset(o, 0xA5, sizeof *o);
  o->device_info.struct_size = CTL_DEVICE_INFO_STRUCT_SIZE;
  o->plugin_info.struct_size = CTL_PLUGIN_INFO_STRUCT_SIZE;
  o->tensor_info.struct_size = CTL_TENSOR_INFO_STRUCT_SIZE;
}

/* ---- the rows --------------------------------------------------------------------------- */

typedef ctl_status* (*BadCall)(Fixture* f, Outs* o);

typedef struct Row {
  const char* name;
  BadCall call;
  ctl_status_code code;
  const char* needle; /* the message must contain this */
  int bad_enum;       /* 1: passes a value outside its C enum's enumerators (see main) */
} Row;

#define F32 CTL_DTYPE_F32
static const int64_t k23[2] = {2, 3};

/* runtime and devices */
static ctl_status* r_runtime_null_out(Fixture* f, Outs* o) {
  (void)f;
  (void)o;
  return ctl_runtime_create(NULL, NULL);
}
static ctl_status* r_runtime_small_options(Fixture* f, Outs* o) {
  ctl_runtime_options opt;
  (void)f;
  memset(&opt, 0, sizeof opt);
  opt.struct_size = sizeof(size_t);
  return ctl_runtime_create(&opt, &o->runtime);
}
static ctl_status* r_runtime_paths_null(Fixture* f, Outs* o) {
  ctl_runtime_options opt;
  (void)f;
  memset(&opt, 0, sizeof opt);
  opt.struct_size = CTL_RUNTIME_OPTIONS_STRUCT_SIZE;
  opt.plugin_path_count = 2;
  opt.disable_discovery = true;
  return ctl_runtime_create(&opt, &o->runtime);
}
static ctl_status* r_runtime_bad_log_level(Fixture* f, Outs* o) {
  ctl_runtime_options opt;
  (void)f;
  memset(&opt, 0, sizeof opt);
  opt.struct_size = CTL_RUNTIME_OPTIONS_STRUCT_SIZE;
  opt.disable_discovery = true;
  opt.log_level = (ctl_log_level)99;
  opt.log_level_set = true;
  return ctl_runtime_create(&opt, &o->runtime);
}
static ctl_status* r_device_index(Fixture* f, Outs* o) {
  (void)f;
  return ctl_runtime_device(g_runtime, 100, &o->device);
}
static ctl_status* r_device_null_runtime(Fixture* f, Outs* o) {
  (void)f;
  return ctl_runtime_device(NULL, 0, &o->device);
}
static ctl_status* r_device_null_out(Fixture* f, Outs* o) {
  (void)f;
  (void)o;
  return ctl_runtime_device(g_runtime, 0, NULL);
}
static ctl_status* r_default_null_runtime(Fixture* f, Outs* o) {
  (void)f;
  return ctl_runtime_default_device(NULL, &o->device);
}
static ctl_status* r_plugin_info_index(Fixture* f, Outs* o) {
  (void)f;
  return ctl_runtime_plugin_info(g_runtime, 1000, &o->plugin_info);
}
static ctl_status* r_plugin_info_null(Fixture* f, Outs* o) {
  (void)f;
  (void)o;
  return ctl_runtime_plugin_info(g_runtime, 0, NULL);
}
static ctl_status* r_plugin_info_small(Fixture* f, Outs* o) {
  (void)f;
  o->plugin_info.struct_size = 4; /* set by fill_outs' twin too: see prepare_expected */
  return ctl_runtime_plugin_info(g_runtime, 0, &o->plugin_info);
}
static ctl_status* r_device_info_null(Fixture* f, Outs* o) {
  (void)f;
  return ctl_device_get_info(NULL, &o->device_info);
}
static ctl_status* r_device_info_small(Fixture* f, Outs* o) {
  (void)f;
  o->device_info.struct_size = 1;
  return ctl_device_get_info(g_device, &o->device_info);
}
static ctl_status* r_sync_null(Fixture* f, Outs* o) {
  (void)f;
  (void)o;
  return ctl_device_synchronize(NULL);
}

/* creation */
static ctl_status* r_create_null_device(Fixture* f, Outs* o) {
  (void)f;
  return ctl_tensor_create(NULL, F32, 2, k23, &o->tensor);
}
static ctl_status* r_create_bad_dtype(Fixture* f, Outs* o) {
  (void)f;
  return ctl_tensor_create(g_device, (ctl_dtype)99, 2, k23, &o->tensor);
}
static ctl_status* r_create_negative_dim(Fixture* f, Outs* o) {
  static const int64_t s[2] = {2, -3};
  (void)f;
  return ctl_tensor_create(g_device, F32, 2, s, &o->tensor);
}
static ctl_status* r_create_overflow(Fixture* f, Outs* o) {
  static const int64_t s[2] = {INT64_MAX, 2};
  (void)f;
  return ctl_tensor_create(g_device, F32, 2, s, &o->tensor);
}
/* Empty, yet its strides (2^62 x 4 elements) would overflow: found by the views fuzzer. */
static ctl_status* r_create_empty_overflow(Fixture* f, Outs* o) {
  static const int64_t s[3] = {0, (int64_t)1 << 62, 4};
  (void)f;
  return ctl_tensor_create(g_device, F32, 3, s, &o->tensor);
}
static ctl_status* r_reshape_empty_overflow(Fixture* f, Outs* o) {
  static const int64_t empty_shape[1] = {0};
  static const int64_t s[3] = {0, (int64_t)1 << 62, 4};
  ctl_tensor* empty = NULL;
  ctl_status* status;
  (void)f;
  status = ctl_tensor_create(g_device, F32, 1, empty_shape, &empty);
  if (status) return status;
  status = ctl_tensor_reshape(empty, 3, s, &o->tensor);
  ctl_tensor_release(empty);
  return status;
}
static ctl_status* r_create_rank9(Fixture* f, Outs* o) {
  static const int64_t s[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  (void)f;
  return ctl_tensor_create(g_device, F32, 9, s, &o->tensor);
}
static ctl_status* r_create_null_shape(Fixture* f, Outs* o) {
  (void)f;
  return ctl_tensor_create(g_device, F32, 2, NULL, &o->tensor);
}
static ctl_status* r_create_null_out(Fixture* f, Outs* o) {
  (void)f;
  (void)o;
  return ctl_tensor_create(g_device, F32, 2, k23, NULL);
}
static ctl_status* r_full_overflow(Fixture* f, Outs* o) {
  static const int64_t s[3] = {INT64_MAX / 4, 4, 4};
  (void)f;
  return ctl_tensor_create_full(g_device, F32, 3, s, 1.0, &o->tensor);
}
static ctl_status* r_from_host_bytes(Fixture* f, Outs* o) {
  static const float data[6] = {0};
  (void)f;
  return ctl_tensor_from_host(g_device, F32, 2, k23, data, sizeof data - 4, &o->tensor);
}
static ctl_status* r_from_host_null_data(Fixture* f, Outs* o) {
  (void)f;
  return ctl_tensor_from_host(g_device, F32, 2, k23, NULL, 24, &o->tensor);
}

/* host transfers and handles */
static ctl_status* r_to_host_small(Fixture* f, Outs* o) {
  return ctl_tensor_to_host(f->a, o->host, 23);
}
static ctl_status* r_to_host_null_dst(Fixture* f, Outs* o) {
  (void)o;
  return ctl_tensor_to_host(f->a, NULL, 24);
}
static ctl_status* r_to_host_released(Fixture* f, Outs* o) {
  return ctl_tensor_to_host(f->released, o->host, sizeof o->host);
}
static ctl_status* r_to_host_null(Fixture* f, Outs* o) {
  (void)f;
  return ctl_tensor_to_host(NULL, o->host, sizeof o->host);
}
static ctl_status* r_to_device_null(Fixture* f, Outs* o) {
  return ctl_tensor_to_device(f->a, NULL, &o->tensor);
}
static ctl_status* r_info_null(Fixture* f, Outs* o) {
  (void)o;
  return ctl_tensor_get_info(f->a, NULL);
}
static ctl_status* r_info_small(Fixture* f, Outs* o) {
  o->tensor_info.struct_size = 2;
  return ctl_tensor_get_info(f->a, &o->tensor_info);
}
static ctl_status* r_info_released(Fixture* f, Outs* o) {
  return ctl_tensor_get_info(f->released, &o->tensor_info);
}

/* views */
static ctl_status* r_reshape_count(Fixture* f, Outs* o) {
  static const int64_t s[2] = {4, 2};
  return ctl_tensor_reshape(f->a, 2, s, &o->tensor);
}
static ctl_status* r_reshape_two_infer(Fixture* f, Outs* o) {
  static const int64_t s[2] = {-1, -1};
  return ctl_tensor_reshape(f->a, 2, s, &o->tensor);
}
static ctl_status* r_reshape_rank9(Fixture* f, Outs* o) {
  static const int64_t s[9] = {1, 1, 1, 1, 1, 1, 1, 2, 3};
  return ctl_tensor_reshape(f->a, 9, s, &o->tensor);
}
static ctl_status* r_permute_dup(Fixture* f, Outs* o) {
  static const int64_t p[2] = {1, 1};
  return ctl_tensor_permute(f->a, 2, p, &o->tensor);
}
static ctl_status* r_permute_range(Fixture* f, Outs* o) {
  static const int64_t p[2] = {0, 5};
  return ctl_tensor_permute(f->a, 2, p, &o->tensor);
}
static ctl_status* r_permute_rank(Fixture* f, Outs* o) {
  static const int64_t p[3] = {0, 1, 2};
  return ctl_tensor_permute(f->a, 3, p, &o->tensor);
}
static ctl_status* r_transpose_range(Fixture* f, Outs* o) {
  return ctl_tensor_transpose(f->a, 0, -3, &o->tensor);
}
static ctl_status* r_slice_axis(Fixture* f, Outs* o) {
  return ctl_tensor_slice(f->a, 2, 0, 1, 1, &o->tensor);
}
static ctl_status* r_slice_step(Fixture* f, Outs* o) {
  return ctl_tensor_slice(f->a, 1, 0, 3, 0, &o->tensor);
}
static ctl_status* r_expand_non1(Fixture* f, Outs* o) {
  static const int64_t s[2] = {2, 5};
  return ctl_tensor_expand(f->a, 2, s, &o->tensor);
}
static ctl_status* r_expand_smaller(Fixture* f, Outs* o) {
  static const int64_t s[1] = {3};
  return ctl_tensor_expand(f->a, 1, s, &o->tensor);
}
static ctl_status* r_expand_overflow(Fixture* f, Outs* o) {
  static const int64_t s[3] = {INT64_MAX, 2, 3};
  return ctl_tensor_expand(f->a, 3, s, &o->tensor);
}
static ctl_status* r_view_released(Fixture* f, Outs* o) {
  return ctl_tensor_transpose(f->released, 0, 0, &o->tensor);
}
static ctl_status* r_contiguous_null(Fixture* f, Outs* o) {
  (void)o;
  return ctl_tensor_contiguous(f->a, NULL);
}

/* ops: validation */
static ctl_status* r_op_unknown(Fixture* f, Outs* o) {
  return ctl_op_run((ctl_op_id)9999, 1, &f->a, NULL, 1, &o->tensor);
}
static ctl_status* r_op_name_unknown(Fixture* f, Outs* o) {
  (void)f;
  (void)o;
  /* ctl_op_name is not fallible: NULL for an unknown id. Reported as a status for the table. */
  return ctl_op_name((ctl_op_id)9999) == NULL ? ctl_op_run((ctl_op_id)0, 0, NULL, NULL, 0, NULL) : NULL;
}
static ctl_status* r_exp_i32(Fixture* f, Outs* o) {
  return ctl_op_unary(CTL_OP_EXP, f->i, &o->tensor);
}
static ctl_status* r_add_mixed(Fixture* f, Outs* o) {
  return ctl_op_binary(CTL_OP_ADD, f->a, f->i, &o->tensor);
}
static ctl_status* r_add_shapes(Fixture* f, Outs* o) {
  return ctl_op_binary(CTL_OP_ADD, f->a, f->c4, &o->tensor);
}
static ctl_status* r_where_cond(Fixture* f, Outs* o) {
  ctl_tensor* in[3];
  in[0] = f->a;
  in[1] = f->a;
  in[2] = f->b;
  return ctl_op_run(CTL_OP_WHERE, 3, in, NULL, 1, &o->tensor);
}
static ctl_status* r_gather_f32_index(Fixture* f, Outs* o) {
  ctl_tensor* in[2];
  ctl_axis_attrs attrs;
  in[0] = f->a;
  in[1] = f->idx_f;
  attrs.struct_size = CTL_AXIS_ATTRS_STRUCT_SIZE;
  attrs.axis = 0;
  return ctl_op_run(CTL_OP_GATHER, 2, in, &attrs, 1, &o->tensor);
}
static ctl_status* r_reduce_axis(Fixture* f, Outs* o) {
  static const int64_t axes[1] = {5};
  return ctl_op_reduce(CTL_OP_SUM, f->a, 1, axes, false, &o->tensor);
}
static ctl_status* r_reduce_dup(Fixture* f, Outs* o) {
  static const int64_t axes[2] = {1, -1};
  return ctl_op_reduce(CTL_OP_SUM, f->a, 2, axes, false, &o->tensor);
}
static ctl_status* r_reduce_null_axes(Fixture* f, Outs* o) {
  return ctl_op_reduce(CTL_OP_SUM, f->a, 1, NULL, false, &o->tensor);
}
static ctl_status* r_reduce_not_reduction(Fixture* f, Outs* o) {
  return ctl_op_reduce(CTL_OP_ADD, f->a, 0, NULL, false, &o->tensor);
}
static ctl_status* r_softmax_axis(Fixture* f, Outs* o) {
  return ctl_op_softmax(f->a, 2, &o->tensor);
}
static ctl_status* r_softmax_huge_axis(Fixture* f, Outs* o) {
  return ctl_op_softmax(f->a, INT64_MAX, &o->tensor);
}
static ctl_status* r_argmax_two(Fixture* f, Outs* o) {
  static const int64_t axes[2] = {0, 1};
  return ctl_op_reduce(CTL_OP_ARGMAX, f->a, 2, axes, false, &o->tensor);
}
static ctl_status* r_max_empty(Fixture* f, Outs* o) {
  static const int64_t axes[1] = {0};
  return ctl_op_reduce(CTL_OP_MAX, f->empty, 1, axes, false, &o->tensor);
}
static ctl_status* r_attrs_small(Fixture* f, Outs* o) {
  ctl_reduce_attrs attrs;
  memset(&attrs, 0, sizeof attrs);
  attrs.struct_size = 4;
  return ctl_op_run(CTL_OP_SUM, 1, &f->a, &attrs, 1, &o->tensor);
}
static ctl_status* r_matmul_inner(Fixture* f, Outs* o) {
  return ctl_op_matmul(f->a, f->m, &o->tensor);
}
static ctl_status* r_matmul_beta(Fixture* f, Outs* o) {
  ctl_tensor* in[2];
  ctl_matmul_attrs attrs;
  in[0] = f->m;
  in[1] = f->a;
  memset(&attrs, 0, sizeof attrs);
  attrs.struct_size = CTL_MATMUL_ATTRS_STRUCT_SIZE;
  attrs.beta = 0.5;
  return ctl_op_run(CTL_OP_MATMUL, 2, in, &attrs, 1, &o->tensor);
}
static ctl_status* r_matmul_rank1(Fixture* f, Outs* o) {
  return ctl_op_matmul(f->c4, f->c4, &o->tensor);
}
static ctl_status* r_cast_bad_dtype(Fixture* f, Outs* o) {
  return ctl_op_cast(f->a, (ctl_dtype)42, &o->tensor);
}
static ctl_status* r_cast_attrs_bad_dtype(Fixture* f, Outs* o) {
  ctl_cast_attrs attrs;
  attrs.struct_size = CTL_CAST_ATTRS_STRUCT_SIZE;
  attrs.dtype = (ctl_dtype)42;
  return ctl_op_run(CTL_OP_CAST, 1, &f->a, &attrs, 1, &o->tensor);
}
static ctl_status* r_concat_rank(Fixture* f, Outs* o) {
  ctl_tensor* in[2];
  in[0] = f->a;
  in[1] = f->c4;
  return ctl_op_run(CTL_OP_CONCAT, 2, in, NULL, 1, &o->tensor);
}
static ctl_status* r_layer_norm_weight(Fixture* f, Outs* o) {
  ctl_tensor* in[2];
  in[0] = f->a;
  in[1] = f->c4; /* weight must have length 3 */
  return ctl_op_run(CTL_OP_LAYER_NORM, 2, in, NULL, 1, &o->tensor);
}
static ctl_status* r_fill_with_run(Fixture* f, Outs* o) {
  ctl_fill_attrs attrs;
  (void)f;
  attrs.struct_size = CTL_FILL_ATTRS_STRUCT_SIZE;
  attrs.value = 1.0;
  return ctl_op_run(CTL_OP_FILL, 0, NULL, &attrs, 1, &o->tensor);
}
static ctl_status* r_inputs_null(Fixture* f, Outs* o) {
  (void)f;
  return ctl_op_run(CTL_OP_NEG, 1, NULL, NULL, 1, &o->tensor);
}
static ctl_status* r_input_count(Fixture* f, Outs* o) {
  return ctl_op_run(CTL_OP_ADD, 1, &f->a, NULL, 1, &o->tensor);
}
static ctl_status* r_output_count(Fixture* f, Outs* o) {
  return ctl_op_run(CTL_OP_NEG, 1, &f->a, NULL, 2, o->tensors);
}
static ctl_status* r_out_tensors_null(Fixture* f, Outs* o) {
  (void)o;
  return ctl_op_run(CTL_OP_NEG, 1, &f->a, NULL, 1, NULL);
}
static ctl_status* r_input_entry_null(Fixture* f, Outs* o) {
  return ctl_op_binary(CTL_OP_MUL, f->a, NULL, &o->tensor);
}
static ctl_status* r_op_released(Fixture* f, Outs* o) {
  return ctl_op_binary(CTL_OP_ADD, f->a, f->released, &o->tensor);
}
static ctl_status* r_random_normal_std(Fixture* f, Outs* o) {
  ctl_random_attrs attrs;
  (void)o;
  memset(&attrs, 0, sizeof attrs);
  attrs.struct_size = CTL_RANDOM_ATTRS_STRUCT_SIZE;
  attrs.b = -1.0;
  return ctl_op_run_into(CTL_OP_RANDOM_NORMAL, 0, NULL, &attrs, 1, &f->out);
}
static ctl_status* r_arange_rank2(Fixture* f, Outs* o) {
  ctl_arange_attrs attrs;
  (void)o;
  attrs.struct_size = CTL_ARANGE_ATTRS_STRUCT_SIZE;
  attrs.start = 0;
  attrs.step = 1;
  return ctl_op_run_into(CTL_OP_ARANGE, 0, NULL, &attrs, 1, &f->out);
}

/* ops: run_into outputs */
static ctl_status* r_into_shape(Fixture* f, Outs* o) {
  (void)o;
  return ctl_op_run_into(CTL_OP_NEG, 1, &f->c4, NULL, 1, &f->out);
}
static ctl_status* r_into_dtype(Fixture* f, Outs* o) {
  (void)o;
  return ctl_op_run_into(CTL_OP_NEG, 1, &f->a, NULL, 1, &f->out_i);
}
static ctl_status* r_into_overlap(Fixture* f, Outs* o) {
  (void)o;
  return ctl_op_run_into(CTL_OP_NEG, 1, &f->a, NULL, 1, &f->a);
}
static ctl_status* r_into_overlap_second(Fixture* f, Outs* o) {
  ctl_tensor* in[2];
  (void)o;
  in[0] = f->a;
  in[1] = f->out;
  return ctl_op_run_into(CTL_OP_ADD, 2, in, NULL, 1, &f->out);
}
static ctl_status* r_into_compare_dtype(Fixture* f, Outs* o) {
  ctl_tensor* in[2];
  (void)o;
  in[0] = f->a;
  in[1] = f->b;
  return ctl_op_run_into(CTL_OP_LT, 2, in, NULL, 1, &f->out); /* lt produces bool */
}
static ctl_status* r_into_outputs_null(Fixture* f, Outs* o) {
  (void)o;
  return ctl_op_run_into(CTL_OP_NEG, 1, &f->a, NULL, 1, NULL);
}
static ctl_status* r_into_released(Fixture* f, Outs* o) {
  (void)o;
  return ctl_op_run_into(CTL_OP_NEG, 1, &f->a, NULL, 1, &f->released);
}
static ctl_status* r_into_broadcast_view(Fixture* f, Outs* o) {
  /* c4 [4] -> a [1,4] view expanded to [2,4]: an output with stride 0 */
  static const int64_t s[2] = {2, 4};
  ctl_tensor* e = NULL;
  ctl_tensor* in[1];
  ctl_status* s1 = ctl_tensor_expand(f->c4, 2, s, &e);
  ctl_status* s2;
  ctl_tensor* src = NULL;
  (void)o;
  if (s1) return s1;
  s1 = ctl_tensor_create_zeros(g_device, F32, 2, s, &src);
  if (s1) {
    ctl_tensor_release(e);
    return s1;
  }
  in[0] = src;
  s2 = ctl_op_run_into(CTL_OP_NEG, 1, in, NULL, 1, &e);
  ctl_tensor_release(src);
  ctl_tensor_release(e);
  return s2;
}
static ctl_status* r_to_dlpack_null(Fixture* f, Outs* o) {
  (void)o;
  return ctl_tensor_to_dlpack(f->a, NULL);
}
static ctl_status* r_to_dlpack_released(Fixture* f, Outs* o) {
  return ctl_tensor_to_dlpack(f->released, &o->managed);
}

#define IA CTL_STATUS_INVALID_ARGUMENT
static const Row kRows[] = {
    {"runtime_create: NULL out_runtime", r_runtime_null_out, IA, "out_runtime", 0},
    {"runtime_create: options struct_size too small", r_runtime_small_options, IA, "struct_size", 0},
    {"runtime_create: plugin_paths NULL with a count", r_runtime_paths_null, IA, "plugin_paths", 0},
    {"runtime_create: log_level not a level", r_runtime_bad_log_level, IA, "log_level", 1},
    {"runtime_device: index out of range", r_device_index, CTL_STATUS_OUT_OF_RANGE, "'index' is 100", 0},
    {"runtime_device: NULL runtime", r_device_null_runtime, IA, "'runtime'", 0},
    {"runtime_device: NULL out_device", r_device_null_out, IA, "out_device", 0},
    {"runtime_default_device: NULL runtime", r_default_null_runtime, IA, "'runtime'", 0},
    {"runtime_plugin_info: index out of range", r_plugin_info_index, CTL_STATUS_OUT_OF_RANGE, "'index' is 1000", 0},
    {"runtime_plugin_info: NULL out_info", r_plugin_info_null, IA, "out_info", 0},
    {"runtime_plugin_info: struct_size too small", r_plugin_info_small, IA, "struct_size", 0},
    {"device_get_info: NULL device", r_device_info_null, IA, "'device'", 0},
    {"device_get_info: struct_size too small", r_device_info_small, IA, "struct_size", 0},
    {"device_synchronize: NULL device", r_sync_null, IA, "'device'", 0},
    {"tensor_create: NULL device", r_create_null_device, IA, "'device'", 0},
    {"tensor_create: dtype 99", r_create_bad_dtype, IA, "'dtype' is 99", 1},
    {"tensor_create: negative dim", r_create_negative_dim, IA, "shape[1] is -3", 0},
    {"tensor_create: {INT64_MAX, 2} overflows", r_create_overflow, IA, "overflows", 0},
    {"tensor_create: {0, 2^62, 4} overflows its strides", r_create_empty_overflow, IA, "overflows", 0},
    {"reshape: empty to {0, 2^62, 4} overflows its strides", r_reshape_empty_overflow, IA, "overflows", 0},
    {"tensor_create: rank 9 > CTL_MAX_RANK", r_create_rank9, IA, "rank", 0},
    {"tensor_create: NULL shape with rank 2", r_create_null_shape, IA, "'shape' is NULL", 0},
    {"tensor_create: NULL out_tensor", r_create_null_out, IA, "out_tensor", 0},
    {"tensor_create_full: overflowing byte size", r_full_overflow, IA, "overflows", 0},
    {"tensor_from_host: wrong data_bytes", r_from_host_bytes, IA, "data_bytes", 0},
    {"tensor_from_host: NULL data", r_from_host_null_data, IA, "'data'", 0},
    {"tensor_to_host: dst too small", r_to_host_small, IA, "dst_bytes", 0},
    {"tensor_to_host: NULL dst", r_to_host_null_dst, IA, "'dst'", 0},
    {"tensor_to_host: released tensor", r_to_host_released, IA, "released", 0},
    {"tensor_to_host: NULL tensor", r_to_host_null, IA, "'tensor'", 0},
    {"tensor_to_device: NULL device", r_to_device_null, IA, "'device'", 0},
    {"tensor_get_info: NULL out_info", r_info_null, IA, "out_info", 0},
    {"tensor_get_info: struct_size too small", r_info_small, IA, "struct_size", 0},
    {"tensor_get_info: released tensor", r_info_released, IA, "released", 0},
    {"reshape: wrong element count", r_reshape_count, IA, "elements", 0},
    {"reshape: two -1", r_reshape_two_infer, IA, "-1", 0},
    {"reshape: rank 9", r_reshape_rank9, IA, "rank", 0},
    {"permute: duplicate axes", r_permute_dup, IA, "twice", 0},
    {"permute: axis out of range", r_permute_range, IA, "'perm' is 5", 0},
    {"permute: wrong rank", r_permute_rank, IA, "'rank' is 3", 0},
    {"transpose: axis out of range", r_transpose_range, IA, "'axis1' is -3", 0},
    {"slice: axis out of range", r_slice_axis, IA, "'axis' is 2", 0},
    {"slice: step 0", r_slice_step, IA, "'step' is 0", 0},
    {"expand: non-1 axis", r_expand_non1, IA, "shape[1] is 5", 0},
    {"expand: to a smaller rank", r_expand_smaller, IA, "'rank' is 1", 0},
    {"expand: overflowing shape", r_expand_overflow, IA, "overflows", 0},
    {"transpose: released tensor", r_view_released, IA, "released", 0},
    {"contiguous: NULL out_tensor", r_contiguous_null, IA, "out_tensor", 0},
    {"op_run: unknown op id", r_op_unknown, IA, "'op' is 9999", 1},
    {"op_run: op id 0 (ctl_op_name(9999) is NULL)", r_op_name_unknown, IA, "'op' is 0", 0},
    {"exp on i32", r_exp_i32, IA, "inputs[0] has dtype i32", 0},
    {"add of f32 + i32", r_add_mixed, IA, "inputs[1] is i32", 0},
    {"add of [2,3] + [4] (not broadcastable)", r_add_shapes, IA, "broadcast", 0},
    {"where with an f32 condition", r_where_cond, IA, "condition", 0},
    {"gather with an f32 index", r_gather_f32_index, IA, "inputs[1] (index)", 0},
    {"sum: axis 5 of rank 2", r_reduce_axis, IA, "attrs->axes", 0},
    {"sum: axis named twice", r_reduce_dup, IA, "twice", 0},
    {"reduce: NULL axes with a count", r_reduce_null_axes, IA, "'axes'", 0},
    {"reduce: not a reduction op", r_reduce_not_reduction, IA, "'op'", 0},
    {"softmax: axis 2 of rank 2", r_softmax_axis, IA, "attrs->axis", 0},
    {"softmax: axis INT64_MAX", r_softmax_huge_axis, IA, "axis", 0},
    {"argmax with two axes", r_argmax_two, IA, "axis_count", 0},
    {"max over an empty axis", r_max_empty, IA, "size 0", 0},
    {"attrs struct_size too small", r_attrs_small, IA, "attrs->struct_size", 0},
    {"matmul: inner dims differ", r_matmul_inner, IA, "inner dimensions", 0},
    {"matmul: beta != 0 with ctl_op_run", r_matmul_beta, IA, "attrs->beta", 0},
    {"matmul: rank-1 inputs", r_matmul_rank1, IA, "rank", 0},
    {"cast to dtype 42", r_cast_bad_dtype, IA, "'dtype' is 42", 1},
    {"cast with attrs->dtype 42", r_cast_attrs_bad_dtype, IA, "attrs->dtype", 1},
    {"concat of rank 2 and rank 1", r_concat_rank, IA, "rank", 0},
    {"layer_norm: weight of the wrong length", r_layer_norm_weight, IA, "weight", 0},
    {"op_run on fill (a creation op)", r_fill_with_run, IA, "ctl_op_run_into", 0},
    {"op_run: NULL inputs with input_count 1", r_inputs_null, IA, "'inputs'", 0},
    {"op_run: add with one input", r_input_count, IA, "input_count", 0},
    {"op_run: neg with two outputs", r_output_count, IA, "output_count", 0},
    {"op_run: NULL out_tensors", r_out_tensors_null, IA, "out_tensors", 0},
    {"op_binary: NULL second input", r_input_entry_null, IA, "inputs[1]", 0},
    {"op_binary: released input", r_op_released, IA, "released", 0},
    {"random_normal: negative standard deviation", r_random_normal_std, IA, "attrs->b", 0},
    {"arange into a rank-2 output", r_arange_rank2, IA, "rank", 0},
    {"run_into: wrong output shape", r_into_shape, IA, "outputs[0] has shape", 0},
    {"run_into: wrong output dtype", r_into_dtype, IA, "outputs[0] has dtype", 0},
    {"run_into: output is the input", r_into_overlap, IA, "overlaps inputs[0]", 0},
    {"run_into: output is the second input", r_into_overlap_second, IA, "overlaps inputs[1]", 0},
    {"run_into: f32 output for a comparison", r_into_compare_dtype, IA, "outputs[0] has dtype", 0},
    {"run_into: NULL outputs", r_into_outputs_null, IA, "outputs", 0},
    {"run_into: released output", r_into_released, IA, "released", 0},
    {"run_into: broadcast (stride 0) output", r_into_broadcast_view, IA, "broadcast view", 0},
    {"to_dlpack: NULL out_managed", r_to_dlpack_null, IA, "out_managed", 0},
    {"to_dlpack: released tensor", r_to_dlpack_released, IA, "released", 0},
};

/* ---- the harness ---------------------------------------------------------------------- */

static void run_row(void** state) {
  const Row* row = (const Row*)*state;
  Outs outs, expected;
  ctl_status* status;
  const size_t devices = ctl_runtime_device_count(g_runtime);
  int k;
  fill_outs(&outs);
  fill_outs(&expected);
  /* rows that shrink an info struct_size do it on `outs`; mirror it on `expected` */
  if (row->call == r_plugin_info_small) expected.plugin_info.struct_size = 4;
  if (row->call == r_device_info_small) expected.device_info.struct_size = 1;
  if (row->call == r_info_small) expected.tensor_info.struct_size = 2;

  status = row->call(&g_fx, &outs);
  if (!status) fail_msg("%s: the call succeeded; expected %s", row->name, ctl_status_code_name(row->code));
  if (ctl_status_get_code(status) != row->code || !strstr(ctl_status_get_message(status), row->needle)) {
    print_error("%s\n  expected %s with a message containing \"%s\"\n  got      %s: %s\n", row->name,
                ctl_status_code_name(row->code), row->needle, ctl_status_code_name(ctl_status_get_code(status)),
                ctl_status_get_message(status));
    ctl_status_free(status);
    fail();
  }
  ctl_status_free(status);

  if (memcmp(&outs, &expected, sizeof outs) != 0) {
    size_t byte = 0;
    while (((unsigned char*)&outs)[byte] == ((unsigned char*)&expected)[byte]) ++byte;
    fail_msg("%s: an output parameter was written (first changed byte at offset %zu of Outs)", row->name, byte);
  }
  assert_int_equal(ctl_runtime_device_count(g_runtime), devices);
  for (k = 0; k < FIXTURE_TENSORS; ++k) {
    Snapshot now;
    snapshot(*fixture_tensor(k), &now);
    if (memcmp(&now, &g_snap[k], sizeof now) != 0) {
      fail_msg("%s: fixture tensor %d changed (contents, shape, strides or offset)", row->name, k);
    }
  }
}

/* Not a table row: a slice step so large that stop - start + step overflows int64 must
 * either work (Python semantics: one element) or be refused — never overflow (UBSan). */
static void slice_with_huge_step(void** state) {
  ctl_tensor* t = NULL;
  ctl_status* s;
  (void)state;
  s = ctl_tensor_slice(g_fx.a, 1, 0, 3, INT64_MAX, &t);
  if (s) {
    assert_int_equal(ctl_status_get_code(s), CTL_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(ctl_status_get_message(s), "step"));
    ctl_status_free(s);
  } else {
    float v[2] = {-1, -1};
    assert_int_equal(ctl_tensor_dim(t, 1), 1);
    ok(ctl_tensor_to_host(t, v, sizeof v), "to_host");
    assert_true(v[0] == 0.0f && v[1] == 3.0f);
    ctl_tensor_release(t);
  }
}

/* Usage: bad_calls_test [enums]. Rows passing an out-of-range enum value (legal for a C
 * caller) run only with "enums": in C++ loading such a value from an enum-typed object is
 * undefined behaviour, which UBSan (-fsanitize=enum) aborts on, so they are a separate CTest
 * that cannot hide the other rows' results. */
int main(int argc, char** argv) {
  enum { kCount = sizeof kRows / sizeof kRows[0] };
  struct CMUnitTest tests[kCount + 1];
  const int enums = argc > 1 && strcmp(argv[1], "enums") == 0;
  size_t k, n = 0;
  for (k = 0; k < kCount; ++k) {
    if (kRows[k].bad_enum != enums) continue;
    tests[n].name = kRows[k].name;
    tests[n].test_func = run_row;
    tests[n].setup_func = setup;
    tests[n].teardown_func = teardown;
    tests[n].initial_state = (void*)&kRows[k];
    ++n;
  }
  if (!enums) {
    tests[n].name = "slice with a step of INT64_MAX";
    tests[n].test_func = slice_with_huge_step;
    tests[n].setup_func = setup;
    tests[n].teardown_func = teardown;
    tests[n].initial_state = NULL;
    ++n;
  }
  return _cmocka_run_group_tests(enums ? "bad_calls_enums" : "bad_calls", tests, n, group_setup, group_teardown);
}
