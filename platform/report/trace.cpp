#include "platform/report/trace.h"

#include "platform/report/json_text.h"

namespace fabricsim::report {

bool TraceWriter::room() {
  if (count_ < max_) return true;
  ++dropped_;
  return false;
}

void TraceWriter::add(const nlohmann::ordered_json& e) {
  if (count_++) events_ += ',';
  events_ += json_text(e);
}

void TraceWriter::span(const std::string& name, const std::string& cat, int pid, int tid, std::uint64_t start_ps,
                       std::uint64_t dur_ps, nlohmann::ordered_json args) {
  if (!room()) return;
  nlohmann::ordered_json e{{"name", name},        {"cat", cat}, {"ph", "X"}, {"ts", start_ps / 1e6},
                           {"dur", dur_ps / 1e6}, {"pid", pid}, {"tid", tid}};
  if (!args.is_null()) e["args"] = std::move(args);
  add(e);
}

void TraceWriter::instant(const std::string& name, const std::string& cat, int pid, int tid, std::uint64_t t_ps,
                          nlohmann::ordered_json args) {
  if (!room()) return;
  nlohmann::ordered_json e{{"name", name},     {"cat", cat}, {"ph", "i"}, {"s", "t"},
                           {"ts", t_ps / 1e6}, {"pid", pid}, {"tid", tid}};
  if (!args.is_null()) e["args"] = std::move(args);
  add(e);
}

void TraceWriter::name_process(int pid, const std::string& name) {
  add({{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"args", {{"name", name}}}});
}

void TraceWriter::name_thread(int pid, int tid, const std::string& name) {
  add({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}});
}

// The same bytes as the compact dump of {"traceEvents": [...],
// "displayTimeUnit": "ns", "otherData": {...}}, without building that tree.
std::string TraceWriter::json() const {
  nlohmann::ordered_json other = {{"producer", "fabricsim"}, {"dropped_events", dropped_}};
  if (!run_.is_null()) other["run"] = run_;
  const std::string tail = json_text(other);
  std::string out;
  out.reserve(events_.size() + tail.size() + 64);
  out += "{\"traceEvents\":[";
  out += events_;
  out += "],\"displayTimeUnit\":\"ns\",\"otherData\":";
  out += tail;
  out += "}\n";
  return out;
}

}  // namespace fabricsim::report
