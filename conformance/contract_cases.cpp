// contract_cases.cpp — the contract part of the conformance suite: what a device plugin
// promises beyond computing the right numbers. One file per area (contract_<area>.cpp), their
// shared helpers in contract_support.h.
//
//  - device:    device_properties reports sane, well-formed values, and writes nothing past
//               the struct_size an older core passes;
//  - buffers:   zero-size and absurd sizes are handled, many buffers keep their own bytes,
//               and everything allocated through the host table is given back;
//  - copies:    host<->device transfers round-trip exactly at any size and offset and touch
//               nothing outside their range; buffer_copy, buffer_fill and
//               buffer_host_pointer work where the plugin provides them;
//  - streams:   work on one stream runs in submission order with no synchronize in between
//               (a write never overtakes an op that reads the old data), and two streams
//               do not disturb each other;
//  - events:    an event recorded on one stream orders work on another;
//  - threads:   several threads may drive one device at once, each with its own stream;
//  - bad_calls: a malformed op call gets an error status, no crash, no write to its
//               output, and leaves the stream usable.
//
// Every case calls the plugin's function table (ctx.plugin->api) directly, on streams it
// creates itself. Going through ctl_op_run would check the core instead: the core
// validates and normalises every call before a plugin sees it, so a plugin that accepts a
// malformed call, or a stream that does not order its work, would never show. The calls
// built here are in the normalised form described above ctl_op_call in catalyst_plugin.h.
//
// Every object a case creates is owned by a Resources holder that synchronizes its streams
// and frees everything on the way out, failure or not; host memory that a transfer reads
// or writes lives in the same holder, so it outlives the stream that uses it.
#include <vector>

#include "case.h"
#include "contract_support.h"

namespace catalyst::conformance {

void add_contract_cases(std::vector<Case>& out) {
  contract::add_device_cases(out);
  contract::add_buffer_cases(out);
  contract::add_copy_cases(out);
  contract::add_stream_cases(out);
  contract::add_thread_cases(out);
  contract::add_bad_call_cases(out);
}

}  // namespace catalyst::conformance
