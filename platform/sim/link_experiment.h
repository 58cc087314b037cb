#pragma once
// The two-endpoint link experiment: flit_source -> ualink_port -> flit_sink,
// elaborated once per process (SystemC cannot elaborate twice).
#include <nlohmann/json.hpp>

#include <string>

#include "platform/config/link_config.h"
#include "platform/report/trace.h"

namespace fabricsim::sim {

/// Headline metrics of one run (link-layer.md §6). Units in the names.
struct LinkMetrics {
  double goodput_gbps = 0;           ///< payload bits delivered in order / (last delivery - first arrival)
  double p99_us = 0;                 ///< nearest-rank 99th percentile of delivery - arrival
  std::uint64_t replayed_flits = 0;  ///< per link.semantics.replayed_count
  std::uint64_t fec_bytes = 0;       ///< parity bytes on the forward wire
  std::uint64_t control_bytes = 0;   ///< reverse control flits x control flit size
  std::uint64_t terminal_failures = 0;
  std::uint64_t first_attempt_errors = 0;
  std::uint64_t delivered_flits = 0;
  /// Nearest-rank 99th percentile of delivery - first serialization start
  /// (the wire latency, without the wait before the first transmission; the
  /// RIFL link's latency is measured the same way), ns.
  double p99_latency_ns = 0;
  /// Wire bytes of every retransmission (flit x (1 + o_k) of its profile).
  std::uint64_t retransmitted_bytes = 0;
};

/// Outcome of a run: ok (every flit delivered, or the link went down on the
/// retry limit, which is a result) or not (deadlock, deadline, SystemC error:
/// `diagnosis` names module, sequence numbers and state).
struct LinkRunResult {
  bool ok = false;
  std::string diagnosis;
  LinkMetrics metrics;
  nlohmann::ordered_json json;  ///< result.json content: config echo + metrics + statistics
};

/// Elaborate and simulate one link-pair experiment. Call at most once per
/// process. With `trace`, every forward transmission becomes a span on the
/// link's track (replays named as such) and every FEC profile or window
/// change an instant. With `real_bytes` the source makes every flit's record
/// as bytes, the port carries them and the sink checks them byte by byte
/// (same results, slower); without, flits travel as tags (their indices) and
/// no payload byte exists. With `progress`, a once-a-second line on stderr
/// (simulated time, flits delivered of those offered).
LinkRunResult run_link_experiment(const config::LinkExperimentConfig& cfg, report::TraceWriter* trace = nullptr,
                                  bool real_bytes = false, bool progress = false);

/// Default watchdog: 100 x the offered stream's duration + 1 ms of simulated time.
std::uint64_t default_deadline_ps(const config::LinkExperimentConfig& cfg);

}  // namespace fabricsim::sim
