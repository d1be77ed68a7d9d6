/* topology_c_test.c — the topology section of catalyst.h used from C99, as a C program
 * would: structs sized with their *_STRUCT_SIZE constants, enums compared as C enums, every
 * bad argument answered with a status. Fake GPUs on hwloc's synthetic two-socket machine. */
#define _POSIX_C_SOURCE 200112L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "catalyst.h"

static ctl_runtime* make_runtime(void) {
  const char* paths[1] = {CTL_TEST_FAKE_GPUS_PLUGIN};
  ctl_runtime_options options;
  ctl_runtime* runtime = NULL;
  memset(&options, 0, sizeof options);
  options.struct_size = CTL_RUNTIME_OPTIONS_STRUCT_SIZE;
  options.plugin_paths = paths;
  options.plugin_path_count = 1;
  options.disable_discovery = true;
  setenv("HWLOC_SYNTHETIC", "pack:2 numa:1 core:2 pu:1", 1);
  setenv("CATALYST_FAKE_GPUS", "numa=0,host_visible=1;numa=1,host_visible=1", 1);
  unsetenv("CATALYST_TOPOLOGY");
  unsetenv("CATALYST_FAKE_GPUS_PEER");
  assert_null(ctl_runtime_create(&options, &runtime));
  assert_int_equal(ctl_runtime_device_count(runtime), 2);
  return runtime;
}

static ctl_device* device_at(ctl_runtime* runtime, size_t index) {
  ctl_device* device = NULL;
  assert_null(ctl_runtime_device(runtime, index, &device));
  return device;
}

static void expect_invalid(ctl_status* status, const char* words) {
  assert_non_null(status);
  assert_int_equal(ctl_status_get_code(status), CTL_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(ctl_status_get_message(status), words));
  ctl_status_free(status);
}

static void locality_and_link_from_c(void** state) {
  ctl_runtime* runtime = make_runtime();
  ctl_device_locality locality;
  ctl_device_link link;
  (void)state;
  memset(&locality, 0, sizeof locality);
  locality.struct_size = CTL_DEVICE_LOCALITY_STRUCT_SIZE;
  assert_null(ctl_device_get_locality(device_at(runtime, 1), &locality));
  assert_true(locality.known);
  assert_int_equal(locality.joined_by, CTL_LOCALITY_JOIN_NUMA_NODE);
  assert_int_equal(locality.package, 1);
  assert_int_equal(locality.numa_node, 1);
  assert_int_equal(locality.core_count, 2);
  assert_string_equal(locality.cpuset, "2-3");
  assert_string_equal(locality.pci_bus_id, "");
  memset(&link, 0, sizeof link);
  link.struct_size = CTL_DEVICE_LINK_STRUCT_SIZE;
  assert_null(ctl_runtime_device_link(runtime, device_at(runtime, 0), device_at(runtime, 1), &link));
  assert_int_equal(link.link_class, CTL_DEVICE_LINK_CROSS_PACKAGE);
  assert_int_equal(link.path, CTL_DEVICE_COPY_HOST_MEMORY);
  assert_true(link.bytes_per_second == 10000000000ull);
  assert_false(link.measured);
  assert_string_equal(ctl_device_link_class_name(link.link_class), "cross_package");
  ctl_runtime_release(runtime);
}

static void describe_from_c(void** state) {
  ctl_runtime* runtime = make_runtime();
  size_t length = 0;
  char* text;
  (void)state;
  assert_null(ctl_runtime_topology_describe(runtime, CTL_TOPOLOGY_FORMAT_JSON, NULL, 0, &length));
  assert_true(length > 2);
  text = malloc(length + 1);
  assert_non_null(text);
  assert_null(ctl_runtime_topology_describe(runtime, CTL_TOPOLOGY_FORMAT_JSON, text, length + 1, &length));
  assert_int_equal(text[0], '{');
  assert_int_equal(strlen(text), length);
  assert_non_null(strstr(text, "\"class\":\"cross_package\""));
  free(text);
  ctl_runtime_release(runtime);
}

static void bad_arguments_from_c(void** state) {
  ctl_runtime* runtime = make_runtime();
  ctl_device* device = device_at(runtime, 0);
  ctl_device_locality locality;
  ctl_device_link link;
  size_t length = 99;
  char buffer[4];
  (void)state;
  memset(&locality, 0, sizeof locality);
  locality.struct_size = CTL_DEVICE_LOCALITY_STRUCT_SIZE;
  memset(&link, 0, sizeof link);
  link.struct_size = CTL_DEVICE_LINK_STRUCT_SIZE;
  expect_invalid(ctl_device_get_locality(NULL, &locality), "argument 'device' is NULL");
  expect_invalid(ctl_device_get_locality(device, NULL), "argument 'out_locality' is NULL");
  expect_invalid(ctl_runtime_device_link(NULL, device, device, &link), "argument 'runtime' is NULL");
  expect_invalid(ctl_runtime_device_link(runtime, NULL, device, &link), "argument 'from' is NULL");
  expect_invalid(ctl_runtime_measure_device_link(runtime, device, NULL, &link), "argument 'to' is NULL");
  expect_invalid(ctl_runtime_measure_device_link(runtime, device, device, NULL), "argument 'out_link' is NULL");
  link.struct_size = 0;
  expect_invalid(ctl_runtime_device_link(runtime, device, device, &link), "CTL_DEVICE_LINK_STRUCT_SIZE");
  expect_invalid(ctl_runtime_topology_describe(runtime, (ctl_topology_format)2, buffer, sizeof buffer, &length),
                 "argument 'format' is 2");
  expect_invalid(ctl_runtime_topology_describe(runtime, CTL_TOPOLOGY_FORMAT_TEXT, NULL, 4, &length),
                 "argument 'buffer' is NULL");
  assert_int_equal(length, 99);
  assert_null(ctl_device_link_class_name((ctl_device_link_class)-1));
  ctl_runtime_release(runtime);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(locality_and_link_from_c),
      cmocka_unit_test(describe_from_c),
      cmocka_unit_test(bad_arguments_from_c),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
