#pragma once
// The RIFL link experiment (`fabric.kind: rifl-link`): one bonded RIFL link
// between two ends, saturating packets in both directions, independent or
// burst errors. Plain C++ (models/rifl/core): no SystemC module, nothing at a
// TLM boundary to own.
#include <nlohmann/json.hpp>

#include <string>

#include "platform/config/rifl_config.h"
#include "platform/report/trace.h"

namespace fabricsim::sim {

/// Outcome of a run: ok (every packet delivered) or not (`diagnosis`: the
/// watchdog's state dump: no progress, deadline, buffer overflow).
struct RiflRunResult {
  bool ok = false;
  std::string diagnosis;
  std::string summary;          ///< human-readable lines for stdout
  nlohmann::ordered_json json;  ///< result.json: config echo, row, statistics
};

/// Run the experiment, plus an error-free run of the same traffic for the
/// bandwidth ratio (skipped when the BER is already 0). With `trace`, every
/// recovery (transmitter in Retrans until it is back in Normal) becomes a
/// span on its lane direction's track. `progress`: a progress line on stderr.
RiflRunResult run_rifl_experiment(const config::RiflExperimentConfig& c, report::TraceWriter* trace = nullptr,
                                  bool progress = false);

/// One RIFL direction's frame and error counters as result.json writes them,
/// for the experiment (`a_to_b` / `b_to_a`) and for fabrics (`rifl_links`):
/// frames by kind, hit frames, bit errors, detected / undetected errors,
/// out-of-sync events, `retrans_entries` (entries into Retrans: a recovery
/// episode enters more than once while it alternates with Send Retrans) and
/// `flow_control_pauses`. Counts, no units.
nlohmann::ordered_json rifl_counters_json(const rifl::DirectionStats& s);

}  // namespace fabricsim::sim
