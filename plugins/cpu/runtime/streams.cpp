// streams.cpp — streams and events. CPU work completes inside execute, so a stream is
// always idle and an event is complete as soon as it is recorded; the objects still exist
// so that handles, ordering and leak counting behave as on any device. That holds for
// every device of the instance: a stream waits on an event of any of them (which
// buffer_copy_peer's contract asks for) and finds it complete.
#include "catalyst/sdk/status.hpp"
#include "plugin.h"

namespace catalyst::cpu {

ctl_status* stream_create(ctl_plugin_device* device, ctl_plugin_stream** out_stream) {
  if (!device) return null_handle("stream_create", "device");
  const ctl_host_api* host = device->instance->host;
  if (!out_stream)
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%sstream_create: out_stream is NULL", kLogPrefix);
  ctl_plugin_stream* stream = host_new<ctl_plugin_stream>(host, device);
  if (!stream)
    return sdk::make_status(host, CTL_STATUS_OUT_OF_MEMORY, "%sstream_create: out of host memory", kLogPrefix);
  *out_stream = stream;
  return nullptr;
}

void stream_destroy(ctl_plugin_stream* stream) {
  if (stream) host_delete(stream->device->instance->host, stream);
}

ctl_status* stream_synchronize(ctl_plugin_stream* stream) {
  return stream ? nullptr : null_handle("stream_synchronize", "stream");
}

ctl_status* event_create(ctl_plugin_device* device, ctl_plugin_event** out_event) {
  if (!device) return null_handle("event_create", "device");
  const ctl_host_api* host = device->instance->host;
  if (!out_event)
    return sdk::make_status(host, CTL_STATUS_INVALID_ARGUMENT, "%sevent_create: out_event is NULL", kLogPrefix);
  ctl_plugin_event* event = host_new<ctl_plugin_event>(host, device, false);
  if (!event) return sdk::make_status(host, CTL_STATUS_OUT_OF_MEMORY, "%sevent_create: out of host memory", kLogPrefix);
  *out_event = event;
  return nullptr;
}

void event_destroy(ctl_plugin_event* event) {
  if (event) host_delete(event->device->instance->host, event);
}

ctl_status* event_record(ctl_plugin_event* event, ctl_plugin_stream* stream) {
  if (!event) return null_handle("event_record", "event");
  if (!stream) {
    return sdk::make_status(event->device->instance->host, CTL_STATUS_INVALID_ARGUMENT,
                            "%sevent_record: stream is NULL", kLogPrefix);
  }
  event->recorded = true;
  return nullptr;
}

ctl_status* stream_wait_event(ctl_plugin_stream* stream, ctl_plugin_event* event) {
  if (!stream) return null_handle("stream_wait_event", "stream");
  if (!event) {
    return sdk::make_status(stream->device->instance->host, CTL_STATUS_INVALID_ARGUMENT,
                            "%sstream_wait_event: event is NULL", kLogPrefix);
  }
  return nullptr;  // everything recorded before is already done
}

ctl_status* event_synchronize(ctl_plugin_event* event) {
  return event ? nullptr : null_handle("event_synchronize", "event");
}

}  // namespace catalyst::cpu
