#pragma once
// Elaborate a fabric (ring, switched pod, explicit) through the model
// registry, run its workload (a collective on every accelerator) and collect
// nccl-tests-style results and per-link statistics.
#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

#include "models/accelerator/sw_api.h"

#include "platform/fabric/fabric_config.h"
#include "platform/report/trace.h"

namespace fabricsim::sim {

/// One nccl-tests row (collectives.md §4): size and time of one operation.
struct CollectiveRow {
  std::uint64_t size_bytes = 0;
  std::uint64_t count = 0;  ///< float32 elements
  double time_us = 0;       ///< mean over iterations, start barrier to last rank's end
  double algbw_GBps = 0;    ///< GB/s = size / time
  double busbw_GBps = 0;    ///< algbw x busbw factor
  bool correct = false;     ///< every output element as expected (meaningful only if completed and checked)
  bool completed = true;    ///< false when a link went down: no time, correctness "not checked"
};

struct FabricRunResult {
  bool ok = false;
  std::string diagnosis;  ///< why the run could not finish
  std::string link_down;  ///< ok but a link hit its retry limit: the collective did not complete
  CollectiveRow row;
  std::uint64_t replayed_flits = 0, fec_bytes = 0, terminal_failures = 0;
  nlohmann::ordered_json json;  ///< result.json
  std::string links_csv;        ///< one row per link direction
  std::string summary;          ///< human summary for stdout
  // Users' schedules (workload.algorithm: schedule) only:
  std::string first_wrong;       ///< the first wrong rank and chunk ("" if correct or not checked)
  std::string steps_csv;         ///< one row per rank x threadblock x step (last iteration)
  std::string threadblocks_csv;  ///< one row per rank x threadblock
};

/// Software a rank runs instead of the configured workload (tests, custom
/// experiments); it receives the rank's accelerator interface.
using RankProgram = std::function<void(models::accelerator_api&)>;

/// Elaborate and simulate (once per process). With `program`, every rank runs
/// it instead of the workload (no timing row, no verification). Throws
/// fabric::FabricError or config errors for a fabric that cannot be built.
/// With `progress`, a progress line goes to stderr at most once a second.
/// With `trace`, every completed DMA operation becomes a span on its rank's
/// track (post to completion).
FabricRunResult run_fabric(const fabric::FabricRunConfig& cfg, RankProgram program = {}, bool progress = false,
                           report::TraceWriter* trace = nullptr);

/// Everything run_fabric rejects before elaborating, so that `check` rejects
/// it too: a node kind without a registered model or outside a UALink fabric
/// (accelerator, ualink-switch), an invalid fabric graph, an accelerator
/// whose declared memory is smaller than the collective's buffers, and, with
/// workload.data true, buffers of all accelerators together larger than
/// config::available_memory_bytes() (the message gives the estimate and the hint
/// `workload.data: false`). Throws fabric::FabricError naming file, line and key.
void validate_fabric(const fabric::FabricRunConfig& cfg);

/// What `fabricsim run` rejects beyond validate_fabric: a tlm-initiator node
/// (bound by user code through sim::FabricPlatform; a plain run has nothing
/// to bind it to). Throws fabric::FabricError naming the node's file, line
/// and key. `check` accepts such fabrics.
void check_runnable(const fabric::FabricRunConfig& cfg);

/// nccl-tests CSV header and row.
std::string collective_csv(const fabric::FabricRunConfig& cfg, const CollectiveRow& r);

/// The same CSV from its parts (PCIe hosts' schedule runs): `redop` "sum" or
/// "none", `correct` "true", "false", "n/a" or "not checked".
std::string collective_csv(const std::string& collective, const std::string& algorithm, std::uint64_t ranks,
                           const CollectiveRow& r, const std::string& redop, const std::string& correct);

}  // namespace fabricsim::sim
