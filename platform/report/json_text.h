#pragma once
// The JSON text of every output (result.json, summary.json, trace.json, bench).
#include <nlohmann/json.hpp>

#include <string>

namespace fabricsim::report {

/// `j` as JSON text, `indent` spaces per level (< 0: one line). JSON is UTF-8
/// (RFC 8259 §8.1): configuration and schedule files are checked for that at
/// load, but a path may hold any bytes the filesystem allows (a Latin-1 file
/// name), so a byte that is not UTF-8 is written as U+FFFD rather than
/// throwing once the run has finished. Never throws for a string's content.
template <class Json>
std::string json_text(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace fabricsim::report
