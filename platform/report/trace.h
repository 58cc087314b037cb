#pragma once
// Chrome / Perfetto trace-event JSON (platform.md §4 `--trace`): load the file
// in ui.perfetto.dev or chrome://tracing. Times are microseconds.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace fabricsim::report {

/// Collects trace events, at most `max_events` (later ones are counted and
/// dropped, so a huge run cannot exhaust memory); json() emits the JSON.
/// Each event is kept as its compact JSON text (about 150 bytes for a
/// transmission span), not as a JSON tree (about 3 KB).
class TraceWriter {
 public:
  explicit TraceWriter(std::size_t max_events = 2'000'000) : max_(max_events) {}

  /// A span ("X" event) on track (pid, tid) from start_ps lasting dur_ps.
  void span(const std::string& name, const std::string& cat, int pid, int tid, std::uint64_t start_ps,
            std::uint64_t dur_ps, nlohmann::ordered_json args = {});
  /// An instant ("i" event) on track (pid, tid).
  void instant(const std::string& name, const std::string& cat, int pid, int tid, std::uint64_t t_ps,
               nlohmann::ordered_json args = {});
  /// Name a process / thread track (metadata events).
  void name_process(int pid, const std::string& name);
  void name_thread(int pid, int tid, const std::string& name);

  /// Identity of the run (report::RunIdentity::json()), written as otherData.run.
  void set_run(nlohmann::ordered_json run) { run_ = std::move(run); }

  std::size_t events() const { return count_; }
  std::size_t dropped() const { return dropped_; }
  /// The whole trace: {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}.
  std::string json() const;

 private:
  bool room();
  std::size_t max_;
  std::size_t dropped_ = 0;
  std::size_t count_ = 0;
  std::string events_;  // the events' compact JSON texts, comma-separated
  void add(const nlohmann::ordered_json& e);
  nlohmann::ordered_json run_;
};

}  // namespace fabricsim::report
