// pci_bus_id.cpp — parsing the forms of a PCI address plugins and files use.
#include "topology/pci_bus_id.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>

namespace catalyst::topology {
namespace {

// Reads hex digits up to `stop` (or the end); false when there are none or too many.
bool hex_field(const std::string& text, size_t* pos, char stop, size_t max_digits, unsigned long* out) {
  const size_t start = *pos;
  while (*pos < text.size() && std::isxdigit(static_cast<unsigned char>(text[*pos]))) ++*pos;
  const size_t digits = *pos - start;
  if (digits == 0 || digits > max_digits) return false;
  if (stop && (*pos >= text.size() || text[*pos] != stop)) return false;
  *out = std::strtoul(text.substr(start, digits).c_str(), nullptr, 16);
  if (stop) ++*pos;
  return true;
}

}  // namespace

std::string normalize_pci_bus_id(const std::string& raw) {
  size_t begin = raw.find_first_not_of(" \t\n");
  size_t end = raw.find_last_not_of(" \t\n");
  if (begin == std::string::npos) return "";
  const std::string text = raw.substr(begin, end - begin + 1);
  // With a domain there are two colons: "dddd:bb:dd.f"; without, one: "bb:dd.f".
  const size_t colons = static_cast<size_t>(std::count(text.begin(), text.end(), ':'));
  unsigned long domain = 0, bus = 0, device = 0, function = 0;
  size_t pos = 0;
  if (colons == 2) {
    if (!hex_field(text, &pos, ':', 8, &domain)) return "";
  } else if (colons != 1) {
    return "";
  }
  if (!hex_field(text, &pos, ':', 2, &bus) || !hex_field(text, &pos, '.', 2, &device) ||
      !hex_field(text, &pos, 0, 1, &function) || pos != text.size() || device > 0x1f || function > 7) {
    return "";
  }
  char out[32];
  std::snprintf(out, sizeof out, "%04lx:%02lx:%02lx.%lx", domain, bus, device, function);
  return out;
}

}  // namespace catalyst::topology
