// reference_plugin.h — the core's reference kernels, packaged as a device plugin table.
//
// The reference device is plain, obviously-correct C++ that computes in double (exact
// integer arithmetic for integers). It is the oracle of the conformance suite, so it is
// written for clarity, not speed. It lives inside libcatalyst: the core calls
// reference_plugin_query directly (it is not exported and not named ctl_plugin_query)
// and adds its one device, named "reference", when ctl_runtime_options asks for it.
#pragma once

#include <cstdint>

#include "catalyst_plugin.h"

namespace catalyst::reference {

// Returns the reference plugin's function table (ABI 1.0), or NULL after logging why
// through `host` when the core's ABI major differs.
const ctl_plugin_api* reference_plugin_query(uint32_t core_abi_major, uint32_t core_abi_minor,
                                             const ctl_host_api* host);

}  // namespace catalyst::reference
