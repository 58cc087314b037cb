#pragma once
// Run a transport on a GPU group of a PCIe host (fabric.kind: pcie-host) with
// the report's measurement harness (host-bridge.md §4-§5): every operation is
// timed per GPU from a cross-GPU start barrier (its cost included) to that
// GPU's end, back to back, for a whole number of stall periods (>= 3 s by
// default) or a fixed operation count.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/accelerator/sw_api.h"
#include "platform/fabric/host_config.h"
#include "platform/report/trace.h"

namespace fabricsim::sim {

/// Per-cell operation statistics (µs).
struct OpStats {
  std::uint64_t ops = 0;      ///< operations started inside the cell
  std::uint64_t samples = 0;  ///< ops x GPUs
  double mean_us = 0, p50_us = 0, p99_us = 0, max_us = 0;
  std::uint64_t ops_over_1ms = 0;  ///< operations whose slowest GPU took > 1 ms
};

/// Statistics of per-GPU operation times `per_rank[r][op]` (ps): mean, p50,
/// p99 (nearest rank) and max over all ops x GPUs; ops_over_1ms counts
/// operations whose slowest GPU exceeded 1 ms. Empty input gives zeros.
OpStats op_stats(const std::vector<std::vector<std::uint64_t>>& per_rank);

struct HostRunResult {
  bool ok = false;
  std::string diagnosis;
  OpStats stats;
  bool correct = false;  ///< data mode: first operation verified
  double simulated_s = 0;
  nlohmann::ordered_json json;  ///< result.json
  std::string summary;          ///< human summary
  // A user's schedule (workload.algorithm: schedule) only:
  std::string first_wrong;       ///< the first wrong rank and chunk ("" if correct or not checked)
  std::string collectives_csv;   ///< the nccl-tests row: per operation the slowest GPU, mean over operations
  std::string steps_csv;         ///< one row per rank x threadblock x step (last operation)
  std::string threadblocks_csv;  ///< one row per rank x threadblock (last operation)
};

/// Cell length: the workload's duration, or (auto) the smallest whole number
/// of stall periods >= min_duration (host-bridge.md §5: cells comparable).
std::uint64_t cell_duration_ps(const fabric::HostRunConfig& c);

/// Elaborate the host for the workload's group and run it (once per process).
/// With `trace`: every DMA operation as a span on its GPU's track (up to the
/// writer's cap), every operation of the harness on a second track per GPU,
/// and every stall window of the group's quadrants on a track per quadrant;
/// with a schedule also one track per rank x threadblock (schedule_report.h).
/// A schedule (workload.schedule) runs once per operation of the harness:
/// schedule rank i on GPU group[i], the operation timed from the start
/// barrier (its cost included) to the GPU's end; its result is checked after
/// the last operation, whose step records give the reports.
HostRunResult run_host(const fabric::HostRunConfig& cfg, bool progress = false, report::TraceWriter* trace = nullptr);

}  // namespace fabricsim::sim
