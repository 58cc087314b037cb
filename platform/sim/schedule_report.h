#pragma once
// Reports of a user's schedule run (docs/collectives.md, "Reports"), shared by
// the UALink fabrics (fabric_run.cpp) and PCIe hosts (host_run.cpp): per-step
// and per-threadblock timing tables, the critical path, and trace tracks of
// one rank x threadblock each.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "platform/report/trace.h"
#include "sw/schedule_exec.h"

namespace fabricsim::sim {

/// The algorithm column of a schedule run: "schedule:NAME" (the schedule's
/// name, else the file's stem), CSV-safe (',', '"', line breaks become '_').
std::string schedule_label(const sw::Schedule& s, const std::string& path);

/// A schedule run's warnings, each line "warning: ...\n": a size T (bytes)
/// outside MSCCL's minBytes / maxBytes (the sizes the file is meant for; not
/// enforced) and the first three of what the parser noted
/// (sw::Schedule::warnings), then how many more. Empty if none. `run`
/// prints them on stderr, `check` in its report.
std::string schedule_warnings(const sw::Schedule& s, std::uint64_t bytes);

/// `fabricsim check`'s line for a loaded schedule: "schedule NAME (PATH,
/// FORMAT): COLL on N ranks, T threadblocks, S steps, M messages; at SIZE B
/// each rank needs X B of buffers and staging".
std::string schedule_summary(const sw::Schedule& s, const std::string& path, std::uint64_t bytes,
                             std::uint64_t piece_bytes);

struct ScheduleReport {
  std::string steps_csv;          ///< one row per rank x threadblock x step
  std::string threadblocks_csv;   ///< one row per rank x threadblock
  nlohmann::ordered_json json;    ///< result.json "schedule": file, name, critical_path
  std::string summary;            ///< "  schedule LABEL: critical path of K steps: r0.tb0.s0 -> ...\n"
};

/// Build the reports of one run of `s` laid out as `layout`, from the step
/// records of every schedule rank `rec[g]` (ps, sw::run_schedule). Times in
/// the tables and the path are µs from `t0_ps` (the schedule's start);
/// `accel[g]` names the accelerator schedule rank g ran on; `file` and `label`
/// (the algorithm column, "schedule:NAME") go into the JSON and the summary.
/// With `trace`: process 100 + g per schedule rank, one thread per
/// threadblock, one span per step (category "schedule", plus "critical" on the
/// critical path).
ScheduleReport schedule_report(const sw::Schedule& s, const sw::ScheduleLayout& layout,
                               const std::vector<sw::RankRecords>& rec, std::uint64_t t0_ps,
                               const std::vector<std::string>& accel, const std::string& file,
                               const std::string& label, report::TraceWriter* trace);

}  // namespace fabricsim::sim
