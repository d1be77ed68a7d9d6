/* refusing_entries.h — trivial required entries for test plugins whose table is rejected before
 * any entry is called (calling one would be a core bug, so each aborts loudly). */
#ifndef CATALYST_TEST_REFUSING_ENTRIES_H_
#define CATALYST_TEST_REFUSING_ENTRIES_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalyst_plugin.h"

#define REFUSE_CALL(name)                                                                   \
  do {                                                                                      \
    fprintf(stderr, "test plugin: the core called %s of a table it should reject\n", name); \
    abort();                                                                                \
  } while (0)

static ctl_status* refusing_instance_create(const ctl_host_api* h, ctl_plugin_instance** o) {
  (void)h;
  (void)o;
  REFUSE_CALL("instance_create");
}
static void refusing_instance_destroy(ctl_plugin_instance* i) {
  (void)i;
  REFUSE_CALL("instance_destroy");
}
static ctl_status* refusing_device_count(ctl_plugin_instance* i, uint32_t* o) {
  (void)i;
  (void)o;
  REFUSE_CALL("device_count");
}
static ctl_status* refusing_device_get(ctl_plugin_instance* i, uint32_t n, ctl_plugin_device** o) {
  (void)i;
  (void)n;
  (void)o;
  REFUSE_CALL("device_get");
}
static ctl_status* refusing_device_properties(ctl_plugin_device* d, ctl_plugin_device_properties* p) {
  (void)d;
  (void)p;
  REFUSE_CALL("device_properties");
}
static ctl_status* refusing_buffer_allocate(ctl_plugin_device* d, uint64_t s, ctl_plugin_buffer** o) {
  (void)d;
  (void)s;
  (void)o;
  REFUSE_CALL("buffer_allocate");
}
static void refusing_buffer_free(ctl_plugin_device* d, ctl_plugin_buffer* b) {
  (void)d;
  (void)b;
  REFUSE_CALL("buffer_free");
}
static ctl_status* refusing_buffer_write(ctl_plugin_stream* s, ctl_plugin_buffer* b, uint64_t o, const void* p,
                                         uint64_t n) {
  (void)s;
  (void)b;
  (void)o;
  (void)p;
  (void)n;
  REFUSE_CALL("buffer_write");
}
static ctl_status* refusing_buffer_read(ctl_plugin_stream* s, ctl_plugin_buffer* b, uint64_t o, void* p, uint64_t n) {
  (void)s;
  (void)b;
  (void)o;
  (void)p;
  (void)n;
  REFUSE_CALL("buffer_read");
}
static ctl_status* refusing_stream_create(ctl_plugin_device* d, ctl_plugin_stream** o) {
  (void)d;
  (void)o;
  REFUSE_CALL("stream_create");
}
static void refusing_stream_destroy(ctl_plugin_stream* s) {
  (void)s;
  REFUSE_CALL("stream_destroy");
}
static ctl_status* refusing_stream_synchronize(ctl_plugin_stream* s) {
  (void)s;
  REFUSE_CALL("stream_synchronize");
}
static ctl_status* refusing_op_execute(ctl_plugin_stream* s, const ctl_op_call* c) {
  (void)s;
  (void)c;
  REFUSE_CALL("op_execute");
}

/* A complete table of refusing entries; each test plugin breaks one thing in it. */
static ctl_plugin_api refusing_table(const char* name) {
  ctl_plugin_api t;
  memset(&t, 0, sizeof t);
  t.struct_size = CTL_PLUGIN_API_STRUCT_SIZE;
  t.abi_major = CTL_ABI_VERSION_MAJOR;
  t.abi_minor = CTL_ABI_VERSION_MINOR;
  t.name = name;
  t.version = "0.0.1-test";
  t.instance_create = refusing_instance_create;
  t.instance_destroy = refusing_instance_destroy;
  t.device_count = refusing_device_count;
  t.device_get = refusing_device_get;
  t.device_properties = refusing_device_properties;
  t.buffer_allocate = refusing_buffer_allocate;
  t.buffer_free = refusing_buffer_free;
  t.buffer_write = refusing_buffer_write;
  t.buffer_read = refusing_buffer_read;
  t.stream_create = refusing_stream_create;
  t.stream_destroy = refusing_stream_destroy;
  t.stream_synchronize = refusing_stream_synchronize;
  t.op_execute = refusing_op_execute;
  return t;
}

#endif
