// opencl_api.h — the one place that includes the OpenCL headers. The plugin is written
// against OpenCL 1.2, which every conformant driver (PoCL, NVIDIA, AMD, Intel) offers, and
// uses newer features only after asking the device.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <CL/cl_ext.h>

// Vendor queries that not every header version defines.
#ifndef CL_DEVICE_PCI_BUS_INFO_KHR
#define CL_DEVICE_PCI_BUS_INFO_KHR 0x410F
#endif
#ifndef CL_DEVICE_UUID_KHR
#define CL_DEVICE_UUID_KHR 0x106A
#endif
#define CATALYST_CL_DEVICE_PCI_BUS_ID_NV 0x4008
#define CATALYST_CL_DEVICE_PCI_SLOT_ID_NV 0x4009
#define CATALYST_CL_DEVICE_PCI_DOMAIN_ID_NV 0x400A
#ifndef CL_DEVICE_TOPOLOGY_AMD
#define CL_DEVICE_TOPOLOGY_AMD 0x4037
#endif
#ifndef CL_DEVICE_GLOBAL_FREE_MEMORY_AMD
#define CL_DEVICE_GLOBAL_FREE_MEMORY_AMD 0x4039 /* size_t[2] in KiB: total free, largest free block */
#endif
