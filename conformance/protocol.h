// protocol.h — the lines a worker process sends its supervisor over a pipe. One record per
// line, fields separated by tabs, text fields escaped (\\, \t, \n), so a record is never
// split by the message it carries:
//   D <key> <value>                     a fact about the plugin and device (probe)
//   B <case id>                         a case starts (the supervisor's "last case" on a crash)
//   R <case id> <status> <seconds> <message>
//   L <live allocations> <detail>       host allocations still live after instance_destroy
//   E <message>                         the worker could not start (plugin did not load, ...)
#pragma once

#include <string>
#include <vector>

namespace catalyst::conformance {

std::string escape_field(const std::string& text);
std::string unescape_field(const std::string& text);
// Splits one record (without its newline) into unescaped fields.
std::vector<std::string> split_record(const std::string& line);

}  // namespace catalyst::conformance
