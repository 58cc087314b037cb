#include "platform/report/trace.h"

#include "platform/report/json_text.h"

namespace fabricsim::report {

bool TraceWriter::room() {
  if (events_.size() < max_) return true;
  ++dropped_;
  return false;
}

void TraceWriter::span(const std::string& name, const std::string& cat, int pid, int tid, std::uint64_t start_ps,
                       std::uint64_t dur_ps, nlohmann::ordered_json args) {
  if (!room()) return;
  nlohmann::ordered_json e{{"name", name},        {"cat", cat}, {"ph", "X"}, {"ts", start_ps / 1e6},
                           {"dur", dur_ps / 1e6}, {"pid", pid}, {"tid", tid}};
  if (!args.is_null()) e["args"] = std::move(args);
  events_.push_back(std::move(e));
}

void TraceWriter::instant(const std::string& name, const std::string& cat, int pid, int tid, std::uint64_t t_ps,
                          nlohmann::ordered_json args) {
  if (!room()) return;
  nlohmann::ordered_json e{{"name", name},     {"cat", cat}, {"ph", "i"}, {"s", "t"},
                           {"ts", t_ps / 1e6}, {"pid", pid}, {"tid", tid}};
  if (!args.is_null()) e["args"] = std::move(args);
  events_.push_back(std::move(e));
}

void TraceWriter::name_process(int pid, const std::string& name) {
  events_.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"args", {{"name", name}}}});
}

void TraceWriter::name_thread(int pid, int tid, const std::string& name) {
  events_.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}});
}

std::string TraceWriter::json() const {
  nlohmann::ordered_json j;
  j["traceEvents"] = events_;
  j["displayTimeUnit"] = "ns";
  j["otherData"] = {{"producer", "fabricsim"}, {"dropped_events", dropped_}};
  if (!run_.is_null()) j["otherData"]["run"] = run_;
  return json_text(j) + "\n";
}

}  // namespace fabricsim::report
