// cl_errors.h — turning OpenCL error codes into Catalyst statuses that name the error and
// the call that failed ("clEnqueueNDRangeKernel failed: CL_OUT_OF_RESOURCES (-5)").
#pragma once

#include "catalyst_plugin.h"
#include "opencl_api.h"

namespace catalyst::opencl {

// "CL_OUT_OF_RESOURCES", ...; "an unknown OpenCL error" for a code it does not know.
const char* cl_error_name(cl_int error);

// The status code an OpenCL error maps to: allocation failures become OUT_OF_MEMORY, a
// lost or failed device DEVICE_LOST, bad arguments INVALID_ARGUMENT, the rest INTERNAL.
ctl_status_code cl_error_code(cl_int error);

// A status "opencl plugin: <what>: <call> failed: <NAME> (<code>)". `what` may be NULL.
ctl_status* cl_fail(const ctl_host_api* host, cl_int error, const char* call, const char* what = nullptr);

}  // namespace catalyst::opencl

// Returns from the enclosing function with a status when an OpenCL call fails; `host` and
// the call's name are taken from the surrounding scope and the expression.
#define CTL_CL_RETURN_IF_ERROR(host, expr)                                                           \
  do {                                                                                               \
    const cl_int ctl_cl_error_ = (expr);                                                             \
    if (ctl_cl_error_ != CL_SUCCESS) return ::catalyst::opencl::cl_fail(host, ctl_cl_error_, #expr); \
  } while (0)
