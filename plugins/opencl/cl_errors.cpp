// cl_errors.cpp — OpenCL error names (from the OpenCL 1.2–3.0 headers) and their mapping
// onto Catalyst's status codes.
#include "cl_errors.h"

#include <cstring>
#include <string>

#include "catalyst/sdk/status.hpp"
#include "plugin.h"

namespace catalyst::opencl {

const char* cl_error_name(cl_int error) {
  switch (error) {
#define CTL_CL_NAME(code) \
  case code:              \
    return #code;
    CTL_CL_NAME(CL_SUCCESS)
    CTL_CL_NAME(CL_DEVICE_NOT_FOUND)
    CTL_CL_NAME(CL_DEVICE_NOT_AVAILABLE)
    CTL_CL_NAME(CL_COMPILER_NOT_AVAILABLE)
    CTL_CL_NAME(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    CTL_CL_NAME(CL_OUT_OF_RESOURCES)
    CTL_CL_NAME(CL_OUT_OF_HOST_MEMORY)
    CTL_CL_NAME(CL_PROFILING_INFO_NOT_AVAILABLE)
    CTL_CL_NAME(CL_MEM_COPY_OVERLAP)
    CTL_CL_NAME(CL_IMAGE_FORMAT_MISMATCH)
    CTL_CL_NAME(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    CTL_CL_NAME(CL_BUILD_PROGRAM_FAILURE)
    CTL_CL_NAME(CL_MAP_FAILURE)
    CTL_CL_NAME(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    CTL_CL_NAME(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    CTL_CL_NAME(CL_COMPILE_PROGRAM_FAILURE)
    CTL_CL_NAME(CL_LINKER_NOT_AVAILABLE)
    CTL_CL_NAME(CL_LINK_PROGRAM_FAILURE)
    CTL_CL_NAME(CL_DEVICE_PARTITION_FAILED)
    CTL_CL_NAME(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    CTL_CL_NAME(CL_INVALID_VALUE)
    CTL_CL_NAME(CL_INVALID_DEVICE_TYPE)
    CTL_CL_NAME(CL_INVALID_PLATFORM)
    CTL_CL_NAME(CL_INVALID_DEVICE)
    CTL_CL_NAME(CL_INVALID_CONTEXT)
    CTL_CL_NAME(CL_INVALID_QUEUE_PROPERTIES)
    CTL_CL_NAME(CL_INVALID_COMMAND_QUEUE)
    CTL_CL_NAME(CL_INVALID_HOST_PTR)
    CTL_CL_NAME(CL_INVALID_MEM_OBJECT)
    CTL_CL_NAME(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    CTL_CL_NAME(CL_INVALID_IMAGE_SIZE)
    CTL_CL_NAME(CL_INVALID_SAMPLER)
    CTL_CL_NAME(CL_INVALID_BINARY)
    CTL_CL_NAME(CL_INVALID_BUILD_OPTIONS)
    CTL_CL_NAME(CL_INVALID_PROGRAM)
    CTL_CL_NAME(CL_INVALID_PROGRAM_EXECUTABLE)
    CTL_CL_NAME(CL_INVALID_KERNEL_NAME)
    CTL_CL_NAME(CL_INVALID_KERNEL_DEFINITION)
    CTL_CL_NAME(CL_INVALID_KERNEL)
    CTL_CL_NAME(CL_INVALID_ARG_INDEX)
    CTL_CL_NAME(CL_INVALID_ARG_VALUE)
    CTL_CL_NAME(CL_INVALID_ARG_SIZE)
    CTL_CL_NAME(CL_INVALID_KERNEL_ARGS)
    CTL_CL_NAME(CL_INVALID_WORK_DIMENSION)
    CTL_CL_NAME(CL_INVALID_WORK_GROUP_SIZE)
    CTL_CL_NAME(CL_INVALID_WORK_ITEM_SIZE)
    CTL_CL_NAME(CL_INVALID_GLOBAL_OFFSET)
    CTL_CL_NAME(CL_INVALID_EVENT_WAIT_LIST)
    CTL_CL_NAME(CL_INVALID_EVENT)
    CTL_CL_NAME(CL_INVALID_OPERATION)
    CTL_CL_NAME(CL_INVALID_GL_OBJECT)
    CTL_CL_NAME(CL_INVALID_BUFFER_SIZE)
    CTL_CL_NAME(CL_INVALID_MIP_LEVEL)
    CTL_CL_NAME(CL_INVALID_GLOBAL_WORK_SIZE)
    CTL_CL_NAME(CL_INVALID_PROPERTY)
    CTL_CL_NAME(CL_INVALID_IMAGE_DESCRIPTOR)
    CTL_CL_NAME(CL_INVALID_COMPILER_OPTIONS)
    CTL_CL_NAME(CL_INVALID_LINKER_OPTIONS)
    CTL_CL_NAME(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef CTL_CL_NAME
    case -1001:
      return "CL_PLATFORM_NOT_FOUND_KHR";
    default:
      return "an unknown OpenCL error";
  }
}

ctl_status_code cl_error_code(cl_int error) {
  switch (error) {
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_OUT_OF_HOST_MEMORY:
    case CL_INVALID_BUFFER_SIZE:
    // The spec's meaning: the driver could not allocate what it needed on the device.
    // (NVIDIA also uses it for a kernel that faulted; the message carries the name.)
    case CL_OUT_OF_RESOURCES:
      return CTL_STATUS_OUT_OF_MEMORY;
    // A reset or removed device; its queues and buffers are gone.
    case CL_DEVICE_NOT_AVAILABLE:
    case CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST:
      return CTL_STATUS_DEVICE_LOST;
    case CL_INVALID_VALUE:
    case CL_INVALID_ARG_VALUE:
    case CL_INVALID_ARG_SIZE:
      return CTL_STATUS_INVALID_ARGUMENT;
    case CL_COMPILER_NOT_AVAILABLE:
    case CL_LINKER_NOT_AVAILABLE:
      return CTL_STATUS_UNSUPPORTED;
    default:
      return CTL_STATUS_INTERNAL;
  }
}

ctl_status* cl_fail(const ctl_host_api* host, cl_int error, const char* call, const char* what) {
  // Only the function's name: "clFinish(stream->queue)" reads better as "clFinish".
  std::string name(call);
  if (const size_t paren = name.find('('); paren != std::string::npos) name.resize(paren);
  return sdk::make_status(host, cl_error_code(error), "%s%s%s%s failed: %s (%d)", kLogPrefix, what ? what : "",
                          what ? ": " : "", name.c_str(), cl_error_name(error), static_cast<int>(error));
}

}  // namespace catalyst::opencl
