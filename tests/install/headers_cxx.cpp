// headers_cxx.cpp — the installed headers compile as C++20 (-Wall -Wextra -pedantic -Werror)
// with only pkg-config's flags.
#include <catalyst.h>
#include <catalyst_plugin.h>

int main() {
  return CTL_ABI_VERSION_MAJOR == 1 ? 0 : 1;
}
