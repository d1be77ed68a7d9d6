/* A shared library named like a plugin that does not export ctl_plugin_query: the core must
 * reject it with "missing entry symbol". */
#include "catalyst_plugin.h"

int catalyst_test_not_the_entry(int x);
int catalyst_test_not_the_entry(int x) {
  return x + 1;
}
