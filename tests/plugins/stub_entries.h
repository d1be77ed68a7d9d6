/* stub_entries.h — trivial required entries for test plugins whose table is rejected before
 * any entry is called (calling one would be a core bug, so each aborts loudly). */
#ifndef CATALYST_TEST_STUB_ENTRIES_H_
#define CATALYST_TEST_STUB_ENTRIES_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalyst_plugin.h"

#define STUB_FAIL(name)                                                                     \
  do {                                                                                      \
    fprintf(stderr, "test plugin: the core called %s of a table it should reject\n", name); \
    abort();                                                                                \
  } while (0)

static ctl_status* stub_instance_create(const ctl_host_api* h, ctl_plugin_instance** o) {
  (void)h;
  (void)o;
  STUB_FAIL("instance_create");
}
static void stub_instance_destroy(ctl_plugin_instance* i) {
  (void)i;
  STUB_FAIL("instance_destroy");
}
static ctl_status* stub_device_count(ctl_plugin_instance* i, uint32_t* o) {
  (void)i;
  (void)o;
  STUB_FAIL("device_count");
}
static ctl_status* stub_device_get(ctl_plugin_instance* i, uint32_t n, ctl_plugin_device** o) {
  (void)i;
  (void)n;
  (void)o;
  STUB_FAIL("device_get");
}
static ctl_status* stub_device_properties(ctl_plugin_device* d, ctl_plugin_device_properties* p) {
  (void)d;
  (void)p;
  STUB_FAIL("device_properties");
}
static ctl_status* stub_buffer_allocate(ctl_plugin_device* d, uint64_t s, ctl_plugin_buffer** o) {
  (void)d;
  (void)s;
  (void)o;
  STUB_FAIL("buffer_allocate");
}
static void stub_buffer_free(ctl_plugin_device* d, ctl_plugin_buffer* b) {
  (void)d;
  (void)b;
  STUB_FAIL("buffer_free");
}
static ctl_status* stub_buffer_write(ctl_plugin_stream* s, ctl_plugin_buffer* b, uint64_t o, const void* p,
                                     uint64_t n) {
  (void)s;
  (void)b;
  (void)o;
  (void)p;
  (void)n;
  STUB_FAIL("buffer_write");
}
static ctl_status* stub_buffer_read(ctl_plugin_stream* s, ctl_plugin_buffer* b, uint64_t o, void* p, uint64_t n) {
  (void)s;
  (void)b;
  (void)o;
  (void)p;
  (void)n;
  STUB_FAIL("buffer_read");
}
static ctl_status* stub_stream_create(ctl_plugin_device* d, ctl_plugin_stream** o) {
  (void)d;
  (void)o;
  STUB_FAIL("stream_create");
}
static void stub_stream_destroy(ctl_plugin_stream* s) {
  (void)s;
  STUB_FAIL("stream_destroy");
}
static ctl_status* stub_stream_synchronize(ctl_plugin_stream* s) {
  (void)s;
  STUB_FAIL("stream_synchronize");
}
static ctl_status* stub_op_execute(ctl_plugin_stream* s, const ctl_op_call* c) {
  (void)s;
  (void)c;
  STUB_FAIL("op_execute");
}

/* A complete table of stubs; each test plugin breaks one thing in it. */
static ctl_plugin_api stub_table(const char* name) {
  ctl_plugin_api t;
  memset(&t, 0, sizeof t);
  t.struct_size = CTL_PLUGIN_API_STRUCT_SIZE;
  t.abi_major = CTL_ABI_VERSION_MAJOR;
  t.abi_minor = CTL_ABI_VERSION_MINOR;
  t.name = name;
  t.version = "0.0.1-test";
  t.instance_create = stub_instance_create;
  t.instance_destroy = stub_instance_destroy;
  t.device_count = stub_device_count;
  t.device_get = stub_device_get;
  t.device_properties = stub_device_properties;
  t.buffer_allocate = stub_buffer_allocate;
  t.buffer_free = stub_buffer_free;
  t.buffer_write = stub_buffer_write;
  t.buffer_read = stub_buffer_read;
  t.stream_create = stub_stream_create;
  t.stream_destroy = stub_stream_destroy;
  t.stream_synchronize = stub_stream_synchronize;
  t.op_execute = stub_op_execute;
  return t;
}

#endif
