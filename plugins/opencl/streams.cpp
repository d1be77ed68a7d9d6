// streams.cpp — streams are in-order OpenCL command queues; events are marker cl_events
// enqueued on them, which another queue of the same context can wait for.
#include "catalyst/sdk/status.hpp"
#include "cl_errors.h"
#include "plugin.h"

namespace catalyst::opencl {

ctl_status* stream_create(ctl_plugin_device* device, ctl_plugin_stream** out_stream) {
  const ctl_host_api* host = device->instance->host;
  if (!out_stream) {
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%sstream_create: out_stream is NULL", kLogPrefix);
  }
  cl_int error = CL_SUCCESS;
  // Properties 0: in order, no profiling. (clCreateCommandQueue is the 1.2 entry point.)
  cl_command_queue queue = clCreateCommandQueue(device->context, device->id, 0, &error);
  if (error != CL_SUCCESS) return cl_fail(host, error, "clCreateCommandQueue", "stream_create");
  auto* stream = host_new<ctl_plugin_stream>(host);
  if (!stream) {
    clReleaseCommandQueue(queue);
    return sdk::make_status(host, CTL_STATUS_OUT_OF_MEMORY, "%sstream_create: no host memory", kLogPrefix);
  }
  stream->device = device;
  stream->queue = queue;
  *out_stream = stream;
  return nullptr;
}

void stream_destroy(ctl_plugin_stream* stream) {
  if (!stream) return;
  // Finish first: the ABI lets callers free buffers right after, and reads still queued
  // would write into host memory the caller is about to reuse.
  clFinish(stream->queue);
  clReleaseCommandQueue(stream->queue);
  host_delete(stream->device->instance->host, stream);
}

ctl_status* stream_synchronize(ctl_plugin_stream* stream) {
  const cl_int error = clFinish(stream->queue);
  return error == CL_SUCCESS ? nullptr
                             : cl_fail(stream->device->instance->host, error, "clFinish", "stream_synchronize");
}

ctl_status* event_create(ctl_plugin_device* device, ctl_plugin_event** out_event) {
  const ctl_host_api* host = device->instance->host;
  if (!out_event) {
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%sevent_create: out_event is NULL", kLogPrefix);
  }
  auto* event = host_new<ctl_plugin_event>(host);
  if (!event) return sdk::make_status(host, CTL_STATUS_OUT_OF_MEMORY, "%sevent_create: no host memory", kLogPrefix);
  event->device = device;
  event->marker = nullptr;
  *out_event = event;
  return nullptr;
}

void event_destroy(ctl_plugin_event* event) {
  if (!event) return;
  if (event->marker) clReleaseEvent(event->marker);
  host_delete(event->device->instance->host, event);
}

ctl_status* event_record(ctl_plugin_event* event, ctl_plugin_stream* stream) {
  const ctl_host_api* host = event->device->instance->host;
  if (stream->device != event->device) {
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT,
                            "%sevent_record: the event and stream are on different devices", kLogPrefix);
  }
  cl_event marker = nullptr;
  cl_int error = clEnqueueMarkerWithWaitList(stream->queue, 0, nullptr, &marker);
  if (error != CL_SUCCESS) return cl_fail(host, error, "clEnqueueMarkerWithWaitList", "event_record");
  // Submit now: a queue that waits for this marker must not wait on work still in our
  // queue's host-side buffer.
  error = clFlush(stream->queue);
  if (error != CL_SUCCESS) {
    clReleaseEvent(marker);
    return cl_fail(host, error, "clFlush", "event_record");
  }
  std::lock_guard lock(event->mutex);
  if (event->marker) clReleaseEvent(event->marker);
  event->marker = marker;
  return nullptr;
}

ctl_status* stream_wait_event(ctl_plugin_stream* stream, ctl_plugin_event* event) {
  const ctl_host_api* host = stream->device->instance->host;
  std::lock_guard lock(event->mutex);
  if (!event->marker) return nullptr;  // never recorded: nothing to wait for
  if (stream->device != event->device) {
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT,
                            "%sstream_wait_event: the event and stream are on different devices", kLogPrefix);
  }
  const cl_int error = clEnqueueBarrierWithWaitList(stream->queue, 1, &event->marker, nullptr);
  return error == CL_SUCCESS ? nullptr : cl_fail(host, error, "clEnqueueBarrierWithWaitList", "stream_wait_event");
}

ctl_status* event_synchronize(ctl_plugin_event* event) {
  cl_event marker = nullptr;
  {
    std::lock_guard lock(event->mutex);
    if (!event->marker) return nullptr;
    marker = event->marker;
    clRetainEvent(marker);
  }
  const cl_int error = clWaitForEvents(1, &marker);
  clReleaseEvent(marker);
  return error == CL_SUCCESS ? nullptr
                             : cl_fail(event->device->instance->host, error, "clWaitForEvents", "event_synchronize");
}

}  // namespace catalyst::opencl
