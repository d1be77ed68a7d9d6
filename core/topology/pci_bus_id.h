// pci_bus_id.h — one spelling of a PCI address, so that what a plugin reports, what hwloc
// found and what an override file says compare equal.
#pragma once

#include <string>

namespace catalyst::topology {

// "0000:3b:00.0" (domain:bus:device.function, lower case) from "3b:00.0", "0000:3B:00.0"
// or " 0000:3b:00.0 "; "" when `text` is not a PCI bus id.
std::string normalize_pci_bus_id(const std::string& text);

}  // namespace catalyst::topology
